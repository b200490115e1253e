"""starvm: the STAR-machine emulator and the Star language interpreter and compiler.

    import starvm
    m = starvm.Machine(backend="numpy")
    m.load(source)
    P = m.table(adjacency)          # 2-D bool array
    m.call("WARSHALL", n, P)        # var parameters are updated in place
    P.to_numpy()

The parts (docs/architecture.md draws them, with what each imports): ``frontend`` (Star text
to AST), ``check`` (names and types), ``ir`` (the op vocabulary and lowering), ``targets``
(one renderer per target: python, numpy, numba, cuda, mpi), ``runtime`` (the ``Machine`` and
the interpreter's counted operations), ``execution`` (values, limits, the context the machine
hands its tiers), ``jit`` (the compiled tiers), ``backends`` (where tables live: NumPy, CuPy,
auto), ``native`` (kernels that replace library routines), ``distributed`` (MPI ranks),
``graphs`` (graph input), ``costs`` (hardware cost models), ``debug`` (debugger, replay page),
``ui`` (the ``star`` command, the REPL, Jupyter, pictures) and ``benchmarking``.
The loose modules: ``api.py`` (``starvm.compile``, ``Program``), ``config.py`` (every
environment variable), ``errors.py`` (``StarError`` and its rendering), ``types.py`` (Star's
static types), ``stdlib.py`` and ``resources.py`` (the standard library and the grammar's
files), ``input_files.py`` (reading a file the user named, bounded) and ``__main__.py``
(``python -m starvm``).
"""
__version__ = "0.1.0"

# The public names load on first use (PEP 562): importing a part (starvm.ui.cli, as the `star`
# command's start-up does) costs no machine, so that a Ctrl-C there reaches cli.main (exit 130).
_PUBLIC = {"StarError": "errors", "StarInterrupt": "errors", "StarRuntimeError": "errors",
           "StarSyntaxError": "errors", "StarTypeError": "errors", "BitVector": "runtime.machine",
           "Machine": "runtime.machine", "Table": "execution.values", "Program": "api",
           "StepCounter": "api", "compile": "api"}


def __getattr__(name: str):
    if name not in _PUBLIC:
        raise AttributeError(f"module 'starvm' has no attribute {name!r}")
    from importlib import import_module
    from .ui.pictures import png_or_none
    for public, module in _PUBLIC.items():
        globals()[public] = getattr(import_module(f".{module}", __name__), public)
    # Jupyter's rich display of a table: its bit picture (None without matplotlib). Attached here,
    # where the parts are put together, so that execution/values.py imports no user interface.
    globals()["Table"]._repr_png_ = png_or_none
    return globals()[name]


__all__ = ["Machine", "Table", "BitVector", "Program", "StepCounter", "compile", "StarError", "StarSyntaxError", "StarTypeError",
           "StarRuntimeError", "StarInterrupt", "__version__"]
