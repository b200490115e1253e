"""The MPI ranks' target: the numba renderer with the operations that cross ranks overridden
(``lower.py``, kernels in ``kernels.py``), and the host half of collectives that a GPU rank's
running kernel posts (``mailbox.py``: a Numba thread answers them with MPI). The distributed backend's fused ``parallel for`` is
an array-at-once executor over this rank's rows, not a renderer: starvm/distributed/forall.py."""
