"""The compiled CPU tier's target: IR to a module of Numba ``@njit`` functions (``lower.py``),
a long function split into helpers of bounded size (``outline.py``), and the base operations as
Numba kernels over packed bit columns (``kernels.py``); the numbering generated code, kernels
and host share is ``../layout.py``. Importing this package imports no Numba."""
