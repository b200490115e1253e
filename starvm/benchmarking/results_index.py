"""The index of bench/results: bench/results/README.md, generated from docs/figures.toml.

bench/results holds one file per suite and machine (its JSON and the Markdown beside it): the
current run; a rerun replaces the file and git keeps the runs before it. docs/figures.toml's
[[results]] tables say what each file is (suite, script, machine) and its [[figures]] which
document quotes which figure from it; a document citing an earlier run names it as git does,
``REV:bench/results/NAME`` (``git show REV:bench/results/NAME``). pytest logs live in bench/logs.

    python -m starvm.benchmarking.results_index          # write bench/results/README.md
    python -m starvm.benchmarking.results_index --check  # exit 1 if it is stale

tests/test_results_index.py fails when the index is stale, when a results file is cited by
nothing, when a citation names a file that is not there, or when a results file is named by a
commit."""
from __future__ import annotations

import argparse
import fnmatch
import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

RESULTS = "bench/results"
LOGS = "bench/logs"
INDEX = "README.md"
MANIFEST = "docs/figures.toml"
# a citation: bench/results/NAME or bench/logs/NAME, NAME a file, a stem (no extension), a glob
# (x_*.md) or braces (x.{json,md}); REV:bench/results/NAME names a file as git holds it at REV
CITATION = re.compile(r"(?:(?<![\w/])(?P<rev>[0-9a-f]{7,40}):)?(?<![\w-])(?P<dir>bench/(?:results|logs))/"
                      r"(?P<name>[\w.*\-/]+(?:\{[\w.,]+\})?[\w.]*)(?![<{$\w])")
PLACEHOLDER = re.compile(r"(?<![A-Za-z])[A-Z]{3,}(?![a-z])")   # bench/results/NAME.json, scale_NAME.json: a placeholder
# a commit in a file's name: _ and 7-40 hex digits with at least one digit and one letter
COMMIT_IN_NAME = re.compile(r"(?:^|[_-])(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}(?=[_.-]|$)")


def citing_files(root: Path) -> list[Path]:
    """Where results are cited: the README, the docs and the manifest, and the code and tests."""
    out = [root / "README.md", root / MANIFEST, *sorted((root / "docs").glob("*.md")),
           *sorted((root / "bench").glob("*.py")), root / "bench" / "README.md", root / "data" / "README.md"]
    for package in ("starvm", "tests"):
        out += sorted(p for p in (root / package).rglob("*.py") if "__pycache__" not in p.parts)
    return [p for p in out if p.is_file()]


def results_files(root: Path, folder: str = RESULTS) -> list[str]:
    """Every file under bench/results (or bench/logs), relative to it, but the index."""
    base = root / folder
    if not base.is_dir():
        return []
    return sorted(str(p.relative_to(base)) for p in base.rglob("*")
                  if p.is_file() and "__pycache__" not in p.parts and not (folder == RESULTS and p.name == INDEX))


def _expand(name: str) -> list[str]:
    m = re.search(r"\{([^}]*)\}", name)
    if not m:
        return [name.rstrip(".")]
    return [x for part in m.group(1).split(",") for x in _expand(name[:m.start()] + part + name[m.end():])]


def matches(name: str, files: list[str]) -> list[str]:
    """The files a cited NAME stands for: the file itself, every file of a stem, or a glob's."""
    hits = []
    for pattern in _expand(name):
        for f in files:
            stem = f.rsplit(".", 1)[0] if "." in f.rsplit("/", 1)[-1] else f
            if f == pattern or stem == pattern or f.startswith(pattern.rstrip("/") + "/") \
                    or ("*" in pattern and fnmatch.fnmatchcase(f, pattern)):
                hits.append(f)
    return hits


def citations(root: Path) -> list[tuple[str, int, str | None, str, str]]:
    """(citing file, line, rev or None, folder, name) of every citation in the citing files."""
    out = []
    for path in citing_files(root):
        rel = str(path.relative_to(root))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for m in CITATION.finditer(line):
                name = m.group("name").rstrip(".,;:)`'\"")
                if not name or ("{" in name and "," not in name) or PLACEHOLDER.search(name):
                    continue                              # a template (an f-string) or a placeholder
                out.append((rel, number, m.group("rev"), m.group("dir"), name))
    return out


def manifest(root: Path) -> dict:
    return tomllib.loads((root / MANIFEST).read_text(encoding="utf-8"))


def read_source(root: Path, source: str) -> str:
    """A [[figures]] source: bench/results/NAME in the tree, or REV:bench/results/NAME in git."""
    if ":" in source:
        return subprocess.run(["git", "show", source], cwd=root, capture_output=True, text=True,
                              check=True).stdout
    return (root / source).read_text(encoding="utf-8")


def _header(path: Path) -> tuple[str, str]:
    """(date, commit) of a run, from its JSON's common header (starvm.benchmarking.results)."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "", ""
    machine = doc.get("machine") if isinstance(doc.get("machine"), dict) else {}
    git = machine.get("git") if isinstance(machine.get("git"), dict) else {}
    date = str(doc.get("date") or machine.get("date") or "")[:10]
    return date, str(git.get("commit") or "")[:7]


def _title(path: Path) -> str:
    if path.suffix == ".md":
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith("# "):
                return line[2:].strip()
    if path.suffix == ".json":
        try:
            return str(json.loads(path.read_text(encoding="utf-8")).get("title") or "")
        except (OSError, ValueError, AttributeError):
            return ""
    return ""


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render(root: Path) -> str:
    """The index's text. Raises ValueError for a results file docs/figures.toml does not describe."""
    data = manifest(root)
    described = {e["stem"]: e for e in data.get("results", [])}
    files = results_files(root)
    stems: dict[str, list[str]] = {}
    for f in files:
        stem = f.split("/", 1)[0] if "/" in f else f.rsplit(".", 1)[0]
        stems.setdefault(stem, []).append(f)
    missing = sorted(set(stems) - set(described))
    extra = sorted(set(described) - set(stems))
    if missing or extra:
        raise ValueError(f"{MANIFEST} [[results]]: no entry for {missing}; entries without files: {extra}")
    quoted: dict[str, dict[str, int]] = {}
    history = []
    for group in data["figures"]:
        source = group["source"]
        if ":" in source:
            history.append((source, group["doc"], len(group["items"])))
            continue
        stem = source.removeprefix(RESULTS + "/").rsplit(".", 1)[0]
        docs = quoted.setdefault(stem, {})
        docs[group["doc"]] = docs.get(group["doc"], 0) + len(group["items"])
    lines = [
        "# bench/results: the current run of each suite on each machine",
        "",
        "Generated by `python -m starvm.benchmarking.results_index` from docs/figures.toml (its",
        "[[results]] tables say what each file is; its [[figures]] which figures the docs quote); do",
        "not edit by hand. One file per suite and machine (JSON, with the Markdown beside it): a",
        "rerun replaces it, and git keeps the runs before it. A document citing an earlier run names",
        "it as git does, `REV:bench/results/NAME` (`git show REV:bench/results/NAME`). pytest logs",
        "are in bench/logs/.",
        "",
        "| file | what | suite (script) | machine | run | figures quoted in |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for stem in sorted(stems):
        entry = described[stem]
        names = stems[stem]
        title = entry.get("what") or next((t for t in (_title(root / RESULTS / f) for f in names) if t), "")
        json_file = next((root / RESULTS / f for f in names if f.endswith(".json")), None)
        date, commit = _header(json_file) if json_file else ("", "")
        run = " ".join(x for x in (date, commit and f"at {commit}") if x)
        figures = ", ".join(f"{doc} ({n})" for doc, n in sorted(quoted.get(stem, {}).items()))
        shown = ", ".join(f"[{f}]({f})" for f in names)
        lines.append(f"| {shown} | {_cell(title)} | {entry['suite']} (`{entry['script']}`) | "
                     f"{entry['machine']} | {run} | {figures} |")
    if history:
        lines += ["", "## Earlier runs the docs quote (read from git)", "",
                  "| run | quoted in | figures |", "| --- | --- | ---: |"]
        for source, doc, n in sorted(history):
            lines.append(f"| `{source}` | {doc} | {n} |")
    logs = results_files(root, LOGS)
    if logs:
        lines += ["", "## pytest logs (bench/logs/)", ""] + [f"- [{f}](../logs/{f})" for f in logs]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m starvm.benchmarking.results_index",
                                     description="Write bench/results/README.md from docs/figures.toml.")
    parser.add_argument("--root", type=Path, default=Path.cwd(), help="the checkout (default: here)")
    parser.add_argument("--check", action="store_true", help="exit 1 if the index is stale, write nothing")
    args = parser.parse_args(argv)
    if not (args.root / MANIFEST).is_file():
        print(f"error: {args.root / MANIFEST} not found (run from the checkout, or --root)", file=sys.stderr)
        return 2
    try:
        text = render(args.root)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    index = args.root / RESULTS / INDEX
    if args.check:
        if not index.is_file() or index.read_text(encoding="utf-8") != text:
            print(f"{index} is stale: run python -m starvm.benchmarking.results_index", file=sys.stderr)
            return 1
        return 0
    index.write_text(text, encoding="utf-8")
    print(f"wrote {index}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
