"""A folder built once per test run, shared by pytest-xdist's workers.

A module-scoped fixture runs once per worker that runs any of its module's tests. pyproject's
--dist loadfile keeps a file on one worker, but a run with --dist load or worksteal (which CI
used until this session) splits files between workers, and an expensive fixture (a wheel
built and installed into a fresh virtual environment: 24 s in CI) was then built twice.
``shared_folder`` builds it in the run's own temporary folder, which every worker of the run
sees (pytest-N/, above each worker's popen-gwN/), under a lock: the first worker builds, a
later one reuses what it left.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Callable

import pytest

try:
    import fcntl
except ImportError:          # Windows: no flock; each worker then builds a folder of its own
    fcntl = None

_DONE = ".built"
_SKIPPED = ".skipped"      # build raised pytest.skip: the reason, given to every later caller


def run_folder(tmp_path_factory) -> Path:
    """The run's temporary folder: shared by all workers under xdist, the base folder without."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def shared_folder(tmp_path_factory, name: str, build: Callable[[Path], None]) -> Path:
    """``<run folder>/name``, filled by ``build(folder)`` once for the whole run. A build that
    fails leaves nothing behind (the next caller tries again); one that skips makes every
    caller skip with its reason."""
    root = run_folder(tmp_path_factory) if fcntl else tmp_path_factory.getbasetemp()
    folder = root / name
    with open(folder.with_name(name + ".lock"), "w") as lock:
        if fcntl:
            fcntl.flock(lock, fcntl.LOCK_EX)    # released when the file closes
        if (folder / _SKIPPED).exists():
            pytest.skip((folder / _SKIPPED).read_text())
        if (folder / _DONE).exists():
            return folder
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
        try:
            build(folder)
        except pytest.skip.Exception as e:
            (folder / _SKIPPED).write_text(str(e.msg))
            raise
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        (folder / _DONE).write_text("")
    return folder
