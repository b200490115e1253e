"""A rank that dies says so: under mpiexec each rank process forks before MPI starts; the
child runs the rank, the parent (what mpiexec launched) only waits for it. A rank killed
outright (kill -9, the out-of-memory killer) leaves no chance to print anything, and
mpiexec then kills the other ranks with SIGKILL too, so no rank could report it; its parent
can: `star: rank N stopped (signal 9: Killed)` on standard error, then it exits as the
child did (128 + the signal), and mpiexec stops the others as before.

The child dies with its parent (PR_SET_PDEATHSIG), so killing the parent leaves no rank
behind. The parent keeps no MPI state and never touches the child's connection to
mpiexec. Signals: mpiexec runs each rank in its own process group and sends a Ctrl-C to
that group, which holds the child too: the parent passes on no interrupt (the child would
get it twice), only a termination or hangup sent to the parent alone would be lost, so
those it passes on (twice does no harm there). STARVM_RANK_SUPERVISOR=0 turns
this off (config.rank_supervisor).
"""
from __future__ import annotations

import os
import signal
import sys

_FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2)
_PASSED_ON = (signal.SIGTERM, signal.SIGHUP)     # they stop the child whether it has them once or twice


def launched_rank() -> str | None:
    """This process's rank as mpiexec's environment gives it, or None outside mpiexec."""
    from .. import config
    return config.launched_rank()


def supervise() -> None:
    """Fork here when this process is a rank that mpiexec launched (and not yet forked): the
    child returns and runs the rank; the parent never returns (it exits as the child did)."""
    from .. import config
    rank = launched_rank()
    if rank is None or config.rank_child() or not config.rank_supervisor() or not hasattr(os, "fork") \
            or not sys.platform.startswith("linux") or "mpi4py.MPI" in sys.modules:
        return                              # (MPI started already: a fork would share its state)
    sys.stdout.flush(), sys.stderr.flush()
    os.environ[config.RANK_CHILD] = "1"
    blocked = set(_FORWARDED) | {signal.SIGCHLD}
    signal.pthread_sigmask(signal.SIG_BLOCK, blocked)       # no signal lost between fork and wait
    pid = os.fork()
    if pid == 0:
        _die_with_parent()
        signal.pthread_sigmask(signal.SIG_UNBLOCK, blocked)
        return
    os._exit(_wait(pid, rank, blocked))


def _die_with_parent() -> None:
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)       # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() == 1:                   # the parent is gone already
        os._exit(1)


def _wait(pid: int, rank: str, blocked: set) -> int:
    """The parent: wait for the child, passing on the signals mpiexec sends; its exit code."""
    while True:
        sig = signal.sigwaitinfo(blocked).si_signo
        if sig in _PASSED_ON:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        if sig != signal.SIGCHLD:
            continue
        done, status = os.waitpid(pid, os.WNOHANG)
        if done != pid:
            continue
        if os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
            try:
                name = signal.Signals(sig).name
                what = signal.strsignal(sig) or name
            except ValueError:
                what = "unknown signal"
            why = "; out of memory?" if sig == signal.SIGKILL else ""
            print(f"star: rank {rank} stopped (signal {sig}: {what}{why})", file=sys.stderr, flush=True)
            return 128 + sig
        return os.WEXITSTATUS(status)
