"""All configuration read from the environment, in one place."""
from __future__ import annotations

import os


def backend_name(explicit: str | None = None) -> str:
    """--backend / Machine(backend=...) first, then STARVM_BACKEND, else numpy."""
    return (explicit or os.environ.get("STARVM_BACKEND") or "numpy").lower()


def debug() -> bool:
    """STARVM_DEBUG=1 shows Python tracebacks of internal errors."""
    return os.environ.get("STARVM_DEBUG", "") not in ("", "0")


def fuse() -> bool:
    """STARVM_FUSE=0 runs `parallel for` loops iteration by iteration (for comparisons)."""
    return os.environ.get("STARVM_FUSE", "1") not in ("0", "")


def use_natives() -> bool:
    """STARVM_NATIVE=0 runs standard-library routines as their Star bodies even where a
    backend has a native kernel for them."""
    return os.environ.get("STARVM_NATIVE", "1") not in ("0", "")


def history_path():
    """STARVM_HISTORY names the REPL's history file; else $XDG_DATA_HOME/starvm/history
    (~/.local/share/starvm/history)."""
    from pathlib import Path
    explicit = os.environ.get("STARVM_HISTORY")
    if explicit:
        return Path(explicit).expanduser()
    data = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(data) / "starvm" / "history"


def auto_gpu_rows() -> int:
    """STARVM_AUTO_GPU_ROWS: with --backend auto, tables of at least this many rows (and
    vectors of at least this many bits) are made on the GPU (bench/bench_auto.py measures
    the crossing point)."""
    return int(os.environ.get("STARVM_AUTO_GPU_ROWS", 1 << 20))


def auto_gpu_bits() -> int:
    """STARVM_AUTO_GPU_BITS: with --backend auto, a fused `parallel for` or a native kernel
    that processes at least this many table bits at once moves its tables to the GPU."""
    return int(os.environ.get("STARVM_AUTO_GPU_BITS", 1 << 20))


def auto_emulate() -> bool:
    """STARVM_AUTO_EMULATE=1: --backend auto on a machine without a GPU runs its device side
    on backends/emulated_device.py (NumPy), to test the placement logic anywhere."""
    return os.environ.get("STARVM_AUTO_EMULATE", "") not in ("", "0")


def jit_mode(explicit: str | None = None) -> str:
    """The compiled tier (starvm/jit): --jit / Machine(jit=...) first, then STARVM_JIT, else
    auto (compile a routine once the work it is about to do outweighs compiling it); on
    compiles every routine it can; off is the interpreter alone (the reference)."""
    if explicit is True or explicit is False:
        return "on" if explicit else "off"
    source = "jit=..." if explicit else "STARVM_JIT"
    mode = (explicit or os.environ.get("STARVM_JIT") or "auto").lower()
    if mode in ("1", "true", "yes"):
        return "on"
    if mode in ("0", "false", "no"):
        return "off"
    if mode not in ("auto", "on", "off"):
        raise ConfigError(f"{source} must be auto, on or off, not {mode!r}")
    return mode


class ConfigError(ValueError):
    """A configuration value that makes no sense: a usage error (the CLI exits 2)."""


def jit_cache_dir() -> str:
    """STARVM_JIT_CACHE: where compiled routines are kept between runs (default
    $XDG_CACHE_HOME/starvm/jit, i.e. ~/.cache/starvm/jit)."""
    explicit = os.environ.get("STARVM_JIT_CACHE")
    if explicit:
        return os.path.expanduser(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "starvm", "jit")


def jit_threshold() -> int:
    """STARVM_JIT_THRESHOLD: with --jit auto, a routine is compiled once the work its calls
    are estimated to take adds up to this much: a base operation counts 1, a scalar statement
    or loop iteration 0.1, about a microsecond a unit interpreted (default 2000000, about two
    seconds: what importing Numba and compiling or loading a routine costs a fresh process)."""
    return int(os.environ.get("STARVM_JIT_THRESHOLD", 2_000_000))


def jit_background() -> bool:
    """STARVM_JIT_BACKGROUND=0: with --jit auto, a routine whose work passes the threshold is
    compiled before its next call runs, as --jit on does (default 1: compiled in a background
    process while the interpreter keeps running it; starvm/jit/background.py)."""
    return os.environ.get("STARVM_JIT_BACKGROUND", "1") not in ("0", "")


def jit_max_compile_s() -> float:
    """STARVM_JIT_MAX_COMPILE_S: with --jit auto, a routine whose compile is estimated to take
    longer (jit/estimate.py compile_seconds: its generated code's size) runs interpreted; --jit
    on compiles it anyway (default 60)."""
    return float(os.environ.get("STARVM_JIT_MAX_COMPILE_S", 60))


def jit_gpu_threshold() -> int:
    """STARVM_JIT_GPU_THRESHOLD: the same for the GPU tier, whose estimate prices a base
    operation as a launch (about 20 units; jit/estimate.py) and whose compile costs less
    than Numba's (default 250000: NVRTC compiles a routine's kernel in about a quarter of a
    second; CuPy keeps the binary on disk for later runs)."""
    return int(os.environ.get("STARVM_JIT_GPU_THRESHOLD", 250_000))


# ---- the GPU tier's kernel shapes and switches (jit/cuda_runtime.py, targets/cuda/): the
# defaults are what the bench measured best; the variables let it measure the others
_GPU_PARSED: dict = {}     # (variable, its text) -> its value: a call's launch reads them cheaply


def _gpu_setting(name: str, parse):
    raw = os.environ.get(name)
    key = (name, raw)
    if key not in _GPU_PARSED:
        _GPU_PARSED[key] = parse(raw)
    return _GPU_PARSED[key]


def _bounded_int(raw, default: int, lo: int, hi: int) -> int:
    try:
        return max(lo, min(hi, int(raw if raw is not None else default)))
    except ValueError:
        return default


def gpu_lanes(default: str) -> str:
    """STARVM_GPU_LANES: the lanes an iteration of a `parallel for` runs on: 32, 16, 8 or auto."""
    return _gpu_setting("STARVM_GPU_LANES", lambda raw: (raw if raw is not None else default).strip().lower())


def gpu_free_r(default: int, most: int) -> int:
    """STARVM_GPU_FREE_R: the words a thread of a kernel with no grid barrier holds (0: as the others)."""
    return _gpu_setting("STARVM_GPU_FREE_R", lambda raw: _bounded_int(raw, default, 0, most))


def gpu_one_block_words(most: int) -> int | None:
    """STARVM_GPU_ONE_BLOCK_WORDS: slices of at most this many words run on one block of the GPU
    tier (its barriers the block's own), past 1024 words with several words a thread; None
    where it is not set (the tier's own bound)."""
    return _gpu_setting("STARVM_GPU_ONE_BLOCK_WORDS",
                        lambda raw: None if raw is None else _bounded_int(raw, 0, 0, most))


def gpu_min_r(most: int) -> int:
    """STARVM_GPU_R: the fewest words a thread of a grid kernel (outside parallel for) tries."""
    return _gpu_setting("STARVM_GPU_R", lambda raw: _bounded_int(raw, 1, 1, most))


def gpu_threads(default: int) -> int:
    """STARVM_GPU_THREADS: threads a block of a grid kernel outside parallel for (32..1024, a
    multiple of 32)."""
    t = _gpu_setting("STARVM_GPU_THREADS", lambda raw: _bounded_int(raw, default, 32, 1024))
    return t if t % 32 == 0 else default


def gpu_fit() -> bool:
    """STARVM_GPU_FIT=1: a grid kernel's registers capped so that the blocks it needs are
    resident together, spilling what does not fit."""
    return _gpu_setting("STARVM_GPU_FIT", lambda raw: (raw or "0") == "1")


def gpu_switches(known) -> tuple:
    """STARVM_GPU_SWITCHES=GEN_BARRIER,STORE_ALL,...: the kernel code of before brought back
    for measuring (targets/cuda/routine.py SWITCHES, the names in ``known``)."""
    return _gpu_setting("STARVM_GPU_SWITCHES", lambda raw: tuple(sorted(
        x.strip().upper() for x in (raw or "").split(",") if x.strip().upper() in known)))


def gpu_ownc() -> int:
    """STARVM_GPU_OWNC: the iterations a warp of a pivot loop keeps its own column of in
    registers (-1, the default: as many as 10 words a lane hold)."""
    return _gpu_setting("STARVM_GPU_OWNC", lambda raw: _bounded_int(raw, -1, -1, 16))


def gpu_pfor_threads(default: int) -> int:
    """STARVM_GPU_PFOR_THREADS: threads a block of a `parallel for` kernel (32..1024, a
    multiple of 32; else the default)."""
    def parse(raw):
        try:
            t = int(raw if raw is not None else default)
        except ValueError:
            return default
        return t if 32 <= t <= 1024 and t % 32 == 0 else default
    return _gpu_setting("STARVM_GPU_PFOR_THREADS", parse)


def gpu_pfor_blocks_per_sm() -> int:
    """STARVM_GPU_PFOR_BLOCKS_PER_SM: blocks an SM of a `parallel for` kernel (default 1)."""
    return _gpu_setting("STARVM_GPU_PFOR_BLOCKS_PER_SM", lambda raw: _bounded_int(raw, 1, 1, 1 << 20))


def gpu_pivot_loop() -> bool:
    """STARVM_GPU_PIVOT_LOOP=0: a `for` whose body is one `parallel for` renders with two grid
    barriers an iteration instead of the pivot loop's one."""
    return os.environ.get("STARVM_GPU_PIVOT_LOOP", "1") != "0"


def gpu_fuse() -> bool:
    """STARVM_GPU_FUSE=0: slice logic renders operation by operation only (the code of before,
    no #if)."""
    return os.environ.get("STARVM_GPU_FUSE", "1") != "0"


def mpi_device_path() -> str:
    """STARVM_MPI_DEVICE_PATH: how the ranks of a distributed run on GPUs exchange device
    buffers: auto (default: NCCL, else CUDA-aware MPI, else host staging), nccl,
    cuda-aware-mpi or host-staging (starvm/distributed/collectives.py)."""
    return (os.environ.get("STARVM_MPI_DEVICE_PATH", "") or "auto").strip().lower()


def rank_supervisor() -> bool:
    """STARVM_RANK_SUPERVISOR: 0 turns off the parent process each rank of `star run
    --distributed` keeps to report the rank's death by a signal
    (starvm/distributed/supervise.py); default on."""
    return os.environ.get("STARVM_RANK_SUPERVISOR", "1").strip().lower() not in ("0", "false", "no", "off")


def mpi_error_wait() -> float:
    """STARVM_MPI_ERROR_WAIT: seconds a rank of `star run --distributed` that failed waits for
    the others to fail too (an error of the program) before it stops them all as failed
    alone (starvm/distributed/launch.py); default 10."""
    try:
        return float(os.environ.get("STARVM_MPI_ERROR_WAIT", "") or 10.0)
    except ValueError:
        return 10.0


def max_depth() -> int | None:
    """STARVM_MAX_DEPTH: nested Star calls allowed (Machine(max_depth=...) first; None where
    it is unset or not a whole number: execution/limits.py's default)."""
    try:
        return int(os.environ.get("STARVM_MAX_DEPTH", "") or "x")
    except ValueError:
        return None


def user_tag() -> str:
    """Who runs starvm, for per-user folders (the compiled-code cache's fallback in $TMPDIR):
    the uid, or USERNAME where there is none (Windows)."""
    return str(os.getuid()) if hasattr(os, "getuid") else os.environ.get("USERNAME", "user")


def mps_pipe_directory(environ=None) -> str:
    """CUDA_MPS_PIPE_DIRECTORY (of ``environ``, default the process's): where CUDA's
    Multi-Process Service keeps its control socket (default /tmp/nvidia-mps;
    starvm/distributed/collectives.py asks whether it runs)."""
    environ = os.environ if environ is None else environ
    return environ.get("CUDA_MPS_PIPE_DIRECTORY") or "/tmp/nvidia-mps"


# the rank variables of the MPI launchers (MPICH/Hydra, Open MPI, PMIx, MVAPICH)
_RANK_VARIABLES = ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "MV2_COMM_WORLD_RANK")
RANK_CHILD = "STARVM_RANK_CHILD"      # set by a rank's supervisor for the child it forks


def launched_rank() -> str | None:
    """This process's rank as mpiexec's environment gives it, or None outside mpiexec."""
    return next((os.environ[v] for v in _RANK_VARIABLES if v in os.environ), None)


_SIZE_VARIABLES = ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "MV2_COMM_WORLD_SIZE")


def launched_size() -> int | None:
    """The number of ranks mpiexec's environment says it started (MPICH's Hydra, Open MPI,
    MVAPICH), or None where it does not say (no launcher, or one that sets no size)."""
    for v in _SIZE_VARIABLES:
        if v in os.environ:
            try:
                return int(os.environ[v])
            except ValueError:
                return None
    return None


def rank_child() -> bool:
    """Is this process the child a rank's supervisor forked (distributed/supervise.py)?"""
    return bool(os.environ.get(RANK_CHILD))


def git_commit_override() -> str | None:
    """STARVM_GIT_COMMIT: the commit a copy of the checkout (e.g. `git archive` sent to a GPU
    machine, where git may see an unrelated checkout around it) names for benchmark results."""
    return os.environ.get("STARVM_GIT_COMMIT") or None
