"""The allreduce optimum when switches add: a certified figure, or a certified bracket.

``in_network_rate(topology)`` answers in the *in-network model*
(:mod:`.structures`: reduce trees may add at reducing switches, broadcast trees
may branch at switches that copy) with

* a **lower bound**: a schedule that fits the machine, its rate exact. By the
  machine's symmetry (:mod:`.hierarchy`, boxes of GPUs on reducing switches under
  one top switch: DGX H100/B200, GB200 NVL72, any size), by exact column
  generation on a small machine (:mod:`.colgen`, whose dual is then the upper bound
  too), or, elsewhere, ForestColl's LP (5) (its reduce and broadcast trees are
  schedules of this model: switches that forward only);
* an **upper bound**: the least of the cut-set bound C of Zhou & Sun 2026, Thm 1
  (which no schedule beats, network coding included), the partition bounds of
  :mod:`.bounds` and, on a machine of boxes with NVLS switches, the box-dual bound of
  :mod:`.boxdual` (the symmetric LP's own dual, its structures' least cost counted),
  or the exact dual of :mod:`.colgen`.

Equal, the figure is the optimum of the model (``exact``); otherwise both are
printed as a bracket, never a guess. The certificate holds the model (which
switches add and copy, with their rates), the schedule and the bound;
:func:`collcert.certify.innetwork.check_in_network` checks every figure of it.

For reduce-scatter, allgather, reduce and broadcast nothing changes
(:func:`unchanged_reason`): their optima are cut bounds that hold for any
schedule, and ForestColl's schedules reach them with switches that forward only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from ..model import CollcertError, Node, Topology, fraction_str, show
from .bounds import UpperBound, upper_bounds
from .boxdual import box_dual_value
from .colgen import MAX_PRICING_WORK, float_friendly, in_network_lp
from .hierarchy import box_parts, recognise, representatives, symmetric_lp
from .pricing import pricing_work
from .structures import Structure, weighted_json

MAX_EXACT_NODES = 40
"""Column generation with exact pricing runs up to this many nodes (and
:data:`.colgen.MAX_PRICING_WORK`); larger machines without a recognised shape get a bracket."""

UNCHANGED = {
    "allgather": "every GPU's data must leave each set S of GPUs it is in, copied in the "
                 "network or not, so the optimum (Zhao & Krishnamurthy 2023, eq. (1)) is a cut "
                 "bound for any schedule, and ForestColl's trees reach it with switches that "
                 "only forward: copying switches change the traffic, not the optimum",
    "broadcast": "the root's data must cross every cut between the root and a GPU, so the "
                 "optimum min F(root, v) holds for any schedule, and ForestColl's trees reach "
                 "it with switches that only forward",
    "reduce-scatter": "the sums of the shards owned outside S need |V_c − S|·M/N of data "
                      "from inside S whatever adds them, so the optimum (eq. (1) on the "
                      "transposed topology) is a cut bound for any schedule, and ForestColl's "
                      "trees reach it with switches that only forward",
    "reduce": "the root's sum depends on every GPU's data, so min F(v, root) bounds any "
              "schedule, switches that add included, and ForestColl's trees reach it",
}


def unchanged_reason(collective: str) -> str | None:
    """Why switches that add or copy leave this collective's optimum unchanged (None for
    allreduce, where they do change it)."""
    return UNCHANGED.get(collective)


@dataclass
class InNetworkRate:
    """The in-network allreduce rate of one topology: a bracket [lower, upper], exact
    when equal (see the module docstring)."""

    topology: Topology
    lower: Fraction
    upper: Fraction
    method: str                       # how the lower bound was found
    schedule: list[tuple[Structure, Fraction]] = field(default_factory=list)
    generators: list[dict[Node, Node]] = field(default_factory=list)
    bound: UpperBound | None = None   # None: the exact dual of column generation
    dual: tuple[dict[Any, Fraction], dict[Node, Fraction]] | None = None
    lp5_certificate: dict[str, Any] | None = None
    bounds_tried: list[UpperBound] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)

    @property
    def exact(self) -> bool:
        return self.lower == self.upper

    @property
    def model(self) -> str:
        return "in-network: " + self.topology.in_network_model()

    def certificate(self) -> dict[str, Any]:
        t = self.topology
        lower: dict[str, Any] = {"value": fraction_str(self.lower)}
        if self.lp5_certificate is not None:
            lower.update(method="forestcoll_lp", certificate=self.lp5_certificate)
        else:
            lower.update(method="structures", structures=weighted_json(self.schedule),
                         automorphisms=[[[u, w] for u, w in s.items()]
                                        for s in self.generators])
        if self.dual is not None:
            y, z = self.dual
            upper: dict[str, Any] = {"kind": "dual", "value": fraction_str(self.upper),
                                     "y": [[u, v, fraction_str(c)] for (u, v), c in y.items()
                                           if c],
                                     "z": [[w, fraction_str(c)] for w, c in z.items() if c]}
        else:
            assert self.bound is not None
            upper = self.bound.certificate(t)
        return {"kind": "in-network-allreduce", "topology": t.content_hash(),
                "model": {"reducing_switches": [w for w in t.switch_nodes
                                                if w in t.sharp_switches],
                          "nvls_switches": [w for w in t.switch_nodes
                                            if w in t.nvls_switches],
                          "multicast_switches": [w for w in t.switch_nodes
                                                 if w in t.multicast_switches],
                          "reduction_rates": {str(w): fraction_str(r)
                                              for w, r in t.reduction_rates.items()}},
                "lower": lower, "upper": upper}

    def to_json(self) -> dict[str, Any]:
        return {"model": self.model, "exact": self.exact,
                "rate": fraction_str(self.lower) if self.exact else None,
                "lower": fraction_str(self.lower), "upper": fraction_str(self.upper),
                "method": self.method,
                "bound": "dual of the exact LP" if self.bound is None else self.bound.text(),
                "structures": len(self.schedule), "stats": dict(self.stats)}

    def summary_lines(self) -> list[str]:
        head = (f"in-network optimum {show(self.lower)}" if self.exact else
                f"in-network optimum between {show(self.lower)} and {show(self.upper)}")
        how = ("proven by the exact LP's dual" if self.bound is None
               else f"upper bound: {self.bound.text()}")
        return [f"{head} [{self.model}]",
                f"  schedule: {self.method}; {how}"]


def in_network_rate(t: Topology, *, engine: str = "auto", cut: Any = None,
                    lp5: Any = None, stage: Callable[[str], None] | None = None,
                    ) -> InNetworkRate | None:
    """The in-network allreduce rate of ``t`` (module docstring), or None when no switch
    adds (the model is then ForestColl's, whose figures :mod:`..allreduce` gives).

    ``cut``: the cut-set bound already computed (``CutSetBound``); ``lp5``: LP (5) already
    computed (``ForestCollLP``), used as the lower bound where nothing better is found."""
    if not t.in_network:
        return None
    say = stage or (lambda name: None)
    say("in-network upper bounds")
    bounds = upper_bounds(t, engine=engine, cut=cut)
    best = bounds[0]
    if best.value == 0:  # some compute node can never learn the others' data
        return InNetworkRate(t, Fraction(0), Fraction(0), "none: the bound is 0", bound=best,
                             bounds_tried=bounds)
    say("in-network schedule")
    shape = recognise(t)
    small = (len(t.nodes) <= MAX_EXACT_NODES and pricing_work(t) <= MAX_PRICING_WORK
             and float_friendly(t))
    if shape is not None:
        value, weighted, y = symmetric_lp(t, shape.generators, representatives(t, shape))
        if value < best.value and t.nvls_switches:
            bounds = _with_box_dual(t, bounds, box_parts(shape), y)
            best = bounds[0]
        if value == best.value or not small:
            n, g = len(shape.boxes), len(shape.boxes[0])
            return InNetworkRate(t, value, best.value, "averaged over the machine's symmetry "
                                 f"({n} box{'es' if n > 1 else ''} of {g} GPUs, "
                                 f"{len(weighted)} representative structure"
                                 f"{'s' if len(weighted) > 1 else ''})",
                                 weighted, shape.generators, best, bounds_tried=bounds)
    if small:
        res = in_network_lp(t)
        if not res.proven:
            return InNetworkRate(t, res.value, best.value, "column generation, stopped after "
                                 f"{res.stats['seconds']} s (not proven optimal)",
                                 res.structures, [], best, bounds_tried=bounds, stats=res.stats)
        if res.value < best.value:
            return InNetworkRate(t, res.value, res.value, "column generation, exact pricing",
                                 res.structures, [], None, (res.y, res.z),
                                 bounds_tried=bounds, stats=res.stats)
        return InNetworkRate(t, res.value, best.value, "column generation, exact pricing",
                             res.structures, [], best, bounds_tried=bounds, stats=res.stats)
    if lp5 is None:
        from ..allreduce import forestcoll_lp

        try:
            lp5 = forestcoll_lp(t)
        except CollcertError as exc:
            raise CollcertError(
                "no in-network schedule: the machine's shape is not a recognised one, exact "
                f"column generation does not run on it (over {MAX_EXACT_NODES} nodes, too many "
                "switches that add or copy, or capacities over a huge range), and LP (5) is "
                f"not solved ({exc})") from None
    return InNetworkRate(t, lp5.value, best.value, "ForestColl's LP (5) (switches forward)",
                         bound=best, lp5_certificate=lp5.certificate(), bounds_tried=bounds)


def _with_box_dual(t: Topology, bounds: list[UpperBound], boxes: list[list[Node]],
                   y: dict[tuple[Node, Node], Fraction]) -> list[UpperBound]:
    """``bounds`` with the box-dual bound of the symmetric LP's dual added where it holds
    (:mod:`.boxdual`), least first. The dual is tried as it is and averaged with its
    mirror image (y(u→v) and y(v→u)): any lengths give a valid bound, and the LP's
    vertex may put a link pair's whole length on one direction, which the count, by
    least links per box, cannot use."""
    mirror = {e: (y.get(e, Fraction(0)) + y.get((e[1], e[0]), Fraction(0))) / 2
              for e in t.capacity}
    found = []
    for lengths in (y, mirror):
        value = box_dual_value(t, boxes, lengths)
        if value is not None:
            found.append(UpperBound(value, "box-dual", tuple(frozenset(b) for b in boxes),
                                    y=tuple((e, c) for e, c in lengths.items() if c)))
    return sorted([*bounds, *sorted(found, key=lambda b: b.value)[:1]],
                  key=lambda b: b.value)


def attach(report: Any, *, engine: str = "auto",
           stage: Callable[[str], None] | None = None) -> Any:
    """Put the in-network optimum into an allreduce report
    (:func:`collcert.reference.allreduce.allreduce_rate`), reusing its cut-set bound and
    LP (5), or the reason it is missing into its ``reasons``; returns the report, whose
    ``best()`` and ``to_json()["algbw"]`` then count it."""
    try:
        report.in_network = in_network_rate(report.topology, engine=engine,
                                            cut=report.cut_set, lp5=report.forestcoll,
                                            stage=stage)
    except CollcertError as exc:
        report.reasons["in_network"] = str(exc)
    return report
