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


# ---------------------------------------------------------------- every code block runs
# A block is ```star or ```pascal (a whole program; the ```output block right after it is
# exactly what it prints, an ```error block the first line of its error, the file being
# called example.star), ```python (">>>" sessions run as doctests, one namespace per page,
# in the repository root; other Python must run without an error), or a plain ``` block
# starting with "star> " (a prompt session: each input prints what follows it).
# A block that cannot run here says why on the line before its fence:
#   <!-- not run: REASON -->
# docs/language.md's blocks are run by tests/unit/test_language_doc.py.

import doctest
import io
import sys

import pytest

FENCE = re.compile(r"^```(\w*)\n(.*?)^```\n", re.S | re.M)
NOT_RUN = re.compile(r"<!-- not run: (.+?) -->\s*$")
RUN_DOCS = [d for d in DOCS if d.name != "language.md"]


def _blocks(doc: Path):
    text = doc.read_text()
    found = []
    for m in FENCE.finditer(text):
        before = text[:m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        line = text[:m.start()].count("\n") + 1
        skip = NOT_RUN.search(before)
        found.append((m.group(1), m.group(2), line, skip.group(1) if skip else None))
    return found


def _cases():
    cases = []
    for doc in RUN_DOCS:
        blocks = _blocks(doc)
        for i, (lang, body, line, skip) in enumerate(blocks):
            after = blocks[i + 1] if i + 1 < len(blocks) else None
            if lang in ("star", "pascal"):
                want = (after[0], after[1]) if after and after[0] in ("output", "error") else None
                cases.append(pytest.param(doc, "program", body, want, skip, id=f"{doc.name}:{line}"))
            elif lang == "" and body.startswith("star> "):
                cases.append(pytest.param(doc, "prompt", body, None, skip, id=f"{doc.name}:{line}"))
    return cases


@pytest.mark.parametrize("doc, kind, body, want, skip", _cases())
def test_doc_block_prints_what_the_page_shows(doc, kind, body, want, skip, tmp_path, monkeypatch):
    if skip:
        pytest.skip(skip)
    import starvm
    if kind == "program":
        out = io.StringIO()
        m = starvm.Machine(backend="numpy", out=out)
        if want is not None and want[0] == "error":
            with pytest.raises(starvm.StarError) as info:
                m.run(body, "example.star")
            assert info.value.render().splitlines()[0] == want[1].strip()
        else:
            m.run(body, "example.star")
            assert want is not None, "a program block needs an ```output block after it (or a not-run marker)"
            assert out.getvalue() == want[1]
    else:
        if doc.name == "README.md":
            pytest.skip("README's prompt sessions: tests/unit/test_readme_transcript.py")
        _run_transcript(body, tmp_path, monkeypatch)


def _run_transcript(block: str, tmp_path, monkeypatch) -> None:
    """Feed each "star> " input (with its "  ... " continuation lines) to a fresh prompt
    session; what it prints must be the lines that follow it on the page."""
    from starvm.ui.repl import PROMPT, Session
    monkeypatch.chdir(tmp_path)
    s = Session(backend="numpy", out=io.StringIO())
    inputs, outputs = [], []
    for line in block.splitlines():
        if line.startswith(PROMPT):
            inputs.append([line[len(PROMPT):]])
            outputs.append("")
        elif line.startswith("  ... "):
            inputs[-1].append(line[len("  ... "):])
        else:
            outputs[-1] += line + "\n"
    for lines, want in zip(inputs, outputs):
        assert s.feed("\n".join(lines)) == want, lines
    assert s.errors == 0


def _python_pages():
    pages = []
    for doc in RUN_DOCS:
        blocks = [(body, line, skip) for lang, body, line, skip in _blocks(doc) if lang == "python"]
        if blocks:
            pages.append(pytest.param(doc, blocks, id=doc.name))
    return pages


@pytest.mark.parametrize("doc, blocks", _python_pages())
def test_doc_python_blocks_run(doc, blocks, monkeypatch):
    monkeypatch.chdir(ROOT)                # the blocks open programs/... as a user's checkout does
    globs: dict = {}
    ran = 0
    for body, line, skip in blocks:
        if skip:
            continue
        if body.lstrip().startswith(">>>"):
            test = doctest.DocTestParser().get_doctest(body, globs, f"{doc.name}:{line}", str(doc), line)
            runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
            out = io.StringIO()
            result = runner.run(test, out=out.write, clear_globs=False)
            assert result.failed == 0, out.getvalue()
        else:
            code = compile(body, f"{doc.name}:{line}", "exec")
            with pytest.MonkeyPatch.context() as mp:
                mp.setattr(sys, "stdout", io.StringIO())
                exec(code, globs)
        ran += 1
    if not ran:
        pytest.skip("; ".join(skip for _, _, skip in blocks))


# ---------------------------------------------------------------- the README's first hour

def _readme_first_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    return FENCE.search(text[text.index("```sh"):]).group(2).splitlines()


def test_readme_program_is_the_file_the_first_command_runs(tmp_path):
    """The README's "A Star program" listing is programs/warshall_c.star, byte for byte, and its
    output block is what the first command (`star run programs/warshall_c.star`) prints."""
    import subprocess
    first = _readme_first_commands()[0]
    assert first.endswith("star run programs/warshall_c.star"), first
    text = (ROOT / "README.md").read_text()
    section = text[text.index("## A Star program"):]
    blocks = [(lang, body) for lang, body, _, _ in _blocks_of(section)][:2]
    assert [lang for lang, _ in blocks] == ["pascal", "output"]
    assert blocks[0][1] == (ROOT / "programs" / "warshall_c.star").read_text().rstrip("\n") + "\n"
    r = subprocess.run([sys.executable, "-m", "starvm", "run", "programs/warshall_c.star"], cwd=ROOT,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert blocks[1][1] == r.stdout
    assert r.stdout == (ROOT / ".ci" / "expected" / "warshall_c.out").read_text()


def test_readme_first_command_installs_only_what_running_needs():
    """The first command installs starvm without extras (a light first run); the second
    installs the test extras before it runs the tests."""
    run, test = _readme_first_commands()[:2]
    assert re.fullmatch(r"python3 -m pip install \. && star run programs/warshall_c\.star", run), run
    assert re.fullmatch(r'python3 -m pip install "\.\[test\]" && python3 -m pytest( .*)?', test), test


def _blocks_of(text: str):
    return [(m.group(1), m.group(2), 0, None) for m in FENCE.finditer(text)]
