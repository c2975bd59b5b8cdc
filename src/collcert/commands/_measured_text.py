"""The text report of ``collcert measured``: the run, the model, one table per series, and
what the numbers say."""

from __future__ import annotations

import os
from fractions import Fraction
from typing import Any

from collcert.reference.model import fraction_str

VERDICT_WORDS = {"corrupted": "CORRUPTED", "above": "ABOVE THE OPTIMUM",
                 "above-schedule": "above collcert's schedule", "far-below": "FAR BELOW",
                 "below": "below", "no-optimum": "no optimum"}


def _num(x: Fraction) -> str:
    return fraction_str(x) if x.denominator == 1 else f"{fraction_str(x)} (≈{float(x):.2f})"


def _size(n: Fraction | int) -> str:
    n = int(n)
    for unit, div in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= div:
            return f"{n / div:.4g} {unit}"
    return f"{n} B"


def report(m: Any) -> list[str]:
    """The report of one :class:`collcert.measured.Measured`."""
    run = m.run_info
    where = f"{os.path.basename(m.source)}, line {m.first_line}"
    version = f", NCCL {run['nccl_version']}" if run.get("nccl_version") else ""
    devices = f" ({', '.join(run['devices'][:2])})" if run.get("devices") else ""
    lines = [f"{m.test}_perf, {m.ranks} ranks{devices}{version}: {where}",
             f"  ranks: {m.evidence[-1]}",
             f"  topology: {m.topology}; in-network: {m.in_network}",
             f"  compared: the {m.place} columns; α = {fraction_str(m.alpha)} µs per link where "
             "the topology gives none" + ("" if m.alpha else " (bandwidth only: --alpha US)")]
    for s in m.series:
        lines += [""] + _series(m, s)
    lines.append("")
    for v in m.verdicts:
        lines.append(f"{VERDICT_WORDS[v.kind]}: {v.text}")
    if m.hints:
        lines += _hints(m)
    for note in m.notes + [f"note: {n}" for n in run.get("notes", [])[:5]]:
        lines.append(note)
    return lines


def _series(m: Any, s: Any) -> list[str]:
    head = f"{s.dtype}" + (f", {s.redop}" if s.redop else "") + (
        f", root {s.root} = {s.root_node}" if s.root_node is not None else "")
    out = [f"{head}:"]
    model = s.model
    if model is not None:
        out += _model_lines(m, model)
    names = [c.name for c in model.curves[1:]] if model is not None else []
    w = max([9] + [len(n) + 1 for n in names])
    out.append(f"  {'size':>12} {'time':>9} {'algbw':>8} {'busbw':>8}"
               + (f" {'bound':>8} {'of bound':>8}" if model is not None else "")
               + "".join(f"{n:>{w}}" for n in names))
    out.append(f"  {'(B)':>12} {'(us)':>9} {'(GB/s)':>8} {'(GB/s)':>8}"
               + (f" {'(GB/s)':>8} {'':>8}" if model is not None else "")
               + "".join(f"{'(GB/s)':>{w}}" for _ in names))
    for r in s.rows:
        cells = f"  {r.size:>12} {float(r.time_us):>9.2f} {float(r.algbw):>8.2f} " \
                f"{float(r.busbw):>8.2f}"
        if model is not None:
            frac = "" if r.fraction is None else f"{float(r.fraction):.3f}"
            cells += f" {float(r.bound):>8.2f} {frac:>8}"
            cells += "".join(f"{float(r.models[n]):>{w}.2f}" if n in r.models else
                             f"{'':>{w}}" for n in names)
        out.append(cells)
    peak, half = s.peak(), s.half_peak()
    if peak is not None:
        out.append(f"  peak {float(peak.algbw):.2f} GB/s algbw at {_size(peak.size)} (line "
                   f"{peak.line})" + ("" if model is None else
                                      f": {float(peak.algbw / model.ceiling):.3f} of the optimum"))
    if half is not None:
        first = half is next(r for r in s.rows if r.size > 0)
        where = (f"at or below {_size(half.size)} (the log's smallest size already has half "
                 "the peak algbw)" if first else f"from {_size(half.size)} (measured: the first "
                 "size at half the peak algbw)")
        out.append(f"  bandwidth dominates {where}" + _model_half(model))
    return out


def _model_lines(m: Any, model: Any) -> list[str]:
    from collcert.perftable import busbw_factor

    f = busbw_factor(model.collective, m.ranks)
    kind = "" if model.optimum_kind == "certified" else f" ({model.optimum_kind})"
    out = [f"  certified optimum: algbw {_num(model.optimum)} GB/s, busbw "
           f"{float(model.optimum * f):.2f}{kind}"]
    if model.ceiling != model.optimum:
        out.append(f"  no schedule beats: {_num(model.ceiling)} GB/s ({model.ceiling_kind})")
    if model.cut_set is not None:
        out.append(f"  cut-set bound C: {_num(model.cut_set)} GB/s algbw, busbw "
                   f"{float(model.cut_set * f):.2f} (no algorithm beats it, in-network "
                   "reduction included: Zhou & Sun 2026, Thm 1)")
    for c in model.curves[2:]:
        out.append(f"  {c.label}: {_num(c.algbw)} GB/s (busbw {float(c.algbw * f):.2f}), "
                   f"latency {float(c.latency_us):g} µs (model)")
    for name, why in model.skipped:
        out.append(f"  not applicable: {name}: {why}")
    for note in model.notes:
        out.append(f"  note: {note}")
    return out


def _model_half(model: Any) -> str:
    if model is None:
        return ""
    bound = model.curves[0]
    if not bound.latency_us:
        return "; the model has no latency term (α = 0)"
    return f"; the optimum's bound from {_size(bound.bandwidth_from())} (algbw × D)"


def _hints(m: Any) -> list[str]:
    out = [f"HINT (not a diagnosis): single what-if changes that bring {m.hint_figure} down "
           "to the measured peak (docs/whatif.md):"]
    for h in m.hints:
        if h.factor is None:
            out.append(f"  {h.family}: {h.text} — no factor reaches it (this change alone "
                       "cannot explain the gap)")
        else:
            out.append(f"  {h.family}: {h.text} at {fraction_str(h.factor)} (≈{float(h.factor):.3f}) "
                       "of their capacity")
    return out
