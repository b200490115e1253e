"""What several routines' kernels share, per target: NumPy's bit-sliced rows (numpy_rows.py),
the emulated device's word conversions (emulated.py), the CUDA modules' composition from the
.cu files (cuda_text.py, no CuPy) and their launch helpers (cuda_rows.py, cuda_search.py), with
the CUDA device helpers of the row moves (rows.cuh, rows.cu) and of the searches (search.cuh).
A routine's own kernels live in its folder (native/<routine>/)."""
