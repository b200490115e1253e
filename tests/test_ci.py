"""CI (.ci/run) cannot pass having run nothing (issue 18): it finds the README's install and
test commands by name and fails without them; the README command's closure is checked
against .ci/expected/warshall_c.out; pytest's counts are held to .ci/limits."""
from __future__ import annotations

import importlib.util
import io
import re
import shutil
import subprocess
from contextlib import redirect_stdout

import numpy as np
import pytest

from conftest import ROOT

_spec = importlib.util.spec_from_file_location("check_counts", ROOT / ".ci" / "check_counts.py")
check_counts = importlib.util.module_from_spec(_spec)     # .ci/ is no package: load the file itself
_spec.loader.exec_module(check_counts)

RUN = "python3 -m pip install . && star run programs/warshall_c.star"
TEST = 'python3 -m pip install ".[test]" && python3 -m pytest -n auto'
README_OK = f"# x\n\n```sh\n{RUN}\n{TEST}\n```\n"


def run_commands(tmp_path, readme: str):
    (tmp_path / ".ci").mkdir(exist_ok=True)
    shutil.copy(ROOT / ".ci" / "run", tmp_path / ".ci" / "run")
    (tmp_path / "README.md").write_text(readme)
    return subprocess.run(["bash", str(tmp_path / ".ci" / "run"), "--commands"], capture_output=True, text=True,
                          timeout=60)


def test_the_readme_commands_are_found_by_name(tmp_path):
    r = run_commands(tmp_path, (ROOT / "README.md").read_text())
    assert r.returncode == 0, r.stderr
    assert re.search(r"^run: +python3 -m pip install \. && star run programs/warshall_c\.star$", r.stdout, re.M)
    assert re.search(r'^test: +python3 -m pip install "\.\[test\]" && python3 -m pytest', r.stdout, re.M)


@pytest.mark.parametrize("readme, message", [
    ("# no commands at all\n", "no ```sh block"),
    (f"```bash\n{RUN}\n{TEST}\n```\n", "no ```sh block"),
    ("```sh\npython3 -m pip install \".[test]\" && star run programs/warshall_c.star\n```\n", "no pytest line"),
    ("```sh\npython3 -m pytest\n```\n", "no pip install line"),
    (f"```sh\npython3 -m pip install .\n{TEST}\n```\n", "must end with star run programs/warshall_c.star"),
    (f"```sh\n{RUN}\n{TEST} && echo done\n```\n", "must end with the pytest command"),
    (f"```sh\n{RUN}\n{TEST}; echo done\n```\n", "must end with the pytest command"),
    (f"```sh\n{RUN}\n{TEST} | tee log\n```\n", "must end with the pytest command"),
    (f"```sh\n{RUN}\nrm -rf build && python3 -m pytest\n```\n", "may only pip install"),
    (f"```sh\n{RUN}\npython3 -m pytest -n auto\n```\n", "installs the test extras"),
])
def test_a_readme_without_the_commands_fails(tmp_path, readme, message):
    r = run_commands(tmp_path, readme)
    assert r.returncode == 1 and message in r.stderr, (r.stdout, r.stderr)


@pytest.mark.parametrize("readme", [
    README_OK,
    # the test extras installed by the first command, the test line pytest alone
    '```sh\npython3 -m pip install ".[test]" && star run programs/warshall_c.star\npython3 -m pytest\n```\n',
    # several installs before pytest
    f'```sh\n{RUN}\npip install ".[test]" && pip install -e . && pytest -x\n```\n',
])
def test_readme_blocks_ci_accepts(tmp_path, readme):
    r = run_commands(tmp_path, readme)
    assert r.returncode == 0, r.stderr


def test_a_correct_readme_block_passes_the_check(tmp_path):
    assert run_commands(tmp_path, README_OK).returncode == 0


def _junit(path, tests, failures=0, skipped_gpu=0, skipped_other=0):
    cases = "".join(f'<testcase name="t{i}[cupy]"><skipped message="the cupy backend needs CuPy"/></testcase>'
                    for i in range(skipped_gpu))
    cases += "".join(f'<testcase name="u{i}[numpy]"><skipped message="no terminal"/></testcase>'
                     for i in range(skipped_other))
    cases += "".join(f'<testcase name="v{i}"/>' for i in range(tests - skipped_gpu - skipped_other))
    path.write_text(f'<?xml version="1.0"?><testsuites><testsuite name="pytest" tests="{tests}" failures="{failures}" '
                    f'errors="0" skipped="{skipped_gpu + skipped_other}">{cases}</testsuite></testsuites>')
    return str(path)


@pytest.mark.parametrize("tests, failures, skipped_gpu, skipped_other, ok", [
    (4300, 0, 1200, 30, True),
    (4300, 1, 1200, 30, False),      # a failure
    (0, 0, 0, 0, False),             # nothing ran
    (4300, 0, 1400, 30, False),      # too many skipped
    (4300, 0, 1200, 60, False),      # too many tests that need no GPU skipped
    (2000, 0, 10, 0, False),         # too few passed
])
def test_counts_are_held_to_the_limits(tmp_path, tests, failures, skipped_gpu, skipped_other, ok):
    limits = tmp_path / "limits"
    limits.write_text("# comment\nmin_passed=2950\nmax_skipped=1300\nmax_skipped_not_gpu=50\n")
    junit = _junit(tmp_path / "j.xml", tests, failures, skipped_gpu, skipped_other)
    assert check_counts.counts(junit)["skipped_not_gpu"] == skipped_other
    with redirect_stdout(io.StringIO()):
        rc = check_counts.main([junit, str(limits)])
    assert (rc == 0) == ok


def test_the_committed_limits_are_readable_and_sane():
    limits = check_counts.read_limits(str(ROOT / ".ci" / "limits"))
    assert limits["min_passed"] > 1000 and 0 < limits["max_skipped"] < limits["min_passed"]
    assert 0 < limits["max_skipped_not_gpu"] < limits["max_skipped"] // 4


def test_the_expected_closure_is_the_closure_of_the_programs_graph():
    """.ci/expected/warshall_c.out against a closure computed here from the program's graph
    (data/example8.mtx, read by SciPy)."""
    from scipy.io import mmread
    adj = mmread(str(ROOT / "data" / "example8.mtx")).toarray() != 0
    n = adj.shape[0]
    reach = adj.copy()
    for k in range(n):                                   # Warshall on a dense boolean matrix
        reach |= np.outer(reach[:, k], reach[k])
    lines = (ROOT / ".ci" / "expected" / "warshall_c.out").read_text().splitlines()
    assert lines[-n:] == ["".join("1" if b else "0" for b in row) for row in reach]
    from starvm.ui import cli
    out = io.StringIO()
    with redirect_stdout(out):
        assert cli.main(["run", str(ROOT / "programs" / "warshall_c.star")]) == 0
    assert out.getvalue().splitlines() == lines
