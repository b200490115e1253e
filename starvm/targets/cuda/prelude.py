"""The fixed CUDA C that every routine kernel of the GPU tier starts with (routine.py): the
text is in prelude.cu, int64.cu and checked_int.cu beside this module.

Conventions (the macros R, KW and RP are defined per compiled instance):

* a *slice* is distributed over the grid: ``V<R>``, thread ``gt`` holds words
  ``gt + r * G`` (r < R, G threads in all); every slice and every table column has the
  same owner for a word, so element-wise operations, COL reads and COL writes need no
  barrier. Inside a `parallel for` a warp runs one iteration and its slices are ``V<RP>``,
  lane l holding words ``l + 32 r``;
* a *word* is replicated: ``V<KW>``, every thread holds all its words (bit tests, TRIM,
  compare, ADD and STEP on words are local);
* a table is ``Tb``: its k x W words in global memory, column c word w at ``d[c * W + w]``;
* scalar control flow is uniform in the whole grid (in a warp inside `parallel for`), so a
  failure is too: every thread leaves the routine, thread 0 wrote the status.

Reductions over the grid (SOME, NUMB, FND, STEP, FRST, bit tests of slices) combine warp
shuffles, one atomic per warp into a ring of three accumulators, and one grid barrier.
The barrier is one arrival counter in global memory, zeroed by the host before each launch
(the launch is cooperative, so every block is resident); it needs no cooperative-groups header, so NVRTC
compiles the kernels without the CUDA include tree (tests/gpu_sources).
"""
from __future__ import annotations

from importlib.resources import files


def cuda_text(name: str) -> str:
    """One of the package's .cu files (package data: they ship in the wheel)."""
    return files(__package__).joinpath(name).read_text()


# the 64-bit integer types and the checked arithmetic on them, which every kernel rendered from
# the IR uses (the fused parallel-for kernels of forall.py start with these two alone)
INT64 = cuda_text("int64.cu") + cuda_text("checked_int.cu")
PRELUDE = "\n" + cuda_text("int64.cu") + cuda_text("prelude.cu") + cuda_text("checked_int.cu")

# status slots and error codes, as layout.py numbers them
from ..layout import S_A, S_B, S_C, S_CODE, S_D, S_LEFT, S_NODE, S_OUT, S_SP, S_STACK, STATUS_SIZE, E  # noqa: E402


def defines(nkinds: int) -> str:
    codes = {k: v for k, v in vars(E).items() if k.isupper()}
    lines = [f"#define NKINDS {nkinds}"]
    lines += [f"#define {name} {value}" for name, value in (
        ("S_NODE", S_NODE), ("S_CODE", S_CODE), ("S_A", S_A), ("S_B", S_B), ("S_C", S_C), ("S_D", S_D),
        ("S_LEFT", S_LEFT), ("S_SP", S_SP), ("S_STACK", S_STACK), ("S_OUT", S_OUT), ("STATUS_SIZE", STATUS_SIZE))]
    lines += [f"#define E_{name} {value}" for name, value in sorted(codes.items())]
    lines += [f"#define {name} {value}" for name, value in (("OUT_ON", OUT_ON), ("OUT_PUB", OUT_PUB), ("OUT_ACK", OUT_ACK), ("OUT_ROUND", OUT_ROUND))]
    lines.append(f"#define E_RERUN {E_RERUN}")
    lines.append(f"#define E_POOL {E_POOL}")
    return "\n".join(lines) + "\n"


# a failure inside a `parallel for` spread over warps: the host restores the tables and
# runs the call interpreted, which reports it exactly (the first failing iteration in order)
E_RERUN = 100
# the local tables' pool is too small (a: the words it needs): the host grows it and launches
# the call again (cuda_runtime.GpuRoutine.run), tables restored, nothing of the first launch kept
E_POOL = 101

# output while a kernel runs (prelude.cu out_pub, out_room; jit/cuda_output.py): words after the
# Ctrl-C flag's in the same page-locked block. OUT_ON: the host drains this launch's records;
# OUT_PUB, OUT_ACK: round << 40 | words, the kernel's finished write calls, the host's written
OUT_ON, OUT_PUB, OUT_ACK = 1, 2, 3
OUT_ROUND = 40
