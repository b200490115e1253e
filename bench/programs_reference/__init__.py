"""SciPy/NumPy scripts doing the jobs of the shipped Star programs end to end (generate the graph,
compute, print what the program prints): the other side of bench/bench_programs.py.

    python -m bench.programs_reference PROGRAM --generate SPEC [--param source=N]
"""
