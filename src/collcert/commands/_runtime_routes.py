"""``collcert schedule --routes runtime``: a schedule the runtime runs as planned.

Every ordered GPU pair uses only the route an MSCCL-style runtime gives it (the
direct link where there is one, else through switches); the schedule reaches the
certified optimum under that constraint (collcert.reference.execution.runtime_routes),
which is printed beside ForestColl's unconstrained optimum with the gap between them.
"""

from __future__ import annotations

import argparse
import sys
import time
from fractions import Fraction
from typing import Any

from collcert.reference.model import ScheduleError, Topology, fraction_str, show

from . import _runtime
from ._common import print_json, write_output


def run(args: argparse.Namespace, topo: Topology, stages: Any = None, estimate: Any = None,
        instead: Any = None) -> int | None:
    """``stages``, ``estimate``: schedule's bars and general-path notice (for ForestColl's
    own schedule, tried first). ``instead``: the rate (ExportRate) of the ForestColl
    schedule's program that --routes auto would replace; None (nothing written) when the
    runtime-routes schedule is not faster than it."""
    import collcert
    from collcert.reference.execution import runtime_schedule

    if args.collective not in ("allgather", "reduce-scatter", "allreduce"):
        raise ScheduleError(f"--routes runtime builds allgather, reduce-scatter and allreduce "
                            f"schedules, not {args.collective}")
    if args.fixed_k is not None or args.weights or args.method != "forestcoll":
        raise ScheduleError("--routes runtime takes none of --fixed-k, --weights, --method lp")
    if args.format not in ("json", "msccl-xml", "mscclpp-json"):
        raise ScheduleError(f"--routes runtime writes json, msccl-xml or mscclpp-json, not "
                            f"{args.format}")
    started = time.monotonic()

    def progress(line: str) -> None:
        if args.progress:
            print(line, file=sys.stderr, flush=True)

    def notice(text: str, seconds: float) -> None:  # cut generation's estimate, before it
        if args.progress or seconds >= 10:
            print(f"collcert schedule: {text}", file=sys.stderr, flush=True)

    doc = runtime_schedule(topo, args.collective, progress=progress, stages=stages,
                           estimate=estimate, notice=notice)
    free = collcert.optimum(topo, args.collective)
    claimed = Fraction(doc["claimed"]["algbw"])
    bound = 1 / Fraction(doc["generator"]["target_time_per_unit"])
    if args.check:
        from collcert.certify.forestcoll import check_schedule
        from collcert.certify.model import Topo

        verdict = check_schedule(Topo(topo.to_json()), doc)
        if not verdict.ok or verdict.facts.get("algbw") != claimed:
            raise RuntimeError("internal: collcert.certify rejects the runtime-routes schedule "
                               "just built: " + "; ".join(verdict.all_reasons()[:3]))
    if instead is not None and claimed <= 1 / instead.export_time:
        return None
    if args.output:
        text = _export(args, topo, doc)
        write_output(args.output, text, dash_is_stdout=True)
        args.runtime_verdict = _runtime.judge(text, args.format, getattr(args, "runtime", None))
    summary = _summary(topo, args, claimed, bound, free, time.monotonic() - started)
    loads = getattr(args, "runtime_verdict", None)
    if loads is not None:
        summary["runtime"] = loads.to_json()
    if instead is not None:
        summary["routes"] = "runtime (auto)"
        summary["forestcoll_export_algbw"] = fraction_str(1 / instead.export_time)
    summary["method"] = ("cut generation" if "runtime_routes" in doc.get("certificates", {})
                         else "forestcoll")
    out = sys.stderr if args.output == "-" else sys.stdout
    if args.json:
        print_json(summary, out)
    else:
        if instead is not None:
            p, q = instead.pair
            print(f"note: ForestColl's schedule would run at algbw "
                  f"{show(1 / instead.export_time)} {topo.unit} as an {args.format} program "
                  f"(the runtime sends all that {p} sends to {q} over their direct link, "
                  f"where the schedule sends part of it through switches); the schedule on "
                  f"the runtime's routes below is faster: it is the one "
                  f"{'written' if args.output else 'built'} (--routes forestcoll keeps "
                  "ForestColl's)", file=out)
        print(_text(topo, args, claimed, bound, summary), file=out)
    return 0


def _export(args: argparse.Namespace, topo: Topology, doc: dict[str, Any]) -> str:
    import io

    from collcert.reference.execution import SlowExportError, msccl_xml, mscclpp_json
    from collcert.reference.forestcoll import dump_json

    try:
        if args.format == "msccl-xml":
            return str(msccl_xml(doc, channels=args.msccl_channels, topology=topo,
                                 runtime=args.runtime or "msccl-executor-nccl",
                                 inplace=args.in_place))
        if args.format == "mscclpp-json":
            return str(mscclpp_json(doc, inplace=args.in_place, channel=args.mscclpp_channel,
                                    topology=topo))
    except SlowExportError as exc:  # cannot happen: every pair is on its route
        raise RuntimeError(f"internal: the runtime-routes export is slower: {exc}") from None
    buf = io.StringIO()
    dump_json(doc, buf)  # as `schedule -o` writes a document: one walk or tree a line
    return buf.getvalue()


def _summary(topo: Topology, args: argparse.Namespace, claimed: Fraction, bound: Fraction,
             free: Any, seconds: float) -> dict[str, Any]:
    out = {"collective": args.collective, "routes": "runtime",
           "topology": topo.content_hash(), "topology_name": topo.name, "unit": topo.unit,
           "algbw": fraction_str(claimed), "time_per_unit": fraction_str(1 / claimed),
           "runtime_routes_optimum_algbw": fraction_str(bound),
           "forestcoll_optimum_algbw": fraction_str(free.algbw),
           "gap": fraction_str(bound / free.algbw), "optimal": claimed == bound,
           "checked": bool(args.check), "output": args.output, "format": args.format,
           "seconds": round(seconds, 3)}
    if args.collective == "allreduce":  # what each figure proves: docs/schedules.md
        lower = Fraction(free.certificate()["lower_bound_time_per_unit"])
        out.update({"runtime_routes_optimum_scope": "reduce-scatter then allgather",
                    "forestcoll_optimum_scope": "reduce-scatter then allgather",
                    "allreduce_upper_bound_algbw": fraction_str(1 / lower)})
    return out


def _text(topo: Topology, args: argparse.Namespace, claimed: Fraction, bound: Fraction,
          summary: dict[str, Any]) -> str:
    u = topo.unit
    free = Fraction(summary["forestcoll_optimum_algbw"])
    ar = args.collective == "allreduce"
    what = "optimum of reduce-scatter-then-allgather schedules" if ar else "optimum"
    lines = [f"{args.collective} on {topo.name or 'topology'}, every GPU pair on the runtime's "
             f"route (direct link where there is one, else through switches): algbw "
             f"{show(claimed)} {u}, {'equal to' if claimed == bound else 'below'} the certified "
             f"{what} under these routes, {show(bound)} {u}.",
             f"ForestColl's {what} (any route) is {show(free)} {u}: the runtime's routes reach "
             f"{show(bound / free)} of it" + (" (no loss)." if bound == free else ".")]
    if ar:
        up = Fraction(summary["allreduce_upper_bound_algbw"])
        lines.append(f"No allreduce, on any routes, beats {show(up)} {u} (the certified lower "
                     "bound on time); a schedule of another shape than reduce-scatter then "
                     "allgather on the runtime's routes might lie between the two: not proven.")
    if summary["method"] == "forestcoll":
        lines.append("ForestColl's own schedule already keeps every linked GPU pair on its "
                     "direct link: it is the schedule, certified by ForestColl's optimum.")
    if args.check:
        lines.append("Checked by collcert.certify (trees, paths, routes, the certificates): "
                     "valid.")
    if args.output and args.output != "-":
        lines.append(f"Schedule written to {args.output} ({args.format}).")
        loads = getattr(args, "runtime_verdict", None)
        if loads is not None:
            lines.append(f"Runtime {loads.describe()}.")
    elif not args.output:
        lines.append("Use -o FILE to save the schedule.")
    return "\n".join(lines)
