"""Where a benchmark ran: the machine (CPU, memory, platform, versions, git state of the
starvm checkout) and the device a backend computes on (for a GPU backend: the GPU, CuPy and
CUDA versions). Every result file of `star bench` and bench/*.py records both."""
from __future__ import annotations

import os
import platform
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from ..config import git_commit_override

PACKAGE = Path(__file__).resolve().parent.parent
CHECKOUT = PACKAGE.parent            # the git checkout when starvm runs from one (editable install)


def starvm_version() -> str:
    """``starvm.__version__``, read from the package's ``__init__.py`` (this module must not import
    the package's top, which would close an import circle once it imports the harness)."""
    match = re.search(r'^__version__\s*=\s*"([^"]+)"', (PACKAGE / "__init__.py").read_text(), re.M)
    return match.group(1) if match else "?"


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def cpus_usable() -> int | None:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count()


def memory_available() -> int | None:
    """MemAvailable of /proc/meminfo in bytes (None where there is none)."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def load_average() -> float | None:
    """The 1-minute load average when the benchmark started: above the usable cores, other
    processes competed for them and the times are inflated."""
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):
        return None


def version_of(dist: str) -> str | None:
    """The installed version of a distribution, without importing it (None if not installed)."""
    module = sys.modules.get(dist)
    if module is not None and getattr(module, "__version__", None):
        return str(module.__version__)
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def git_state(root: Path = CHECKOUT) -> dict:
    """{"commit": full hash or None, "dirty": bool} of the checkout at ``root``: git, else
    .git/HEAD read directly (a copy without git), else $STARVM_GIT_COMMIT."""
    out: dict = {"commit": None}
    named = git_commit_override()
    if named:
        # a copy of a commit (e.g. `git archive` sent to a GPU machine) names it; git there
        # may see an unrelated checkout around the copy
        return {"commit": named, "dirty": False, "source": "STARVM_GIT_COMMIT"}
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=10)
        if head.returncode == 0:
            out["commit"] = head.stdout.strip() or None
            status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                                    capture_output=True, text=True, timeout=30)
            if status.returncode == 0:
                out["dirty"] = bool(status.stdout.strip())
    except (OSError, subprocess.SubprocessError):
        pass
    if not out["commit"]:
        out["commit"] = _head_file(root) or named
    return out


def _head_file(root: Path) -> str | None:
    try:
        head = (root / ".git" / "HEAD").read_text().strip()
        if not head.startswith("ref: "):
            return head
        name = head[5:]
        ref = root / ".git" / name
        if ref.exists():
            return ref.read_text().strip()
        packed = (root / ".git" / "packed-refs").read_text().splitlines()
        return next((ln.split()[0] for ln in packed if ln.endswith(" " + name)), None)
    except OSError:
        return None


def machine_info(extra_versions: tuple[str, ...] = ()) -> dict:
    """The host: CPU, cores, memory, platform, the versions of Python, NumPy, Lark and starvm
    (and of ``extra_versions``, e.g. "scipy"), and the git state of starvm's checkout."""
    info = {
        "cpu_model": cpu_model(), "cpu_count": os.cpu_count(), "cpus_usable": cpus_usable(),
        "load_average_1min": load_average(),
        "memory_available_bytes": memory_available(),
        "platform": platform.platform(), "python": platform.python_version(),
        "python_implementation": platform.python_implementation(),
        "numpy": version_of("numpy"), "lark": version_of("lark"), "starvm": starvm_version(),
        "starvm_path": str(PACKAGE), "git": git_state(),
    }
    for dist in extra_versions:
        info[dist] = version_of(dist)
    return info


def gpu_info() -> dict:
    """The first CUDA device as CuPy sees it; raises (ImportError, a CUDA error) where there is none."""
    import cupy
    rt = cupy.cuda.runtime
    props = rt.getDeviceProperties(0)
    name = props["name"]
    name = name.decode() if isinstance(name, bytes) else str(name)
    runtime, driver = rt.runtimeGetVersion(), rt.driverGetVersion()
    free, total = rt.memGetInfo()
    return {"name": name, "count": rt.getDeviceCount(), "memory_total_bytes": int(total),
            "memory_free_bytes_at_start": int(free), "cupy": cupy.__version__,
            "cuda_runtime": f"{runtime // 1000}.{runtime % 1000 // 10}", "cuda_runtime_raw": runtime,
            "cuda_driver": f"{driver // 1000}.{driver % 1000 // 10}", "cuda_driver_raw": driver,
            "compute_capability": f"{props.get('major')}.{props.get('minor')}"}


def device_info(backend=None, *, gpu: bool | None = None) -> dict:
    """What computes: ``backend`` (a Backend, or a Machine: its backend) by name and device, and
    the GPU when the backend has a CUDA side (``gpu=True`` asks for it without a backend)."""
    backend = getattr(backend, "backend", backend)
    name = getattr(backend, "name", None)
    d = {"backend": name, "backend_device": str(getattr(backend, "device", "host CPU")) if backend else None,
         "gpu": None}
    if gpu is None:
        gpu = getattr(backend, "gpu", False)     # a backend with a CUDA side (capabilities, backends/base.py)
    if gpu:
        try:
            d["gpu"] = gpu_info()
        except Exception as e:           # no CuPy, or no device
            d["gpu_error"] = f"{type(e).__name__}: {e}"
    return d


def device_label(device: dict, machine: dict) -> str:
    """One phrase: the GPU's name, or the CPU's."""
    if device.get("gpu"):
        return device["gpu"]["name"]
    return f"{machine.get('cpu_model', 'CPU')} (CPU)"


def slug(text: str) -> str:
    """A file-name fragment of a device name: "NVIDIA H100 80GB HBM3" -> "h100-80gb-hbm3"."""
    s = re.sub(r"\bnvidia\b", "", text.lower())
    s = re.sub(r"[^a-z0-9]+", "-", s).strip("-")
    return s or "unknown"
