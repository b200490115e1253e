"""CUDA C rendered from the IR: ONE renderer for every CUDA kernel the project generates.

* ``renderer.py`` — ``CudaRenderer``, the base: the tables from an op (or a ``GroupOp``) to
  the method rendering it (``SCALAR``, ``VECTOR``) and the rules every kernel shares (scalar
  constants, negation, logic, comparison, checked + - *, div/mod);
* ``routine.py`` — ``RoutineRenderer``, the GPU tier: a routine and its callees as one
  cooperative kernel; its parts ``statements.py``, ``expressions.py`` (the tables' methods
  for values spread over the grid or replicated in every thread) and ``parallel_for.py``
  (iterations on groups of lanes, pivot loops); ``instance`` gives a launch shape's source;
* ``forall.py`` — ``ForallRenderer``, the CuPy backend's fused `parallel for`: one thread
  block per iteration (backends/cupy_forall.py launches it);
* ``ranks.py`` — the GPU tier's kernel for one MPI rank of several: ``prelude.cu`` with
  ``ranks.cu``'s changes (the rank's rows, cross-rank steps posted to the host);
* the fixed CUDA text as package data, read by ``prelude.cuda_text``: ``int64.cu`` and
  ``checked_int.cu`` (every kernel), ``prelude.cu`` (the GPU tier's values, barrier,
  reductions and base operations), ``routine_kernel.cu`` and ``forall_kernel.cu`` (the two
  kernels' frames, ``string.Template``).

Nothing here needs CuPy or a GPU: tests/gpu_sources compiles every rendered kernel with
NVRTC and runs both kinds on the CPU (cpu_cuda.h). Compiling and launching is the tiers'
side, ``starvm/jit``: ``jit/cuda_runtime.py`` (NVRTC through CuPy, the launch shape, the
status block, Ctrl-C, restoring tables) stays there beside the CPU tier's ``call.py``: it is
a ``JitRoutine`` the tier calls, owns device memory and decides *when and how* a kernel runs;
this package only says *what* the kernel is, and imports no CuPy.

Adding a base operation on CUDA: its C where it runs (``prelude.cu`` for the GPU tier's
distributed or replicated form), an entry in ``CudaRenderer.SCALAR`` or ``VECTOR`` (or in
a ``GroupOp`` the tables already name) and the method the entry names in
``expressions.py`` (the GPU tier) and, where fusable loops may use it, ``forall.py``;
a statement: ``statements.py`` (``base_stmt``, or ``_s_<OP>``).
"""
