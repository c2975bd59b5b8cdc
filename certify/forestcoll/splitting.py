"""Checker 3: the edge-splitting invariant (Zhao & Krishnamurthy 2023, Thm 5, Thm 8, Alg 1).

Switch removal turns G into a switch-free multigraph G* on the compute nodes,
in units of unit trees (a link of capacity c carries ⌊U·c⌋ of them). It is
sound when

* routing: every unit of every G* edge (u, v) is a walk u → … → v in G whose
  inner nodes are switches, and summed over all G* edges each link e of G is
  traversed at most ⌊U·c_e⌋ times, so whatever G* can carry, G can carry;
* packing: G*⃗ (G* plus a super source s with an arc s→u of capacity k_u for
  every compute node u) has, for every compute node v, an s→v flow of value
  Σ k_u. By Edmonds' theorem (Zhao & Krishnamurthy 2023, Thm 5) G* then holds k_u edge-disjoint
  spanning out-trees rooted at every u.

The certificate is ``schedule["certificates"]`` with ``gstar``, ``routing``
and ``flows`` (docs/schedule-format.md).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from ..model import InputError, Link, Node, Topo, Verdict, frac_str, integer, number
from ..solvers import check_flow


def check_splitting(
    topology: Mapping[str, Any] | Topo,
    certificates: Mapping[str, Any],
    supply: Mapping[Node, int] | None = None,
    reverse_flows: bool = False,
) -> Verdict:
    """Check ``gstar`` + ``routing`` + ``flows``.

    ``supply``: k_u per compute node (default: k for every compute node, as
    for allgather; broadcast: k at the root only). ``reverse_flows``: the
    flows live in the transpose of G* (reduce / reduce-scatter, whose trees
    are in-trees).
    """
    topo = topology if isinstance(topology, Topo) else Topo(topology)
    v = Verdict("edge splitting")
    raw = certificates.get("gstar")
    if not isinstance(raw, Mapping) or not isinstance(raw.get("capacities"), list):
        raise InputError("certificates.gstar must be {U, k, capacities: [[u, v, int], …]}")
    u_factor = number(raw.get("U"), "gstar U")
    k = integer(raw.get("k"), "gstar k", 1, strict=True)
    caps = gstar_capacities(topo, raw["capacities"], "gstar capacities")
    v.facts["gstar_edges"] = len(caps)
    _routing(topo, certificates.get("routing"), caps, u_factor, v)
    sup = dict(supply) if supply is not None else {c: k for c in topo.compute}
    need = sum(sup.values())
    flows = certificates.get("flows")
    if not isinstance(flows, list):
        raise InputError("certificates.flows must be an array of {sink, flow}")
    net_caps = {(b, a): c for (a, b), c in caps.items()} if reverse_flows else caps
    roots = {x: s for x, s in sup.items() if s}  # one dict for all flows (check_flow caches it)
    have: dict[Node, tuple[int, Any]] = {}
    for i, rec in enumerate(flows):
        if not isinstance(rec, Mapping):
            raise InputError(f"certificates.flows[{i}] is not an object")
        have.setdefault(topo.compute_node(rec.get("sink"), f"flows[{i}] sink"), (i, rec))
    for c in topo.compute:
        if c not in have and sup.get(c, 0) and all(x == c for x, s in sup.items() if s):
            continue  # the only root needs no flow to itself (one given is checked all the same)
        if c not in have:
            v.fail(f"no flow certifies that G* can feed compute node {c!r}")
            continue
        i, rec = have[c]
        m = rec.get("multiplier", 1)
        if isinstance(m, bool) or not isinstance(m, int) or m < 1:
            raise InputError(f"flows[{i}] multiplier {m!r} is not a positive integer")
        value = check_flow(v, f"G* flow to {c!r} (flows[{i}])", topo, rec.get("flow"), m,
                           net_caps, 1, None, c, roots, 1)
        if value is not None and value < need * m:
            v.fail(f"G* flow to {c!r}: value {frac_str(value) if m == 1 else value}/{m} is "
                   f"below Σ k_u = {need}, so G* cannot hold the trees (Zhao & Krishnamurthy 2023, Thm 5)")
    return v


def check_routing(topology: Topo, certificates: Mapping[str, Any],
                  canon: Callable[[Node, Node], Link] | None = None,
                  spread: Callable[[Mapping[Link, int]], dict[Link, int]] | None = None,
                  ) -> Verdict:
    """The routing half of checker 3 alone: every unit of every G* edge a walk in G
    through switches, and every link's units ≤ ⌊U·c⌋. A symmetric file (one G* arc per
    orbit) gives ``canon`` (an arc's orbit's listed arc) and ``spread`` (the whole
    schedule's link loads from the listed arcs' walks)."""
    v = Verdict("G* routing")
    raw = certificates.get("gstar")
    if not isinstance(raw, Mapping) or not isinstance(raw.get("capacities"), list):
        raise InputError("certificates.gstar must be {U, k, capacities: [[u, v, int], …]}")
    caps = gstar_capacities(topology, raw["capacities"], "gstar capacities")
    _routing(topology, certificates.get("routing"), caps, number(raw.get("U"), "gstar U"), v,
             canon, spread)
    return v


def gstar_capacities(topo: Topo, items: list[Any], label: str) -> dict[Link, int]:
    """G*'s edges ``[[u, v, units], …]`` as {(u, v): units} (parallel entries summed);
    ``label`` names the list in the message for an entry that is not a triple."""
    caps: dict[Link, int] = {}
    for i, item in enumerate(items):
        if not isinstance(item, list) or len(item) != 3:
            raise InputError(f"{label}[{i}] is not [u, v, int]")
        a = topo.compute_node(item[0], f"gstar capacities[{i}]")
        b = topo.compute_node(item[1], f"gstar capacities[{i}]")
        caps[(a, b)] = caps.get((a, b), 0) + integer(item[2], f"{label}[{i}] units", 0,
                                                     strict=True)
    return caps


def _routing(
    topo: Topo, raw: Any, caps: Mapping[Link, int], u_factor: Any, v: Verdict,
    canon: Callable[[Node, Node], Link] | None = None,
    spread: Callable[[Mapping[Link, int]], dict[Link, int]] | None = None,
) -> None:
    if not isinstance(raw, list):
        raise InputError("certificates.routing must be an array of {src, dst, paths}")
    covered: dict[Link, int] = {}
    load: dict[Link, int] = {}
    for i, item in enumerate(raw):
        if not isinstance(item, Mapping) or not isinstance(item.get("paths"), list):
            raise InputError(f"routing[{i}] is not {{src, dst, paths}}")
        a = topo.compute_node(item.get("src"), f"routing[{i}] src")
        b = topo.compute_node(item.get("dst"), f"routing[{i}] dst")
        for j, entry in enumerate(item["paths"]):
            if not isinstance(entry, list) or len(entry) != 2 or not isinstance(entry[0], list):
                raise InputError(f"routing[{i}].paths[{j}] is not [[u, …, v], count]")
            walk = [topo.node(x, f"routing[{i}].paths[{j}]") for x in entry[0]]
            count = integer(entry[1], f"routing[{i}].paths[{j}] count", 0, strict=True)
            where = f"routing of G* edge {a!r} -> {b!r}, walk {j}"
            if len(walk) < 2 or walk[0] != a or walk[-1] != b:
                v.fail(f"{where} does not run from {a!r} to {b!r}")
                continue
            inner = [x for x in walk[1:-1] if x not in topo.switch_set]
            if inner:
                v.fail(f"{where} passes through compute node {inner[0]!r}")
                continue
            hops = list(zip(walk, walk[1:]))
            missing = [h for h in hops if h not in topo.cap]
            if missing:
                v.fail(f"{where}: hop {missing[0][0]!r} -> {missing[0][1]!r} is not a link")
                continue
            key = (a, b) if canon is None else canon(a, b)
            covered[key] = covered.get(key, 0) + count
            for h in hops:
                load[h] = load.get(h, 0) + count
    if canon is not None:  # one arc per orbit: G*'s capacities keyed by their orbit
        caps = {canon(*e): c for e, c in caps.items()}
    if spread is not None:
        load = spread(load)
    for e, c in caps.items():
        if covered.get(e, 0) < c:
            v.fail(f"G* edge {e[0]!r} -> {e[1]!r} has {c} units but only {covered.get(e, 0)} "
                   "are routed through G")
    for e, used in load.items():
        limit = math.floor(u_factor * topo.cap[e])
        if used > limit:
            v.fail(f"link {e[0]!r} -> {e[1]!r} carries {used} routed units, more than "
                   f"⌊U·c⌋ = {limit} (over by {used - limit})")
