"""Calls between the generated functions of one module, each compiled once.

Numba compiles a call to another ``@njit`` function by linking the callee's whole compiled
module into the caller's (its functions as ``linkonce_odr`` copies) and optimising and
generating machine code for the result again: a call tree of generated functions (routines,
their callees, an entry and its outline helpers) costs the sum over its functions of their
transitive callees, which is quadratic in the program. Kernels (kernels.py) are inlined on
purpose and stay so; only calls between generated functions go through here.

``link_source`` rewrites a module's calls from one generated function to another into calls
of a *linked call* (``linked``): a Numba intrinsic that types the call by compiling (or
loading) the callee on its own and emits an indirect call through a pointer cell, a global
``starvm.link$<hash>`` that the caller's module declares and does not define. The cell's
storage is a ``ctypes`` pointer of this process, its address given to LLVM under that name
(``llvmlite.binding.add_symbol``), so MCJIT resolves it when the caller's machine code is
made or loaded from Numba's disk cache; the cell holds the callee's native entry point
(Numba's calling convention: status, result and exception as a direct call has them).

Across processes: the cell's name hashes the module, the callee and its argument types, so a
caller's cached machine code names the same cell in every process. Each cell is recorded
beside Numba's index of the module (``<entry>.link.<hash>``: the callee and its argument types), written
before the caller's code can be cached, and every recorded cell is given to LLVM before any
function of the module loads from the cache (``install``: a hook on the dispatcher's cache
load). A function whose overload is added (compiled, or loaded by Numba or cache.py) first
gets the callees it may call (its calls in the source, transitively) for the recorded types
and their cells filled, so no cell is empty when it runs.

Recursive calls (a function calling itself; a cycle is one function, lower.cycle_function)
stay direct calls, as Numba compiles them.
"""
from __future__ import annotations

import ctypes
import hashlib
import pickle
import re
import sys
import threading
from pathlib import Path

PREFIX = "starvm.link$"
HELPER = "_starvm_linked"      # the module global the rewritten source calls linked() by
CALLS = "_starvm_calls"        # the module global: function -> the generated functions it calls

# False: generated functions call each other directly, as Numba links them (for measuring)
enabled = True
VERSION = 1                    # in the cache key (cache.key): the machine code of one way is not the other's

_DEF = re.compile(r"^def (\w+)\(([^)]*)\):", re.M)
_CELLS: dict[str, ctypes.c_void_p] = {}          # symbol -> its cell (kept alive: LLVM holds its address)
_FILLED: set[str] = set()
_RECORDED: set[str] = set()                      # symbols whose record this process wrote or read
_LOCK = threading.RLock()


# ------------------------------------------------------------------ the source
def link_source(source: str) -> str:
    """The module's source with each call from one generated function to another (not to
    itself) made through a linked call ``L_<callee>``, the linked calls bound at its end and
    ``_starvm_calls`` saying which function calls which."""
    if not enabled:
        return source
    defs = {m.group(1): len([a for a in m.group(2).split(",") if a.strip()]) for m in _DEF.finditer(source)}
    if not defs:
        return source
    call = re.compile(r"\b(" + "|".join(sorted(map(re.escape, defs), key=len, reverse=True)) + r")\(")
    calls: dict[str, set[str]] = {f: set() for f in defs}
    out, current = [], None
    for line in source.split("\n"):
        m = _DEF.match(line)
        if m:
            current = m.group(1)
        elif current is not None and "(" in line:
            def swap(found, current=current):
                name = found.group(1)
                if name == current:           # recursion: Numba's direct call
                    return found.group(0)
                calls[current].add(name)
                return f"L_{name}("
            line = call.sub(swap, line)
        out.append(line)
    linked = sorted({c for cs in calls.values() for c in cs})
    out.append(f"from starvm.jit.linking import linked as {HELPER}")
    out += [f"L_{name} = {HELPER}({name}, __name__, {name!r}, {defs[name]})" for name in linked]
    out.append(f"{CALLS} = {dict((f, tuple(sorted(cs))) for f, cs in calls.items() if cs)!r}")
    return "\n".join(out) + "\n"


# ------------------------------------------------------------------ cells and their records
def symbol(module_name: str, func: str, argtypes: tuple) -> str:
    text = repr((module_name, func, tuple(str(t) for t in argtypes)))
    return PREFIX + hashlib.sha256(text.encode()).hexdigest()[:32]


def _cell(name: str) -> ctypes.c_void_p:
    """The cell of ``name``, made and given to LLVM the first time."""
    with _LOCK:
        cell = _CELLS.get(name)
        if cell is None:
            from llvmlite import binding as ll
            cell = _CELLS[name] = ctypes.c_void_p(0)
            ll.add_symbol(name, ctypes.addressof(cell))
        return cell


def _records_base(module) -> Path | None:
    """Where the module's cell records go, ``<base>.link.<hash>``: beside Numba's index of its
    functions (the entry's __pycache__, or its folder under NUMBA_CACHE_DIR), so that they
    stay and go with the machine code that names their cells (with the records beside the
    entry, a cache folder emptied while NUMBA_CACHE_DIR was kept left cached callers calling
    through empty cells: a segmentation fault)."""
    where = getattr(module, "__file__", None)
    if not where:
        return None
    path = Path(where)
    for func in getattr(module, CALLS, {}):
        folder = getattr(getattr(getattr(module, func, None), "_cache", None), "_cache_path", None)
        if folder:
            return Path(folder) / path.stem
    return path


def _record_path(module, name: str) -> Path | None:
    base = _records_base(module)
    return None if base is None else base.with_name(f"{base.name}.link.{name[len(PREFIX):]}")


def _records(module) -> list[tuple[str, str, tuple]]:
    """(symbol, callee, argument types) of every cell recorded for the module (a record is
    read once per process: a load of every function asks)."""
    base = _records_base(module)
    if base is None:
        return []
    found = []
    for record in sorted(base.parent.glob(f"{base.name}.link.*")):
        name = PREFIX + record.name.rsplit(".", 1)[1]
        if name not in _READ:
            try:
                _READ[name] = pickle.loads(record.read_bytes())
            except Exception:  # noqa: BLE001 - a partial or corrupt record: its caller compiles again
                continue
        func, argtypes = _READ[name]
        found.append((name, func, argtypes))
    return found


_READ: dict[str, tuple[str, tuple]] = {}          # symbol -> (callee, argument types) of its record
# cache.py's compile_overload and write_marker_bytes, and compile_parallel.current (the
# compile spread over processes this thread runs, or None), given by cache.py (which imports this module)
_CACHE: dict = {"farm": lambda: None}


def use_cache(**functions) -> None:
    _CACHE.update(functions)


def _write_record(module, name: str, func: str, argtypes: tuple) -> None:
    if name in _RECORDED:
        return
    path = _record_path(module, name)
    if path is not None and not path.exists():
        _CACHE["write_marker_bytes"](path, pickle.dumps((func, tuple(argtypes))))
    _RECORDED.add(name)


def register_recorded(module) -> None:
    """Every recorded cell of the module given to LLVM (before machine code naming one loads)."""
    for name, _func, _args in _records(module):
        _cell(name)


def _fill(name: str, cres) -> None:
    address = cres.library.get_pointer_to_function(cres.fndesc.mangled_name)
    if not address:
        raise RuntimeError(f"the compiled function {cres.fndesc.qualname} has no entry point to link")
    with _LOCK:
        _cell(name).value = address
        _FILLED.add(name)


def _reachable(module, func: str) -> set[str]:
    calls = getattr(module, CALLS, {})
    seen, todo = set(), list(calls.get(func, ()))
    while todo:
        f = todo.pop()
        if f not in seen:
            seen.add(f)
            todo.extend(calls.get(f, ()))
    return seen


def fill_callees(module, func: str) -> None:
    """Before ``func`` runs: every generated function it may reach, for each recorded set of
    argument types, loaded (or compiled) and its cell filled; in a compile spread over
    processes (compile_parallel), the callees typed for it first, as a helper or this process
    compiles them."""
    reach = _reachable(module, func)
    if not reach:
        return
    farm = _CACHE["farm"]()
    if farm is not None and farm.module is module:
        farm.drain()
        for name, callee, argtypes in list(farm.cells):
            if callee in reach and name not in _FILLED:
                _cell(name)
                cres = _overload(getattr(module, callee), argtypes)
                farm.check(callee, argtypes, cres)
                _fill(name, cres)
    for name, callee, argtypes in _records(module):
        if callee in reach and name not in _FILLED:
            _cell(name)
            dispatcher = getattr(module, callee)
            _fill(name, _overload(dispatcher, argtypes))


def _overload(dispatcher, argtypes: tuple):
    """The dispatcher's compiled result for these argument types: loaded from the cache
    (cache.compile_overload: directly where it can) or compiled."""
    argtypes = tuple(argtypes)
    found = dispatcher.overloads.get(argtypes)
    if found is None:
        _CACHE["compile_overload"](dispatcher, argtypes)
        found = dispatcher.overloads[argtypes]
    return found


# ------------------------------------------------------------------ the module's dispatchers
def install(module) -> None:
    """Hooks on the module's generated dispatchers: recorded cells given to LLVM before any
    loads from Numba's cache, a function's callees filled in once it has an overload."""
    calls = getattr(module, CALLS, None)
    if calls is None:
        return
    names = set(calls) | {c for cs in calls.values() for c in cs}
    for func in names:
        dispatcher = getattr(module, func, None)
        if dispatcher is None or getattr(dispatcher, "_starvm_linked", False):
            continue
        dispatcher._starvm_linked = True
        _hook_cache_load(module, dispatcher)
        _hook_add_overload(module, func, dispatcher)


def _hook_cache_load(module, dispatcher) -> None:
    cache = getattr(dispatcher, "_cache", None)
    numba_load = getattr(cache, "_load_overload", None)
    if numba_load is None:
        return

    def load(sig, target_context):
        register_recorded(module)
        return numba_load(sig, target_context)
    cache._load_overload = load


def _hook_add_overload(module, func: str, dispatcher) -> None:
    numba_add = dispatcher.add_overload

    def add_overload(cres):
        numba_add(cres)
        try:
            fill_callees(module, func)
        except BaseException:
            # not left for a caller's typing to link to (its callees did not link)
            dispatcher.overloads.pop(tuple(cres.signature.args), None)
            raise
    dispatcher.add_overload = add_overload


# ------------------------------------------------------------------ the linked call
def linked(dispatcher, module_name: str, func: str, nargs: int):
    """A Numba intrinsic calling ``dispatcher`` through its cell (see the module's text)."""
    from numba.core import cgutils, types
    from numba.core.typing import signature
    from numba.extending import intrinsic

    def typer(typingctx, *args):
        argtypes = tuple(types.unliteral(a) for a in args)
        module = sys.modules[module_name]
        register_recorded(module)            # the callee may load from the cache: its own cells first
        farm = _CACHE["farm"]()
        typed = None
        if farm is not None and farm.module is module and argtypes not in dispatcher.overloads:
            # typed here, compiled by a helper process (or later here): its cell filled before the caller runs
            typed = farm.return_type(dispatcher, argtypes)
        if typed is not None:
            name = symbol(module_name, func, argtypes)
            _write_record(module, name, func, argtypes)
            farm.cells.append((name, func, argtypes))
            sig = signature(typed, *argtypes)
        else:
            cres = _overload(dispatcher, argtypes)
            argtypes = tuple(cres.signature.args)
            name = symbol(module_name, func, argtypes)
            _write_record(module, name, func, argtypes)
            _fill(name, cres)
            sig = signature(cres.signature.return_type, *argtypes)

        def codegen(context, builder, sig, llargs, name=name):
            fnty = context.call_conv.get_function_type(sig.return_type, sig.args)
            _cell(name)                       # given to LLVM before this module is finalized
            try:
                cell = builder.module.get_global(name)
            except KeyError:
                from llvmlite import ir
                cell = ir.GlobalVariable(builder.module, ir.IntType(8).as_pointer(), name=name)
                cell.linkage = "external"
            fn = builder.bitcast(builder.load(cell), fnty.as_pointer())
            status, res = context.call_conv.call_function(builder, fn, sig.return_type, sig.args, llargs)
            with cgutils.if_unlikely(builder, status.is_error):
                context.call_conv.return_status_propagate(builder, status)
            return res
        return sig, codegen

    params = ", ".join(f"a{i}" for i in range(nargs))
    scope = {"typer": typer}
    exec(f"def L_{func}(typingctx, {params}):\n    return typer(typingctx, {params})\n", scope)
    return intrinsic(scope[f"L_{func}"])
