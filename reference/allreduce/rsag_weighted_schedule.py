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
picks the most balanced shards); ForestColl's weighted packing takes positive
weights only, so such a schedule is refused (exit 2) with that reason.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from ..forestcoll import Schedule, schedule
from ..model import ScheduleError, Topology, show
from .rsag_weighted import WeightedRSAG, weighted_rsag


@dataclass
class WeightedRSAGSchedule:
    """Reduce-scatter then allgather trees with the optimal shards, and their proof."""

    result: WeightedRSAG
    schedule: Schedule
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def time_per_unit(self) -> Fraction:
        return self.schedule.time_per_unit

    @property
    def algbw(self) -> Fraction:
        return self.schedule.algbw

    def to_json(self, *, certificates: bool = True) -> dict[str, Any]:
        doc = self.schedule.to_json(certificates=False, compact=False)
        doc["generator"]["method"] = "rsag-weighted"
        if certificates:
            doc["certificates"] = {"rsag_weighted": self.result.certificate()}
        return doc

    def summary(self) -> str:
        t = self.result.topology
        sched = self.schedule
        zero = [v for v, f in self.result.shards.items() if not f]
        return (f"allreduce by weighted RS+AG on {t.name or 'topology'} ({t.num_compute} compute "
                f"nodes, {len(t.switch_nodes)} switches): algbw {show(self.algbw)} {t.unit}, time "
                f"per unit {show(self.time_per_unit)}; reduce-scatter then allgather, "
                f"{len(sched.trees)} trees; equals the certified weighted RS+AG optimum"
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
    if all(shards):
        rs = schedule(t, "reduce-scatter", weights=shards, engine=engine)
        ag = schedule(t, "allgather", weights=shards, engine=engine)
        phases = [rs.phases[0], ag.phases[0]]
        opt = ag.optimum
    else:
        zero = [v for v, f in r.shards.items() if not f]
        raise ScheduleError(f"every optimal choice of weighted RS+AG gives compute node "
                            f"{zero[0]!r} no shard, and ForestColl's weighted tree packing "
                            "needs a positive shard per compute node: no schedule is built; "
                            "use --method lp (ForestColl's LP (5), at least as fast)")
    sched = Schedule("allreduce", t, phases, opt, weights=dict(r.shards))
    if sched.time_per_unit != r.time_per_unit:
        raise RuntimeError(f"internal: the weighted RS+AG trees take {sched.time_per_unit}, "
                           f"not the optimum {r.time_per_unit}")
    t2 = time.perf_counter()
    return WeightedRSAGSchedule(r, sched, {"optimum": t1 - t0, "trees": t2 - t1})
