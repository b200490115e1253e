"""The embedding API of starvm/api.py: starvm.compile / Program, Machine.globals,
Table.words and DLPack, per-call and per-block step counters; and the README's Python
examples, run as they are printed."""
from __future__ import annotations

import doctest
import io
import re
from pathlib import Path

import numpy as np
import pytest

import starvm
from starvm.frontend import parser as parser_module

ROOT = Path(__file__).resolve().parents[2]

SUM = """
var n, total: integer; P: table(4, 3); X: slice(P); b: boolean; w: word; v: word(P);
proc addn(k: integer); begin n := n + k end;
begin
  total := 0;
  while SOME(X) do total := total + STEP(X) * n;
  writeln('total ', total)
end.
"""


# ---------------------------------------------------------------------- README
def _python_blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, re.S)


def test_readme_python_examples_run(monkeypatch):
    """Every ```python block of README.md: the >>> examples through doctest (one session, in
    order), the others executed as scripts — all from the checkout's root."""
    monkeypatch.chdir(ROOT)
    blocks = _python_blocks((ROOT / "README.md").read_text())
    doc = [b for b in blocks if ">>>" in b]
    assert len(doc) >= 2, "the README's embedding examples are gone"
    test = doctest.DocTestParser().get_doctest("\n".join(doc), {}, "README.md", str(ROOT / "README.md"), 0)
    out = io.StringIO()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test, out=out.write)
    assert runner.failures == 0, out.getvalue()
    assert runner.tries >= 20
    for script in (b for b in blocks if ">>>" not in b):
        exec(compile(script, "README.md", "exec"), {"print": lambda *a, **k: None})


# ---------------------------------------------------------------------- compile once
def test_compile_once_run_many(backend, monkeypatch):
    prog = starvm.compile(SUM, "sum.star")
    assert isinstance(prog, starvm.Program)
    assert prog.has_main and prog.routines == ["addn"] and prog.filename == "sum.star"
    assert prog.globals == ["n", "total", "P", "X", "b", "w", "v"]
    calls = []
    real = parser_module.parse
    monkeypatch.setattr("starvm.runtime.machine.parse", lambda *a, **k: calls.append(a) or real(*a, **k))
    monkeypatch.setattr("starvm.api.parse", lambda *a, **k: calls.append(a) or real(*a, **k))
    outs = []
    for _ in range(3):
        out = io.StringIO()
        m = prog.run(backend=backend, out=out)
        assert isinstance(m, starvm.Machine) and m.backend.name == backend
        outs.append(out.getvalue())
    assert outs == ["total 0\n"] * 3
    assert calls == [], "a compiled Program was parsed again"
    # on a given machine: load, set inputs, run the main block, repeatedly
    m = starvm.Machine(backend=backend, out=io.StringIO())
    assert prog.load(m) is m and m.out.getvalue() == ""
    m.globals["n"] = 5
    for bits, want in [([1, 0, 0, 1], 25), ([0, 1, 0, 0], 10)]:
        m.globals["X"] = bits
        m.run_main()
        assert m.globals["total"] == want
    m.call("addn", 2)
    assert m.globals["n"] == 7
    m2 = starvm.Machine(backend=backend, out=io.StringIO())
    m2.load_program(prog)
    assert "n" in m2.globals and m2.out.getvalue() == ""
    m3 = starvm.Machine(backend=backend, out=io.StringIO())
    m3.run(prog)
    assert m3.out.getvalue() == "total 0\n"
    assert prog.run(machine=starvm.Machine(backend=backend, out=io.StringIO())).globals["total"] == 0
    with pytest.raises(TypeError):
        prog.run(machine=m3, backend=backend)


def test_compile_reports_errors_early():
    with pytest.raises(starvm.StarSyntaxError) as e:
        starvm.compile("begin x := end.", "bad.star")
    assert e.value.render().startswith("bad.star:1:")
    with pytest.raises(starvm.StarTypeError, match="unknown name 'x'"):
        starvm.compile("begin x := 1 end.", "bad.star")
    prog = starvm.compile("begin x := 1 end.", "later.star", check=False)   # x comes from another load
    m = starvm.Machine(out=io.StringIO())
    m.load("var x: integer;")
    m.run(prog)
    assert m.globals["x"] == 1
    lib = starvm.compile("proc p; begin end;")
    assert not lib.has_main
    with pytest.raises(starvm.StarTypeError, match="no main block"):
        lib.run()
    with pytest.raises(starvm.StarTypeError, match="no main block"):
        lib.load().run_main()
    assert "Program <string>: 1 routines" in repr(lib)


# ---------------------------------------------------------------------- globals
def test_globals_read_and_write(machine):
    machine.load(SUM, "sum.star")
    g = machine.globals
    assert list(g) == ["n", "total", "P", "X", "b", "w", "v"] and len(g) == 7
    assert "N" in g and "TOTAL" in g and "nope" not in g and 3 not in g
    assert g["n"] == 0 and g["b"] is False
    assert g["w"] is None                                   # a bare word before its first value
    assert isinstance(g["X"], starvm.BitVector) and str(g["X"]) == "0000"
    P = g["P"]
    assert isinstance(P, starvm.Table) and P.shape == (4, 3)
    g["n"] = np.int64(3)
    g["b"] = np.True_
    g["w"] = [1, 0, 1, 1, 0]                                # fixes w's length
    g["v"] = machine.word([0, 1, 1])
    g["X"] = np.array([1, 1, 0, 0], dtype=bool)
    machine.run_main()
    assert machine.out.getvalue() == "total 9\n"
    assert (g["n"], g["b"], str(g["w"]), str(g["v"]), str(g["X"])) == (3, True, "10110", "011", "0000")
    # tables: the declared table keeps its identity; the bits are copied in
    adj = np.zeros((4, 3), dtype=bool)
    adj[2, 1] = True
    g["P"] = adj
    assert g["P"] is P and P.to_numpy()[2, 1]
    g["P"] = machine.table(np.ones((4, 3), dtype=bool))
    assert P.to_numpy().all()
    machine.load("function cnt: integer; begin cnt := NUMB(COL(1, P)) end;")
    assert machine.call("cnt") == 4
    # refused: wrong types, lengths, shapes, names
    for name, value, exc in [("n", "3", TypeError), ("n", True, TypeError), ("b", 1, TypeError),
                             ("X", [1, 0], ValueError), ("w", [1], ValueError), ("v", [1, 1, 1, 1], ValueError),
                             ("X", np.zeros((2, 2)), TypeError), ("P", np.zeros((3, 3), bool), ValueError),
                             ("P", np.zeros(3, bool), TypeError), ("missing", 1, KeyError)]:
        with pytest.raises(exc):
            g[name] = value
    with pytest.raises(KeyError):
        g["missing"]
    with pytest.raises(TypeError):
        del g["n"]
    assert machine.global_("n") == 3                        # the older accessor still works


# ---------------------------------------------------------------------- zero-copy tables
def test_table_words_and_dlpack(machine):
    bits = np.zeros((130, 5), dtype=bool)
    bits[[0, 63, 64, 129], 2] = True
    T = machine.table(bits)
    W = T.words
    assert W is T.data
    assert W.shape == (5, 3) and str(W.dtype) == "uint64"
    host = W.get() if hasattr(W, "get") else W
    assert int(host[2, 0]) == (1 << 0) | (1 << 63) and int(host[2, 1]) == 1 and int(host[2, 2]) == 1 << 1
    assert T.__dlpack_device__() == W.__dlpack_device__()
    xp = T.backend.xp            # the array module of the table's storage (auto: CPU or GPU)
    view = xp.from_dlpack(T)
    assert view.shape == (5, 3)
    assert xp.shares_memory(view, W) if hasattr(xp, "shares_memory") else True
    view[4, 0] = 1 << 10                                    # writes reach the table: row 11, column 5
    assert T.to_numpy()[10, 4]
    assert np.array_equal(np.asarray(T)[:, :4], bits[:, :4])
    assert np.asarray(machine.slice([1, 0, 1])).tolist() == [True, False, True]


# ---------------------------------------------------------------------- counters
def test_last_call_stats_and_counting(machine):
    machine.load("function ones(S: slice): integer; begin ones := NUMB(S) end;\n"
                 "proc bad(T: table); var w: word; begin w := ROW(99, T) end;")
    assert machine.last_call_stats == {}
    assert machine.call("ones", machine.slice([1, 1, 0])) == 2
    assert machine.last_call_stats == {"NUMB": 1}
    adj = np.eye(6, k=1, dtype=bool)
    machine.call("WARSHALL-C", 6, machine.table(adj))
    first = machine.last_call_stats
    assert first["COL_GET"] > 0 and "NUMB" not in first
    with pytest.raises(starvm.StarRuntimeError):
        machine.call("bad", machine.table(adj))
    assert machine.last_call_stats == {}                    # ROW(99) failed before counting
    before = machine.stats
    with machine.counting() as c:
        assert c.stats == {} and c.total == 0
        machine.call("ones", machine.slice([1]))
        assert c.stats == {"NUMB": 1}                       # live inside the block
        machine.call("WARSHALL-C", 6, machine.table(adj))
    assert c.stats == {**first, "NUMB": first.get("NUMB", 0) + 1}
    assert c.total == sum(first.values()) + 1
    machine.call("ones", machine.slice([1]))
    assert c.total == sum(first.values()) + 1              # fixed at exit
    after = machine.stats
    assert sum(after.values()) - sum(before.values()) == c.total + 1   # the machine's totals go on
    assert "NUMB" in repr(c)
