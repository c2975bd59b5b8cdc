"""``collcert optimum -c allreduce --method bidirected-tree``: Zhou & Sun 2026, Thm 3 on a
bi-directed tree, R* = R_LP = C = min β, with its witness edge and cut; both certificates
(the MAC-BC LP and the cut-set bound) are checked by ``collcert.certify.allreduce`` before
anything is printed. A topology that is not a bi-directed tree of compute nodes is bad
input (exit 2), with the link, cycle or node that makes it one."""

from __future__ import annotations

import argparse

from collcert.reference.model import show

from ._common import load_topology, print_json


def run(args: argparse.Namespace) -> int:
    from collcert.certify.allreduce import Graph, check_cut_set, check_mac_bc_lp
    from collcert.reference.allreduce import closed_forms

    topo = load_topology(args.topology, strict=False)
    rate = closed_forms.bidirected_tree_rate(topo)
    certs = rate.certificates(topo)
    g = Graph(topo.to_json())
    for key, check in (("cut_set_bound", check_cut_set), ("mac_bc_lp", check_mac_bc_lp)):
        verdict = check(g, certs[key])
        if not verdict.ok:
            raise RuntimeError(f"internal: the {key} certificate of the tree did not check: "
                               + "; ".join(verdict.all_reasons()[:3]))
    if args.json or args.certificate:
        out = {"collective": "allreduce", "topology": topo.content_hash(), "unit": topo.unit,
               **rate.to_json(topo), "checked_by_certify": ["cut_set_bound", "mac_bc_lp"]}
        if args.certificate:
            out["certificates"] = certs
        print_json(out)
        return 0
    u, v = rate.edge
    inside = ", ".join(str(x) for x in topo.nodes if x in rate.side)
    print(f"allreduce on {topo.name or 'the topology'}, a bi-directed tree of "
          f"{topo.num_compute} nodes (Zhou & Sun 2026, Thm 3)")
    print(f"  R* = R_LP = C = min β = {show(rate.value)} {topo.unit}, on the link {u} -> {v}")
    print(f"  cut-set witness: S = {{{inside}}}: only {u} -> {v} leaves it")
    print("  reached by reduce+broadcast on the tree (every MAC-BC network uses each link "
          "once); certificates checked by collcert.certify: cut_set_bound, mac_bc_lp")
    return 0
