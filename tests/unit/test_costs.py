"""Device cost models (starvm/costs): the shipped files, their checks, the arithmetic of an
estimate against a plain-Python recomputation, the geometry, the API (Machine.cost,
StepCounter.cost, per routine), and that an estimate does not depend on the route that ran
the program (backend, natives, fused loops, the compiled tier)."""
from __future__ import annotations

import io
import math
import random

import numpy as np
import pytest

import starvm
from starvm.costs import (Geometry, ModelError, estimate, geometry_of, load_file, load_model, model_names)
from starvm.costs.model import parse_model
from starvm.costs.report import list_text, si
from starvm.ir.ops import BASE_OPS

KINDS = [op.name for op in BASE_OPS]
SHIPPED = ["cam-ap", "gsi-gemini", "pimeval-bitsimd-v", "star-unit"]


# ------------------------------------------------------------------ the shipped files
def test_the_four_models_ship():
    assert model_names() == SHIPPED


@pytest.mark.parametrize("name", SHIPPED)
def test_every_model_prices_every_base_operation_and_cites_every_number(name):
    m = load_model(name)
    assert set(m.ops) == set(KINDS)
    assert m.sources and m.leaves_out and m.validation
    for p in m.primitives.values():
        assert p.source.strip(), p.name
        # each number is pinned to a source ([tag] of the sources list) or says how it was had
        assert "[" in p.source or "assumed" in p.source or "derived" in p.source, p.source
    tags = {s.split("]")[0] + "]" for s in m.sources}
    cited = " ".join(p.source for p in m.primitives.values()) + m.lanes_source
    assert any(t in cited for t in tags)
    assert m.lanes_source.strip() and m.large_tables.strip()


def test_unknown_model_lists_the_available_ones():
    with pytest.raises(ModelError) as e:
        load_model("nosuch")
    assert "nosuch" in str(e.value) and all(n in str(e.value) for n in SHIPPED)


def _minimal(**over) -> dict:
    data = {"name": "t", "title": "test", "family": "test",
            "device": {"lanes": 4, "lanes_source": "assumed", "large_tables": "in passes"},
            "primitives": {"p": {"time": 2, "energy_pj": 3, "energy_bits": 2, "source": "assumed"},
                           "c": {"time": 5, "source": "assumed"}},
            "ops": {k: {"p": 1} for k in KINDS}, "words": {"c": 1, "scale": "width64"}}
    data.update(over)
    return data


@pytest.mark.parametrize("change, message", [
    (lambda d: d["ops"].pop("ROW_SET"), "missing ROW_SET"),
    (lambda d: d["ops"].update(FOO={"p": 1}), "not base operations: FOO"),
    (lambda d: d["ops"]["AND"].update(q=1), "'q' is no primitive"),
    (lambda d: d["ops"]["AND"].update(p=-1), "'p' must be a number >= 0"),
    (lambda d: d["ops"]["AND"].update(on="disk"), "'on' must be one of"),
    (lambda d: d["ops"]["AND"].update(scale="cubic"), "'scale' must be one of"),
    (lambda d: d["primitives"]["p"].pop("source"), "missing 'source'"),
    (lambda d: d["primitives"]["p"].pop("time"), "missing 'time'"),
    (lambda d: d["device"].update(lanes=-1), "lanes must be >= 0"),
    (lambda d: d["device"].update(lanes="many"), "'lanes' must be int"),
    (lambda d: d.update(time_unit="hours"), "time_unit"),
    (lambda d: d.pop("title"), "missing 'title'"),
    (lambda d: d["device"].pop("large_tables"), "missing 'large_tables'"),
    (lambda d: d.pop("words"), "missing 'words'"),
    (lambda d: d["words"].update(z=2), "'z' is no primitive"),
])
def test_a_bad_model_file_says_what_is_wrong(change, message):
    data = _minimal()
    change(data)
    with pytest.raises(ModelError, match=message):
        parse_model(data, "bad.toml")


def test_a_model_file_by_path(tmp_path, machine):
    path = tmp_path / "mine.toml"
    lines = ['name = "mine"', 'title = "mine"', 'family = "test"', "[device]", "lanes = 0", 'lanes_source = "assumed"',
             'large_tables = "none"',
             "[primitives.t]", "time = 3", 'source = "assumed"', "[words]", "t = 1",
             "[ops]"] + [f"{k} = {{ t = 1 }}" for k in KINDS]
    path.write_text("\n".join(lines) + "\n")
    assert load_model(str(path)).name == "mine"
    machine.run("var X: slice; begin X := BITS('101'); X := X and X; writeln(X); end.")
    assert machine.cost(str(path))["mine"].time == 3 * sum(machine.counts)


def test_load_file_reports_bad_toml_and_missing_files(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("name = [")
    with pytest.raises(ModelError, match="not valid TOML"):
        load_file(bad)
    with pytest.raises(ModelError, match="cannot read"):
        load_file(tmp_path / "none.toml")


# ------------------------------------------------------------------ the arithmetic
SHARED_KINDS = {"AND", "OR", "XOR", "NOT", "SET", "CLR", "FND", "STEP", "NUMB", "FRST", "SOME"}


def _expected(data: dict, counts: dict, rows: int, width: int, words=frozenset()):
    """The estimate recomputed from the TOML data by the rules of docs/costs.md."""
    lanes = data["device"]["lanes"]
    prims = data["primitives"]
    total_t, total_e = 0.0, 0.0
    for kind, n in counts.items():
        on_words = kind in words and kind in SHARED_KINDS
        o = data["words"] if on_words else data["ops"][kind]
        on = "control" if on_words else o.get("on", "array")
        scale = o.get("scale", "none")
        reps = {"none": 1, "width": width, "width64": math.ceil(width / 64),
                "log2rows": max(1, math.ceil(math.log2(rows))) if rows > 1 else 1}[scale]
        for pname, uses in o.items():
            if pname in ("on", "scale", "note"):
                continue
            p = prims[pname]
            if on == "array":
                # the passes, one by one: each covers up to `lanes` rows
                sizes = [rows] if lanes == 0 else [min(lanes, rows - s) for s in range(0, rows, lanes)]
            else:
                sizes = [1]
            if p.get("per_bit"):
                t = p["time"] * rows
                e = p.get("energy_pj", 0) * rows
            else:
                t = p["time"] * len(sizes)
                bits = p.get("energy_bits", 0)
                e = p.get("energy_pj", 0) * sum(math.ceil(s / bits) if bits and on == "array" else 1 for s in sizes)
            total_t += n * reps * uses * t
            total_e += n * reps * uses * e
    return total_t, total_e


@pytest.mark.parametrize("seed", range(6))
def test_estimates_agree_with_a_plain_recomputation(seed):
    rng = random.Random(seed)
    data = _minimal()
    data["device"]["lanes"] = rng.choice([0, 1, 7, 64, 1000])
    data["primitives"]["p"]["energy_bits"] = rng.choice([0, 1, 3, 64])
    data["primitives"]["x"] = {"time": 0.5, "energy_pj": 0.25, "per_bit": True, "source": "assumed"}
    for k in KINDS:
        uses = {rng.choice(["p", "c", "x"]): rng.choice([0, 1, 2, 0.5])}
        data["ops"][k] = {**uses, "on": rng.choice(["array", "control"]),
                          "scale": rng.choice(["none", "width", "width64", "log2rows"])}
    data["words"] = {rng.choice(["p", "c"]): rng.choice([1, 3]), "scale": rng.choice(["none", "width64"])}
    model = parse_model(data)
    counts = {k: rng.randrange(0, 50) for k in rng.sample(KINDS, 12)}
    counts = {k: v for k, v in counts.items() if v}
    words = frozenset(rng.sample(sorted(SHARED_KINDS | {"ROW_GET"}), 4))   # ROW_GET: not a shared kind, ignored
    # edge geometries: one row, exactly the lanes, one past them, not a multiple of 64
    for rows in (1, 7, 8, 1000, 1001, 4097):
        for width in (1, 63, 64, 65, 130):
            est = estimate(model, counts, Geometry(rows, width), words)
            t, e = _expected(data, counts, rows, width, words)
            assert est.time == pytest.approx(t, rel=1e-12, abs=1e-12)
            assert est.energy_pj == pytest.approx(e, rel=1e-12, abs=1e-12)
            assert est.passes == (1 if data["device"]["lanes"] == 0 else -(-rows // data["device"]["lanes"]))


def test_background_power_is_charged_for_the_time():
    data = _minimal(device={"lanes": 4, "lanes_source": "assumed", "large_tables": "in passes", "background_mw": 2.0})
    est = estimate(parse_model(data), {"AND": 3}, Geometry(4, 8))
    # 3 ANDs x 1 pass x 2 ns = 6 ns; 2 mW x 6 ns = 12 pJ; dynamic 3 x 3 pJ x ceil(4 / 2)
    assert est.time == 6 and est.background_pj == pytest.approx(12.0)
    assert est.energy_pj == pytest.approx(12.0 + 18.0)


def test_no_counts_cost_nothing_and_a_time_only_model_has_no_energy():
    est = estimate(load_model("gsi-gemini"), {}, Geometry(10, 10))
    assert est.time == 0 and est.kinds == [] and est.energy_pj is None and est.joules is None
    unit = estimate(load_model("star-unit"), {"AND": 5, "ROW_GET": 2}, Geometry(10 ** 9, 4096))
    assert unit.time == 7 and unit.seconds is None and unit.passes == 1


def test_tables_taller_than_the_device_take_more_passes():
    m = load_model("gsi-gemini")
    one = estimate(m, {"AND": 1}, Geometry(m.lanes, 8))
    more = estimate(m, {"AND": 1}, Geometry(m.lanes + 1, 8))
    assert (one.passes, more.passes) == (1, 2) and more.time == 2 * one.time


def test_si_prefixes():
    assert si(4.947e-6, "s") == "4.95 us" and si(None, "J") == "n/a" and si(0, "J") == "0 J"
    assert si(3.2e-15, "J") == "3.2 fJ" and si(12.0, "s") == "12 s"


def test_list_names_every_model_with_its_sources():
    text = list_text(verbose=True)
    for name in SHIPPED:
        assert f"{name}: " in text
    assert text.count("source: [") >= 8 and "reproduces:" in text and "leaves out:" in text
    assert text.count("tables taller than the device: ") == len(SHIPPED)


# ------------------------------------------------------------------ the geometry and the API
PROGRAM = """\
var T: table(300, 12); F: table(40, 70); X, Z: slice(T); v: word(T); i: integer;
proc SEARCH(var Z: slice(T));
begin
  MATCH(T, X, v, Z);
end;
begin
  for i := 1 to 300 do if i mod 3 = 0 then ROW(i, T) := BITS('101100111000');
  SET(X);
  v := ROW(3, T);
  SEARCH(Z);
  writeln(NUMB(Z));
end.
"""


def test_geometry_is_the_tallest_and_the_widest_table(machine):
    machine.run(PROGRAM)
    assert geometry_of(machine) == Geometry(300, 70)
    assert geometry_of(machine, rows=5, width=9) == Geometry(5, 9)


def test_geometry_without_tables_takes_the_longest_slice_and_word(machine):
    machine.run("var X: slice; w: word; begin X := BITS('10110'); w := BITS('11'); writeln(NUMB(X)); end.")
    assert geometry_of(machine) == Geometry(5, 2)


def test_machine_cost_prices_the_counts(machine):
    machine.run(PROGRAM)
    report = machine.cost(SHIPPED)
    assert report.models == SHIPPED and report.steps == sum(machine.counts)
    assert report["star-unit"].time == sum(machine.counts)
    for name in SHIPPED:
        assert report[name].time == pytest.approx(estimate(load_model(name), machine.stats, Geometry(300, 70)).time)
    text = report.text()
    assert all(n in text for n in SHIPPED) and "300 rows x 70 columns" in text
    with pytest.raises(ModelError, match="available"):
        machine.cost("nope")


def test_a_counting_block_prices_its_own_steps(machine):
    machine.run(PROGRAM)
    with machine.counting() as c:
        machine.call("SEARCH", machine.globals["Z"])
    r = c.cost("star-unit,cam-ap")
    assert r["star-unit"].time == c.total == sum(machine.last_call_stats.values())
    # MATCH over 12 columns: one compare per COL read, 300 rows, 0.115 fJ a bit
    assert r["cam-ap"].energy_pj == pytest.approx(12 * 300 * 0.000115)


def test_per_routine_costs_when_profiled(backend):
    m = starvm.Machine(backend=backend, out=io.StringIO(), native=False)
    m.profile = True
    m.routine_profile.by_kind = True
    m.run(PROGRAM)
    report = m.cost("star-unit,pimeval-bitsimd-v")
    by_name = {r.display: r for r in report.routines}
    assert set(by_name) >= {"SEARCH", "MATCH"}
    search, match = by_name["SEARCH"], by_name["MATCH"]
    assert search.total_estimates[0].time == match.total_estimates[0].time == 12 + 12 + 12 + 6
    assert search.self_estimates[0].time == 0     # SEARCH's own steps: none, MATCH's are its callee's
    stats = m.routine_profile.routines
    for s in stats.values():
        if s.calls:
            assert sum(s.kinds_total) == s.steps_total and sum(s.kinds_self) == s.steps_self
    assert "per routine" in report.text()


def test_without_by_kind_the_profile_keeps_no_kinds():
    m = starvm.Machine(out=io.StringIO(), native=False)
    m.profile = True
    m.run(PROGRAM)
    assert all(s.kinds_total is None for s in m.routine_profile.routines.values())
    assert m.cost("star-unit").routines == []


# ------------------------------------------------------------------ one estimate, every route
SIMPLE = """\
var G, K: table(130, 9); P: table(70, 70); X, Z, M: slice(G); v: word(G); w: word(P); i: integer;
proc CLOSE(n: integer; var P: table);
var V, W: slice(P); j, k: integer;
begin
  for k := 1 to n do parallel for j := 1 to n do begin
    W := COL(k, P); V := COL(j, P);
    if V(k) = 1 then V := V or W;
    COL(j, P) := V;
  end;
end;
begin
  IOTA(G);
  for i := 1 to 130 do ROW(i, K) := ROW(131 - i, G);
  for i := 1 to 70 do begin w := ROW(i, P); w(i mod 70 + 1) := 1; w((i * 7) mod 70 + 1) := 1; ROW(i, P) := w; end;
  SET(X);
  GROUPMIN(G, K, X, M);
  v := ROW(5, K);
  MATCH(K, X, v, Z);
  CLOSE(70, P);
  writeln(NUMB(M), ' ', NUMB(Z));
end.
"""


def _estimates(backend, **kw):
    m = starvm.Machine(backend=backend, out=io.StringIO(), **kw)
    m.run(SIMPLE)
    r = m.cost(SHIPPED)
    # the route really differs: natives replaced IOTA and GROUPMIN, the parallel for ran fused
    assert (m.native_timing[0] > 0) == kw["native"] and (m.fused_timing[0] > 0) == (kw["fuse"] and kw["jit"] == "off")
    return m.stats, [(e.time, e.energy_pj) for e in r.estimates], m.out.getvalue()


def test_the_estimate_is_the_same_on_every_route(backend):
    base = _estimates("numpy", native=False, fuse=False, jit="off")
    assert base[1][SHIPPED.index("star-unit")][0] == sum(base[0].values())
    for kw in ({"native": True, "fuse": True, "jit": "off"}, {"native": False, "fuse": True, "jit": "off"},
               {"native": True, "fuse": False, "jit": "off"}):
        assert _estimates(backend, **kw) == base, kw


@pytest.mark.parametrize("tier_backend", ["numpy", pytest.param("cupy", marks=pytest.mark.backend("cupy"))])
def test_the_estimate_is_the_same_when_compiled(tier_backend):
    """The compiled tier: Numba on the CPU (numpy), CUDA on the GPU (cupy)."""
    from conftest import usable
    usable(tier_backend)
    base = _estimates("numpy", native=False, fuse=True, jit="off")
    m = starvm.Machine(backend=tier_backend, out=io.StringIO(), native=False, jit="on")
    m.run(SIMPLE)
    assert any("ran compiled" in line for line in m.jit.report())
    assert (m.stats, [(e.time, e.energy_pj) for e in m.cost(SHIPPED).estimates], m.out.getvalue()) == base


# ------------------------------------------------------------------ the REPL's :cost
def test_repl_cost(machine):
    from starvm.ui.repl import Session
    s = Session(machine, out=io.StringIO())
    s.feed("var T: table(100, 8); X: slice(T);")
    s.feed("proc F; begin X := COL(1, T) and COL(2, T); end;")
    s.feed("F")
    out = s.feed(":cost star-unit,cam-ap")
    assert "3 steps" in out and "3 ns" in out and "100 rows x 8 columns" in out and "per routine" not in out
    assert "gsi-gemini" in s.feed(":cost")                      # every model without a name
    assert "source: [smle2014]" in s.feed(":cost list")
    errors = s.errors
    assert "unknown cost model 'nope' (available: cam-ap" in s.feed(":cost nope") and s.errors == errors + 1
    s.feed(":profile on")
    s.feed(":stats reset")
    s.feed("F")
    assert "per routine" in s.feed(":cost star-unit") and ":cost" in s.feed(":help")
    s.feed(":reset")                                            # a fresh machine, still profiled
    s.feed("var T: table(10, 2); X: slice(T);")
    s.feed("proc G; begin X := COL(1, T); end;")
    s.feed("G")
    assert "per routine" in s.feed(":cost star-unit")


# ------------------------------------------------------------------ slices or words, from the program
def _classes(text, **kw):
    from starvm.costs.operands import machine_classes
    m = starvm.Machine(out=io.StringIO(), native=False, **kw)
    m.run(text)
    return m, machine_classes(m)


def test_the_program_says_which_operations_act_on_words():
    from conftest import ROOT
    _m, warshall = _classes((ROOT / "programs" / "warshall.star").read_text())
    assert warshall == {"OR": "word", "STEP": "slice", "SOME": "slice"}        # v := v or w on rows
    _m, warshall_c = _classes((ROOT / "programs" / "warshall_c.star").read_text())
    assert warshall_c == {"STEP": "word", "OR": "slice"}                       # i := STEP(x), x a row
    m, mixed = _classes("""var T: table(8, 4); X, Z: slice(T); v, w: word(T);
proc F(var Z: slice(T)); begin Z := Z and X; end;
begin SET(X); v := ROW(1, T); w := v and v; F(Z); writeln(NUMB(Z)); end.""")
    assert mixed == {"SET": "slice", "AND": "both", "NUMB": "slice"}
    report = m.cost("gsi-gemini")
    assert "and: written on slices and on words; priced as slice operations" in report.text()


def test_word_operations_are_priced_as_the_control_units():
    text = """var T: table(3000, 70); X: slice(T); v, w: word(T); i, j: integer;
begin SET(X); v := ROW(1, T); for i := 1 to 10 do begin w := v or v; j := STEP(w); end; end."""
    m, classes = _classes(text)
    assert classes == {"SET": "slice", "OR": "word", "STEP": "word"}
    for name in SHIPPED:
        model = load_model(name)
        est = m.cost(name)[name]
        assert est.kind("OR").on_words and est.kind("STEP").on_words and not est.kind("SET").on_words
        as_slices = estimate(model, m.stats, Geometry(3000, 70))
        words = model.words
        per = sum(u * model.primitives[p].time for p, u in words.uses.items()) * (2 if words.scale == "width64" else 1)
        assert est.kind("OR").time == pytest.approx(10 * per)
        if name != "star-unit":
            assert est.kind("OR").time != as_slices.kind("OR").time
    assert "(words)" in m.cost("cam-ap").text()


def test_library_routines_the_program_does_not_reach_do_not_count():
    # rows.star comes whole with GATHER; GROUPMIN's CLR, FND, and, not are not reached
    _m, classes = _classes("""var T, R: table(4, 3); IX: table(4, 3); X: slice(IX);
begin SET(X); IOTA(IX); GATHER(T, IX, X, R); end.""")
    assert classes == {"SET": "slice", "SOME": "slice", "STEP": "slice"}
