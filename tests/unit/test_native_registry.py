"""native/registry.py is the one place that says whether a native kernel replaces a library
routine (``native_for``), and every accelerated routine's folder, starvm/native/<routine>/, is
complete: its Star body's home declares the routine, its step formula and guard are there, and
every kernel its KERNELS names exists (the CUDA ones read from their source: no CuPy here)."""
from __future__ import annotations

import ast
import importlib
from pathlib import Path
from types import SimpleNamespace

import pytest

from starvm import stdlib
from starvm.backends import get_backend
from starvm.native import ROUTINES, kernels_of, native_for

BACKENDS = {"numpy", "cupy", "emulated", "mpi:numpy", "mpi:cupy", "mpi:emulated"}
ROOT = Path(__file__).resolve().parents[2]


def _defines(module: str, name: str) -> bool:
    """Does the module define ``name`` at its top level? (Read from its source, not imported.)"""
    path = ROOT / (module.replace(".", "/") + ".py")
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return True
        if isinstance(node, ast.Assign) and any(
                isinstance(e, ast.Name) and e.id == name
                for t in node.targets for e in (t.elts if isinstance(t, ast.Tuple) else [t])):
            return True
    return False


@pytest.mark.parametrize("name", ROUTINES)
def test_a_routine_folder_names_its_home_formula_guard_and_kernels(name):
    folder = importlib.import_module(f"starvm.native.{name}")
    assert folder.HOME.startswith("stdlib/") and stdlib.index()[name].name == Path(folder.HOME).name
    assert callable(folder.body_steps)
    assert set(folder.KERNELS) <= BACKENDS and folder.KERNELS == kernels_of(name)
    for backend, target in folder.KERNELS.items():
        module, factory = target.split(":")
        assert _defines(module, factory), f"{name} on {backend}: {target}"


def test_only_listed_routines_have_kernels():
    assert kernels_of("warshall") == {} and kernels_of("no_such_routine") == {}
    folders = {p.name for p in (ROOT / "starvm" / "native").iterdir() if (p / "__init__.py").exists()}
    assert folders - {"shared"} == set(ROUTINES)


def test_native_for_says_where_a_native_replaces_a_routine(monkeypatch):
    numpy = get_backend("numpy")
    assert native_for("groupmin", numpy) is not None
    assert native_for("groupmin", "emulated").backend == "emulated"
    assert native_for("compact", numpy) is None             # its compiled Star body runs instead
    assert native_for("compact", "emulated") is not None
    assert native_for("warshall", numpy) is None            # no native at all
    # only the standard library's routine, only with natives on
    assert native_for("groupmin", numpy, origin="program.star") is None
    assert native_for("groupmin", numpy, origin=None) is None
    assert native_for("groupmin", numpy, enabled=False) is None
    monkeypatch.setenv("STARVM_NATIVE", "0")
    assert native_for("groupmin", numpy) is None            # enabled=None reads STARVM_NATIVE
    assert native_for("groupmin", numpy, enabled=True) is not None


def test_on_a_mixed_backend_either_side_or_the_host_side_alone(monkeypatch):
    auto = SimpleNamespace(name="auto", mixed=True, host=get_backend("numpy"))
    assert native_for("compact", auto) is not None          # its device side has a kernel
    assert native_for("compact", auto, host_side=True) is None   # the CPU tier compiles its body
    assert native_for("gather", auto, host_side=True).backend == "numpy"
    assert native_for("match", auto) is None                # distributed ranks only
