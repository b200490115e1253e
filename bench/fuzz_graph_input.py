"""Graph-input fuzzing (issue 37): mutated graph files of every format and weight mode, each
read by starvm.graphs.load and, where it loads, by a Star program that reads its arcs and
weights; an edge list also by 2 or 3 ranks (distributed/graph_input.py on threads). The
only acceptable outcomes are a graph or one clear error (GraphFileError naming the file,
OSError with a reason, a StarError of the program); anything else is an internal error.
Where the vectorised reader takes a file, the line reader must give the same graph; the
ranks must give the graph one process reads.

    python bench/fuzz_graph_input.py --count 10000 --seed 1      (nice it: one core)

tests/graphs/test_fuzz_reading.py runs a small sample in CI."""
from __future__ import annotations

import argparse
import io
import math
import random
import sys
import tempfile
import time
import traceback
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

import starvm  # noqa: E402
import starvm.graphs as sg  # noqa: E402
from starvm.errors import GraphFileError, StarError  # noqa: E402
from starvm.graphs import fast_io, io as gio  # noqa: E402
from starvm.graphs.weights import parse_mode  # noqa: E402

BOUNDARY = ["9223372036854775807", "9223372036854775808", "18446744073709551615", "18446744073709551616",
            "-9223372036854775808", "-9223372036854775809", "1e300", "-1e300", "1e-300", "nan", "NaN", "inf",
            "-inf", "Infinity", "1.5", "2.5", "0.5", "-0.0", "9007199254740993", "99999999999999999999999",
            "0x10", "1_000", "+7", "007", "0", "1", "-1", "3.0", "1e3", "4294967296", "2.0e19"]
MODES = ["exact", "auto", "ignore", "round", "scale=1000", "scale=0.001", "auto", "exact"]
BOM = b"\xef\xbb\xbf"
PROGRAM = """var L, R: table(GRAPH_M, GRAPH_VBITS); W: table(GRAPH_M, GRAPH_WBITS); s: integer;
begin
  if GRAPH_N <= 64 then
  begin
    GRAPH_EDGES(L, R, W);
    s := 0;
    writeln(GRAPH_N, ' ', GRAPH_M, ' ', GRAPH_WBITS);
  end;
end.
"""


# ------------------------------------------------------------------ inputs
def _base(rng: random.Random):
    """A small valid graph file: (format, bytes)."""
    n = rng.choice([0, 1, 2, 3, 5, 9, 40])
    m = 0 if n == 0 else rng.randint(0, 12)
    arcs = [(rng.randint(1, n), rng.randint(1, n), rng.randint(0, 20)) for _ in range(m)]
    fmt = rng.choice(["mtx", "mtx", "dimacs", "edgelist", "edgelist", "npy"])
    if fmt == "mtx":
        field = rng.choice(["integer", "real", "pattern"])
        sym = rng.choice(["general", "symmetric"])
        if sym == "symmetric":
            arcs = [(max(u, v), min(u, v), w) for u, v, w in arcs]
        lines = [f"%%MatrixMarket matrix coordinate {field} {sym}", "% a comment", f"{n} {n} {len(arcs)}"]
        for u, v, w in arcs:
            lines.append(f"{u} {v}" if field == "pattern" else f"{u} {v} {w if field == 'integer' else w + 0.0}")
        return fmt, ("\n".join(lines) + "\n").encode()
    if fmt == "dimacs":
        lines = ["c made up", f"p sp {n} {len(arcs)}"] + [f"a {u} {v} {w}" for u, v, w in arcs]
        return fmt, ("\n".join(lines) + "\n").encode()
    if fmt == "edgelist":
        base = rng.choice([0, 1])
        three = rng.random() < 0.7
        lines = ["# u v w"] + [f"{u - base} {v - base}" + (f" {w}" if three else "") for u, v, w in arcs]
        return fmt, ("\n".join(lines) + "\n").encode()
    dtype = rng.choice([np.int64, np.uint64, np.float64, np.float32, bool, np.int8, np.uint8])
    a = np.zeros((n, n), dtype=dtype)
    for u, v, w in arcs:
        a[u - 1, v - 1] = w
    buf = io.BytesIO()
    np.save(buf, a)
    return fmt, buf.getvalue()


def _mutate_text(rng: random.Random, data: bytes) -> bytes:
    kind = rng.randrange(12)
    text = data.decode("utf-8", "surrogateescape")
    lines = text.split("\n")
    if kind == 0:                                  # a number replaced by a boundary value
        tokens = [(i, j) for i, line in enumerate(lines) for j, _ in enumerate(line.split())]
        if tokens:
            i, j = rng.choice(tokens)
            parts = lines[i].split()
            parts[j] = rng.choice(BOUNDARY)
            lines[i] = " ".join(parts)
    elif kind == 1:                                # the last field of a line: a weight
        i = rng.randrange(len(lines))
        if lines[i].split():
            lines[i] = " ".join(lines[i].split()[:-1] + [rng.choice(BOUNDARY)])
    elif kind == 2:
        return BOM + data
    elif kind == 3:
        at = rng.randrange(len(data) + 1)
        return data[:at] + BOM + data[at:]
    elif kind == 4:
        return data[:rng.randrange(len(data) + 1)]                       # truncated
    elif kind == 5:
        return rng.choice([b"", b"\n", b"   \n\n", b"# only a comment\n", b"%\n", BOM, b"\x00\x00"])
    elif kind == 6:                                # a bogus header
        words = ["%%MatrixMarket", "matrix", "coordinate", "array", "complex", "hermitian", "p", "sp", "max",
                 "integer", "real", "pattern", "skew-symmetric", "-1", "3", "x"]
        lines[0] = " ".join(rng.choice(words) for _ in range(rng.randint(0, 6)))
    elif kind == 7:                                # a size line or problem line changed
        i = min(len(lines) - 1, rng.choice([1, 2]))
        lines[i] = " ".join(rng.choice(BOUNDARY + ["3", "0", "2"]) for _ in range(rng.randint(1, 4)))
    elif kind == 8:                                # a random byte
        b = bytearray(data)
        if b:
            b[rng.randrange(len(b))] = rng.randrange(256)
        return bytes(b)
    elif kind == 9:                                # a line doubled or dropped
        i = rng.randrange(len(lines))
        if rng.random() < 0.5:
            lines.insert(i, lines[i])
        else:
            del lines[i]
    elif kind == 10:                               # line ends and separators
        text = "\n".join(lines)
        return text.replace("\n", rng.choice(["\r\n", "\r", "\n\n", " \n"])).replace(" ", rng.choice([" ", "\t", ",", "  "])).encode("utf-8", "surrogateescape")
    else:                                          # a huge vertex number
        i = rng.randrange(len(lines))
        parts = lines[i].split()
        if parts:
            parts[0] = rng.choice(["9223372036854775807", "9223372036854775808", "4611686018427387904",
                                   "4611686018427387903", "99999999999999999999", "2147483648"])
            lines[i] = " ".join(parts)
    return "\n".join(lines).encode("utf-8", "surrogateescape")


def _mutate_npy(rng: random.Random, data: bytes) -> bytes:
    kind = rng.randrange(5)
    if kind == 0:
        return data[:rng.randrange(len(data) + 1)]
    if kind == 1:                                  # a bogus shape in the header
        shape = rng.choice(["(100000, 100000)", "(3,)", "(2, 3)", "(-1, -1)", "(10**20, 10**20)", "()",
                            "(18446744073709551616, 1)", "(3, 3)"])
        at = data.find(b"'shape': ")
        if at < 0:
            return data
        return data.replace(data[at:data.find(b")", at) + 1], b"'shape': " + shape.encode(), 1)
    if kind == 2:                                  # a boundary value in a float or integer matrix
        n = rng.randint(1, 4)
        dtype = rng.choice([np.float64, np.uint64, np.int64, np.float16])
        vals = {np.float64: [1e300, np.nan, np.inf, -np.inf, 2.0 ** 64, 2.0 ** 63, 1.5, -1.0, 1e-300, 2.0 ** 53 + 2],
                np.uint64: [2 ** 64 - 1, 2 ** 63, 2 ** 63 - 1, 1],
                np.int64: [-2 ** 63, 2 ** 63 - 1, -1, 5],
                np.float16: [np.inf, 65504, 0.5, np.nan]}[dtype]
        a = np.zeros((n, n), dtype=dtype)
        for _ in range(rng.randint(1, 3)):
            a[rng.randrange(n), rng.randrange(n)] = rng.choice(vals)
        buf = io.BytesIO()
        np.save(buf, a)
        return buf.getvalue()
    if kind == 3 and data:
        b = bytearray(data)
        b[rng.randrange(len(b))] = rng.randrange(256)
        return bytes(b)
    return rng.choice([b"", b"\x93NUMPY", b"\x93NUMPY\x01\x00\x10\x00{'descr': '<i8'}    \n", BOM + data])


def inputs(rng: random.Random, count: int):
    """``count`` (format, bytes, weight mode) triples."""
    for _ in range(count):
        fmt, data = _base(rng)
        for _ in range(rng.choice([1, 1, 1, 2, 3])):
            data = _mutate_npy(rng, data) if fmt == "npy" else _mutate_text(rng, data)
        yield fmt, data, rng.choice(MODES)


# ------------------------------------------------------------------ outcomes
def _same(a, b) -> bool:
    return (a.n == b.n and a.src.tolist() == b.src.tolist() and a.dst.tolist() == b.dst.tolist()
            and [int(x) for x in a.weight] == [int(x) for x in b.weight] and a.directed == b.directed
            and a.meta.get("weights_error") == b.meta.get("weights_error"))


def classify(fmt: str, data: bytes, mode: str, folder: Path, *, run_program=True, ranks=0) -> tuple[str, str]:
    """('ok' | 'clear_error' | 'internal' | 'mismatch', detail)."""
    path = folder / ("g.npy" if fmt == "npy" else "g.data")
    path.write_bytes(data)
    try:
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("error")          # a raw RuntimeWarning is an internal error too
            try:
                g = sg.load(path, fmt, weights=mode)
            except GraphFileError as e:
                if not e.message.startswith(str(path)):
                    return "internal", f"GraphFileError not naming the file: {e.message}"
                return "clear_error", e.message
            except OSError as e:
                return ("clear_error", str(e.strerror)) if e.strerror else ("internal", f"OSError without reason {e!r}")
            if fmt != "npy":
                body = data[3:] if data.startswith(BOM) else data
                fast = {"mtx": fast_io.fast_mtx, "dimacs": fast_io.fast_dimacs,
                        "edgelist": fast_io.fast_edgelist}[fmt](body, parse_mode(mode))
                if fast is not None:
                    slow = {"mtx": gio._read_mtx, "dimacs": gio._read_dimacs,
                            "edgelist": gio._read_edgelist}[fmt](body.decode(), str(path), parse_mode(mode))
                    if not _same(fast, slow):
                        return "mismatch", "the vectorised and the line reader differ"
            if ranks and fmt == "edgelist":
                detail = _ranks_agree(path, mode, g, ranks)
                if detail:
                    return "mismatch", detail
            if run_program and g.n <= 64:
                out = io.StringIO()
                try:
                    starvm.Machine(out=out, graph=g, max_steps=200_000).run(PROGRAM, "fuzz.star")
                except StarError as e:
                    if "weights" in str(e) or "GRAPH" in str(e):
                        return "clear_error", str(e).splitlines()[0]
                    return "internal", f"unexpected Star error: {e}"
                if g.n and out.getvalue().split() != [str(g.n), str(g.m), str(g.wbits)]:
                    return "mismatch", f"program printed {out.getvalue()!r} for {g!r}"
            return "ok", repr(g)
    except Exception as e:  # noqa: BLE001 - that is what is counted
        return "internal", "".join(traceback.format_exception_only(type(e), e)).strip() + "\n" + traceback.format_exc()


def _ranks_agree(path: Path, mode: str, g, ranks: int) -> str | None:
    from starvm.distributed.graph_input import rank_graph
    from tests.graphs.thread_comm import run_ranks
    parts = run_ranks(ranks, lambda comm: rank_graph(comm, None, str(path), "edgelist", mode))
    if parts[0] is None:
        return None if all(p is None for p in parts) else "some ranks read alone, others not"
    arcs = np.concatenate([p.arcs for p in parts])
    arcs = arcs[np.argsort(arcs[:, 0], kind="stable")]
    if (parts[0].n, arcs[:, 1].tolist(), arcs[:, 2].tolist(), arcs[:, 3].tolist()) != \
            (g.n, g.src.tolist(), g.dst.tolist(), [int(x) for x in g.weight]):
        return f"the ranks' graph differs from one process's ({parts[0].n} vs {g.n})"
    return None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--ranks", type=int, default=3, help="also read each edge list on this many ranks (0: not)")
    args = ap.parse_args(argv)
    counts: dict[str, int] = {}
    shown = 0
    t0 = time.time()
    with tempfile.TemporaryDirectory() as d:
        for i, (fmt, data, mode) in enumerate(inputs(random.Random(args.seed), args.count)):
            outcome, detail = classify(fmt, data, mode, Path(d), ranks=args.ranks)
            counts[outcome] = counts.get(outcome, 0) + 1
            if outcome in ("internal", "mismatch") and shown < 20:
                shown += 1
                print(f"--- input {i} ({fmt}, --weights {mode}): {outcome}\n{detail}\n{data[:300]!r}")
    bad = counts.get("internal", 0) + counts.get("mismatch", 0)
    print(f"{args.count} inputs (seed {args.seed}) in {time.time() - t0:.0f} s: "
          + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) + f"; internal errors + mismatches: {bad}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
