"""Watching a Star program run: the step-through debugger (``star debug``, ``:debug`` in the
REPL, :class:`Debugger` from Python) and the replay page (``star trace``).

``events.py`` (statement events from code compiled with hooks), ``evaluate.py`` (Star
expressions in a stopped frame), ``debugger.py`` (the one debugger class), ``commands.py``
(its pdb-like command language and prompt), ``trace.py`` (recording a run),
``trace_html.py`` (the self-contained replay page, from ``trace_page.html``) and ``cli.py``
(the options and commands of `star debug` and `star trace`).
"""
from .debugger import Breakpoint, Debugger, Stop
from .evaluate import DebugError

__all__ = ["Debugger", "DebugError", "Stop", "Breakpoint"]
