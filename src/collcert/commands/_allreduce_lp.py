"""``collcert schedule -c allreduce --method lp``: trees that reach ForestColl's LP (5).

See :mod:`collcert.reference.allreduce_schedule`. Any directed graph is
accepted (LP (5) needs no Eulerian topology). JSON output only: the schedule
gives every root its own share of the data and runs its two phases at the
same time (``weights`` and ``"overlap": true`` of docs/schedule-format.md),
which neither the ForestColl XML nor MSCCL programs can say.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from collcert.reference.errors import ScheduleError

from ._common import load_topology, print_json


def run(args: argparse.Namespace) -> int:
    from collcert.reference.allreduce_schedule import lp_schedule
    from collcert.reference.exact import fraction_str

    if args.collective != "allreduce":
        raise ScheduleError(f"--method lp builds allreduce schedules (ForestColl's LP (5)); "
                            f"for {args.collective} use the default --method forestcoll")
    if args.format != "json":
        raise ScheduleError(f"--method lp writes JSON only: its roots carry different shares and "
                            f"its two phases run at the same time, which {args.format} cannot "
                            "express")
    for flag, value in (("--root", args.root), ("--fixed-k", args.fixed_k),
                        ("--weights", args.weights)):
        if value is not None:
            raise ScheduleError(f"{flag} does not apply to --method lp: LP (5) chooses every "
                                "root's share itself")
    topo = load_topology(args.topology, strict=False)
    started = time.monotonic()
    s = lp_schedule(topo, engine=args.engine)
    doc = s.to_json(certificates=not args.no_certificates)
    checked = None
    if args.check:
        from collcert.certify.base import Topo
        from collcert.certify.schedule import check_schedule

        verdict = check_schedule(Topo(topo.to_json()), doc)
        if not verdict.ok or verdict.facts.get("time_per_unit") != s.time_per_unit:
            raise RuntimeError("internal: collcert.certify rejects the LP schedule: "
                               + "; ".join(verdict.all_reasons()[:3]))
        checked = fraction_str(verdict.facts["time_per_unit"])
    text = json.dumps(doc, indent=1) + "\n"
    if args.output == "-":
        sys.stdout.write(text)
    elif args.output:
        try:
            with open(args.output, "w", encoding="utf-8") as fh:
                fh.write(text)
        except OSError as exc:
            raise ScheduleError(f"cannot write {args.output}: {exc.strerror}") from None
    elapsed = time.monotonic() - started
    out = sys.stderr if args.output == "-" else sys.stdout
    if args.json:
        print_json({
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
            "checked_time_per_unit": checked,
            "output": args.output,
            "format": "json",
            "seconds": round(elapsed, 3),
        }, out)
    else:
        print(s.summary(), file=out)
        if checked is not None:
            print(f"collcert.certify recomputed the time from the trees: {checked} per unit.",
                  file=out)
        if args.output and args.output != "-":
            print(f"Schedule written to {args.output} (json).", file=out)
        elif not args.output:
            print("Use -o FILE to save the schedule.", file=out)
    return 0
