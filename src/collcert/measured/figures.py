"""The model's side of a measurement: the certified optimum of the collective on the
machine, NCCL's algorithms and the others of :mod:`collcert.reference.baselines`, each on
the α-β model (docs/alpha-beta.md), all checked by ``collcert.certify`` before use.

``collcert compare`` computes the same rows (:func:`collcert.reference.baselines.compare`);
this module only chooses them (NCCL's by default: every registry name starting
``nccl-``, so new NCCL algorithms appear without a change here) and turns them into curves
in GB/s, as nccl-tests prints. Allreduce adds the cut-set bound C of Zhou & Sun 2026
(Thm 1), which no algorithm beats on the model, in-network reduction included; alltoall
has its maximum-concurrent-flow optimum and no baselines.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from collcert.reference.model import CollcertError, Topology

COMPARED = ("allgather", "reduce-scatter", "allreduce", "broadcast", "reduce")
GB = 10**9


def default_baselines() -> tuple[str, ...]:
    """NCCL's algorithms in the baselines' registry (``nccl-ring``, ``nccl-tree``, and any
    ``nccl-…`` added later: NVLS, CollNet, PAT)."""
    from collcert.reference.baselines import BASELINES

    return tuple(n for n in BASELINES if n.startswith("nccl-"))


@dataclass(frozen=True)
class Curve:
    """time(M) = M / algbw + latency: one schedule (or the bound) on the α-β model."""

    name: str
    label: str
    kind: str  # "bound", "optimum", "lp5", "baseline"
    algbw: Fraction  # GB/s, exact: the bandwidth term
    latency_us: Fraction

    def time_us(self, size: int) -> Fraction:
        return Fraction(size, 1000) / self.algbw + self.latency_us

    def algbw_at(self, size: int) -> Fraction:
        """size / time in GB/s at ``size`` bytes."""
        t = self.time_us(size)
        return Fraction(size, 1000) / t if t else self.algbw

    def bandwidth_from(self) -> Fraction:
        """The size (bytes) from which the bandwidth term M / algbw is at least the latency
        term: M ≥ algbw × latency (Hockney's n½, where algbw is half its limit)."""
        return self.algbw * self.latency_us * 1000


@dataclass
class Model:
    """What the model says for one collective (and root) on the machine."""

    collective: str
    root: Any
    optimum: Fraction  # GB/s: the certified optimum column
    optimum_kind: str
    ceiling: Fraction  # GB/s: what no schedule of the model beats (>= optimum)
    ceiling_kind: str
    curves: list[Curve]  # the bound first
    cut_set: Fraction | None = None  # allreduce: Zhou & Sun's C, GB/s
    skipped: list[tuple[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    latency_bound: Any = None  # the Latency D of the bound
    in_network: bool = False  # the optimum is the in-network model's (switches that add)


def build_model(topology: Topology, collective: str, root: Any, sizes: Sequence[int],
                alpha: Fraction, baselines: Sequence[str],
                progress: Callable[[str], None] | None = None) -> Model:
    """The certified figures of ``collective`` on ``topology``, and the baselines' curves at
    ``sizes`` (bytes) with ``alpha`` µs per link where the topology gives none."""
    from collcert.reference.execution import (
        bytes_per_unit,
        latency_lower_bound,
        link_alphas,
    )

    gbps = bytes_per_unit(topology.unit) / GB  # GB/s in one unit of the topology
    alphas = link_alphas(topology, alpha)
    if collective == "alltoall":
        return _alltoall(topology, gbps, alphas)
    if collective not in COMPARED:
        raise CollcertError(f"no certified optimum for {collective}")
    from collcert.reference.baselines import compare

    cmp = compare(topology, collective, root, sizes=list(sizes), alpha=alpha,
                  names=list(baselines), progress=progress)
    optimum = cmp.optimum * gbps
    ceiling, kind = optimum, cmp.optimum_kind
    if cmp.bound is not None and cmp.bound * gbps > optimum:
        ceiling, kind = cmp.bound * gbps, "the proven upper bound (Zhao & Krishnamurthy 2023, App. B)"
    lat = latency_lower_bound(topology, collective, alphas, cmp.root)
    curves = [Curve("bound", "certified optimum + latency bound", "bound", ceiling,
                    lat.latency)]
    for r in cmp.rows:  # ForestColl's own schedule is "forestcoll": the bound is the optimum
        curves.append(Curve("forestcoll" if r.name == "optimum" else r.name, r.label, r.kind,
                            r.algbw * gbps,
                            r.latency_us if r.latency_us is not None else Fraction(0)))
    model = Model(collective, cmp.root, optimum, cmp.optimum_kind, ceiling, kind, curves,
                  skipped=list(cmp.skipped), notes=list(cmp.notes), latency_bound=lat)
    if collective == "allreduce":
        model.cut_set = _cut_set(topology) * gbps
        inn = _in_network(topology)
        if inn is not None:  # the model the topology declares: switches that add
            lower, upper, what = inn
            model.optimum, model.ceiling = lower * gbps, upper * gbps
            model.optimum_kind = what
            model.ceiling_kind = ("the in-network model's certified upper bound"
                                  if upper != lower else what)
            model.in_network = True
            curves[0] = Curve("bound", "certified optimum (in-network model) + latency bound",
                              "bound", model.ceiling, lat.latency)
    return model


def _in_network(topology: Topology) -> tuple[Fraction, Fraction, str] | None:
    """The certified allreduce rate of the in-network model the topology declares
    (reducing switches: NVLS, SHARP; :func:`collcert.reference.innetwork.in_network_rate`,
    checked by :func:`collcert.certify.innetwork.check_in_network`): (lower, upper, what),
    a bracket that is exact where a schedule meets a bound. None when no switch adds."""
    if not topology.in_network:
        return None
    from collcert.certify.innetwork import check_in_network
    from collcert.reference.innetwork import in_network_rate

    rate = in_network_rate(topology)
    if rate is None:
        return None
    verdict = check_in_network(topology.to_json(), rate.certificate())
    if not verdict.ok:
        raise RuntimeError("internal: the in-network certificate did not check: "
                           + "; ".join(verdict.all_reasons()[:3]))
    what = (f"{rate.model}, certified" if rate.exact else
            f"{rate.model}: the best schedule found, certified; no schedule beats "
            f"{rate.upper}")
    return Fraction(rate.lower), Fraction(rate.upper), what


def _cut_set(topology: Topology) -> Fraction:
    """Zhou & Sun 2026's cut-set bound C (Thm 1), checked by collcert.certify."""
    from collcert.certify.allreduce import Graph, check_cut_set
    from collcert.reference.allreduce import cut_set_bound

    cs = cut_set_bound(topology)
    verdict = check_cut_set(Graph(topology.to_json()), cs.certificate(topology))
    if not verdict.ok:
        raise RuntimeError("internal: the cut-set bound's certificate did not check: "
                           + "; ".join(verdict.all_reasons()[:3]))
    return Fraction(cs.value)


def _alltoall(topology: Topology, gbps: Fraction, alphas: dict[Any, Fraction]) -> Model:
    """Alltoall: the maximum concurrent flow's algbw, checked; no baselines."""
    from collcert.certify.alltoall import check_alltoall_optimum
    from collcert.reference.alltoall import alltoall_optimum
    from collcert.reference.execution import latency_lower_bound

    opt = alltoall_optimum(topology)
    verdict = check_alltoall_optimum(topology.to_json(), opt.certificate())
    if not verdict.ok:
        raise RuntimeError("internal: the alltoall certificate did not check: "
                           + "; ".join(verdict.all_reasons()[:3]))
    kind = "maximum concurrent flow (certified)"
    value = opt.algbw * gbps
    lat = latency_lower_bound(topology, "allgather", alphas)  # every pair must meet
    return Model("alltoall", None, value, kind, value, kind,
                 [Curve("bound", "certified optimum + latency bound", "bound", value,
                        lat.latency)],
                 notes=["alltoall: no baselines (NCCL runs it as point-to-point sends)"],
                 latency_bound=lat)
