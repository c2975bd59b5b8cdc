"""``collcert optimum -c allreduce``: every allreduce rate, exact, certified, as one chain.

The topology may be any directed graph (Zhou & Sun 2026's model). Each figure's
certificate is checked by ``collcert.certify`` before it is printed; a
certificate that fails is a bug (exit 3).
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from collcert.reference.model import TopologyError

from . import _sizes
from ._common import Progress, load_topology, print_json


def check_all(report: Any) -> dict[str, bool]:
    """Run the independent checkers on the report's certificates; raise on a failure."""
    from collcert.certify.allreduce import (
        Graph,
        check_cut_set,
        check_forestcoll_lp,
        check_mac_bc_lp,
    )

    g = Graph(report.topology.to_json())
    certs = report.certificates()
    checkers = {"cut_set_bound": check_cut_set, "mac_bc_lp": check_mac_bc_lp,
                "forestcoll_lp": check_forestcoll_lp}
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
    return done


def run(args: argparse.Namespace) -> int:
    from collcert.reference.allreduce import allreduce_rate

    if args.root is not None:
        raise TopologyError("allreduce has no root; --root is for broadcast and reduce")
    if args.fixed_k is not None:
        raise TopologyError("--fixed-k applies to allgather and reduce-scatter, not allreduce")
    topo = load_topology(args.topology, strict=False)
    _sizes.check_unit(args, topo)
    started = time.monotonic()
    progress = Progress("MAC-BC LP (gap closed, ‰)", force=args.progress)
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
