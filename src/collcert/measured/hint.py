"""A hint, not a diagnosis: which single what-if change (docs/whatif.md) would bring the
certified optimum down to a measured rate.

Three changes are tried, each a family in one factor f: one NIC's links at f times their
capacity; every NIC of one box at f; every link between boxes at f. For the collectives
whose optimum is a cut bound (allgather and reduce-scatter: N·B⁺(S)/|S ∩ V_c|, Zhao &
Krishnamurthy 2023, Thm 1; broadcast and reduce: the least B⁺(S) from / to the root,
App. A; allreduce's RS+AG: half of allgather's), the optimum is the least of lines
φ_S·(a_S + f·b_S) over cuts S, where b_S is the capacity of the family's links leaving S:
concave in f. Each certified optimum gives its witness cut S, so its line; the largest f
at which the lines found so far reach the measurement is tried next, and the search
stops when the certified optimum there equals the measurement exactly (a few optima,
each by max-flows). Where the topology's switches add and the in-network optimum equals
the cut-set bound C (Zhou & Sun 2026, Thm 1: the least B⁺(S) over cuts with compute
nodes on both sides, here), the same search runs on C. The factor is exact; what it means for the machine is the
operator's to judge: a NIC at a fraction of its rate, a misrouted rail, a slow switch.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from collcert.reference.model import Topology, fraction_str

MAX_OPTIMA = 12  # certified optima per family before giving up


@dataclass
class Hint:
    """One what-if family: ``factor`` (None: cannot reach the measurement), the changed
    links, and in words."""

    family: str
    text: str
    factor: Fraction | None
    links: list[tuple[Any, Any]]
    optima: int  # certified optima computed


def families(topology: Topology) -> list[tuple[str, str, list[tuple[Any, Any]]]]:
    """(family, description, links) for the three changes: one NIC (the first box's first),
    one box's NICs (the first box's), every link between boxes."""
    box_of = _box_of(topology)
    if len(set(box_of.values())) < 2:
        return []
    between = [e for e in topology.capacity if box_of.get(e[0]) != box_of.get(e[1])]
    nics = sorted({v for e in between for v in e
                   if v in box_of and not topology.is_compute(v)}, key=str)
    out: list[tuple[str, str, list[tuple[Any, Any]]]] = []
    if nics:
        first = nics[0]
        box0 = [v for v in nics if box_of[v] == box_of[first]]
        out.append(("one NIC", f"every link of {first}",
                    [e for e in topology.capacity if first in e]))
        out.append(("one box's NICs", f"every link of box {box_of[first]}'s {len(box0)} NICs "
                    f"({', '.join(map(str, box0[:3]))}{', …' if len(box0) > 3 else ''})",
                    [e for e in topology.capacity if e[0] in box0 or e[1] in box0]))
    cables = len({frozenset(e) for e in between})
    out.append(("every link between boxes", f"the {cables} links between boxes (both "
                "directions)", between))
    return out


def _box_of(topology: Topology) -> dict[Any, int]:
    """The box (NCCL's node: :func:`collcert.reference.baselines.find_boxes`) of every
    compute node, and of every switch whose neighbours with a box are all in one box (its
    NVSwitch, its NICs); switches joining boxes (the network) have none."""
    from collcert.reference.baselines import find_boxes

    box_of: dict[Any, int] = {v: i for i, box in enumerate(find_boxes(topology)) for v in box}
    near: dict[Any, set[Any]] = {}
    for u, v in topology.capacity:
        near.setdefault(u, set()).add(v)
        near.setdefault(v, set()).add(u)
    changed = True
    while changed:
        changed = False
        for w in topology.switch_nodes:
            if w in box_of:
                continue
            seen = {box_of[x] for x in near.get(w, ()) if x in box_of}
            mixed = any(x not in box_of and not topology.is_compute(x) and _touches_other(
                x, seen, near, box_of) for x in near.get(w, ()))
            if len(seen) == 1 and not mixed:
                box_of[w] = seen.pop()
                changed = True
    return box_of


def _touches_other(x: Any, seen: set[int], near: dict[Any, set[Any]],
                   box_of: dict[Any, int]) -> bool:
    """Whether switch ``x`` (no box yet) reaches a box other than ``seen``'s directly."""
    return any(box_of.get(y) is not None and box_of[y] not in seen for y in near.get(x, ()))


def solve(topology: Topology, collective: str, root: Any, target: Fraction,
          links: list[tuple[Any, Any]]) -> tuple[Fraction | None, int]:
    """The largest f ≤ 1 at which the certified optimum (topology units) is ``target``
    when ``links`` run at f times their capacity; None when the family cannot get there
    (its links cross no bottleneck cut, or even at 1/1024 they leave the optimum above)."""
    chosen = set(links)
    lines: list[tuple[Fraction, Fraction, Fraction]] = []  # (phi, a, b)
    f = Fraction(1)
    for count in range(1, MAX_OPTIMA + 1):
        value, cut = _optimum(topology, collective, root, chosen, f)
        if value == target:
            return f, count
        if cut is not None:
            a = sum((c for e, c in topology.capacity.items()
                     if e[0] in cut and e[1] not in cut and e not in chosen), Fraction(0))
            b = sum((c for e, c in topology.capacity.items()
                     if e[0] in cut and e[1] not in cut and e in chosen), Fraction(0))
            if a + f * b:
                lines.append((value / (a + f * b), a, b))
        nxt = _next_factor(lines, target)
        if nxt is None or nxt <= 0:  # no cut found yet that the family brings low enough
            if f <= Fraction(1, 1024) or value < target:
                return None, count
            nxt = f / 4  # look lower
        if nxt == f:
            return None, count
        f = min(nxt, Fraction(1))
    return None, MAX_OPTIMA


def _next_factor(lines: list[tuple[Fraction, Fraction, Fraction]],
                 target: Fraction) -> Fraction | None:
    """The largest f with min over the lines of φ(a + f·b) ≤ target (lines with b = 0
    above the target never reach it); None when no line can."""
    best: Fraction | None = None
    for phi, a, b in lines:
        if b == 0:
            if phi * a <= target:
                return Fraction(1)  # a bottleneck the family does not touch is low enough
            continue
        f = (target / phi - a) / b
        best = f if best is None or f > best else best
    return best


def _optimum(topology: Topology, collective: str, root: Any, links: set[tuple[Any, Any]],
             f: Fraction) -> tuple[Fraction, frozenset[Any] | None]:
    """The certified optimum (and its witness cut) with ``links`` at f × capacity; for
    allreduce RS+AG (half of allgather, whose cut it keeps)."""
    from collcert.reference.model import what_if

    if f == 1:
        t = topology
    else:
        specs = [f"{u}>{v}={fraction_str(c * f)}" for (u, v), c in topology.capacity.items()
                 if (u, v) in links]
        w = what_if(topology, degrade=specs)
        if w.topology is None:
            return Fraction(0), None
        t = w.topology
    if collective == "allreduce-cut":  # Zhou & Sun's C: the in-network optimum when equal
        return _cut_set(t)
    from collcert.reference.forestcoll import optimum

    opt = optimum(t, collective, root=None if root is None else t.lookup(str(root)))
    _check(t, opt)
    cut = frozenset(opt.cut) if opt.cut is not None else None
    return opt.algbw, cut


def _cut_set(t: Topology) -> tuple[Fraction, frozenset[Any] | None]:
    """The cut-set bound C (Zhou & Sun 2026, Thm 1) and its witness cut, checked."""
    from collcert.certify.allreduce import Graph, check_cut_set
    from collcert.reference.allreduce import cut_set_bound

    cs = cut_set_bound(t)
    if not check_cut_set(Graph(t.to_json()), cs.certificate(t)).ok:
        raise RuntimeError("internal: a what-if cut-set bound did not check")
    return Fraction(cs.value), frozenset(cs.cut)


def _check(t: Topology, opt: Any) -> None:
    from collcert.certify.forestcoll import check_optimum
    from collcert.certify.model import Topo

    verdict = check_optimum(Topo(t.to_json()), opt.certificate())
    if not verdict.ok:
        raise RuntimeError("internal: a what-if optimum's certificate did not check: "
                           + "; ".join(verdict.all_reasons()[:3]))


def hints(topology: Topology, collective: str, root: Any, target: Fraction,
          progress: Callable[[str], None] | None = None) -> list[Hint]:
    """Every family's factor for ``target`` (the measured peak, topology units)."""
    out = []
    for family, what, links in families(topology):
        if progress:
            progress(f"hint: {family}")
        f, count = solve(topology, collective, root, target, links)
        out.append(Hint(family, what, f, links, count))
    return out
