"""Benchmarking, for users and for the scripts of bench/.

``run`` (program.py) is ``star bench``: one Star program's main block or one routine, repeated
on several backends side by side; ``cli.py`` holds its options. The harness under it, which
every bench/*.py script uses:

* environment.py — where it ran: ``machine_info``, ``device_info``, ``git_state``, ``slug``,
  ``load_average``;
* timing.py — ``clock`` (the device synchronised around the call), ``repeat`` → ``Timing``
  (median / min / max), ``run_process`` (a fresh process timed whole, e.g. a ``star run``);
* watchdog.py — ``Budget`` (a run's wall-time budget) and ``watchdog`` (stops one call that
  overruns its limit);
* results.py — ``document`` (the header every result file starts with) and ``write_results``
  (NAME.json and NAME.md with the same header);
* results_index.py — bench/results/README.md, generated from docs/figures.toml
  (``python -m starvm.benchmarking.results_index``).
"""
from __future__ import annotations

import importlib

# the names above, each from its module, imported when first asked for: `star run` builds
# `star bench`'s options (cli.py) without loading the harness (Machine, git, metadata)
_FROM = {**dict.fromkeys(("device_info", "device_label", "git_state", "load_average", "machine_info", "slug"),
                         "environment"),
         **dict.fromkeys(("Measurement", "Report", "machine_has_jit", "run"), "program"),
         **dict.fromkeys(("document", "header_markdown", "write_json", "write_results"), "results"),
         **dict.fromkeys(("ProcessRun", "Timing", "clock", "repeat", "run_process", "synchronizer"), "timing"),
         **dict.fromkeys(("Budget", "RunTimeout", "caused_by_timeout", "watchdog"), "watchdog")}


def __getattr__(name: str):
    module = _FROM.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    found = importlib.import_module(f".{module}", __name__)
    # every name of that module at once: importing watchdog.py made the package's attribute
    # `watchdog` the submodule, which the function of that name must replace
    for other, where in _FROM.items():
        if where == module:
            globals()[other] = getattr(found, other)
    return globals()[name]


def __dir__():
    return sorted(set(globals()) | set(_FROM))


__all__ = ["run", "Report", "Measurement", "machine_has_jit", "machine_info", "device_info", "device_label",
           "git_state", "load_average", "slug", "clock", "repeat", "Timing", "ProcessRun", "run_process", "synchronizer", "Budget", "RunTimeout",
           "watchdog", "caused_by_timeout", "document", "header_markdown", "write_json", "write_results"]
