"""The STAR-machine: loads Star code, runs it on a backend, counts its steps."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from .. import config, native, stdlib
from ..backends import Backend, get_backend
from ..check import Checker, Environment
from ..check.symbols import RoutineInfo
from ..errors import Frame, Source, StarError, StarInterrupt, StarRuntimeError, StarTypeError, at_the_users_call
from ..frontend.deep import DEEP_PROGRAM, deep
from ..frontend.integers import any_length
from ..frontend.parser import fold, parse
from ..frontend.program import program_ast
from ..graphs.star import make_graph_helper, program_default, program_reading
from ..ir.lower import lower_unit
from ..jit import make_tier
from ..native.registry import native_for
from ..execution.context import ExecutionContext
from ..ir.ops import BASE_OPS, OP_TITLES
from .routine_profile import RoutineProfile
from ..types import T
from ..execution import limits
from . import params as params_
from ..targets.python.codegen import CodeGen, GeneratedUnit
from .counters import StepCounter, steps_between
from .globals_view import Globals
from .ops import make_helpers, make_ops, timed_ops
from .tracemap import shortened, star_frames
from ..execution.values import Bits, Table, host_array

# The only Python builtins generated code can reach.
_SAFE_BUILTINS = {"range": range, "str": str, "True": True, "False": False, "None": None}


def _context_attribute(name: str, doc: str) -> property:
    """A Machine attribute kept in its ExecutionContext (one value for both)."""
    return property(lambda m: getattr(m.context, name), lambda m, value: setattr(m.context, name, value), doc=doc)


class Machine:
    """A STAR-machine with its own backend, variables, routines and step counters."""

    def __init__(self, backend: str | None = None, out=None, fuse: bool | None = None,
                 max_steps: int | None = None, max_depth: int | None = None,
                 native: bool | None = None, graph=None, directed: bool | None = None,
                 jit: str | bool | None = None, comm=None, params=None):
        # a backend name, or a Backend object (tests build an auto backend with small thresholds)
        self._rank_lines = None
        if comm is not None:    # one rank of a distributed machine (starvm/distributed): its rows of every table
            from ..distributed import machine_backend     # (a world of one rank: the plain machine)
            self.backend, self._rank_lines = machine_backend(backend, comm)
        else:
            self.backend = backend if isinstance(backend, Backend) else _backend_named(config.backend_name(backend))
        self.counts = [0] * len(BASE_OPS)
        self.ns: dict[str, Any] = {"__builtins__": _SAFE_BUILTINS}
        # what the compiled tier gets of this machine (execution/context.py); max_steps,
        # max_depth, fuse, native and out below are its attributes
        self.context = ExecutionContext(
            self.backend, self.ns, self.counts,
            # limits.py: loop iterations + routine calls per run (None: unlimited, no check generated)
            max_steps=limits.max_steps(max_steps),
            max_depth=limits.max_depth(max_depth),    # nested Star calls
            # run `parallel for` loops as one array operation (else iteration by iteration)
            fuse=config.fuse() if fuse is None else fuse,
            # let a backend's native kernel replace a standard-library routine (starvm/native)
            native=config.use_natives() if native is None else native,
            out=out, prints=comm is None or getattr(self.backend, "rank", 0) == 0)     # writeln: once, on rank 0
        self.native_timing = [0, 0.0]    # native kernel calls, seconds in them
        self.times = [0.0] * len(BASE_OPS)
        self.fused_timing = [0, 0.0]     # fused `parallel for` loops run, seconds in them
        self.env = Environment(library=stdlib.lookup)
        self.units: dict[str, GeneratedUnit] = {}
        self.context.frames_of = lambda tb: star_frames(tb, self.units, limit=1 << 62)
        self.lowered: dict[str, object] = {}   # the IR of each unit (starvm/costs: slices or words)
        self._ops = make_ops(self.backend, self.counts)
        self.ns.update(self._ops)
        self.ns.update(make_helpers(self.backend, self.context.write))
        # graph input (starvm/graphs/star.py): the graph the user gave (a starvm.graphs.Graph)
        # and the bundled one the program loaded last names with GRAPH_DEFAULT('...')
        self.graph = graph
        self.graph_default: str | None = None
        # how to read it (graphs/star.py): the user's choice (True directed, False undirected,
        # None: the program's GRAPH_READING, else as given) and the program's
        self.graph_directed: bool | None = directed
        self.graph_reading: bool | None = None
        self.ns["_graph"] = make_graph_helper(self)
        # program parameters (params.py): values for the constants of the programs loaded here
        self.params = params_.normalise(params)
        self.ns["_param"] = lambda name, declared: params_.value_of(self.params, name, declared)
        self.ns["_depth"] = [0, self.max_depth]     # Star calls in progress, the limit (codegen.py)
        self.ns["_too_deep"] = self.context.too_deep
        self._profile = False
        self.routine_profile = RoutineProfile(self.counts)   # --profile's per-routine table
        # the compiled tier (starvm/jit): auto | on | off; Numba is imported only to compile
        self.jit = make_tier(self.context, config.jit_mode(jit))

    # the machine's settings that code running for it reads: its context's attributes
    max_steps = _context_attribute("max_steps", "loop iterations + routine calls per run (None: unlimited)")
    max_depth = _context_attribute("max_depth", "nested Star calls allowed")
    fuse = _context_attribute("fuse", "run `parallel for` loops as one array operation")
    native = _context_attribute("native", "let native kernels replace standard-library routines")
    out = _context_attribute("out", "the stream writeln writes to (None: sys.stdout)")

    # ------------------------------------------------------------------ profiling
    @property
    def profile(self) -> bool:
        return self._profile

    @profile.setter
    def profile(self, on: bool) -> None:
        """Time every base operation (slower); counting is always on."""
        self._profile = bool(on)
        self.ns.update(timed_ops(self._ops, self.times, self.backend.synchronize) if on else self._ops)
        if on:
            self.routine_profile.install(self.ns, self.env.routines.values())
        else:
            self.routine_profile.uninstall(self.ns)

    @property
    def stats(self) -> dict[str, int]:
        """Steps executed so far, by operation kind (only kinds that ran)."""
        return {op.name: c for op, c in zip(BASE_OPS, self.counts) if c}

    def reset_stats(self) -> None:
        self.counts[:] = [0] * len(self.counts)
        self.times[:] = [0.0] * len(self.times)
        self.fused_timing[:] = [0, 0.0]
        self.native_timing[:] = [0, 0.0]
        self.routine_profile.reset()

    def profile_report(self) -> str:
        """The step counts (and, when profiled, times) in the shape of the paper's Table 1."""
        rows = [(OP_TITLES[op], c, t) for op, c, t in zip(BASE_OPS, self.counts, self.times) if c]
        head = f"{'operation':<22}{'count':>12}"
        if self._profile:
            head += f"{'total, s':>12}{'mean, us':>11}"
        lines = [f"STAR-machine steps ({self.backend.name} backend)", head, "-" * len(head)]
        for title, c, t in rows:
            line = f"{title:<22}{c:>12}"
            if self._profile:
                line += f"{t:>12.4f}{t / c * 1e6:>11.2f}"
            lines.append(line)
        total = sum(self.counts)
        line = f"{'total':<22}{total:>12}"
        if self._profile:
            line += f"{sum(self.times):>12.4f}"
        lines += ["-" * len(head), line]
        calls, secs = self.native_timing
        if calls:
            timed = f" in {secs:.4f} s" if self._profile else ""      # kernels are waited for only when profiled
            lines.append(f"{calls} native kernel call(s) replaced standard-library Star bodies{timed}; "
                         "the steps above include the steps those bodies take")
        loops, secs = self.fused_timing
        if loops:
            lines.append(f"{loops} fused parallel-for loop(s) ran as whole-loop operations in {secs:.4f} s; "
                         "their steps are counted above but timed only here")
        distributed = getattr(self.backend, "profile_lines", None) or self._rank_lines   # the ranks (starvm/distributed)
        if distributed is not None:
            lines += distributed()
        if self._profile:
            lines += self.routine_profile.report()
            lines += self.jit.report()
        return "\n".join(lines)

    # ------------------------------------------------------------------ loading
    def compile(self, text: str, filename: str = "<string>") -> GeneratedUnit:
        """Parse, check, lower and generate code for a program text; define its routines
        and globals in this machine. Returns the generated unit (its ``main_`` not run).
        ``text`` may be a ``starvm.Program`` (``starvm.compile``): it is not parsed again."""
        program, filename = program_ast(text, filename)
        if program.depth > DEEP_PROGRAM:   # every pass recurses per level: give them room (frontend/deep.py)
            return deep(self._compile, text, program, filename)
        return self._compile(text, program, filename)

    def _compile(self, text, program, filename: str) -> GeneratedUnit:
        same_everywhere = getattr(self.backend, "same_program", None)   # distributed: one text on all ranks
        if same_everywhere is not None:
            same_everywhere(getattr(text, "source", text), filename)
        env_backup = (dict(self.env.globals), dict(self.env.routines))
        try:
            unit = Checker(self.env).check_program(program)
            params_.check(self.params, unit.globals, self.env.globals.values(), unit.program.main is not None)
            graph_default = program_default(unit.program)
            graph_reading = program_reading(unit.program)
            gen = CodeGen(self.backend, filename, self.counts, self.fuse, self.fused_timing,
                          step_limit=self.max_steps is not None,
                          progress=self._progress_on, debug=self._debug_hooks).unit(lowered := lower_unit(unit))
        except BaseException:
            self.env.globals, self.env.routines = env_backup   # a failed load changes nothing
            raise
        code = compile(gen.source, gen.filename, "exec")
        # The generated functions share self.ns as their globals: roll it back in place.
        ns_backup = dict(self.ns)
        main_backup = getattr(self, "_main", None)
        default_backup = self.graph_default, self.graph_reading
        self.units[gen.filename] = gen
        self.lowered[gen.filename] = lowered
        try:
            self.ns.update(gen.constants)
            exec(code, self.ns)
            self._main = self.ns.pop("main_", None)
            self._install_native(unit.routines)
            if not self._debug_hooks:   # the debugger steps through interpreted code only
                self._main = self.jit.install(lowered, self._main, gen.main_parts)
            if self._profile:
                self.routine_profile.install(self.ns, unit.routines)
            if graph_default is not None:   # before the globals: table(GRAPH_N, GRAPH_N)
                self.graph_default = graph_default
            if graph_reading is not None:   # GRAPH_M depends on it
                self.graph_reading = graph_reading
            self._guard(self.ns["init_"])
        except BaseException:   # e.g. a global table(-1, 2): the load fails, nothing changes
            self.env.globals, self.env.routines = env_backup
            self.ns.clear()
            self.ns.update(ns_backup)
            self._main = main_backup
            self.graph_default, self.graph_reading = default_backup
            self.units.pop(gen.filename, None)
            self.lowered.pop(gen.filename, None)
            raise
        return gen

    @property
    def _native_meter(self) -> native.Meter:
        """Where native kernels report their calls, time and the steps of the Star bodies they
        replace (starvm/native/steps.py): this machine's counters and --max-steps ticker."""
        if getattr(self, "_meter", None) is None:
            self._meter = native.Meter(self.native_timing, self.counts, lambda: self.ns.get("_tick"),
                                       timed=lambda: self._profile)
        return self._meter

    def _install_native(self, routines) -> None:
        """The native kernels that replace library routines here (native/registry.py decides)."""
        for info in routines:
            found = native_for(info.name, self.backend, origin=info.node.loc.filename, enabled=self.native)
            if found is not None:
                self.ns[info.pyname] = found.make(self.ns[info.pyname], self.backend, self._native_meter)

    def load(self, text: str, filename: str = "<string>") -> None:
        """Declare the routines and globals of a Star text; a main block, if any, is not run."""
        self.compile(text, filename)

    def load_file(self, path: str | Path) -> None:
        path = Path(path)
        self.load(path.read_text(), str(path))

    def run(self, text: str, filename: str = "<string>") -> None:
        """Load a program and run its main block."""
        self.compile(text, filename)
        if self._main is None:
            raise StarTypeError("the program has no main block (begin ... end.) to run",
                                _first_loc(text, filename) if isinstance(text, str) else None)
        self._guard(self._main)

    def run_file(self, path: str | Path) -> None:
        path = Path(path)
        self.run(path.read_text(), str(path))

    def load_program(self, program) -> None:
        """Declare the routines and globals of a ``starvm.Program`` (no parsing); its main
        block is not run. ``run(program)`` also runs it."""
        self.compile(program)

    @property
    def has_main(self) -> bool:
        """Whether the text loaded last has a main block (``run_main()`` runs it)."""
        return getattr(self, "_main", None) is not None

    def run_main(self) -> None:
        """Run the main block of the text loaded last, again: set inputs through ``globals``,
        ``run_main()``, read the results, repeat."""
        if getattr(self, "_main", None) is None:
            raise StarTypeError("the text loaded last has no main block (begin ... end.) to run")
        self._guard(self._main)

    # ------------------------------------------------------------------ embedding (api.py; globals_view.py, counters.py)
    _progress_on = False    # progress bars on outer for loops (starvm/ui/progress.py enable())
    _debug_hooks = False    # starvm/debug: code compiled now calls _dbg() before each statement
    last_call_stats: dict[str, int] = {}    # the steps of the last call(), by operation kind
    call_shape: tuple[int, int] = (0, 0)    # the tallest and the widest table call() was given (starvm/costs)

    @property
    def globals(self) -> Globals:
        """The global variables as a mutable mapping: ``m.globals["x"]``, ``m.globals["x"] = 5``."""
        return Globals(self)

    def counting(self) -> StepCounter:
        """``with m.counting() as c: ...`` then ``c.stats``: the steps taken inside the block."""
        return StepCounter(self)

    def cost(self, model, rows: int | None = None, width: int | None = None):
        """The estimated time and energy of the steps so far on device models (starvm/costs,
        docs/costs.md): ``model`` a name ("gsi-gemini"), names joined by commas, a .toml path
        or a list. Per routine too where the run was profiled with ``routine_profile.by_kind``."""
        from ..costs import machine_cost
        return machine_cost(self, model, rows=rows, width=width)

    # ------------------------------------------------------------------ calling from Python
    def call(self, name: str, *args):
        """Call a Star routine (see ``_call``); afterwards ``last_call_stats`` holds the steps
        the call took, by operation kind (also when it failed)."""
        before = list(self.counts)
        shapes = [a.shape for a in args if isinstance(a, Table) or getattr(a, "ndim", 0) == 2]
        if shapes:
            self.call_shape = (max([self.call_shape[0]] + [s[0] for s in shapes]),
                               max([self.call_shape[1]] + [s[1] for s in shapes]))
        try:
            return self._call(name, *args)
        finally:
            self.last_call_stats = steps_between(before, self.counts)

    def _call(self, name: str, *args):
        """Call a Star procedure or function with Python values.

        Ints and bools pass as integer / boolean; tables, slices and words as the objects
        ``table()``, ``slice()`` and ``word()`` return (NumPy bool arrays are converted).
        `var` tables, slices and words are updated in place (a writable NumPy array passed for
        one gets the final value copied back). Returns a function's value; for a
        procedure with `var` integer or boolean parameters, the tuple of their final values.
        """
        info = self.env.routines.get(fold(name))
        if info is None:
            info = self._library_routine(fold(name), name)
        if len(args) != len(info.params):
            n = len(info.params)
            raise StarTypeError(f"'{info.display}' takes {n} argument{'s' if n != 1 else ''}, got {len(args)}")
        converted = [self._from_python(a, p, info) for a, p in zip(args, info.params)]
        result = self._guard(self.ns[info.pyname], *converted)
        outs = list(result) if isinstance(result, tuple) else ([result] if info.is_function else [])
        value = outs.pop(0) if info.is_function else None
        scalar_outs = []
        for p, orig, final in zip(info.out_params, [a for a, p in zip(args, info.params) if p in info.out_params], outs):
            if isinstance(orig, Bits) and isinstance(final, Bits):
                orig.v, orig.n = final.v, final.n
            elif isinstance(orig, np.ndarray) and isinstance(final, Bits):
                if orig.flags.writeable and orig.shape == (final.n,):
                    orig[...] = self.backend.to_bools(final.v, final.n)
            elif p.type in (T.INT, T.BOOL):
                scalar_outs.append(final)
        for orig, p, table in zip(args, info.params, converted):
            if p.by_ref and p.type is T.TABLE and isinstance(orig, np.ndarray) and orig.flags.writeable:
                orig[...] = table.to_numpy()
        if info.is_function:
            return self._to_python(value)
        return tuple(scalar_outs) if scalar_outs else None

    def _library_routine(self, name: str, written: str | None = None) -> RoutineInfo:
        path = stdlib.index().get(name)
        if path is None:   # named as the caller wrote it, not folded
            raise StarTypeError(f"unknown routine '{written or name}'")
        self.load(path.read_text(), f"stdlib/{path.name}")
        return self.env.routines[name]

    def _from_python(self, value, p, info):
        what = f"argument '{p.display}' of '{info.display}'"
        if p.type is T.TABLE:
            if isinstance(value, Table):
                if not self.backend.owns(value):
                    raise StarTypeError(f"{what}: the table lives on the {value.backend.name} backend")
                return value
            arr = host_array(value)
            if arr.ndim != 2:
                raise StarTypeError(f"{what} must be a table (a 2-D bool array)")
            return self.table(arr)
        if p.type.is_vector:
            if isinstance(value, Bits):
                return value if p.by_ref else Bits(value.v, value.n)
            arr = host_array(value)
            if arr.ndim != 1:
                raise StarTypeError(f"{what} must be a {p.type} (a 1-D bool array)")
            return self.slice(arr) if p.type is T.SLICE else self.word(arr)
        if p.type is T.BOOL:
            if not isinstance(value, (bool, np.bool_)):
                raise StarTypeError(f"{what} must be a boolean")
            return bool(value)
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
            raise StarTypeError(f"{what} must be an integer")
        return int(value)

    def _to_python(self, value):
        if isinstance(value, Bits) and not isinstance(value, BitVector):
            return BitVector(value.v, value.n, self.backend)
        return value

    # ------------------------------------------------------------------ values
    def table(self, data=None, *, rows: int | None = None, cols: int | None = None) -> Table:
        """A table from a 2-D bool array (rows × columns), or zero with the given size."""
        if data is None:
            if rows is None or cols is None:
                raise ValueError("table() needs an array or rows= and cols=")
            limits.check_table(self.backend, rows, cols)
            return self.backend.table(rows, cols)
        arr = host_array(data)
        if arr.ndim != 2:
            hint = ""
            if arr.ndim == 1 and arr.dtype != bool:
                hint = "; for numbers, one per row, use Machine.table_from_ints(values, width)"
            elif arr.ndim == 1:
                hint = "; for a slice use Machine.slice(bits), for a one-column table table(bits[:, None])"
            raise ValueError(f"a table needs a 2-D array, got {arr.ndim}-D{hint}")
        if arr.dtype != bool and arr.size and not ((arr == 0) | (arr == 1)).all():
            # an array of numbers (codes) is not bits: astype(bool) would turn 5 into 1
            bad = arr[(arr != 0) & (arr != 1)].flat[0]
            raise ValueError(f"a table takes bits (0 and 1, or a bool array), got the value {bad.item()!r}; "
                             "for numbers, one per row, use Machine.table_from_ints(values, width)")
        limits.check_table(self.backend, arr.shape[0], arr.shape[1])
        return self.backend.table(arr.shape[0], arr.shape[1], arr.astype(bool))

    def table_from_ints(self, values, width: int) -> Table:
        """A table of len(values) rows and ``width`` columns, row i holding values[i] as an
        unsigned binary number, column 1 the most significant bit (``Table.to_ints`` is the
        inverse). ``values``: integers in 0 .. 2^width - 1 (a NumPy or CuPy array or a list);
        the codes go straight into the packed columns (on the GPU where the table is)."""
        from ..backends.codes import check_codes
        if isinstance(width, bool) or not isinstance(width, (int, np.integer)) or width < 0:
            raise ValueError(f"width must be an integer >= 0, got {width!r}")
        if not hasattr(values, "__cuda_array_interface__"):
            values = np.asarray(values)
            if values.size == 0 and values.dtype.kind == "f":
                values = values.astype(np.int64)
        check_codes(values, int(width))
        limits.check_table(self.backend, int(values.size), int(width))
        t = self.backend.table(int(values.size), int(width))
        self.backend.table_set_ints(t, values)
        return t

    def slice(self, bits) -> "BitVector":
        arr = host_array(bits, dtype=bool).ravel()
        return BitVector(self.backend.from_bools(arr), arr.size, self.backend)

    word = slice

    def global_(self, name: str):
        """The value of a global variable."""
        sym = self.env.globals.get(fold(name))
        if sym is None:
            raise StarTypeError(f"no global variable '{name}'")
        return self._to_python(self.ns[sym.pyname])

    # ------------------------------------------------------------------ running safely
    def _guard(self, fn, *args):
        """Run generated code; turn what goes wrong into StarErrors with Star positions."""
        if self.max_steps is not None:
            self.ns["_tick"] = limits.ticker(self.max_steps)
        self.ns["_depth"][1] = self.max_depth
        try:
            with limits.RecursionLimit(self.max_depth), any_length():   # messages may show huge integers
                return fn(*args)
        except StarError as e:
            if e.__traceback__ is not None and not e.stack:
                if getattr(e, "at_the_call", None) is not None:   # too deep: the callee never began
                    frames = star_frames(e.__traceback__, self.units, limit=1 << 62)
                    frames = shortened(frames[:len(frames) - e.at_the_call] if len(frames) > 1 else frames, 20)
                    e.loc = frames[-1].loc
                else:
                    frames = star_frames(e.__traceback__, self.units)
                if getattr(e, "jit_frames", None):   # raised by compiled code (starvm/jit/errors.py)
                    # the whole stack shortened as the interpreter's is: its interpreted callers
                    # and the compiled part together
                    outer = star_frames(e.__traceback__, self.units, limit=1 << 62)
                    if getattr(e, "continues_caller", False) and outer:   # a main block's part (GPU tier)
                        outer = outer[:-1]
                    whole = outer + e.jit_frames
                    e.loc, e.stack = e.jit_frames[-1].loc, shortened(whole, 20 if getattr(e, "deep", False) else 200)
                elif frames:
                    if e.loc is None:
                        e.loc = frames[-1].loc
                    else:   # raised with its own position (a fused loop knows the failing node)
                        frames[-1] = Frame(frames[-1].routine, e.loc)
                    e.stack = frames
                at_the_users_call(e)
            raise e.with_traceback(None) from None
        except RecursionError as e:
            raise self._located(StarRuntimeError(f"recursion too deep (more than about {self.max_depth} nested Star calls)",
                                                 hint="raise the limit with STARVM_MAX_DEPTH or Machine(max_depth=N)"),
                                e.__traceback__, stack_limit=20) from None
        except KeyboardInterrupt as e:
            raise self._located(StarInterrupt("interrupted"), e.__traceback__) from None
        except MemoryError as e:
            raise self._located(StarRuntimeError("out of memory"), e.__traceback__) from None

    def _located(self, err: StarError, tb, stack_limit: int = 200) -> StarError:
        frames = star_frames(tb, self.units, limit=stack_limit)
        if frames:
            err.loc, err.stack = frames[-1].loc, frames
        return err


class BitVector(Bits):
    """A slice or word handed to Python: knows its backend, converts to NumPy."""
    __slots__ = ("backend",)

    def __init__(self, v, n: int, backend):
        super().__init__(v, n)
        self.backend = backend

    def to_numpy(self) -> np.ndarray:
        return self.backend.to_bools(self.v, self.n)

    def __array__(self, dtype=None, copy=None):
        a = self.to_numpy()
        return a.astype(dtype) if dtype is not None else a

    def __len__(self) -> int:
        return self.n

    def __str__(self) -> str:
        return "".join("1" if b else "0" for b in self.to_numpy())

    def __repr__(self) -> str:
        return f"BitVector('{self}')"

    def __eq__(self, other) -> bool:
        if isinstance(other, Bits):
            return self.n == other.n and self.backend.equal(self.v, other.v)
        return NotImplemented

    __hash__ = None


def _first_loc(text: str, filename: str):
    from ..errors import Loc
    return Loc(Source(filename, text), 1, 1)


def _backend_named(name: str) -> Backend:
    if name.startswith("mpi:"):       # the distributed backend on one rank (starvm/distributed)
        from ..distributed import named_backend
        return named_backend(name)
    return get_backend(name)
