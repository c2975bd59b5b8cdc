"""A plain, independent checker of collcert-schedule/1 documents, and tests that it bites.

The checker reads only the JSON document and the topology's links; it does
not use collcert.reference beyond ``Topology`` (the input) — every property
is recomputed here with Fractions: spanning, rooted, multiplicities, walks,
per-link load, achieved time, and the G* certificates (gstar, routing, flows).
Other schedule tests import :func:`check_doc`.
"""

from __future__ import annotations

import copy
import math
from collections import deque
from fractions import Fraction
from typing import Any

import pytest

import collcert
from collcert import platforms


def frac(text: Any) -> Fraction:
    if isinstance(text, int):
        return Fraction(text)
    num, _, den = str(text).partition("/")
    return Fraction(int(num), int(den or 1))


def check_tree(tree: dict[str, Any], topo: collcert.Topology, multicast: bool) -> None:
    comp = set(topo.compute_nodes)
    root = tree["root"]
    assert root in comp, f"root {root!r} is not a compute node"
    assert isinstance(tree["multiplicity"], int) and tree["multiplicity"] >= 1
    out = tree["direction"] == "out"
    assert tree["direction"] in ("out", "in")
    edges = tree["edges"]
    assert len(edges) == len(comp) - 1, "a spanning tree on N nodes has N-1 edges"
    # orient every edge away from the root (in-trees: reverse)
    parent: dict[Any, Any] = {}
    children: dict[Any, list[Any]] = {}
    for e in edges:
        a, b = (e["src"], e["dst"]) if out else (e["dst"], e["src"])
        assert a in comp and b in comp, f"tree edge {a!r}->{b!r} leaves the compute nodes"
        assert b != root and b not in parent, f"node {b!r} gets the data twice"
        parent[b] = a
        children.setdefault(a, []).append(b)
    seen = {root}
    queue = deque([root])
    depth = {root: 0}
    while queue:
        x = queue.popleft()
        for y in children.get(x, []):
            assert y not in seen
            seen.add(y)
            depth[y] = depth[x] + 1
            queue.append(y)
    assert seen == comp, f"tree of root {root!r} does not span: misses {comp - seen}"
    if "height" in tree:
        assert tree["height"] == max(depth.values())
    # walks
    sw = set(topo.switch_nodes)
    for e in edges:
        p = e["path"]
        assert len(p) >= 2
        for a, b in zip(p, p[1:]):
            assert (a, b) in topo.capacity, f"path step {a!r}->{b!r} is not a link"
        for x in p[1:-1]:
            assert x in sw, f"path {p} passes through compute node {x!r}"
        start_ok = p[0] == e["src"] or (multicast and p[0] in topo.multicast_switches)
        end_ok = p[-1] == e["dst"] or (multicast and p[-1] in topo.multicast_switches)
        assert start_ok and end_ok, f"path {p} does not join {e['src']!r} to {e['dst']!r}"
        if multicast and p[0] != e["src"]:
            assert out and any(p[0] in f["path"][1:-1] for f in edges if f is not e)
        if multicast and p[-1] != e["dst"]:
            assert not out and any(p[-1] in f["path"][1:-1] for f in edges if f is not e)


def phase_time(phase: dict[str, Any], doc: dict[str, Any], topo: collcert.Topology) -> Fraction:
    n = len(doc["compute_nodes"])
    coll = phase["collective"]
    k = phase["k"]
    weights = doc.get("weights")
    load: dict[tuple[Any, Any], Fraction] = {}
    units: dict[tuple[Any, Any], int] = {}
    for tree in phase["trees"]:
        m = Fraction(tree["multiplicity"], k)
        if coll in ("broadcast", "reduce"):
            share = Fraction(1)
        elif weights:
            total = sum(frac(w) for w in weights.values())
            share = frac(weights[str(tree["root"])]) / total
        else:
            share = Fraction(1, n)
        for e in tree["edges"]:
            for a, b in zip(e["path"], e["path"][1:]):
                load[(a, b)] = load.get((a, b), Fraction(0)) + m * share
                units[(a, b)] = units.get((a, b), 0) + tree["multiplicity"]
    if not weights:  # Zhao & Krishnamurthy 2023, Thm 13: at most ⌊U·c_e⌋ unit trees on a link
        U = frac(phase["U"])
        for e, x in units.items():
            assert x <= math.floor(U * topo.capacity[e]), f"link {e} carries {x} unit trees"
    return max(x / topo.capacity[e] for e, x in load.items())


def check_certificates(cert: dict[str, Any], phase: dict[str, Any], topo: collcert.Topology
                       ) -> None:
    g = topo.transpose() if cert.get("on") == "transposed" else topo
    gstar = cert["gstar"]
    U, k = frac(gstar["U"]), gstar["k"]
    comp = list(g.compute_nodes)
    cap = {(u, v): c for u, v, c in gstar["capacities"]}
    supply = {u: x for u, x in gstar.get("supply", [[c, k] for c in comp])}
    demand = sum(supply.values())
    # routing: every unit of every G* arc is a walk through switches; link units ≤ ⌊U c⌋
    used: dict[tuple[Any, Any], int] = {}
    routed: dict[tuple[Any, Any], int] = {}
    for r in cert["routing"]:
        for p, x in r["paths"]:
            assert p[0] == r["src"] and p[-1] == r["dst"]
            assert all(y in g.switch_nodes for y in p[1:-1])
            routed[(r["src"], r["dst"])] = routed.get((r["src"], r["dst"]), 0) + x
            for a, b in zip(p, p[1:]):
                used[(a, b)] = used.get((a, b), 0) + x
    assert routed == cap, "routing units differ from the G* capacities"
    for e, x in used.items():
        assert x <= math.floor(U * g.capacity[e]), f"link {e}: {x} units > ⌊U·c⌋"
    # flows: one per sink, conserved, within capacities, value ≥ demand (Zhao & Krishnamurthy 2023, Thm 5)
    sinks = set()
    for f in cert["flows"]:
        v = f["sink"]
        sinks.add(v)
        bal: dict[Any, int] = {}
        for a, b, x in f["flow"]:
            assert x >= 0
            if a is None:
                assert x <= supply[b]
            else:
                assert x <= cap.get((a, b), 0), f"flow to {v!r} exceeds G* arc {a!r}->{b!r}"
            bal[a] = bal.get(a, 0) - x
            bal[b] = bal.get(b, 0) + x
        assert bal.get(v, 0) >= demand
        assert all(x == 0 for y, x in bal.items() if y not in (None, v))
    assert sinks == set(comp)
    # the trees use G* arcs within their capacities
    load: dict[tuple[Any, Any], int] = {}
    for tree in phase["trees"]:
        for e in tree["edges"]:
            a, b = (e["src"], e["dst"]) if tree["direction"] == "out" else (e["dst"], e["src"])
            # a tree stands for multiplicity/k of its root's supply[root] G* units
            units = Fraction(tree["multiplicity"] * supply[tree["root"]], k)
            assert units.denominator == 1
            load[(a, b)] = load.get((a, b), 0) + int(units)
    for e, x in load.items():
        assert x <= cap.get(e, 0), f"trees put {x} units on G* arc {e}"


def check_doc(doc: dict[str, Any], topo: collcert.Topology, expected_time: Fraction | None,
              *, multicast: bool = False) -> Fraction:
    """Check every property; return the achieved time per unit of data."""
    assert doc["format"] == "collcert-schedule/1"
    assert doc["topology"] == topo.content_hash()
    assert doc["compute_nodes"] == list(topo.compute_nodes)
    coll = doc["collective"]
    expect_phases = ["reduce-scatter", "allgather"] if coll == "allreduce" else [coll]
    assert [p["collective"] for p in doc["phases"]] == expect_phases
    total = Fraction(0)
    for phase in doc["phases"]:
        per_root: dict[Any, int] = {}
        for tree in phase["trees"]:
            check_tree(tree, topo, multicast)
            want = "in" if phase["collective"] in ("reduce-scatter", "reduce") else "out"
            assert tree["direction"] == want
            per_root[tree["root"]] = per_root.get(tree["root"], 0) + tree["multiplicity"]
        if phase["collective"] in ("broadcast", "reduce"):
            assert set(per_root) == {doc["root"]}
        else:
            assert set(per_root) == set(topo.compute_nodes)
        assert all(x == phase["k"] for x in per_root.values()), "multiplicities must sum to k"
        total += phase_time(phase, doc, topo)
        cert = phase.get("certificates") or (
            doc.get("certificates") if len(doc["phases"]) == 1 else None)
        if cert and "gstar" in cert:
            check_certificates(cert, phase, topo)
    assert frac(doc["claimed"]["time_per_unit"]) == total
    if expected_time is not None:
        assert total == expected_time, f"achieved {total}, expected {expected_time}"
    return total


# --------------------------------------------------------------------------- #
# the checker itself must reject broken schedules
# --------------------------------------------------------------------------- #
@pytest.fixture(scope="module")
def good() -> tuple[dict[str, Any], collcert.Topology]:
    t = platforms.two_box_example()
    return collcert.schedule(t, "allgather").to_json(), t


def test_checker_accepts_a_good_schedule(good: Any) -> None:
    doc, t = good
    assert check_doc(doc, t, Fraction(1, 8)) == Fraction(1, 8)  # Zhao & Krishnamurthy 2023, Fig. 1: 1/x* = 1, N = 8


def _breaks(doc: dict[str, Any], t: collcert.Topology) -> bool:
    try:
        check_doc(doc, t, Fraction(1, 8))
    except AssertionError:
        return True
    return False


def test_checker_rejects_broken_schedules(good: Any) -> None:
    doc, t = good
    bad = copy.deepcopy(doc)
    bad["phases"][0]["trees"][0]["edges"].pop()  # not spanning
    assert _breaks(bad, t)
    bad = copy.deepcopy(doc)
    bad["phases"][0]["trees"][0]["multiplicity"] += 1  # multiplicities no longer sum to k
    assert _breaks(bad, t)
    bad = copy.deepcopy(doc)
    e = bad["phases"][0]["trees"][0]["edges"][0]
    e["path"] = [e["src"], e["dst"]]  # not a link of G
    assert _breaks(bad, t)
    bad = copy.deepcopy(doc)
    tr = bad["phases"][0]["trees"]
    tr[1]["edges"] = copy.deepcopy(tr[0]["edges"])  # tree of root 1 rooted elsewhere
    assert _breaks(bad, t)
    bad = copy.deepcopy(doc)
    for tree in bad["phases"][0]["trees"]:  # every tree through one detour: overloads links
        e = tree["edges"][0]
        e["path"] = e["path"] + e["path"][-2::-1][1:] + e["path"][1:]
    assert _breaks(bad, t)
    bad = copy.deepcopy(doc)
    bad["certificates"]["gstar"]["capacities"][0][2] += 1
    assert _breaks(bad, t)
