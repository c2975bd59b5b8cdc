"""Checkers 4 and 5 (packed trees, schedule semantics and throughput) on hand-made schedules.

Provenance of the expected numbers: each is derived in the comment beside it
from the topology alone (cut ratios of Zhao & Krishnamurthy 2023, eq. (1)), independently of
collcert.reference. Other test modules import the builders below.
"""

from __future__ import annotations

import copy
from fractions import Fraction
from typing import Any

import pytest

from collcert import platforms
from collcert.certify.forestcoll import check_schedule
from collcert.certify.forestcoll.trees import Edge, Tree, check_gstar_load, check_shape
from collcert.certify.model import InputError, Topo

FMT = "collcert-schedule/1"


def ring_allgather(n: int = 4) -> dict[str, Any]:
    """Bidirectional ring(n), capacity 1: per root one clockwise and one counter-clockwise chain.

    The worst cut is a path of n-1 nodes: 1/x* = (n-1)/2 (B⁺ = 2). For n = 4: inv_x = 3/2,
    k = 2, U = 3; each directed link carries n-1 = 3 unit trees of 1/(2n) of the data:
    time 3/8, algbw 8/3 = N·x*.
    """
    trees = []
    for r in range(n):
        for d in (1, -1):
            edges = []
            for j in range(n - 1):
                a, b = (r + d * j) % n, (r + d * (j + 1)) % n
                edges.append({"src": a, "dst": b, "path": [a, b]})
            trees.append({"root": r, "multiplicity": 1, "direction": "out", "edges": edges})
    return {"format": FMT, "collective": "allgather",
            "phases": [{"collective": "allgather", "k": 2, "U": "3", "trees": trees}]}


def complete_allgather(n: int = 3, direction: str = "out") -> dict[str, Any]:
    """complete(n), capacity 1: every root sends straight to every node (stars).

    Each link (u, v) carries only root u's star: 1/n of the data, time 1/n, algbw n. The
    optimum: 1/x* = max |S ∩ V_c| / B⁺(S) = (n-1)/(n-1) = 1 → algbw N / 1 = n.
    """
    coll = "allgather" if direction == "out" else "reduce-scatter"
    trees = []
    for r in range(n):
        edges = []
        for v in range(n):
            if v != r:
                a, b = (r, v) if direction == "out" else (v, r)
                edges.append({"src": a, "dst": b, "path": [a, b]})
        trees.append({"root": r, "multiplicity": 1, "direction": direction, "edges": edges})
    return {"format": FMT, "collective": coll,
            "phases": [{"collective": coll, "k": 1, "trees": trees}]}


def two_box_broadcast() -> dict[str, Any]:
    """Zhao & Krishnamurthy 2023, Fig. 1, root c1.1: broadcast algbw = min cut from the root = 4·b (B⁺ of box 1).

    Hand-made, deliberately not optimal: one tree through box switch w1 to box 1, one
    crossing c1.1 -> w0 -> c2.1 (capacity 1) and w2 inside box 2. Every link carries the
    whole data once, so the slowest link (capacity 1) gives time 1, algbw 1.
    """
    edges = []
    for j in (2, 3, 4):
        edges.append({"src": "c1.1", "dst": f"c1.{j}", "path": ["c1.1", "w1", f"c1.{j}"]})
    edges.append({"src": "c1.1", "dst": "c2.1", "path": ["c1.1", "w0", "c2.1"]})
    for j in (2, 3, 4):
        edges.append({"src": "c2.1", "dst": f"c2.{j}", "path": ["c2.1", "w2", f"c2.{j}"]})
    return {"format": FMT, "collective": "broadcast", "root": "c1.1",
            "phases": [{"collective": "broadcast", "k": 1,
                        "trees": [{"root": "c1.1", "multiplicity": 1, "direction": "out",
                                   "edges": edges}]}]}


def ok(topo: Any, sched: Any) -> Any:
    v = check_schedule(topo.to_json(), sched)
    assert v.ok, v.all_reasons()
    return v


def bad(topo: Any, sched: Any, *needles: str) -> list[str]:
    v = check_schedule(topo.to_json(), sched)
    assert not v.ok
    assert v.all_reasons(), "a failed verdict must say why"
    text = " | ".join(v.all_reasons())
    for n in needles:
        assert n in text, text
    return v.all_reasons()


def test_ring_allgather_exact_time() -> None:
    v = ok(platforms.ring(4), ring_allgather(4))
    assert v.facts["time_per_unit"] == Fraction(3, 8)
    assert v.facts["algbw"] == Fraction(8, 3)


def test_complete_allgather_and_reduce_scatter() -> None:
    assert ok(platforms.complete(3), complete_allgather(3)).facts["algbw"] == 3
    assert ok(platforms.complete(4), complete_allgather(4, "in")).facts["algbw"] == 4


def test_broadcast_two_box_time() -> None:
    # c1.1 -> w0 carries one tree (1 unit of data, capacity 1): time 1 → algbw 1 (< optimum 4)
    v = ok(platforms.two_box_example(), two_box_broadcast())
    assert v.facts["time_per_unit"] == 1
    assert v.facts["algbw"] == 1


def test_missing_edge_names_node_and_root() -> None:
    s = ring_allgather(4)
    s["phases"][0]["trees"][0]["edges"].pop()  # root 0 clockwise: 3 never receives
    bad(platforms.ring(4), s, "compute node 3 never receives root 0's data")


def test_multiplicity_sum_is_reported_as_a_fraction() -> None:
    s = ring_allgather(4)
    s["phases"][0]["trees"][1]["multiplicity"] = 2
    bad(platforms.ring(4), s, "root 0", "summing to 3, not k = 2", "3/2")


def test_path_that_is_not_a_walk() -> None:
    s = ring_allgather(4)
    s["phases"][0]["trees"][0]["edges"][1]["path"] = [1, 3, 2]
    bad(platforms.ring(4), s, "hop 1 -> 3 is not a link")


def test_path_through_a_compute_node() -> None:
    s = complete_allgather(3)
    s["phases"][0]["trees"][0]["edges"][0]["path"] = [0, 2, 1]
    bad(platforms.complete(3), s, "passes through compute node 2")


def test_cycle_is_rejected() -> None:
    s = complete_allgather(3)
    # root 0: replace 0 -> 1 by 2 -> 1 and 0 -> 2 by 1 -> 2: 1 and 2 feed each other
    s["phases"][0]["trees"][0]["edges"] = [{"src": 2, "dst": 1, "path": [2, 1]},
                                           {"src": 1, "dst": 2, "path": [1, 2]}]
    bad(platforms.complete(3), s, "never receive", "cycle")


def test_wrong_direction_and_root_receiving() -> None:
    s = complete_allgather(3)
    s["phases"][0]["trees"][0]["direction"] = "in"
    bad(platforms.complete(3), s, "in-tree", "needs out-trees")
    s = complete_allgather(3)
    s["phases"][0]["trees"][0]["edges"].append({"src": 1, "dst": 0, "path": [1, 0]})
    bad(platforms.complete(3), s, "the root 0 receives from 1")


def test_claimed_algbw_must_match() -> None:
    s = ring_allgather(4)
    s["claimed"] = {"algbw": "3"}
    bad(platforms.ring(4), s, "claims algbw 3", "give 8/3")


def test_overloaded_link_slows_the_schedule() -> None:
    # doubling every tree of root 0 and k: root 0 still gets everything once; others half
    s = ring_allgather(4)
    s["phases"][0]["trees"].append(copy.deepcopy(s["phases"][0]["trees"][0]))
    bad(platforms.ring(4), s, "summing to 3, not k = 2")


def test_weights_change_the_data_per_tree() -> None:
    # root 0 has weight 3, others 1 (Σw = 6): link 0->1 carries root 0's clockwise tree (3/12),
    # root 3's (1/12) and root 2's (1/12): 5/12 per unit of data.
    s = ring_allgather(4)
    s["weights"] = {"0": "3", "1": "1", "2": "1", "3": "1"}
    v = ok(platforms.ring(4), s)
    assert v.facts["time_per_unit"] == Fraction(5, 12)


def test_multicast_path_rule() -> None:
    t = platforms.two_box_example()
    data = t.to_json()
    data["multicast_switches"] = ["w1"]
    topo = Topo(data)
    s = two_box_broadcast()
    edges = s["phases"][0]["trees"][0]["edges"]
    # c1.1 -> c1.3 now starts at w1, which receives this tree's data on the c1.2 path
    edges[1]["path"] = ["w1", "c1.3"]
    v = check_schedule(topo, s)
    assert v.ok, v.all_reasons()
    # a path may not start at a switch that is not a multicast switch
    s2 = copy.deepcopy(s)
    s2["phases"][0]["trees"][0]["edges"][4]["path"] = ["w2", "c2.2"]
    v = check_schedule(topo, s2)
    assert not v.ok and "neither 'c2.1' nor a multicast switch" in " ".join(v.reasons)
    # nor at a multicast switch that no path of the tree feeds
    s3 = copy.deepcopy(s)
    for e in s3["phases"][0]["trees"][0]["edges"][:3]:
        e["path"] = ["w1", e["dst"]]
    v = check_schedule(topo, s3)
    assert not v.ok and "no other path of this tree brings" in " ".join(v.reasons)


def test_unknown_node_and_bad_structure_are_input_errors() -> None:
    s = ring_allgather(4)
    s["phases"][0]["trees"][0]["edges"][0]["dst"] = "gpu99"
    with pytest.raises(InputError, match="gpu99"):
        check_schedule(platforms.ring(4).to_json(), s)
    for broken in ({"format": "nope"}, {"format": FMT, "collective": "alltoall", "phases": []},
                   {"format": FMT, "collective": "allgather", "phases": "x"},
                   {"format": FMT, "collective": "allgather",
                    "phases": [{"collective": "allgather", "k": 0, "trees": []}]}):
        with pytest.raises(InputError):
            check_schedule(platforms.ring(4).to_json(), broken)


def test_shape_and_gstar_load_directly() -> None:
    topo = Topo(platforms.complete(3).to_json())
    tree = Tree(0, 2, "out", [Edge(0, 1, [0, 1]), Edge(1, 2, [1, 2])], "t")
    from collcert.certify.model import Verdict

    v = Verdict("x")
    assert check_shape(topo, tree, v) and v.ok
    check_gstar_load([tree], {(0, 1): 2, (1, 2): 1}, v)
    assert not v.ok and "G* edge 1 -> 2 carries 2 unit trees but has capacity 1" in v.reasons[0]


def test_phase_time_claim_must_match() -> None:
    s = ring_allgather(4)
    s["phases"][0]["time_per_unit"] = "1/4"
    bad(platforms.ring(4), s, "claims time_per_unit 1/4", "give 3/8")
    s["phases"][0]["time_per_unit"] = "3/8"
    ok(platforms.ring(4), s)
