"""How IR becomes code: one folder per target, one renderer each.

A renderer walks the checked IR of ``starvm/ir`` and emits what runs it on one target. Each
is a table from an op (``starvm/ir/ops.py``'s ``Op`` or a ``GroupOp``) to a template, kept
in a class a subclass overrides entry by entry (as tinygrad's renderers are):

* ``python/`` — the interpreter's renderer: IR to Python source, one function per Star
  routine, a base operation one call of ``runtime/ops.py`` (``codegen.py``);
* ``numpy/`` — a fusable ``parallel for`` run once for all iterations as array operations,
  NumPy on the CPU and CuPy on the GPU through ``backend.xp`` (``forall.py``);
* ``numba/`` — the compiled CPU tier's renderer: IR to the source of a module of ``@njit``
  functions (``lower.py``) over the base-operation kernels on packed bit columns
  (``kernels.py``);
* ``mpi/`` — the numba renderer for MPI ranks (``lower.py`` subclasses ``numba/``'s and
  overrides the operations that cross ranks, ``kernels.py``), and the fused ``parallel for``
  of the distributed backend (``forall.py``, a subclass of ``numpy/``'s);
* ``cuda/`` — the one CUDA renderer (``renderer.py``) and its two kernels: the GPU tier's
  routine kernels (``routine.py``) and the CuPy backend's fused ``parallel for``
  (``forall.py``), the fixed CUDA C in ``.cu`` files.

``layout.py`` is the numbering generated code, kernels and host share (status-array slots,
step-counter indices, error codes), ``mailbox_layout.py`` that of the mailbox a GPU rank's
running kernel posts its cross-rank steps to (``cuda/ranks.py``) and its host answers
(``mpi/mailbox.py``); ``common.py`` what the compiled targets' renderers share
with the tiers (``Unsupported``, the error ``Site`` table, ``Compiled`` / ``Lowered``). When and how rendered code runs (compiling, caching,
calling, falling back) is ``starvm/jit``'s.
"""
