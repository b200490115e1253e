"""Progress bars for the outer loops of a long Star program (``star run --progress``).

Off by default, and then free: code generation wraps a ``for`` loop only when the machine has
``progress`` on (``CodeGen(progress=True)``): the outermost ``for`` loop of the main block and
of each routine becomes ``for i in _progress(range(a, b + 1), label):``. The hook shows one
tqdm bar for the outermost loop that is running; a loop that starts while a bar is shown (a
routine's loop called from inside the main block's loop) runs unwrapped.
"""
from __future__ import annotations

import sys


class ProgressHook:
    """The ``_progress`` of a machine's namespace."""

    def __init__(self, file=None, **tqdm_options):
        try:
            from tqdm import tqdm
        except ImportError:
            raise ImportError("progress bars need tqdm, which is not installed "
                              "(pip install tqdm, or pip install \"starvm[progress]\")") from None
        self._tqdm = tqdm
        self.file = file
        self.options = {"mininterval": 0.1, "dynamic_ncols": True, "leave": True, **tqdm_options}
        self.active = False

    def __call__(self, iterable, label: str):
        if self.active:
            return iterable
        return self._bar(iterable, label)

    def _bar(self, iterable, label):
        self.active = True
        bar = self._tqdm(iterable, desc=label, total=len(iterable), unit="it",
                         file=self.file if self.file is not None else sys.stderr, **self.options)
        try:
            yield from bar
        finally:
            bar.close()
            self.active = False


def enable(machine, on: bool = True, file=None) -> None:
    """Turn the progress bars of ``machine`` on or off; code compiled afterwards gets them."""
    machine._progress_on = bool(on)
    if on:
        machine.ns["_progress"] = ProgressHook(file)
    else:
        machine.ns.pop("_progress", None)
