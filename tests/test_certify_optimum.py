"""Checkers 1 and 2: cut witnesses and the optimum certificates of every collective.

Expected values come from the project's verified list (README of the task /
docs: 2-box DGX A100 1/x* = 3/65, k = 13, U = 3/5, algbw 1040/3, fixed k = 1
algbw 2400/7; two_box_example 1/x* = 1, broadcast algbw 4 — Zhao & Krishnamurthy 2023, Fig. 1)
or are derived in comments from the topology. Every certificate is also
corrupted in a specific way and must then be rejected with a specific reason.
"""

from __future__ import annotations

import copy
from fractions import Fraction
from typing import Any

import pytest

import collcert
from collcert import platforms
from collcert.certify.forestcoll import check_optimum, cuts
from collcert.certify.model import InputError, Topo, number


def cert(topology: Any, **kw: Any) -> dict[str, Any]:
    return collcert.optimum(topology, **kw).certificate()


@pytest.fixture(scope="module")
def a100() -> Any:
    return platforms.dgx_a100(2)


@pytest.fixture(scope="module")
def a100_cert(a100: Any) -> dict[str, Any]:
    return cert(a100)


def test_numbers_are_exact() -> None:
    assert number("3/65", "x") == Fraction(3, 65)
    assert number("12.5", "x") == Fraction(25, 2)
    assert number("1e3", "x") == 1000
    assert number(7, "x") == 7
    for bad in (0.1, "abc", "1/0", True, None, "nan"):
        with pytest.raises(InputError):
            number(bad, "x")


def test_cut_ratio_two_box_example() -> None:
    # Zhao & Krishnamurthy 2023, Fig. 1: box 1 with its switch w1: 4 nodes, B⁺ = 4 links to w0 of capacity 1
    topo = Topo(platforms.two_box_example().to_json())
    s = frozenset(["c1.1", "c1.2", "c1.3", "c1.4", "w1"])
    v = cuts.allgather_cut(topo, s, Fraction(1))
    assert v.ok and v.facts["ratio"] == 1
    v = cuts.allgather_cut(topo, s, Fraction(1, 2))
    assert not v.ok and "4/4 = 1, not the claimed 1/x* = 1/2" in v.reasons[0]
    everything = frozenset(topo.nodes)
    assert not cuts.allgather_cut(topo, everything).ok


def test_rooted_cut_rules() -> None:
    topo = Topo(platforms.two_box_example().to_json())
    s = frozenset(["c1.1", "c1.2", "c1.3", "c1.4", "w1"])
    assert cuts.rooted_cut(topo, s, "c1.1", False, Fraction(4)).ok
    v = cuts.rooted_cut(topo, s, "c2.1", False, Fraction(4))
    assert not v.ok and "does not contain the root 'c2.1'" in v.reasons[0]
    v = cuts.rooted_cut(topo, s, "c2.1", True, Fraction(5))
    assert not v.ok and "B⁺(S) = 4, not the claimed algbw 5" in v.reasons[0]


@pytest.mark.parametrize("kw, algbw", [
    ({}, Fraction(1040, 3)),
    ({"collective": "reduce-scatter"}, Fraction(1040, 3)),
    ({"fixed_k": 1}, Fraction(2400, 7)),
    ({"collective": "allreduce"}, Fraction(520, 3)),  # RS + AG: 2 · (3/65) / 16 per unit
])
def test_a100_certificates(a100: Any, kw: dict[str, Any], algbw: Fraction) -> None:
    v = check_optimum(a100.to_json(), cert(a100, **kw))
    assert v.ok, v.all_reasons()
    assert v.facts["algbw"] == algbw


def test_a100_k_and_u(a100: Any, a100_cert: dict[str, Any]) -> None:
    v = check_optimum(a100.to_json(), a100_cert)
    assert (v.facts["inv_x"], v.facts["k"], v.facts["U"]) == (Fraction(3, 65), 13, Fraction(3, 5))


@pytest.mark.parametrize("coll, root", [("broadcast", "c1.1"), ("reduce", "c2.4")])
def test_two_box_rooted(coll: str, root: str) -> None:
    t = platforms.two_box_example()
    v = check_optimum(t.to_json(), cert(t, collective=coll, root=root))
    assert v.ok, v.all_reasons()
    assert v.facts["algbw"] == 4


def test_mi250_fixed_k() -> None:
    t = platforms.mi250(2)
    for k, algbw in ((1, 320), (2, Fraction(1024, 3)), (3, Fraction(2400, 7))):
        v = check_optimum(t.to_json(), cert(t, fixed_k=k))
        assert v.ok and v.facts["algbw"] == algbw, (k, v.all_reasons())


def test_weighted_allgather() -> None:
    t = platforms.ring(4)
    c = cert(t, weights=[3, 1, 1, 1])
    c["weights"] = {"0": "3", "1": "1", "2": "1", "3": "1"}
    v = check_optimum(t.to_json(), c)
    assert v.ok, v.all_reasons()
    # cut {0, 1, 2} (a path, B⁺ = 2) holds weight 5: 1/x* ≥ 5/2; algbw = 6 / (5/2)
    assert v.facts["algbw"] == Fraction(12, 5)


# ----------------------------------------------------------------- must fail
def _first_link_arc(c: dict[str, Any]) -> list[Any]:
    return next(a for a in c["flows"][0]["flow"] if a[0] is not None)


def test_wrong_inv_x_is_refuted(a100: Any, a100_cert: dict[str, Any]) -> None:
    c = copy.deepcopy(a100_cert)
    c["inv_x"] = "1/22"
    v = check_optimum(a100.to_json(), c)
    assert not v.ok and "not the claimed 1/x* = 1/22" in " ".join(v.reasons)


def test_flow_over_capacity(a100: Any, a100_cert: dict[str, Any]) -> None:
    c = copy.deepcopy(a100_cert)
    arc = _first_link_arc(c)
    arc[2] += 10**9
    v = check_optimum(a100.to_json(), c)
    text = " ".join(v.reasons)
    assert not v.ok and "over its capacity" in text and "not conserved" in text


def test_flow_not_conserved_names_the_node(a100: Any, a100_cert: dict[str, Any]) -> None:
    c = copy.deepcopy(a100_cert)
    arc = _first_link_arc(c)
    arc[2] -= 1
    v = check_optimum(a100.to_json(), c)
    assert not v.ok
    assert any("not conserved at" in r and (repr(arc[0]) in r or repr(arc[1]) in r)
               for r in v.reasons)


def test_missing_flow_and_small_x(a100: Any, a100_cert: dict[str, Any]) -> None:
    c = copy.deepcopy(a100_cert)
    gone = c["flows"].pop(3)["sink"]
    v = check_optimum(a100.to_json(), c)
    assert not v.ok and f"no flow from the super source to compute node {gone!r}" in v.reasons[0]
    c = copy.deepcopy(a100_cert)
    c["flows"][0]["x"] = "1"
    v = check_optimum(a100.to_json(), c)
    assert not v.ok and "below 1/inv_x" in v.reasons[0]


def test_wrong_k_u_and_algbw(a100: Any, a100_cert: dict[str, Any]) -> None:
    for key, val, needle in (("k", 26, "least k"), ("U", "6/5", "not k·inv_x"),
                             ("algbw", "347", "claims algbw 347")):
        c = copy.deepcopy(a100_cert)
        c[key] = val
        v = check_optimum(a100.to_json(), c)
        assert not v.ok and needle in " ".join(v.reasons), (key, v.reasons)


def test_fixed_k_minimality_cut(a100: Any) -> None:
    c = cert(a100, fixed_k=1)
    c["cut"] = [a100.compute_nodes[0]]
    v = check_optimum(a100.to_json(), c)
    assert not v.ok and "does not show that a smaller U fails" in " ".join(v.reasons)
    c = cert(a100, fixed_k=1)
    c["U"] = "1/30"  # a smaller U cannot be feasible: its flows were computed for 7/150
    v = check_optimum(a100.to_json(), c)
    assert not v.ok


def test_broadcast_overclaim() -> None:
    t = platforms.two_box_example()
    c = cert(t, collective="broadcast", root="c1.1")
    c["algbw"] = "5"
    v = check_optimum(t.to_json(), c)
    assert not v.ok and "B⁺(S) = 4, not the claimed algbw 5" in " ".join(v.reasons)


def test_allreduce_bounds(a100: Any) -> None:
    c = cert(a100, collective="allreduce")
    c["bound7_cuts"][str(a100.compute_nodes[0])].append(str(a100.compute_nodes[1]))
    v = check_optimum(a100.to_json(), c)
    assert not v.ok and "no other compute node" in " ".join(v.reasons)
    c = cert(a100, collective="allreduce")
    c["bound6_time_per_unit"] = "1/100"
    v = check_optimum(a100.to_json(), c)
    assert not v.ok and "bound (6)" in " ".join(v.reasons)


def test_certificate_for_another_topology(a100_cert: dict[str, Any]) -> None:
    v = check_optimum(platforms.dgx_a100(3).to_json(), a100_cert)
    assert not v.ok and "for topology" in v.reasons[0]


def test_unreadable_certificates() -> None:
    t = platforms.ring(4).to_json()
    good = cert(platforms.ring(4))
    for mutate in (lambda c: c.update(collective="alltoall"),
                   lambda c: c.update(flows="x"),
                   lambda c: c["flows"][0].update(multiplier=0),
                   lambda c: c["flows"][0]["flow"].append([0, "zz", 1]),
                   lambda c: c["flows"][0]["flow"].append([0, 1, 0.5])):
        c = copy.deepcopy(good)
        mutate(c)
        with pytest.raises(InputError):
            check_optimum(t, c)


@pytest.mark.parametrize("name, topology", [
    ("ring:5", platforms.ring(5)), ("ring:4 one-way", platforms.ring(4, bidirectional=False)),
    ("complete:4", platforms.complete(4)), ("hypercube:3", platforms.hypercube(3)),
    ("torus:3x3", platforms.torus((3, 3))), ("fat_tree:4", platforms.fat_tree(4)),
    ("dgx1", platforms.dgx1()), ("mi250:2,8", platforms.mi250(2, 8)),
], ids=lambda x: x if isinstance(x, str) else "")
def test_every_collective_on_many_platforms(name: str, topology: Any) -> None:
    """The reference's certificates pass the independent checker on varied shapes, and
    the proven algbw is the one the reference reports."""
    root = topology.compute_nodes[0]
    for kw in ({}, {"collective": "reduce-scatter"}, {"collective": "allreduce"},
               {"collective": "broadcast", "root": root}, {"collective": "reduce", "root": root},
               {"fixed_k": 2}):
        opt = collcert.optimum(topology, **kw)
        v = check_optimum(topology.to_json(), opt.certificate())
        assert v.ok, (name, kw, v.all_reasons())
        assert v.facts["algbw"] == opt.algbw
