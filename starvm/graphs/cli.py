"""The `star run` options that give a program its graph: --graph FILE [--graph-format FMT]
[--weights MODE], --generate SPEC, and how to read it: --directed / --undirected
(docs/stdlib.md, "Graph input")."""
from __future__ import annotations

from .io import FORMATS
from .weights import MODES, parse_mode


def add_arguments(run) -> None:
    g = run.add_mutually_exclusive_group()
    g.add_argument("--graph", metavar="FILE",
                   help="the graph the program reads with GRAPH_N, GRAPH_ADJ, GRAPH_EDGES, ... "
                        "(.mtx Matrix Market, .gr DIMACS, .npy matrix, else a 'U V [W]' edge list)")
    g.add_argument("--generate", metavar="SPEC",
                   help="a generated graph instead: rmat:scale=10,ef=16,seed=1 | gnp:n=100,p=0.05,seed=1 | "
                        "ssca2:n=64,clique=8,p=0.5,seed=1 (also wmax=W, directed=1)")
    run.add_argument("--graph-format", choices=list(FORMATS) + ["gr"], metavar="FMT",
                     help=f"the format of --graph FILE ({', '.join(FORMATS)}; default: from the suffix)")
    run.add_argument("--weights", metavar="MODE",
                     help=f"how the weights of --graph FILE become integers: {' | '.join(MODES)} (default auto: "
                          "integers as written; a file with other weights loads for programs that do not "
                          "read weights, and one that does stops with the first bad weight's file:line)")
    r = run.add_mutually_exclusive_group()
    r.add_argument("--directed", dest="directed", action="store_const", const=True, default=None,
                   help="read the graph's arcs as given (overrides the program's GRAPH_READING)")
    r.add_argument("--undirected", dest="directed", action="store_const", const=False,
                   help="read every arc u v as an undirected edge: both arcs u -> v and v -> u")


def reading_from_args(args) -> bool | None:
    """True for --directed, False for --undirected, None when neither was given."""
    return getattr(args, "directed", None)


def graph_from_args(args, usage_error):
    """The Graph named on the command line, or None. A file that cannot be opened or a bad
    spec is a usage error; a malformed file raises GraphFileError (a StarError)."""
    from . import generate, load
    weights = getattr(args, "weights", None)
    try:
        mode = parse_mode(weights, "auto")
    except ValueError as e:
        raise usage_error(f"--weights: {e}") from None
    if weights is not None and not getattr(args, "graph", None):
        raise usage_error("--weights needs --graph FILE")
    if getattr(args, "generate", None):
        try:
            return generate(args.generate)
        except ValueError as e:
            raise usage_error(f"--generate: {e}") from None
    if getattr(args, "graph", None):
        try:
            return load(args.graph, args.graph_format, weights=mode)
        except OSError as e:
            raise usage_error(f"cannot read {args.graph}: {e.strerror or e}") from None
        except ValueError as e:
            raise usage_error(f"--graph-format: {e}") from None
    if getattr(args, "graph_format", None):
        raise usage_error("--graph-format needs --graph FILE")
    return None
