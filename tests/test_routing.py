"""Routing MSCCL traffic: column generation over paths, its certificate and its checker."""

from __future__ import annotations

import random
from fractions import Fraction
from typing import Any

import pytest

from collcert import platforms
from collcert.auditing import routing
from collcert.certify.solvers import check_routing
from collcert.commands._common import load_topology

F = Fraction


def _demands(topo: Any, seed: int, pairs: int) -> dict[tuple[Any, Any], Fraction]:
    rng = random.Random(seed)
    nodes = list(topo.compute_nodes)
    out: dict[tuple[Any, Any], Fraction] = {}
    while len(out) < pairs:
        p, q = rng.sample(nodes, 2)
        out[(p, q)] = F(rng.randint(1, 6), rng.randint(1, 4))
    return out


@pytest.mark.parametrize("name,seed,pairs", [
    ("two_box_example", 1, 5), ("ring:6", 2, 8), ("fat_tree:4", 3, 20),
    ("dgx_a100:2", 4, 30), ("torus:3x3", 5, 15), ("mi250:1", 6, 25),
])
def test_paths_reach_the_node_arc_lp_optimum(name: str, seed: int, pairs: int) -> None:
    topo = load_topology(name)
    demands = _demands(topo, seed, pairs)
    fixed: dict[tuple[Any, Any], Fraction] = {}
    rest: dict[tuple[Any, Any], Fraction] = {}
    for e, d in demands.items():
        (fixed if e in topo.capacity else rest)[e] = d
    if not rest:
        pytest.skip("every pair linked")
    by_paths = routing._by_paths(topo, fixed, rest)
    assert by_paths is not None
    node_arc = routing._min_congestion(topo, fixed, rest)
    assert by_paths.time == by_paths.lower == node_arc.time == node_arc.lower
    assert by_paths.verdict is not None and by_paths.verdict.ok


def test_route_falls_back_to_the_node_arc_lp(monkeypatch: pytest.MonkeyPatch) -> None:
    t = platforms.two_box_example()
    demands = {("c1.1", "c2.1"): F(1), ("c1.2", "c2.2"): F(1, 2)}
    monkeypatch.setattr(routing, "MAX_ROUNDS", 0)
    r = routing.route(t, demands)
    assert r.time == r.lower == F(3, 8) and "GLOP" in r.how


def test_check_routing_rejects_wrong_flows_and_bounds() -> None:
    cap = {("a", "b"): F(1), ("b", "c"): F(1), ("a", "c"): F(1), ("c", "a"): F(1)}
    demands = {("a", "c"): F(2)}
    good = {("a", "c"): [(("a", "c"), F(1)), (("a", "b", "c"), F(1))]}
    cut = {("a", "b"): F(1, 2), ("a", "c"): F(1, 2)}  # the cut {a}: 2 units over capacity 2
    v = check_routing(cap, demands, {}, good, cut)
    assert v.ok and v.facts["time_per_unit"] == v.facts["lower"] == 1
    # all on the direct link: time 2, and the same lengths still prove only 1
    v = check_routing(cap, demands, {}, {("a", "c"): [(("a", "c"), F(2))]}, cut)
    assert v.ok and v.facts["time_per_unit"] == 2 and v.facts["lower"] == 1
    # fixed traffic counts in the load and in the bound
    v = check_routing(cap, demands, {("a", "c"): F(1)}, good, cut)
    assert v.ok and v.facts["time_per_unit"] == 2 and v.facts["lower"] == F(3, 2)
    bad = [
        ({("a", "c"): [(("a", "c"), F(1))]}, cut, "its paths carry 1"),
        ({("a", "c"): [(("a", "b", "a", "c"), F(2))]}, cut, "b -> a, not a link"),
        ({("a", "c"): [(("b", "c"), F(2))]}, cut, "not a positive flow"),
        ({("a", "c"): [(("a", "c"), F(3)), (("a", "b", "c"), F(-1))]}, cut,
         "not a positive flow"),
        ({**good, ("c", "a"): [(("c", "a"), F(1))]}, cut, "not a demand"),
        (good, {("a", "b"): F(-1), ("a", "c"): F(1)}, "negative"),
        (good, {}, "all zero"),
    ]
    for flows, lengths, why in bad:
        v = check_routing(cap, demands, {}, flows, lengths)
        assert not v.ok and any(why in r for r in v.reasons), (why, v.reasons)
