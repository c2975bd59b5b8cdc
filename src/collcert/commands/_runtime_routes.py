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

from ._common import print_json, write_output


def run(args: argparse.Namespace, topo: Topology) -> int:
    import json

    import collcert
    from collcert.reference.execution import SlowExportError, msccl_xml, runtime_schedule

    if args.collective not in ("allgather", "reduce-scatter"):
        raise ScheduleError(f"--routes runtime builds allgather and reduce-scatter schedules, "
                            f"not {args.collective}")
    if args.fixed_k is not None or args.weights or args.method != "forestcoll":
        raise ScheduleError("--routes runtime takes none of --fixed-k, --weights, --method lp")
    if args.format == "forestcoll-xml" or args.format not in ("json", "msccl-xml"):
        raise ScheduleError(f"--routes runtime writes json or msccl-xml, not {args.format}")
    started = time.monotonic()
    doc = runtime_schedule(topo, args.collective)
    free = collcert.optimum(topo, args.collective).algbw
    claimed = Fraction(doc["claimed"]["algbw"])
    bound = 1 / Fraction(doc["generator"]["target_time_per_unit"])
    if args.check:
        from collcert.certify.forestcoll import check_schedule
        from collcert.certify.model import Topo

        verdict = check_schedule(Topo(topo.to_json()), doc)
        if not verdict.ok or verdict.facts.get("algbw") != claimed:
            raise RuntimeError("internal: collcert.certify rejects the runtime-routes schedule "
                               "just built: " + "; ".join(verdict.all_reasons()[:3]))
    if args.output:
        if args.format == "msccl-xml":
            try:
                text = msccl_xml(doc, channels=args.msccl_channels, topology=topo)
            except SlowExportError as exc:  # cannot happen: every pair is on its route
                raise RuntimeError(f"internal: the runtime-routes export is slower: {exc}") from None
        else:
            text = json.dumps(doc, indent=1) + "\n"
        write_output(args.output, text, dash_is_stdout=True)
    summary = _summary(topo, args, claimed, bound, free, time.monotonic() - started)
    out = sys.stderr if args.output == "-" else sys.stdout
    if args.json:
        print_json(summary, out)
    else:
        print(_text(topo, args, claimed, bound, free), file=out)
    return 0


def _summary(topo: Topology, args: argparse.Namespace, claimed: Fraction, bound: Fraction,
             free: Fraction, seconds: float) -> dict[str, Any]:
    return {"collective": args.collective, "routes": "runtime",
            "topology": topo.content_hash(), "topology_name": topo.name, "unit": topo.unit,
            "algbw": fraction_str(claimed), "time_per_unit": fraction_str(1 / claimed),
            "runtime_routes_optimum_algbw": fraction_str(bound),
            "forestcoll_optimum_algbw": fraction_str(free),
            "gap": fraction_str(bound / free), "optimal": claimed == bound,
            "checked": bool(args.check), "output": args.output, "format": args.format,
            "seconds": round(seconds, 3)}


def _text(topo: Topology, args: argparse.Namespace, claimed: Fraction, bound: Fraction,
          free: Fraction) -> str:
    u = topo.unit
    lines = [f"{args.collective} on {topo.name or 'topology'}, every GPU pair on the runtime's "
             f"route (direct link where there is one, else through switches): algbw "
             f"{show(claimed)} {u}, {'equal to' if claimed == bound else 'below'} the certified "
             f"optimum under these routes, {show(bound)} {u}.",
             f"ForestColl's optimum (any route) is {show(free)} {u}: the runtime's routes reach "
             f"{show(bound / free)} of it" + (" (no loss)." if bound == free else ".")]
    if args.check:
        lines.append("Checked by collcert.certify (trees, paths, routes, the LP certificate): "
                     "valid.")
    if args.output and args.output != "-":
        lines.append(f"Schedule written to {args.output} ({args.format}).")
    elif not args.output:
        lines.append("Use -o FILE to save the schedule.")
    return "\n".join(lines)
