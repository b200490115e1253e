#!/bin/bash
# Whole programs on the two tiers: `star run` of each shipped graph program, process start to
# exit, with --jit off (the interpreter, natives on), then --jit on with an empty compiled-code
# cache (cold: compiling included) and again (warm), each program on its own pair of cores
# (taskset: a 2-core machine per program, so a 16-core host runs 8 at once), outputs compared.
#   bash bench/tiers_e2e_pairs.sh [> bench/results/tiers_e2e_<machine>.txt]
# Environment: SCALE (R-MAT scale, 14), PROGS, TMO (seconds a run may take, 170), OUT (work folder).
scale=${SCALE:-14}; progs=${PROGS:-"bfs bfs_adapt mst_boruvka dijkstra mst_kruskal mst_prim components bellman_ford_adapt"}
out=${OUT:-$(mktemp -d)}; mkdir -p "$out"; i=0
echo "# tiers_e2e_pairs: star run --generate rmat:scale=$scale, --jit off / on cold / on warm, 2 cores a program"
echo "# $(date -u +%F) commit $(git rev-parse --short HEAD 2>/dev/null) on $(nproc) cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
echo "# $(python3 -c 'import sys, numpy, numba; print("python", sys.version.split()[0], "numpy", numpy.__version__, "numba", numba.__version__)')"
for p in $progs; do
  c0=$((2 * i)); c1=$((2 * i + 1)); i=$((i + 1))
  ( cache=$(mktemp -d)
    for mode in off on on; do
      t0=$(date +%s.%N)
      STARVM_JIT_CACHE=$cache timeout "${TMO:-170}" taskset -c $c0,$c1 python3 -m starvm run programs/$p.star \
          --generate rmat:scale=$scale --jit $mode > "$out/$p.$mode.out" 2> "$out/$p.$mode.err"
      rc=$?; t1=$(date +%s.%N)
      echo "$p scale=$scale jit=$mode rc=$rc $(python3 -c "print(f'{$t1 - $t0:.2f}')") s" >> "$out/$p.times"
      [ $mode = off ] && cp "$out/$p.off.out" "$out/$p.ref"
    done
    cmp -s "$out/$p.ref" "$out/$p.on.out" && echo "$p same output" >> "$out/$p.times" || echo "$p OUTPUT DIFFERS" >> "$out/$p.times"
  ) &
done
wait
cat "$out"/*.times
# the times as JSON (bench/results/tiers_e2e_<machine>.json with RESULTS=that path)
[ -n "$RESULTS" ] && cat "$out"/*.times | PYTHONPATH=.:$PYTHONPATH python3 bench/tiers_e2e_json.py --here > "$RESULTS"
