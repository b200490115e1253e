"""No test can hang on a child process (issue 18): every subprocess.run / check_* / call and
every pexpect.spawn in tests/ has a timeout, and every Popen sits in a function with a
``finally`` that kills or waits for it."""
from __future__ import annotations

import ast

from conftest import ROOT

WAITING = {"run", "call", "check_call", "check_output"}


def _calls(tree):
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
            for node in ast.walk(fn):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                        and isinstance(node.func.value, ast.Name):
                    yield fn, node.func.value.id, node.func.attr, node


def _has_finally_cleanup(fn) -> bool:
    for node in ast.walk(fn):
        if isinstance(node, ast.Try) and node.finalbody:
            text = ast.unparse(ast.Module(body=node.finalbody, type_ignores=[]))
            if any(w in text for w in (".kill(", "killpg(", ".terminate(", ".wait(", ".communicate(", ".close(")):
                return True
    return False


def problems_in(text: str, where: str) -> set[str]:
    problems = set()
    for fn, mod, attr, call in _calls(ast.parse(text, where)):
        at = f"{where}:{call.lineno}"
        keywords = {k.arg for k in call.keywords}
        if mod == "subprocess" and attr in WAITING and "timeout" not in keywords:
            problems.add(f"{at}: subprocess.{attr} without timeout=")
        elif mod == "pexpect" and attr == "spawn" and "timeout" not in keywords:
            problems.add(f"{at}: pexpect.spawn without timeout=")
        elif mod == "subprocess" and attr == "Popen" and not isinstance(fn, ast.Module) \
                and not _has_finally_cleanup(fn):
            problems.add(f"{at}: subprocess.Popen without a finally that kills or waits for it")
    return problems


def test_every_child_process_of_the_tests_has_a_watchdog():
    problems = set()
    for path in sorted((ROOT / "tests").rglob("*.py")):
        problems |= problems_in(path.read_text(), str(path.relative_to(ROOT)))
    assert not problems, "\n".join(sorted(problems))


def test_the_check_finds_a_missing_watchdog():
    bad = ("import subprocess, pexpect\n"
           "def t():\n    subprocess.run(['x'])\n    pexpect.spawn('x')\n"
           "def u():\n    p = subprocess.Popen(['x'])\n    p.communicate()\n")
    assert len(problems_in(bad, "bad.py")) == 3
    good = ("import subprocess\n"
            "def t():\n    subprocess.run(['x'], timeout=5)\n"
            "def u():\n    p = subprocess.Popen(['x'])\n    try:\n        pass\n    finally:\n        p.kill()\n")
    assert problems_in(good, "good.py") == set()
