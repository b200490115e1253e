"""Every CUDA source of the project, for NVRTC to compile in CI (tests/unit/test_cuda_sources.py).

``cuda_corpus()`` is the list; each *collector* registered with ``@collector`` adds its
sources. Today: the CuPy backend's kernels, the hand-written native kernels (the modules
``starvm/native/shared/cuda_text.py`` composes from the package's .cu files: no CuPy, no GPU),
and the kernel ``cupy_forall`` generates for every fusable `parallel for` of the Star files in
``STAR_DIRS`` and of the bodies of tests/unit/test_forall.py. New generated or hand-written
CUDA code (e.g. a compiled tier) adds a collector here, and from then on CI compiles it.
"""
from __future__ import annotations

import ast
import io
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable, Iterable

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent

# Star files whose `parallel for` loops are compiled (a folder: its *.star files)
STAR_DIRS = [ROOT / "stdlib", ROOT / "programs", ROOT / "tests" / "star", HERE / "loops"]
# Python files holding a dict BODIES of Star sources (name -> text) to compile as well
BODY_FILES = [ROOT / "tests" / "unit" / "test_forall.py"]

# The template kernels of the native search modules ("match", "extreme": native/shared/cuda_search.py),
# instantiated as its instances() does: <K, batch, words per thread, block> for a few field
# widths and launch shapes.
SEARCH_INSTANCES = [f"{kind}<{k}, {b}{extra}, {wpt}, {block}>"
                    for k, b, wpt, block in ((1, 8, 1, 256), (7, 8, 1, 256), (32, 8, 2, 128), (64, 0, 4, 1024))
                    for kind, extra in (("match_rows", ""), ("extreme_local", ", false"), ("extreme_local", ", true"))]


@dataclass(frozen=True)
class CudaSource:
    name: str                         # a test id: "where:what"
    code: str
    kernels: tuple[str, ...]          # kernels (extern "C" names or name expressions) the PTX must hold
    options: tuple[str, ...] = ()
    name_expressions: tuple[str, ...] = ()


COLLECTORS: list[Callable[[], Iterable[CudaSource]]] = []


def collector(fn: Callable[[], Iterable[CudaSource]]):
    """Register a function that yields CudaSource items."""
    COLLECTORS.append(fn)
    return fn


@lru_cache(maxsize=None)
def cuda_corpus() -> tuple[CudaSource, ...]:
    return tuple(s for c in COLLECTORS for s in c())


_EXTERN = re.compile(r'extern\s+"C"\s+__global__\s+void\s+(\w+)\s*\(')


def extern_kernels(code: str) -> tuple[str, ...]:
    return tuple(_EXTERN.findall(code))


# ---------------------------------------------------------------- the CuPy backend
@collector
def backend_sources():
    from starvm.backends import cuda_backend_kernels as k
    yield CudaSource("backend:cupy_backend", k.SOURCE, k.NAMES)


# ---------------------------------------------------------------- native kernels
def module_sources(path: Path) -> list[str]:
    """The module-level string constants of a Python file that hold a __global__ function."""
    tree = ast.parse(path.read_text(), str(path))
    out = []
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Constant) \
                and isinstance(node.value.value, str) and "__global__" in node.value.value:
            out.append(node.value.value)
    return out


def requested_kernel_names(path: Path) -> set[str]:
    """Kernel names the Python code asks CuPy for: string literals passed to get_function and
    the string literals of tuples/lists in the functions that call get_function."""
    tree = ast.parse(path.read_text(), str(path))
    names: set[str] = set()
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef):
            continue
        calls = [c for c in ast.walk(fn) if isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute)
                 and c.func.attr == "get_function"]
        if not calls:
            continue
        for c in calls:
            if c.args and isinstance(c.args[0], ast.Constant) and isinstance(c.args[0].value, str):
                names.add(c.args[0].value)
        for seq in ast.walk(fn):
            if isinstance(seq, (ast.Tuple, ast.List)) and seq.elts and all(
                    isinstance(e, ast.Constant) and isinstance(e.value, str) and e.value.isidentifier()
                    for e in seq.elts):
                names.update(e.value for e in seq.elts)
    return names


def native_files() -> list[Path]:
    """The CUDA text of the native kernels: every .cu and .cuh file under starvm/native/."""
    root = ROOT / "starvm" / "native"
    return sorted([*root.rglob("*.cu"), *root.rglob("*.cuh")])


def native_module_files() -> set[Path]:
    """The files the native CUDA modules are composed of (cuda_text.MODULES)."""
    from starvm.native.shared import cuda_text
    return {ROOT / "starvm" / "native" / f for files in cuda_text.MODULES.values() for f in files}


def subscripted_kernel_names(path: Path) -> set[str]:
    """Row kernels a Python file takes by name from its module's dict: ``kernels()["rows_..."]``
    or ``fns["rows_..."]``."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) \
                and isinstance(node.slice.value, str) and node.slice.value.startswith("rows_"):
            v = node.value
            if (isinstance(v, ast.Name) and v.id == "fns") or (isinstance(v, ast.Call) and getattr(
                    v.func, "attr", getattr(v.func, "id", None)) == "kernels"):
                names.add(node.slice.value)
    return names


@collector
def native_sources():
    from starvm.native.shared import cuda_text
    for module in cuda_text.MODULES:
        code = cuda_text.source(module)
        exprs = tuple(e for e in SEARCH_INSTANCES if e.split("<")[0] in code) if module in cuda_text.TEMPLATED else ()
        opts = cuda_text.TEMPLATE_OPTIONS if exprs else ()
        yield CudaSource(f"native:{module}", code, extern_kernels(code) + exprs, opts, exprs)


# ---------------------------------------------------------------- generated `parallel for` kernels
@dataclass(frozen=True)
class Loop:
    where: str            # file:line of the loop
    template: str | None  # the kernel with R left open; None: not translatable (ForallKernel runs it)


def _recording_backend():
    from starvm.backends.numpy_backend import NumpyBackend

    class Recorder(NumpyBackend):
        """The NumPy backend, noting every fused loop codegen hands it."""
        def __init__(self):
            super().__init__()
            self.loops = []

        def forall_kernel(self, loop, counts, symbols, timing):
            self.loops.append((loop, symbols))
            return super().forall_kernel(loop, counts, symbols, timing)
    return Recorder()


def star_texts() -> list[tuple[str, str]]:
    """(file name, Star text) of every file in STAR_DIRS (not the cases that must fail to load)
    and every body in BODY_FILES."""
    out = []
    for folder in STAR_DIRS:
        for p in sorted(folder.glob("*.star")):
            if not p.with_suffix(".error").exists():
                out.append((str(p.relative_to(ROOT)), p.read_text()))
    for path in BODY_FILES:
        tree = ast.parse(path.read_text())
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "BODIES" for t in node.targets):
                for name, text in ast.literal_eval(node.value).items():
                    out.append((f"{path.relative_to(ROOT)}:{name}", text))
    return out


@lru_cache(maxsize=None)
def forall_loops() -> tuple[Loop, ...]:
    """Every fusable loop of star_texts(), with its generated kernel (one per distinct text)."""
    import starvm
    from starvm.targets.cuda.forall import forall_template
    loops, seen = [], set()
    for name, text in star_texts():
        rec = _recording_backend()
        # the interpreter's code generation hands the loops over; --jit off: the compiled tier's
        # install rendered every routine's Numba code too (13.5 -> 5.4 s here, the same loops)
        starvm.Machine(backend=rec, out=io.StringIO(), fuse=True, jit="off").load(text, name.split(":")[0])
        for loop, symbols in rec.loops:
            template = forall_template(loop, symbols)
            where = f"{name}:{loop.loc.line}" if loop.loc else name
            if template is not None and template in seen:
                continue
            seen.add(template)
            loops.append(Loop(where, template))
    return tuple(loops)


@collector
def forall_sources():
    from starvm.targets.cuda.forall import KERNEL_NAME, kernel_source
    for loop in forall_loops():
        if loop.template is not None:
            yield CudaSource(f"forall:{loop.where}", kernel_source(loop.template, 1), (KERNEL_NAME,))


# ---------------------------------------------------------------- the GPU tier: one kernel per routine
def renamed(text: str) -> str:
    """A library file with every routine under a user's name (U_<name>), so no native kernel
    applies and the GPU tier compiles the Star bodies."""
    names = re.findall(r"(?im)^\s*(?:proc|procedure|function)\s+([A-Za-z_][\w-]*)", text)
    for old in names:
        text = re.sub(rf"(?i)\b{re.escape(old)}\b(?![-\w])", f"U_{old.replace('-', '_')}", text)
    return text


def routine_bodies(text: str, name: str, parts: bool = False) -> dict:
    """pyname -> (info, checked IR body) of every routine of a Star text; ``parts``: and of the
    parts of its main block (ir/main_parts.py: info a MainPart), as the GPU tier gets them."""
    import starvm
    from starvm.ir.main_parts import MainPart
    m = starvm.Machine(backend="numpy", jit="on", out=io.StringIO(), native=False)
    bodies = {}

    def install(lowered, main, main_parts=None):
        # the bodies the tiers receive, nothing compiled (the CPU tier's install rendered every
        # routine with Numba's renderer: 50 of compiled_routines()' 85 s on a loaded host)
        bodies.update({info.pyname: (info, body) for info, body in lowered.routines})
        if parts:
            bodies.update({p: (MainPart(p, body.loc), body) for p, body in (main_parts or {}).items()})
        return main
    m.jit.install = install
    m.load(text, name)
    return bodies


@lru_cache(maxsize=None)
def compiled_routines() -> tuple:
    """(where, plan or the reason it is not compiled) for every routine of the library (under
    user names) and of the listings in programs/."""
    from starvm.targets.cuda.routine import Unsupported, render
    out = []
    texts = [(f"stdlib/{p.name}", renamed(p.read_text())) for p in sorted((ROOT / "stdlib").glob("*.star"))]
    texts += [(f"programs/{p.name}", p.read_text()) for p in sorted((ROOT / "programs").glob("*.star"))]
    texts += [(f"tests/gpu_sources/routines/{p.name}", p.read_text())          # the GPU tier's own cases
              for p in sorted((HERE / "routines").glob("*.star"))]
    for name, text in texts:
        try:
            bodies = routine_bodies(text, name, parts=name.startswith("programs/"))
        except Exception as e:  # noqa: BLE001 - a program that needs its graph input to load
            out.append((name, f"not loaded: {type(e).__name__}"))
            continue
        for pyname, (info, _body) in sorted(bodies.items()):
            if getattr(info, "part", False):      # a program's main block, in parts (its lines)
                out.append((f"{name}:main block, line {info.loc.line}", _render(render, Unsupported, bodies, pyname)))
                continue
            if info is None or not (info.node.loc and info.node.loc.filename == name):
                continue      # the file's own routines (those of the files it loads have their turn)
            if name.startswith("stdlib/") and not info.display.startswith("U_"):
                continue      # the library's own, loaded for a routine it calls: its U_ twin has its turn
            out.append((f"{name}:{info.display}", _render(render, Unsupported, bodies, pyname)))
    return tuple(out)


def _render(render, unsupported, bodies, pyname):
    try:
        return render(bodies, pyname)
    except unsupported as e:
        return str(e)


LARGE_KERNEL = 60_000    # characters of a GPU-tier kernel from which NVRTC compiles it with -G


@collector
def gpu_tier_sources():
    from starvm.targets.cuda.routine import KERNEL_NAME, instance
    seen = set()
    for where, plan in compiled_routines():
        if isinstance(plan, str) or plan.source in seen:
            continue
        seen.add(plan.source)
        # R, KW, RP are array sizes (the text is the same for every shape); three different
        # ones, so that a slice used where a word is held (V<R> for V<KW>) does not compile.
        # A kernel of many inlined routines (BORUVKA's: 126 K characters) compiles without
        # NVVM's optimisation (-G: 9 s instead of 38 s for BORUVKA_ROUNDS' here), which is
        # what this checks: that it compiles (the GPU run compiles it optimised)
        opts = ("-std=c++14",) + (("-G",) if len(plan.source) > LARGE_KERNEL else ())
        yield CudaSource(f"compiled:{where}", instance(plan, 2, 4, 8, 512), (KERNEL_NAME,), opts)
        if plan.has_pfor:     # parallel for on groups of 16 lanes, 5 words a lane, 2 own columns kept
            yield CudaSource(f"compiled16:{where}", instance(plan, 2, 4, 5, 512, LANES=16), (KERNEL_NAME,), opts)
