"""``collcert.optimum`` / ``collcert.schedule`` on networkx graphs (collcert.graphs)."""

from __future__ import annotations

from fractions import Fraction

import networkx as nx
import pytest

import collcert
from collcert import TopologyError, platforms


def star(attr: str = "capacity", cap: object = 10) -> nx.DiGraph:
    g = nx.DiGraph()
    for leaf in ("a", "b", "c"):
        g.add_edge(leaf, "s", **{attr: cap})
        g.add_edge("s", leaf, **{attr: cap})
    return g


def test_optimum_of_a_digraph_with_a_named_capacity() -> None:
    # 3 GPUs on a switch at 10 each way: each receives 2/3 of M at 10, algbw = 15
    opt = collcert.optimum(star("bw"), "allgather", compute_nodes=["a", "b", "c"],
                           capacity="bw")
    assert opt.algbw == 15 and opt.topology.switch_nodes == ("s",)
    with pytest.raises(TopologyError, match="has no 'capacity' attribute"):
        collcert.optimum(star("bw"), compute_nodes=["a", "b", "c"])


def test_floats_are_read_as_the_decimals_they_print_as() -> None:
    opt = collcert.optimum(star(cap=0.1), compute_nodes=["a", "b", "c"])
    assert opt.algbw == Fraction(3, 20)  # 3/2 x 1/10, not a binary fraction


def test_undirected_and_multigraphs() -> None:
    g = nx.Graph()
    g.add_edge(0, 1, capacity=2)
    g.add_edge(1, 2, capacity=2)
    g.add_edge(2, 0, capacity=2)
    ring = collcert.optimum(g)  # every node a compute node, both directions
    assert ring.algbw == collcert.optimum(platforms.ring(3, 2)).algbw
    m = nx.MultiDiGraph()
    for u, v in ((0, 1), (1, 0)):
        m.add_edge(u, v, capacity=1)
        m.add_edge(u, v, capacity=2)  # parallel links add up: 3 each way
    assert collcert.optimum(m).algbw == 6


def test_round_trip_keeps_compute_and_switch_nodes() -> None:
    t = platforms.dgx_a100(1)
    g = t.to_networkx()  # node attribute kind = compute / switch
    assert collcert.optimum(g).algbw == collcert.optimum(t).algbw
    assert collcert.as_topology(g) == t


def test_schedule_of_a_graph_is_certified() -> None:
    from collcert.certify.forestcoll import check_schedule

    s = collcert.schedule(star("bw"), "allgather", compute_nodes=["a", "b", "c"],
                          capacity="bw")
    assert s.time_per_unit == Fraction(1, 15)
    doc = s.to_json()
    assert check_schedule(s.topology.to_json(), doc).ok
    assert "schedule" in collcert.__all__ and "optimum" in collcert.__all__


def test_misuse_is_explained() -> None:
    with pytest.raises(TopologyError, match="apply to a networkx graph"):
        collcert.optimum(platforms.ring(4), compute_nodes=[0, 1])
    with pytest.raises(TypeError, match="networkx graph"):
        collcert.optimum({"a": 1})
    with pytest.raises(TopologyError, match="not a node of the graph"):
        collcert.optimum(star(), compute_nodes=["a", "zz"])
