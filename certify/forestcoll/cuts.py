"""Checker 1: cut witnesses (lower bounds on the time of a collective).

Zhao & Krishnamurthy 2023, eq. (1): every node set S ⊂ V with S ⊉ V_c must send the shards of
its compute nodes out through its boundary, so allgather takes at least
(M/N)·|S ∩ V_c| / B⁺(S). Broadcast from r (eq. (5)): a set S ∋ r missing a
compute node forces time ≥ M / B⁺(S); reduce is the mirror (r ∉ S ∋ a compute
node). Allreduce (Zhao & Krishnamurthy 2023, App. B): a set S with S ∩ V_c ∉ {∅, V_c} gives
T ≥ M / B⁺(S) (bound 6); sets S_v with S_v ∩ V_c = {v} give
T ≥ 2(N−1)/(N · max_v B⁺(S_v)) (bound 7).

Each function recomputes the numbers from the topology and the set alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction

from ..model import Node, Topo, Verdict, frac_str


def _names(nodes: frozenset[Node], topo: Topo, limit: int = 8) -> str:
    order = [v for v in topo.nodes if v in nodes]
    text = ", ".join(str(v) for v in order[:limit])
    return "{" + text + (f", … ({len(order)} nodes)" if len(order) > limit else "") + "}"


def allgather_cut(
    topo: Topo, cut: frozenset[Node], claimed_inv_x: Fraction | None = None,
    weights: Mapping[Node, int] | None = None,
) -> Verdict:
    """S ⊉ V_c with ratio |S ∩ V_c| / B⁺(S) (weighted: Σ_{S∩V_c} w / B⁺(S))."""
    v = Verdict("allgather cut")
    outside = [c for c in topo.compute if c not in cut]
    if not outside:
        v.fail(f"the cut {_names(cut, topo)} contains every compute node; a witness cut "
               "must leave at least one out")
        return v
    b_out = topo.out_capacity(cut)
    inside = sum((weights or {}).get(c, 1) for c in topo.compute if c in cut)
    if b_out == 0:
        v.fail(f"the cut {_names(cut, topo)} has no outgoing capacity: the topology is "
               "disconnected")
        return v
    ratio = Fraction(inside, 1) / b_out
    v.facts["ratio"] = ratio
    v.facts["cut_capacity"] = b_out
    if claimed_inv_x is not None and ratio != claimed_inv_x:
        v.fail(f"the cut {_names(cut, topo)} has |S ∩ V_c| / B⁺(S) = {inside}/{frac_str(b_out)}"
               f" = {frac_str(ratio)}, not the claimed 1/x* = {frac_str(claimed_inv_x)}")
    return v


def rooted_cut(
    topo: Topo, cut: frozenset[Node], root: Node, reduce: bool, claimed: Fraction | None
) -> Verdict:
    """Broadcast: r ∈ S ∌ some compute node; reduce: r ∉ S ∋ some compute node.

    ``claimed`` is the claimed algbw, which must equal B⁺(S).
    """
    v = Verdict("reduce cut" if reduce else "broadcast cut")
    if reduce:
        if root in cut:
            v.fail(f"the reduce cut contains the root {root!r}; it must not")
        if not any(c in cut for c in topo.compute):
            v.fail("the reduce cut contains no compute node; it must contain one")
    else:
        if root not in cut:
            v.fail(f"the broadcast cut does not contain the root {root!r}")
        if all(c in cut for c in topo.compute):
            v.fail("the broadcast cut contains every compute node; one must be outside")
    b_out = topo.out_capacity(cut)
    v.facts["cut_capacity"] = b_out
    if claimed is not None and b_out != claimed:
        v.fail(f"the cut {_names(cut, topo)} has B⁺(S) = {frac_str(b_out)}, not the claimed "
               f"algbw {frac_str(claimed)}")
    return v


def allreduce_bound6(topo: Topo, cut: frozenset[Node], claimed: Fraction | None) -> Verdict:
    """S ∩ V_c ∉ {∅, V_c} gives T ≥ 1/B⁺(S) per unit of data."""
    v = Verdict("allreduce bound (6)")
    inside = sum(1 for c in topo.compute if c in cut)
    if inside in (0, topo.n):
        v.fail(f"bound (6) cut {_names(cut, topo)} holds {inside} of {topo.n} compute nodes; "
               "it must hold some but not all")
        return v
    bound = 1 / topo.out_capacity(cut)
    v.facts["bound6_time_per_unit"] = bound
    if claimed is not None and bound != claimed:
        v.fail(f"bound (6): 1/B⁺(S) = {frac_str(bound)}, not the claimed {frac_str(claimed)}")
    return v


def allreduce_bound7(
    topo: Topo, cuts: Mapping[Node, frozenset[Node]], claimed: Fraction | None
) -> Verdict:
    """Sets S_v with S_v ∩ V_c = {v} for every v: T ≥ 2(N−1)/(N · max_v B⁺(S_v))."""
    v = Verdict("allreduce bound (7)")
    best = Fraction(0)
    for c in topo.compute:
        s = cuts.get(c)
        if s is None:
            v.fail(f"bound (7) has no cut for compute node {c!r}")
            continue
        others = [d for d in topo.compute if d in s and d != c]
        if c not in s or others:
            v.fail(f"bound (7) cut of {c!r} must contain {c!r} and no other compute node "
                   f"(it contains {len(others)} others{'' if c in s else f' and not {c!r}'})")
            continue
        best = max(best, topo.out_capacity(s))
    if not v.ok or best == 0:
        return v
    n = topo.n
    bound = Fraction(2 * (n - 1), n) / best
    v.facts["bound7_time_per_unit"] = bound
    if claimed is not None and bound != claimed:
        v.fail(f"bound (7): 2(N−1)/(N·max B⁺(S_v)) = {frac_str(bound)}, not the claimed "
               f"{frac_str(claimed)}")
    return v
