"""collcert.reference.solvers.maxflow: the ortools and exact engines against each other and networkx.

Every result is checked from first principles in this file: capacity
constraints, conservation at every inner node, and a source side whose cut
capacity equals the flow value (max-flow = min-cut, so both are optimal).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import networkx as nx
import pytest

from collcert.reference.solvers import INF, FlowNetwork, FlowResult, max_flow


def random_network(rng: random.Random, n: int, m: int, cmax: int,
                   inf_share: float = 0.0) -> tuple[list[int], list[int], list[int | None]]:
    tails, heads, caps = [], [], []
    for _ in range(m):
        u, v = rng.sample(range(n), 2)
        tails.append(u)
        heads.append(v)
        caps.append(INF if rng.random() < inf_share else rng.randint(0, cmax))
    return tails, heads, caps


def check_result(n: int, tails: Sequence[int], heads: Sequence[int],
                 caps: Sequence[int | None], s: int, t: int, res: FlowResult) -> None:
    """Feasible, conserved, and certified optimal by its own source side."""
    assert len(res.flow) == len(tails)
    bal = [0] * n
    for u, v, c, f in zip(tails, heads, caps, res.flow):
        assert isinstance(f, int)
        assert f >= 0
        if c is not None:
            assert f <= c
        bal[u] -= f
        bal[v] += f
    for x in range(n):
        if x not in (s, t):
            assert bal[x] == 0, f"flow not conserved at node {x}"
    assert bal[t] == res.value == -bal[s]
    side = res.source_side
    assert s in side and t not in side
    cut = 0
    for u, v, c in zip(tails, heads, caps):
        if u in side and v not in side:
            assert c is not None, "an infinite arc crosses the minimum cut"
            cut += c
    assert cut == res.value


def nx_value(n: int, tails: Sequence[int], heads: Sequence[int],
             caps: Sequence[int | None], s: int, t: int) -> int:
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    for u, v, c in zip(tails, heads, caps):
        if g.has_edge(u, v):
            if c is None or "capacity" not in g[u][v]:
                g[u][v].pop("capacity", None)  # infinite
            else:
                g[u][v]["capacity"] += c
        elif c is None:
            g.add_edge(u, v)  # no capacity attribute = infinite in networkx
        else:
            g.add_edge(u, v, capacity=c)
    value: int = nx.maximum_flow_value(g, s, t)
    return value


@pytest.mark.parametrize("seed", range(40))
def test_engines_agree_with_networkx(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randint(2, 14)
    m = rng.randint(1, 4 * n)
    tails, heads, caps = random_network(rng, n, m, rng.choice([1, 5, 100, 10**6]))
    s, t = rng.sample(range(n), 2)
    expected = nx_value(n, tails, heads, caps, s, t)
    for engine in ("ortools", "exact", "auto"):
        res = FlowNetwork(n, tails, heads, caps, engine=engine).solve(s, t)
        assert res.value == expected, engine
        check_result(n, tails, heads, caps, s, t, res)


@pytest.mark.parametrize("seed", range(15))
def test_infinite_arcs(seed: int) -> None:
    rng = random.Random(1000 + seed)
    n = rng.randint(3, 10)
    tails, heads, caps = random_network(rng, n, 3 * n, 20, inf_share=0.3)
    s, t = rng.sample(range(n), 2)
    # make sure some finite cut exists: every arc into t is finite
    caps = [c if (h != t or c is not None) else 7 for h, c in zip(heads, caps)]
    expected = nx_value(n, tails, heads, caps, s, t)
    for engine in ("ortools", "exact"):
        res = FlowNetwork(n, tails, heads, caps, engine=engine).solve(s, t)
        assert res.value == expected
        check_result(n, tails, heads, caps, s, t, res)


def test_huge_capacities_use_exact_engine() -> None:
    big = 2**100
    tails = [0, 0, 1, 2, 1]
    heads = [1, 2, 3, 3, 2]
    caps: list[int | None] = [big + 1, big, big, big + 5, 3]
    net = FlowNetwork(4, tails, heads, caps)  # auto
    res = net.solve(0, 3)
    assert res.value == 2 * big + 1
    check_result(4, tails, heads, caps, 0, 3, res)
    with pytest.raises(OverflowError):
        FlowNetwork(4, tails, heads, caps, engine="ortools").solve(0, 3)


@pytest.mark.parametrize("seed", range(10))
def test_huge_random_exact_matches_scaled_ortools(seed: int) -> None:
    """Multiplying every capacity by 2**80 multiplies the max-flow by 2**80."""
    rng = random.Random(2000 + seed)
    n = rng.randint(3, 10)
    tails, heads, caps = random_network(rng, n, 3 * n, 50)
    s, t = rng.sample(range(n), 2)
    small = FlowNetwork(n, tails, heads, caps, engine="ortools").solve(s, t)
    big_caps: list[int | None] = [None if c is None else c * 2**80 for c in caps]
    big = FlowNetwork(n, tails, heads, big_caps).solve(s, t)
    assert big.value == small.value * 2**80
    check_result(n, tails, heads, big_caps, s, t, big)


def test_parallel_arcs() -> None:
    tails = [0, 0, 0, 1, 1]
    heads = [1, 1, 1, 2, 2]
    caps: list[int | None] = [1, 2, 3, 4, 0]
    for engine in ("ortools", "exact"):
        res = FlowNetwork(3, tails, heads, caps, engine=engine).solve(0, 2)
        assert res.value == 4
        check_result(3, tails, heads, caps, 0, 2, res)
    mf = max_flow({("a", "b"): 5, ("b", "c"): 2, ("a", "c"): 1}, "a", "c")
    assert mf.value == 3
    assert mf.source_side in (frozenset({"a", "b"}), frozenset({"a"}))


def test_disconnected_and_isolated() -> None:
    for engine in ("ortools", "exact"):
        net = FlowNetwork(5, [0, 1], [1, 0], [3, 3], engine=engine)
        res = net.solve(0, 4)  # node 4 has no arcs
        assert res.value == 0
        assert 0 in res.source_side and 4 not in res.source_side
        net0 = FlowNetwork(3, [], [], [], engine=engine)
        assert net0.solve(0, 2).value == 0


def test_set_capacity_and_add_arc_resolve() -> None:
    for engine in ("ortools", "exact"):
        net = FlowNetwork(3, [0, 1], [1, 2], [5, 2], engine=engine)
        assert net.solve(0, 2).value == 2
        net.set_capacity(1, 4)
        assert net.solve(0, 2).value == 4
        a = net.add_arc(0, 2, 10)
        assert net.solve(0, 2).value == 14
        net.set_capacity(a, INF)
        net.set_capacity(1, 0)
        res = net.solve(2, 0)
        assert res.value == 0
        assert net.solves == 4


def test_max_flow_dict_wrapper_matches_networkx() -> None:
    rng = random.Random(7)
    for _ in range(10):
        n = rng.randint(3, 9)
        caps = {}
        for _ in range(3 * n):
            u, v = rng.sample(range(n), 2)
            caps[(f"n{u}", f"n{v}")] = rng.randint(0, 9)
        g = nx.DiGraph()
        g.add_nodes_from(f"n{i}" for i in range(n))
        for (u, v), c in caps.items():
            g.add_edge(u, v, capacity=c)
        mf = max_flow(caps, "n0", "n1")
        assert mf.value == nx.maximum_flow_value(g, "n0", "n1")
        assert set(mf.flow) == set(caps)
        assert sum(c for (u, v), c in caps.items()
                   if u in mf.source_side and v not in mf.source_side) == mf.value


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="engine"):
        FlowNetwork(2, [0], [1], [1], engine="gurobi")
    with pytest.raises(ValueError, match="negative"):
        FlowNetwork(2, [0], [1], [-1])
    with pytest.raises(ValueError, match="same length"):
        FlowNetwork(2, [0], [1, 0], [1])
    with pytest.raises(ValueError, match="differ"):
        FlowNetwork(2, [0], [1], [1]).solve(1, 1)


def test_source_side_survives_a_later_solve() -> None:
    """A FlowResult must describe its own solve, even after the network is solved again.

    The ortools engine computes ``source_side`` lazily from the shared solver,
    so reading it after a second ``solve`` returns the second solve's cut.
    Exposes that bug (fix: compute the cut eagerly in ``_solve_ortools``).
    """
    tails, heads = [0, 0, 1, 2], [1, 2, 3, 3]
    caps: list[int | None] = [1, 5, 5, 1]
    for engine in ("exact", "ortools"):
        net = FlowNetwork(4, tails, heads, caps, engine=engine)
        first = net.solve(0, 1)  # only arc 0->1 enters node 1: value 1, side {0, 2, 3}
        net.solve(0, 3)
        check_result(4, tails, heads, caps, 0, 1, first)


@pytest.mark.parametrize("engine", ["ortools", "exact"])
def test_zero_flow_cut_is_everything_the_source_reaches(engine: str) -> None:
    """A sink with no arc at all: the flow is 0 and the source side of the minimum
    cut is every node the source reaches (OR-Tools never sees that sink; the
    answer used to be {source})."""
    net = FlowNetwork(5, [0, 1, 2], [1, 2, 0], [3, 4, 5], engine=engine)
    res = net.solve(0, 4)
    assert res.value == 0
    assert res.source_side == frozenset({0, 1, 2})
