"""Upper bounds on the in-network allreduce rate: a cut, and partitions into parts.

**Cut** (Zhou & Sun 2026, Thm 1): for a node set S with a compute node inside and
one outside, every structure (:mod:`.structures`) must carry data out of S, so
the rate is at most B⁺(S). This holds for any schedule at all, network coding
and switches that add included; one reducing switch joining all the GPUs reaches
it (each GPU sends its data once to the switch, which adds and multicasts).

**Partition** (a new bound, derived in docs/in-network.md from the counting of
Patarasuk & Yuan, Zhao & Krishnamurthy 2023, Cor. 18): let S_1 … S_k (k ≥ 2) be
disjoint node sets, each with a compute node, that together hold every compute
node and every reducing switch (the nodes where streams may meet). In a
structure, each S_i without the root is entered by the broadcast tree, and the
reduce tree, seen part by part, joins the k parts, so at least k−1 of its edges
run from one part into another, each entering its head's part. That is
2(k−1) streams entering parts, so

    rate ≤ Σ_i B⁻(S_i) / (2(k−1)).

Mirrored (*out* side): if the parts hold every node that may copy (compute
nodes, reducing and multicast switches), the broadcast tree leaves parts k−1
times and the reduce tree leaves every part without the root once:
rate ≤ Σ_i B⁺(S_i) / (2(k−1)). With every switch forwarding only, the parts
{v} give bound (7) of Zhao & Krishnamurthy 2023 (in its summed form).

:func:`upper_bounds` tries the cut-set bound C and a few partitions: the
*boxes* (the parts the merge nodes fall into when switches that only forward are
taken out) and the *singletons* (one compute node a part, each reducing switch
joined to the compute node it has most capacity to). Each comes with a
certificate that :mod:`collcert.certify.innetwork` checks by recounting.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ..allreduce import cut_set_bound
from ..model import Link, Node, Topology, fraction_str
from .structures import copy_nodes, merge_nodes


@dataclass(frozen=True)
class UpperBound:
    """A certified upper bound on the rate: a cut, a partition (side "in" or "out"), or a
    box-dual (link lengths ``y`` and boxes, :mod:`.boxdual`)."""

    value: Fraction
    kind: str  # "cut", "partition" or "box-dual"
    parts: tuple[frozenset[Node], ...]
    side: str = "out"
    label: str = ""
    y: tuple[tuple[Link, Fraction], ...] = ()

    def certificate(self, t: Topology) -> dict[str, Any]:
        def listed(s: frozenset[Node]) -> list[Node]:
            return [v for v in t.nodes if v in s]
        out: dict[str, Any] = {"kind": self.kind, "value": fraction_str(self.value)}
        if self.kind == "cut":
            out["cut"] = listed(self.parts[0])
        elif self.kind == "box-dual":
            out["boxes"] = [listed(p) for p in self.parts]
            out["y"] = [[u, v, fraction_str(c)] for (u, v), c in self.y if c]
        else:
            out["side"] = self.side
            out["parts"] = [listed(p) for p in self.parts]
        return out

    def text(self) -> str:
        if self.kind == "box-dual":
            return (f"box-dual bound ({len(self.parts)} box{'es' if len(self.parts) > 1 else ''}"
                    ": link lengths from the symmetric LP's dual, every structure's cost "
                    "counted box by box, NVLS round trips included)")
        if self.kind == "cut":
            side = self.parts[0]
            shown = ("{" + ", ".join(sorted(map(str, side))) + "}" if len(side) <= 4
                     else f"a set of {len(side)} nodes")
            return f"cut-set bound C (Zhou & Sun 2026, Thm 1): S = {shown}, B⁺(S) = {self.value}"
        what = {"singletons": "one compute node per part", "boxes": "the boxes"}[self.label]
        return (f"partition bound, {len(self.parts)} parts ({what}), streams "
                f"{'entering' if self.side == 'in' else 'leaving'} parts")


def partition_value(t: Topology, parts: Iterable[frozenset[Node]], side: str) -> Fraction:
    """Σ B⁻(S_i) (side "in") or Σ B⁺(S_i) (side "out") over 2(k−1): the bound of disjoint
    parts (the caller checks what they must hold)."""
    parts = list(parts)
    where = {v: i for i, p in enumerate(parts) for v in p}
    total = Fraction(0)
    for (u, v), c in t.capacity.items():
        inner = where.get(v if side == "in" else u)
        if inner is not None and where.get(u if side == "in" else v) != inner:
            total += c
    return total / (2 * (len(parts) - 1))


def _singletons(t: Topology, side: str) -> list[frozenset[Node]]:
    """One compute node a part; each switch that must be held joins the compute node it
    shares most capacity with (the first one when none)."""
    held = (merge_nodes(t) if side == "in" else copy_nodes(t)) - set(t.compute_nodes)
    parts: dict[Node, set[Node]] = {v: {v} for v in t.compute_nodes}
    for w in sorted(held, key=str):
        best = max(t.compute_nodes, key=lambda v: (t.capacity.get((v, w), 0)
                                                   + t.capacity.get((w, v), 0)))
        parts[best].add(w)
    return [frozenset(p) for p in parts.values()]


def _boxes(t: Topology, side: str) -> list[frozenset[Node]] | None:
    """The components of the nodes that must be held (merge or copy nodes, with the
    links among them); a component without a compute node joins the first part."""
    held = merge_nodes(t) if side == "in" else copy_nodes(t)
    adj: dict[Node, set[Node]] = {v: set() for v in held}
    for u, v in t.capacity:
        if u in held and v in held:
            adj[u].add(v)
            adj[v].add(u)
    comps: list[set[Node]] = []
    seen: set[Node] = set()
    for s in [*t.compute_nodes, *sorted(held - set(t.compute_nodes), key=str)]:
        if s in seen:
            continue
        comp, stack = {s}, [s]
        seen.add(s)
        while stack:
            for w in adj[stack.pop()]:
                if w not in seen:
                    seen.add(w)
                    comp.add(w)
                    stack.append(w)
        comps.append(comp)
    with_compute = [c for c in comps if c & set(t.compute_nodes)]
    if len(with_compute) < 2 or len(with_compute) == t.num_compute:
        return None  # one part, or the singletons already
    for c in comps:
        if not c & set(t.compute_nodes):
            with_compute[0] |= c
    return [frozenset(c) for c in with_compute]


def upper_bounds(t: Topology, *, engine: str = "auto", cut: Any = None) -> list[UpperBound]:
    """The cut-set bound (``cut``: a ``CutSetBound`` already computed) and the partition
    bounds tried (see the module docstring), least first."""
    cut = cut if cut is not None else cut_set_bound(t, engine=engine)
    out = [UpperBound(cut.value, "cut", (frozenset(cut.cut),))]
    for side in ("in", "out"):
        for label, parts in (("singletons", _singletons(t, side)), ("boxes", _boxes(t, side))):
            if parts is not None and len(parts) >= 2:
                out.append(UpperBound(partition_value(t, parts, side), "partition",
                                      tuple(parts), side, label))
    return sorted(out, key=lambda b: b.value)
