"""Shared fixtures: every test that runs Star code runs on every available backend.

``auto`` runs with small thresholds (tables of 64 rows or more on the device, fused work of
4096 bits or more moves tables there), so that tests mix CPU and device tables; where no GPU
is usable its device is the NumPy emulation (starvm/backends/emulated_device.py).
"""
from __future__ import annotations

import difflib
import io
import os
from pathlib import Path

import pytest

import starvm
from starvm.backends import NAMES, BackendUnavailable, get_backend

BACKENDS = list(NAMES)      # every test that takes a backend runs on each backend starvm has
ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault("STARVM_AUTO_EMULATE", "1")
os.environ.setdefault("STARVM_AUTO_GPU_ROWS", "64")
os.environ.setdefault("STARVM_AUTO_GPU_BITS", "4096")

# each library file parsed once per process, not once per machine (tests/reference/library_parses.py)
from reference.library_parses import keep_library_parses  # noqa: E402 - tests/ is on sys.path (rootdir conftest)
keep_library_parses()


# STARVM_REQUIRE_GPU=1 (every device run of the suite sets it): a GPU test that would skip
# because CuPy or a CUDA device is missing fails instead, so a GPU run cannot come out green
# having run nothing on the GPU.
# --jit auto compiles a routine once its calls' estimated work passes STARVM_JIT_THRESHOLD;
# with a cold compiled-code cache every worker then pays seconds per library body the first
# time a test's input is large enough (25 min for the suite on 2 cores). Tests of the tier
# (tests/jit, the MPI tier tests) choose --jit on or set their own threshold; elsewhere the
# interpreter runs, as it did before those bodies compiled.
# 10**18, not 10**12: the estimate of a loop-heavy library body can pass 10**12 on a small input
# (BORUVKA_ROUNDS: about 1.4e12 units after 4 calls on 130 vertices, run in under a second), and
# each such body then compiled for 20 s in a test of the interpreter
os.environ.setdefault("STARVM_JIT_THRESHOLD", str(10**18))
os.environ.setdefault("STARVM_JIT_GPU_THRESHOLD", str(10**18))   # the GPU tier's, likewise
# tests that lower the threshold expect the compile before the next call runs (the tier's
# order); tests/jit/test_background.py turns background compiles back on
os.environ.setdefault("STARVM_JIT_BACKGROUND", "0")

REQUIRE_GPU = os.environ.get("STARVM_REQUIRE_GPU") == "1"


def skip_without_gpu(reason: str) -> None:
    """Skip a GPU test because CuPy or a CUDA device is missing (a failure under
    STARVM_REQUIRE_GPU=1). Only for those two reasons: any other error must propagate."""
    if REQUIRE_GPU:
        pytest.fail(f"STARVM_REQUIRE_GPU=1, but {reason}", pytrace=False)
    pytest.skip(reason)


def cupy_or_skip():
    """The cupy backend, or a skip (see skip_without_gpu) when CuPy or a device is missing;
    a backend that exists but fails to start (a kernel that does not compile) is an error."""
    try:
        return get_backend("cupy")
    except BackendUnavailable as e:
        reason = str(e)
    skip_without_gpu(reason)            # outside the except: no chained traceback in the report


def gpu_count() -> int:
    """The CUDA devices CuPy sees, or a skip (as cupy_or_skip) without CuPy or a device."""
    cupy_or_skip()
    import cupy
    return cupy.cuda.runtime.getDeviceCount()


def usable(name: str) -> None:
    """Skip the test unless backend ``name`` can run here (only for a missing GPU)."""
    try:
        get_backend(name)
        return
    except BackendUnavailable as e:
        reason = str(e)
    if name == "cupy":
        skip_without_gpu(reason)
    pytest.skip(reason)


def _backend_param(name):
    return pytest.param(name, id=name, marks=[pytest.mark.backend(name)])


@pytest.fixture(params=[_backend_param(b) for b in BACKENDS])
def backend(request) -> str:
    """The name of a backend; CuPy tests skip where there is no usable GPU."""
    usable(request.param)
    return request.param


@pytest.fixture
def machine(backend) -> starvm.Machine:
    """A machine that runs the Star code as written: standard-library routines run their Star
    bodies, not a backend's native kernel (tests/unit/test_native*.py test those)."""
    return starvm.Machine(backend=backend, out=io.StringIO(), native=False)


def run_star(source: str, backend: str = "numpy", filename: str = "test.star") -> str:
    """Run a Star program, return what it printed."""
    out = io.StringIO()
    starvm.Machine(backend=backend, out=out).run(source, filename)
    return out.getvalue()


def in_git() -> bool:
    """Is this checkout a git work tree? (Earlier benchmark runs are read from git; an export is not.)"""
    import subprocess
    return subprocess.run(["git", "rev-parse", "--git-dir"], cwd=ROOT, capture_output=True, timeout=60).returncode == 0


def subprocess_env(**extra) -> dict:
    """The environment for running `python -m starvm` in a subprocess: this checkout first on
    PYTHONPATH, whatever was there kept (e.g. a folder of carried dependencies)."""
    import os
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path, **extra}


def pytest_configure(config):
    config.addinivalue_line("markers", "backend(name): the test runs Star code on that backend")


# ---------------------------------------------------------------------------------------
# Star-language tests: tests/star/NAME.star runs and its output must equal NAME.expected.
# A test that must fail has NAME.error instead: the expected first line of the error
# (FILE:LINE:COL: error: MESSAGE, with FILE written as the bare file name).
def pytest_collect_file(parent, file_path: Path):
    if file_path.suffix == ".star" and file_path.parent.name == "star" and file_path.parent.parent.name == "tests":
        return StarFile.from_parent(parent, path=file_path)


class StarFile(pytest.File):
    def collect(self):
        for b in BACKENDS:
            yield StarItem.from_parent(self, name=f"{self.path.stem}[{b}]", backend_name=b)


class StarItem(pytest.Item):
    def __init__(self, *, backend_name, **kw):
        super().__init__(**kw)
        self.backend_name = backend_name

    def runtest(self):
        usable(self.backend_name)
        src = self.path.read_text()
        expected_out = self.path.with_suffix(".expected")
        expected_err = self.path.with_suffix(".error")
        if expected_err.exists():
            want = expected_err.read_text().strip()
            with pytest.raises(starvm.StarError) as info:
                run_star(src, self.backend_name, self.path.name)
            got = info.value.render().splitlines()[0]
            if got != want:
                raise StarTestFailure(want, got)
            return
        got = run_star(src, self.backend_name, self.path.name)
        want = expected_out.read_text()
        if got != want:
            raise StarTestFailure(want, got)

    def repr_failure(self, excinfo):
        if isinstance(excinfo.value, StarTestFailure):
            want, got = excinfo.value.args
            diff = difflib.unified_diff(want.splitlines(), got.splitlines(), "expected", "got", lineterm="")
            return "\n".join(diff)
        if isinstance(excinfo.value, starvm.StarError):
            return excinfo.value.render()
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, 0, f"star: {self.name}"


class StarTestFailure(Exception):
    pass
