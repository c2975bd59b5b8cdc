"""``collcert schedule -c allreduce --method lp``: trees that reach ForestColl's LP (5).

See :mod:`collcert.reference.allreduce.lp5_schedule`. Any directed graph is
accepted (LP (5) needs no Eulerian topology). JSON (the schedule gives every
root its own share of the data and runs its two phases at the same time:
``weights`` and ``"overlap": true`` of docs/schedule-format.md) or an MSCCL
program with as many chunks as the exact shares need
(:mod:`collcert.reference.execution.msccl_allreduce`); the ForestColl XML cannot say
either.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TextIO

from collcert.reference.model import ScheduleError, fraction_str

from ._common import Progress, load_topology, print_json, write_output

if TYPE_CHECKING:
    from collcert.reference.allreduce import LPSchedule
    from collcert.reference.model import Topology


def run(args: argparse.Namespace) -> int:
    from collcert.reference.allreduce import lp_schedule

    _refuse_options(args)
    topo = load_topology(args.topology, strict=False)
    started = time.monotonic()
    bars = _Bars(args.progress)
    s = lp_schedule(topo, engine=args.engine, notice=bars.notice, progress=bars)
    doc = s.to_json(certificates=not args.no_certificates)
    program = None
    if args.format == "msccl-xml":
        s, program = _msccl(topo, s, args)
        doc = s.to_json(certificates=False)
    elif args.format == "mscclpp-json":
        program = _mscclpp(s, args)
    if program is not None and not _rated(s, args):
        return 1  # --strict and the export is slower than the schedule: nothing written
    if args.check and bars.force:
        print(f"collcert schedule: checking the schedule with collcert.certify "
              f"({s.tree_edges:,} tree edges) ...", file=sys.stderr, flush=True)
    checked = _check(topo, s, doc, program) if args.check else None
    text = json.dumps(doc, indent=1) + "\n" if program is None else program.text
    if args.output:
        write_output(args.output, text, dash_is_stdout=True)
    elapsed = time.monotonic() - started
    out = sys.stderr if args.output == "-" else sys.stdout
    if args.json:
        print_json(_json_summary(topo, s, doc, program, checked, args, elapsed), out)
    else:
        _print_text(s, program, checked, args, out)
    return 0


class _Bars:
    """``notice`` and ``progress`` of lp_schedule(): an estimate is printed on stderr
    when it is long (``NOTICE_SECONDS``) or with --progress, and the stages are shown from
    then on (the LP's rounds as a counter, the build's stages as bars)."""

    NOTICE_SECONDS = 10.0

    def __init__(self, force: bool) -> None:
        self.force = force
        self.bars: dict[str, Progress] = {}
        self.started = time.monotonic()

    def notice(self, text: str, seconds: float) -> None:
        if self.force or seconds >= self.NOTICE_SECONDS:
            print(f"collcert schedule: {text}", file=sys.stderr, flush=True)
            self.force = True

    def __call__(self, stage: str, done: int, total: int) -> None:
        if not self.force:
            return
        if total <= 0:  # LP (5)'s rounds: how many is not known before
            name = stage.split(",")[0]
            print(f"\r[{name}] round {done}{stage[len(name):]}, "
                  f"{time.monotonic() - self.started:.1f} s\033[K", end="", file=sys.stderr,
                  flush=True)
            return
        if stage not in self.bars:
            self.bars[stage] = Progress(f"[{len(self.bars) + 1}] {stage}", force=True)
        self.bars[stage](done, total)


def _refuse_options(args: argparse.Namespace) -> None:
    """The options of ``collcert schedule`` that LP (5)'s schedule cannot honour."""
    if args.collective != "allreduce":
        raise ScheduleError(f"--method lp builds allreduce schedules (ForestColl's LP (5)); "
                            f"for {args.collective} use the default --method forestcoll")
    if args.format == "forestcoll-xml":
        raise ScheduleError("--method lp writes json, msccl-xml or mscclpp-json: its roots "
                            "carry different "
                            "shares and its two phases run at the same time, which the "
                            "ForestColl tree XML cannot express")
    if args.format != "msccl-xml" and args.msccl_channels is not None:
        raise ScheduleError("--msccl-channels applies to --format msccl-xml only")
    for flag, value in (("--root", args.root), ("--fixed-k", args.fixed_k),
                        ("--weights", args.weights)):
        if value is not None:
            raise ScheduleError(f"{flag} does not apply to --method lp: LP (5) chooses every "
                                "root's share itself")


def _check(topo: Topology, s: LPSchedule, doc: dict[str, Any], program: _Program | None,
           ) -> str:
    """``--check``: the time collcert.certify recomputes from the trees (and the MSCCL
    program run in its simulator); a rejection is an internal error."""
    from collcert.certify.forestcoll import check_schedule
    from collcert.certify.model import Topo

    verdict = check_schedule(Topo(topo.to_json()), doc)
    if not verdict.ok or verdict.facts.get("time_per_unit") != s.time_per_unit:
        raise RuntimeError("internal: collcert.certify rejects the LP schedule: "
                           + "; ".join(verdict.all_reasons()[:3]))
    if program is not None and program.runtime == "mscclpp":
        _check_mscclpp(program.text)
    elif program is not None:
        _check_program(program.text)
    return fraction_str(verdict.facts["time_per_unit"])


def _json_summary(topo: Topology, s: LPSchedule, doc: dict[str, Any], program: _Program | None,
                  checked: str | None, args: argparse.Namespace, elapsed: float,
                  ) -> dict[str, Any]:
    return {
        "collective": "allreduce",
        "method": "lp",
        "topology": topo.content_hash(),
        "topology_name": topo.name,
        "unit": topo.unit,
        "algbw": fraction_str(s.algbw),
        "time_per_unit": fraction_str(s.time_per_unit),
        "forestcoll_lp": fraction_str(s.lp.value),
        "optimal": True,
        "reduce_trees": len(s.reduce_trees),
        "broadcast_trees": len(s.broadcast_trees),
        "k": doc["phases"][0]["k"],
        "shares": "lp" if program is None else program.shares,
        "nchunksperloop": None if program is None else program.chunks,
        "checked_time_per_unit": checked,
        "output": args.output,
        "format": args.format,
        "seconds": round(elapsed, 3),
        "export": _export_json(getattr(args, "export_rate", None)),
    }


def _export_json(rate: Any) -> dict[str, Any] | None:
    """The export's rate as ``collcert schedule --json`` states it for tree exports."""
    if rate is None:
        return None
    return {"algbw": fraction_str(1 / rate.export_time),
            "time_per_unit": fraction_str(rate.export_time),
            "at_schedule_rate": not rate.slower,
            "pair": None if rate.pair is None else list(rate.pair), "message": rate.message()}


def _print_text(s: LPSchedule, program: _Program | None, checked: str | None,
                args: argparse.Namespace, out: TextIO) -> None:
    print(s.summary(), file=out)
    if program is not None:
        rate = getattr(args, "export_rate", None)
        print(program.describe(rate is not None and rate.slower), file=out)
        if rate is not None and rate.slower:  # the runtime's direct links (warned above)
            print(f"Not at LP (5) on the runtime: {rate.message()}.", file=out)
    if checked is not None:
        print(f"collcert.certify recomputed the time from the trees: {checked} per unit.",
              file=out)
    if args.output and args.output != "-":
        print(f"Schedule written to {args.output} ({args.format}).", file=out)
    elif not args.output:
        print("Use -o FILE to save the schedule.", file=out)


@dataclass
class _Program:
    text: str
    chunks: int
    shares: str  # "lp": LP (5)'s own solution; "uniform": the equal-share optimum
    runtime: str = "msccl"  # or "mscclpp": an MSCCL++ execution plan

    def describe(self, slower: bool = False) -> str:
        reach = ("exact shares, but the runtime runs it slower (below)" if slower else
                 "exact, so it reaches LP (5)")
        if self.runtime == "mscclpp":
            return (f"MSCCL++ plan: {self.chunks} chunks, the shares of the LP (5) solution; "
                    f"{reach} (collcert audit TOPOLOGY FILE checks it; docs/mscclpp.md).")
        which = ("the shares of the LP (5) solution" if self.shares == "lp" else
                 "equal shares (the shares of LP (5)'s own solution need more than the "
                 "executor takes; with x_v all equal LP (5) has the same optimum here)")
        return (f"MSCCL program: nchunksperloop {self.chunks}, {which}; {reach} "
                "(collcert audit TOPOLOGY FILE checks it in place and out of place).")


def _msccl(topo: Topology, s: LPSchedule, args: argparse.Namespace
           ) -> tuple[LPSchedule, _Program]:
    """The MSCCL program of the LP schedule with exact chunk counts; if LP (5)'s solution
    needs more chunks than the executor takes, the equal-share optimum when it is one."""
    from collcert.reference.allreduce import forestcoll_lp, lp_schedule
    from collcert.reference.execution import chunks, lp_msccl_xml

    refuse = ("no MSCCL program reaches LP (5) exactly within the executor's limits: "
              "rounding to fewer chunks would give other shares, a different and slower "
              "program, so none is written; use --format json (the exact schedule) or "
              "--method forestcoll (RS+AG, equal shares). LP (5)'s solution: ")
    try:
        return s, _Program(lp_msccl_xml(s, args.msccl_channels, **_runtime_of(args)), chunks(s),
                           "lp")
    except ScheduleError as exc:
        refuse += str(exc)
    uniform = forestcoll_lp(topo, uniform=True)
    if uniform.value != s.lp.value:
        raise ScheduleError(f"{refuse}. Equal shares reach only {fraction_str(uniform.value)} "
                            "here, so they were not tried")
    s2 = lp_schedule(topo, engine=args.engine, lp=uniform)
    try:
        return s2, _Program(lp_msccl_xml(s2, args.msccl_channels, **_runtime_of(args)),
                            chunks(s2), "uniform")
    except ScheduleError as exc:
        raise ScheduleError(f"{refuse}. Equal shares (the same optimum here): {exc}") from None


def _mscclpp(s: LPSchedule, args: argparse.Namespace) -> _Program:
    """The MSCCL++ plan of the LP schedule, exact shares (docs/mscclpp.md); rated by
    :func:`_rated` before it is written."""
    import json

    from collcert.reference.execution import chunks, lp_plan, plan_mscclpp

    plan = plan_mscclpp(lp_plan(s), inplace=args.in_place, channel=args.mscclpp_channel,
                        topology_hash=s.topology.content_hash())
    return _Program(json.dumps(plan, indent=1), chunks(s), "lp", "mscclpp")


def _rated(s: LPSchedule, args: argparse.Namespace) -> bool:
    """The export's rate (``export_rate``, exact: a program names ranks, and the runtime
    sends a linked pair's data over its direct link), before anything is written, as for
    the tree exports: slower than the schedule is a warning, or with ``--strict`` a
    refusal (False). ``--json`` reports it under ``export``."""
    from collcert.reference.execution import export_rate

    rate = export_rate(s.to_json(certificates=False), s.topology)
    args.export_rate = rate
    if rate.slower and args.strict:
        print(f"collcert schedule: refused (--strict): {rate.message()}", file=sys.stderr)
        return False
    if rate.slower or rate.multicast:
        print(f"warning: {rate.message()}", file=sys.stderr)
    return True


def _check_mscclpp(text: str) -> None:
    """Run the MSCCL++ plan in the simulator of collcert.certify."""
    from collcert.certify.execution import mscclpp, mscclpp_sim

    verdict = mscclpp_sim.run(mscclpp.read(text)).verdict
    if not verdict.ok:
        raise RuntimeError("internal: collcert.certify rejects the MSCCL++ plan: "
                           + "; ".join(verdict.all_reasons()[:3]))


def _check_program(text: str) -> None:
    """Run the program in the simulator of collcert.certify (both calls it is marked for)."""
    from collcert.certify.execution import msccl, msccl_sim

    verdict = msccl_sim.run(msccl.read(text)).verdict
    if not verdict.ok:
        raise RuntimeError("internal: collcert.certify rejects the MSCCL program: "
                           + "; ".join(verdict.all_reasons()[:3]))


def _runtime_of(args: argparse.Namespace) -> dict[str, Any]:
    """The runtime the MSCCL program is written for (schedule --runtime, docs/runtimes.md)."""
    return {"runtime": getattr(args, "runtime", None) or "msccl-executor-nccl",
            "inplace": bool(getattr(args, "in_place", False))}
