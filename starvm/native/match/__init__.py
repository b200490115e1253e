"""MATCH(T, X, v, var Z) of stdlib/search.star: Z marks the rows X marks whose value in T is the
word v (its Star body there is the definition).

  steps     ``body_steps(k, pattern_ones)``
  kernels   for distributed ranks only (``KERNELS``: distributed/search.py runs them on each
            rank's rows, with its own argument guard): cuda.py + match.cu on GPU ranks,
            emulated.py on the emulated device. None on one device: the GPU tier's compiled
            MATCH body is within 2x of the CUDA kernel (bench/results/natives_gpu_h100.md),
            and the compiled tier does not run on distributed ranks (docs/architecture.md).
"""
from __future__ import annotations

from ..steps import CALL, Steps, of

HOME = "stdlib/search.star"
KERNELS = {f"mpi:{local}": "starvm.distributed.search:make_match" for local in ("cupy", "emulated")}


def body_steps(k: int, pattern_ones: int) -> Steps:
    # Z := X; for j := 1 to NCOLS(T) do
    #   if v(j) = 1 then Z := Z and COL(j, T) else Z := Z and not COL(j, T);
    return CALL + of(ticks=k, BIT_GET=k, COL_GET=k, AND=k, NOT=k - pattern_ones)
