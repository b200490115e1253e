"""bench/results says what is current (issue 34): one file per suite and machine, none named by a
commit, every one cited somewhere (README, docs, figures.toml, code or tests), every citation
naming a file that is there (an earlier run as REV:bench/results/NAME, a file git holds at REV),
no code comment citing an earlier run, and the index (bench/results/README.md) generated from
docs/figures.toml and up to date (starvm/benchmarking/results_index.py)."""
from __future__ import annotations

import re
import subprocess

import pytest

from conftest import ROOT, in_git
from starvm.benchmarking import results_index as ri

FILES = ri.results_files(ROOT)
LOGS = ri.results_files(ROOT, ri.LOGS)
CITATIONS = ri.citations(ROOT)


def test_the_index_is_generated_from_the_manifest_and_up_to_date():
    want = ri.render(ROOT)
    have = (ROOT / ri.RESULTS / ri.INDEX).read_text(encoding="utf-8")
    assert have == want, "bench/results/README.md is stale: run python -m starvm.benchmarking.results_index"
    assert ri.main(["--root", str(ROOT), "--check"]) == 0


def test_every_results_file_is_cited():
    cited = set()
    for where, _line, rev, folder, name in CITATIONS:
        if rev is None:
            cited.update(ri.matches(name, FILES if folder == ri.RESULTS else LOGS))
    # a file counts as cited when its stem is (x.json beside a cited x.md)
    stems = {f.rsplit(".", 1)[0] for f in cited}
    uncited = [f for f in FILES + LOGS if f not in cited and f.rsplit(".", 1)[0] not in stems
               and not any(f.startswith(c + "/") or f.split("/")[0] == c.split("/")[0] for c in cited if "/" in c)]
    assert not uncited, ("results files cited by nothing (cite them where they are used, in a doc, "
                         "the script that writes them or a test; or delete them, git keeps them): " + ", ".join(uncited))


def test_every_citation_names_a_file_that_is_there():
    missing = [f"{where}:{line}: {folder}/{name}" for where, line, rev, folder, name in CITATIONS
               if rev is None and not ri.matches(name, FILES if folder == ri.RESULTS else LOGS)
               and name != ri.INDEX and not name.endswith("/")]     # the index; a folder a script makes
    assert not missing, "citations of results files that are not there:\n" + "\n".join(missing)


@pytest.mark.skipif(not in_git(), reason="no git checkout: earlier runs are read from git")
def test_every_earlier_run_cited_isin_git():
    absent = [f"{where}:{line}: {rev}:{folder}/{name}" for where, line, rev, folder, name in CITATIONS
              if rev is not None and subprocess.run(["git", "cat-file", "-e", f"{rev}:{folder}/{name}"],
                                                    cwd=ROOT, capture_output=True, timeout=60).returncode != 0]
    assert not absent, "earlier runs cited that git does not hold:\n" + "\n".join(absent)


def test_code_cites_only_current_results():
    old = [f"{where}:{line}: {rev}:{folder}/{name}" for where, line, rev, folder, name in CITATIONS
           if rev is not None and where.endswith(".py")]
    assert not old, "code cites earlier runs (cite the current file):\n" + "\n".join(old)
    # nor by a bare name (a results file named by a commit, without its folder)
    bare = re.compile(r"\b[a-z][\w-]*\.(?:json|md|log|txt)\b")
    named = [f"{p.relative_to(ROOT)}:{n}: {m.group()}" for p in ri.citing_files(ROOT) if p.suffix == ".py"
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
             for m in bare.finditer(line) if ri.COMMIT_IN_NAME.search(m.group().rsplit(".", 1)[0])
             and p.name != "test_results_index.py"]
    assert not named, "code names results files by a commit:\n" + "\n".join(named)


def test_no_results_file_is_named_by_a_commit():
    named = [f for f in FILES + LOGS if ri.COMMIT_IN_NAME.search(f.rsplit("/", 1)[-1].rsplit(".", 1)[0])]
    assert not named, f"named by a commit (the current run of a suite drops it; git keeps the rest): {named}"


def test_no_pytest_log_among_the_results():
    assert not [f for f in FILES if f.startswith("pytest_") or f.endswith("_pytest.log")]


def test_the_rules_find_what_they_should():
    assert ri.COMMIT_IN_NAME.search("compiled_gpu_h100_a8bc92a") and ri.COMMIT_IN_NAME.search("x_36bddd4_event")
    assert not ri.COMMIT_IN_NAME.search("scale_h200x2_bfs") and not ri.COMMIT_IN_NAME.search("compiled_cpu16_cache")
    files = ["a.json", "a.md", "b_x.md", "dir/c.star"]
    assert ri.matches("a.{json,md}", files) == ["a.json", "a.md"] and ri.matches("a", files) == ["a.json", "a.md"]
    assert ri.matches("b_*.md", files) == ["b_x.md"] and ri.matches("dir", files) == ["dir/c.star"]
    assert ri.matches("a_1234567.md", files) == []
    found = [(c.group("rev"), c.group("name").rstrip(".")) for c in ri.CITATION.finditer(
        "see `1234abc:bench/" "results/x.md` and (../bench/" "results/y.json). bench/" "logs/z.log, bench/" "results/NAME_<machine>.json")]
    assert found == [("1234abc", "x.md"), (None, "y.json"), (None, "z.log")]
