"""A `parallel for` compiled to ONE CUDA kernel (the CuPy backend's fused loops).

``forall.py`` runs a fusable loop as array operations; on the GPU that is a few dozen kernel
launches per loop. Here the loop body's IR is translated to CUDA C instead
(targets/cuda/forall.py, which needs no CuPy, so CI compiles the kernels with NVRTC), one thread
block per iteration (the paper's ``Warshall_kernel<<<n>>>``), each thread holding R words
of every slice value of the iteration (thread t: words t, t + blockDim, ...):

  * slices and words are per-thread register arrays, scalars per-iteration C variables
    (every thread of a block computes them alike, so control flow is uniform and barriers
    inside `if` are legal);
  * COL(i, T) reads words of column i; a bit test Y(j) is broadcast through shared memory
    by the thread holding word (j-1) div 64; SOME, NUMB and = on slices are block
    reductions (__syncthreads_or / _and, a shared atomicAdd);
  * every base operation executed adds one step per iteration (thread 0 counts, one
    atomicAdd per kind at the end), so the step counts equal the iteration-by-iteration
    run's.

The kernel reads the pre-loop snapshots the generated code made and writes the live tables,
which is the forall rule. Anything unusual — an index out of range, a division by zero, a
bit value other than 0/1 — only raises a flag; the tables are then restored from the
snapshots and the loop is rerun by ``forall.ForallKernel``, which reports the error exactly
as the other backends do. Loops whose slices do not all have one length, or that use
BITS literals, always run through ``ForallKernel``.
"""
from __future__ import annotations

from time import perf_counter

import cupy as cp

from ..ir.ops import BASE_OPS, Node
from ..targets.numpy.forall import ForallKernel
from ..execution.values import Bits, Table
from ..types import T
from ..targets.cuda.forall import KERNEL_NAME, forall_template, kernel_source, launch_args, launch_shape


class CudaForallKernel:
    """A fusable `parallel for` as one generated CUDA kernel, ForallKernel as the fallback."""

    def __init__(self, loop: Node, backend, counts: list[int], symbols: list, timing: list):
        self.fallback = ForallKernel(loop, backend, counts, symbols, timing)
        self.loop, self.B, self.counts, self.symbols, self.timing = loop, backend, counts, symbols, timing
        self.var, self.downto, self.info, self.snaps = loop.arg
        self.template = forall_template(loop, symbols)     # the CUDA source (targets/cuda/forall.py)
        self.param_order = [s for s in symbols if s not in self.info.private]
        self.compiled: dict[int, object] = {}
        self.launches = 0       # loops run as one CUDA kernel
        self.fallbacks = 0      # loops run by ForallKernel (unusual data, or an error)

    def _kernel(self, R: int):
        if R not in self.compiled:
            self.compiled[R] = cp.RawModule(code=kernel_source(self.template, R)).get_function(KERNEL_NAME)
        return self.compiled[R]

    def _common_length(self, env):
        n = None
        for sym in self.param_order:
            v = env[sym]
            if isinstance(v, Table) or (isinstance(v, Bits) and v.n >= 0):
                if n is None:
                    n = v.n
                elif v.n != n:
                    return None
            elif sym.type.is_vector:
                return None         # an unassigned slice: let the fallback report it
        return n

    def __call__(self, start: int, stop: int, values: tuple) -> None:
        env = dict(zip(self.symbols, values))
        n = self._common_length(env) if self.template is not None else None
        m = (start - stop + 1) if self.downto else (stop - start + 1)
        if m <= 0:
            return None
        if n is None or n == 0:
            self.fallbacks += 1
            return self.fallback(start, stop, values)
        t0 = perf_counter()
        W, threads, R = launch_shape(n)
        status = cp.zeros(1 + len(BASE_OPS), dtype=cp.uint64)     # [error flag, steps by kind]
        args, shared_bits = launch_args(start, m, n, W, status, self.param_order, self.info, env)
        self._kernel(R)((m,), (threads,), tuple(args))
        self.launches += 1
        flag, *counts = status.get().tolist()
        if flag:
            self.fallbacks += 1
            # restore what the kernel wrote, and let the array evaluator report the error
            for orig, snap in self.snaps.items():
                if orig.type is T.TABLE and orig in env and snap in env:
                    cp.copyto(env[orig].data, env[snap].data)
            return self.fallback(start, stop, values)
        for v, words in shared_bits:
            v.v = words
        for k, c in enumerate(counts):
            if c:
                self.counts[k] += int(c)
        self.timing[0] += 1
        self.timing[1] += perf_counter() - t0
