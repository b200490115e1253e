"""The embedding API: starvm.Machine, load / run / call with Python values, stats, profiling,
errors as starvm.StarError subclasses."""
from __future__ import annotations

import io

import numpy as np
import pytest

import starvm

LIB = """
function addone(x: integer): integer; begin addone := x + 1 end;
function neg(b: boolean): boolean; begin neg := not b end;
function count(s: slice): integer; begin count := NUMB(s) end;
function firstone(s: slice): slice; begin firstone := FRST(s) end;
function rowof(i: integer; T: table): word; begin rowof := ROW(i, T) end;
function wlen(w: word): integer; begin wlen := LEN(w) end;
proc incr(var a: integer; var b: boolean; c: integer); begin a := a + c; b := not b end;
proc clearit(var s: slice); begin CLR(s) end;
proc setw(var w: word); begin SET(w) end;
proc localcopy(s: slice; var k: integer); begin k := NUMB(s); CLR(s) end;
proc fill(var T: table; v: word(T));
var i: integer;
begin for i := 1 to NROWS(T) do ROW(i, T) := v end;
proc readonly(T: table; var s: slice(T)); begin s := COL(1, T) end;
proc noop(T: table); begin end;
function sidefx(var k: integer): integer; begin k := 3; sidefx := 4 end;
proc fail(T: table; i: integer); var w: word; begin w := ROW(i, T) end;
proc outer(T: table); begin fail(T, 99) end;
"""


@pytest.fixture
def m(machine):
    machine.load(LIB, "lib.star")
    return machine


def test_machine_construction(backend):
    mach = starvm.Machine(backend=backend)
    assert mach.backend.name == backend
    assert isinstance(mach, starvm.Machine)
    assert starvm.__version__
    with pytest.raises(Exception, match="unknown backend"):
        starvm.Machine(backend="no-such-backend")


def test_load_run_and_output(machine):
    machine.load("proc hello(n: integer); begin writeln('hello ', n) end;")
    machine.run("begin hello(1); hello(2) end.")
    machine.run("begin hello(3) end.")            # earlier routines stay defined
    assert machine.out.getvalue() == "hello 1\nhello 2\nhello 3\n"


def test_load_does_not_run_the_main_block_but_initialises_globals(machine):
    machine.load("var g: integer; t: table(2, 3);\nbegin g := 5; writeln('main') end.")
    assert machine.out.getvalue() == ""
    assert machine.global_("g") == 0
    assert machine.global_("T").shape == (2, 3)
    machine.run("begin g := g + 7; writeln(g) end.")  # a later text sees the globals
    assert machine.global_("g") == 7
    assert machine.out.getvalue() == "7\n"


def test_load_file_and_run_file(machine, tmp_path):
    lib = tmp_path / "lib.star"
    lib.write_text("function twice(x: integer): integer; begin twice := 2 * x end;")
    prog = tmp_path / "prog.star"
    prog.write_text("begin writeln(twice(21)) end.")
    machine.load_file(lib)
    machine.run_file(str(prog))
    assert machine.out.getvalue() == "42\n"
    assert machine.call("TWICE", 5) == 10


def test_run_without_a_main_block(machine):
    with pytest.raises(starvm.StarTypeError, match="no main block"):
        machine.run("proc p; begin end;", "nomain.star")


def test_call_with_scalars(m):
    assert m.call("addone", 41) == 42
    assert m.call("ADDONE", np.int64(1)) == 2
    assert m.call("neg", True) is False
    assert m.call("neg", np.bool_(False)) is True


def test_call_with_vectors(m):
    assert m.call("count", np.array([1, 0, 1, 1], dtype=bool)) == 3
    assert m.call("count", [True, False]) == 1
    assert m.call("count", m.slice([1, 1, 1])) == 3
    assert m.call("wlen", m.word([0, 1, 0, 1, 1])) == 5
    r = m.call("firstone", [0, 1, 1, 0])
    assert isinstance(r, starvm.BitVector)
    assert len(r) == 4 and str(r) == "0100"
    assert np.array_equal(r.to_numpy(), [False, True, False, False])
    assert np.array_equal(np.asarray(r), [0, 1, 0, 0])
    assert r == m.slice([0, 1, 0, 0]) and not (r == m.slice([0, 0, 1, 0]))


def test_call_with_tables(m):
    a = np.array([[1, 0, 1], [0, 1, 1]], dtype=bool)
    T = m.table(a)
    assert isinstance(T, starvm.Table) and T.shape == (2, 3)
    assert np.array_equal(T.to_numpy(), a) and np.array_equal(np.asarray(T), a)
    assert str(m.call("rowof", 2, T)) == "011"
    assert str(m.call("rowof", 1, a)) == "101"              # a NumPy array converts
    assert m.call("noop", [[True, False]]) is None
    Z = m.table(rows=3, cols=2)
    assert Z.shape == (3, 2) and not Z.to_numpy().any()
    with pytest.raises(ValueError):
        m.table([1, 0, 1])
    with pytest.raises(ValueError):
        m.table()


def test_var_table_updated_in_place(m):
    T = m.table(np.zeros((3, 4), dtype=bool))
    assert m.call("fill", T, m.word([1, 0, 1, 1])) is None
    assert np.array_equal(T.to_numpy(), np.tile([True, False, True, True], (3, 1)))


def test_var_numpy_table_gets_the_result(m):
    a = np.zeros((2, 2), dtype=bool)
    m.call("fill", a, [1, 1])
    assert a.all()


def test_var_slices_and_words_updated_in_place(m):
    s = m.slice([1, 0, 1])
    assert m.call("clearit", s) is None
    assert str(s) == "000"
    w = m.word([0, 0])
    m.call("setw", w)
    assert str(w) == "11"
    arr = np.array([True, True])
    m.call("clearit", arr)
    assert not arr.any()
    T = m.table([[1, 0], [0, 0], [1, 1]])
    s3 = m.slice([0, 0, 0])
    m.call("readonly", T, s3)
    assert str(s3) == "101"


def test_non_var_values_are_copies(m):
    s = m.slice([1, 1, 0])
    assert m.call("localcopy", s, 0) == (2,)
    assert str(s) == "110"


def test_procedures_return_their_var_scalars(m):
    assert m.call("incr", 1, False, 5) == (6, True)
    assert m.call("incr", -3, True, 1) == (-2, False)
    assert m.call("fill", m.table(rows=1, cols=1), [1]) is None
    # a function returns its value only
    assert m.call("sidefx", 0) == 4


def test_stats_and_reset(m):
    m.reset_stats()
    assert m.stats == {}
    m.call("count", [1, 0, 1])
    m.call("fill", m.table(rows=3, cols=2), [1, 0])
    assert m.stats == {"NUMB": 1, "ROW_SET": 3}
    m.reset_stats()
    assert m.stats == {}


def test_profile_report(m):
    T = m.table(rows=4, cols=2)
    m.reset_stats()
    m.call("fill", T, [1, 1])
    report = m.profile_report()
    assert "ROW write (set_row)" in report and "mean, us" not in report
    line = next(x for x in report.splitlines() if x.startswith("ROW write (set_row)"))
    assert line.split()[-1] == "4"
    m.profile = True
    assert m.profile is True
    m.reset_stats()
    m.call("fill", T, [1, 0])
    m.call("rowof", 1, T)
    report = m.profile_report()
    assert "mean, us" in report and "total, s" in report
    assert "ROW read (get_row)" in report
    for title, count in [("ROW write (set_row)", "4"), ("ROW read (get_row)", "1")]:
        line = next(x for x in report.splitlines() if x.startswith(title))
        assert line[len(title):].split()[0] == count
        assert float(line.split()[-1]) >= 0
    m.profile = False
    assert m.call("addone", 1) == 2


def test_errors_are_star_errors_with_positions(m):
    with pytest.raises(starvm.StarSyntaxError) as info:
        m.load("begin\n  writeln('x)\nend.", "syn.star")
    e = info.value
    assert isinstance(e, starvm.StarError)
    assert (e.filename, e.line, e.column) == ("syn.star", 2, 11)

    with pytest.raises(starvm.StarTypeError) as info:
        m.load("proc p;\nbegin\n  addone(true)\nend;", "typ.star")
    e = info.value
    assert isinstance(e, starvm.StarError)
    assert (e.filename, e.line, e.column) == ("typ.star", 3, 10)

    with pytest.raises(starvm.StarRuntimeError) as info:
        m.call("outer", m.table(rows=2, cols=2))
    e = info.value
    assert isinstance(e, starvm.StarError)
    assert (e.filename, e.line, e.column) == ("lib.star", 18, 58)   # ROW(i, T) in fail
    assert "99" in e.message
    assert [f.routine for f in e.stack] == ["outer", "fail"]
    assert "Star call stack" in e.render()


def test_call_argument_errors(m):
    with pytest.raises(starvm.StarTypeError, match="unknown routine"):
        m.call("no_such_routine")
    with pytest.raises(starvm.StarTypeError, match="takes 1 argument, got 0"):
        m.call("addone")
    with pytest.raises(starvm.StarTypeError, match="must be an integer"):
        m.call("addone", True)
    with pytest.raises(starvm.StarTypeError, match="must be an integer"):
        m.call("addone", "1")
    with pytest.raises(starvm.StarTypeError, match="must be a boolean"):
        m.call("neg", 1)
    with pytest.raises(starvm.StarTypeError, match="table"):
        m.call("noop", [1, 0])
    with pytest.raises(starvm.StarRuntimeError, match="3 bits, got 2"):
        m.call("readonly", m.table(rows=3, cols=1), [1, 0])


def test_call_after_a_runtime_error_still_works(m):
    with pytest.raises(starvm.StarRuntimeError):
        m.call("outer", m.table(rows=1, cols=1))
    assert m.call("addone", 1) == 2


def test_machines_are_independent(backend):
    a = starvm.Machine(backend=backend, out=io.StringIO())
    b = starvm.Machine(backend=backend, out=io.StringIO())
    a.load("function f: integer; begin f := 1 end;")
    b.load("function f: integer; begin f := 2 end;")
    assert (a.call("f"), b.call("f")) == (1, 2)
    a.call("f")
    assert a.stats == b.stats == {}


def test_device_arrays_are_accepted_as_tables_slices_and_words(backend):
    """CuPy arrays pass like NumPy arrays (issue: embedding API, NumPy/CuPy bool arrays)."""
    from conftest import cupy_or_skip
    cupy_or_skip()                  # skips only without CuPy or a CUDA device
    import cupy as cp
    m = starvm.Machine(backend=backend)
    m.load("proc P(var T: table; var X: slice; w: word); begin COL(1, T) := X; ROW(2, T) := w end;")
    T = m.table(cp.zeros((3, 2), dtype=bool))
    X = m.slice(cp.asarray([True, False, True]))
    m.call("P", T, X, cp.asarray([False, True]))
    assert T.to_numpy().astype(int).tolist() == [[1, 0], [0, 1], [1, 0]]
