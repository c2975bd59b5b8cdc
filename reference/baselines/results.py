"""What a comparison holds: its rows and figures (:func:`.comparison.compare` fills them)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from collcert.reference.model import CollcertError, fraction_str

from .fabric import Node


class ComparisonRefused(CollcertError):
    """A baseline checked faster than the certified optimum: something is wrong."""


@dataclass
class Row:
    """One schedule of a comparison."""

    name: str
    label: str
    kind: str  # "optimum", "lp5" or "baseline"
    algbw: Fraction
    busbw: Fraction
    ratio: Fraction | None
    latency_us: Fraction | None = None
    hops: int = 0
    times_us: list[Fraction] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    document: dict[str, Any] | None = field(default=None, repr=False)
    phases: Any = field(default=None, repr=False)  # the trees as the checker read them

    def to_json(self, sizes: Sequence[int]) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name, "label": self.label, "kind": self.kind,
            "algbw": fraction_str(self.algbw), "busbw": fraction_str(self.busbw),
            "ratio_to_optimum": None if self.ratio is None else fraction_str(self.ratio),
            "notes": self.notes}
        if self.latency_us is not None:
            out["latency_us"] = fraction_str(self.latency_us)
            out["latency_hops"] = self.hops
            out["sizes"] = [{"size": s, "time_us": fraction_str(t),
                             "alg_bw_gbps": fraction_str(Fraction(s, 1000) / t) if t else None}
                            for s, t in zip(sizes, self.times_us)]
        return out


@dataclass
class Comparison:
    """What :func:`compare` found."""

    topology: str
    collective: str
    root: Node | None
    unit: str
    ranks: int
    optimum: Fraction
    optimum_kind: str
    bound: Fraction | None
    rows: list[Row]
    skipped: list[tuple[str, str]]
    sizes: list[int] = field(default_factory=list)
    alpha: Fraction = Fraction(0)
    best: list[str] = field(default_factory=list)  # the fastest row's name per size
    notes: list[str] = field(default_factory=list)
    model: str = "routing"  # the model the optimum holds in (in-network: switches that add)
    checker_topology: Any = field(default=None, repr=False)  # certify's view, read once
    lp: Any = field(default=None, repr=False)  # ForestColl's LP (5), solved and checked

    def row(self, name: str) -> Row:
        return next(r for r in self.rows if r.name == name)

    def to_json(self) -> dict[str, Any]:
        return {
            "topology": self.topology, "collective": self.collective,
            "root": None if self.root is None else str(self.root), "unit": self.unit,
            "ranks": self.ranks, "optimum_algbw": fraction_str(self.optimum),
            "optimum_kind": self.optimum_kind, "optimum_model": self.model,
            "bound_algbw": None if self.bound is None else fraction_str(self.bound),
            "alpha_us": fraction_str(self.alpha),
            "rows": [r.to_json(self.sizes) for r in self.rows],
            "not_applicable": [{"name": n, "why": w} for n, w in self.skipped],
            "best_per_size": [{"size": s, "best": b} for s, b in zip(self.sizes, self.best)],
            "notes": self.notes}
