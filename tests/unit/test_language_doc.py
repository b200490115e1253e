"""docs/language.md: every ```star example runs and prints exactly its ```output block, or
stops with the first line of its ```error block (the file is called example.star)."""
from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

import starvm

DOC = Path(__file__).resolve().parents[2] / "docs" / "language.md"
TEXT = DOC.read_text()
EXAMPLE = re.compile(r"^```star\n(.*?)^```\n\s*^```(output|error)\n(.*?)^```\n", re.M | re.S)
EXAMPLES = [(m.group(1), m.group(2), m.group(3), TEXT[:m.start()].count("\n") + 1) for m in EXAMPLE.finditer(TEXT)]


def test_every_star_block_has_its_expectation():
    assert len(re.findall(r"^```star\n", TEXT, re.M)) == len(EXAMPLES) >= 20


def test_the_doc_covers_the_language():
    for word in ["integer", "boolean", "slice(T)", "word(T)", "table(n, k)", "if", "while", "repeat",
                 "downto", "parallel for", "writeln", "write", "copy-in / copy-out", "by reference",
                 "short-circuit", "BITS", "LEN", "NROWS", "NCOLS", "exit"]:
        assert word in TEXT, word
    code = "\n".join(src for src, _, _, _ in EXAMPLES)
    for name in ["SET", "CLR", "FND", "STEP", "NUMB", "CONVERT", "FRST", "SOME", "TRIM", "REP", "EQ",
                 "NOTEQ", "LESS", "LESSEQ", "GREAT", "GREATEQ", "ADD", "SUBT", "COL", "ROW", "BITS",
                 "LEN", "NROWS", "NCOLS", "WRITELN", "WRITE"]:   # every operation of spec §3 and more
        assert re.search(rf"\b{name}\s*\(", code, re.I), name


@pytest.mark.parametrize("src, kind, want, line", EXAMPLES, ids=[f"line{e[3]}" for e in EXAMPLES])
def test_example(backend, src, kind, want, line):
    out = io.StringIO()
    m = starvm.Machine(backend=backend, out=out)
    if kind == "output":
        m.run(src, "example.star")
        assert out.getvalue() == want, f"docs/language.md line {line}"
    else:
        with pytest.raises(starvm.StarError) as info:
            m.run(src, "example.star")
        assert info.value.render().splitlines()[0] == want.strip(), f"docs/language.md line {line}"


def test_rendered_error_shown_in_the_doc():
    shown = re.search(r"^```\n(example\.star:4:13: error: division by zero.*?)^```", TEXT, re.M | re.S).group(1)
    src = next(s for s, _, w, _ in EXAMPLES if w.startswith("example.star:4:13: error: division by zero"))
    with pytest.raises(starvm.StarError) as info:
        starvm.Machine(backend="numpy", out=io.StringIO()).run(src, "example.star")
    assert info.value.render().strip() == shown.strip()
