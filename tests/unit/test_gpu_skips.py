"""When a GPU test may skip (issue 18, "GPU failures fail"): only when CuPy does not import or
no CUDA device is found. Any other failure to create the cupy backend, e.g. a kernel that
does not compile, is an error; STARVM_REQUIRE_GPU=1 turns even those two skips into failures."""
from __future__ import annotations

import subprocess
import sys
import types

import pytest

import conftest
from conftest import ROOT, subprocess_env
from starvm import backends
from starvm.backends import BackendUnavailable


class FakeRuntimeError(Exception):
    def __init__(self, status):
        super().__init__(f"cudaError {status}")
        self.status = status


def fake_cupy(count=1, status=None) -> types.ModuleType:
    """A module named cupy whose getDeviceCount returns ``count`` or raises a CUDA runtime
    error with ``status``."""
    def get_device_count():
        if status is not None:
            raise FakeRuntimeError(status)
        return count
    cp = types.ModuleType("cupy")
    cp.cuda = types.SimpleNamespace(runtime=types.SimpleNamespace(
        getDeviceCount=get_device_count, CUDARuntimeError=FakeRuntimeError))
    return cp


def broken_backend_module(message="kernel 'first_one' failed to compile") -> types.ModuleType:
    mod = types.ModuleType("starvm.backends.cupy_backend")

    class CupyBackend:
        def __init__(self):
            raise RuntimeError(message)
    mod.CupyBackend = CupyBackend
    return mod


@pytest.fixture
def fresh(monkeypatch):
    """get_backend's cache emptied before and after; sys.modules restored by monkeypatch."""
    backends.get_backend.cache_clear()
    yield monkeypatch
    backends.get_backend.cache_clear()


def test_cupy_that_does_not_import_is_unavailable(fresh):
    fresh.setitem(sys.modules, "cupy", None)           # import cupy raises ImportError
    with pytest.raises(BackendUnavailable, match="needs CuPy"):
        backends.get_backend("cupy")


@pytest.mark.parametrize("count, status", [(0, None), (None, 100), (None, 35)])
def test_no_device_is_unavailable(fresh, count, status):
    fresh.setitem(sys.modules, "cupy", fake_cupy(count, status))
    with pytest.raises(BackendUnavailable, match="no CUDA device"):
        backends.get_backend("cupy")


def test_other_runtime_errors_propagate(fresh):
    fresh.setitem(sys.modules, "cupy", fake_cupy(status=999))      # e.g. a device in a bad state
    with pytest.raises(FakeRuntimeError):
        backends.get_backend("cupy")


def test_a_backend_that_fails_to_start_is_an_error_not_a_skip(fresh):
    fresh.setitem(sys.modules, "cupy", fake_cupy(1))
    fresh.setitem(sys.modules, "starvm.backends.cupy_backend", broken_backend_module())
    with pytest.raises(RuntimeError, match="failed to compile"):
        backends.get_backend("cupy")
    with pytest.raises(RuntimeError, match="failed to compile"):
        conftest.usable("cupy")                        # the fixtures' check: no skip
    with pytest.raises(RuntimeError, match="failed to compile"):
        conftest.cupy_or_skip()
    fresh.setenv("STARVM_AUTO_EMULATE", "1")
    with pytest.raises(RuntimeError, match="failed to compile"):
        backends.get_backend("auto")                   # no quiet fall back to the emulation


def test_require_gpu_turns_a_gpu_skip_into_a_failure(fresh):
    fresh.setitem(sys.modules, "cupy", None)
    fresh.setattr(conftest, "REQUIRE_GPU", False)
    with pytest.raises(pytest.skip.Exception, match="needs CuPy"):
        conftest.usable("cupy")
    fresh.setattr(conftest, "REQUIRE_GPU", True)
    with pytest.raises(pytest.fail.Exception, match="STARVM_REQUIRE_GPU=1, but the cupy backend needs CuPy"):
        conftest.usable("cupy")
    with pytest.raises(pytest.fail.Exception, match="STARVM_REQUIRE_GPU=1"):
        conftest.cupy_or_skip()
    conftest.usable("numpy")                           # other backends are unaffected


def test_require_gpu_fails_a_suite_run_without_a_gpu():
    """End to end: one Star test on the cupy backend, run by pytest in a child process."""
    backends.get_backend.cache_clear()
    try:
        backends.get_backend("cupy")
    except BackendUnavailable:
        pass
    else:
        pytest.skip("a GPU is usable here")
    case = "tests/star/" + sorted(p.name for p in (ROOT / "tests" / "star").glob("*.star"))[0]
    r = subprocess.run([sys.executable, "-m", "pytest", "-o", "addopts=", "-q", "-p", "no:cacheprovider",
                        case, "-k", "cupy"],
                       cwd=ROOT, env=subprocess_env(STARVM_REQUIRE_GPU="1"), capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 1, r.stdout + r.stderr         # without it, the same test skips (the suite here)
    assert "1 failed" in r.stdout and "STARVM_REQUIRE_GPU=1, but the cupy backend needs CuPy" in r.stdout, r.stdout
