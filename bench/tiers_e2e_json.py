"""The lines of bench/tiers_e2e_pairs.sh (stdin) as JSON: per program and backend, seconds with
--jit off, --jit on with an empty cache (cold) and again (warm), the exit codes and whether the
outputs were equal; the ratios interpreted / compiled. ``--here``: the lines were timed on this
machine, whose description (starvm.benchmarking.machine_info) goes with them."""
from __future__ import annotations

import json
import re
import sys

from starvm.benchmarking import machine_info

LINE = re.compile(r"^(\S+)(?: (cupy))? scale=(\d+) jit=(off|on) rc=(\d+) ([\d.]+) s")


def parse(lines) -> dict:
    rows: dict = {}
    for line in lines:
        m = LINE.match(line)
        if m:
            prog, gpu, scale, jit, rc, sec = m.groups()
            row = rows.setdefault((prog, gpu or "numpy", int(scale)), {"runs": []})
            row["runs"].append({"jit": jit, "rc": int(rc), "seconds": float(sec)})
        elif line.rstrip().endswith(("same output", "OUTPUT DIFFERS")):
            prog = line.split()[0]
            for (p, _b, _s), row in rows.items():
                if p == prog:
                    row["same_output"] = line.rstrip().endswith("same output")
    out = []
    for (prog, backend, scale), row in rows.items():
        runs = row["runs"]
        off = [r for r in runs if r["jit"] == "off"]
        on = [r for r in runs if r["jit"] == "on"]
        rec = {"program": prog, "backend": backend, "scale": scale, "same_output": row.get("same_output"),
               "off_s": off[0]["seconds"] if off else None, "off_rc": off[0]["rc"] if off else None,
               "on_cold_s": on[0]["seconds"] if on else None, "on_warm_s": on[1]["seconds"] if len(on) > 1 else None,
               "on_rc": [r["rc"] for r in on]}
        if rec["off_s"] and rec["on_warm_s"] and rec["off_rc"] == 0:
            rec["off_over_warm"] = round(rec["off_s"] / rec["on_warm_s"], 2)
        out.append(rec)
    return {"suite": "tiers_e2e_pairs", "results": out}


if __name__ == "__main__":
    doc = parse(sys.stdin)
    if "--here" in sys.argv[1:]:
        doc["machine"] = machine_info(("numba", "scipy", "cupy"))
    json.dump(doc, sys.stdout, indent=1)
    print()
