"""Fail unless a pytest JUnit report shows no failure, at least min_passed passed tests, at most
max_skipped skipped ones, and at most max_skipped_not_gpu skipped ones that are not GPU tests
(the limits file: lines key=N). A skipped test is a GPU test when its id names the cupy
backend or its reason is the missing CuPy / CUDA device (conftest.skip_without_gpu)."""
from __future__ import annotations

import re
import sys
import xml.etree.ElementTree as ET


def read_limits(path: str) -> dict[str, int]:
    limits = {}
    for line in open(path):
        line = line.strip()
        if line and not line.startswith("#"):
            key, _, value = line.partition("=")
            limits[key.strip()] = int(value)
    missing = {"min_passed", "max_skipped", "max_skipped_not_gpu"} - set(limits)
    if missing:
        raise SystemExit(f"ci: {path} lacks {', '.join(sorted(missing))}")
    return limits


GPU_REASON = re.compile(r"cupy backend|CUDA device|CuPy", re.I)


def counts(junit_path: str) -> dict[str, int]:
    root = ET.parse(junit_path).getroot()
    suites = [root] if root.tag == "testsuite" else list(root)
    total = sum(int(s.get("tests", 0)) for s in suites)
    failed = sum(int(s.get("failures", 0)) + int(s.get("errors", 0)) for s in suites)
    skipped = sum(int(s.get("skipped", 0)) for s in suites)
    not_gpu = 0
    for case in root.iter("testcase"):
        skip = case.find("skipped")
        if skip is not None and "cupy" not in case.get("name", "") \
                and not GPU_REASON.search(skip.get("message", "")):
            not_gpu += 1
    return {"passed": total - failed - skipped, "skipped": skipped, "skipped_not_gpu": not_gpu, "failed": failed}


def problems(c: dict[str, int], limits: dict[str, int]) -> list[str]:
    out = []
    if c["failed"]:
        out.append(f"{c['failed']} failed")
    if c["passed"] < limits["min_passed"]:
        out.append(f"only {c['passed']} passed, fewer than {limits['min_passed']}")
    if c["skipped"] > limits["max_skipped"]:
        out.append(f"{c['skipped']} skipped, more than {limits['max_skipped']}")
    if c["skipped_not_gpu"] > limits["max_skipped_not_gpu"]:
        out.append(f"{c['skipped_not_gpu']} tests that need no GPU skipped, more than {limits['max_skipped_not_gpu']}")
    return out


def main(argv: list[str]) -> int:
    junit_path, limits_path = argv
    limits, c = read_limits(limits_path), counts(junit_path)
    print(f"ci: passed {c['passed']}, skipped {c['skipped']} ({c['skipped_not_gpu']} of them need no GPU), "
          f"failed {c['failed']} (limits: passed >= {limits['min_passed']}, skipped <= {limits['max_skipped']}, "
          f"of them needing no GPU <= {limits['max_skipped_not_gpu']}; {limits_path})")
    found = problems(c, limits)
    if found:
        print("ci: " + "; ".join(found), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
