"""Ranks that share one GPU taking turns at it for the device part of a MIN or MAX: an A/B
choice, off by default (STARVM_MPI_GPU_TURNS, config.mpi_gpu_turns: off, token or event).

Without MPS the kernels of two processes on one GPU do not run side by side: the GPU
time-slices between their contexts. On the H100 (bench/results/scale_h100_min_36bddd4.md,
MIN over 2^28 rows, 2^27 a rank) each rank's half of the work, run alone after the other
rank's, took about as long as the whole table on one rank: a change of context costs about
the kernel's own time. Turns were meant to cut the changes to one a call:

  token  the ranks of one GPU pass a token (one 8-byte MPI message) in a chain: each
         launches its work and waits for it, then hands the GPU to the next. The order
         alternates from call to call, so that the rank that went last goes first next.
  event  the token goes as soon as a rank's work is queued, behind an interprocess CUDA
         event that the next rank's stream waits for on the GPU, so that the next rank's
         launches overlap this rank's kernels.

Neither was faster than no turns there (the call's median 774 us with tokens, 724 with
events, 714 without), so they are off unless asked for. Every rank makes the same calls in
the same order (the control program is replicated), so the call count, and with it the
order, agrees on every rank. A rank whose device part raises still passes the token on (the
error then stops every rank, launch.py), so the next rank never waits for a token that
cannot come. Ranks on distinct GPUs (``peers`` of one rank) take no turns.
"""
from __future__ import annotations

from contextlib import contextmanager

TAG = 0x57A2     # the tokens' MPI tag (point-to-point: never matched with a collective)
MODES = ("token", "event")


def _nothing() -> None:
    pass


class GpuTurns:
    """The token chain of the ranks ``peers`` (this rank among them) that share its GPU.

    mode "token": a rank passes the token when its device work is done (its wait over).
    mode "event": it passes the token as soon as its work is queued, after recording an
    interprocess CUDA event behind it; the next rank's stream waits for that event on the
    GPU, so the next rank's launches overlap this rank's kernels and its kernels still start
    only after them (CupyEvents). Set ``mode`` and ``enabled`` alike on every rank."""

    def __init__(self, comm, peers: tuple[int, ...] = (), events=None, mode: str | None = None):
        from .. import config
        mode = config.mpi_gpu_turns() if mode is None else mode
        if mode not in (*MODES, "off"):
            from ..backends import BackendUnavailable     # a usage error (exit 2), not a bug
            raise BackendUnavailable(f"STARVM_MPI_GPU_TURNS is token, event or off, not '{mode}'")
        self.comm = comm
        self.peers = tuple(sorted(peers)) if len(peers) > 1 else ()
        self.calls = 0
        self.enabled = mode != "off"
        self.mode = "token" if mode == "off" else mode
        self.events = events            # made by the first call in mode "event" (a collective)
        self.events_failed = ""         # why mode "event" fell back to tokens, if it did

    def _events(self):
        """The device events of mode "event", made on every rank at once: each makes its own,
        one all-gather shares the handles, each opens its peers', one all-gather says whether
        all could; None where any failed (then every rank goes on with tokens alone)."""
        if self.events is not None or self.events_failed or self.comm.size == 1:
            return self.events
        events, err, handle = None, "", None
        try:
            events = CupyEvents(self.peers)
            handle = events.handle
        except Exception as e:  # noqa: BLE001 - no IPC events here: every rank falls back to tokens
            err = f"rank {self.comm.rank}: {type(e).__name__}: {e}"
        shared = self.comm.allgather((err, handle))
        err = next((e for e, _ in shared if e), "")
        if not err:
            try:
                events.open({r: h for r, (_, h) in enumerate(shared)}, self.comm.rank)
            except Exception as e:  # noqa: BLE001 - as above
                err = f"rank {self.comm.rank}: {type(e).__name__}: {e}"
            err = next((e for e in self.comm.allgather(err) if e), "")
        if err:
            self.events_failed = err
            return None
        self.events = events
        return events

    @contextmanager
    def turn(self):
        """The device part of one operation, run when this rank's turn comes. Yields
        handoff(), which the caller calls once its device work is queued (before it waits)."""
        events = self._events() if self.mode == "event" and self.enabled else None
        if not (self.peers and self.enabled):
            yield _nothing
            return
        order = self.peers if self.calls % 2 == 0 else self.peers[::-1]
        self.calls += 1
        at = order.index(self.comm.rank)
        after = order[at + 1] if at + 1 < len(order) else None
        if at:
            self.comm.recv_token(order[at - 1], TAG)
            if events is not None:
                events.wait_for(order[at - 1])
        sent = []

        def handoff():
            if events is not None and not sent:
                events.record()
                if after is not None:
                    self.comm.send_token(after, TAG)
                sent.append(True)
        try:
            yield handoff
        finally:
            if not sent and after is not None:
                self.comm.send_token(after, TAG)


class CupyEvents:
    """An interprocess CUDA event per rank of a GPU, the others' opened here: record() puts
    this rank's behind its queued work, wait_for(r) makes this rank's stream wait for r's."""
    _FLAGS = 2 | 4        # cudaEventDisableTiming | cudaEventInterprocess

    def __init__(self, peers: tuple[int, ...]):
        self.peers, self.handle, self.others = peers, None, {}
        if peers:
            import cupy as cp
            self.cp = cp
            self.event = cp.cuda.runtime.eventCreateWithFlags(self._FLAGS)
            self.handle = cp.cuda.runtime.ipcGetEventHandle(self.event)

    def open(self, handles: dict, rank: int) -> None:
        """Open the events of this rank's peers (handles: rank -> its event's IPC handle)."""
        self.others = {r: self.cp.cuda.runtime.ipcOpenEventHandle(handles[r]) for r in self.peers if r != rank}

    def record(self) -> None:
        self.cp.cuda.runtime.eventRecord(self.event, self.cp.cuda.get_current_stream().ptr)

    def wait_for(self, rank: int) -> None:
        self.cp.cuda.runtime.streamWaitEvent(self.cp.cuda.get_current_stream().ptr, self.others[rank], 0)
