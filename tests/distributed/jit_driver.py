"""Run under mpiexec by tests/distributed/test_mpi_jit.py: the compiled tier on MPI ranks.

    mpiexec -n P python jit_driver.py OUT.json ALIGN

Every rank runs each program of ``programs()`` three ways: on one NumPy machine of its own,
interpreted (the reference); on the distributed machine (rows in blocks of ALIGN) with
--jit off; and with --jit on. Rank 0 writes {name: {"ref", "off", "on": {"out", "err",
"steps"}, "compiled": {routine: compiled calls}, "same_on_all_ranks"}} to OUT.json.
"""
import io
import json
import sys

from mpi4py import MPI

import starvm
from starvm.backends import get_backend
from starvm.distributed import distribute
from starvm.distributed.user_named import closure_and_min, warshall_adapt
from starvm.errors import StarError

# a routine whose loops use every base operation that crosses ranks, on a table of n rows
COUNTER = """
proc COUNTER(var P: table; n: integer; var total: integer; var firsts: integer);
var X, Y: slice(P); w: word(P); u: word; i, j, c: integer;
begin
  total := 0; firsts := 0;
  for i := 1 to NCOLS(P) do
  begin
    X := COL(i, P);
    total := total + NUMB(X);
    if SOME(X) then firsts := firsts + FND(X);
    Y := FRST(X);
    firsts := firsts + 7 * NUMB(Y) + FND(Y);
    u := CONVERT(X);
    firsts := firsts + 11 * FND(u) + NUMB(u);
    c := 0;
    j := STEP(X);
    while j > 0 do begin c := c + j; j := STEP(X) end;
    total := total + c + 3 * NUMB(X);
    if X(n) = 1 then total := total + 1000;
    Y := COL(i, P);
    while SOME(Y) do begin j := STEP(Y); firsts := firsts + j * i end;
  end;
  for j := 1 to n - 1 do
  begin
    w := ROW(j, P);
    if w(1) = 1 then ROW(j + 1, P) := w or ROW(j + 1, P);
  end;
  X := COL(1, P);
  Y := not X;
  SET(X);
  X(n) := 0;
  X(1) := X(n);
  COL(2, P) := X;
  COL(3, P) := Y;
  if X = Y then total := total + 1;
  if X <> Y then total := total + 2;
  if X = COL(2, P) then total := total + 4;
end;

proc FLIP(var P: table; var s: integer);
var Q: table(NROWS(P), NCOLS(P)); i, n: integer;
begin
  n := NROWS(P);
  for i := 1 to n do ROW(n + 1 - i, Q) := ROW(i, P);
  s := s + NUMB(COL(1, Q)) + FND(COL(2, Q));
  P := Q;
end;

var P: table(N_ROWS, 5); t, f, i, s, n: integer; Z: slice(P); x: word(P);
begin
  n := NROWS(P);
  s := 7;
  for i := 1 to n do
  begin
    s := (s * 1103 + 12345) mod 32749;
    x := BITS('00000');
    if s mod 2 = 1 then x(1) := 1;
    if s mod 3 = 1 then x(2) := 1;
    if s mod 5 < 2 then x(3) := 1;
    if s mod 7 = 3 then x(4) := 1;
    if i mod 9 = 0 then x(5) := 1;
    ROW(i, P) := x;
  end;
  COUNTER(P, n, t, f);
  FLIP(P, t);
  parallel for i := 2 to 5 do begin Z := COL(i, P); Z := Z xor COL(i - 1, P); COL(i, P) := Z end;
  writeln(t, ' ', f);
  writeln(P);
  Z := COL(4, P);
  writeln(Z);
end.
"""

# WARSHALL-C (Listing 2) and MIN under users' names (no native kernel applies), called from an
# interpreted main block: a BITS literal handed to a slice parameter keeps it interpreted on ranks
CLOSURE = closure_and_min("MY-CLOSURE", "MY-MIN") + """
var P: table(N_ROWS, N_ROWS); Q: table(N_ROWS, 3); X, Z: slice(Q); i: integer; r: word(P);
begin
  for i := 1 to N_ROWS - 1 do if i mod 3 <> 0 then begin r := ROW(i, P); r(i + 1) := 1; ROW(i, P) := r end;
  for i := 2 to N_ROWS do if i mod 5 = 0 then begin r := ROW(i, P); r(1) := 1; ROW(i, P) := r end;
  MY-CLOSURE(N_ROWS, P);
  writeln(P);
  for i := 1 to N_ROWS do ROW(i, Q) := TRIM(1, 3, ROW(i, P));
  SET(X); X(1) := 0;
  MY-MIN(Q, X, Z);
  writeln(FND(Z), ' ', NUMB(Z));
  MY-MIN(Q, BITS('ALTERNATE'), Z);
  writeln(FND(Z), ' ', NUMB(Z));
  parallel for i := 1 to 3 do if SOME(COL(i, Q)) then COL(i, Q) := not COL(i, Q);
  writeln(Q);
end.
"""

# `parallel for` bodies that cross ranks in every iteration, compiled (--jit on): WARSHALL-adapt's
# bit read; SOME, NUMB, FND, STEP, <> and a bit write of a slice, ROW of the snapshot of a table
# written by COL; ROW reads and writes of a table written by ROW; = of words and NUMB in a condition
PFOR = warshall_adapt("MY-WARSHALL-ADAPT") + """
var P: table(N_ROWS, N_ROWS); Q, U: table(N_ROWS, 4); i, j, n: integer; r: word(P); w: word(Q);
    S, H: slice(Q); B: slice(P);
begin
  n := NROWS(P);
  for i := 1 to n - 1 do if i mod 3 <> 0 then begin r := ROW(i, P); r(i + 1) := 1; ROW(i, P) := r end;
  for i := 2 to n do if i mod 5 = 0 then begin r := ROW(i, P); r(1) := 1; ROW(i, P) := r end;
  MY-WARSHALL-ADAPT(n, P);
  writeln(P);
  for i := 1 to n do ROW(i, Q) := TRIM(1, 4, ROW(i, P));
  U := Q;
  parallel for i := 1 to 4 do
  begin
    S := COL(i, Q);
    w := ROW(i, Q);
    if SOME(S) then COL(i, Q) := not S;
    if NUMB(S) + 3 * FND(S) > 5 then H(i) := 1;
    j := STEP(S);
    if (j > 2) and (w(1) = 1) and (S <> COL(1, Q)) then COL(i, Q) := S;
  end;
  writeln(Q);
  writeln(H);
  parallel for i := 2 to n do ROW(i, U) := ROW(i - 1, Q) or ROW(i, U) or ROW(n + 1 - i, U);
  writeln(U);
  parallel for i := 1 to n do if (NUMB(COL(i, P)) > 2) or (ROW(i, P) = ROW(1, P)) then B(i) := 1;
  writeln(B);
end.
"""

# an index out of range inside a compiled loop: every rank stops with the same message
ROW_ERROR = """
proc WALK(var P: table; n: integer; var s: integer);
var i: integer; w: word(P);
begin s := 0; for i := 1 to n + 1 do begin w := ROW(i, P); s := s + NUMB(w) end end;
var P: table(N_ROWS, 3); s: integer;
begin ROW(1, P) := BITS('111'); WALK(P, N_ROWS, s); writeln(s) end.
"""

BIT_ERROR = """
proc POKE(var X: slice; n: integer; var s: integer);
var i: integer;
begin s := 0; for i := n downto 0 do s := s + X(i) end;
var P: table(N_ROWS, 3); X: slice(P); s: integer;
begin SET(X); POKE(X, N_ROWS, s); writeln(s) end.
"""


# integers past 64 bits and a failing `parallel for`: the compiled call runs again interpreted on
# every rank alike (call.JitRoutine.restart), with GROW's table writes put back first
EDGE = """
proc GROW(var P: table; k: integer; var r: integer);
var i: integer;
begin
  for i := 1 to NCOLS(P) do COL(i, P) := not COL(i, P);
  r := k;
  for i := 1 to 5 do r := r * k
end;
var P: table(N_ROWS, 3); r, m, i: integer;
begin
  ROW(1, P) := BITS('101');
  GROW(P, 10, r); writeln(r);
  GROW(P, 10000, r); writeln(r);
  m := -9223372036854775807 - 1; m := m div (-1); writeln(m);
  writeln(P);
  parallel for i := 1 to NCOLS(P) + 1 do COL(i, P) := not COL(i, P)
end.
"""


def programs() -> dict[str, str]:
    # the size is only in the declarations (the bodies read it with NROWS): a literal in a compiled
    # body would make each size its own module, compiled again (seconds each, on a cold cache)
    out = {}
    for n in (1, 2, 70, 130):
        out[f"counter{n}"] = COUNTER.replace("N_ROWS", str(n))
    for n in (3, 67):
        out[f"closure{n}"] = CLOSURE.replace("N_ROWS", str(n)).replace("ALTERNATE", "10" * (n // 2) + "1" * (n % 2))
    for n in (5, 70):
        out[f"pfor{n}"] = PFOR.replace("N_ROWS", str(n))
    out["row_error"] = ROW_ERROR.replace("N_ROWS", "5")
    out["bit_error"] = BIT_ERROR.replace("N_ROWS", "66")
    out["edge"] = EDGE.replace("N_ROWS", "70")
    return out


def run(text: str, name: str, backend, jit: str) -> tuple[dict, starvm.Machine]:
    out = io.StringIO()
    m = starvm.Machine(backend=backend, out=out, jit=jit)
    err = ""
    try:
        m.run(text, filename=f"{name}.star")
    except StarError as e:
        err = e.render()
    return {"out": out.getvalue(), "err": err, "steps": m.stats}, m


def main() -> None:
    dest, align = sys.argv[1], int(sys.argv[2])
    comm = MPI.COMM_WORLD
    results = {}
    for name, text in programs().items():
        r = {"ref": run(text, name, get_backend("numpy"), "off")[0],
             "off": run(text, name, distribute(get_backend("numpy"), comm, align), "off")[0]}
        r["on"], m = run(text, name, distribute(get_backend("numpy"), comm, align), "on")
        r["compiled"] = {rt.display: rt.compiled_calls for rt in m.jit.routines.values()}
        r["restarts"] = {rt.display: rt.restarts for rt in m.jit.routines.values()}
        everyone = comm.allgather(json.dumps(r, sort_keys=True))
        r["same_on_all_ranks"] = all(e == everyone[0] for e in everyone)
        r["report"] = m.jit.report()         # rank 0's (its times differ between ranks)
        results[name] = r
    if comm.rank == 0:
        with open(dest, "w") as fh:
            json.dump(results, fh)


if __name__ == "__main__":
    main()
