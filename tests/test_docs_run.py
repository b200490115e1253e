"""The docs as a user reads them: what they name and show is what starvm does (issue 21)."""
from __future__ import annotations

import re
from pathlib import Path

from starvm.ir.ops import BASE_OPS, OP_TITLES

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def test_docs_cite_no_file_a_user_does_not_have():
    for doc in DOCS:
        text = doc.read_text()
        for bad in ("STAR.md", "shared/papers", "/work/shared", "spec §"):
            assert bad not in text, f"{doc.name} cites {bad!r}"


def test_step_names_table_is_the_one_vocabulary():
    """docs/language.md's table of step names lists every base operation under the name the
    profile prints (OP_TITLES) and the key of Machine.stats (the opcode name)."""
    text = (ROOT / "docs" / "language.md").read_text()
    section = text.split("### Step names", 1)[1]
    rows = re.findall(r"^\| `([^`]+)` \| `([A-Z_]+)` \|", section, re.M)
    assert rows == [(OP_TITLES[op], op.name) for op in BASE_OPS]


def test_stdlib_formulas_use_the_step_names():
    """The cost formulas of docs/stdlib.md name steps as the profile prints them."""
    text = (ROOT / "docs" / "stdlib.md").read_text()
    formulas = [line.split("|")[-2] for line in text.splitlines()
                if line.startswith("| `") and " — **" in line.split("|")[-2]]
    assert len(formulas) >= 10
    names = {t for t in OP_TITLES.values()}
    for f in formulas:
        for term in re.findall(r"([A-Za-z][A-Za-z ()_]*?) \d*[kzo0-9][^,—]*", f.split("—")[0]):
            term = term.strip()
            if term and not term.startswith(("as ", "the same")):
                assert term in names, (term, f)


def test_setnum_numof_cost_what_the_reference_says(backend):
    """docs/language.md: SETNUM takes LEN(w) bit writes, NUMOF LEN(w) bit reads, any width."""
    import random

    import starvm
    rng = random.Random(21)
    for width in (1, 7, 64, 70):
        i = rng.randrange(2 ** width)
        m = starvm.Machine(backend=backend, out=None)
        m.run(f"var w: word; k: integer;\nbegin\n  w := BITS('{'0' * width}');\n  SETNUM({i}, w)\nend.")
        assert m.stats == {"BIT_SET": width}
        assert str(m.globals["w"]) == format(i, f"0{width}b")
        m.reset_stats()
        m.run("begin k := NUMOF(w) end.")
        assert m.stats == {"BIT_GET": width} and m.globals["k"] == i
