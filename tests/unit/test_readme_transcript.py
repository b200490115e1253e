"""The REPL session printed in README.md is what the prompt really prints."""
from __future__ import annotations

import io
import re
from pathlib import Path

from starvm.repl import PROMPT, Session

ROOT = Path(__file__).resolve().parents[2]


def test_readme_repl_transcript(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)             # :plot P P.png writes here
    text = (ROOT / "README.md").read_text()
    block = re.search(r"A session \(what the prompt prints after each input\):\n\n```\n(.*?)^```",
                      text, re.M | re.S).group(1)
    s = Session(backend="numpy", out=io.StringIO())
    inputs, outputs = [], []
    for line in block.splitlines():
        if line.startswith(PROMPT):
            inputs.append(line[len(PROMPT):])
            outputs.append("")
        else:
            outputs[-1] += line + "\n"
    for inp, want in zip(inputs, outputs):
        if inp.startswith(":plot"):
            try:
                import matplotlib  # noqa: F401
            except ImportError:
                continue
        assert s.feed(inp) == want, inp
    assert s.errors == 0
