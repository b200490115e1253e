"""Figures with their source (issue 18): every measured figure quoted in README.md and
docs/*.md is listed in docs/figures.toml with the results file under bench/results/ it comes
from and how it is rounded; this test reads the committed results (JSON) and fails when a
quoted figure no longer matches, is no longer in its document, or its section does not name
its results file. The manifest's header says how to write an entry."""
from __future__ import annotations

import json
import math
import re
import tomllib
from functools import lru_cache

import pytest

from conftest import ROOT, in_git
from starvm.benchmarking.results_index import read_source

MANIFEST = ROOT / "docs" / "figures.toml"
NUMBER = re.compile(r"(?<![\w.^])\d+(?:\.\d+)?(?![\w^])")


def load_manifest() -> list[dict]:
    data = tomllib.loads(MANIFEST.read_text())
    out = []
    for group in data["figures"]:
        for item in group["items"]:
            out.append({"doc": group["doc"], "source": group["source"], **item})
    return out


@lru_cache(maxsize=None)
def results(source: str):
    """bench/results/NAME.json, or an earlier run as git holds it: REV:bench/results/NAME.json."""
    return json.loads(read_source(ROOT, source))


_STEP = re.compile(r"([^.\[\]]+)|\[([^\]]*)\]")


def resolve(data, path: str):
    """a.b[2].c, a[key=value,key2=value2].c (the one element whose keys match), a[*].c (a list)."""
    cur = [data]
    many = False
    for name, sel in _STEP.findall(path):
        nxt = []
        for x in cur:
            if name:
                nxt.append(x[name])
            elif sel == "*":
                nxt.extend(x.values() if isinstance(x, dict) else x)
                many = True
            elif "=" in sel:
                conds = [c.split("=", 1) for c in sel.split(",")]
                hits = [e for e in x if all(str(e.get(k.strip())) == v.strip() for k, v in conds)]
                if len(hits) != 1:
                    raise KeyError(f"{path}: [{sel}] matches {len(hits)} elements")
                nxt.append(hits[0])
            else:
                nxt.append(x[int(sel)])
        cur = nxt
    return cur if many else cur[0]


def value(data, expr: str) -> float:
    """A path, or '= expression' over v(path) with min, max, sum, len, abs, math."""
    if not expr.startswith("="):
        return resolve(data, expr)
    env = {"__builtins__": {}, "v": lambda p: resolve(data, p), "min": min, "max": max, "sum": sum,
           "len": len, "abs": abs, "float": float, "math": math}
    return eval(expr[1:], env)


def rounded(x: float, digits: int | None = None, sig: int | None = None) -> str:
    if digits is not None:
        return f"{x:.{digits}f}"
    if x == 0:
        return "0"
    decimals = sig - 1 - math.floor(math.log10(abs(x)))
    r = round(x, decimals)
    if r and math.floor(math.log10(abs(r))) != math.floor(math.log10(abs(x))):   # 9.96 -> 10.0
        decimals -= 1
        r = round(x, decimals)
    return f"{r:.{max(0, decimals)}f}"


def _per_number(item, key, count):
    v = item.get(key)
    return v if isinstance(v, list) else [v] * count


def sections(text: str) -> list[tuple[int, int]]:
    """(first line, end line) of each part between Markdown headings, outside code blocks."""
    lines, starts, fence = text.splitlines(), [0], False
    for i, line in enumerate(lines):
        if line.startswith("```"):
            fence = not fence
        elif not fence and line.startswith("#"):
            starts.append(i)
    starts.append(len(lines))
    return list(zip(starts, starts[1:]))


FIGURES = load_manifest()


@pytest.mark.parametrize("fig", FIGURES, ids=lambda f: f"{f['doc']}:{f['quote']}")
def test_quoted_figure_matches_its_results_file(fig):
    text = (ROOT / fig["doc"]).read_text()
    lines = text.splitlines()
    near = fig.get("near", fig["quote"])
    found = [i for i, line in enumerate(lines) if near in line and fig["quote"] in line]
    assert found, f"{fig['doc']} no longer has a line with {near!r} and {fig['quote']!r}"
    numbers = NUMBER.findall(fig["quote"])
    exprs = fig["values"]
    assert len(numbers) == len(exprs), f"{fig['quote']!r}: {len(numbers)} numbers, {len(exprs)} values"
    if ":" in fig["source"] and not in_git():
        pytest.skip("an earlier run, read from git: no git checkout here")
    data = results(fig["source"])
    scales = _per_number(fig, "scale", len(numbers))
    digits, sig = _per_number(fig, "digits", len(numbers)), _per_number(fig, "sig", len(numbers))
    for k, (quoted, expr) in enumerate(zip(numbers, exprs)):
        x = value(data, expr) * (scales[k] or 1)
        want = rounded(x, digits[k], sig[k])
        assert quoted == want, (f"{fig['doc']}: {fig['quote']!r} quotes {quoted}, but {fig['source']} "
                                f"{expr} gives {x!r}, i.e. {want}")
    # the section quoting it names the results file (a link or a path; an earlier run as REV:path)
    rev, _, path = fig["source"].rpartition(":")
    stem = re.escape(path.rsplit("/", 1)[-1].rsplit(".", 1)[0])
    named = rf"{rev}:bench/results/{stem}\.(md|json)\b" if rev else rf"(?<![\w:/])(?:\.\./)*(?:bench/results/)?{stem}\.(md|json|log)\b"
    for start, end in sections(text):
        if start <= found[0] < end:
            part = "\n".join(lines[start:end])
            assert re.search(named, part), \
                f"{fig['doc']}: the section quoting {fig['quote']!r} does not name {fig['source']}"


def test_every_results_file_named_in_the_manifest_exists_and_is_committed_json():
    for source in {f["source"] for f in FIGURES}:
        rev, _, path = source.rpartition(":")
        assert path.startswith("bench/results/") and path.endswith(".json"), source
        if rev and not in_git():
            continue
        results(source)


def test_the_number_matching_rules():
    assert rounded(111.1, sig=2) == "110" and rounded(0.0004829, sig=2) == "0.00048"
    assert rounded(20.036, sig=3) == "20.0" and rounded(9.96, sig=2) == "10" and rounded(0.0376, digits=3) == "0.038"
    data = {"a": [{"n": 1, "x": 2.0}, {"n": 2, "x": 3.0}], "b": {"c": {"d": 4}}}
    assert resolve(data, "a[n=2].x") == 3.0 and resolve(data, "b.c.d") == 4 and resolve(data, "a[0].x") == 2.0
    assert resolve(data, "a[*].x") == [2.0, 3.0] and value(data, "=max(v('a[*].x')) / v('b.c.d')") == 0.75
    assert NUMBER.findall("| 0.00048 | 2^20 rows | 1.07-1.15 times | x2 |") == ["0.00048", "1.07", "1.15"]


# ---------------------------------------------------------------- no figure without an entry
# A figure: a number (or a range a-b) with a unit of time, rate, size or a ratio, or a table
# cell holding only a decimal number; outside code blocks and `code`.
FIGURE = re.compile(r"(?<![\w.^])\d+(?:\.\d+)?(?:[-–]\d+(?:\.\d+)?)?(?:\s(?:s|ms|µs|MTEPS|GiB|MiB|GB|MB)(?!\w)|×(?!\s?\d))")
CELL = re.compile(r"(?<=\|)\s*\**(\d+\.\d+)\**\s*(?=\|)")
DOCS = ["README.md", *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md"))]


def _not_figures() -> list[dict]:
    return tomllib.loads(MANIFEST.read_text()).get("not_figures", [])


def _spans(pattern: str, line: str):
    return [(m.start(), m.end()) for m in re.finditer(pattern, line)]


@pytest.mark.parametrize("doc", DOCS)
def test_every_figure_in_the_docs_is_in_the_manifest(doc):
    quotes = [f["quote"] for f in FIGURES if f["doc"] == doc]
    exempt = [x["text"] for x in _not_figures() if x["doc"] == doc and not x.get("whole_line")]
    exempt_lines = [x["text"] for x in _not_figures() if x["doc"] == doc and x.get("whole_line")]
    missing, fence = [], False
    for number, line in enumerate((ROOT / doc).read_text().splitlines(), 1):
        if line.startswith("```"):
            fence = not fence
            continue
        if fence or any(x in line for x in exempt_lines):
            continue
        covered = _spans(r"`[^`]*`", line)
        for q in quotes + exempt:
            covered += _spans(re.escape(q), line)
        found = [(m.start(), m.group()) for m in FIGURE.finditer(line)]
        found += [(m.start(1), m.group(1)) for m in CELL.finditer(line)]
        for start, text in found:
            if not any(a <= start < b for a, b in covered):
                missing.append(f"{doc}:{number}: {text!r} in: {line.strip()[:100]}")
    assert not missing, ("figures not in docs/figures.toml (add an entry with its results file, or a "
                         "[[not_figures]] entry saying why it is not a measurement):\n" + "\n".join(missing))
