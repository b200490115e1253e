"""`star run PROGRAM.star --distributed` under mpiexec: one message for an error, never a hang.

Every rank runs the CLI. Ranks other than 0 keep their standard output and error to
themselves (``writeln`` prints once, on rank 0). When the run fails on a rank, the ranks
check whether all of them failed (an error of the program: its control flow and its
checks are the same on every rank, so they fail alike and rank 0 prints the message); if
the others do not answer within the wait (``STARVM_MPI_ERROR_WAIT`` seconds), the failure
is this rank's alone (out of memory there, a bug): it prints its message, marked with its
rank, and stops all ranks with MPI_Abort and the exit code. A rank killed outright is
reported by the parent process it runs under (supervise.py: `star: rank N stopped (signal
9: Killed; out of memory?)`), and mpiexec stops the others.
"""
from __future__ import annotations

import io
import sys


class MpiMissing(Exception):
    pass


def world_comm():
    """MPI.COMM_WORLD for --distributed; MpiMissing with the way to get mpi4py. Where the
    launcher says it started one rank (`mpiexec -n 1`), a communicator of one rank that needs
    no MPI (comm.SelfComm): that rank runs the plain machine (distributed.machine_backend), so
    it does not pay MPI's start-up either (MPI_Init: 0.3-0.4 s on the 2-core host)."""
    from .. import config
    if config.launched_size() == 1 and "mpi4py.MPI" not in sys.modules:
        import importlib.util
        if importlib.util.find_spec("mpi4py") is not None:    # (without it, the same error as below)
            from .comm import SelfComm
            return SelfComm()
    try:
        from mpi4py import MPI
    except ImportError as e:
        raise MpiMissing(f"--distributed needs mpi4py and an MPI library ({e}); "
                         "install them with: pip install 'starvm[mpi]'") from None
    return MPI.COMM_WORLD


def run_ranks(cli_main, argv) -> int:
    """Run ``cli_main(argv)`` (which prints its own errors and returns the exit code) on
    this rank, then settle a failure among the ranks as the module says."""
    from .. import config
    from .comm import wrap
    from .supervise import supervise
    supervise()                       # before MPI starts: the parent waits, the child runs on
    try:
        comm = wrap(world_comm())
    except MpiMissing as e:
        print(f"star: error: {e}", file=sys.stderr)
        return 2
    quiet = comm.rank != 0
    saved = sys.stdout, sys.stderr
    if quiet:
        sys.stdout, sys.stderr = io.StringIO(), io.StringIO()
    try:
        code = cli_main(argv)
    except SystemExit as e:           # argparse: usage errors, --help
        code = e.code if isinstance(e.code, int) else 2
    finally:
        captured = sys.stderr.getvalue() if quiet else ""
        sys.stdout, sys.stderr = saved
    if code == 0 or comm.size == 1:
        return code
    if comm.agree_on_failure(True, config.mpi_error_wait()):
        return code                   # every rank failed alike: rank 0 has printed the message
    if quiet:
        text = captured.rstrip("\n") or f"star: exit status {code}"
        print("\n".join(f"star: rank {comm.rank}: {line}" for line in text.splitlines()), file=sys.stderr)
    print(f"star: rank {comm.rank} of {comm.size} failed alone; stopping all ranks", file=sys.stderr)
    sys.stderr.flush()
    comm.abort(code)
    return code
