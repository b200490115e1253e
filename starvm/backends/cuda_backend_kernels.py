"""The CuPy backend's own CUDA kernels (FND/STEP/FRST helpers, ROW gather and scatter). Their
text is cuda_backend_kernels.cu beside this module (package data: it ships in the wheel), read
without CuPy, so that it compiles in CI with NVRTC on a machine with no GPU
(tests/unit/test_cuda_sources.py). cupy_backend.py builds it with cupy.RawModule."""
from importlib.resources import files

# the .cu file verbatim (its first line is empty, so NVRTC's line numbers are the file's)
SOURCE = files(__package__).joinpath("cuda_backend_kernels.cu").read_text()

# the kernels cupy_backend.py takes from the module, by name
NAMES = ("first_one", "clear_bit", "only_bit", "copy_set_bit", "row_gather", "row_scatter")
