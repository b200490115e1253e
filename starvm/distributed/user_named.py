"""Library bodies under a user's name, so that no native kernel stands in for them: the
programs the compiled tier on MPI ranks is measured with (bench/bench_scale.py, workload
jit) and tested with (tests/distributed/jit_driver.py); bench/bench_compiled.py takes its
WARSHALL-adapt from here too."""
from __future__ import annotations

# WARSHALL-C (the paper's Listing 2, stdlib/warshall.star) and MIN (stdlib/search.star)
_CLOSURE = """
proc {closure}(n: integer; var P: table);
var x: word; V, W: slice; i, k: integer;
begin for k := 1 to n do
  begin
    x := ROW(k, P); W := COL(k, P);
    i := STEP(x);
    while i > 0 do begin V := COL(i, P); V := V or W; COL(i, P) := V; i := STEP(x) end;
  end;
end;
"""
_MIN = """
proc {minimum}(T: table; X: slice(T); var Z: slice(T));
var j: integer; Y: slice(T);
begin
  Z := X;
  for j := 1 to NCOLS(T) do begin Y := Z and not COL(j, T); if SOME(Y) then Z := Y end;
end;
"""
# WARSHALL-adapt (Listing 4): its `parallel for` reads a bit of a slice in every iteration
_ADAPT = """
proc {adapt}(n: integer; var P: table);
var V, W: slice; i, k: integer;
begin
  for k := 1 to n do
    parallel for i := 1 to n do
    begin
      W := COL(k, P);
      V := COL(i, P);
      if V(k) = 1 then V := V or W;
      COL(i, P) := V;
    end;
end;
"""


def closure_and_min(closure: str = "MY_WARSHALL_C", minimum: str = "MY_MIN") -> str:
    """WARSHALL-C and MIN as routines named ``closure`` and ``minimum``."""
    return _CLOSURE.format(closure=closure) + _MIN.format(minimum=minimum)


def warshall_adapt(adapt: str = "MY_WARSHALL_ADAPT") -> str:
    """WARSHALL-adapt as a routine named ``adapt``."""
    return _ADAPT.format(adapt=adapt)
