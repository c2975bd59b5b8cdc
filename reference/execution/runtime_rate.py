"""The rate a runtime gives an exported tree schedule, before it is written (issue 22).

A runtime that names ranks, not links (MSCCL: one connection per ordered pair of
GPUs), sends all of a pair's traffic over the link that joins them when there is
one, whatever the schedule's paths say; pairs with no link go through the
switches. Zhao et al. 2026, §6.1 exports ForestColl's trees this way.

Let T be the schedule's time per unit of data (checker 5: max over links of the
load its paths put there / capacity) and d(p, q) the data its tree edges send
from p to q per unit (the exported program sends the same, edge for edge). The
program's time under the audit's model (``collcert audit``: direct link for a linked
pair, the best routing through switches for the rest) is

    T_run = max( max over linked pairs of d(p, q) / c(p, q),  T_rest )

where T_rest is the best time of the unlinked pairs' traffic routed through
switches. A path of the schedule has only switches inside, so a link between
two compute nodes carries only its own pair's traffic; the schedule's own paths
for the unlinked pairs are thus a routing of them that puts on every link at
most the schedule's load there, so T_rest ≤ T. Hence T_run > T exactly when
some linked pair has d(p, q) / c(p, q) > T, and then T_run is that largest ratio.
:func:`export_rate` computes it exactly from the schedule; the fuzz property of
``tests/test_export_rate.py`` compares it with the independent audit of the
written program. A path that starts at a multicast switch (Zhao et al. 2026, §5.6)
has no MSCCL counterpart (it is sent from its G* source), so with multicast
switches T_rest ≤ T is not guaranteed: :attr:`ExportRate.multicast` says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from collcert.certify.forestcoll import read_schedule
from collcert.certify.model import InputError, Topo

from ..model import ScheduleError, fraction_str

if TYPE_CHECKING:
    from ..forestcoll import Schedule
    from ..model import Topology


@dataclass
class ExportRate:
    """The schedule's time per unit and the exported program's, per unit of data."""

    schedule_time: Fraction
    export_time: Fraction  # exact when slower; otherwise at most schedule_time
    pair: tuple[Any, Any] | None  # the linked pair whose direct link is the bottleneck
    pair_data: Fraction  # data that pair sends per unit of M
    capacity: Fraction  # of its direct link
    unit: str
    multicast: bool = False

    @property
    def slower(self) -> bool:
        return self.export_time > self.schedule_time

    def message(self) -> str:
        """In words: at the schedule's rate, or how much slower and why."""
        u = self.unit
        sched = f"algbw {_show(1 / self.schedule_time)} {u}"
        if not self.slower:
            note = (" (paths from multicast switches are sent from their tree edge's source: "
                    "audit the program to know its rate)" if self.multicast else "")
            return f"the export runs at the schedule's rate, {sched}{note}"
        assert self.pair is not None
        p, q = self.pair
        return (f"the exported program runs at algbw {_show(1 / self.export_time)} {u}, "
                f"{_show(self.schedule_time / self.export_time)} of the schedule's {sched}: "
                f"the runtime sends all that {p} sends to {q} ({_show(self.pair_data)} per "
                f"unit of data) over their direct link {p} -> {q} (capacity "
                f"{_show(self.capacity)}), where the schedule sends part of it through "
                "switches")


class SlowExportError(ScheduleError):
    """The export would run slower than its schedule (raised under ``strict``)."""

    collcert_bad_input = False

    def __init__(self, rate: ExportRate) -> None:
        super().__init__(rate.message())
        self.rate = rate


def export_rate(schedule: Schedule | dict[str, Any], topology: Topology) -> ExportRate:
    """:class:`ExportRate` of ``schedule`` (a Schedule or its ``collcert-schedule/1``
    dict) exported for a runtime that uses the direct link of every linked pair."""
    doc = schedule if isinstance(schedule, dict) else schedule.to_json(certificates=False)
    topo = Topo(topology.to_json())
    try:
        sched = read_schedule(topo, doc)
    except InputError as exc:
        raise ScheduleError(str(exc)) from None
    share_of = _shares(topo, sched.root, sched.weights)
    data: dict[tuple[Any, Any], Fraction] = {}
    load: dict[tuple[Any, Any], Fraction] = {}
    schedule_time = Fraction(0)
    multicast = False
    for phase in sched.phases:
        phase_load: dict[tuple[Any, Any], Fraction] = {}
        for tree in phase.trees:
            amount = Fraction(tree.multiplicity, phase.k) * share_of.get(tree.root, 0)
            for e in tree.edges:
                pair = (e.src, e.dst)
                data[pair] = data.get(pair, Fraction(0)) + amount
                multicast |= e.path[0] != e.src or e.path[-1] != e.dst
                for h in zip(e.path, e.path[1:]):
                    phase_load[h] = phase_load.get(h, Fraction(0)) + amount
        for h, x in phase_load.items():
            load[h] = load.get(h, Fraction(0)) + x
        schedule_time += max((x / topo.cap[h] for h, x in phase_load.items()),
                             default=Fraction(0))
    if sched.overlap:
        schedule_time = max((x / topo.cap[h] for h, x in load.items()), default=Fraction(0))
    worst: tuple[Any, Any] | None = None
    worst_time = Fraction(0)
    for pair, d in data.items():
        if pair in topo.cap and d / topo.cap[pair] > worst_time:
            worst, worst_time = pair, d / topo.cap[pair]
    export_time = max(worst_time, schedule_time)
    return ExportRate(schedule_time, export_time, worst if export_time > schedule_time else None,
                      data.get(worst, Fraction(0)) if worst else Fraction(0),
                      topo.cap[worst] if worst else Fraction(0), topology.unit, multicast)


def _shares(topo: Topo, root: Any, weights: dict[Any, Fraction] | None) -> dict[Any, Fraction]:
    """Each root's share of the data M (broadcast / reduce: all of it)."""
    if root is not None:
        return {root: Fraction(1)}
    if weights is None:
        return {c: Fraction(1, topo.n) for c in topo.compute}
    total = sum(weights.values())
    return {c: w / total for c, w in weights.items()}


def _show(q: Fraction) -> str:
    s = fraction_str(q)
    return s if q.denominator == 1 else f"{s} (≈ {float(q):.6g})"


def rated_document(schedule: Schedule | dict[str, Any], topology: Topology | None,
                   strict: bool) -> dict[str, Any]:
    """The schedule's JSON document for an exporter, after refusing (``strict``) a
    program slower than the schedule: a dict schedule is rated only when ``topology``
    is given (it carries no capacities), a Schedule on its own topology."""
    doc = schedule if isinstance(schedule, dict) else schedule.to_json(certificates=False)
    if topology is None and not isinstance(schedule, dict):
        topology = schedule.topology
    if strict and topology is not None:
        rate = export_rate(doc, topology)
        if rate.slower:
            raise SlowExportError(rate)
    return doc
