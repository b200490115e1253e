"""`parallel for`: the fused array execution agrees bit for bit (and step for step) with
running the iterations one by one, and both agree with a NumPy model of the forall rule."""
from __future__ import annotations

import io

import numpy as np
import pytest

import starvm
from starvm.targets.numpy.forall import fusable

SIZES = [1, 2, 63, 64, 65, 130]

BODIES = {
    # Listing 4: WARSHALL-adapt
    "warshall": """
proc BODY(n: integer; var P: table; var Z: slice; M: slice; t: integer);
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
""",
    # every iteration must see the old column k, including iteration k itself
    "xor_pivot": """
proc BODY(n: integer; var P: table; var Z: slice; M: slice; t: integer);
var i: integer;
begin
  parallel for i := 1 to n do
    COL(i, P) := COL(i, P) xor COL(t, P);
end;
""",
    # shared slice written bit i; private integer; NUMB
    "count_mark": """
proc BODY(n: integer; var P: table; var Z: slice; M: slice; t: integer);
var i, c: integer;
begin
  parallel for i := 1 to n do
  begin
    c := NUMB(COL(i, P));
    if c > t then Z(i) := 1 else Z(i) := 0;
  end;
end;
""",
    # if/else, not, and, a shared slice argument, downto
    "masked_not": """
proc BODY(n: integer; var P: table; var Z: slice; M: slice; t: integer);
var V: slice; i: integer;
begin
  parallel for i := n downto 1 do
  begin
    V := COL(i, P);
    if (V(i) = 1) and SOME(V and M) then COL(i, P) := not V
    else if V(i) = 0 then COL(i, P) := V and M;
  end;
end;
""",
    # an inner ordinary loop, integer arithmetic, mod, bit reads of a column
    "inner_loop": """
proc BODY(n: integer; var P: table; var Z: slice; M: slice; t: integer);
var i, j, s: integer;
begin
  parallel for i := 1 to n do
  begin
    s := 0;
    for j := 1 to n do
      if COL(i, P)(j) = 1 then s := s + j;
    Z(i) := s mod 2;
  end;
end;
""",
    # bits of a private slice written: each iteration its own copy (once an internal error)
    "private_bits": """
proc BODY(n: integer; var P: table; var Z: slice; M: slice; t: integer);
var V: slice; i: integer;
begin
  parallel for i := 1 to n do
  begin
    V := COL(i, P);
    V(t) := 1;
    if V(i) = 1 then V(i) := 0;
    COL(i, P) := V;
  end;
end;
""",
}


def closure(a):
    """Transitive closure by Warshall on a bool matrix (P(i,j) = arc i -> j)."""
    p = a.copy()
    for k in range(p.shape[0]):
        p[p[:, k]] |= p[k]
    return p


def model(name, P, Z, M, t):
    n = P.shape[0]
    P, Z = P.copy(), Z.copy()
    if name == "warshall":
        return closure(P), Z
    if name == "xor_pivot":
        old = P[:, t - 1].copy()
        P ^= old[:, None]
        return P, Z
    if name == "private_bits":
        for i in range(n):
            v = P[:, i].copy()
            v[t - 1] = True
            if v[i]:
                v[i] = False
            P[:, i] = v
        return P, Z
    if name == "count_mark":
        return P, P.sum(axis=0) > t
    if name == "masked_not":
        out = P.copy()
        for i in range(n):
            v = P[:, i]
            if v[i] and (v & M).any():
                out[:, i] = ~v
            elif not v[i]:
                out[:, i] = v & M
        return out, Z
    if name == "inner_loop":
        s = (P * np.arange(1, n + 1)[:, None]).sum(axis=0)
        return P, (s % 2).astype(bool)
    raise KeyError(name)


def run_body(backend, name, P, Z, M, t, fuse):
    m = starvm.Machine(backend=backend, out=io.StringIO(), fuse=fuse)
    m.load(BODIES[name], f"{name}.star")
    Pt, Zs = m.table(P), m.slice(Z)
    m.call("BODY", P.shape[0], Pt, Zs, m.slice(M), t)
    return Pt.to_numpy(), Zs.to_numpy(), m.stats


@pytest.mark.parametrize("name", sorted(BODIES))
@pytest.mark.parametrize("n", SIZES)
def test_fused_equals_sequential_equals_model(backend, name, n):
    rng = np.random.default_rng(1000 * n + len(name))
    for density in (0.0, 2.0 / n, 0.5, 1.0):
        P = rng.random((n, n)) < density
        Z = rng.random(n) < 0.5
        M = rng.random(n) < 0.5
        t = int(rng.integers(1, n + 1))
        fused = run_body(backend, name, P, Z, M, t, fuse=True)
        plain = run_body(backend, name, P, Z, M, t, fuse=False)
        want_P, want_Z = model(name, P, Z, M, t)
        np.testing.assert_array_equal(fused[0], want_P)
        np.testing.assert_array_equal(fused[1], want_Z)
        np.testing.assert_array_equal(plain[0], want_P)
        np.testing.assert_array_equal(plain[1], want_Z)
        assert fused[2] == plain[2], "a fused loop must count the same steps"


def test_bodies_are_fused():
    """The bodies above really take the fused path."""
    for name, src in BODIES.items():
        m = starvm.Machine(backend="numpy")
        m.load(src, f"{name}.star")
        unit = next(iter(m.units.values()))
        assert "_forall" in unit.source, name


def test_unfusable_body_runs_iteration_by_iteration():
    src = """
proc BODY(n: integer; var P: table);
var x: word; i, c: integer;
begin
  parallel for i := 1 to n do
  begin
    x := ROW(i, P); c := 0;
    while SOME(x) do begin c := c + STEP(x) end;
    if c > 3 then COL(i, P) := COL(1, P);
  end;
end;
"""
    m = starvm.Machine(backend="numpy")
    m.load(src, "u.star")
    assert "_forall" not in next(iter(m.units.values())).source
    rng = np.random.default_rng(5)
    P = rng.random((5, 5)) < 0.5
    T = m.table(P)
    m.call("BODY", 5, T)
    want = P.copy()
    for i in range(5):
        if sum(j + 1 for j in range(5) if P[i, j]) > 3:
            want[:, i] = P[:, 0]
    np.testing.assert_array_equal(T.to_numpy(), want)


@pytest.mark.parametrize("fuse", [True, False])
def test_errors_in_a_parallel_for_point_at_the_operation(backend, fuse):
    src = """proc BODY(n: integer; var P: table);
var i: integer;
begin
  parallel for i := 1 to n do
    COL(i, P) := COL(i + 1, P);
end;
"""
    m = starvm.Machine(backend=backend, fuse=fuse)
    m.load(src, "e.star")
    with pytest.raises(starvm.StarRuntimeError) as info:
        m.call("BODY", 4, m.table(np.zeros((3, 4), bool)))
    e = info.value
    assert (e.line, e.column) == (5, 18)
    assert "column index 5 out of range 1..4" in e.message
    assert [f.routine for f in e.stack] == ["BODY"]


def test_fusable_decision():
    from starvm.check import Checker, Environment
    from starvm.frontend.parser import parse
    from starvm.ir.lower import lower_unit
    from starvm.ir.ops import Op

    def loops(src):
        unit = lower_unit(Checker(Environment()).check_program(parse(src)))
        found = []

        def walk(n):
            if n.op is Op.PFOR:
                found.append(n)
            for s in n.src:
                walk(s)
        for _, body in unit.routines:
            walk(body)
        return found

    (warshall,) = loops(BODIES["warshall"])
    assert fusable(warshall)
    (varying,) = loops("""proc B(n: integer; var P: table); var i, j: integer;
begin parallel for i := 1 to n do for j := 1 to i do COL(i, P) := COL(j, P); end;""")
    assert not fusable(varying)   # inner bounds differ between iterations


def _forall_kernels(m):
    return [v for v in m.ns.values() if type(v).__name__ in ("ForallKernel", "CudaForallKernel")]


def test_gpu_runs_each_fusable_body_as_one_generated_kernel(backend):
    """On CuPy every body above becomes one CUDA kernel launch per loop, with no fallback."""
    if backend != "cupy":
        pytest.skip("the generated CUDA kernel is the CuPy backend's")
    rng = np.random.default_rng(11)
    for name in sorted(BODIES):
        n = 70
        P, Z, M = rng.random((n, n)) < 0.3, rng.random(n) < 0.5, rng.random(n) < 0.5
        m = starvm.Machine(backend=backend, out=io.StringIO())
        m.load(BODIES[name], f"{name}.star")
        m.call("BODY", n, m.table(P), m.slice(Z), m.slice(M), 3)
        (kernel,) = _forall_kernels(m)
        assert type(kernel).__name__ == "CudaForallKernel", name
        assert kernel.template is not None and kernel.launches >= 1 and kernel.fallbacks == 0, name


def test_fused_loops_of_two_units_keep_their_own_kernels(backend):
    # Every unit's fused loops and BITS constants live in the machine's one namespace: a
    # library unit loaded later (WARSHALL-adapt's fused loop) must not replace the program's.
    m = starvm.Machine(backend=backend, out=io.StringIO(), jit="off", native=False)
    m.load("""
proc MINE(n: integer; var P: table);
var i: integer;
begin
  parallel for i := 1 to n do
    COL(i, P) := COL(i, P) or COL(1, P);
end;
""", "mine.star")
    rng = np.random.default_rng(7)
    P = rng.random((70, 5)) < 0.3
    want = P | P[:, :1]
    first = m.table(P)
    m.call("MINE", 5, first)
    closure = m.table(np.eye(5, dtype=bool))
    m.call("WARSHALL-adapt", 5, closure)   # loads the library unit with its own fused loop
    again = m.table(P)
    m.call("MINE", 5, again)
    np.testing.assert_array_equal(first.to_numpy(), want)
    np.testing.assert_array_equal(again.to_numpy(), want)
