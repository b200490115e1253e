"""The REPL sessions printed in README.md (and the examples of `:help`) are what the prompt
really prints."""
from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from starvm.ui.repl import HELP, PROMPT, Session, is_complete

ROOT = Path(__file__).resolve().parents[2]
CONTINUATION = "  ... "


def _blocks():
    """Every fenced block of README.md that holds a prompt transcript."""
    blocks, current = [], None
    for line in (ROOT / "README.md").read_text().splitlines():
        if line.startswith("```"):
            if current is None:
                current = []
            else:
                blocks.append("".join(x + "\n" for x in current))
                current = None
        elif current is not None:
            current.append(line)
    return [b for b in blocks if b.startswith(PROMPT)]


def _run_transcript(block: str, tmp_path, monkeypatch) -> Session:
    monkeypatch.chdir(tmp_path)             # :plot P P.png writes here
    s = Session(backend="numpy", out=io.StringIO())
    inputs, outputs = [], []
    for line in block.splitlines():
        if line.startswith(PROMPT):
            inputs.append([line[len(PROMPT):]])
            outputs.append("")
        elif line.startswith(CONTINUATION):
            inputs[-1].append(line[len(CONTINUATION):])
        else:
            outputs[-1] += line + "\n"
    for lines, want in zip(inputs, outputs):
        if lines[0].startswith(":plot"):
            try:
                import matplotlib  # noqa: F401
            except ImportError:
                continue
        assert is_complete("\n".join(lines)) and (len(lines) == 1 or not is_complete(lines[0]))
        got = s.feed("\n".join(lines))
        assert got == want, lines
    return s


def test_readme_has_transcripts():
    assert len(_blocks()) >= 2


@pytest.mark.parametrize("index", range(len(_blocks())))
def test_readme_repl_transcript(index, tmp_path, monkeypatch):
    s = _run_transcript(_blocks()[index], tmp_path, monkeypatch)
    assert s.errors == 0


def test_help_examples_run():
    """The example lines of `:help` run, in order, without an error."""
    s = Session(backend="numpy", out=io.StringIO())
    examples = [re.split(r"\s{2,}", line.strip())[0] for line in HELP.splitlines()
                if line.startswith("  ") and not line.startswith("  :")
                and line.strip() and "..." not in line]
    assert examples and examples[0].startswith("var")
    for ex in examples:
        s.feed(ex)
    assert s.errors == 0
