"""The host side of a routine compiled to one CUDA kernel (targets/cuda/routine.py): shapes, the
cooperative launch, and what the machine sees afterwards.

``GpuRoutine`` is a ``JitRoutine`` (the deciding, the steps, the output records, the
results and globals written back are the CPU tier's); it differs in what it takes (tables
whose words are CuPy arrays: on ``auto`` only tables kept on the device), in compiling
(NVRTC through ``cupy.RawModule``; CuPy keeps the binary on disk, keyed by the source
text) and in running: one launch and two small copies (the status block reset, then read
back) per call. A failure inside a `parallel for` (its iterations run at once) comes back
as ``E_RERUN``, an integer past 64 bits as ``E_OVERFLOW``: the tables it may have written are
restored and the call runs interpreted, which reports the error (computes the integer) exactly.
"""
from __future__ import annotations

import contextlib
from functools import cached_property
from time import perf_counter, sleep

import numpy as np

from .. import config
from ..ir.ops import BASE_OPS
from ..ir.walk import callees
from ..execution.limits import tick_many
from ..execution.values import Table, Unassigned
from ..types import T
from . import errors
from ..targets.cuda.routine import KERNEL_NAME, SWITCHES, KernelPlan, instance
from ..targets.cuda.prelude import E_POOL, E_RERUN, OUT_ACK
from ..targets.layout import E_INTERRUPT, E_OVERFLOW, E_STACK, S_A, S_B, S_C, S_D, S_CODE, S_INTR, S_LEFT, S_OUT, S_STACK
from ..targets.layout import STATUS_SIZE
from .call import JitRoutine, _Decline, _skipping_output, _take_pending_interrupt, _UNLIMITED, steps_left, write_records
from .cuda_output import OutputDrain
from .interrupts import flagged

THREADS = 256
PFOR_THREADS = 512
MAX_KW = 256           # words of a word value held by every thread (16 384 bits)
MAX_RP = 64            # words of a slice per lane inside parallel for (131 072 rows)
MAX_R = 64
# lanes an iteration of parallel for runs on (STARVM_GPU_LANES; _lanes): auto takes 16 (two
# iterations a warp at once) where a lane then holds at most AUTO_LANES16_WORDS words. H100 at
# 7604b4c, WARSHALL-adapt body: n = 5000 (79 words) 2.58 us a pivot on 16 lanes against 2.84
# on 32; n = 16384 (256 words) 9.52 against 8.67
LANES = "auto"
AUTO_LANES16_WORDS = 6
ONE_BLOCK_WORDS = 1024  # slices of at most this many words: one block, its barriers __syncthreads (no grid)
ONE_BLOCK_THREADS = 1024  # its threads at most (more words: R a thread)
FREE_R = 4              # words a thread of a kernel with no grid barrier (STARVM_GPU_FREE_R; 0: as the others)
# output records a routine's launch holds, in page-locked host memory: a full buffer waits for
# the host to write the finished lines (cuda_output.py), so any amount of output fits; a single
# write call larger than the buffer launches again with eight times the room
OB_WORDS = 1 << 16
# those of a main block's part (a program's printing loops: a wait for the host every 2^20
# words; before the output was streamed, a part that ran out ran again from its start)
PART_OB_WORDS = 1 << 20
OB_MAX_BYTES = 1 << 31    # past this the call runs interpreted (which streams its output)
# auto: a kernel where a slice becomes a word (CONVERT, a slice used as a word) gives every
# thread the whole slice at each conversion, from L2; past this many words a call runs
# interpreted (bfs.star's BFS, a transposition of n conversions, at R-MAT scale 14: 256 words,
# 43.8 s compiled on an H200, bench/results/programs_e2e_h200.md)
AUTO_AS_WORD_WORDS = 16
POOL_WORDS = 1 << 16   # the local tables' pool of a routine's first call (grown on E_POOL, kept)
# recursion: the stack bytes a thread's Star frames may take (the kernel checks them at each
# recursive routine's entry, routine.stack_room: E_STACK), doubled on E_STACK up to STACK_MAX,
# past which the call runs interpreted; the CUDA stack size set is that room + STACK_SLACK
# (the kernel's own frame, the last frame, the inlined callees')
STACK_ROOM = 8 << 10
STACK_MAX = 64 << 10     # 64 KB a thread: 17.7 GB of local memory kept on an H200 (132 SMs x 2048 threads)
STACK_SLACK = 8 << 10
NK = len(BASE_OPS)


def _lane_words(caps: int, lanes: int = 32) -> int:
    """RP, the words of a slice of ``caps`` words a lane of ``lanes`` holds inside parallel
    for: exactly as many as it needs up to 8 (a power of two, 4 for n = 5000 rows' 79 words
    on 32 lanes, left a quarter of every vector operation to words past the end), then a
    power of two (fewer instances to build)."""
    need = max(1, -(-caps // lanes))
    return need if need <= 8 else _pow2(need)


def _lanes(caps: int) -> int:
    """The lanes an iteration of parallel for runs on (STARVM_GPU_LANES: 32, 16, 8 or auto)."""
    setting = config.gpu_lanes(LANES)
    if setting == "auto":
        return 16 if -(-caps // 16) <= AUTO_LANES16_WORDS else 32
    return int(setting) if setting in ("8", "16", "32") else 32


def _pow2(x: int) -> int:
    p = 1
    while p < x:
        p <<= 1
    return p


class GpuUnit:
    """What JitRoutine expects of a unit, for one kernel plan."""

    def __init__(self, plan: KernelPlan):
        self.plan = plan
        self.lowered = plan.lowered
        self.main_body = None
        self.backend_name = "cupy"

    def name_id(self, display: str) -> int:
        names = self.lowered.names
        if display not in names:
            names.append(display)
        return names.index(display)


class GpuRoutine(JitRoutine):
    threshold_variable = "STARVM_JIT_GPU_THRESHOLD"
    part = False                 # a main block's part (ir/main_parts.py): no Star call of its own
    ob_words = OB_WORDS          # output records a launch holds (more_output grows it)

    def __init__(self, tier, pyname, display, interpreted, plan: KernelPlan, estimate):
        super().__init__(tier, pyname, display, interpreted, GpuUnit(plan), estimate)
        self.threshold = tier.gpu_threshold   # auto: a launch costs more than a host operation
        self.plan = plan
        self.kernels: dict = {}          # (R, KW, RP, ...) -> (function, threads per block, blocks, R)
        self.fits: dict = {}             # grid kernels built: key -> (function, threads, resident blocks)
        self.chosen: dict = {}           # (slice words, word words, RP, settings) -> (kernels' key, blocks)
        self.reruns = 0                  # calls run interpreted after a failure in parallel for
        self.pool = None                 # local tables: device words kept between calls (plan.pool)
        self.pool_launches = 0           # launches stopped because the pool was too small (E_POOL)
        self.min_caps = 1                # slice words and word words local tables needed (E_POOL, d = 1, 2)
        self.min_kw = 1
        self.stack_room = STACK_ROOM     # recursion: bytes of Star frames a thread may take (plan.recursive)
        self.stack_launches = 0          # launches stopped for more stack room (E_STACK)
        self.deep_calls = 0              # calls that ran interpreted: deeper than the GPU's stack holds
        self.max_depth = None            # the recursion limit the kernels were built for (MAXD)
        self.launches = 0
        self.part = plan.part
        self.ob_words = PART_OB_WORDS if plan.part else OB_WORDS
        self.ob_launches = 0             # launches stopped for more room for output records

    @cached_property
    def kinds(self) -> list:
        """What each argument of the kernel is, in kernel order (parameters, then globals)."""
        return [_kind(sym.type) for sym in list(self.plan.params) + list(self.plan.globals)]

    # ------------------------------------------------------------------ arguments
    def convert_args(self, args):
        converted = super().convert_args(args)
        if converted is None:
            self.why = ("its arguments are not all on the device (a table on the host, or an integer beyond "
                        "64 bits): that call ran interpreted")
        return converted

    def to_native(self, value, type_, memo):
        import cupy as cp
        if type_ is T.TABLE:
            if not isinstance(value, Table) or not isinstance(value.data, cp.ndarray) \
                    or not value.data.flags.c_contiguous:
                raise _Decline
            return value
        if type_.is_vector:
            if isinstance(value, Unassigned):
                return (None, -1 - self.unit.name_id(value.name))
            if isinstance(value.v, cp.ndarray) and value.v.dtype == cp.uint64 and value.v.flags.c_contiguous \
                    and self.tier.context.backend.is_device:
                return (value.v, value.n)      # the kernel only reads it: no copy (to_words makes one)
            words = self.tier.context.backend.to_words(value.v, value.n)
            if not isinstance(words, cp.ndarray):
                words = cp.asarray(np.ascontiguousarray(words, dtype=np.uint64))
            return (words, value.n)
        if type_ is T.BOOL:
            return bool(value)
        if not -(1 << 63) <= value < (1 << 63):
            raise _Decline
        return int(value)

    def shape(self, converted) -> tuple[int, int, int] | None:
        """(slice words, word words, longest word in bits) the kernel must hold, or None."""
        caps, kbits = 1, max(1, self.plan.literal_bits)
        as_word = self.plan.slice_as_word
        for kind, value in zip(self.kinds, converted):
            if kind is _TABLE:
                caps = max(caps, (value.n + 63) // 64)
                kbits = max(kbits, value.k, value.n if as_word else 0)
            elif kind is _SLICE:
                caps = max(caps, (max(value[1], 0) + 63) // 64)
                if as_word:
                    kbits = max(kbits, value[1])
            elif kind is _WORD:
                kbits = max(kbits, value[1])
        return max(caps, self.min_caps), max(_pow2((kbits + 63) // 64), self.min_kw)

    # ------------------------------------------------------------------ compiling
    def compile(self, converted) -> bool:
        t0 = perf_counter()
        try:
            caps, kw = self.shape(converted)
            if kw > MAX_KW:
                raise _TooLarge(f"a word of {kw * 64} bits is longer than the GPU tier holds in every thread")
            self.check_as_word(caps)
            self.kernel_for(caps, kw)
        except _TooLarge as e:
            self.why = f"not compiled for these arguments: {e}"
            return False
        except Exception as e:  # noqa: BLE001 - any failure to compile means: interpret this routine
            self.state, self.why = "failed", f"NVRTC/CuPy could not compile or launch it: {type(e).__name__}: {_line(e)}"
            return False
        finally:
            self.compile_seconds += perf_counter() - t0
        self.state, self.why = "compiled", ""
        return True

    def check_as_word(self, caps: int) -> None:
        """On auto, slices turned into words of more than AUTO_AS_WORD_WORDS words: _TooLarge."""
        if self.plan.slice_as_word and caps > AUTO_AS_WORD_WORDS and self.tier.mode == "auto":
            raise _TooLarge(f"slices of {caps * 64} rows become words, which every thread of the kernel would "
                            "read whole at each conversion (--jit on compiles it)")

    def kernel_for(self, caps: int, kw: int):
        """(function, threads, blocks, R, RP) for slices of ``caps`` words and words of ``kw``."""
        import cupy as cp
        lanes = _lanes(caps) if self.plan.has_pfor else 32
        rp = _lane_words(caps, lanes) if self.plan.has_pfor else 1
        if rp > MAX_RP:
            raise _TooLarge(f"a slice of {caps * 64} rows inside parallel for (at most {MAX_RP * 2048})")
        if caps <= _one_block_words() and not self.plan.has_pfor:
            # one block: its barriers are __syncthreads, not the grid's; past 1024 words a
            # thread holds R of them (STARVM_GPU_ONE_BLOCK_WORDS raises the bound, for measuring)
            R = 1 if caps <= ONE_BLOCK_THREADS else _pow2(-(-caps // ONE_BLOCK_THREADS))
            threads = max(32, (-(-caps // R) + 31) // 32 * 32)
            bound = 0 if threads <= THREADS else 1024     # two instances at most (registers fit the block)
            key = (R, kw, rp, "one block", bound, _variant())
            if key not in self.kernels:
                self.kernels[key] = (self.module(R, kw, rp, bound), threads, 1, R)
            fn, _bound, blocks, R = self.kernels[key]
            return fn, threads, blocks, R
        free_r = _free_r()
        variant = _variant() + (lanes,)
        if self.plan.barrier_free and free_r > 0:
            # no grid barrier: an ordinary launch of as many blocks as the slices need, a few
            # words a thread (R = 4: 56 registers for MATCH's body, no spills; R = 64 on a
            # resident grid took 255 registers and spilled)
            R = min(_pow2(max(1, -(-caps // THREADS))), free_r)
            key = (R, kw, rp, "free", variant)
            if key not in self.kernels:
                # not a cooperative module: CuPy clamps a cooperative grid to the blocks that
                # can be resident at once, which would leave the words past them undone
                self.kernels[key] = (self.module(R, kw, rp, 0, cooperative=False), THREADS, 0, R)
            # the blocks are this call's (the key does not hold the slices' length: kept with
            # the kernel, a longer slice after a shorter one left words undone)
            return self.placed(key, -(-caps // (R * THREADS)))
        memo = (caps, kw, rp, variant, config.gpu_pfor_blocks_per_sm())
        if memo in self.chosen:        # this shape's kernel and blocks, as decided before
            return self.placed(*self.chosen[memo])
        sms = _sm_count()
        R = 1 if self.plan.has_pfor else max(_min_r(), _pow2(max(1, -(-caps // (sms * 8 * THREADS)))))
        while True:
            if R > MAX_R:
                raise _TooLarge(f"slices of {caps * 64} rows")
            # STARVM_GPU_FIT=1: registers capped (launch bounds) so that the blocks this R
            # needs are resident together, spilling what does not fit (bench measures it)
            gthreads = _grid_threads()
            mb = 0
            if _fit() and not self.plan.has_pfor:
                mb = -(-(-(-caps // (R * gthreads))) // sms)
                mb = mb if 2 <= mb <= 2048 // gthreads else 0
            key = (R, kw, rp, "grid", variant, mb)
            fit = self.fits.get(key)
            if fit is None:
                # parallel for: 512 threads a block (WARSHALL-adapt on the H100, one barrier
                # a pivot: n = 5000 3.87 against 4.06 us a pivot with 256, n = 16384 9.27
                # against 11.39); STARVM_GPU_PFOR_THREADS sets it (bench --gpu measures others)
                threads = _pfor_threads() if self.plan.has_pfor else gthreads
                fn = self.module(R, kw, rp, threads if threads != THREADS or mb else 0, mb=mb, lanes=lanes)
                per_sm = _blocks_per_sm(fn, threads)
                while per_sm < 1 and self.plan.has_pfor and threads > 32:   # more registers than asked for
                    threads = max(32, threads // 64 * 32)
                    per_sm = _blocks_per_sm(fn, threads)
                if per_sm < 1:
                    raise _TooLarge(f"the kernel does not fit an SM with {threads} threads")
                # kept also where it holds too few words: the next call of this shape does not
                # build and ask for it again (100-180 us a call for MIN's body over 2^27 rows,
                # which tried R = 8, 16 and 32 before 64 on every call)
                fit = self.fits[key] = (fn, threads, per_sm * sms)
            fn, threads, most = fit
            need = -(-caps // (R * threads))
            if need > most:
                R *= 2
                continue
            spill = _spill_bytes(fn)
            alt = None
            if not self.plan.has_pfor and not _fit() and spill > 0:
                alt = self.capped(caps, kw, rp, variant, R, threads, sms, spill)
            if alt is not None:
                key, need = alt
            elif key not in self.kernels:     # (kernels: those launched; fits: those built)
                self.kernels[key] = (fn, threads, 0, R)
            # parallel for: a few iterations per warp on one block an SM (each grid barrier
            # costs one atomic per block); otherwise just the blocks this call's slices need
            per = config.gpu_pfor_blocks_per_sm()
            self.chosen[memo] = (key, min(most, per * sms) if self.plan.has_pfor else need)
            return self.placed(*self.chosen[memo])

    def capped(self, caps: int, kw: int, rp: int, variant, R: int, threads: int, sms: int, spill: int):
        """A grid that holds the slices only with spills (R words a thread, every register
        taken): the smallest R whose kernel, its registers capped by launch bounds so that the
        blocks it needs are resident together (2 to 4 an SM: 128 to 64 registers at 256
        threads), spills less; (key, blocks) or None. MIN's body over 2^27 rows on the H100
        at ea5d111: R = 64 on 128 x 256 threads, 736 B of spills, kernel 316 us (456 on equal
        values); R = 16 on 512 x 256 capped at 64 registers, 112 B, 261 us (372)."""
        r = 1
        while r < R:
            need = -(-caps // (r * threads))
            mb = -(-need // sms)
            if 2 <= mb <= 4 and mb * threads <= 2048:
                key = (r, kw, rp, "grid", variant, mb)
                fit = self.fits.get(key)
                if fit is None:
                    fn = self.module(r, kw, rp, threads, mb=mb)
                    fit = self.fits[key] = (fn, threads, _blocks_per_sm(fn, threads) * sms)
                fn, _threads, most = fit
                if need <= most and _spill_bytes(fn) < spill:
                    if key not in self.kernels:
                        self.kernels[key] = (fn, threads, 0, r)
                    return key, need
            r *= 2
        return None

    def placed(self, key, blocks: int):
        """(function, threads, blocks, R) of the kernel kept under ``key``, launched on
        ``blocks`` blocks; the entry keeps the blocks of its latest call (bench_compiled
        reports them, and may have wrapped the function to time it)."""
        fn, threads, _blocks, R = self.kernels[key]
        self.kernels[key] = (fn, threads, blocks, R)
        return fn, threads, blocks, R

    def module(self, R: int, kw: int, rp: int, bound: int, cooperative: bool = True, mb: int = 0,
               lanes: int = 32):
        """The kernel; ``bound`` > 0: for at most that many threads a block (their registers fit
        an SM), and ``mb`` > 0: ``mb`` such blocks on an SM; ``lanes``: an iteration of
        parallel for on that many lanes."""
        import cupy as cp
        code = instance(self.plan, R, kw, rp, bound, _switches(), mb, _ownc(), lanes,
                        MAXD=self.tier.context.max_depth, ranks=self.rank_defines())
        mod = cp.RawModule(code=code, options=("--std=c++14",), enable_cooperative_groups=cooperative)
        return mod.get_function(KERNEL_NAME)

    # ------------------------------------------------------------------ running
    def run(self, args, converted=None):
        import cupy as cp
        if converted is None:
            converted = self.convert_args(args)
            if converted is None:
                return self.interpreted(*args)
        caps, kw = self.shape(converted)
        if kw > MAX_KW:
            return self.interpreted(*args)
        try:
            self.check_as_word(caps)
        except _TooLarge as e:
            self.why = f"a call ran interpreted: {e}"
            return self.interpreted(*args)
        context = self.tier.context
        # the recursion limit counts the interpreted Star calls in progress too (call.JitRoutine.run)
        depth = context.depth
        if depth[0] >= depth[1] and not self.part:
            context.too_deep(began=False)
        base = depth[0] + (0 if self.part else 1)
        if not self.plan.recursive and base + self.plan.depth > context.max_depth:
            return self.interpreted(*args)      # its calls may pass the limit: the interpreter says where
        if self.plan.recursive and self.max_depth != context.max_depth:
            # the status block's room for call sites is the limit (MAXD): kernels built for another go
            self.kernels.clear()
            self.fits.clear()
            self.chosen.clear()
            self.max_depth = context.max_depth
        try:
            fn, threads, blocks, R = self.kernel_for(caps, kw)
        except _TooLarge:
            return self.interpreted(*args)
        except Exception as e:  # noqa: BLE001 - a new shape that does not compile: interpreted
            self.state, self.why = "failed", f"NVRTC/CuPy could not compile it: {type(e).__name__}: {_line(e)}"
            return self.interpreted(*args)
        # recursion: a CUDA stack for the room its frames are given, the kernel's own frame and
        # STACK_SLACK (the driver keeps it for every resident thread; it may refuse)
        if self.plan.recursive and not _cuda_stack(self.stack_room + STACK_SLACK + _spill_bytes(fn)):
            self.deep_calls += 1
            self.why = (f"CUDA gave no stack of {self.stack_room + STACK_SLACK} bytes a thread for its "
                        "recursion: it ran interpreted")
            return self.rerun_interpreted(args, everything=True)
        graph = self.graph_values()
        if graph is None:       # the graph cannot be read: the interpreter reports it where it reads it
            return self.interpreted(*args)
        tick = context.ticker()
        left = _UNLIMITED if tick is None else steps_left(tick, context.max_steps)
        nout = len(self.plan.outputs)
        vcap = max(caps, kw)
        # one int64 block, reset before every launch: status | counts | results | the grid
        # barrier's arrival counter | reduction ring (uint64 view) | rerun flag
        io = self.io_block(nout)
        scr, ob = self.buffers(vcap)
        # vector results in a new buffer each call: they become the results' words (no copy)
        vout = cp.empty(max(1, nout) * vcap, cp.uint64)
        saved = self.save_tables(converted) if self.plan.writes_tables and (
            self.plan.has_pfor or self.plan.restartable or self.plan.pool or self.plan.recursive) else None
        flag, flag_address = _interrupt_flag()
        flag[S_INTR] = 0
        kargs = self.kernel_args(converted, io, ob, scr, vcap, left, vout, flag_address, base, graph)
        t0 = perf_counter()
        with self.serving(), self.draining(flag, ob) as drain:
            try:
                try:
                    # cooperative or not as its module was built (module(): a keyword here raised
                    # TypeError on every call with CuPy 14, caught, before the plain launch)
                    fn((blocks,), (threads,), kargs)
                except Exception as e:  # noqa: BLE001 - the launch was refused (e.g. too many blocks): interpreted
                    self.launch_failed(e)
                    self.restore_tables(saved)
                    return self.interpreted(*args)
                self.launches += 1
                back = self.wait(io, flag, drain)
            except KeyboardInterrupt:
                # Ctrl-C while the host waited in Python: the kernel stops at its next poll (never
                # left running on the device); a kernel that had ended, or never started: Python's
                flag[S_INTR] = 1
                back = self.read_io(io)
                if not back[S_CODE]:
                    raise
        return self.ended(args, converted, back, flag, drain, saved, vout, vcap, left, tick, t0, base)

    def again(self, drain, run, *a):
        """``run(*a)``: the call again (launched, or interpreted), after a launch that wrote
        nothing the machine sees but its tables and the output its drain wrote, which the
        call prints again (the same text: both tiers print alike), skipped."""
        if drain is None or not drain.chars:
            return run(*a)
        with _skipping_output(self.tier.context, drain.chars):
            return run(*a)

    def ended(self, args, converted, back, flag, drain, saved, vout, vcap, left, tick, t0, base):
        """What the machine sees of a launch that ended (``back``: its status block): a launch
        again, the call interpreted, or its steps, output, results and error."""
        context = self.tier.context
        ss = self.status_size
        sth = back[:ss]
        if drain is not None and drain.error is not None:
            # writing the output failed (a closed pipe): the kernel was stopped for it
            self.finish_gpu(back[ss:ss + NK], sth, np.zeros(0, np.int64), left, tick, t0)
            raise drain.error.with_traceback(None)
        if flag[S_INTR] and sth[S_CODE]:
            # stopped by Ctrl-C; a block that left a grid barrier for it may have failed on
            # something else first, a failure of no sequential run: reported as interrupted
            sth[S_CODE] = E_INTERRUPT
            _take_pending_interrupt()       # the kernel's position is the one to report
        # back[-1]: a pivot loop's failure not yet checked; E_OVERFLOW: an integer past 64 bits,
        # which the interpreter computes exactly (nothing of the call is visible yet but its tables)
        if sth[S_CODE] == E_RERUN and sth[S_B] == 1 and not back[-1] and self.more_output(int(sth[S_A])):
            # more output records than the buffer holds: nothing of the launch is kept, it runs
            # again with room for at least eight times the records (once or twice a program)
            self.restore_tables(saved)
            self.seconds += perf_counter() - t0
            self.ob_launches += 1
            return self.again(drain, self.run, args, converted)
        if sth[S_CODE] in (E_RERUN, E_OVERFLOW) or (back[-1] and sth[S_CODE] != E_INTERRUPT):
            self.reruns += 1
            self.restore_tables(saved)
            self.seconds += perf_counter() - t0
            return self.again(drain, self.interpreted, *args)
        if sth[S_CODE] == E_STACK and not flag[S_INTR]:
            # Star frames past the room given: launched again with twice the room (a larger CUDA
            # stack), or, past STACK_MAX or where CUDA refuses it, the call runs interpreted
            self.restore_tables(saved)
            self.seconds += perf_counter() - t0
            self.stack_launches += 1
            if self.more_stack(int(sth[S_B])):
                return self.again(drain, self.run, args, converted)
            self.deep_calls += 1
            self.why = (f"a call recursed deeper than the GPU's stack holds ({int(sth[S_A]) - base} Star calls took "
                        f"{int(sth[S_B])} bytes a thread, at most {STACK_MAX} are given): it ran interpreted")
            return self.again(drain, self.rerun_interpreted, args, True)
        if sth[S_CODE] == E_POOL:
            # a local table past the pool: nothing of this launch is kept (steps, output, results);
            # launched again on a pool that holds it, or interpreted where the device has no room
            self.restore_tables(saved)
            self.seconds += perf_counter() - t0
            self.pool_launches += 1
            n, k, why = int(sth[S_A]), int(sth[S_B]), int(sth[S_D])
            if why in (1, 2):
                # a local table's columns past the grid's slices (1; or past a word, where slices
                # become words), its rows past the words every thread holds (2): a larger shape
                shape = (self.min_caps, self.min_kw)
                if why == 1:
                    self.min_caps = max(self.min_caps, (n + 63) // 64)
                    if self.plan.slice_as_word:
                        self.min_kw = max(self.min_kw, _pow2((n + 63) // 64))
                else:
                    self.min_kw = max(self.min_kw, _pow2((k + 63) // 64))
                if (self.min_caps, self.min_kw) != shape:
                    return self.again(drain, self.run, args, converted)
            if why == 0 and self.grow_pool(n, k, int(sth[S_C])):
                return self.again(drain, self.run, args, converted)
            self.reruns += 1
            return self.again(drain, self.interpreted, *args)
        nout = len(self.plan.outputs)
        counts = back[ss:ss + NK]
        out = back[ss + NK:ss + NK + nout]
        if drain is not None:      # its records are the drain's to write, after those it wrote
            drain.rest(int(sth[S_OUT]))
            obh = np.zeros(0, np.int64)
        else:
            ob = self._buffers[2]
            obh = _host_words(ob[:int(sth[S_OUT])]) if sth[S_OUT] else np.zeros(0, np.int64)
        self.finish_gpu(counts, sth, obh, left, tick, t0)
        if drain is not None and drain.error is not None:
            raise drain.error.with_traceback(None)
        if sth[S_CODE]:
            err = errors.star_error(sth, self.unit.lowered, context.max_steps, base if self.plan.recursive else 0)
            err.continues_caller = self.part      # the main block's frame is its caller's (Machine._guard)
            raise err from None
        return self.results_gpu(args, out, vout, vcap)

    def rank_defines(self):
        """(rank, ranks, rows a block unit) of a kernel for MPI ranks (cuda_ranks.py); None here."""
        return None

    def serving(self):
        """What runs beside a launch until its status is read (cuda_ranks.py: the mailbox's host)."""
        return contextlib.nullcontext()

    def draining(self, flag, ob):
        """The launch's OutputDrain (cuda_output.py), which writes its output while it runs;
        a null context (None) where the kernel writes none, or its records or the Ctrl-C flag
        are not in page-locked host memory (its full buffer then asks for a larger one)."""
        if not self.plan.writes_output or not isinstance(ob, np.ndarray) or not _flag_pinned(flag):
            return contextlib.nullcontext()
        return OutputDrain(flag[S_INTR:], ob, self.tier.context, self.unit.lowered.strings)

    def launch_failed(self, e: Exception) -> None:
        """The launch was refused: this routine runs interpreted from now on."""
        self.state, self.why = "failed", f"the cooperative launch failed: {type(e).__name__}: {_line(e)}"

    def out_words(self, type_, n: int) -> int:
        """The words of an n-bit vector result the kernel wrote (cuda_ranks.py: a slice's block)."""
        return (n + 63) // 64

    def device_vector(self, words, n: int, type_):
        """A vector result as the backend holds it, from the words of this call's own buffer."""
        return words

    def graph_values(self):
        """The values of the graph's scalars the kernel reads (plan.graph_reads), as the
        interpreter's _graph gives them; None where that fails (no graph, a file that does not
        read): the call then runs interpreted, which reports it at the statement reading it."""
        if not self.plan.graph_reads:
            return ()
        from ..errors import StarError
        read = self.tier.context.ns["_graph"]
        try:
            return tuple(int(read(what)) for what in self.plan.graph_reads)
        except StarError:
            return None

    def more_output(self, need: int) -> bool:
        """Room for ``need`` words of output records and more (eight times the buffer before);
        False past OB_MAX_BYTES or where the device has no room (the call runs interpreted)."""
        free = _free_device_bytes()
        most = OB_MAX_BYTES if free is None else min(OB_MAX_BYTES, free // 2)
        if need * 8 > most:
            return False
        self.ob_words = max(need, min(8 * self.ob_words, most // 8))
        self._buffers = None
        return True

    @property
    def status_size(self) -> int:
        """The status block's slots: a recursive kernel's hold the call sites of max_depth calls."""
        return S_STACK + self.tier.context.max_depth + 1 if self.plan.recursive else STATUS_SIZE

    def more_stack(self, used: int) -> bool:
        """Twice the stack room (at least what ``used`` bytes of frames and half again need) and
        the CUDA stack size for it; False past STACK_MAX or where CUDA refuses it."""
        room = max(2 * self.stack_room, used + used // 2)
        if room > STACK_MAX:
            return False
        if not _cuda_stack(room + STACK_SLACK):
            return False
        self.stack_room = room
        return True

    def report_lines(self) -> list[str]:
        """--profile (Tier.report): as the CPU tier's routines, and the calls that ran interpreted
        for recursing deeper than the GPU's stack holds, with why."""
        if self.state != "compiled":
            return [f"  {self.display}: interpreted, {self.calls} call(s): {self.why}"]
        seen, todo = set(), [self.pyname]
        bodies = {**self.tier.bodies, self.pyname: (None, self.plan.body)}
        while todo:
            p = todo.pop()
            if p not in seen and p in bodies:
                seen.add(p)
                todo.extend(c.pyname for c in callees(bodies[p][1]))
        inner = sorted(self.tier.display_of(p) for p in seen - {self.pyname})
        calls = f" (with {', '.join(inner)})" if inner else ""
        where = ""
        if self.part and self.plan.body is not None and self.plan.body.src:   # which part: its lines
            first, last = self.plan.body.src[0].loc, self.plan.body.src[-1].loc
            where = f", lines {first.line}-{last.line}" if first and last else ""
        lines = [f"  {self.display}{where}{calls}: compiled; {self.compiled_calls} call(s) ran compiled in {self.seconds:.4f} s "
                 f"(compiling or loading it from the cache: {self.compile_seconds:.3f} s)"]
        if self.deep_calls:
            lines.append(f"    {self.deep_calls} call(s) interpreted: {self.why}")
        return lines

    def pool_words(self):
        """(the pool, its words) for this call's launch (plan.pool), made at the first call."""
        import cupy as cp
        if self.pool is None:
            self.pool = cp.empty(POOL_WORDS, cp.uint64)
        return self.pool, self.pool.size

    def grow_pool(self, n: int, k: int, top: int) -> bool:
        """A pool for a table(n, k) allocated where ``top`` words were in use, at least twice the
        one before; False where the device memory has no room for it (the call then runs
        interpreted, which reports a table too large as the interpreter does)."""
        import cupy as cp
        need = top + k * ((n + 63) // 64)
        words = max(need, 2 * (self.pool.size if self.pool is not None else POOL_WORDS))
        free = _free_device_bytes()
        old = self.pool.size * 8 if self.pool is not None else 0
        if free is not None and need * 8 > free + old:
            return False
        if free is not None and words * 8 > free + old:
            words = need
        self.pool = None
        try:
            self.pool = cp.empty(words, cp.uint64)
        except Exception:  # noqa: BLE001 - out of device memory: interpreted
            return False
        return True

    def wait(self, io, flag, drain=None) -> np.ndarray:
        """The status block once the kernel has ended. Ctrl-C meanwhile sets the word the kernel
        polls (flag[S_INTR], prelude.cu intr_poll): for the first WAIT_SPIN_S the host asks the
        stream from Python, where a SIGINT raises KeyboardInterrupt (run sets the word); a kernel
        still running is waited for in C, with interrupts.flagged's SIGINT handler setting it
        (installing that handler costs tens of microseconds: not on every short call). With a
        drain the host keeps asking from Python, in short sleeps: the drain's thread must run
        while the kernel waits for it (a wait in C could hold the interpreter's lock)."""
        done = _stream_done()
        end = perf_counter() + WAIT_SPIN_S
        while not done() and perf_counter() < end:
            pass
        if drain is not None:
            while not done():
                sleep(DRAIN_WAIT_S)
        if done():
            return self.read_io(io)
        with flagged(flag):
            return self.read_io(io)

    def kernel_args(self, converted, io, ob, scr, vcap: int, left: int, vout, intr: int = 0,
                    base: int = 0, graph=()) -> tuple:
        """The launch's arguments in the order of the kernel's signature (targets/cuda/routine.py);
        ``intr``: the address of the Ctrl-C flag (a page-locked host word the kernel reads);
        ``graph``: the values of the graph's scalars it reads (graph_values)."""
        kargs = []
        for kind, value in zip(self.kinds, converted):
            if kind is _TABLE:
                kargs += [value.data, np.int64(value.n), np.int64(value.k)]
            elif kind is _SCALAR:
                kargs.append(np.int64(int(value)))
            else:
                words, n = value
                kargs += [words if words is not None and words.size else vout, np.int64(n)]
        if self.plan.pool:
            pool, words = self.pool_words()
            kargs += [pool, np.int64(words)]
        if self.plan.graph_reads:
            import cupy as cp
            kargs.append(cp.asarray(np.array(graph, np.int64)))
        if self.plan.recursive:      # the Star calls outside the kernel, the room for its frames
            kargs += [np.int64(base), np.int64(self.stack_room)]
        ob = np.uint64(ob.ctypes.data) if isinstance(ob, np.ndarray) else ob     # page-locked: its address
        kargs += [np.uint64(intr), io, ob, np.int64(self.ob_words), scr, np.int64(vcap), np.int64(min(left, _UNLIMITED)), vout]
        return tuple(kargs)

    def buffers(self, vcap: int):
        """The scratch regions and output records of a call (kept between calls: the kernel
        writes them before it reads them). The records are in page-locked host memory where
        the kernel writes any (its drain reads them while it runs: cuda_output.py), else, or
        where there is none to be had, on the device."""
        import cupy as cp
        old = getattr(self, "_buffers", None)
        if old is None or old[0] != vcap or old[2].size != self.ob_words:
            # the records kept where only the slices' length changed (page-locked memory takes
            # milliseconds to allocate)
            ob = old[2] if old is not None and old[2].size == self.ob_words else None
            if ob is None and self.plan.writes_output:
                ob = _pinned_int64(self.ob_words, pageable=False)
            self._buffers = (vcap, cp.empty(self.plan.scratch_regions * vcap, cp.uint64),
                             cp.empty(self.ob_words, cp.int64) if ob is None else ob)
        return self._buffers[1:]

    def io_block(self, nout: int):
        """The call's status block as the kernel must find it: one block kept between calls (a
        call waits for its kernel before it returns, so no two calls share it), reset by an
        asynchronous device copy of a template made once (uploading the block cost 18 us a
        call; a new block each call, an allocation and a copy kernel more)."""
        import cupy as cp
        size = self.status_size + NK + nout + 11
        if getattr(self, "_io", None) is None or self._io[0].size != size:
            io_host = np.zeros(size, np.int64)
            io_host[-4:-1] = -1                  # the min ring starts at its identity (all ones)
            init = cp.asarray(io_host)
            self._io = (cp.empty_like(init), init, _pinned_int64(size))
        io, init, _host = self._io
        io.data.copy_from_device_async(init.data, size * 8)
        return io

    def read_io(self, io) -> np.ndarray:
        """The status block after the kernel (waits for it): copied into page-locked host memory
        kept between calls, then into an array of the call's own."""
        host = self._io[2]
        io.get(out=host)
        return host.copy()

    def finish_gpu(self, counts, sth, obh, left, tick, t0) -> None:
        self.seconds += perf_counter() - t0
        self.compiled_calls += 1
        mc = self.tier.context.counts
        for i in np.flatnonzero(counts):
            mc[i] += int(counts[i])
        if tick is not None:
            tick_many(tick, left - max(int(sth[S_LEFT]), 0))
        if obh.size:     # the records hold host words
            write_records(self.tier.context.write, obh, self.unit.lowered.strings)

    def results_gpu(self, args, out, vout, vcap):
        info = self.compiled.info
        context = self.tier.context
        backend = context.backend
        by_arg = {id(p): a for a, p in zip(args, info.params)}
        values = []
        for j, (sym, _slot) in enumerate(self.plan.outputs):
            if sym.type.is_vector:
                n = int(out[j])
                if n < 0:
                    values.append(Unassigned(self.unit.lowered.names[-1 - n]))
                    continue
                nw = self.out_words(sym.type, n)
                # this call's own buffer (the whole of it, when it is this one result: no view)
                words = vout if nw == vout.size else vout[j * vcap:j * vcap + nw]
                if not backend.is_device:
                    words = words.get()
                values.append((words, n))
            elif sym.type is T.BOOL:
                values.append(bool(out[j]))
            else:
                values.append(int(out[j]))
        j = 0
        result = None
        if info.is_function:
            result = self._py(values[0], info.result.type, None)
            j = 1
        outs = []
        for p in info.out_params:
            outs.append(self._py(values[j], p.type, by_arg[id(p)]))
            j += 1
        for g in self.compiled.returned_globals:
            context.ns[g.pyname] = self._py(values[j], g.type, context.ns.get(g.pyname))
            j += 1
        if info.is_function:
            return result if not outs else (result, *outs)
        return tuple(outs) if outs else None

    def _py(self, value, type_, old):
        from ..execution.values import Bits
        if isinstance(value, Unassigned):
            return old if isinstance(old, Unassigned) else value
        if type_.is_vector:
            words, n = value
            backend = self.tier.context.backend
            # CuPy: the words are this call's own buffer (run), so taken as they are
            v = self.device_vector(words, n, type_) if backend.is_device else backend.from_words(words, n)
            if isinstance(old, Bits):
                old.v, old.n = v, n
                return old
            return Bits(v, n)
        return value

    def save_tables(self, converted):
        syms = list(self.plan.params) + list(self.plan.globals)
        return [(v, v.data.copy()) for s, v in zip(syms, converted) if s.type is T.TABLE and not s.readonly]

    @staticmethod
    def restore_tables(saved) -> None:
        import cupy as cp
        for table, data in saved or ():
            cp.copyto(table.data, data)


_SMS = []


_STACK_SET: list = []     # the CUDA stack size this process set (bytes a thread), where it set one


def _cuda_stack(size: int) -> bool:
    """The device's stack size at least ``size`` bytes a thread (cudaLimitStackSize: the driver
    keeps that much local memory for every resident thread); False where CUDA refuses it. A
    CuPy without the call (the tests' stand-in, whose kernels run on CPU threads) has room."""
    import cupy as cp
    if _STACK_SET and _STACK_SET[0] >= size:
        return True
    runtime = cp.cuda.runtime
    if not hasattr(runtime, "deviceSetLimit"):
        return True
    limit = getattr(runtime, "cudaLimitStackSize", 0)
    try:
        if int(runtime.deviceGetLimit(limit)) < size:
            runtime.deviceSetLimit(limit, size)
    except Exception:  # noqa: BLE001 - no memory for that stack on every resident thread
        return False
    _STACK_SET[:] = [size]
    return True


def _free_device_bytes() -> int | None:
    """Free device memory in bytes (CuPy's pool's free blocks included), None where not known."""
    import cupy as cp
    try:
        free = int(cp.cuda.runtime.memGetInfo()[0])
        pool = cp.get_default_memory_pool()
        return free + int(pool.total_bytes() - pool.used_bytes())
    except Exception:  # noqa: BLE001 - a CuPy without these (the tests' stand-in)
        return None


# the environment's settings (STARVM_GPU_*) are read in config.py; these name them here
def _free_r() -> int:
    return config.gpu_free_r(FREE_R, MAX_R)


def _min_r() -> int:
    return config.gpu_min_r(MAX_R)


def _one_block_words() -> int:
    words = config.gpu_one_block_words(MAX_R * ONE_BLOCK_THREADS)
    return ONE_BLOCK_WORDS if words is None else words


def _grid_threads() -> int:
    return config.gpu_threads(THREADS)


def _fit() -> bool:
    return config.gpu_fit()


def _switches() -> tuple:
    return config.gpu_switches(SWITCHES)


def _variant() -> tuple:
    """What else selects a compiled instance (environment settings read when it is built)."""
    return (_pfor_threads(), _switches(), _min_r(), _fit(), _grid_threads(), _ownc())


def _ownc() -> int:
    return config.gpu_ownc()


def _pfor_threads() -> int:
    return config.gpu_pfor_threads(PFOR_THREADS)


def _sm_count() -> int:
    if not _SMS:
        import cupy as cp
        _SMS.append(int(cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)["multiProcessorCount"]))
    return _SMS[0]


_FLAG: list = []     # (cupy module, flag array, address of its word S_INTR, page-locked)
_KEEP: list = []     # device words that stand in for the flag, kept alive
WAIT_SPIN_S = 0.002      # a call's kernel waited for from Python this long (GpuRoutine.wait)
DRAIN_WAIT_S = 0.0002    # a kernel with an output drain: asked whether it ended this often


def _stream_done():
    """A callable: has the current stream's work (the call's kernel, its status copy) ended?"""
    import cupy as cp
    stream = cp.cuda.get_current_stream()
    return lambda: stream.done


def _interrupt_flag():
    """(array, address of its word S_INTR) that interrupts.flagged and the kernels share: page-
    locked host memory, which a kernel reads directly (unified addressing: the host address is
    the device's). Where none is to be had, a device word no SIGINT sets (no Ctrl-C, as before).
    One per CuPy module: a stand-in's (tests) must never be handed to a real GPU's kernel."""
    import cupy as cp
    for module, flag, address, _pinned in _FLAG:
        if module is cp:
            return flag, address
    size = S_INTR + OUT_ACK + 1          # the output's words after the flag (cuda_output.py)
    try:
        mem = cp.cuda.alloc_pinned_memory(size * 8)
        flag = np.frombuffer(mem, np.int64, size)
        address = flag.ctypes.data + 8 * S_INTR
        pinned = True
    except Exception:  # noqa: BLE001 - no page-locked memory: the kernel reads device zeros
        flag = np.zeros(size, np.int64)
        word = cp.zeros(OUT_ACK + 1, cp.int64)
        address = word.data.ptr
        _KEEP.append(word)
        pinned = False
    _FLAG.append((cp, flag, address, pinned))
    return flag, address


def _pinned_int64(size: int, pageable: bool = True) -> np.ndarray | None:
    """``size`` int64 in page-locked host memory (a device-to-host copy lands there directly;
    into pageable memory the driver stages it; a kernel reads and writes it directly). Where
    none is to be had: pageable memory, or None (``pageable=False``: for a kernel's use)."""
    import cupy as cp
    try:
        mem = cp.cuda.alloc_pinned_memory(size * 8)
    except Exception:  # noqa: BLE001 - no page-locked memory to be had: pageable
        return np.empty(size, np.int64) if pageable else None
    return np.frombuffer(mem, np.int64, size)     # the array keeps ``mem`` alive


def _host_words(ob) -> np.ndarray:
    """Output records as host words: those in page-locked memory as they are, a device's copied."""
    return ob if isinstance(ob, np.ndarray) else ob.get()


def _flag_pinned(flag) -> bool:
    """Whether ``flag`` (_interrupt_flag's) is page-locked host memory that the kernel shares."""
    return any(f is flag and pinned for _m, f, _a, pinned in _FLAG)


_TABLE, _SLICE, _WORD, _SCALAR = "table", "slice", "word", "scalar"


def _kind(t) -> str:
    if t is T.TABLE:
        return _TABLE
    if t is T.SLICE:
        return _SLICE
    if t is T.WORD:
        return _WORD
    return _SCALAR


class _TooLarge(Exception):
    pass


def _blocks_per_sm(fn, threads: int) -> int:
    try:
        from cupy.cuda import driver
        return int(driver.occupancyMaxActiveBlocksPerMultiprocessor(fn.ptr, threads, 0))
    except Exception:  # noqa: BLE001 - older CuPy: from the registers
        regs = max(1, int(getattr(fn, "num_regs", 64)))
        return max(0, min(2048 // threads, 65536 // (((regs + 7) // 8 * 8) * threads), 32))


def _spill_bytes(fn) -> int:
    """Local memory a thread of the kernel takes (registers spilled), 0 where not known."""
    try:
        return int(getattr(fn, "local_size_bytes", 0) or 0)
    except (TypeError, ValueError):
        return 0


def _line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return text[0][:300] if text else ""

