"""Checking the project's CUDA code without a GPU: NVRTC compiles every CUDA source to PTX
(nvrtc.py, corpus.py), and a stand-in for CuPy runs the launch code (fake_cupy.py)."""
