"""What a smoke run found: :class:`SmokeReport`, the verdict, the data moved, the times
measured and the algbw the model predicts, as a summary or a JSON object."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from collcert.reference.model import fraction_str, show

INVALID = "INVALID before the run"
"""How a failure found by the audit's checks before a --run-invalid run begins."""

CLAIM = "the schedule's claim"
"""``model_from`` when the algbw is the schedule's own claim (no --topology)."""


@dataclass
class SmokeReport:
    passed: bool
    collective: str
    nranks: int
    name: str
    fmt: str
    backend: str
    devices: list[str]
    on_cpu: bool
    size_bytes: int
    cell_elems: int
    cells: int
    messages: int
    iters: int
    times: list[float] = field(default_factory=list)  # seconds per timed iteration (max over ranks)
    model_algbw: Fraction | None = None
    model_unit: str = ""
    model_from: str = ""
    failures: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    wrong_ranks: int = 0

    def mark_invalid(self, reasons: list[str]) -> None:
        """A run of a schedule the audit's checks refuted (``smoke --run-invalid``): their
        reasons come first, and the result is FAIL whatever the devices did."""
        self.failures[:0] = [f"{INVALID} (the audit's checks): {r}" for r in reasons]
        self.passed = False

    def median_time(self) -> float | None:
        return statistics.median(self.times) if self.times else None

    def measured_algbw_gbps(self) -> float | None:
        t = self.median_time()
        return self.size_bytes / t / 1e9 if t else None

    def to_json(self) -> dict[str, Any]:
        t = self.median_time()
        bw = self.measured_algbw_gbps()
        return {
            "result": "PASS" if self.passed else "FAIL", "collective": self.collective,
            "ranks": self.nranks, "schedule": self.name, "format": self.fmt,
            "backend": self.backend, "devices": self.devices, "on_cpu": self.on_cpu,
            "size_bytes": self.size_bytes, "elements_per_cell": self.cell_elems,
            "cells": self.cells, "messages_per_iteration": self.messages,
            "iterations": self.iters,
            "seconds_per_iteration": None if t is None else f"{t:.6g}",
            "seconds_all": [f"{x:.6g}" for x in self.times],
            "measured_algbw_GBps": None if bw is None else f"{bw:.6g}",
            "model_algbw": None if self.model_algbw is None else fraction_str(self.model_algbw),
            "model_unit": self.model_unit, "model_from": self.model_from,
            "wrong_ranks": self.wrong_ranks, "failures": self.failures, "notes": self.notes,
        }

    def summary(self) -> str:
        head = "PASS" if self.passed else "FAIL"
        verdict = ("every element of every rank's output is right" if self.passed else
                   f"wrong data on {self.wrong_ranks} rank(s)" if self.wrong_ranks else
                   "the schedule is inconsistent")
        if any(f.startswith(INVALID) for f in self.failures):
            verdict = ("the schedule is INVALID; run anyway (--run-invalid), "
                       + ("the devices' output was right nonetheless" if not self.wrong_ranks
                          and self.times else verdict))
        lines = [f"{head} {self.collective} on {self.nranks} ranks ({self.name}, {self.fmt}): "
                 + verdict]
        for f in self.failures:
            lines.append(f"  {f}")
        where = ', '.join(dict.fromkeys(self.devices)) or "nothing (not run)"
        lines.append(f"  backend : {self.backend} on {where}")
        lines.append(f"  data    : M = {self.size_bytes} bytes of int64 ({self.cells} cells of "
                     f"{self.cell_elems} elements), {self.messages} messages per iteration")
        t = self.median_time()
        if t is not None:
            lines.append(f"  time    : {t * 1e3:.3f} ms per iteration (median of {len(self.times)};"
                         f" min {min(self.times) * 1e3:.3f} ms)")
            bw = self.measured_algbw_gbps()
            if self.model_algbw is None:
                model = "model unknown (pass --topology)"
            elif self.model_from == CLAIM:
                model = (f"the schedule claims {show(self.model_algbw)} {self.model_unit}, "
                         "unchecked (pass --topology for the exact model)")
            else:
                model = f"model {show(self.model_algbw)} {self.model_unit} ({self.model_from})"
            lines.append(f"  algbw   : measured {bw:.4g} GB/s; {model}")
        for n in self.notes:
            lines.append(f"  note: {n}")
        return "\n".join(lines)
