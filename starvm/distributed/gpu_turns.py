"""Ranks that share one GPU take turns at it for the device part of an operation.

Without MPS, the kernels of two processes on one GPU do not run side by side: the GPU
time-slices between their contexts, and on the H100 a rank's turn cost about 130 us more
than its kernels when both ranks had work queued at once (bench_scale --min-phases at
bb94f4d: MIN over 2^27 rows a rank, each rank's kernel ~130 us alone). So the ranks of one
GPU pass a token (one MPI message of 8 bytes) in a chain: each launches its work and waits
for it, then hands the GPU to the next. The chain's order alternates from call to call, so
that the rank that went last in one call goes first in the next and the GPU changes hands
once a call, not twice. Ranks on distinct GPUs (``peers`` of one rank) take no turns.

Every rank makes the same calls in the same order (the control program is replicated), so
the call count, and with it the order, agrees on every rank. A rank whose device part
raises still passes the token on (the error then stops every rank, launch.py), so the
next rank never waits for a token that cannot come.
"""
from __future__ import annotations

from contextlib import contextmanager

TAG = 0x57A2     # the tokens' MPI tag (point-to-point: never matched with a collective)


class GpuTurns:
    """The token chain of the ranks ``peers`` (this rank among them) that share its GPU."""

    def __init__(self, comm, peers: tuple[int, ...] = ()):
        self.comm = comm
        self.peers = tuple(sorted(peers)) if len(peers) > 1 else ()
        self.calls = 0
        self.enabled = True

    @contextmanager
    def turn(self):
        """The device part of one operation, run when this rank's turn comes."""
        if not (self.peers and self.enabled):
            yield
            return
        order = self.peers if self.calls % 2 == 0 else self.peers[::-1]
        self.calls += 1
        at = order.index(self.comm.rank)
        if at:
            self.comm.recv_token(order[at - 1], TAG)
        try:
            yield
        finally:
            if at + 1 < len(order):
                self.comm.send_token(order[at + 1], TAG)
