"""Everything collcert knows about the allreduce rate of a topology, in one report.

``allreduce_rate(topology)`` gathers, each exact and with its certificate (the
model in brackets: *routing*, schedules that only forward and reduce data;
*coding*, network coding allowed):

``rsag``           ForestColl's RS+AG schedule (Zhao & Krishnamurthy 2023, App. B):
                   reduce-scatter trees, then allgather trees [routing]
``rsag_weighted``  the same two phases with the best unequal shards (Zhao et al. 2026,
                   §5.7 weights; :mod:`.rsag_weighted`) [routing]
``forestcoll_lp``  ForestColl's allreduce LP (5) (Zhao et al. 2026, App. G): the best
                   reduce+broadcast tree schedule [routing]
``mac_bc_lp``      R_LP of Zhou & Sun 2026, Thm 2 (no switches): a lower bound on R*;
                   equals LP (5) without switches [routing]
``bound7``         Zhao & Krishnamurthy 2023, Cor. 18 (Patarasuk & Yuan): an upper
                   bound for routing schedules only [routing]
``cut_set_bound``  the cut-set bound of Zhou & Sun 2026, Thm 1 (= Zhao & Krishnamurthy
                   2023, bound (6)): an upper bound on R* even with coding [coding]

All are *rates*: data per unit of time in the topology's bandwidth unit (an
allreduce of M takes M / rate), so RS+AG ≤ weighted RS+AG ≤ LP (5) ≤ min(bound (7), C) and
R_LP ≤ R* ≤ C, where R* is the best rate with network coding. A value that
does not apply is ``None`` with the reason in ``reasons``.

``in_network`` (set by the caller, :func:`collcert.reference.innetwork.in_network_rate`,
which this room cannot import without a cycle): the in-network optimum where switches
add (NVLS, SHARP), an exact figure or a bracket, in its own model.

:meth:`AllreduceRate.best` is the top-level figure: the best rate a certified schedule
reaches (RS+AG, weighted RS+AG, LP (5), R_LP, or the in-network schedule), with the key
and the model it holds in; ``to_json()`` puts it in ``algbw`` (RS+AG's own rate stays in
``rsag_algbw``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from ..forestcoll import Optimum, optimum
from ..model import CollcertError, Topology, fraction_str, show
from .cut_set import CutSetBound, cut_set_bound
from .lp5 import ForestCollLP, forestcoll_lp
from .rate import MacBcLP, mac_bc_lp
from .rate_closed import closed_form_mac_bc
from .rsag_weighted import WeightedRSAG, weighted_rsag

Progress = Callable[[int, int], None]

KEYS = ("cut_set_bound", "mac_bc_lp", "forestcoll_lp", "rsag_weighted")
ACHIEVED = ("rsag", "rsag_weighted", "forestcoll_lp", "mac_bc_lp")
"""The figures a certified schedule reaches, in the order :meth:`AllreduceRate.best` prefers
on a tie (the simplest schedule first)."""
MAX_MAC_BC_NODES = 256
"""Above this many compute nodes ``allreduce_rate`` skips the MAC-BC LP (with the reason)."""
MAX_WEIGHTED_NODES = 256
"""Above this many compute nodes ``allreduce_rate`` skips weighted RS+AG (with the reason):
one max-flow per compute node per round, two per compute node in its certificate."""

LABELS = {
    "rsag": ("RS+AG schedule: reduce-scatter trees, then allgather trees "
             "(Zhao & Krishnamurthy 2023, App. B)",
             "routing", "achieved by `collcert schedule -c allreduce`"),
    "rsag_weighted": ("weighted RS+AG: the same two phases, best unequal shards "
                      "(Zhao et al. 2026, §5.7)", "routing",
                      "achieved by `collcert schedule -c allreduce --method rsag-weighted`"),
    "forestcoll_lp": ("ForestColl allreduce LP (5) (Zhao et al. 2026, App. G)", "routing",
                      "achieved by `collcert schedule -c allreduce --method lp`"),
    "mac_bc_lp": ("MAC-BC LP R_LP (Zhou & Sun 2026, Thm 2)", "routing",
                  "achieved by reduce+broadcast trees; a lower bound on R*"),
    "bound7": ("bound (7), Zhao & Krishnamurthy 2023, Cor. 18 (Patarasuk & Yuan)", "routing",
               "an upper bound for routing schedules only, not on R*"),
    "cut_set_bound": ("cut-set bound C (Zhou & Sun 2026, Thm 1 = Zhao & Krishnamurthy 2023, "
                      "bound (6))", "coding", "an upper bound on R*, network coding allowed"),
}


@dataclass
class AllreduceRate:
    """The allreduce rate figures of one topology (see the module docstring)."""

    topology: Topology
    cut_set: CutSetBound
    mac_bc: MacBcLP | None
    forestcoll: ForestCollLP | None
    rsag: Optimum | None
    reasons: dict[str, str] = field(default_factory=dict)
    weighted: WeightedRSAG | None = None
    in_network: Any = None  # an InNetworkRate (collcert.reference.innetwork), set by the caller

    def best(self) -> tuple[str, Fraction, str] | None:
        """(key, rate, model) of the best rate a certified schedule reaches: the first
        largest of RS+AG, weighted RS+AG, LP (5), R_LP (model ``routing``) and the
        in-network schedule (its model in words); None when none applies."""
        vals = self.values
        found: list[tuple[str, Fraction, str]] = [
            (k, v, "routing") for k in ACHIEVED if (v := vals[k]) is not None]
        if self.in_network is not None:
            found.append(("in_network", Fraction(self.in_network.lower),
                          str(self.in_network.model)))
        if not found:
            return None
        top = max(v for _, v, _ in found)
        return next(item for item in found if item[1] == top)

    @property
    def values(self) -> dict[str, Fraction | None]:
        """Every rate by key (``None`` where it does not apply)."""
        rs = self.rsag
        return {
            "rsag": None if rs is None else rs.algbw,
            "rsag_weighted": None if self.weighted is None else self.weighted.value,
            "forestcoll_lp": None if self.forestcoll is None else self.forestcoll.value,
            "mac_bc_lp": None if self.mac_bc is None else self.mac_bc.value,
            "bound7": None if rs is None else 1 / rs.extra["bound7_time_per_unit"],
            "cut_set_bound": self.cut_set.value,
        }

    def chain(self) -> list[tuple[str, Fraction]]:
        """The values that apply, lowest first (ties keep the order of LABELS)."""
        vals = self.values
        order = list(LABELS)
        return sorted(((k, v) for k, v in vals.items() if v is not None),
                      key=lambda kv: (kv[1], order.index(kv[0])))

    def to_json(self, *, certificates: bool = False) -> dict[str, Any]:
        t = self.topology
        out: dict[str, Any] = {
            "collective": "allreduce",
            "topology": t.content_hash(),
            "unit": t.unit,
            "num_compute": t.num_compute,
        }
        if self.rsag is not None:
            out.update(self.rsag.to_json())
        best = self.best()  # issue 30: the top-level figure is the best certified rate
        out["algbw"] = None if best is None else fraction_str(best[1])
        out["time_per_unit"] = None if best is None or not best[1] else fraction_str(1 / best[1])
        out["algbw_key"] = None if best is None else best[0]
        out["algbw_model"] = None if best is None else best[2]
        out["in_network"] = None if self.in_network is None else self.in_network.to_json()
        vals = self.values
        for key in KEYS:
            v = vals[key]
            out[key] = None if v is None else fraction_str(v)
        out["rsag_algbw"] = None if vals["rsag"] is None else fraction_str(vals["rsag"])
        out["bound7_algbw"] = None if vals["bound7"] is None else fraction_str(vals["bound7"])
        out["cut_set_cut"] = [v for v in t.nodes if v in self.cut_set.cut]
        if self.mac_bc is not None:
            out["corollary_2_1"] = self.mac_bc.stats["corollary_2_1"]
        out["not_applicable"] = dict(self.reasons)
        thm19 = self.thm19  # Zhao & Krishnamurthy 2023, Thm 19 decided exactly (issue 23)
        out["thm19"] = None if thm19 is None else thm19.certificate(t)
        tree = self.bidirected_tree  # Zhou & Sun 2026, Thm 3 (issue 23)
        out["bidirected_tree"] = None if tree is None else tree.to_json(t)
        out["chain"] = [{"key": k, "rate": fraction_str(v), "model": LABELS[k][1]}
                        for k, v in self.chain()]
        if certificates:
            out["certificates"] = self.certificates()
        return out

    @property
    def bidirected_tree(self) -> Any:
        """Zhou & Sun 2026, Thm 3 when the topology is a bi-directed tree of compute nodes
        (R* = R_LP = C = min β, :func:`.closed_forms.bidirected_tree_rate`), else None."""
        from ..model import TopologyError
        from .tree_rate import bidirected_tree_rate

        try:
            return bidirected_tree_rate(self.topology)
        except TopologyError:
            return None

    @property
    def thm19(self) -> Any:
        """Zhao & Krishnamurthy 2023, Thm 19 decided exactly (:mod:`.rsag_condition`): an
        ``RsagCondition`` (computed once), or None without RS+AG or when every rate is 0."""
        if self.rsag is None or self.cut_set.value == 0:
            return None
        if "_thm19" not in self.__dict__:
            from .rsag_condition import rsag_condition
            self.__dict__["_thm19"] = rsag_condition(self.topology, opt=self.rsag,
                                                     cut=self.cut_set)
        return self.__dict__["_thm19"]

    def certificates(self) -> dict[str, Any]:
        t = self.topology
        certs: dict[str, Any] = {"cut_set_bound": self.cut_set.certificate(t)}
        if self.mac_bc is not None:
            certs["mac_bc_lp"] = self.mac_bc.certificate(t)
        if self.forestcoll is not None:
            certs["forestcoll_lp"] = self.forestcoll.certificate()
        if self.rsag is not None:
            certs["rsag"] = self.rsag.certificate()
        if self.weighted is not None:
            certs["rsag_weighted"] = self.weighted.certificate()
        if self.in_network is not None:
            certs["in_network"] = self.in_network.certificate()
        return certs

    def summary(self) -> str:
        t = self.topology
        switches = len(t.switch_nodes)
        lines = [f"allreduce on {t.name or 'topology'} ({t.num_compute} compute nodes, "
                 f"{switches} switch{'' if switches == 1 else 'es'}, {len(t.capacity)} links): "
                 f"rates in {t.unit} (an allreduce of M takes M / rate), exact"]
        top = self.best()
        if top is not None:
            lines.append(f"  best certified rate: {show(top[1])} {t.unit} [{top[2]}]"
                         + (" (the in-network optimum)" if top[0] == "in_network"
                            and self.in_network.exact else ""))
        chain = self.chain()
        width = max(len(show(v)) for _, v in chain)
        prev: Fraction | None = None
        for key, value in chain:
            rel = "  " if prev is None else ("= " if value == prev else "≤ ")
            label, model, role = LABELS[key]
            lines.append(f"  {rel}{show(value):<{width}}  {label}")
            lines.append(f"  {'':{width + 2}}  [{model}] {role}")
            prev = value
        vals = self.values
        achieved = [v for k, v in vals.items() if v is not None and k in ACHIEVED]
        upper = self.cut_set.value
        if upper == 0:
            lines.append("  every rate is 0: no link leaves the cut-set witness below, so its "
                         "compute nodes can never learn the others' data (the network is not "
                         "strongly connected)")
        elif self.in_network is not None and self.in_network.lower == upper:
            lines.append(f"  R* (the best rate, network coding allowed) = {show(upper)}: the "
                         "in-network schedule, adding in switches, reaches the cut-set bound")
        elif achieved and max(achieved) == upper:
            lines.append(f"  R* (the best rate, network coding allowed) = {show(upper)}: "
                         "a tree schedule reaches the cut-set bound")
        elif self.in_network is not None and achieved \
                and self.in_network.lower > max(achieved):
            lines.append(f"  R* (the best rate, network coding allowed) lies between "
                         f"{show(self.in_network.lower)} (reached by the in-network schedule, "
                         f"adding in switches) and {show(upper)} (cut-set bound)")
        elif achieved:
            lines.append(f"  R* (the best rate, network coding allowed) lies between "
                         f"{show(max(achieved))} (reached by trees) and {show(upper)} "
                         "(cut-set bound)")
        best = vals["forestcoll_lp"]
        for key, what in (("rsag", "RS+AG"), ("rsag_weighted", "weighted RS+AG")):
            if best is not None and vals[key] is not None:
                got = vals[key]
                assert got is not None
                lines.append(f"  {what} reaches the LP (5) optimum" if got == best else
                             f"  {what} reaches {show(got / best)} of the LP (5) optimum")
        if self.weighted is not None and vals["rsag"] != vals["rsag_weighted"]:
            lines.append("  weighted RS+AG shards: " + ", ".join(
                f"{v}: {show(f)}" for v, f in self.weighted.shards.items()))
        if self.mac_bc is not None:
            lines.append(f"  Corollary 2.1: R_LP ≤ Σβ/(2(K−1)) = "
                         f"{show(Fraction(self.mac_bc.stats['corollary_2_1']))}")
            if "closed_form" in self.mac_bc.stats:  # :mod:`.rate_closed`
                lines.append(f"  R_LP from the closed form of {self.mac_bc.stats['closed_form']}"
                             f" ({self.mac_bc.stats['columns']} MAC-BC networks, no LP), "
                             "meeting Corollary 2.1")
        if self.thm19 is not None:
            lines.append("  " + self.thm19.summary())
        tree = self.bidirected_tree
        if tree is not None:
            lines.append(f"  Zhou & Sun 2026, Thm 3: a bi-directed tree, so R* = min β = "
                         f"{show(tree.value)} (link {tree.edge[0]} -> {tree.edge[1]})")
        inside = ", ".join(str(v) for v in t.nodes if v in self.cut_set.cut)
        lines.append(f"  cut-set witness: S = {{{inside}}}, B⁺(S) = {show(upper)}")
        if self.in_network is not None:
            lines += ["  " + x for x in self.in_network.summary_lines()]
        for key, why in self.reasons.items():
            lines.append(f"  {key}: not computed: {why}")
        return "\n".join(lines)


def allreduce_rate(
    topology: Topology,
    *,
    mac_bc: bool = True,
    forestcoll: bool = True,
    rsag: bool = True,
    engine: str = "auto",
    progress: Progress | None = None,
    stage: Callable[[str], None] | None = None,
    warm: Progress | None = None,
    lp5: Progress | None = None,
    notice: Callable[[str, float], None] | None = None,
) -> AllreduceRate:
    """The certified allreduce rates of ``topology`` (see the module docstring).

    Any directed graph is accepted (``Topology(..., strict=False)``); each
    figure that needs more (no switches, an Eulerian graph) is ``None`` with
    its reason. One compute node is refused: that allreduce needs no
    communication. ``stage(name)`` is called as each figure starts, ``progress`` and
    ``warm`` go to :func:`.rate.mac_bc_lp`, ``lp5`` (rounds, cuts) and ``notice(text,
    seconds)`` (its estimate, before the rounds) to :func:`.lp5.forestcoll_lp`; R_LP comes
    from a closed form where Zhou & Sun 2026 give one (:mod:`.rate_closed`).
    """
    if not isinstance(topology, Topology):
        raise TypeError("allreduce_rate() needs a collcert.Topology")
    t = topology
    say = stage or (lambda name: None)
    say("cut-set bound")
    cut = cut_set_bound(t, engine=engine)
    reasons: dict[str, str] = {}
    mb: MacBcLP | None = None
    if not mac_bc:
        reasons["mac_bc_lp"] = "not asked for"
    elif t.switch_nodes:
        reasons["mac_bc_lp"] = ("defined for networks of compute nodes only (On the Computation "
                                "Rate of All-Reduce has no switches); see forestcoll_lp")
    elif t.num_compute > MAX_MAC_BC_NODES:
        reasons["mac_bc_lp"] = (f"{t.num_compute} compute nodes: column generation would take "
                                f"long here (about a minute at 144 nodes, growing as K³); call "
                                "collcert.reference.allreduce.mac_bc_lp directly")
    else:
        say("MAC-BC LP")
        mb = closed_form_mac_bc(t) or mac_bc_lp(t, progress=progress, warm=warm)
    fc: ForestCollLP | None = None
    if not forestcoll:
        reasons["forestcoll_lp"] = "not asked for"
    else:
        say("LP (5)")
        try:
            fc = forestcoll_lp(t, progress=lp5, notice=notice)
        except CollcertError as exc:
            reasons["forestcoll_lp"] = str(exc)
    rs: Optimum | None = None
    if not rsag:
        reasons["rsag"] = "not asked for"
    elif t.forestcoll_problem is not None:
        reasons["rsag"] = ("RS+AG and bounds (6), (7) need an Eulerian topology "
                           "(Zhao & Krishnamurthy 2023, §1): "
                           + t.forestcoll_problem.split(". ")[0])
    else:
        say("RS+AG")
        rs = optimum(t, "allreduce", engine=engine)
    wr: WeightedRSAG | None = None
    if not rsag:
        reasons["rsag_weighted"] = "not asked for"
    elif rs is None:
        reasons["rsag_weighted"] = "needs what RS+AG needs (see rsag)"
    elif cut.value == 0:
        reasons["rsag_weighted"] = "every rate is 0 (see the cut-set witness)"
    elif t.num_compute > MAX_WEIGHTED_NODES:
        reasons["rsag_weighted"] = (f"{t.num_compute} compute nodes: one max-flow per compute "
                                    "node per round and two per compute node in its certificate "
                                    "would take long here; call collcert.reference.allreduce."
                                    "weighted_rsag directly")
    else:
        say("weighted RS+AG")
        wr = weighted_rsag(t, engine=engine)
    return AllreduceRate(t, cut, mb, fc, rs, reasons, wr)
