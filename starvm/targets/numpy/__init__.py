"""Array-at-once ``parallel for``: a fusable loop evaluated for all iterations together with
the backend's array module (NumPy or CuPy), ``forall.py``."""
