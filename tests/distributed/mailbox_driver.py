"""Run under mpiexec by tests/distributed/test_mailbox.py: in-kernel collectives served by the
host (targets/mpi/mailbox.py) on every rank.

    mpiexec -n P python mailbox_driver.py OUT.json [POSTS]
    mpiexec -n P python mailbox_driver.py OUT.json POSTS gpu     # a CUDA kernel posts (each rank its GPU)

Each rank's "kernel" is ``walk`` (Numba, in the rank's main thread), posting its requests as
block 0's thread 0 of a GPU-tier kernel would, while ``mailbox.Server``'s thread answers them
with MPI: NUMB of a slice, the loop `while SOME(X) do i := STEP(X)` (one SOME and one FND-like
request an iteration, the owner clearing the bit), a Ctrl-C flag raised on one rank at one
SOME, a row broadcast from the last rank, the slice made whole; then POSTS posts (default 2000),
timed, and as many mpi4py all-reductions.
Rank 0 writes, per case, what every rank got and NumPy's answer.

With ``gpu``: a CUDA kernel (block 0's thread 0, as the GPU tier's code would) posts POSTS
requests (SUM, MIN, MAX of rank + i, cycling) to a mailbox in page-locked host memory it reads
and writes through unified addressing, spinning on volatile loads; the answers it records and
the time a post takes (kernel time / POSTS) are written.
"""
import json
import sys
import time

import numpy as np
from mpi4py import MPI
from numba import njit

from starvm.backends import get_backend
from starvm.distributed import distribute
from starvm.targets.mpi.mailbox import (M_COUNT, M_PAYLOAD, M_VALUE, OP_BCAST, OP_GATHER, OP_MAX, OP_MIN, OP_SUM,
                                        Server, mailbox, post)

NONE = np.int64(1 << 62)
EMPTY = np.zeros(0, np.uint64)


@njit(cache=True, nogil=True)
def walk(mb, w, start, n, flag_at, root, rank):
    original = w.copy()
    local = 0
    for t in range(w.shape[0]):
        x = w[t]
        while x:
            local += 1
            x &= x - np.uint64(1)
    numb, _f = post(mb, OP_SUM, local, 0, 0, EMPTY)
    found = np.zeros(n + 1, np.int64)
    steps, interrupted_at = 0, -1
    while True:
        anything = 0
        for t in range(w.shape[0]):
            if w[t] != 0:
                anything = 1
        some, flags = post(mb, OP_MAX, anything, 1 if steps == flag_at else 0, 0, EMPTY)
        if flags != 0 and interrupted_at < 0:
            interrupted_at = steps
        if some == 0:
            break
        first = NONE
        for t in range(w.shape[0]):
            if w[t] != 0:
                x, b = w[t], 0
                while (x >> np.uint64(b)) & np.uint64(1) == 0:
                    b += 1
                first = start + 64 * t + b + 1            # a 1-based global row
                break
        pos, _f = post(mb, OP_MIN, first, 0, 0, EMPTY)
        if start < pos <= start + 64 * w.shape[0]:       # the owner clears it
            r = pos - 1 - start
            w[r >> 6] &= ~(np.uint64(1) << np.uint64(r & 63))
        found[steps] = pos
        steps += 1
    row = np.full(3, np.uint64(7 + rank)) if rank == root else np.zeros(3, np.uint64)
    post(mb, OP_BCAST, 0, 0, root, row)
    got_row = mb[M_PAYLOAD:M_PAYLOAD + 3].copy()
    post(mb, OP_GATHER, n, 0, 0, original)
    whole = mb[M_PAYLOAD:M_PAYLOAD + ((n + 63) >> 6)].copy()
    return numb, found[:steps], interrupted_at, got_row, whole


@njit(cache=True, nogil=True)
def posts(mb, k):
    s = 0
    for i in range(k):
        v, _f = post(mb, OP_MAX, i, 0, 0, EMPTY)
        s += v
    return s


GPU_POSTS = r"""
typedef long long i64;
extern "C" __global__ void posts(i64* mb, i64 k, i64 rank, i64* answers) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    volatile i64* v = mb;
    for (i64 i = 0; i < k; ++i) {
        v[%(M_OP)d] = 1 + i %% 3;                 // OP_SUM, OP_MIN, OP_MAX
        v[%(M_VALUE)d] = rank + i;
        v[%(M_FLAGS)d] = 0;
        v[%(M_COUNT)d] = 0;
        __threadfence_system();                 // the payload before the request number
        i64 q = v[%(M_REQ)d] + 1;
        v[%(M_REQ)d] = q;
        while (v[%(M_DONE)d] != q) { }
        __threadfence_system();
        answers[i] = v[%(M_VALUE)d];
    }
}
"""


def gpu_posts(comm, reps: int) -> dict:
    import cupy as cp
    from starvm.distributed import local_backend
    from starvm.targets.mpi import mailbox as M
    local = local_backend("cupy", comm.rank)             # the rank's GPU
    B = distribute(local, comm)
    slots = {k: getattr(M, k) for k in ("M_OP", "M_VALUE", "M_FLAGS", "M_COUNT", "M_REQ", "M_DONE")}
    kernel = cp.RawKernel(GPU_POSTS % slots, "posts")
    mem = cp.cuda.alloc_pinned_memory((M.M_PAYLOAD + 4) * 8)
    mb = np.frombuffer(mem, np.int64, M.M_PAYLOAD + 4)
    mb[:] = 0
    answers = cp.zeros(reps, cp.int64)
    times = []
    for _ in range(2):                                   # the first launch compiles
        with Server(mb, B):
            start, end = cp.cuda.Event(), cp.cuda.Event()
            start.record()
            kernel((1,), (32,), (np.int64(mb.ctypes.data), np.int64(reps), np.int64(comm.rank), answers))
            end.record()
            end.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, end) / 1e3)
    i = np.arange(reps)
    op = 1 + i % 3
    lo, hi = i, i + comm.size - 1
    want = np.where(op == 1, comm.size * i + comm.size * (comm.size - 1) // 2, np.where(op == 2, lo, hi))
    return {"ok": bool((answers.get() == want).all()), "post_s": comm.allreduce(times[-1] / reps, op=MPI.MAX),
            "ranks": comm.size, "gpu": cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)["name"].decode()}


def main():
    comm = MPI.COMM_WORLD
    if len(sys.argv) > 3 and sys.argv[3] == "gpu":
        got = gpu_posts(comm, int(sys.argv[2]))
        oks = comm.allgather(got["ok"])
        if comm.rank == 0:
            with open(sys.argv[1], "w") as f:
                json.dump({**got, "ok": all(oks)}, f)
        return
    rank, size = comm.rank, comm.size
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 2000     # timed posts
    B = distribute(get_backend("numpy"), comm)
    cases = []
    for n, seed in ((1, 1), (64, 2), (65, 3), (200, 4)):
        bits = np.random.default_rng(seed).random(n) < 0.3
        lay = B.layout(n)
        w = np.zeros((lay.local_n + 63) // 64, np.uint64)
        for r in np.flatnonzero(bits[lay.start:lay.stop]):
            w[r >> 6] |= np.uint64(1) << np.uint64(r & 63)
        mb = mailbox(64)
        flag_rank = 1 % size
        with Server(mb, B) as server:
            numb, found, interrupted_at, row, whole = walk(mb, w, lay.start, n, 2 if rank == flag_rank else -1,
                                                           size - 1, rank)
        want = np.zeros((n + 63) // 64, np.uint64)
        for r in np.flatnonzero(bits):
            want[r >> 6] |= np.uint64(1) << np.uint64(r & 63)
        got = {"numb": int(numb), "found": found.tolist(), "interrupted_at": int(interrupted_at),
               "row": row.view(np.uint64).tolist(), "whole": whole.view(np.uint64).tolist(), "served": server.served}
        ref = {"numb": int(bits.sum()), "found": (np.flatnonzero(bits) + 1).tolist(),
               "interrupted_at": 2 if bits.sum() >= 2 else -1, "row": [7 + size - 1] * 3,
               "whole": want.tolist(), "served": 2 * int(bits.sum()) + 4}
        cases.append({"n": n, "same_on_all_ranks": comm.allgather(got) == [got] * size, "got": got, "ref": ref})
    small = mailbox(2)                       # a row of 3 words and a 200-bit slice do not fit
    with Server(small, B):
        post(small, OP_BCAST, 0, 0, 0, np.zeros(3, np.uint64))
        too_long = [int(small[M_COUNT])]
        post(small, OP_GATHER, 200, 0, 0, np.zeros(2, np.uint64))
        too_long.append(int(small[M_COUNT]))
        post(small, OP_SUM, rank, 0, 0, EMPTY)   # and the next request is served
        too_long.append(int(small[M_VALUE]))
    cases.append({"n": "room", "same_on_all_ranks": comm.allgather(too_long) == [too_long] * size,
                  "got": too_long, "ref": [-3, -4, size * (size - 1) // 2]})
    mb = mailbox(4)
    with Server(mb, B):
        posts(mb, 10)                        # compiled, warm
        comm.Barrier()
        t0 = time.perf_counter()
        posts(mb, reps)
        per_post = comm.allreduce((time.perf_counter() - t0) / reps, op=MPI.MAX)
    comm.Barrier()
    t0 = time.perf_counter()
    for _ in range(reps):
        comm.allreduce(1, op=MPI.MAX)
    per_allreduce = comm.allreduce((time.perf_counter() - t0) / reps, op=MPI.MAX)
    if rank == 0:
        with open(sys.argv[1], "w") as f:
            json.dump({"cases": cases, "ranks": size, "post_s": per_post, "mpi4py_allreduce_s": per_allreduce}, f)


if __name__ == "__main__":
    main()
