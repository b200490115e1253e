"""CUDA C rendered from the IR: the GPU tier's routine kernels (routine.py) and the CuPy backend's
fused `parallel for` kernels (forall.py), with the fixed C they start with (prelude.py)."""
