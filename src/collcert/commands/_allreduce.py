"""``collcert optimum -c allreduce``: every allreduce rate, exact, certified, as one chain.

The topology may be any directed graph (Zhou & Sun 2026's model). Each figure's
certificate is checked by ``collcert.certify`` before it is printed; a
certificate that fails is a bug (exit 3).

``--method rsag-weighted`` (``optimum`` and ``schedule -c allreduce``): weighted
RS+AG alone, reduce-scatter then allgather with the best unequal shards
(:mod:`collcert.reference.allreduce.rsag_weighted`), its shards and certificate,
or its trees.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from collcert.reference.model import ScheduleError, TopologyError, fraction_str

from . import _sizes
from ._common import Progress, is_eulerian, load_topology, print_json, write_output


def check_all(report: Any) -> dict[str, bool]:
    """Run the independent checkers on the report's certificates; raise on a failure."""
    from collcert.certify.allreduce import (
        Graph,
        check_cut_set,
        check_forestcoll_lp,
        check_mac_bc_lp,
        check_rsag_weighted,
    )

    g = Graph(report.topology.to_json())
    certs = report.certificates()
    checkers = {"cut_set_bound": check_cut_set, "mac_bc_lp": check_mac_bc_lp,
                "forestcoll_lp": check_forestcoll_lp, "rsag_weighted": check_rsag_weighted}
    done = {}
    for key, check in checkers.items():
        if key in certs:
            verdict = check(g, certs[key])
            if not verdict.ok:
                raise RuntimeError(f"internal: the {key} certificate did not check: "
                                   + "; ".join(verdict.all_reasons()[:3]))
            done[key] = True
    if getattr(report, "thm19", None) is not None:  # Thm 19 decided (issue 23)
        from collcert.certify.allreduce import check_rsag_condition
        from collcert.certify.forestcoll import check_optimum

        topo = report.topology.to_json()
        rsag = check_optimum(topo, certs["rsag"])
        verdict = check_rsag_condition(topo, rsag.facts.get("algbw", 0),
                                       certs["cut_set_bound"],
                                       report.thm19.certificate(report.topology))
        verdict.absorb(rsag, "RS+AG optimum: ")
        if not verdict.ok:
            raise RuntimeError("internal: the Thm 19 decision did not check: "
                               + "; ".join(verdict.all_reasons()[:3]))
        done["rsag"] = done["thm19"] = True
    tree = getattr(report, "bidirected_tree", None)
    if tree is not None:  # Thm 3's closed form must meet the checked C and R_LP (issue 23)
        checked = [report.cut_set.value] + ([report.mac_bc.value] if report.mac_bc else [])
        if any(v != tree.value for v in checked):
            raise RuntimeError("internal: the bi-directed tree's closed form min β differs "
                               "from the checked cut-set bound or R_LP")
        done["bidirected_tree"] = True
    return done


MAC_BC_SLOW_NODES = 64
"""From this many compute nodes on, the MAC-BC LP's column generation can take minutes
(measured on 2 loaded cores: ring:40 2 s, ring:60 6 s, ring:80 17 s, ring:100 2-4 min);
its size is not known before it runs, so the command says so first."""


def _announce_mac_bc(topo: Any, progress_shown: bool) -> None:
    """Say before the work starts that the MAC-BC LP may take minutes (issue 24 row 8)."""
    from collcert.reference.allreduce import MAX_MAC_BC_NODES

    k = topo.num_compute
    if topo.switch_nodes or not MAC_BC_SLOW_NODES <= k <= MAX_MAC_BC_NODES:
        return
    print(f"note: the MAC-BC LP (Zhou & Sun 2026, Thm 2) on {k} compute nodes is solved by "
          "column generation, whose length is not known in advance: from "
          f"{MAC_BC_SLOW_NODES} nodes on it can take minutes (ring:80 about 20 s, ring:100 "
          "2-4 min on 2 cores; docs/limits.md)"
          + ("" if progress_shown else "; --progress shows the gap closing"), file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    from collcert.reference.allreduce import allreduce_rate

    if args.root is not None:
        raise TopologyError("allreduce has no root; --root is for broadcast and reduce")
    if args.fixed_k is not None:
        raise TopologyError("--fixed-k applies to allgather and reduce-scatter, not allreduce")
    if getattr(args, "method", "all") != "all" and _sizes.wanted(args):  # never ignored
        raise TopologyError(f"--sizes/--plot/--alpha: the α-β view of -c allreduce is drawn "
                            f"for the rates of --method all, not --method {args.method}; "
                            "drop them or the --method")
    if getattr(args, "method", "all") == "rsag-weighted":
        return _run_weighted(args)
    if getattr(args, "method", "all") == "bidirected-tree":  # Zhou & Sun 2026, Thm 3
        from . import _allreduce_tree

        return _allreduce_tree.run(args)
    topo = load_topology(args.topology, strict=False)
    _sizes.check_unit(args, topo)
    if _sizes.wanted(args) and not is_eulerian(topo):  # the view is RS+AG's: never ignored
        raise TopologyError("--sizes/--plot/--alpha: the α-β view of -c allreduce is drawn "
                            "from the RS+AG optimum, which needs an Eulerian topology (every "
                            "node sends what it receives), and this one is not; drop them")
    started = time.monotonic()
    progress = Progress("MAC-BC LP (gap closed, ‰)", force=args.progress)
    _announce_mac_bc(topo, progress.enabled)
    report = allreduce_rate(topo, engine=args.engine, progress=progress)
    checked = check_all(report)
    elapsed = time.monotonic() - started
    if args.json or args.certificate:
        out = report.to_json(certificates=args.certificate)
        out["checked_by_certify"] = checked
        out["topology_name"] = topo.name
        out["seconds"] = round(elapsed, 3)  # wall time: informative, not a result
        if _sizes.wanted(args) and report.rsag is not None:
            out["sizes"] = _sizes.optimum_view(args, topo, report.rsag)
        print_json(out)
    else:
        print(report.summary())
        print(f"  certificates checked by collcert.certify: {', '.join(checked)}")
        print(f"  time: {elapsed:.2f} s")
        if _sizes.wanted(args) and report.rsag is not None:
            _sizes.optimum_view(args, topo, report.rsag)
    return 0


def _weighted_size(topo: Any) -> None:
    """Refuse, before any work, a machine too large for weighted RS+AG here."""
    import collcert.reference.allreduce as ar

    limit = ar.MAX_WEIGHTED_NODES
    if topo.num_compute > limit:
        raise TopologyError(
            f"weighted RS+AG on {topo.num_compute} compute nodes: its cut generation runs one "
            f"max-flow per compute node per round and its certificate holds two flows per "
            f"compute node, about {2 * topo.num_compute * len(topo.capacity):,} flow entries; "
            f"the limit here is {limit} compute nodes (docs/allreduce.md)")


def _weighted_checked(topo: Any, engine: str) -> tuple[Any, dict[str, Any]]:
    """Weighted RS+AG and its certificate, checked by collcert.certify (exit 3 if not)."""
    from collcert.certify.allreduce import Graph, check_rsag_weighted
    from collcert.reference.allreduce import weighted_rsag

    r = weighted_rsag(topo, engine=engine)
    cert = json.loads(json.dumps(r.certificate(), default=str))
    verdict = check_rsag_weighted(Graph(topo.to_json()), cert)
    if not verdict.ok or verdict.facts["rsag_weighted"] != r.value:
        raise RuntimeError("internal: the weighted RS+AG certificate did not check: "
                           + "; ".join(verdict.all_reasons()[:3]))
    return r, cert


def _run_weighted(args: argparse.Namespace) -> int:
    """``optimum -c allreduce --method rsag-weighted``."""
    topo = load_topology(args.topology)
    _weighted_size(topo)
    started = time.monotonic()
    r, cert = _weighted_checked(topo, args.engine)
    elapsed = time.monotonic() - started
    if args.json or args.certificate:
        out: dict[str, Any] = {"collective": "allreduce", "method": "rsag-weighted",
                               "topology": topo.content_hash(), "topology_name": topo.name,
                               "unit": topo.unit, **r.to_json(),
                               "checked_by_certify": True, "seconds": round(elapsed, 3)}
        if args.certificate:
            out["certificate"] = cert
        print_json(out)
        return 0
    print(r.summary())
    print(f"  optimal over every choice of shards (dual: {len(r.dual)} cuts); "
          f"{r.stats['rounds']} LP rounds, {r.stats['cuts']} cuts, {r.stats['maxflows']} "
          "max-flows")
    print(f"  certificate checked by collcert.certify (check_rsag_weighted); "
          f"time: {elapsed:.2f} s")
    return 0


def run_schedule(args: argparse.Namespace) -> int:
    """``schedule -c allreduce --method rsag-weighted``: the trees, JSON only."""
    from collcert.reference.allreduce import weighted_rsag_schedule

    if args.collective != "allreduce":
        raise ScheduleError("--method rsag-weighted builds allreduce schedules; for "
                            f"{args.collective} use --weights with the default --method")
    if args.format != "json":
        raise ScheduleError("--method rsag-weighted writes --format json (its shards are "
                            "unequal, which the ForestColl tree XML cannot say)")
    for flag, value in (("--root", args.root), ("--fixed-k", args.fixed_k),
                        ("--weights", args.weights)):
        if value is not None:
            raise ScheduleError(f"{flag} does not apply to --method rsag-weighted: it chooses "
                                "every shard itself")
    topo = load_topology(args.topology)
    _weighted_size(topo)
    started = time.monotonic()
    r, _ = _weighted_checked(topo, args.engine)
    s = weighted_rsag_schedule(topo, engine=args.engine, result=r)
    doc = s.to_json(certificates=not args.no_certificates)
    checked = _check_schedule(topo, doc, s.time_per_unit) if args.check else None
    if args.output:
        write_output(args.output, json.dumps(doc, indent=1) + "\n", dash_is_stdout=True)
    elapsed = time.monotonic() - started
    out = sys.stderr if args.output == "-" else sys.stdout
    if args.json:
        print_json({"collective": "allreduce", "method": "rsag-weighted",
                    "topology": topo.content_hash(), "topology_name": topo.name,
                    "algbw": fraction_str(s.algbw), "time_per_unit": fraction_str(s.time_per_unit),
                    "shards": doc["weights"], "trees": s.num_trees,
                    "checked_time_per_unit": checked, "output": args.output,
                    "seconds": round(elapsed, 3)}, out)
    else:
        print(s.summary(), file=out)
        if checked:
            print(f"checked by collcert.certify: time per unit {checked}", file=out)
    return 0


def _check_schedule(topo: Any, doc: dict[str, Any], want: Any) -> str:
    from collcert.certify.forestcoll import check_schedule
    from collcert.certify.model import Topo

    verdict = check_schedule(Topo(topo.to_json()), json.loads(json.dumps(doc, default=str)))
    if not verdict.ok or verdict.facts.get("time_per_unit") != want:
        raise RuntimeError("internal: collcert.certify rejects the weighted RS+AG schedule: "
                           + "; ".join(verdict.all_reasons()[:3]))
    return fraction_str(verdict.facts["time_per_unit"])
