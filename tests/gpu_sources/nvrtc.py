"""CUDA C -> PTX with NVRTC on the CPU: no GPU, no driver, no CuPy.

NVIDIA's ``cuda-bindings`` (``cuda.bindings.nvrtc``) with the ``nvidia-cuda-nvrtc-cu12``
wheel (both in the ``test`` extra) load libnvrtc from the wheel and compile without a
driver. ``compile_ptx`` returns the PTX and, for every kernel entry, the widths of its
parameters (so launches can be checked against them); a source that does not compile
raises ``NvrtcError`` carrying NVRTC's result name and its log (``file(line): error: ...``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

# The H100's architecture (sm_90), the GPU the project measures on; CuPy compiles for the
# device it runs on, so a source that needs a newer one would show there.
ARCH = "compute_90"


class NvrtcError(Exception):
    def __init__(self, result: str, log: str, name: str):
        super().__init__(f"{name}: {result}\n{log}")
        self.result, self.log, self.name = result, log, name


@dataclass
class Ptx:
    text: str
    lowered: dict[str, str] = field(default_factory=dict)     # name expression -> mangled entry name
    entries: dict[str, list[int]] = field(default_factory=dict)   # entry -> its parameters' bit widths

    def entry(self, name: str) -> list[int]:
        """The parameter widths of kernel ``name`` (an extern "C" name or a name expression)."""
        key = self.lowered.get(name, name)
        if key not in self.entries:
            raise KeyError(f"no kernel '{name}' in the PTX (entries: {sorted(self.entries)})")
        return self.entries[key]


def nvrtc():
    from cuda.bindings import nvrtc as mod      # the test extra installs it
    return mod


def require() -> None:
    """Skip the calling test where NVRTC cannot be used here (cuda-bindings not installed, or
    its libnvrtc not found): CI installs both, so there these tests run (.ci/limits bounds the
    skips). On a GPU machine the cupy tests compile the same sources with CuPy's NVRTC."""
    import pytest
    why = 'NVRTC compiles the CUDA sources: pip install ".[test]" (cuda-bindings, nvidia-cuda-nvrtc-cu12)'
    try:
        mod = nvrtc()
        err, *_ = mod.nvrtcVersion()
        if err != mod.nvrtcResult.NVRTC_SUCCESS:
            raise RuntimeError(err)
    except Exception as e:        # ImportError, or the library not loadable
        pytest.skip(f"{why}: {e}")


def _check(result, prog, name: str) -> None:
    mod = nvrtc()
    err = result[0] if isinstance(result, tuple) else result
    if err != mod.nvrtcResult.NVRTC_SUCCESS:
        raise NvrtcError(err.name, _log(prog) if prog is not None else "", name)


def _log(prog) -> str:
    mod = nvrtc()
    _, size = mod.nvrtcGetProgramLogSize(prog)
    buf = b" " * size
    mod.nvrtcGetProgramLog(prog, buf)
    return buf.rstrip(b"\x00 ").decode(errors="replace")


_ENTRY = re.compile(r"\.entry\s+([\w$]+)\s*\(([^)]*)\)", re.S)
_PARAM = re.compile(r"\.param\s+\.([busf])(\d+)\b")


def parse_entries(ptx: str) -> dict[str, list[int]]:
    return {m.group(1): [int(w) for _, w in _PARAM.findall(m.group(2))] for m in _ENTRY.finditer(ptx)}


def compile_ptx(code: str, name: str = "kernel.cu", options=(), name_expressions=(), arch: str = ARCH) -> Ptx:
    mod = nvrtc()
    err, prog = mod.nvrtcCreateProgram(code.encode(), name.encode(), 0, [], [])
    _check(err, None, name)
    try:
        for expr in name_expressions:
            _check(mod.nvrtcAddNameExpression(prog, expr.encode()), prog, name)
        opts = [f"--gpu-architecture={arch}".encode(), *(o.encode() for o in options)]
        _check(mod.nvrtcCompileProgram(prog, len(opts), opts), prog, name)
        _, size = mod.nvrtcGetPTXSize(prog)
        buf = b" " * size
        mod.nvrtcGetPTX(prog, buf)
        text = buf.rstrip(b"\x00").decode()
        lowered = {}
        for expr in name_expressions:
            err, low = mod.nvrtcGetLoweredName(prog, expr.encode())
            _check(err, prog, name)
            lowered[expr] = low.decode()
        return Ptx(text, lowered, parse_entries(text))
    finally:
        mod.nvrtcDestroyProgram(prog)
