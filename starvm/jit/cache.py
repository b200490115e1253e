"""The on-disk cache of compiled modules.

A generated module is written once to ``<cache dir>/star_<key>.py``, where the key hashes
the module's text, the backend, and the versions of starvm, Numba and Python; it is then
imported from there, so Numba's ``cache=True`` keeps the machine code beside it
(``__pycache__``) and a later process loads it instead of compiling. Numba checks each
cached entry against the file's time stamp, so an existing file is never rewritten.
The module runs with its calls between generated functions linked (jit/linking.py:
each function compiled once, its callees reached through cells the JIT engine resolves), and
a function loaded from the cache has its callees loaded and their cells filled before it runs.

``load_overload`` puts a routine's cached machine code in its dispatcher without Numba's
start-up: Numba's own cache load first refreshes its typing and target registries (imports
most of numba.np and numba.cpython: 0.4 s, the first load in a process), which rebuilding a
compiled function from the cache does not use. It touches Numba internals, so it runs only on
the Numba versions it was checked on and gives way to Numba's load (``Dispatcher.compile``)
on any failure.

The cache heals itself: an entry's ``.py`` carries the SHA-256 of its code in its first line
and is run only when that and the code it should hold agree (else it is written anew, and
Numba's entries beside it go stale with it); an entry of Numba's that does not load (a
corrupt ``.nbi`` or ``.nbc``) is deleted and compiled again; a cache folder that cannot be
written is replaced by one under the temporary folder. Each says so once on stderr.
"""
from __future__ import annotations

import hashlib
import os
import pickle
import re
import sys
import tempfile
import threading
from types import ModuleType
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path

from ..config import jit_cache_dir, user_tag
from . import compile_cost, compile_parallel, linking
from .linking import install as install_links, link_source


def key(source: str, backend: str) -> str:
    salt = (f"starvm {_version()}|numba {_numba_version()}|python {sys.version_info[:3]}|{backend}|"
            f"kernels {_kernels_hash()}|linked calls {linking.VERSION if linking.enabled else 0}\n")
    return hashlib.sha256((salt + source).encode()).hexdigest()[:32]


@lru_cache(maxsize=None)
def _numba_version() -> str:
    """Numba's version without importing Numba (a run on --jit auto asks the cache whether a
    routine is there before it decides to import Numba at all)."""
    if "numba" in sys.modules:
        return sys.modules["numba"].__version__
    from importlib import metadata
    try:
        return metadata.version("numba")
    except metadata.PackageNotFoundError:
        return "none"


# ------------------------------------------------------------------ the folder and its entries
_FOLDERS: dict[str, Path] = {}     # STARVM_JIT_CACHE as configured -> the folder used
_WARNED: set = set()


def warn_once(what: str, text: str) -> None:
    """One line on stderr per ``what`` and process."""
    if what not in _WARNED:
        _WARNED.add(what)
        sys.stderr.write(f"starvm: warning: {text}\n")
        sys.stderr.flush()


def folder() -> Path:
    """The cache folder: STARVM_JIT_CACHE's, or where that cannot be written (a read-only
    folder: nothing compiled could be kept, so no routine would ever run from the cache)
    one under the temporary folder, said once on stderr."""
    configured = jit_cache_dir()
    if configured not in _FOLDERS:
        path = Path(configured)
        why = _unwritable(path)
        if why:
            other = Path(tempfile.gettempdir()) / f"starvm-jit-{_user()}"
            if _unwritable(other):
                raise OSError(f"the compiled-code cache folder {path} cannot be written ({why}), nor {other}")
            warn_once(f"folder {path}", f"the compiled-code cache folder {path} cannot be written ({why}); "
                      f"compiled routines are kept in {other} instead (STARVM_JIT_CACHE chooses the folder)")
            path = other
        _FOLDERS[configured] = path
    return _FOLDERS[configured]


def _user() -> str:
    return user_tag()


def _unwritable(path: Path) -> str:
    """Why files cannot be made in ``path`` and in its __pycache__ (Numba's entries), or ""."""
    for where in (path, path / "__pycache__"):
        try:
            where.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=where, suffix=".probe")
            os.close(fd)
            os.unlink(tmp)
        except OSError as e:
            return e.strerror or type(e).__name__
    return ""


_HEADER = "# starvm compiled-code cache entry, sha256 of the code below: "


def entry_text(source: str) -> str:
    """What an entry's .py holds: the hash line, then the generated code."""
    return f"{_HEADER}{hashlib.sha256(source.encode()).hexdigest()}\n{source}"


def entry_path(source: str, backend: str) -> Path:
    return folder() / f"star_{key(source, backend)}.py"


def write_entry(source: str, backend: str) -> Path:
    """The entry's .py, checked: written when missing, written anew (once said on stderr)
    when it does not hold this code under its hash. A rewrite changes its time stamp, so
    Numba's entries for the old file are stale and the routines compile again; the
    markers of compiled routines (``ready_marker``) go with them."""
    path = entry_path(source, backend)
    text = entry_text(source)
    try:
        found = path.read_text()
    except FileNotFoundError:
        found = None
    except (OSError, UnicodeDecodeError):
        found = ""
    if found == text:
        return path
    if found is not None:
        warn_once(f"entry {path}", f"the compiled-code cache entry {path} does not hold the code its hash "
                  "names (a corrupt or edited file); it is written anew and its routines compiled again")
        for marker in path.parent.glob(f"{path.stem}.*.ready"):
            _unlink(marker)
    _write_once(path, text.encode(), strict=True)
    return path


def checked_source(path: Path) -> str | None:
    """The code of an entry whose first line's hash matches it, else None."""
    try:
        head, _, source = path.read_text().partition("\n")
    except (OSError, UnicodeDecodeError):
        return None
    if not head.startswith(_HEADER) or head[len(_HEADER):] != hashlib.sha256(source.encode()).hexdigest():
        return None
    return source


def ready_marker(source_path: Path, func: str, spec) -> Path:
    """The file that says Numba's cache beside ``source_path`` holds ``func`` compiled for
    these argument types (``spec``, background.signature_spec): a run on --jit auto then
    loads it at the routine's first call, without weighing its work or importing Numba to ask."""
    digest = hashlib.sha256(repr((spec, machine_id())).encode()).hexdigest()[:16]
    return source_path.parent / f"{source_path.stem}.{func}.{digest}.ready"


@lru_cache(maxsize=None)
def machine_id() -> str:
    """The kind of CPU (Numba's machine code is compiled for the host's: a cache folder shared
    by different machines, over NFS on a cluster, keeps one marker per kind)."""
    import platform
    model = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith(("model name", "Model", "cpu model")):
                    model = line.partition(":")[2].strip()
                    break
    except OSError:
        pass
    return f"{platform.machine()}|{model or platform.processor()}"


def failed_marker(source_path: Path, func: str, spec) -> Path:
    """Beside the ready marker: Numba could not compile it (the reason inside); not tried again."""
    return ready_marker(source_path, func, spec).with_suffix(".failed")


@contextmanager
def entry_lock(source_path: Path, func: str):
    """Held while a process compiles one function of this entry: a second process compiling
    it waits, then finds it compiled (its ready marker) instead of compiling it again.
    Processes compiling different functions of one entry run side by side (a callee both
    compile is saved whole by each: Numba writes its files by replacing them)."""
    try:
        import fcntl
    except ImportError:         # no flock (Windows): compiles may overlap; each writes whole files
        yield
        return
    lock = _lock_path(source_path, func)
    held = _held_locks()
    if lock in held:            # this thread holds it (compile_worker, then compile_overload)
        yield
        return
    with open(lock, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        held.add(lock)
        try:
            yield
        finally:
            held.discard(lock)
            fcntl.flock(f, fcntl.LOCK_UN)


_THREAD = threading.local()


def _lock_path(source_path: Path, func: str) -> Path:
    return Path(source_path).resolve().with_name(f"{Path(source_path).stem}.{func}.lock")


def _held_locks() -> set:
    if not hasattr(_THREAD, "locks"):
        _THREAD.locks = set()
    return _THREAD.locks


def lock_taken_elsewhere(source_path: Path, func: str) -> bool:
    """Is another process (or thread) compiling this function of the entry now?"""
    try:
        import fcntl
    except ImportError:
        return False
    lock = _lock_path(source_path, func)
    if lock in _held_locks():
        return False
    try:
        with open(lock, "a") as f:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                return True
            fcntl.flock(f, fcntl.LOCK_UN)
    except OSError:
        return False
    return False


def write_marker(path: Path, text: str) -> None:
    _write_once(path, text.encode())


def write_marker_bytes(path: Path, data: bytes) -> None:
    _write_once(path, data)


def _unlink(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass


def _kernels_hash() -> str:
    """The kernels the generated code calls are compiled into it: Numba's cache of a module
    does not notice when they change, so their text is part of the key."""
    global _KERNELS
    if _KERNELS is None:
        here = Path(__file__).parent
        text = "".join(p.read_text() for p in (here.parent / "targets" / "numba" / "kernels.py", here.parent / "targets" / "layout.py"))
        _KERNELS = hashlib.sha256(text.encode()).hexdigest()[:16]
    return _KERNELS


_KERNELS = None


def _version() -> str:
    """starvm's version, read from its __init__.py (importing the package here would make an
    import circle: starvm -> machine -> jit -> starvm)."""
    text = (Path(__file__).parents[1] / "__init__.py").read_text()
    found = re.search(r'__version__ = "([^"]+)"', text)
    return found.group(1) if found else "?"


# Numba versions (major, minor) whose internals load_overload was checked against (the
# dispatcher's _cache._load_overload, targetctx, add_overload, _cache_hits, _types_active_call
# and typeof_pyval; rtsys.initialize's steps; environment._rebuild_env)
DIRECT_NUMBA = ((0, 68), (0, 68))
# False: every load goes through Numba (tests/jit/test_cache_load.py checks both paths)
direct_loads_allowed = True
# how overloads came into dispatchers in this process: "direct" (load_overload), "numba"
# (Numba's compile: its own cache load, or a compile)
LOADS = {"direct": 0, "numba": 0}


def load_overload(dispatcher, sig: tuple) -> str:
    """Give the dispatcher its overload for these argument types from Numba's disk cache, as
    Numba's ``Dispatcher.compile`` does on a cache hit, but without refreshing its registries.
    Returns "loaded" (it has the overload now), "unreadable" (the entry is there but did not
    load: a corrupt file) or "not loaded" (no entry, a stale one, the Numba version unchecked,
    or a failure before the entry was read); in the last two nothing changed."""
    if not (direct_loads_allowed and _direct_numba()):
        return "not loaded"
    try:
        from numba.core import sigutils
        from numba.core.compiler_lock import global_compiler_lock
        with global_compiler_lock:
            args, _ = sigutils.normalize_signature(sig)
            if tuple(args) in dispatcher.overloads:
                return "loaded"
            ctx = dispatcher.targetctx
            _start_nrt(ctx)       # the one part of the refresh a loaded function needs: Numba's runtime
            with _numba_environments_unimported():
                try:
                    cres = dispatcher._cache._load_overload(sig, ctx)
                except Exception:  # noqa: BLE001 - a file that does not unpickle or rebuild
                    return "unreadable"
            if cres is None or cres.objectmode:
                return "not loaded"
            ctx.insert_user_function(cres.entry_point, cres.fndesc, [cres.library])
            dispatcher.add_overload(cres)
            dispatcher._cache_hits[sig] += 1
            _type_plain_arrays(dispatcher)
    except Exception:  # noqa: BLE001 - an internal that moved: Numba's own path decides
        return "not loaded"
    LOADS["direct"] += 1
    return "loaded"


def compile_overload(dispatcher, sig: tuple) -> str:
    """The dispatcher's overload for these argument types: loaded directly where it can be,
    else through Numba (its cache load with the registries' refresh, or a compile; a compile
    written over an unreadable entry); returns which ("direct" or "numba")."""
    found = load_overload(dispatcher, sig)
    if found == "loaded":
        return "direct"
    module = _generated_module(dispatcher)
    if module is None:
        return _compile_overload(dispatcher, sig, found)
    # a generated function: processes compiling it take turns, the second loads it; the lock
    # taken under Numba's (threads of this process: compiler lock, then entry locks, one order)
    from numba.core.compiler_lock import global_compiler_lock
    with global_compiler_lock, entry_lock(Path(module.__file__), dispatcher.py_func.__name__):
        if found != "unreadable" and load_overload(dispatcher, sig) == "loaded":
            return "direct"
        # its callees compiled by helper processes where there are cores (the outermost compile)
        with compile_parallel.farm_for(module, getattr(module, BACKEND, ""), sys.modules[__name__]):
            return _compile_overload(dispatcher, sig, found)


BACKEND = "_starvm_backend"     # the module global naming the backend a generated module is for


def _generated_module(dispatcher):
    """The generated module (a cache entry) of the dispatcher's function, or None (a kernel)."""
    module = sys.modules.get(getattr(getattr(dispatcher, "py_func", None), "__module__", None) or "")
    return module if module is not None and hasattr(module, BACKEND) and getattr(module, "__file__", None) else None


def _compile_overload(dispatcher, sig: tuple, found: str) -> str:
    LOADS["numba"] += 1

    def compile_once():
        with compile_cost.cheaper():
            if found == "unreadable":
                _compile_over_the_entry(dispatcher, sig)
            else:
                dispatcher.compile(sig)
    with _compiling_notice(dispatcher):
        compile_cost.again_without(compile_once)
    return "numba"


@contextmanager
def _compiling_notice(dispatcher):
    """A line on stderr, where it is a terminal, while Numba loads or compiles in the
    foreground (--jit on, STARVM_JIT_BACKGROUND=0): the first compile of a routine and of the
    kernels it uses takes seconds. Cleared when done."""
    if not (threading.current_thread() is threading.main_thread() and sys.stderr.isatty()):
        yield
        return
    func = getattr(getattr(dispatcher, "py_func", None), "__name__", "")
    what = ("the main block" if func == "f_main_" else func[4:].upper() if func.startswith(("f_r_", "h_r_"))
            else "starvm's kernels")
    line = f"starvm: compiling {what} with Numba (`star compile FILE.star` does it ahead) ..."
    sys.stderr.write(line)
    sys.stderr.flush()
    try:
        yield
    finally:
        sys.stderr.write("\r" + " " * len(line) + "\r")
        sys.stderr.flush()


def _compile_over_the_entry(dispatcher, sig: tuple) -> None:
    """The function's entry in Numba's cache (its index and data files: one of them did not
    load) deleted, said once on stderr, and the function compiled and saved anew; Numba
    compiles without reading it (its own load would fail on what is left of it)."""
    discard_numba_entry(dispatcher)
    cache = dispatcher._cache
    cache.load_overload = lambda *args, **kw: None        # shadows the method for this compile
    try:
        dispatcher.compile(sig)
    finally:
        del cache.load_overload


def discard_numba_entry(dispatcher) -> None:
    """Delete a function's entry in Numba's cache (its index and data files), one of which
    did not load; said once on stderr."""
    try:
        index = Path(dispatcher._cache._cache_file._index_path)
    except (AttributeError, TypeError):
        return        # an internal that moved: Numba's save writes over the entry all the same
    warn_once(f"numba entry {index}", f"the compiled-code cache entry {index} (or its data) does not load "
              "(a corrupt file); it is deleted and its routine compiled again")
    for stale in [index, *index.parent.glob(index.stem + ".*.nbc")]:
        _unlink(stale)


def direct_loads_possible() -> bool:
    """Does load_overload work on this Numba (else Numba's own load does it)?"""
    return direct_loads_allowed and _direct_numba()


@contextmanager
def _numba_environments_unimported():
    """While a cached function unpickles: the environment of each of Numba's own functions
    linked into it (np.empty's and np.zeros's overloads in numba.np.arrayobj) made without
    importing its module (30 ms: numba.cpython.unicode and charseq come with it) where it
    holds no constants. An environment's module globals serve only object-mode code (Numba's
    pylowering); compiled nopython code reads its constants alone."""
    from numba.core import environment
    numba_rebuild = environment._rebuild_env

    def rebuild(modname, consts, env_name):
        if (consts or modname in sys.modules or not modname.startswith("numba.")
                or environment.lookup_environment(env_name) is not None):
            return numba_rebuild(modname, consts, env_name)
        env = environment.Environment({"__name__": modname})
        env.env_name = env_name
        environment.Environment._memo[env_name] = env
        return env
    environment._rebuild_env = rebuild       # what the pickled data names (numba.core.environment._rebuild_env)
    try:
        yield
    finally:
        environment._rebuild_env = numba_rebuild


def argument_type(value):
    """numba.typeof(value) for a plain NumPy array or a tuple holding only such arrays and
    numbers, without Numba's test for a masked array (it imports numpy.ma: 30 ms, a third of
    a direct load); None for anything else."""
    import numpy as np
    from numba.core import types
    if type(value) is np.ndarray:
        from numba.np.numpy_support import from_dtype, map_layout
        try:
            dtype = from_dtype(value.dtype)
        except Exception:  # noqa: BLE001 - a dtype Numba does not take: its own typeof says so
            return None
        return types.Array(dtype, value.ndim, map_layout(value), readonly=not value.flags.writeable)
    if type(value) is tuple:
        inner = [argument_type(v) if type(v) in (np.ndarray, tuple) else _scalar_type(v) for v in value]
        return None if None in inner else types.BaseTuple.from_types(inner, tuple)
    return None


def _scalar_type(value):
    import numba
    if type(value) not in (int, bool, float):
        return None
    try:
        return numba.typeof(value)
    except ValueError:      # an integer past 64 bits: Numba's typeof_pyval decides
        return None


def _type_plain_arrays(dispatcher) -> None:
    """The dispatcher types the tuples of arrays it is called with by argument_type: Numba's
    native dispatch types a tuple argument by calling the dispatcher's typeof_pyval (once per
    kind of tuple), which would import numpy.ma."""
    numba_typeof = dispatcher.typeof_pyval
    active = dispatcher._types_active_call       # what Numba's typeof_pyval records

    def typeof_pyval(value):
        found = argument_type(value)
        if found is None:
            return numba_typeof(value)
        active.add(found)
        return found
    dispatcher.typeof_pyval = typeof_pyval


def _start_nrt(ctx) -> None:
    """Numba's runtime (NRT) started as ``rtsys.initialize`` starts it, but its small LLVM
    module (reference counts, atomics: 40-70 ms to compile, in every process) is compiled once
    and its machine code loaded from the cache folder after that. The caller holds Numba's
    compiler lock."""
    from numba.core.runtime import nrt
    rt = nrt.rtsys
    if rt._init:
        return
    import llvmlite
    import numba
    from llvmlite import binding as ll
    from numba.core import config
    from numba.core.runtime import _nrt_python, nrtdynmod
    codegen = ctx.codegen()
    stamp = repr((numba.__version__, llvmlite.__version__, codegen.magic_tuple()))
    path = folder() / f"nrt_{hashlib.sha256(stamp.encode()).hexdigest()[:32]}.pickle"
    try:
        saved = pickle.loads(path.read_bytes())
    except (OSError, pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError):
        saved = None
    # rtsys.initialize's steps, its library compiled with object caching or unserialized
    if config.NRT_STATS:
        _nrt_python.memsys_enable_stats()
    for py_name, c_address in _nrt_python.c_helpers.items():
        ll.add_symbol(py_name if py_name.startswith("_") else "NRT_" + py_name, c_address)
    if isinstance(saved, tuple) and len(saved) == 2 and saved[0] == stamp:
        library = codegen.unserialize_library(saved[1])
    else:
        ir_module, library = nrtdynmod.create_nrt_module(ctx)
        library.enable_object_caching()
        library.add_ir_module(ir_module)
        library.finalize()
        _write_once(path, pickle.dumps((stamp, library.serialize_using_object_code())))
    rt._library = library
    rt._init = True


def _write_once(path: Path, data: bytes, strict: bool = False) -> None:
    """The file written whole or not at all (other processes may read it meanwhile); a
    failure raises with ``strict``, else the file is made again next time."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except OSError:
        if strict:
            raise


@lru_cache(maxsize=None)
def _direct_numba() -> bool:
    import numba
    try:
        version = tuple(int(p) for p in numba.__version__.split(".")[:2])
    except ValueError:
        return False
    return DIRECT_NUMBA[0] <= version <= DIRECT_NUMBA[1]


def load(source: str, backend: str):
    """The module of this source (imported once per process), from its checked entry."""
    with _LOADING:           # background.py loads on a thread of its own
        return _load(source, backend)


_LOADING = threading.RLock()


def _load(source: str, backend: str):
    k = key(source, backend)
    name = f"starvm_jit_{k}"
    if name in sys.modules:
        return sys.modules[name]
    path = write_entry(source, backend)
    # compiled from the text just checked, not through a .pyc of the folder (which nothing checks);
    # its calls between generated functions linked (linking.py: same lines, bindings after them)
    code = compile(entry_text(link_source(source)), str(path), "exec")
    module = ModuleType(name)
    module.__file__ = str(path)
    setattr(module, BACKEND, backend)
    sys.modules[name] = module
    try:
        exec(code, module.__dict__)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    install_links(module)
    return module


linking.use_cache(compile_overload=compile_overload, write_marker_bytes=write_marker_bytes, farm=compile_parallel.current)
