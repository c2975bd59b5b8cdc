"""Running a schedule on devices and checking every element: the schedule read (any
format), its execution plan, the backend chosen, the run, and the failures explained
(which element, which rank, the data that never arrived; what the MSCCL simulator
says of a program).
"""

from __future__ import annotations

import os
import statistics
from fractions import Fraction
from typing import Any

from collcert.reference.execution import Mismatch, Plan, describe_cell, explain_value
from collcert.reference.model import ScheduleError

from .report import SmokeReport
from .runtime import RankResult, SmokeError, gpu_kind, require_torch

BACKENDS = ("auto", "gloo", "nccl", "single-gpu")
FORMATS = ("json", "forestcoll-xml", "msccl-xml", "mscclpp-json")
ELEM_BYTES = 8  # int64
MAX_ITERS = 10_000
MAX_GLOO_RANKS = 64
"""Most ranks of a gloo run (one process each, a full mesh of connections); auto uses the
single-gpu backend beyond (on the CPU when there is no GPU)."""


def _read(source: str | os.PathLike[str]) -> tuple[str, str]:
    """The schedule's text (a gzip file is read through) and where it came from."""
    p = os.fspath(source)
    if "\n" in p or p.lstrip().startswith(("{", "<")):
        return p, "schedule text"
    from collcert.certify.model import InputError, read_text

    try:
        return read_text(p, 512 * 1024 * 1024), p  # gzip by its magic bytes, size capped
    except InputError as exc:
        raise ScheduleError(str(exc)) from None


def _detect(text: str) -> str:
    head = text.lstrip()[:4096]
    if head.startswith(("{", "[")):
        from .mscclppplan import is_mscclpp

        return "mscclpp-json" if is_mscclpp(head) else "json"
    if head.startswith("<"):
        import re

        m = re.search(r"<algo\b[^>]*>", head, re.IGNORECASE)
        if m and ("ngpus=" in m.group(0) or "nchunksperloop=" in m.group(0)):
            return "msccl-xml"
        return "forestcoll-xml"
    raise ScheduleError("cannot tell the schedule's format: neither JSON nor XML; pass --format")


def load_plan(text: str, fmt: str | None = None, topology: Any = None,
              origin: str = "schedule", seed: int = 0, reasons: list[str] | None = None,
              ) -> tuple[Plan, str, Any]:
    """The execution plan of a schedule text; returns (plan, format, parsed). ``seed``
    draws an MSCCL++ plan's random thread orders (after the fixed adversarial ones);
    ``reasons``: the audit's reasons for an MSCCL++ plan, when they are known (they are
    computed otherwise)."""
    from collcert.certify.model import InputError
    from collcert.reference.execution import plan_from_schedule

    fmt = fmt or _detect(text)
    if fmt not in FORMATS:
        raise ScheduleError(f"unknown format {fmt!r}: choose one of {', '.join(FORMATS)}")
    try:
        if fmt == "msccl-xml":
            from collcert.certify.execution import msccl

            from .mscclplan import plan_from_program

            prog = msccl.read(text, origin)
            return plan_from_program(prog), fmt, prog
        if fmt == "mscclpp-json":
            from collcert.certify.execution import mscclpp

            from .mscclppplan import plan_from_mscclpp

            pp = mscclpp.read(text, origin)
            return plan_from_mscclpp(pp, seed=seed, reasons=reasons), fmt, pp
        from collcert.certify.forestcoll import forestcoll_xml, schedule_json

        if fmt == "json":
            doc = schedule_json(text, origin)
        else:
            if topology is None:
                raise ScheduleError("ForestColl XML names no rank order: pass --topology")
            doc = forestcoll_xml(text, origin=origin, node_ids=[str(v) for v in topology.nodes])
            doc["compute_nodes"] = [str(v) for v in topology.compute_nodes]
        return plan_from_schedule(doc, origin), fmt, doc
    except InputError as exc:
        raise ScheduleError(str(exc)) from None


def _model(fmt: str, parsed: Any, text: str, topology: Any) -> tuple[Fraction | None, str, str]:
    if topology is not None:
        from collcert.auditing import audit

        rep = audit(topology, text, fmt=fmt)
        if rep.algbw is None:
            return None, topology.unit, "the audit finds the schedule INVALID"
        name = topology.name or "the topology"
        return Fraction(rep.algbw), topology.unit, f"exact, collcert audit on {name}"
    if fmt == "json" and isinstance(parsed, dict):
        claim = (parsed.get("claimed") or {}).get("algbw")
        if claim is not None:
            try:
                return Fraction(str(claim)), str(parsed.get("unit", "")), "the schedule's claim"
            except (ValueError, ZeroDivisionError):
                pass
    return None, "", ""


def choose_backend(torch: Any, backend: str, nranks: int) -> str:
    if backend not in BACKENDS:
        raise SmokeError(f"unknown backend {backend!r}: choose one of {', '.join(BACKENDS)}")
    if backend == "gloo" and nranks > MAX_GLOO_RANKS:
        raise SmokeError(f"the gloo backend starts one CPU process per rank, each connected "
                         f"to every other: {nranks} ranks is more than the {MAX_GLOO_RANKS} it "
                         "runs; use --backend single-gpu (every rank in one process, on the "
                         "CPU when there is no GPU)")
    if backend != "auto":
        return backend
    if gpu_kind(torch):
        import torch.distributed as dist

        if torch.cuda.device_count() >= nranks and dist.is_nccl_available():
            return "nccl"
        return "single-gpu"
    return "gloo" if nranks <= MAX_GLOO_RANKS else "single-gpu"


def smoke(source: str | os.PathLike[str], *, topology: Any = None, backend: str = "auto",
          size: int = 1 << 20, iters: int = 5, fmt: str | None = None, timeout: float = 120.0,
          device: str | None = None, seed: int = 0,
          reasons: list[str] | None = None) -> SmokeReport:
    """Run the schedule ``source`` (a path or the text) and check it; see the module doc.
    ``reasons``: the audit's reasons, when the caller has them (an MSCCL++ plan's
    simulation is then not run again)."""
    text, origin = _read(source)
    plan, fmt, parsed = load_plan(text, fmt, topology, origin, seed, reasons)
    if not 1 <= iters <= MAX_ITERS:
        raise SmokeError(f"--iters must be between 1 and {MAX_ITERS}, got {iters}")
    if size < 1:
        raise SmokeError(f"--size must be a positive number of bytes, got {size}")
    # M: the data of the collective; alltoall's is each rank's send buffer (C cells of the
    # N·C its Spec numbers globally)
    m_cells = plan.spec.cells // (plan.nranks if plan.spec.collective == "alltoall" else 1)
    ce = max(1, -(-size // (ELEM_BYTES * m_cells)))
    _check_memory(plan, size, ce)
    model = _model(fmt, parsed, text, topology)
    torch = require_torch()
    chosen = choose_backend(torch, backend, plan.nranks)
    if device is not None and chosen != "single-gpu":
        raise SmokeError(f"--device {device[:40]} is for the single-gpu backend, and this run "
                         f"uses {chosen}; add --backend single-gpu")
    report = SmokeReport(False, plan.spec.collective, plan.nranks, origin, fmt, chosen, [],
                         False, m_cells * ce * ELEM_BYTES, ce, m_cells,
                         plan.messages(), iters, model_algbw=model[0], model_unit=model[1],
                         model_from=model[2])
    report.failures += plan.problems
    report.notes += plan.notes
    if not plan.runnable:
        report.notes.append("the program was not run: it cannot complete (see above)")
        _msccl_reasons(report, parsed)
        return report
    # an MSCCL program marked for both calls runs in both modes: one file, two contracts
    other = _out_of_place(fmt, parsed)
    prefix = "in place: " if other is not None else ""
    if other is not None:
        report.failures = [prefix + f for f in report.failures]
        report.failures += ["out of place: " + f for f in other.problems]
        if not other.runnable:
            other = None
    runs = _execute(torch, [plan] + ([other] if other else []), ce, iters, chosen, timeout,
                    device, seed)
    results = runs[0]
    report.devices = [r.device for r in results]
    report.on_cpu = all(r.device == "cpu" for r in results)
    if report.on_cpu and chosen == "single-gpu":
        report.notes.append("no GPU here: the single-gpu backend ran on the CPU with emulated "
                            "streams (it checks the data flow and the dependencies, not a GPU)")
    if chosen == "gloo":
        report.notes.append("gloo runs one CPU process per rank: the times measure the host, "
                            "not a GPU fabric")
    if chosen == "single-gpu" and not report.on_cpu:
        report.notes.append("single-gpu: all ranks share one GPU; transfers are copies within "
                            "its memory, so this checks the data flow with real concurrency, "
                            "not the interconnect")
    n_iter = len(results[0].times) if results else 0
    report.times = [max(r.times[i] for r in results) for i in range(n_iter)]
    bad = [r.mismatch for r in results if r.mismatch]
    report.wrong_ranks = len(bad)
    if bad:
        _explain(report, plan, bad, ce, parsed, prefix)
    if other is not None:
        bad2 = [r.mismatch for r in runs[1] if r.mismatch]
        report.wrong_ranks = max(report.wrong_ranks, len(bad2))
        if bad2:
            _explain(report, other, bad2, ce, parsed, "out of place: ")
        t2 = [max(r.times[i] for r in runs[1]) for i in range(len(runs[1][0].times))]
        report.notes.append("the MSCCL program is marked for both calls (inplace=\"1\" "
                            "outofplace=\"1\"): it ran in place and out of place; the times "
                            "are the in-place run's (out of place: "
                            f"{statistics.median(t2) * 1e3:.3f} ms per iteration)")
    report.passed = not report.failures
    return report


def _out_of_place(fmt: str, parsed: Any) -> Plan | None:
    """The out-of-place plan of an MSCCL program marked for both calls (the plan run first
    is its in-place one); None for anything else."""
    if fmt != "msccl-xml" or len(parsed.modes()) < 2:
        return None
    from .mscclplan import plan_from_program

    return plan_from_program(parsed, False)


def _check_memory(plan: Plan, size: int, ce: int) -> None:
    """Refuse (exit 2) a --size whose buffers cannot fit in memory: every rank's buffers,
    their pristine copies and the messages in flight, about 3 copies of all cells."""
    from collcert.reference.model import check_budget

    cells = sum(sum(b.values()) for b in plan.buffers)
    check_budget(f"--size {size} bytes", 3 * ELEM_BYTES * ce * cells,
                 f"running {plan.nranks} ranks with {cells} cells of {ce} int64 elements "
                 "(buffers, their copies and the messages)", action="try a smaller --size")


def _execute(torch: Any, plans: list[Plan], ce: int, iters: int, backend: str, timeout: float,
             device: str | None, seed: int) -> list[list[RankResult]]:
    if backend in ("gloo", "nccl"):
        from . import dist

        return dist.run([(plan, ce, iters) for plan in plans], backend, timeout)
    from . import single

    return [single.run(plan, ce, iters, device, seed) for plan in plans]


def _explain(report: SmokeReport, plan: Plan, bad: list[dict[str, int]], ce: int,
             parsed: Any, prefix: str = "") -> None:
    start = len(report.failures)
    _explain_run(report, plan, bad, ce)
    report.failures[start:] = [prefix + f for f in report.failures[start:]]
    _msccl_reasons(report, parsed)


def _explain_run(report: SmokeReport, plan: Plan, bad: list[dict[str, int]], ce: int) -> None:
    first = Mismatch(**bad[0])
    r = first.rank
    report.failures.append(
        f"{plan.label(r)}: output element {first.offset} (global element {first.element}, "
        f"byte {first.offset * ELEM_BYTES}) is {first.got}, expected {first.expected}: "
        f"{explain_value(plan.spec, first, ce)}; {first.count} wrong element(s) on this rank")
    for line in describe_cell(plan, r, first.element // ce):
        report.failures.append(f"  missing data: {line}")
    if not plan.segments:  # a program's ops, not trees: name the op that wrote it last
        report.failures.append(f"  {_last_writer(plan, r, first.offset // ce)}")
    if len(bad) > 1:
        others = ", ".join(str(b["rank"]) for b in bad[1:9])
        report.failures.append(f"{len(bad) - 1} more rank(s) are wrong: {others}"
                               + (" …" if len(bad) > 9 else ""))


def _last_writer(plan: Plan, rank: int, j: int) -> str:
    """Which op of the program last wrote output cell ``j`` of ``rank`` (its step or op,
    as the plan notes it), or that none does."""
    from .mscclppplan import RETURNS

    buf, off = plan.spec.outputs[rank][0], plan.spec.outputs[rank][1] + j
    late = ""
    for k in range(len(plan.ops) - 1, -1, -1):
        op = plan.ops[k]
        if op.rank == rank and any(w.buf == buf and off in w.cells() for w in op.writes()):
            if op.note.endswith(RETURNS) and op.src is not None and op.dst is not None:
                buf, off = op.src.buf, op.src.off + off - op.dst.off  # what the user read
                late = next((f"; {o.note or o.kind} writes it only after the call returned"
                             for o in plan.ops[k + 1:] if o.rank == rank and any(
                                 w.buf == buf and off in w.cells() for w in o.writes())), "")
                continue
            return f"that cell was last written by {op.note or op.kind}{late}"
    return "no op of the program writes that cell" + (
        " before the call returns" + late if late else "")


def _msccl_reasons(report: SmokeReport, parsed: Any) -> None:
    from collcert.certify.execution import Program, msccl, mscclpp, mscclpp_sim

    if isinstance(parsed, Program | mscclpp.Plan):
        if isinstance(parsed, Program):
            reasons, who = msccl.simulate(parsed).verdict.reasons, "MSCCL"
        else:
            reasons, who = mscclpp_sim.run(parsed).verdict.reasons, "MSCCL++"
        for reason in reasons[:4]:
            line = f"  the {who} simulator says: {reason}"
            # once, when both modes of a program fail; not again when the run said it
            if line not in report.failures and reason not in report.failures:
                report.failures.append(line)
