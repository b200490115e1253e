"""The floors of issue 31's benchmark: the associative algorithms of the shipped graph programs
written by hand in Numba on the bit-sliced layout (floors.py), run end to end like the SciPy
reference (`python -m bench.programs_floor PROGRAM --generate SPEC`), printing the same lines."""

# the programs with a floor (bench/bench_programs.py reads this without importing Numba)
PROGRAMS = ("bellman_ford", "bellman_ford_adapt", "bfs", "bfs_adapt", "components", "dijkstra",
            "mst_boruvka", "mst_kruskal", "mst_prim")
