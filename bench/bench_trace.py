"""What a replay page of `star trace` costs (starvm/debug), on the NumPy backend:

    python bench/bench_trace.py            # about a minute on 2 cores
    python bench/bench_trace.py --quick    # small sizes, a smoke test of this script

For each case: the statement events recorded, the seconds to record them (the program run
with events on), the seconds to write the page and its size, and the page's time to open
in a headless Chromium (Selenium `get` until the page has drawn its first event; the goal
is <= 1 s). Cases: WARSHALL-C (programs/warshall_c.star) on a G(n, p) digraph with n = 64,
and BFS-adapt (programs/bfs_adapt.star) on a G(n, p) graph with n = 1000, once with native
kernels (each standard-library call one statement) and once with every routine's Star body
(the default of `star trace`), which the event limit cuts. Also the debugger's `back`
(a replay from the start) at the last event of WARSHALL-C n = 64.
Results go to bench/results/trace.json and bench/results/trace.md.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import io
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))          # measure this checkout's starvm, installed or not

from starvm.debug import Debugger  # noqa: E402
from starvm.debug.trace import DEFAULT_MAX_EVENTS, record  # noqa: E402
from starvm.debug.trace_html import write_html  # noqa: E402
from starvm.graphs import generate  # noqa: E402


def open_seconds(path: Path) -> tuple[float, float] | None:
    """Seconds for headless Chromium to load the page and draw its first event (median of 3):
    Selenium's get (returns after the load event) and the page's own clock at the moment it
    has drawn (performance.now(), from the start of the navigation)."""
    chromium, driver = shutil.which("chromium") or shutil.which("chromium-browser"), shutil.which("chromedriver")
    if not (chromium and driver):
        return None
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"):
        opts.add_argument(flag)
    d = webdriver.Chrome(service=Service(driver), options=opts)
    try:
        times, inpage = [], []
        for _ in range(3):
            d.get("about:blank")
            t = time.perf_counter()
            d.get(path.as_uri())                       # returns after the load event
            while d.execute_script("return document.body.dataset.ready") != "1":
                if time.perf_counter() - t > 60:
                    raise RuntimeError(f"{path.name}: the page did not draw within 60 s")
                time.sleep(0.01)
            times.append(time.perf_counter() - t)
            inpage.append(int(d.execute_script("return document.body.dataset.readyMs")) / 1000)
        return sorted(times)[1], sorted(inpage)[1]
    finally:
        d.quit()


def case(name: str, program: str, spec: str, tmp: Path, **opts) -> dict:
    text = (ROOT / program).read_text()
    graph = generate(spec)
    t = time.perf_counter()
    trace = record(text, program, graph=graph, backend="numpy", **opts)
    rec_s = time.perf_counter() - t
    page = tmp / f"{name}.html"
    t = time.perf_counter()
    size = write_html(trace, page)
    write_s = time.perf_counter() - t
    return {"case": name, "program": program, "graph": spec, "native": bool(opts.get("native")),
            "events": len(trace["events"]), "end": trace["end"],
            "record_s": round(rec_s, 3), "write_s": round(write_s, 3), "bytes": size,
            **dict(zip(("open_s", "drawn_s"), (None if x is None else round(x, 3) for x in (open_seconds(page) or (None, None)))))}


def back_cost(name: str, program: str, spec: str, **opts) -> dict:
    """The debugger's `back` at the last event of a run: a replay from the start."""
    text = (ROOT / program).read_text()
    with Debugger(text, program, graph=generate(spec), out=io.StringIO(), **opts) as d:
        d.start()
        t = time.perf_counter()
        end = d.cont()
        cont_s = time.perf_counter() - t
        d.back()                       # warm: compile once
        d.cont()
        t = time.perf_counter()
        d.back()
        return {"case": name, "graph": spec, "events": end.event, "continue_s": round(cont_s, 3),
                "back_s": round(time.perf_counter() - t, 3)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="small sizes (a smoke test)")
    args = ap.parse_args(argv)
    n_w, n_b, limit = (16, 100, 5000) if args.quick else (64, 1000, DEFAULT_MAX_EVENTS)
    w_spec = f"gnp:n={n_w},p={3 / n_w:.4f},seed=1"
    b_spec = f"gnp:n={n_b},p={4 / n_b:.4f},seed=1"
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        rows.append(case(f"WARSHALL-C n={n_w}", "programs/warshall_c.star", w_spec, tmp))
        rows.append(case(f"BFS-adapt n={n_b}, native kernels", "programs/bfs_adapt.star", b_spec, tmp, native=True))
        rows.append(case(f"BFS-adapt n={n_b}, Star bodies", "programs/bfs_adapt.star", b_spec, tmp, max_events=limit))
    back = [back_cost(f"WARSHALL-C n={n_w}", "programs/warshall_c.star", w_spec),
            back_cost(f"BFS-adapt n={n_b}, native kernels", "programs/bfs_adapt.star", b_spec, native=True)]
    result = {"date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
              "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
                         f"load {os.getloadavg()[0]:.1f}",
              "python": platform.python_version(), "quick": args.quick, "rows": rows,
              "back": back, "open_goal_s": 1.0}
    out = ROOT / "bench" / "results"
    out.mkdir(parents=True, exist_ok=True)
    suffix = "_quick" if args.quick else ""
    (out / f"trace{suffix}.json").write_text(json.dumps(result, indent=1) + "\n")
    lines = ["# star trace: recording and replay-page cost (NumPy backend)", "",
             f"{result['date']} · {result['machine']} · Python {result['python']}", "",
             "| case | events | end | record, s | write, s | page, bytes | open in Chromium, s | drawn at, s | open <= 1 s |",
             "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | --- |"]
    for r in rows:
        ok = "—" if r["open_s"] is None else ("yes" if r["open_s"] <= 1.0 else "no")
        lines.append(f"| {r['case']} (`{r['graph']}`) | {r['events']} | {r['end']} | {r['record_s']} | "
                     f"{r['write_s']} | {r['bytes']:,} | {r['open_s'] if r['open_s'] is not None else '—'} | "
                     f"{r['drawn_s'] if r['drawn_s'] is not None else '—'} | {ok} |")
    lines += ["", "The debugger: `continue` from the first to the last event (no breakpoint), and `back` at the "
              "last event (a replay from the start, compiling included):", "",
              "| case | events | continue, s | back, s |", "| --- | ---: | ---: | ---: |"]
    lines += [f"| {b['case']} (`{b['graph']}`) | {b['events']} | {b['continue_s']} | {b['back_s']} |" for b in back]
    lines += ["",
              "open = Selenium's `get` of the file (until the load event); drawn at = the page's own clock "
              "(performance.now()) when it has drawn its first event. "
              "`end` = limit: the run was stopped at --max-events (default 200000); the page says so. "
              "Reproduce: `python bench/bench_trace.py`."]
    (out / f"trace{suffix}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
