"""Steady-state broadcast under the one-port model (Legrand et al. 2003): model, LPs, schedules.

Expected values come from the paper (Fig. 1 / §3.1: graph 1, best tree 2/3,
best DAG 4/5, tree of Fig. 3 1/2; Fig. 5: q·n = 4, 1, 3, 4, 4 with q = 5), from
the digest's hand derivations (the SSB solution of Fig. 1, unique by the port
argument in test_fig1_ssb_n_is_the_digests), or from an independent
formulation (every broadcast tree, solved by Z3: collcert.fuzz.steady_brute).
"""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

from collcert.certify.broadcast import check_steady_broadcast
from collcert.reference.broadcast import (
    OnePortPlatform,
    best_dag,
    best_tree,
    paper_fig1,
    paper_fig5,
    random_platform,
    steady_broadcast,
)
from collcert.reference.broadcast.steady_lp import (
    solve_ssb,
    solve_ssb_flows,
    solve_ssbpdag,
    tree_throughput,
)
from collcert.reference.model import Topology, TopologyError
from collcert.reference.solvers import colour

F = Fraction


def one_port(links: list[list[object]], nodes: list[str] | None = None) -> dict[str, object]:
    names = nodes or sorted({str(x) for link in links for x in link[:2]})
    return {"port_model": "one-port", "compute_nodes": names,
            "links": [{"src": u, "dst": v, "cost": c} for u, v, c in links]}


# --------------------------------------------------------------- the model
def test_fig1_platform_reads_back_and_hashes() -> None:
    p = paper_fig1()
    q = OnePortPlatform.from_json(json.dumps(p.to_json()))
    assert q == p and q.content_hash() == p.content_hash()
    assert p.cost[("1", "3")] == F(1, 2)


@pytest.mark.parametrize("cost, words", [
    (0, "must be positive"), ("-3/4", "must be positive"), ("inf", "leave the link out"),
    ("NaN", "not a finite number"), ("1/0", "divides by zero"), (True, "boolean"),
    (float("inf"), "leave the link out"), ("abc", "not a number"),
])
def test_bad_costs_name_the_link(cost: object, words: str) -> None:
    with pytest.raises(TopologyError) as exc:
        OnePortPlatform.from_json(one_port([["s", "a", cost]]))
    assert words in str(exc.value) and "links[0]" in str(exc.value)


def test_json_nan_and_infinity_literals_are_refused(tmp_path) -> None:  # type: ignore[no-untyped-def]
    for literal in ("NaN", "Infinity"):
        path = tmp_path / "p.json"
        path.write_text('{"port_model": "one-port", "compute_nodes": ["s", "a"],\n'
                        f' "links": [{{"src": "s", "dst": "a", "cost": {literal}}}]}}')
        with pytest.raises(TopologyError, match=r"links\[0\] \(line 2\).*not a finite"):
            OnePortPlatform.from_json(path)


def test_mixed_up_files_say_which_they_gave() -> None:
    with pytest.raises(TopologyError, match="gives a 'capacity'.*replace 'capacity' by 'cost'"):
        OnePortPlatform.from_json(one_port([["s", "a", 1]]) | {
            "links": [{"src": "s", "dst": "a", "capacity": 1}]})
    bandwidth = {"compute_nodes": ["a", "b"],
                 "links": [{"src": "a", "dst": "b", "cost": 1}, {"src": "b", "dst": "a",
                                                                 "cost": 1}]}
    with pytest.raises(TopologyError, match="gives a 'cost'.*one-port"):
        Topology.from_json(bandwidth)
    with pytest.raises(TopologyError, match="collcert broadcast-steady"):
        Topology.from_json(paper_fig1().to_json())
    with pytest.raises(TopologyError, match="does not say \"port_model\""):
        OnePortPlatform.from_json({"compute_nodes": ["a", "b"], "links": [["a", "b", 1]]})


def test_source_errors_and_unreachable_nodes() -> None:
    p = OnePortPlatform.from_json(one_port([["s", "a", 1], ["b", "c", 2]], ["s", "a", "b", "c"]))
    with pytest.raises(TopologyError, match=r"2 nodes cannot be reached.*'b', 'c'.*throughput "
                                            r"is 0"):
        solve_ssb(p, "s")
    with pytest.raises(TopologyError, match="source 'x' is not a node"):
        solve_ssb(paper_fig1(), "x")


def test_duplicate_link_and_switches_refused() -> None:
    with pytest.raises(TopologyError, match="again"):
        OnePortPlatform.from_json(one_port([["s", "a", 1], ["s", "a", 2]]))
    with pytest.raises(TopologyError, match="switch_nodes.*every node is a processor"):
        OnePortPlatform.from_json(one_port([["s", "a", 1]]) | {"switch_nodes": ["w"]})


# ------------------------------------------------------------ Fig. 1 / Fig. 5
def test_fig1_tree_dag_graph_gap() -> None:
    p = paper_fig1()
    assert solve_ssb(p, "s").throughput == 1
    tp, edges = best_tree(p, "s")
    assert tp == F(2, 3) and set(edges) in (
        {("s", "1"), ("1", "2"), ("1", "3"), ("2", "4")},
        {("s", "2"), ("2", "1"), ("1", "3"), ("2", "4")})
    assert tree_throughput(p, [("s", "1"), ("s", "2"), ("1", "3"), ("2", "4")]) == F(1, 2)
    dag_tp, dag_links = best_dag(p, "s")
    assert dag_tp == F(4, 5) and len(dag_links) == 5


def test_fig1_ssb_n_is_the_digests() -> None:
    # Unique: s sends n_s1 + n_s2 ≤ 1; 1 sends n_12 + n_13/2 ≤ 1 with n_13 ≥ 1 (3's only
    # parent), so n_12 ≤ 1/2, likewise n_21 ≤ 1/2; 1 must get 1: n_s1 ≥ 1/2, n_s2 ≥ 1/2.
    sol = solve_ssb(paper_fig1(), "s")
    half = F(1, 2)
    assert sol.T == 1 and sol.n == {("s", "1"): half, ("s", "2"): half, ("1", "2"): half,
                                    ("2", "1"): half, ("1", "3"): 1, ("2", "4"): 1}
    assert sol.N == 2


def test_fig5_dag_lp_matches_the_paper() -> None:
    sol = solve_ssbpdag(paper_fig5(), "s")
    assert sol.throughput == F(4, 5)
    q_n = {e: r * 5 for e, r in sol.stats["rate_n"].items()}
    assert q_n == {("s", "1"): 4, ("s", "2"): 1, ("1", "2"): 3, ("1", "3"): 4, ("2", "4"): 4}
    assert solve_ssb(paper_fig5(), "s").T == F(5, 4)


def test_dag_lp_refuses_a_cycle_naming_it() -> None:
    with pytest.raises(TopologyError, match=r"cycle '1' -> '2' -> '1'|cycle '2' -> '1' -> '2'"):
        solve_ssbpdag(paper_fig1(), "s")


def test_erratum_literal_ssb_accepts_circulations() -> None:
    # s -> i costs 10; s <-> a and i <-> b cost 1. Node i can only hear from s (b hears
    # only from i) and a only from s, so s spends 10 + 1 per message: T* = 11. Read
    # literally, (7)-(9) let x_i run s->a->s and i->b->i, and the LP claims T* = 1.
    p = OnePortPlatform.from_json(one_port(
        [["s", "i", 10], ["s", "a", 1], ["a", "s", 1], ["i", "b", 1], ["b", "i", 1]],
        ["s", "a", "i", "b"]))
    assert solve_ssb_flows(p, "s", literal=True) == 1
    assert solve_ssb_flows(p, "s") == 11 == solve_ssb(p, "s").T


# ----------------------------------------------------- independent cross-checks
@pytest.mark.parametrize("seed", range(12))
def test_random_tiny_platforms_match_every_tree_by_z3(seed: int) -> None:
    pytest.importorskip("z3")
    from collcert.fuzz.steady_brute import best_tree_rate

    p = random_platform(5, seed, degree=2)
    z3_rate, trees = best_tree_rate(p.to_json(), "p0")
    assert trees >= 1
    sol = solve_ssb(p, "p0")
    assert sol.throughput == z3_rate == 1 / solve_ssb_flows(p, "p0")


@pytest.mark.parametrize("seed", range(4))
def test_random_schedules_pass_the_event_checker(seed: int) -> None:
    p = random_platform(9, seed)
    for dag in (False, True):
        if dag:
            q = p.subplatform([(u, v) for u, v in p.cost if int(u[1:]) < int(v[1:])])
            try:
                q.check_source("p0")
            except TopologyError:
                continue
        else:
            q = p
        res = steady_broadcast(q, "p0", dag=dag)
        doc = json.loads(json.dumps(res.to_json()))
        v = check_steady_broadcast(json.loads(json.dumps(q.to_json())), doc)
        assert v.ok, v.all_reasons()
        assert v.facts["measured_throughput"] == res.throughput
        if dag:  # on a DAG both methods give the same optimum
            assert solve_ssb(q, "p0").T == res.T_star


def test_tidy_lp_keeps_the_optimum_and_shrinks_n() -> None:
    p = random_platform(8, 3)
    a, b = solve_ssb(p, "p0", tidy=False), solve_ssb(p, "p0")
    assert a.T == b.T
    cost = sum(c * b.n[e] for e, c in p.cost.items())
    assert cost <= sum(c * a.n[e] for e, c in p.cost.items())
    assert b.N <= a.N


# ----------------------------------------------------------------- colouring
@pytest.mark.parametrize("seed", range(40))
def test_edge_colouring_covers_exactly_with_max_degree(seed: int) -> None:
    import random

    rng = random.Random(seed)
    nodes = range(rng.randint(2, 7))
    w = {(u, v): rng.randint(1, 9) for u in nodes for v in nodes
         if u != v and rng.random() < 0.5}
    out = colour(w)
    covered: dict[tuple[int, int], int] = {}
    for mu, edges in out:
        assert mu > 0 and edges
        assert len({u for u, _ in edges}) == len(edges) == len({v for _, v in edges})
        for e in edges:
            covered[e] = covered.get(e, 0) + mu
    assert covered == w
    deg: dict[tuple[str, int], int] = {}
    for (u, v), x in w.items():
        deg[("out", u)] = deg.get(("out", u), 0) + x
        deg[("in", v)] = deg.get(("in", v), 0) + x
    assert sum(mu for mu, _ in out) == max(deg.values(), default=0)


def test_fig1_period_is_the_digests() -> None:
    res = steady_broadcast(paper_fig1(), "s")
    sc = res.schedule
    assert (sc.period, sc.messages_per_period, sc.N) == (2, 2, 2)
    assert sorted(lam for lam, _ in sc.trees) == [1, 1]
    assert sorted(sorted(es) for _, es in sc.matchings) == [
        sorted([("s", "1"), ("1", "2"), ("2", "4")]), sorted([("s", "2"), ("2", "1"), ("1", "3")])]
