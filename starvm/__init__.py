"""starvm: the STAR-machine emulator and the Star language interpreter.

    import starvm
    m = starvm.Machine(backend="numpy")
    m.load(source)
    P = m.table(adjacency)          # 2-D bool array
    m.call("WARSHALL", n, P)        # var parameters are updated in place
    P.to_numpy()
"""
__version__ = "0.1.0"

from .errors import StarError, StarInterrupt, StarRuntimeError, StarSyntaxError, StarTypeError  # noqa: E402
from .runtime.machine import BitVector, Machine  # noqa: E402
from .execution.values import Table  # noqa: E402
from .api import Program, StepCounter, compile  # noqa: E402,A004
from .ui.pictures import png_or_none as _table_png  # noqa: E402

# Jupyter's rich display of a table: its bit picture (None without matplotlib). Attached here,
# where the parts are put together, so that execution/values.py imports no user interface.
Table._repr_png_ = _table_png


__all__ = ["Machine", "Table", "BitVector", "Program", "StepCounter", "compile", "StarError", "StarSyntaxError", "StarTypeError",
           "StarRuntimeError", "StarInterrupt", "__version__"]
