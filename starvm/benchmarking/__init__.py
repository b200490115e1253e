"""Benchmarking, for users and for the scripts of bench/.

``run`` (program.py) is ``star bench``: one Star program's main block or one routine, repeated
on several backends side by side. The harness under it, which every bench/*.py script uses:

* environment.py — where it ran: ``machine_info``, ``device_info``, ``git_state``, ``slug``;
* timing.py — ``clock`` (the device synchronised around the call), ``repeat`` → ``Timing``
  (median / min / max);
* watchdog.py — ``Budget`` (a run's wall-time budget) and ``watchdog`` (stops one call that
  overruns its limit);
* results.py — ``document`` (the header every result file starts with) and ``write_results``
  (NAME.json and NAME.md with the same header).
"""
from .environment import device_info, device_label, git_state, machine_info, slug
from .program import Measurement, Report, machine_has_jit, run
from .results import document, header_markdown, write_json, write_results
from .timing import Timing, clock, repeat, synchronizer
from .watchdog import Budget, RunTimeout, caused_by_timeout, watchdog

__all__ = ["run", "Report", "Measurement", "machine_has_jit", "machine_info", "device_info", "device_label",
           "git_state", "slug", "clock", "repeat", "Timing", "synchronizer", "Budget", "RunTimeout",
           "watchdog", "caused_by_timeout", "document", "header_markdown", "write_json", "write_results"]
