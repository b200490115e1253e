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
(a replay from the start) at the last event of WARSHALL-C n = 64 and BFS-adapt n = 1000.

Also the cost of the statement hook when it is off: the code generator of the commit before
the hook (from git, ``HOOK_PARENT``) and today's, alternated in one process with the compiled
tier off, on the 1e6-statement loop and WARSHALL-C at n = 1000 of bench/bench_foundation.py
(skipped outside a git checkout).
Results go to bench/results/trace.json and bench/results/trace.md (--quick: trace_quick.*;
--out PATH: PATH.json and PATH.md), written by the harness (starvm/benchmarking/).
"""
from __future__ import annotations

import argparse
import io
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

import starvm  # noqa: E402
from starvm.benchmarking import Timing, clock, device_info, document, machine_info, write_results  # noqa: E402
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
    box = []
    rec_s = clock(lambda: box.append(record(text, program, graph=graph, backend="numpy", **opts)))
    trace = box.pop()
    page = tmp / f"{name}.html"
    write_s = clock(lambda: box.append(write_html(trace, page)))
    size = box.pop()
    return {"case": name, "program": program, "graph": spec, "native": bool(opts.get("native")),
            "events": len(trace["events"]), "end": trace["end"],
            "record_s": round(rec_s, 3), "write_s": round(write_s, 3), "bytes": size,
            **dict(zip(("open_s", "drawn_s"), (None if x is None else round(x, 3) for x in (open_seconds(page) or (None, None)))))}


def back_cost(name: str, program: str, spec: str, **opts) -> dict:
    """The debugger's `back` at the last event of a run: a replay from the start."""
    text = (ROOT / program).read_text()
    with Debugger(text, program, graph=generate(spec), out=io.StringIO(), **opts) as d:
        d.start()
        box = []
        cont_s = clock(lambda: box.append(d.cont()))
        end = box.pop()
        d.back()                       # warm: compile once
        d.cont()
        back_s = clock(d.back)
        return {"case": name, "graph": spec, "events": end.event, "continue_s": round(cont_s, 3),
                "back_s": round(back_s, 3)}


HOOK_PARENT = "53e5639^"     # the commit that added the hook to codegen.py, minus one


def hook_cost(quick: bool) -> dict | None:
    """Median seconds of the loop and WARSHALL-C n=1000 with the code generator before the
    hook and now (debug off), alternated; None outside a git checkout."""
    import importlib.util
    import subprocess
    try:
        old_src = subprocess.run(["git", "show", f"{HOOK_PARENT}:starvm/runtime/codegen.py"], cwd=ROOT,
                                 capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    from bench.bench_foundation import LOOP_SOURCE, PROGRAMS, random_digraph
    import starvm.targets.python.codegen as current
    from starvm.runtime import machine as machine_module
    path = Path(tempfile.mkdtemp()) / "codegen_before_hook.py"
    # its `.forall` moved to starvm/targets/numpy (issue 34); it is loaded as a runtime module
    path.write_text(old_src.replace("from .forall import", "from ..targets.numpy.forall import"))
    spec = importlib.util.spec_from_file_location("starvm.runtime.codegen_before_hook", path)
    old = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = old
    spec.loader.exec_module(old)

    class Before(old.CodeGen):
        def __init__(self, *a, debug=False, **k):
            super().__init__(*a, **k)

    n = 200 if quick else 1000
    adj = random_digraph(n)
    jit = {"jit": "off"} if "jit" in machine_module.Machine.__init__.__code__.co_varnames else {}
    times = {"before": {"loop": [], "warshall_c": []}, "after": {"loop": [], "warshall_c": []}}
    saved = machine_module.CodeGen
    try:
        for rep in range(21):
            for label, gen in (("before", Before), ("after", current.CodeGen)):
                machine_module.CodeGen = gen
                m = machine_module.Machine(backend="numpy", **jit)
                m.load(LOOP_SOURCE)
                times[label]["loop"].append(clock(lambda: m.call("SUMLOOP")))
                if rep < 3:
                    m = machine_module.Machine(backend="numpy", **jit)
                    m.load(PROGRAMS["WARSHALL-C"].read_text())
                    table = m.table(adj)
                    times[label]["warshall_c"].append(clock(lambda: m.call("WARSHALL-C", n, table)))
    finally:
        machine_module.CodeGen = saved
    return {"n": n, "runs": {"loop": 21, "warshall_c": 3},
            **{label: {k: {"median_s": round(Timing(v).median_s, 4), "min_s": round(Timing(v).min_s, 4)}
                       for k, v in t.items()} for label, t in times.items()}}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="small sizes (a smoke test)")
    ap.add_argument("--out", default=None, help="results path without suffix (default bench/results/trace[_quick])")
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
    hook = hook_cost(args.quick)
    back = [back_cost(f"WARSHALL-C n={n_w}", "programs/warshall_c.star", w_spec),
            back_cost(f"BFS-adapt n={n_b}, native kernels", "programs/bfs_adapt.star", b_spec, native=True)]
    machine = machine_info()
    result = document("trace", "star trace: recording and replay-page cost (NumPy backend)", machine=machine,
                      device=device_info(starvm.Machine(backend="numpy")), python=machine["python"],
                      quick=args.quick, rows=rows, back=back, open_goal_s=1.0, hook_off_cost=hook)
    out = Path(args.out) if args.out else ROOT / "bench" / "results" / ("trace_quick" if args.quick else "trace")
    lines = ["| case | events | end | record, s | write, s | page, bytes | open in Chromium, s | drawn at, s | open <= 1 s |",
             "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | --- |"]
    for r in rows:
        ok = "—" if r["open_s"] is None else ("yes" if r["open_s"] <= 1.0 else "no")
        lines.append(f"| {r['case']} (`{r['graph']}`) | {r['events']} | {r['end']} | {r['record_s']} | "
                     f"{r['write_s']} | {r['bytes']:,} | {r['open_s'] if r['open_s'] is not None else '—'} | "
                     f"{r['drawn_s'] if r['drawn_s'] is not None else '—'} | {ok} |")
    lines += ["", "The debugger: `continue` from the first to the last event (no breakpoint), and `back` at the "
              "last event (a replay from the start: the globals made anew, the main block run again):", "",
              "| case | events | continue, s | back, s |", "| --- | ---: | ---: | ---: |"]
    lines += [f"| {b['case']} (`{b['graph']}`) | {b['events']} | {b['continue_s']} | {b['back_s']} |" for b in back]
    if hook is not None:
        lines += ["", "The statement hook when neither debugging nor tracing: the code generator before the hook "
                  f"({HOOK_PARENT}) and now, alternated in one process, compiled tier off (seconds, median / min):", "",
                  "| benchmark | before | after |", "| --- | ---: | ---: |"]
        for key, title in (("loop", "for loop, s := s + i, 1 000 000 times"), ("warshall_c", f"WARSHALL-C, n = {hook['n']}")):
            b, a = hook["before"][key], hook["after"][key]
            lines.append(f"| {title} ({hook['runs'][key]} runs) | {b['median_s']} / {b['min_s']} | "
                         f"{a['median_s']} / {a['min_s']} |")
    lines += ["",
              "open = Selenium's `get` of the file (until the load event); drawn at = the page's own clock "
              "(performance.now()) when it has drawn its first event. "
              "`end` = limit: the run was stopped at --max-events (default 200000); the page says so. "
              "Reproduce: `python bench/bench_trace.py`."]
    _, md_path = write_results(result, out.with_suffix(".json"), lines)
    print(md_path.read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
