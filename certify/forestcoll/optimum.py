"""Checker 2: the optimum certificate (docs/certificates.md), for every collective.

Allgather (Zhao & Krishnamurthy 2023, eq. (1), Thm 1). The cut S ⊉ V_c gives 1/x* ≥ |S ∩ V_c| / B⁺(S)
(checker 1). For the upper bound, one flow per compute node v in G⃗_x (G plus
a super source s with arcs s→u of capacity x): a flow of value N·x into v
means every cut {s} ∪ S with v ∉ S has capacity x·|V_c − S| + B⁺(S) ≥ N·x,
i.e. B⁺(S) ≥ x·|S ∩ V_c|. With a flow for every v, every S ⊉ V_c has ratio
≤ 1/x ≤ inv_x; with the cut, 1/x* = inv_x exactly, and algbw = N / inv_x.
k and U (Prop 3): k is the least positive integer with k·inv_x·c_e ∈ Z for
every link, i.e. the lcm of the denominators of inv_x·c_e; U = k·inv_x.

Reduce-scatter: the same on the transposed topology. Fixed k (Zhao & Krishnamurthy 2023, Thm 5, 13,
14): flows in G⃗_k with link capacities ⌊U·c_e⌋ prove U feasible; a cut S
with Σ_{e∈δ⁺(S)} (⌈U·c_e⌉ − 1) < k·|S ∩ V_c| proves every U' < U infeasible
(⌊U'·c⌋ ≤ ⌈U·c⌉ − 1). Broadcast / reduce: a cut of capacity λ and flows of
value ≥ λ to (from) every other compute node: algbw = λ (eq. (5)).
Allreduce: the allgather part, and the lower bounds (6), (7) recomputed.

Automorphisms (certify/symmetry/automorphisms.py): a certificate may carry permutations
of the nodes instead of a flow for every compute node; each is verified to be an
automorphism of the topology (compute nodes, weights and every link's capacity
kept) and then every compute node's orbit must hold a node with a valid flow.
A flow into r bounds every cut S ∌ r; for v = g(r) and S ∌ v, the cut g⁻¹S ∌ r
has the same capacity and compute weight, so the bound carries over to S.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from fractions import Fraction
from typing import Any

from ..model import InputError, Node, Topo, Verdict, frac_str, integer, number, other_topology
from ..solvers import check_flow, flow_fields
from ..symmetry import automorphisms
from . import cuts
from .stated import check_stated, stated_flow_value

COLLECTIVES = ("allgather", "reduce-scatter", "broadcast", "reduce", "allreduce")


def check_optimum(topology: Mapping[str, Any] | Topo, cert: Mapping[str, Any]) -> Verdict:
    """Check an ``Optimum.certificate()`` dict against the topology dict.

    On success ``facts`` holds the proven ``algbw`` and ``time_per_unit`` (for
    allreduce: the RS+AG values and ``lower_bound_time_per_unit``).
    Raises :class:`InputError` when the certificate cannot be read at all.
    """
    topo = topology if isinstance(topology, Topo) else Topo(topology)
    if not isinstance(cert, Mapping):
        raise InputError("the certificate must be a JSON object")
    if cert.get("format", "collcert-certificate/1") != "collcert-certificate/1":
        raise InputError(f"certificate format {cert.get('format')!r} is not "
                         "'collcert-certificate/1'")
    coll = cert.get("collective")
    if not isinstance(coll, str) or coll not in COLLECTIVES:
        raise InputError(f"certificate collective {coll!r} is not one of {COLLECTIVES}")
    v = Verdict(f"{coll} optimum certificate")
    wrong = other_topology(topo, cert)
    if wrong:
        v.fail(wrong)
        return v
    unbalanced = topo.unbalanced()
    if unbalanced:
        v.fail("the topology is not Eulerian, which the optimum theorems (Zhao & Krishnamurthy 2023, Thm 1, 5, 12) "
               "and RS = AG on the transpose assume: " + "; ".join(
                   f"{w!r} receives {frac_str(i)} but sends {frac_str(o)}"
                   for w, i, o in unbalanced[:5]))
        return v
    if "num_compute" in cert and cert["num_compute"] != topo.n:
        v.fail(f"the certificate says N = {cert['num_compute']!r}; the topology has {topo.n}")
    if coll in ("allgather", "reduce-scatter"):
        on = topo.transposed() if coll == "reduce-scatter" else topo
        if cert.get("fixed_k") is not None:
            v.absorb(_fixed_k(on, cert), facts=True)
        else:
            v.absorb(_allgather(on, cert), facts=True)
    elif coll in ("broadcast", "reduce"):
        v.absorb(_rooted(topo, cert, coll == "reduce"), facts=True)
    else:
        v.absorb(_allreduce(topo, cert), facts=True)
    if v.ok and "algbw" in v.facts:
        v.facts["time_per_unit"] = 1 / v.facts["algbw"]
        claimed = cert.get("algbw")
        if claimed is not None and number(claimed, "certificate algbw") != v.facts["algbw"]:
            v.fail(f"the certificate claims algbw {claimed}, but its witnesses prove "
                   f"{frac_str(v.facts['algbw'])}")
    if v.ok and "algbw" in v.facts:
        v.absorb(check_stated(topo, cert, v.facts))
    return v


def _flows_by_sink(cert: Mapping[str, Any], topo: Topo, source_key: str = "sink") -> dict[
        Node, list[tuple[int, Mapping[str, Any]]]]:
    flows = cert.get("flows")
    if not isinstance(flows, list):
        raise InputError("the certificate has no 'flows' array (write it with flows included)")
    out: dict[Node, list[tuple[int, Mapping[str, Any]]]] = {}
    for i, rec in enumerate(flows):
        if not isinstance(rec, Mapping):
            raise InputError(f"flows[{i}] is not an object")
        key = rec.get(source_key)
        node = topo.node(key, f"flows[{i}] {source_key}")
        out.setdefault(node, []).append((i, rec))
    return out


def _super_source_flows(
    v: Verdict, topo: Topo, by_sink: Mapping[Node, list[tuple[int, Mapping[str, Any]]]],
    perms: list[dict[Node, Node]] | None, what: str,
) -> Iterator[tuple[Node, str, Mapping[str, Any], int, object]]:
    """For each compute node c in turn, the first flow from the super source into c:
    (c, its label, the record, its multiplier, its arcs). A node without one fails ``v``
    (``what``: the bound the flows prove) unless automorphisms may cover it."""
    for c in topo.compute:
        records = [(i, r) for i, r in by_sink.get(c, []) if r.get("source") is None]
        if not records:
            if perms is None:
                v.fail(f"{what}: no flow from the super source to compute node {c!r}")
            continue
        i, rec = records[0]
        label = f"flow to {c!r} (flows[{i}])"
        _, _, m, arcs = flow_fields(rec, label)
        yield c, label, rec, m, arcs


def _weights(topo: Topo, cert: Mapping[str, Any]) -> dict[Node, int] | None:
    raw = cert.get("weights")
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise InputError("certificate weights must be an object {node: weight}")
    w: dict[Node, int] = {}
    for key, val in raw.items():
        w[topo.compute_node(key, "weights key")] = integer(val, f"weight of {key}", 1)
    for c in topo.compute:
        if c not in w:
            raise InputError(f"certificate weights lack compute node {c!r}")
    return w


def _automorphisms(v: Verdict, topo: Topo, cert: Mapping[str, Any],
                   weights: Mapping[Node, int] | None) -> list[dict[Node, Node]] | None:
    """The certificate's automorphisms, each verified (a failure fails ``v``); None when
    it lists none (then every compute node needs its own flow)."""
    raw = cert.get("automorphisms")
    if raw is None:
        return None
    perms = automorphisms.read(topo, raw)
    for g, sigma in enumerate(perms):
        v.absorb(automorphisms.verify(topo, sigma, weights, f"automorphisms[{g}]"))
    return perms


def _orbits_covered(v: Verdict, topo: Topo, perms: list[dict[Node, Node]] | None,
                    proven: set[Node], what: str) -> None:
    """With automorphisms: every compute node's orbit holds a node with a valid flow."""
    if perms is None:
        return
    missing = automorphisms.uncovered(topo, perms, proven)
    for c in missing[:5]:
        v.fail(f"{what}: no valid flow from the super source to compute node {c!r} or to "
               "any node of its orbit under the certificate's automorphisms")
    if len(missing) > 5:
        v.fail(f"{what}: … and {len(missing) - 5} more compute nodes without a valid flow "
               "in their orbit")


def _allgather(topo: Topo, cert: Mapping[str, Any]) -> Verdict:
    v = Verdict("allgather")
    inv_x = number(cert.get("inv_x"), "certificate inv_x")
    if inv_x <= 0:
        raise InputError("certificate inv_x must be positive")
    weights = _weights(topo, cert)
    w_of = weights or {c: 1 for c in topo.compute}
    total_w = sum(w_of.values())
    cut = topo.node_set(cert.get("cut"), "certificate cut")
    v.absorb(cuts.allgather_cut(topo, cut, inv_x, weights), "lower bound: ")
    by_sink = _flows_by_sink(cert, topo)
    perms = _automorphisms(v, topo, cert, weights)
    proven: set[Node] = set()
    src_tables: dict[Fraction, dict[Node, int]] = {}
    for c, label, rec, m, arcs in _super_source_flows(v, topo, by_sink, perms, "upper bound"):
        x = number(rec.get("x"), f"{label} x")
        if x * inv_x < 1:
            v.fail(f"{label}: x = {frac_str(x)} is below 1/inv_x = {frac_str(1 / inv_x)}")
            continue
        src_num = src_tables.get(x)
        if src_num is None:
            src_num = src_tables[x] = {u: x.numerator * w_of[u] for u in topo.compute}
        value = check_flow(v, label, topo, arcs, m, topo.icap, topo.scale, None, c,
                           src_num, x.denominator)
        if value is None:
            continue
        stated_flow_value(v, label, rec, value)
        if value * x.denominator < total_w * x.numerator * m:
            v.fail(f"{label}: value {frac_str(Fraction(value, m))} is below N·x = "
                   f"{frac_str(total_w * x)}")
        else:
            proven.add(c)
    _orbits_covered(v, topo, perms, proven, "upper bound")
    algbw = total_w / inv_x
    v.facts.update({"algbw": algbw, "inv_x": inv_x})
    if weights is None and "k" in cert:
        k = integer(cert.get("k"), "certificate k", 1)
        u = number(cert.get("U"), "certificate U")
        least = 1
        for cap in topo.cap.values():
            d = (inv_x * cap).denominator
            least = least * d // math.gcd(least, d)
        if k != least:
            v.fail(f"k = {k} is not the least k with k·inv_x·c_e integral for every link "
                   f"(that is {least}, Prop 3)")
        if u != k * inv_x:
            v.fail(f"U = {frac_str(u)} is not k·inv_x = {frac_str(k * inv_x)}")
        v.facts.update({"k": k, "U": u})
    return v


def _fixed_k(topo: Topo, cert: Mapping[str, Any]) -> Verdict:
    v = Verdict("fixed k")
    k = integer(cert.get("fixed_k"), "certificate fixed_k", 1)
    u = number(cert.get("U"), "certificate U")
    if u <= 0:
        raise InputError("certificate U must be positive")
    n = topo.n
    floor_cap = {e: math.floor(u * c) for e, c in topo.cap.items()}
    by_sink = _flows_by_sink(cert, topo)
    supply = {w: k for w in topo.compute}
    perms = _automorphisms(v, topo, cert, None)
    proven: set[Node] = set()
    for c, label, rec, m, arcs in _super_source_flows(v, topo, by_sink, perms, "feasibility"):
        if "U" in rec and number(rec["U"], f"{label} U") != u:
            v.fail(f"{label} was computed for U = {rec['U']}, not U = {frac_str(u)}")
        if "k" in rec and integer(rec["k"], f"{label} k") != k:
            v.fail(f"{label} was computed for k = {rec['k']}, not k = {k}")
        value = check_flow(v, label, topo, arcs, m, floor_cap, 1, None, c, supply, 1)
        if value is not None:
            stated_flow_value(v, label, rec, value)
        if value is not None and value < n * k * m:
            v.fail(f"{label}: value {frac_str(Fraction(value, m))} is below N·k = {n * k}")
        elif value is not None:
            proven.add(c)
    _orbits_covered(v, topo, perms, proven, "feasibility")
    cut = topo.node_set(cert.get("cut"), "certificate cut")
    inside = sum(1 for c in topo.compute if c in cut)
    if inside == n:
        v.fail("minimality: the cut contains every compute node")
    else:
        below = sum(math.ceil(u * c) - 1 for (a, b), c in topo.cap.items()
                    if a in cut and b not in cut)
        if below >= k * inside:
            v.fail(f"minimality: the cut carries Σ(⌈U·c_e⌉ − 1) = {below} ≥ k·|S ∩ V_c| = "
                   f"{k * inside} unit trees, so it does not show that a smaller U fails")
    v.facts.update({"algbw": Fraction(n * k) / u, "U": u, "k": k})
    return v


def _rooted(topo: Topo, cert: Mapping[str, Any], reduce: bool) -> Verdict:
    v = Verdict("reduce" if reduce else "broadcast")
    root = topo.compute_node(cert.get("root"), "certificate root")
    lam = number(cert.get("algbw"), "certificate algbw")
    if lam <= 0:
        raise InputError(f"certificate algbw {frac_str(lam)} must be positive (a topology "
                         "where the root cannot reach every compute node has no broadcast "
                         "or reduce)")
    cut = topo.node_set(cert.get("cut"), "certificate cut")
    v.absorb(cuts.rooted_cut(topo, cut, root, reduce, lam), "upper bound: ")
    flows = cert.get("flows")
    if not isinstance(flows, list):
        raise InputError("the certificate has no 'flows' array")
    have: dict[Node, tuple[int, Mapping[str, Any]]] = {}
    for i, rec in enumerate(flows):
        if not isinstance(rec, Mapping):
            raise InputError(f"flows[{i}] is not an object")
        s = topo.node(rec.get("source"), f"flows[{i}] source")
        t = topo.node(rec.get("sink"), f"flows[{i}] sink")
        other = s if reduce else t
        if (t if reduce else s) == root:
            have.setdefault(other, (i, rec))
    for c in topo.compute:
        if c == root:
            continue
        if c not in have:
            v.fail(f"lower bound: no flow {'from' if reduce else 'to'} {c!r} "
                   f"{'to' if reduce else 'from'} the root {root!r}")
            continue
        i, rec = have[c]
        label = f"flow {c!r} -> {root!r}" if reduce else f"flow {root!r} -> {c!r}"
        label += f" (flows[{i}])"
        _, _, m, arcs = flow_fields(rec, label)
        s, t = (c, root) if reduce else (root, c)
        value = check_flow(v, label, topo, arcs, m, topo.icap, topo.scale, s, t)
        if value is not None:
            stated_flow_value(v, label, rec, value)
        if value is not None and value * lam.denominator < lam.numerator * m:
            v.fail(f"{label}: value {frac_str(Fraction(value, m))} is below the claimed "
                   f"algbw {frac_str(lam)}")
    v.facts["algbw"] = lam
    return v


def _allreduce(topo: Topo, cert: Mapping[str, Any]) -> Verdict:
    v = Verdict("allreduce")
    if cert.get("weights") is not None:
        v.fail("an allreduce certificate has no weights: its time 2·inv_x/N assumes N equal "
               "shards")
        return v
    ag = _allgather(topo, cert)
    v.absorb(ag, "reduce-scatter/allgather part: ")
    if not ag.ok:
        return v
    n = topo.n
    inv_x = ag.facts["inv_x"]
    rsag = 2 * inv_x / n
    if "rsag_time_per_unit" in cert and number(cert["rsag_time_per_unit"], "rsag time") != rsag:
        v.fail(f"rsag_time_per_unit {cert['rsag_time_per_unit']} is not 2·inv_x/N = "
               f"{frac_str(rsag)}")
    lower = Fraction(0)
    if "bound6_cut" in cert:
        c6 = topo.node_set(cert["bound6_cut"], "bound6_cut")
        claimed6 = cert.get("bound6_time_per_unit")
        b6 = cuts.allreduce_bound6(topo, c6, None if claimed6 is None else number(claimed6, "b6"))
        v.absorb(b6)
        lower = max(lower, b6.facts.get("bound6_time_per_unit", Fraction(0)))
    if "bound7_cuts" in cert:
        raw = cert["bound7_cuts"]
        if not isinstance(raw, Mapping):
            raise InputError("bound7_cuts must be an object {node: [nodes]}")
        c7 = {topo.compute_node(k, "bound7_cuts key"): topo.node_set(s, f"bound7_cuts[{k}]")
              for k, s in raw.items()}
        claimed7 = cert.get("bound7_time_per_unit")
        b7 = cuts.allreduce_bound7(topo, c7, None if claimed7 is None else number(claimed7, "b7"))
        v.absorb(b7)
        lower = max(lower, b7.facts.get("bound7_time_per_unit", Fraction(0)))
    if lower > rsag:
        v.fail(f"the lower bound {frac_str(lower)} exceeds the achievable RS+AG time "
               f"{frac_str(rsag)}: the certificate contradicts itself")
    if cert.get("rsag_proven_optimal") is True and lower != rsag:
        v.fail(f"rsag_proven_optimal is claimed, but the proven lower bound "
               f"{frac_str(lower)} is below the RS+AG time {frac_str(rsag)}")
    v.facts.update({"algbw": 1 / rsag, "lower_bound_time_per_unit": lower,
                    "proven_optimal": lower == rsag})
    return v
