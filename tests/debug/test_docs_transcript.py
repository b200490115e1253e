"""docs/debugging.md's session is real: its commands, piped into `star debug`, print exactly
the transcript shown."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from conftest import subprocess_env

ROOT = Path(__file__).resolve().parents[2]
HEADER = "$ star debug programs/warshall_c.star < commands.txt\n"


def test_the_documented_session_is_what_star_debug_prints():
    doc = (ROOT / "docs" / "debugging.md").read_text()
    block = doc.split("```text\n" + HEADER, 1)[1].split("\n```", 1)[0] + "\n"
    commands = "".join(m + "\n" for m in re.findall(r"(?m)^debug> (.*)$", block))
    assert "back" in commands and "watch k" in commands
    r = subprocess.run([sys.executable, "-m", "starvm", "debug", "programs/warshall_c.star"], input=commands,
                       capture_output=True, text=True, cwd=ROOT, env=subprocess_env(), timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout == block
