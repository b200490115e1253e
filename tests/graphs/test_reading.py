"""How a program reads its graph: GRAPH_READING in the program, Machine(directed=...) and
star run --directed / --undirected from the user (who wins), GRAPH_UNDIRECTED, and the
checks on the statement."""
from __future__ import annotations

import io

import pytest

import starvm
import starvm.graphs as sg
from starvm.errors import StarTypeError

ONE_WAY = sg.Graph(4, [1, 2, 3], [2, 3, 3], [5, 1, 2])      # 1 -> 2, 2 -> 3 and a loop at 3

PROGRAM = """var L, R: table(GRAPH_M, GRAPH_VBITS); W: table(GRAPH_M, GRAPH_WBITS);
begin
  {statement}
  GRAPH_EDGES(L, R, W);
  writeln(GRAPH_UNDIRECTED, ' ', GRAPH_M, ' ', NROWS(L));
end.
"""


def output(backend, statement: str, directed=None, graph=ONE_WAY) -> str:
    out = io.StringIO()
    starvm.Machine(backend=backend, out=out, graph=graph, directed=directed).run(
        PROGRAM.format(statement=statement), "r.star")
    return out.getvalue().strip()


@pytest.mark.parametrize("statement,directed,want", [
    ("", None, "false 3 3"),                                   # neither: the arcs as given
    ("GRAPH_READING('undirected');", None, "true 5 5"),         # the program's reading, sized at load
    ("GRAPH_READING('Directed');", None, "false 3 3"),
    ("GRAPH_READING('undirected');", True, "false 3 3"),        # the user wins
    ("GRAPH_READING('directed');", False, "true 5 5"),
    ("", False, "true 5 5"),
])
def test_who_decides_the_reading(backend, statement, directed, want):
    assert output(backend, statement, directed) == want


def test_undirected_reading_of_a_symmetric_graph_changes_nothing(backend):
    karate = sg.bundled("karate")
    assert output(backend, "", False, karate) == f"true {karate.m} {karate.m}"


@pytest.mark.parametrize("src,message", [
    ("begin GRAPH_READING('sideways') end.", "takes 'directed' or 'undirected'"),
    ("begin GRAPH_READING(1) end.", "takes 'directed' or 'undirected'"),
    ("begin GRAPH_READING('directed'); GRAPH_READING('undirected') end.", "names one graph reading"),
    ("var b: boolean; begin b := GRAPH_READING('directed') end.", "is a statement"),
])
def test_reading_statement_is_checked(src, message):
    with pytest.raises(StarTypeError, match=message):
        starvm.Machine(out=io.StringIO(), graph=ONE_WAY).run(src, "r.star")


def test_reading_without_a_graph_is_the_usual_error():
    with pytest.raises(starvm.StarError, match="no graph"):
        starvm.Machine(out=io.StringIO()).run("begin GRAPH_READING('undirected'); writeln(GRAPH_UNDIRECTED) end.",
                                              "r.star")


def test_weight_matrix_of_distinct_arcs_needs_no_sort():
    """A generator's graph says its arcs are distinct (meta['distinct_arcs']): its CSR is built
    without looking for repeats and equals the one built with the lexsort; a graph whose
    undirected reading adds reverse arcs loses the claim (they may repeat arcs)."""
    import dataclasses
    from starvm.graphs import gnp, rmat
    for g in (rmat(8, 8, seed=5), gnp(60, 0.1, seed=2, directed=True), rmat(6, 4, seed=1, directed=True)):
        assert g.meta.get("distinct_arcs")
        plain = dataclasses.replace(g, meta={})
        fast, slow = g.weight_matrix(), plain.weight_matrix()
        assert (fast != slow).nnz == 0 and fast.nnz == slow.nnz == g.m
    d = gnp(40, 0.3, seed=7, directed=True)
    u = d.undirected()
    assert u.m > d.m and not u.meta.get("distinct_arcs")
    assert (u.weight_matrix() != dataclasses.replace(u, meta={}).weight_matrix()).nnz == 0
