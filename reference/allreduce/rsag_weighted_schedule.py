"""The weighted RS+AG schedule: reduce-scatter trees, then allgather trees, best shards.

Zhao et al. 2026, §5.7 (non-uniform allgather) and Zhao & Krishnamurthy 2023,
App. B: with the shards f of :func:`.rsag_weighted.weighted_rsag`, ForestColl's
weighted reduce-scatter and weighted allgather (:func:`collcert.reference.forestcoll.schedule`
with ``weights``: k·w_u unit trees per root packed after switch removal, Thm 12)
each take 1/W* per unit of data, so the two phases, one after the other, take
2/W*: the weighted RS+AG optimum. The schedule is one ``allreduce`` document
(docs/schedule-format.md) with the shards as ``weights`` and no ``overlap``;
``collcert audit`` recomputes its time from the trees.

A shard of 0 happens only where every optimal choice has one (the optimum
picks the most balanced shards). ForestColl's weighted packing takes positive
weights only; without switches such a node simply roots no tree, and both
phases are packed on the links themselves (D·w_u trees per root in D·c, Thm 12,
whose condition the optimum's flows are); with switches the schedule is
refused (exit 2) with that reason.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from ..forestcoll import Schedule, pack_trees, schedule
from ..model import Node, ScheduleError, Topology, fraction_str, show
from .rsag_weighted import WeightedRSAG, weighted_rsag

FORMAT = "collcert-schedule/1"


@dataclass
class WeightedRSAGSchedule:
    """Reduce-scatter then allgather trees with the optimal shards, and their proof.

    ``schedule``: ForestColl's two weighted phases (every shard positive);
    otherwise ``doc``: the trees packed directly (no switches, some shard 0)."""

    result: WeightedRSAG
    schedule: Schedule | None
    doc: dict[str, Any] | None = None
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def time_per_unit(self) -> Fraction:
        """The trees' time (checked against the optimum when they were built)."""
        return self.result.time_per_unit

    @property
    def algbw(self) -> Fraction:
        return 1 / self.time_per_unit

    @property
    def num_trees(self) -> int:
        if self.schedule is not None:
            return len(self.schedule.trees)
        assert self.doc is not None
        return sum(len(ph["trees"]) for ph in self.doc["phases"])

    def to_json(self, *, certificates: bool = True) -> dict[str, Any]:
        if self.schedule is not None:
            doc = self.schedule.to_json(certificates=False, compact=False)
        else:
            assert self.doc is not None
            doc = json.loads(json.dumps(self.doc))
        doc["generator"]["method"] = "rsag-weighted"
        if certificates:
            doc["certificates"] = {"rsag_weighted": self.result.certificate()}
        return doc

    def summary(self) -> str:
        t = self.result.topology
        zero = [v for v, f in self.result.shards.items() if not f]
        return (f"allreduce by weighted RS+AG on {t.name or 'topology'} ({t.num_compute} compute "
                f"nodes, {len(t.switch_nodes)} switches): algbw {show(self.algbw)} {t.unit}, time "
                f"per unit {show(self.time_per_unit)}; reduce-scatter then allgather, "
                f"{self.num_trees} trees; equals the certified weighted RS+AG optimum"
                + (f"; {len(zero)} compute nodes own no shard" if zero else "")
                + f"; took {sum(self.timings.values()):.2f} s.")


def weighted_rsag_schedule(topology: Topology, *, engine: str = "auto",
                           result: WeightedRSAG | None = None) -> WeightedRSAGSchedule:
    """Trees that reach the weighted RS+AG optimum exactly (see the module docstring)."""
    t = topology
    t0 = time.perf_counter()
    r = result or weighted_rsag(t, engine=engine)
    t1 = time.perf_counter()
    shards = r.weights()
    sched: Schedule | None = None
    doc: dict[str, Any] | None = None
    if all(shards):
        rs = schedule(t, "reduce-scatter", weights=shards, engine=engine)
        ag = schedule(t, "allgather", weights=shards, engine=engine)
        sched = Schedule("allreduce", t, [rs.phases[0], ag.phases[0]], ag.optimum,
                         weights=dict(r.shards))
        took = sched.time_per_unit
    elif not t.switch_nodes:
        doc = _direct_doc(r, engine)
        took = _doc_time(t, doc, r.shards)
    else:
        zero = [v for v, f in r.shards.items() if not f]
        raise ScheduleError(f"every optimal choice of weighted RS+AG gives compute node "
                            f"{zero[0]!r} no shard, and ForestColl's weighted tree packing "
                            "through switches needs a positive shard per compute node: no "
                            "schedule is built; use --method lp (ForestColl's LP (5), at least "
                            "as fast)")
    if took != r.time_per_unit:
        raise RuntimeError(f"internal: the weighted RS+AG trees take {took}, "
                           f"not the optimum {r.time_per_unit}")
    t2 = time.perf_counter()
    return WeightedRSAGSchedule(r, sched, doc, {"optimum": t1 - t0, "trees": t2 - t1})


def _direct_doc(r: WeightedRSAG, engine: str) -> dict[str, Any]:
    """Both phases packed on the links themselves (no switches): D·w_u trees per root u in
    D·c (Zhao & Krishnamurthy 2023, Thm 12; the flows of the optimum are its condition)."""
    t = r.topology
    w = {v: f * r.total for v, f in r.shards.items()}
    d = 1
    for x in [*w.values(), *t.capacity.values()]:
        d = d * x.denominator // math.gcd(d, x.denominator)
    supply = {v: int(x * d) for v, x in w.items()}
    k = 1
    for units in supply.values():
        if units:
            k = k * units // math.gcd(k, units)
    phases = []
    for coll, rev in (("reduce-scatter", True), ("allgather", False)):
        caps = {((b, a) if rev else (a, b)): int(c * d) for (a, b), c in t.capacity.items()}
        packing = pack_trees(list(t.compute_nodes), caps, supply, engine=engine)
        trees = []
        for b in packing.batches:
            edges = [(y, x) if rev else (x, y) for x, y in b.edges]
            trees.append({"root": b.root, "multiplicity": b.multiplicity * k // supply[b.root],
                          "direction": "in" if rev else "out",
                          "edges": [{"src": u, "dst": v, "path": [u, v]} for u, v in edges]})
        phases.append({"collective": coll, "k": k, "trees": trees})
    return {"format": FORMAT, "collective": "allreduce", "topology": t.content_hash(),
            "topology_name": t.name, "unit": t.unit, "compute_nodes": list(t.compute_nodes),
            "root": None, "weights": {str(v): fraction_str(f) for v, f in r.shards.items()},
            "phases": phases,
            "claimed": {"algbw": fraction_str(r.value),
                        "time_per_unit": fraction_str(r.time_per_unit)},
            "generator": {"tool": "collcert", "options": {"scale": d}}}


def _doc_time(t: Topology, doc: dict[str, Any], shards: dict[Node, Fraction]) -> Fraction:
    """The phases' times summed, from the trees: a tree of root v with multiplicity m of k
    carries f_v·m/k of the data over each of its links."""
    total = Fraction(0)
    for ph in doc["phases"]:
        load: dict[tuple[Node, Node], Fraction] = {}
        for tr in ph["trees"]:
            share = shards[tr["root"]] * Fraction(tr["multiplicity"], ph["k"])
            for e in tr["edges"]:
                load[(e["src"], e["dst"])] = load.get((e["src"], e["dst"]), Fraction(0)) + share
        total += max(x / t.capacity[e] for e, x in load.items())
    return total
