"""The CPU tier's census (issue 31): under ``--jit on`` nothing of the shipped programs, the
standard library, the tests/star programs or the fuzz generator's programs is left to the
interpreter, except what is listed here with its reason. The tier decides when a program is
loaded (tier.Tier.support renders each routine; nothing is compiled here), so the census
is cheap: it is what ``star run --jit on --profile`` reports as interpreted."""
from __future__ import annotations

import io
from pathlib import Path

import pytest

import starvm
from starvm.errors import StarError

ROOT = Path(__file__).resolve().parents[2]

# (file, routine) -> what its reason says: the only routines the CPU tier leaves interpreted
ALLOWED = {
    # integer literals past 64 bits: compiled integers are 64-bit, the interpreter's unbounded
    ("big_integers.star", "main block"): "levels",
}
# a library routine with a native kernel: the kernel runs its interpreted calls, its Star body
# compiles into compiled callers (not an interpreted routine)
NATIVE_NOTE = "a native kernel runs its calls"


def _census(text: str, filename: str, **machine) -> dict[str, str]:
    m = starvm.Machine(out=io.StringIO(), jit="on", **machine)
    m.load(text, filename)
    return {d: why for d, why in m.jit.skipped.items() if NATIVE_NOTE not in why}


def _star_files():
    # every file, also those that do not load (the mistake_* programs): compiling each here to
    # leave those out cost every xdist worker 4.3 s at collection; their test checks them instead
    return sorted((ROOT / "programs").glob("*.star")) + sorted((ROOT / "tests" / "star").glob("*.star"))


STAR_FILES = _star_files()


def test_every_shipped_program_and_library_routine_compiles():
    names = {p.name for p in STAR_FILES}
    assert {"bfs.star", "mst_boruvka.star", "dijkstra.star", "warshall_c.star"} <= names
    shipped = [p for p in STAR_FILES if p.parent.name == "programs"]
    assert len(shipped) == 13
    for path in shipped:
        left = _census(path.read_text(), str(path))
        assert left == {}, f"{path.name}: {left}"


@pytest.mark.parametrize("path", [p for p in STAR_FILES if p.parent.name == "star"], ids=lambda p: p.name)
def test_the_star_test_programs_compile_but_for_the_listed_reasons(path):
    try:
        left = _census(path.read_text(), str(path))
    except StarError as e:     # a program that must not load: its expected error is in NAME.error
        expected = path.with_suffix(".error")
        assert expected.exists(), f"{path.name} does not load: {e.render()}"
        assert e.render().splitlines()[0].replace(str(path), path.name) == expected.read_text().strip()
        return
    for display, why in left.items():
        expected = ALLOWED.get((path.name, display))
        assert expected is not None and expected in why, f"{path.name}: {display}: {why}"


def test_the_fuzz_generators_programs_compile():
    from reference.gen import Gen, RandomSource, render
    left = {}
    for seed in range(40):
        gen = Gen(RandomSource(seed), recursion_pct=50, fn_output_pct=50, error_pct=30,
                  mutual_pct=30, edge_pct=20)
        text = render(gen.program())
        for display, why in _census(text, "fuzz.star").items():
            left.setdefault(why, f"seed {seed}: {display}")
    assert left == {}, left
