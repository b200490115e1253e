"""The compiled CPU tier's target: IR to a module of Numba ``@njit`` functions (``lower.py``),
the base operations as Numba kernels over packed bit columns (``kernels.py``) and the numbering
generated code, kernels and host share (``layout.py``). Importing this package imports no Numba."""
