"""Run a GPU-tier kernel (starvm/targets/cuda/routine.py) on the CPU: the generated CUDA C compiled
as C++20 with cpu_cuda.h, every GPU thread an OS thread, launched on a small grid (a few
blocks of one or two warps). It checks a kernel's logic without a GPU: grid barriers, the
pivot loop's double buffers, reductions, warp shuffles and ballots, the failure flags and the
step budget; not the GPU's memory model or speed (tests/jit/test_gpu_tier.py does that on one).

``run_kernel`` builds the arguments as cuda_runtime.GpuRoutine.run does (tables as k x W words,
slices and words as words, the status block, counts, the reduction ring and its rerun flag,
the barrier words, scratch regions) and returns what the host would read back.
"""
from __future__ import annotations

import contextlib
import ctypes
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from starvm.targets.cuda.prelude import OUT_ACK

from .fake_cupy import fake_cupy_installed

HERE = Path(__file__).resolve().parent
_BUILD = Path(tempfile.gettempdir()) / "starvm-cpu-cuda"


_CXX: list = []


def require() -> None:
    """Skip where no C++20 compiler with <barrier> and std::atomic_ref is found."""
    import pytest
    if not _CXX:
        ok = shutil.which("g++") is not None
        if ok:
            probe = "#include <barrier>\n#include <atomic>\nint main() { int x = 0; std::atomic_ref<int>(x).store(1); }\n"
            with tempfile.TemporaryDirectory() as d:
                (Path(d) / "p.cpp").write_text(probe)
                ok = subprocess.run(["g++", "-std=c++20", "-pthread", str(Path(d) / "p.cpp"), "-o",
                                     str(Path(d) / "p")], capture_output=True, timeout=120).returncode == 0
        _CXX.append(ok)
    if not _CXX[0]:
        pytest.skip("no g++ with C++20 <barrier>: the CPU run of the GPU tier's kernels needs one")


@dataclass
class KernelRun:
    code: int             # status S_CODE (0: no failure)
    rerun: bool           # the rerun flag (ring word 9): a failure inside parallel for
    left: int             # status S_LEFT: the step budget left
    counts: list          # steps by kind
    barriers: int         # grid barriers passed (arrivals counted / blocks)
    tables: list          # each table argument afterwards, rows x columns of bool
    results: list         # res (scalars; a vector's length)
    vectors: list         # vout: each vector result as bool, its length from res
    status: list = None   # the whole status array (errors.star_error maps a failure to its message)


def _cpp(code: str) -> str:
    """The kernel text as C++ for cpu_cuda.h: __shared__ variables become per-block storage, and
    the barrier's spin yields (more threads than cores)."""
    code = re.sub(r"__shared__\s+([\w ]+?)\s+(\w+)\[([^\]]+)\];", r"\1* \2 = emu_shm<\1>(\3, __LINE__);", code)
    code = re.sub(r"__shared__\s+([\w ]+?)\s+(\w+);", r"\1& \2 = *emu_shm<\1>(1, __LINE__);", code)
    spin = "while ((v & BAR_COUNT) < c.nb && v <= BAR_COUNT) {\n            v = bar_poll(c.bar);"
    assert spin in code, "the grid barrier's spin loop changed: update emulate._cpp"
    code = code.replace(spin, "while ((v & BAR_COUNT) < c.nb && v <= BAR_COUNT) {\n            std::this_thread::yield(); "
                              "v = bar_poll(c.bar);")
    spin = "while ((v = vb[1]) == g) {"      # the generation-word barrier (GEN_BARRIER)
    assert spin in code, "the generation barrier's spin loop changed: update emulate._cpp"
    code = code.replace(spin, "while ((v = vb[1]) == g) { std::this_thread::yield();")
    # a rank kernel's rank, ranks and alignment from the environment (cpu_cuda.h: emu_rk): one build for all
    for i, name in enumerate(("RK_RANK", "RK_SIZE", "RK_ALIGN")):
        code = re.sub(rf"#define {name} \d+LL\n", f"#define {name} emu_rk({i})\n", code)
    return '#include "cpu_cuda.h"\n' + code


def _build(src: str) -> Path:
    """The program of ``src`` (C++ over cpu_cuda.h), built once (kept by its text's hash)."""
    _BUILD.mkdir(exist_ok=True)
    digest = hashlib.sha1((src + (HERE / "cpu_cuda.h").read_text()).encode()).hexdigest()[:16]
    exe = _BUILD / f"k_{digest}"
    if not exe.exists():        # each process builds under its own names (pytest -n), then renames
        import fcntl
        with open(_BUILD / f"k_{digest}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)      # ranks building the same program: one builds, the others wait
            if exe.exists():
                return exe
            cpp, tmp = _BUILD / f"k_{digest}.{os.getpid()}.cpp", _BUILD / f"k_{digest}.{os.getpid()}.tmp"
            cpp.write_text(src)
            built = subprocess.run(["g++", "-std=c++20", "-O1", "-w", "-pthread", f"-I{HERE}", str(cpp), "-o",
                                    str(tmp)], capture_output=True, text=True, timeout=300)
            if built.returncode:
                raise RuntimeError(f"g++ could not compile {cpp}:\n{built.stderr[:4000]}")
            tmp.replace(exe)
    return exe


def _words(bits) -> list[int]:
    bits = np.asarray(bits, bool)
    words = [0] * max(1, (bits.size + 63) // 64)
    for r in np.flatnonzero(bits):
        words[r >> 6] |= 1 << (int(r) & 63)
    return words


def _bits(words, n: int) -> np.ndarray:
    return np.array([(int(words[r >> 6]) >> (r & 63)) & 1 for r in range(n)], bool)


def run_kernel(plan, args, blocks: int, threads: int, R: int = 1, RP: int = 1, KW: int = 1,
               left: int = 1 << 62, timeout: float = 120, switches=(), ownc: int = -1,
               lanes: int = 32, interrupt_after: float | None = None, poll_every: int = 0,
               pool_words: int = 1 << 12, max_depth: int = 64, stack_room: int = 1 << 20) -> KernelRun:
    """Launch ``plan`` (a KernelPlan) on ``blocks`` x ``threads`` CPU threads. ``args`` follow the
    kernel's parameters: a table as a rows x columns bool array, a slice or word as a bool
    vector, integers and booleans as ints. R, RP, KW, switches (names of
    routine.SWITCHES), ownc and lanes (its OWNC and LANES) as targets/cuda/routine.instance takes them.
    ``interrupt_after``: seconds after the launch at which a host thread sets the Ctrl-C flag
    (as the SIGINT handler of jit/interrupts.py does on the host of a GPU); ``poll_every`` > 0:
    the steps between two polls of that flag (a power of two; the kernels' own: 1024).
    ``pool_words``: the local tables' pool of a plan that has them (plan.pool); ``max_depth`` and
    ``stack_room``: a recursive plan's recursion limit and room for its frames (plan.recursive)."""
    from starvm.ir.ops import BASE_OPS
    from starvm.targets.cuda.routine import instance
    from starvm.targets.layout import S_CODE, S_LEFT, S_STACK, STATUS_SIZE
    if plan.recursive:
        STATUS_SIZE = S_STACK + max_depth + 1       # noqa: N806 - as cuda_runtime.status_size
    from starvm.types import T
    nk = len(BASE_OPS)
    caps, kargs, decl, tables = 1, [], [], []
    for j, (sym, val) in enumerate(zip(list(plan.params) + list(plan.globals), args)):
        if sym.type is T.TABLE:
            n, k = val.shape
            W = (n + 63) // 64
            caps = max(caps, W)
            words = [w for c in range(k) for w in (_words(val[:, c]) + [0] * W)[:W]] or [0]
            decl.append(f"static u64 T{j}[] = {{{', '.join(f'{w}ULL' for w in words)}}};")
            kargs += [f"T{j}", f"{n}LL", f"{k}LL"]
            tables.append((j, n, k))
        elif sym.type in (T.SLICE, T.WORD):
            if sym.type is T.SLICE:
                caps = max(caps, (len(val) + 63) // 64)
            decl.append(f"static u64 S{j}[] = {{{', '.join(f'{w}ULL' for w in _words(val))}}};")
            kargs += [f"S{j}", f"{len(val)}LL"]
        else:
            kargs.append(f"{int(val)}LL")
    vcap, nout = max(caps, KW), len(plan.outputs)
    pool = ["pool.data()", f"{pool_words}LL"] if plan.pool else []
    pool += ["0LL", f"{stack_room}LL"] if plan.recursive else []
    show = "".join(f'printf("T{j}"); for (size_t i = 0; i < sizeof(T{j}) / 8; ++i) printf(" %llu", T{j}[i]); '
                   'printf("\\n");' for j, _n, _k in tables)
    main = f"""
#include <cstdio>
#include <cstdlib>
#include <chrono>
{chr(10).join(decl)}
int main(int argc, char** argv) {{
    i64 left = argc > 1 ? atoll(argv[1]) : (1LL << 62);
    static i64 intr[1] = {{0}};      // the host's Ctrl-C flag (cuda_runtime: page-locked host memory)
    long intr_us = argc > 2 ? atol(argv[2]) : -1;
    std::thread ctrl_c([&] {{ if (intr_us >= 0) {{ std::this_thread::sleep_for(std::chrono::microseconds(intr_us));
                                                  std::atomic_ref<i64>(intr[0]).store(1); }} }});
    static i64 io[{STATUS_SIZE + nk + nout + 11}] = {{0}};     // as cuda_runtime.io_block lays it out
    i64* st = io; i64* cnt = io + {STATUS_SIZE}; i64* res = io + {STATUS_SIZE + nk};
    u64* bar = (u64*)(io + {STATUS_SIZE + nk + nout}); u64* red = bar + 1;
    red[6] = red[7] = red[8] = ALL;
    static std::vector<u64> scr({plan.scratch_regions} * {vcap}), vout({max(1, nout)} * {vcap});
    static std::vector<i64> ob(4096);
    static std::vector<u64> pool({max(1, pool_words)});
    launch({blocks}, {threads}, [&] {{ star_routine({', '.join(kargs + pool)}, intr, io, ob.data(), 4096, scr.data(),
                                                  {vcap}, left, vout.data()); }});
    ctrl_c.join();
    printf("status %lld %llu %lld %llu\\n", st[{S_CODE}], red[9], st[{S_LEFT}],
           {"(u64)((unsigned int*)bar)[1] / 2" if "GEN_BARRIER" in switches else f"(bar[0] & BAR_COUNT) / {blocks}"});
    printf("st"); for (int i = 0; i < {STATUS_SIZE}; ++i) printf(" %lld", st[i]); printf("\\n");
    printf("cnt"); for (int i = 0; i < {nk}; ++i) printf(" %lld", cnt[i]); printf("\\n");
    printf("res"); for (int i = 0; i < {max(1, nout)}; ++i) printf(" %lld", res[i]); printf("\\n");
    for (int j = 0; j < {nout}; ++j) {{ printf("v"); for (int i = 0; i < {vcap}; ++i) printf(" %llu", vout[j * {vcap} + i]);
                                       printf("\\n"); }}
    {show}
    return 0;
}}
"""
    polls = f"#define POLL_EVERY {poll_every}\n" if poll_every else ""
    exe = _build(polls + _cpp(instance(plan, R, KW, RP, 0, switches, OWNC=ownc, LANES=lanes, MAXD=max_depth)) + main)
    after = [] if interrupt_after is None else [str(int(interrupt_after * 1e6))]
    out = subprocess.run([str(exe), str(left), *after], capture_output=True, text=True, timeout=timeout,
                         check=True).stdout
    lines = [line.split() for line in out.splitlines()]
    status = [int(x) for x in lines[0][1:]]
    st = [int(x) for x in lines.pop(1)[1:]]
    counts = [int(x) for x in lines[1][1:]]
    results = [int(x) for x in lines[2][1:]][:nout]
    vecs = [[int(x) for x in line[1:]] for line in lines[3:3 + nout]]
    vectors = [_bits(vecs[j], max(results[j], 0)) if sym.type.is_vector else None for sym, j in plan.outputs]
    got_tables = []
    for (j, n, k), line in zip(tables, lines[3 + nout:]):
        W = (n + 63) // 64
        words = [int(x) for x in line[1:]]
        got_tables.append(np.stack([_bits(words[c * W:(c + 1) * W], n) for c in range(k)], axis=1)
                          if k else np.zeros((n, 0), bool))
    return KernelRun(status[0], bool(status[1]), status[2], counts, status[3], got_tables, results, vectors, st)


_C_SCALAR = {np.dtype(np.int64): "long long", np.dtype(np.uint64): "unsigned long long", np.dtype(np.int32): "int"}


def run_launch(code: str, kernel: str, grid: tuple, block: tuple, args: tuple, timeout: float = 120,
               routine: bool = False, env: dict | None = None) -> None:
    """One launch of a kernel with no grid barrier (the CuPy backend's fused `parallel for`,
    targets/cuda/forall.py) on ``grid[0]`` x ``block[0]`` CPU threads: each array argument is
    copied in and written back after, as the kernel left it (views of one buffer that do not
    overlap, as status[1:] and status[:1], each on its own). The program is built once a
    kernel and list of argument kinds; the values travel through a file. ``routine``: a GPU
    tier kernel (``code`` an ``instance``'s text, grid barriers and all: see routine_launch)."""
    if routine:
        code = _cpp(code)[len('#include "cpu_cuda.h"\n'):]
    code = code.replace("__shared__ unsigned long long sh_word, sh_count;",
                        "__shared__ unsigned long long sh_word; __shared__ unsigned long long sh_count;")
    code = re.sub(r"__shared__\s+([\w ]+?)\s+(\w+);", r"\1& \2 = *emu_shm<\1>(1, __LINE__);", code)
    kinds, call, reads = [], [], []
    for i, a in enumerate(args):
        if isinstance(a, Shared):       # host memory the kernel and the host share while it runs
            kinds.append("m")
            reads.append(f"    std::vector<u64> A{i} = take(in);")
            call.append(f"(long long*)map_shared(A{i})")
        elif isinstance(a, np.ndarray):
            ctype = "long long" if a.dtype == np.int64 else "unsigned long long"
            kinds.append("a")
            reads.append(f"    std::vector<u64> A{i} = take(in);")
            call.append(f"({ctype}*)A{i}.data()")
        else:
            ctype = _C_SCALAR[np.asarray(a).dtype]
            kinds.append(ctype)
            reads.append(f"    {ctype} S{i} = ({ctype})take(in)[0];")
            call.append(f"S{i}")
    writes = "".join(f'    give(out, A{i});\n' for i, k in enumerate(kinds) if k == "a")
    main = f"""
#include <cstdio>
#include <fstream>
#include <string>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
static std::vector<u64> take(std::ifstream& in) {{
    long long n = 0; in.read((char*)&n, 8);
    std::vector<u64> v(n > 0 ? n : 1); if (n > 0) in.read((char*)v.data(), 8 * n);
    return v;
}}
static void give(std::ofstream& out, const std::vector<u64>& v) {{ out.write((const char*)v.data(), 8 * v.size()); }}
static void* map_shared(const std::vector<u64>& v) {{      // the path's length, the offset, the path
    std::string path((const char*)(v.data() + 2), (size_t)v[0]);
    int fd = open(path.c_str(), O_RDWR);
    struct stat st; fstat(fd, &st);
    void* p = mmap(nullptr, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    return (char*)p + v[1];
}}
int main(int argc, char** argv) {{
    std::ifstream in(argv[1], std::ios::binary);
    unsigned grid = 0, block = 0; in.read((char*)&grid, 4); in.read((char*)&block, 4);
{chr(10).join(reads)}
    launch(grid, block, [&] {{ {kernel}({', '.join(call)}); }});
    std::ofstream out(argv[2], std::ios::binary);
{writes}    return 0;
}}
"""
    src = '#include "cpu_cuda.h"\n' + ("" if routine else "typedef unsigned long long u64;\n") + code + main
    exe = _build(src)
    with tempfile.TemporaryDirectory() as d:
        inp, outp = Path(d) / "in", Path(d) / "out"
        with open(inp, "wb") as f:
            f.write(np.array([grid[0], block[0]], np.uint32).tobytes())
            for a in args:
                if isinstance(a, Shared):
                    words = a.words()
                else:
                    words = np.ascontiguousarray(a).reshape(-1).view(np.uint64) if isinstance(a, np.ndarray) \
                        else np.array([a]).astype(np.int64).view(np.uint64)
                f.write(np.array([words.size], np.int64).tobytes() + words.tobytes())
        subprocess.run([str(exe), str(inp), str(outp)], check=True, timeout=timeout, capture_output=True,
                       env=None if env is None else {**os.environ, **env})
        back = np.fromfile(outp, np.uint64)
    at = 0
    for a in args:
        if isinstance(a, np.ndarray):
            n = max(1, a.size)
            if a.size and a.flags.writeable:     # (a read-only one, a constant's words, is only read)
                a.reshape(-1).view(np.uint64)[:] = back[at:at + a.size]
            at += n


def routine_launch(launch) -> None:
    """A ``fake_cupy.ON_LAUNCH`` effect: a GPU-tier kernel that ``cuda_runtime.GpuRoutine.run``
    launches (``star_routine``) runs on the CPU with the launch's own arguments, which it
    writes back (tables, vector results, the status block, output records), so the host side
    of a call (errors, output, steps, reruns) is tested whole without a GPU. The Ctrl-C flag
    and the output's words after it (a host address; GpuRoutine.kernel_args puts it 8th from
    the end) and the output records where they are page-locked (an address, 6th from the end)
    are the host's memory, shared with the kernel's CPU run while it runs (Shared). Where
    they are other host memory (a flag made before the test put Shared.alloc in place), the
    kernel gets a zero flag of its own (no drain, no Ctrl-C: a full buffer launches again) and
    its records are copied to the host's after the run."""
    if launch.kernel != "star_routine":
        return
    args = list(launch.args)
    copy_back = None
    flag_at, ob_at = int(args[-8]), args[-6]
    if isinstance(ob_at, np.integer) and Shared.holds(flag_at) and Shared.holds(int(ob_at)):
        args[-8], args[-6] = Shared.at(flag_at), Shared.at(int(ob_at))
    else:
        args[-8] = np.zeros(OUT_ACK + 1, np.int64)
        if isinstance(ob_at, np.integer):
            args[-6] = np.zeros(int(args[-5]), np.int64)
            copy_back = (int(ob_at), args[-6])
    env = None
    if "\n#define RANKS 1\n" in launch.code:     # a rank's kernel: its mailbox (before intr), shared
        args[-9] = Shared.at(int(args[-9]))
        env = {"STARVM_EMU_RK": ",".join(re.search(rf"#define {name} (\d+)LL\n", launch.code).group(1)
                                         for name in ("RK_RANK", "RK_SIZE", "RK_ALIGN"))}
    run_launch(launch.code, launch.kernel, launch.grid, launch.block, tuple(args), routine=True, env=env)
    if copy_back is not None:
        address, records = copy_back
        ctypes.memmove(address, records.ctypes.data, records.nbytes)


class Shared:
    """Page-locked host memory as the emulated device has it: a file in /dev/shm that the host
    maps and a kernel's CPU run maps too (MAP_SHARED), so the kernel's posts to a rank's mailbox
    (targets/cuda/ranks.py) reach the host's server thread while the kernel runs."""
    made: dict = {}       # address -> Shared

    def __init__(self, path: str, size: int, mem, offset: int = 0):
        self.path, self.size, self.mem, self.offset = path, size, mem, offset

    @classmethod
    def alloc(cls, size: int):
        import atexit
        import mmap
        fd, path = tempfile.mkstemp(prefix="starvm-pinned-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
        try:
            os.ftruncate(fd, max(size, 8))
            mem = mmap.mmap(fd, max(size, 8))
        finally:
            os.close(fd)
        atexit.register(lambda: os.path.exists(path) and os.unlink(path))
        shared = cls(path, size, mem)
        cls.made[np.frombuffer(mem, np.uint8).ctypes.data] = shared
        return mem

    @classmethod
    def holds(cls, address: int) -> bool:
        return any(start <= address < start + shared.size for start, shared in cls.made.items())

    @classmethod
    def at(cls, address: int) -> "Shared":
        for start, shared in cls.made.items():
            if start <= address < start + shared.size:
                return cls(shared.path, shared.size, shared.mem, address - start)
        raise AssertionError(f"the address {address:#x} is no page-locked memory of this process "
                             "(a test's stand-in for CuPy must allocate it with Shared.alloc)")

    def words(self) -> np.ndarray:
        raw = self.path.encode()
        return np.concatenate([np.array([len(raw), self.offset], np.uint64),
                               np.frombuffer(raw + b"\0" * (-len(raw) % 8), np.uint64)])


class _DevicePointer:
    """What GpuRoutine uses of a CuPy array's ``.data`` (a device pointer), on the stand-in."""

    def __init__(self, arr):
        self.arr = arr

    def copy_from_device_async(self, src, size, stream=None):
        np.asarray(self.arr).view(np.uint8)[:size] = np.asarray(src.arr).view(np.uint8)[:size]


def device_copies(monkeypatch) -> None:
    """The stand-in's arrays with what GpuRoutine uses of CuPy's beyond NumPy: ``.data`` as a
    device pointer (its asynchronous copy) and ``.get(out=...)`` into a host array."""
    from . import fake_cupy
    monkeypatch.setattr(fake_cupy.ndarray, "data", property(lambda self: _DevicePointer(self)), raising=False)
    plain_get = fake_cupy.ndarray.get

    def get(self, stream=None, order="C", out=None, blocking=True):
        if out is None:
            return plain_get(self)
        out[...] = np.asarray(self)
        return out
    monkeypatch.setattr(fake_cupy.ndarray, "get", get)


@contextlib.contextmanager
def emulated_device(monkeypatch):
    """Machine(backend="cupy") on the stand-in for CuPy (fake_cupy.py) with every GPU-tier launch
    run on the CPU (routine_launch) on a grid of one 'SM': what a user sees of whole runs
    (results, output, steps, errors) without a GPU. Yields the fake module."""
    from starvm.jit import cuda_runtime
    from . import fake_cupy
    require()
    with fake_cupy_installed(monkeypatch, "starvm.backends.cupy_backend") as (cp, _backend):
        device_copies(monkeypatch)
        monkeypatch.setattr(cuda_runtime, "_SMS", [1])       # a grid kernel: a few CPU threads
        cp.cuda.alloc_pinned_memory = Shared.alloc          # what a kernel's CPU run can map too
        fake_cupy.ON_LAUNCH.append(routine_launch)
        yield cp
