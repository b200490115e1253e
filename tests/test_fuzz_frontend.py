"""Front-end fuzzing in CI: a few hundred mutated/truncated shipped programs and random texts.
Only success or a StarError with a position (CLI exit 1) is acceptable. The long run is
bench/fuzz_frontend.py."""
from __future__ import annotations

import random
import subprocess
import sys

import pytest

from conftest import subprocess_env
from reference.mutate import ROOT, classify_cli, classify_run, inputs, structured_text

GOOD = {"ok", "star_error", "unreadable"}


@pytest.mark.parametrize("seed", range(4))
def test_mutated_programs_run_or_fail_with_a_position(seed):
    for i, (name, text) in enumerate(inputs(random.Random(seed), 80, edges=False)):
        outcome, detail = classify_run(text)
        assert outcome in GOOD, f"input {i} from {name}: {outcome}: {detail}\n---\n{text}"


@pytest.mark.parametrize("seed", range(2))
def test_mutated_programs_check_in_the_cli(seed, tmp_path):
    path = tmp_path / "f.star"
    for i, (name, text) in enumerate(inputs(random.Random(100 + seed), 80, edges=False)):
        path.write_text(text, encoding="utf-8", errors="surrogateescape")
        for command in ("check", "run"):
            outcome, detail = classify_cli(str(path), command)
            assert outcome in GOOD, f"{command}, input {i} from {name}: {outcome}: {detail}\n---\n{text}"


def test_long_deep_and_huge_inputs_run_or_fail_with_a_position(tmp_path):
    """A quick sample of the campaign's edge inputs (bench/fuzz_frontend.py runs 1 in 20 of
    its inputs at full size): flat expressions past 200 terms, constructs nested past
    Python's limits, integers past 4300 digits; run and `star check`."""
    rnd = random.Random(37)
    path = tmp_path / "f.star"
    for i in range(10):
        text = structured_text(rnd, quick=True)
        outcome, detail = classify_run(text)
        assert outcome in GOOD, f"input {i}: {outcome}: {detail}\n---\n{text[:2000]}"
        path.write_text(text)
        outcome, detail = classify_cli(str(path), "check")
        assert outcome in GOOD, f"check, input {i}: {outcome}: {detail}\n---\n{text[:2000]}"


def test_a_few_through_a_subprocess(tmp_path):
    path = tmp_path / "f.star"
    for i, (name, text) in enumerate(inputs(random.Random(7), 4)):
        path.write_text(text, encoding="utf-8", errors="surrogateescape")
        p = subprocess.run([sys.executable, "-m", "starvm", "run", "--max-steps", "20000", str(path)],
                           capture_output=True, text=True, timeout=120, cwd=ROOT,
                           env=subprocess_env())
        assert p.returncode in (0, 1), (name, p.returncode, p.stderr)
        if p.returncode == 1:
            assert ":" in p.stderr.splitlines()[0] and "error:" in p.stderr, p.stderr


def test_non_utf8_file_is_an_io_error(tmp_path):
    path = tmp_path / "f.star"
    path.write_bytes(b"begin writeln('\xff') end.")
    assert classify_cli(str(path), "check")[0] == "unreadable"
