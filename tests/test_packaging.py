"""The wheel is complete: built from this checkout, installed into a fresh virtual
environment and used from outside the checkout, it finds its grammar and its standard
library inside the installed package, and its `star` and `python -m starvm` commands work.

Slow-ish (a wheel build and a pip install of numpy and lark, from PyPI or pip's cache);
skipped only where no virtual environment can be made or no package index is reachable.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CLOSURE = ["11111000", "11111000", "11111000", "00001000", "00000000", "00000010", "00000000", "00000000"]


def _env() -> dict[str, str]:
    """An environment that cannot see the checkout or the virtual environment running pytest."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP", "PYTHONSAFEPATH")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    env["PYTHONNOUSERSITE"] = "1"
    return env


def _run(cmd, cwd, timeout=600, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([str(c) for c in cmd], cwd=cwd, env=_env(), capture_output=True, text=True,
                          timeout=timeout, **kw)


def _ok(proc: subprocess.CompletedProcess, what: str) -> str:
    assert proc.returncode == 0, (f"{what} failed (exit {proc.returncode})\n--- stdout\n{proc.stdout[-4000:]}"
                                  f"\n--- stderr\n{proc.stderr[-4000:]}")
    return proc.stdout


_OFFLINE = ("No matching distribution found", "Failed to establish a new connection",
            "Network is unreachable", "Temporary failure in name resolution", "Could not find a version")


def _no_index(proc: subprocess.CompletedProcess) -> bool:
    """Did pip fail only because it could reach no package index (a machine with no network)?"""
    return any(s in proc.stdout + proc.stderr for s in _OFFLINE)


class Installed:
    def __init__(self, work: Path, venv: Path, wheel: Path):
        self.work = work          # a scratch folder outside the checkout: commands run here
        self.venv = venv
        self.wheel = wheel
        bindir = venv / ("Scripts" if os.name == "nt" else "bin")
        self.python = bindir / ("python.exe" if os.name == "nt" else "python")
        self.star = bindir / ("star.exe" if os.name == "nt" else "star")


def _build(folder: Path) -> None:
    """A fresh venv in ``folder``/venv with the wheel (built into ``folder``/dist) installed."""
    assert ROOT not in folder.parents, "the scratch folder must lie outside the checkout"
    venv = folder / "venv"
    # without pip of its own (ensurepip: 6-11 s here): this pip installs into it (--python)
    try:
        made = subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], env=_env(),
                              capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as e:
        pytest.skip(f"cannot create a virtual environment here: {e}")
    python = Installed(folder, venv, Path()).python
    if made.returncode != 0 or not python.exists():
        pytest.skip("cannot create a virtual environment here (python -m venv failed; "
                    f"is the venv module installed?):\n{made.stderr.strip()[-2000:]}")

    dist = folder / "dist"
    built = _run([sys.executable, "-m", "pip", "wheel", ROOT, "--no-deps", "--wheel-dir", dist], cwd=folder)
    if built.returncode != 0 and _no_index(built):
        pytest.skip("no package index is reachable from here: the wheel's build backend (hatchling) "
                    "and its dependencies cannot be fetched")
    _ok(built, "building the wheel (pip wheel . --no-deps)")
    wheels = sorted(dist.glob("starvm-*.whl"))
    assert len(wheels) == 1, f"expected one starvm wheel in {dist}, found {wheels}"
    install = [sys.executable, "-m", "pip", "--python", python, "install", "--quiet", wheels[0]]
    proc = _run(install, cwd=folder)
    if proc.returncode != 0 and "no such option: --python" in proc.stderr:     # pip before 22.3
        _ok(_run([python, "-m", "ensurepip", "--default-pip"], cwd=folder), "python -m ensurepip")
        proc = _run([python, "-m", "pip", "install", "--quiet", wheels[0]], cwd=folder)
    _ok(proc, "installing the wheel and its dependencies (numpy, lark, numba) into a fresh venv")


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Installed:
    """The wheel installed into a fresh venv, once for the run (reference/run_once.py: xdist's
    workers share it); commands run in a scratch folder of this worker's, outside the checkout."""
    from reference.run_once import shared_folder
    built = shared_folder(tmp_path_factory, "packaging", _build)
    work = tmp_path_factory.mktemp("packaging-work")
    assert ROOT not in work.parents, "the scratch folder must lie outside the checkout"
    return Installed(work, built / "venv", next(built.glob("dist/starvm-*.whl")))


def test_wheel_contains_grammar_and_stdlib(installed):
    names = zipfile.ZipFile(installed.wheel).namelist()
    assert "starvm/grammar/star.lark" in names, "the grammar is not in the wheel"
    star_files = [n for n in names if n.startswith("starvm/stdlib/") and n.endswith(".star")]
    assert star_files, "the wheel has no standard-library .star file under starvm/stdlib/"
    assert "starvm/stdlib/warshall.star" in star_files
    cu = {n for n in names if n.startswith("starvm/targets/cuda/") and n.endswith(".cu")}
    shipped = {f"starvm/targets/cuda/{p.name}" for p in (ROOT / "starvm" / "targets" / "cuda").glob("*.cu")}
    assert shipped and cu == shipped, f"the CUDA text files of the renderer are not all in the wheel: {sorted(shipped - cu)}"
    assert "console_scripts" in "".join(
        zipfile.ZipFile(installed.wheel).read(n).decode() for n in names if n.endswith("entry_points.txt"))


def test_wheel_ships_every_cuda_file(installed):
    """CUDA text is package data (starvm/**/*.cu, *.cuh: the native kernels', read by
    native/shared/cuda_text.py, and the CuPy backend's): every file of the checkout is in the wheel."""
    names = set(zipfile.ZipFile(installed.wheel).namelist())
    files = [p.relative_to(ROOT).as_posix() for ext in ("*.cu", "*.cuh") for p in (ROOT / "starvm").rglob(ext)]
    assert files and not [f for f in files if f not in names]


def test_import_and_resources_resolve_inside_site_packages(installed):
    probe = textwrap.dedent("""
        import json, sys, sysconfig
        import starvm
        from starvm import resources, stdlib
        print(json.dumps({
            "file": starvm.__file__,
            "version": starvm.__version__,
            "purelib": sysconfig.get_paths()["purelib"],
            "grammar": str(resources.grammar_path()),
            "grammar_exists": resources.grammar_path().is_file(),
            "stdlib": str(resources.stdlib_dir()),
            "stdlib_files": sorted(p.name for p in resources.stdlib_dir().glob("*.star")),
            "index": sorted(stdlib.index()),
            "path": sys.path,
        }))
    """)
    info = json.loads(_ok(_run([installed.python, "-c", probe], cwd=installed.work), "import starvm"))
    site = Path(info["purelib"]).resolve()
    venv = installed.venv.resolve()
    assert site.is_relative_to(venv), f"site-packages {site} is not in the fresh venv {venv}"
    for key in ("file", "grammar", "stdlib"):
        p = Path(info[key]).resolve()
        assert p.is_relative_to(site), f"{key} resolves to {p}, not under {site}"
        assert not p.is_relative_to(ROOT), f"{key} resolves into the checkout: {p}"
    assert info["grammar_exists"]
    assert "warshall.star" in info["stdlib_files"]
    assert {"warshall", "warshall_c", "warshall_adapt"} <= set(info["index"])
    assert not any(Path(p).resolve() == ROOT for p in info["path"] if p), "the checkout is on sys.path"


def test_star_console_script_runs_warshall_c(installed):
    prog = installed.work / "warshall_c.star"
    shutil.copy(ROOT / "programs" / "warshall_c.star", prog)
    out = _ok(_run([installed.star, "run", prog.name], cwd=installed.work), "star run warshall_c.star")
    lines = out.splitlines()
    assert lines[-8:] == CLOSURE, out


def test_star_uses_library_routine_from_installed_package(installed):
    """A program that calls WARSHALL-adapt without declaring it gets it from starvm/stdlib."""
    prog = installed.work / "uses_library.star"
    prog.write_text(textwrap.dedent("""\
        var P: table(8, 8);
        begin
          ROW(1, P) := BITS('01000000');
          ROW(2, P) := BITS('00100000');
          ROW(3, P) := BITS('10010000');
          ROW(4, P) := BITS('00001000');
          ROW(6, P) := BITS('00000010');
          WARSHALL-adapt(8, P);
          writeln(P);
        end.
    """))
    out = _ok(_run([installed.star, "run", prog.name], cwd=installed.work), "star run uses_library.star")
    assert out.splitlines() == CLOSURE
    checked = _run([installed.star, "check", prog.name], cwd=installed.work)
    assert checked.returncode == 0, checked.stderr


def test_star_exit_codes(installed):
    bad = installed.work / "bad.star"
    bad.write_text("begin\n  x := 1;\nend.\n")
    proc = _run([installed.star, "run", bad.name], cwd=installed.work)
    assert proc.returncode == 1 and "bad.star:2:3: error: unknown name 'x'" in proc.stderr
    proc = _run([installed.star, "run", "no-such-file.star"], cwd=installed.work)
    assert proc.returncode == 2 and "cannot read" in proc.stderr


def test_python_dash_m_version(installed):
    import starvm
    out = _ok(_run([installed.python, "-m", "starvm", "--version"], cwd=installed.work), "python -m starvm --version")
    assert out.strip() == f"starvm {starvm.__version__}"
