"""The MPI ranks' target: the numba renderer with the operations that cross ranks overridden
(``lower.py``, kernels in ``kernels.py``) and the distributed backend's fused ``parallel for``
(``forall.py``)."""
