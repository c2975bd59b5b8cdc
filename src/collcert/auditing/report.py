"""What an audit found: :class:`AuditReport`, as JSON and in words.

One report per audited schedule, whatever its format: the verdict and its
reasons, the exact time and algbw (Fractions, per unit of data), the
certified optimum and the ratio to it, the bound no schedule beats and its
witness, and the checks that ran. ``to_json()`` is what ``collcert audit
--json`` prints and ``summary()`` what it prints without ``--json``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from collcert.certify.model import frac_str as fraction_str


@dataclass
class AuditReport:
    """The outcome of an audit. Exact numbers are Fractions (per unit of data)."""

    valid: bool
    reasons: list[str]
    algbw: Fraction | None
    time_per_unit: Fraction | None
    optimum_algbw: Fraction | None
    ratio: Fraction | None
    routing: str
    format: str = "json"
    collective: str = ""
    unit: str = ""
    notes: list[str] = field(default_factory=list)
    checks: list[dict[str, Any]] = field(default_factory=list)
    lower_bound_time_per_unit: Fraction | None = None
    bottleneck: list[str] = field(default_factory=list)  # the schedule's busiest link(s)
    proven_time_per_unit: Fraction | None = None  # no run of this schedule is faster
    bound_algbw: Fraction | None = None  # no schedule of the collective is faster
    bound_witness: str = ""  # the proof of bound_algbw, in words
    multicast: bool = False
    optimum_kind: str = "certified"  # what optimum_algbw is (see OptimumInfo.kind)
    runtimes: list[dict[str, Any]] = field(default_factory=list)  # loadability.attach

    def to_json(self) -> dict[str, Any]:
        def q(x: Fraction | None) -> str | None:
            return None if x is None else fraction_str(x)

        return {
            "valid": self.valid,
            "verdict": "VALID" if self.valid else "INVALID",
            "reasons": list(self.reasons),
            "collective": self.collective,
            "format": self.format,
            "unit": self.unit,
            "algbw": q(self.algbw),
            "time_per_unit": q(self.time_per_unit),
            "optimum_algbw": q(self.optimum_algbw),
            "optimum_kind": self.optimum_kind,
            "ratio": q(self.ratio),
            "lower_bound_time_per_unit": q(self.lower_bound_time_per_unit),
            "proven_time_per_unit": q(self.proven_time_per_unit),
            "bottleneck": list(self.bottleneck),
            "bound_algbw": q(self.bound_algbw),
            "bound_witness": self.bound_witness,
            "routing": self.routing,
            "notes": list(self.notes),
            "checks": self.checks,
            "runtimes": list(self.runtimes),
        }

    def summary(self) -> str:
        from collcert.reference.model import show

        lines = [("VALID" if self.valid else "INVALID")
                 + f" {self.collective} schedule ({self.format})"]
        for r in self.reasons:
            lines.append(f"  - {r}")
        if self.time_per_unit is not None:
            lines.append(f"  time per unit  = {show(self.time_per_unit)} ({self.unit})^-1")
        if self.algbw is not None:
            lines.append(f"  algbw          = {show(self.algbw)} {self.unit}")
        if self.optimum_algbw is not None:
            lines.append(f"  optimum algbw  = {show(self.optimum_algbw)} {self.unit} "
                         f"({self.optimum_kind})")
        if self.ratio is not None:
            of = "the optimum" if self.optimum_kind == "certified" else "that figure"
            lines.append(f"  ratio          = {show(self.ratio)} of {of}")
        lines.append(f"  routing        : {self.routing}")
        for rt in self.runtimes:
            lines.append(f"  runtime        : {_runtime_line(rt)}")
        for n in self.notes:
            lines.append(f"  note: {n}")
        return "\n".join(lines)


def _runtime_line(r: dict[str, Any]) -> str:
    """One runtime's judgement (loadability.attach), as Loadability.describe prints it."""
    if r["status"] == "loads":
        calls = f", for {', '.join(r['calls'])}" if r.get("calls") else ""
        return f"{r['runtime']}: loads it{calls}"
    where = ", ".join(x for x in (r.get("rule") and f"rule {r['rule']}",
                                  r.get("line") is not None and f"line {r['line']}" or "") if x)
    text = f"{r['runtime']}: {r['status']}" + (f" ({where})" if where else "")
    text += f": {r['message']}" if r.get("message") else ""
    return text + (f" [{r['source']}]" if r.get("source") else "")
