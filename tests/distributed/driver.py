"""Run under mpiexec by tests/distributed: many Star programs in one MPI start.

    mpiexec -n P python driver.py OUT.json ALIGN FILE...
    mpiexec -n P python driver.py OUT.json ALIGN --rows SEEDS
    mpiexec -n P python driver.py OUT.json ALIGN --search SEEDS
    mpiexec -n P python driver.py OUT.json ALIGN --graphs FOLDER

Every rank runs every program on a distributed machine (rows split into blocks of ALIGN;
DRIVER_LOCAL=emulated: device-style local vectors, =cupy: the ranks' GPUs; DRIVER_PATH: the array collectives' path);
rank 0 writes {file: {"out", "err", "steps", "same_on_all_ranks"}} to OUT.json. With --rows,
GATHER, SCATTER, GROUPMIN, IOTA, COMPACT, EXPAND and WARSHALL-adapt run on random tables on the distributed machine and, on
every rank alone, on a NumPy machine (the reference); rank 0 writes the list of cases with
whether results and steps agree and how many row-move kernel calls ran.

Every machine here runs the interpreter alone (jit="off", as the reference does): with the
suite's threshold (tests/conftest.py) --jit auto compiles nothing, but installing the tier renders
every routine's Numba code, a third to a half of these runs' time on each rank. The compiled tier
on ranks is jit_driver.py's (tests/distributed/test_mpi_jit.py).
"""
import io
import json
import os
import sys

from mpi4py import MPI

import starvm
from starvm.backends import get_backend
from starvm.distributed import distribute
from starvm.errors import StarError


def local_backend():
    """The ranks' local backend: NumPy, or with DRIVER_LOCAL=emulated the emulated device
    (device-style word-array vectors, as CuPy's), which runs the paths a GPU rank takes, or
    with DRIVER_LOCAL=cupy real GPUs (each rank its own: rank modulo the visible devices)."""
    local = os.environ.get("DRIVER_LOCAL")
    if local == "emulated":
        from starvm.backends.emulated_device import EmulatedDevice
        return EmulatedDevice()
    if local == "cupy":
        from starvm.distributed import local_backend as rank_backend
        return rank_backend("cupy", MPI.COMM_WORLD.rank)
    return get_backend("numpy")


def collectives(comm):
    """With DRIVER_PATH=nccl|cuda-aware-mpi|host-staging, that path of the array collectives
    over the NCCL stand-in's 'GPU' (every array counts as a device array); else None (the
    path collectives.choose picks for the local backend)."""
    path = os.environ.get("DRIVER_PATH")
    if not path:
        return None
    from nccl_standin import standin_access      # beside this script, which is run as a file: its folder is on sys.path
    from starvm.distributed import wrap
    from starvm.distributed.collectives import choose
    # DRIVER_SHARED_GPU=1: every rank's stand-in is one GPU (--profile says they share it)
    gpu = "standin-gpu-shared" if os.environ.get("DRIVER_SHARED_GPU") == "1" else None
    coll = choose(wrap(comm), standin_access(comm.rank, gpu, cuda_aware=path == "cuda-aware-mpi"), path)
    assert coll.path == path, (coll.path, coll.reason)
    return coll


def run_one(path: str, align: int, comm) -> dict:
    out = io.StringIO()
    backend = distribute(local_backend(), comm, align, collectives(comm))
    m = starvm.Machine(backend=backend, out=out, jit="off")
    err = ""
    try:
        m.run_file(path)
    except StarError as e:
        err = e.render()
    return {"out": out.getvalue(), "err": err, "steps": m.stats, "path": backend.collective_path}


def row_cases(seeds: int, align: int, comm) -> list:
    import numpy as np
    # one distributed machine and one NumPy machine for all the cases: loading the library
    # routines (parse, check, the compiled tier's analysis) is most of a machine's cost
    machines = {dist: starvm.Machine(backend=distribute(local_backend(), comm, align, collectives(comm)) if dist
                                     else get_backend("numpy"), out=io.StringIO(), jit="off") for dist in (True, False)}
    cases = []
    for seed in range(seeds):
        rng = np.random.default_rng(seed)           # the same tables on every rank
        n = int(rng.choice([1, 2, 5, 63, 64, 65, 130, 200]))
        m = int(rng.choice([1, 3, 64, 100, 129]))
        k = int(rng.choice([1, 3, 8, 70]))
        bits = max(1, int(n).bit_length())
        T = rng.random((n, k)) < 0.5
        IXg = np.array([[(v >> (bits - 1 - c)) & 1 for c in range(bits)] for v in rng.integers(1, n + 1, m)], dtype=bool)
        IXs = np.array([[(v >> (bits - 1 - c)) & 1 for c in range(bits)] for v in rng.integers(1, n + 1, n)], dtype=bool)
        Xm = rng.random(m) < 0.6
        Xn = rng.random(n) < 0.6
        Rg = rng.random((m, k)) < 0.5
        Rs = rng.random((n, k)) < 0.5
        r = max(1, m // 8)                              # SCATTER into a table of few rows
        rbits = max(1, r.bit_length())
        T2 = rng.random((m, k)) < 0.5
        IXr = np.array([[(v >> (rbits - 1 - c)) & 1 for c in range(rbits)] for v in rng.integers(1, r + 1, m)], dtype=bool)
        Rr = rng.random((r, k)) < 0.5
        G = rng.integers(0, 4, (n, 2)).astype(bool)
        rng2_adj = rng.random((n, n)) < 2.0 / n
        K = rng.random((n, 3)) < 0.5
        results = []
        for dist in (True, False):
            mach = machines[dist]
            calls_before = mach.native_timing[0]
            R1, R2 = mach.table(Rg), mach.table(Rs)
            mach.call("GATHER", mach.table(T), mach.table(IXg), Xm, R1)
            s1 = mach.last_call_stats
            mach.call("SCATTER", mach.table(T), mach.table(IXs), Xn, R2)
            s2 = mach.last_call_stats
            Z = mach.slice(np.zeros(n, dtype=bool))
            mach.call("GROUPMIN", mach.table(G), mach.table(K), Xn, Z)
            s3 = mach.last_call_stats
            I = mach.table(np.zeros((n, 5), dtype=bool))
            mach.call("IOTA", I)
            R4 = mach.table(Rr)
            mach.call("SCATTER", mach.table(T2), mach.table(IXr), Xm, R4)
            s6 = mach.last_call_stats
            W = mach.table(rng2_adj)                    # WARSHALL-adapt: one broadcast per pivot
            mach.call("WARSHALL_adapt", n, W)
            s7 = mach.last_call_stats
            C = mach.table(Rs)                          # COMPACT in place, then EXPAND back into R3
            mach.call("COMPACT", C, Xn, C)
            s4 = mach.last_call_stats
            R3 = mach.table(np.zeros((n, k), dtype=bool))
            mach.call("EXPAND", C, Xn, R3)
            s5 = mach.last_call_stats
            results.append(([R1.to_numpy().tolist(), R2.to_numpy().tolist(), Z.to_numpy().tolist(),
                              I.to_numpy().tolist(), C.to_numpy().tolist(), R3.to_numpy().tolist(),
                              R4.to_numpy().tolist(), W.to_numpy().tolist()], [s1, s2, s3, s4, s5, s6, s7],
                             mach.native_timing[0] - calls_before))
        (got, got_steps, calls), (ref, ref_steps, _) = results
        cases.append({"seed": seed, "n": n, "m": m, "k": k, "same": got == ref,
                      "same_steps": got_steps == ref_steps, "kernel_calls": calls})
    return cases


def search_cases(seeds: int, align: int, comm) -> list:
    """MATCH, MIN, MAX, HIT and SETMIN on random tables: the distributed machine over the
    emulated device (its search kernels per rank, distributed/search.py) against one NumPy
    machine; the results, the steps and how many kernel calls ran."""
    import numpy as np
    from starvm.backends.emulated_device import EmulatedDevice
    machines = {dist: starvm.Machine(backend=distribute(EmulatedDevice(), comm, align, collectives(comm)) if dist
                                     else get_backend("numpy"), out=io.StringIO(), jit="off") for dist in (True, False)}
    cases = []
    for seed in range(seeds):
        rng = np.random.default_rng(1000 + seed)
        n = int(rng.choice([1, 2, 5, 63, 64, 65, 130, 200]))
        k = int(rng.choice([1, 3, 8, 64]))
        levels = int(rng.choice([2, 4, 1 << min(k, 20)]))     # few values: ties, equal rows
        vals = rng.integers(0, levels, n)
        T = np.array([[(int(v) >> (k - 1 - c)) & 1 for c in range(k)] for v in vals], dtype=bool).reshape(n, k)
        F = T.copy()
        F[rng.random((n, k)) < 0.1] ^= True
        X = rng.random(n) < float(rng.choice([0.0, 0.05, 0.7, 1.0]))
        v = T[int(rng.integers(0, n))] if rng.random() < 0.7 else rng.random(k) < 0.5
        results = []
        for dist in (True, False):
            mach = machines[dist]
            calls_before = mach.native_timing[0]
            Tt, Ft = mach.table(T), mach.table(F)
            got, steps = [], []
            for name, args in (("MATCH", (Tt, X, mach.word(v))), ("MIN", (Tt, X)), ("MAX", (Tt, X)),
                               ("HIT", (Tt, Ft, X)), ("SETMIN", (Tt, Ft, X))):
                Z = mach.slice(np.zeros(n, dtype=bool))
                mach.call(name, *args, Z)
                got.append(Z.to_numpy().tolist())
                steps.append(mach.last_call_stats)
            results.append((got, steps, mach.native_timing[0] - calls_before))
        (got, got_steps, calls), (ref, ref_steps, _) = results
        cases.append({"seed": seed, "n": n, "k": k, "same": got == ref, "same_steps": got_steps == ref_steps,
                      "kernel_calls": calls, "shared_gpu": [line for line in machines[True].backend.profile_lines() if "share one GPU" in line]})
    return cases


def graph_cases(folder: str, align: int, comm) -> list:
    """Per-rank graph input (distributed/graph_input.py) against the whole graph one process
    makes: R-MAT specs (undirected, directed, tiny, unweighted) and edge-list files (1-based
    with weights and comments, 0-based without weights, empty, one line, an unusual one that
    every rank must leave to the whole-file reader); the arcs each rank holds, and the rows
    of a table each rank receives."""
    import numpy as np
    from pathlib import Path
    from starvm.distributed.comm import MpiComm
    from starvm.distributed.graph_input import rank_edgelist, rank_rmat
    from starvm.distributed.partition import layout
    from starvm.graphs import load, rmat, write_edgelist
    c = MpiComm(comm)
    files = {"weights.txt": None, "snap.txt": "0 1\n1 2\n# comment\n2 0\n0 3\n3 3\n",
             "repeats.txt": "1 2 5\n2 1 5\n1 2 5\n3 1 2\n1 3 7\n2 3 1\n2 3 1\n3 2 1\n4 4 1\n1 2 6\n" * 3,
             "empty.txt": "# nothing\n", "one.txt": "5 7 3\n", "mixed.txt": "1 2\n2 3 4\n3 1\n" * 5}
    if c.rank == 0:
        write_edgelist(rmat(7, seed=11, directed=True), Path(folder) / "weights.txt", comment="made by rmat")
        for name, text in files.items():
            if text is not None:
                (Path(folder) / name).write_text(text)
    comm.Barrier()
    cases = []
    made = [(f"rmat {kw}", (lambda kw=kw: rank_rmat(c, **kw)), (lambda kw=kw: rmat(**kw)))
            for kw in (dict(scale=6, seed=1), dict(scale=9, seed=5, edge_factor=8), dict(scale=5, seed=3, directed=True),
                       dict(scale=0, seed=2), dict(scale=4, seed=9, wmax=1))]
    made += [(f"file {name}", (lambda p=str(Path(folder) / name): rank_edgelist(c, p, "g")),
              (lambda p=str(Path(folder) / name): load(p))) for name in files]
    for label, mine, whole in made:
        g, ref = mine(), whole()
        case = {"case": label, "per_rank": g is not None}
        if g is not None:
            w = g.whole()
            lay = layout(ref.m, c.size, c.rank, align)
            rows = g.rows_for(lay)
            case["same"] = bool((w.n, w.m, g.wbits) == (ref.n, ref.m, ref.wbits) and (w.src == ref.src).all()
                                and (w.dst == ref.dst).all() and (w.weight == ref.weight).all())
            case["rows_ok"] = bool((rows[:, 1] == ref.src[lay.start:lay.stop]).all()
                                   and (rows[:, 3] == ref.weight[lay.start:lay.stop]).all())
            case["held"] = int(len(g.arcs))
            case["m"] = ref.m
            from starvm.graphs.star import adjacency_words
            adj_lay = layout(ref.n, c.size, c.rank, align)
            whole_adj = np.unpackbits(adjacency_words(ref).view(np.uint8), axis=1, bitorder="little")
            mine_adj = np.unpackbits(g.adjacency_rows(adj_lay).view(np.uint8), axis=1, bitorder="little")
            case["adjacency_ok"] = bool((mine_adj[:, :adj_lay.local_n] == whole_adj[:, adj_lay.start:adj_lay.stop]).all()
                                        and not mine_adj[:, adj_lay.local_n:].any())
            u, uref = g.undirected().whole(), ref.undirected()      # the undirected reading, per rank
            case["undirected_same"] = bool((u.n, u.m) == (uref.n, uref.m) and (u.src == uref.src).all()
                                           and (u.dst == uref.dst).all() and (u.weight == uref.weight).all())
        cases.append(case)
    return cases


def main() -> None:
    dest, align, files = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    comm = MPI.COMM_WORLD
    if files[0] == "--graphs":
        cases = graph_cases(files[1], align, comm)
        everyone = comm.allgather([{k: v for k, v in x.items() if k != "held"} for x in cases])
        held = comm.allgather([x.get("held") for x in cases])
        if comm.rank == 0:
            for i, x in enumerate(cases):
                x["held"] = [h[i] for h in held]
            with open(dest, "w") as fh:
                json.dump({"cases": cases, "same_on_all_ranks": all(e == everyone[0] for e in everyone)}, fh)
        return
    if files[0] == "--search":
        cases = search_cases(int(files[1]), align, comm)
        everyone = comm.allgather(cases)
        if comm.rank == 0:
            with open(dest, "w") as fh:
                json.dump({"cases": cases, "same_on_all_ranks": all(c == everyone[0] for c in everyone)}, fh)
        return
    if files[0] == "--rows":
        cases = row_cases(int(files[1]), align, comm)
        everyone = comm.allgather(cases)
        # the NCCL stand-in's sends and receives (DRIVER_PATH=nccl: the all-to-alls), all ranks
        p2p = sum(comm.allgather(sum(c[0] in ("send", "recv") for c in sys.modules["nccl_standin"].CALLS)
                                 if "nccl_standin" in sys.modules else 0))
        if comm.rank == 0:
            with open(dest, "w") as fh:
                json.dump({"cases": cases, "same_on_all_ranks": all(c == everyone[0] for c in everyone),
                           "nccl_point_to_point": p2p}, fh)
        return
    results = {}
    for f in files:
        r = run_one(f, align, comm)
        everyone = comm.allgather(r)
        r["same_on_all_ranks"] = all(x == everyone[0] for x in everyone)
        results[f] = r
    if comm.rank == 0:
        with open(dest, "w") as fh:
            json.dump(results, fh)


if __name__ == "__main__":
    main()
