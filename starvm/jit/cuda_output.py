"""The output of a GPU-tier kernel while it runs: the host's side of prelude.cu's out_pub and
out_room.

A kernel writes its output records into page-locked host memory. After each write call its
thread 0 publishes how far the finished calls' records go (OUT_PUB: the buffer's round and
words); a thread of the host (``OutputDrain``) writes those calls' text as the interpreter
writes it, flushes the stream, and answers how far it wrote (OUT_ACK). So a long kernel's
output appears as it is printed, a killed run keeps it, and a full buffer costs the kernel a
wait for the host instead of a launch again with a larger one (the records of any amount of
output fit a buffer of fixed size). What the kernel had not published when it ended (the
last calls, or those of a launch stopped by an error) is written by ``rest``.
"""
from __future__ import annotations

import threading

import numpy as np

from ..targets.cuda.prelude import OUT_ACK, OUT_ON, OUT_PUB, OUT_ROUND
from .call import records_text

ROUND_WORDS = (1 << OUT_ROUND) - 1
POLL_S = 0.001          # the drain looks at what the kernel published this often


class OutputDrain:
    """One launch's drain: ``host`` is the page-locked int64 block whose word 0 is the Ctrl-C
    flag (OUT_* after it), ``ob`` the page-locked records the kernel writes. ``chars``: the
    characters written for this launch (a launch run again skips them: call._skipping_output);
    ``error``: what writing raised (a closed pipe), after which the kernel is stopped as by a
    Ctrl-C and the call raises it."""

    def __init__(self, host: np.ndarray, ob: np.ndarray, context, strings: list[str]):
        self.host, self.ob, self.context, self.strings = host, ob, context, strings
        self.round = 0          # the buffer's round the host is in
        self.done = 0           # words of that round written
        self.chars = 0
        self.error: BaseException | None = None
        self._stop = threading.Event()
        self._lock = threading.Lock()      # a pass at a time (the thread's, rest's)
        self._thread = threading.Thread(target=self._run, name="starvm-gpu-output", daemon=True)

    def __enter__(self):
        h = self.host
        h[OUT_PUB] = 0
        h[OUT_ACK] = 0
        h[OUT_ON] = 1
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.host[OUT_ON] = 0

    def _run(self) -> None:
        while not self._stop.wait(POLL_S):
            self.drain()

    def drain(self) -> None:
        """Write the finished calls the kernel published since the last pass, then say so."""
        with self._lock:
            pub = int(self.host[OUT_PUB])
            rnd, words = pub >> OUT_ROUND, pub & ROUND_WORDS
            if rnd != self.round:       # the kernel began a round once this one was written
                self.round, self.done = rnd, 0
            if words > self.done:
                if self.error is None:      # (after a failed write: taken, not written, till the kernel stops)
                    self._write(self.ob[self.done:words])
                self.done = words
            self.host[OUT_ACK] = (rnd << OUT_ROUND) | words

    def rest(self, words: int) -> None:
        """After the kernel ended, with ``words`` its records of the round it was in (its
        status's S_OUT): what it published last, then the finished calls after that."""
        self.drain()
        with self._lock:
            if self.error is None and words > self.done:
                self._write(self.ob[self.done:words])
                self.done = words

    def _write(self, records) -> None:
        try:
            text = records_text(np.array(records), self.strings)
            self.chars += len(text)
            if text:
                self.context.write(text)
            self.context.flush()
        except BaseException as e:  # noqa: BLE001 - raised by the call (GpuRoutine.run) once the kernel stopped
            # (on the drain's thread nothing else would see it, and the kernel would wait for
            # the host for ever)
            self.error = e
            self.host[0] = 1        # the Ctrl-C flag: the kernel stops at its next poll
