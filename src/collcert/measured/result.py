"""What a measurement set beside the model says: per size, the figures; per run, the
verdicts (exit 1 for data that is wrong or faster than the model allows), the plateau's
efficiency, the size from which bandwidth dominates, and the what-if hints."""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from collcert.reference.model import fraction_str

from .figures import Model
from .hint import Hint

FAR_BELOW = Fraction(4, 5)  # a plateau under 80 % of the optimum gets the what-if hints


@dataclass
class SizeRow:
    """One message size: measured (GB/s, as printed) beside the model at that size."""

    line: int
    size: int
    time_us: Fraction
    algbw: Fraction
    busbw: Fraction
    bound: Fraction  # the certified optimum's α-β bound at this size, algbw GB/s
    models: dict[str, Fraction]  # curve name -> algbw GB/s at this size

    @property
    def fraction(self) -> Fraction | None:
        return self.algbw / self.bound if self.bound else None

    def to_json(self) -> dict[str, Any]:
        return {"line": self.line, "size": self.size, "time_us": fraction_str(self.time_us),
                "alg_bw": fraction_str(self.algbw), "bus_bw": fraction_str(self.busbw),
                "bound_alg_bw": fraction_str(self.bound),
                "fraction_of_bound": None if self.fraction is None
                else fraction_str(self.fraction),
                "models_alg_bw": {k: fraction_str(v) for k, v in self.models.items()}}


@dataclass
class Series:
    """The rows of one data type, reduction and root (nccl-tests ``-d all`` makes several)."""

    dtype: str
    redop: str | None
    root: int | None
    root_node: Any
    rows: list[SizeRow]
    model: Model | None

    def peak(self) -> SizeRow | None:
        rows = [r for r in self.rows if r.size > 0]
        return max(rows, key=lambda r: (r.algbw, r.size)) if rows else None

    def half_peak(self) -> SizeRow | None:
        """The first size at which the measured algbw reaches half its peak: where the
        bandwidth term starts to dominate the measurement (Hockney's n½)."""
        top = self.peak()
        if top is None:
            return None
        return next((r for r in self.rows if r.size > 0 and 2 * r.algbw >= top.algbw), None)


@dataclass
class Verdict:
    kind: str  # "corrupted", "above", "above-schedule", "far-below", "below", "no-optimum"
    text: str

    @property
    def exit_code(self) -> int:
        return 1 if self.kind in ("corrupted", "above") else 0


@dataclass
class Measured:
    """One run set beside the model of the machine."""

    source: str
    first_line: int
    test: str
    collective: str | None
    ranks: int
    evidence: list[str]
    topology: str
    in_network: str
    place: str  # "out-of-place" or "in-place"
    alpha: Fraction
    series: list[Series]
    verdicts: list[Verdict] = field(default_factory=list)
    hints: list[Hint] = field(default_factory=list)
    hint_figure: str = ""
    notes: list[str] = field(default_factory=list)
    run_info: dict[str, Any] = field(default_factory=dict)

    @property
    def exit_code(self) -> int:
        return max((v.exit_code for v in self.verdicts), default=0)

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source, "first_line": self.first_line, "test": f"{self.test}_perf",
            "collective": self.collective, "ranks": self.ranks, "rank_evidence": self.evidence,
            "topology": self.topology, "in_network_model": self.in_network,
            "place": self.place, "alpha_us": fraction_str(self.alpha),
            "series": [_series_json(s) for s in self.series],
            "verdicts": [{"kind": v.kind, "text": v.text} for v in self.verdicts],
            "hints": {"label": "a hint, not a diagnosis", "figure": self.hint_figure,
                      "changes": [_hint_json(h) for h in self.hints]},
            "notes": self.notes, "run": self.run_info, "exit_code": self.exit_code}


def _series_json(s: Series) -> dict[str, Any]:
    m = s.model
    out: dict[str, Any] = {"type": s.dtype, "redop": s.redop, "root": s.root,
                           "root_node": None if s.root_node is None else str(s.root_node),
                           "rows": [r.to_json() for r in s.rows]}
    peak, half = s.peak(), s.half_peak()
    if peak is not None:
        out["peak"] = {"size": peak.size, "alg_bw": fraction_str(peak.algbw),
                       "line": peak.line}
    if half is not None:
        out["bandwidth_dominates_from"] = {"size": half.size, "line": half.line}
    if m is not None:
        out["model"] = {
            "optimum_alg_bw": fraction_str(m.optimum), "optimum_kind": m.optimum_kind,
            "ceiling_alg_bw": fraction_str(m.ceiling), "ceiling_kind": m.ceiling_kind,
            "cut_set_bound_alg_bw": None if m.cut_set is None else fraction_str(m.cut_set),
            "efficiency": None if peak is None else fraction_str(peak.algbw / m.ceiling),
            "latency_bound_us": fraction_str(m.curves[0].latency_us),
            "curves": [{"name": c.name, "label": c.label, "kind": c.kind,
                        "alg_bw": fraction_str(c.algbw), "latency_us": fraction_str(c.latency_us),
                        "bandwidth_dominates_from": fraction_str(c.bandwidth_from())}
                       for c in m.curves],
            "not_applicable": [{"name": n, "why": w} for n, w in m.skipped],
            "notes": m.notes}
    return out


def _hint_json(h: Hint) -> dict[str, Any]:
    return {"family": h.family, "change": h.text,
            "factor": None if h.factor is None else fraction_str(h.factor),
            "links": len(h.links), "optima_computed": h.optima}
