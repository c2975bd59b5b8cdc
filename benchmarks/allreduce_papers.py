#!/usr/bin/env python3
"""The papers' machines, answered (issue 19 item 6): every allreduce rate, exact, certified.

For each machine: RS+AG (Zhao & Krishnamurthy 2023, App. B), weighted RS+AG
(the same two phases with the best unequal shards, Zhao et al. 2026, §5.7),
ForestColl's LP (5) (Zhao et al. 2026, App. G), R_LP (Zhou & Sun 2026, Thm 2;
networks without switches), bound (7) (Zhao & Krishnamurthy 2023, Cor. 18) and
the cut-set bound C (Zhou & Sun 2026, Thm 1). Every figure comes with its
certificate, and the whole bundle is checked by ``collcert.certify`` (its
dispatcher's ``check_bundle``, the code behind ``collcert check``) before it
is printed; a figure that is not computed says why. LP (5) is
``forestcoll_lp``'s default, the cut form (issue 19 items 1-3); where that is
refused, ``forestcoll_lp_cuts`` is tried, then "not yet".

The last column says whether RS+AG is optimal there:

``yes (= C)``        RS+AG reaches the cut-set bound: optimal even with network coding
``yes (bounds)``     RS+AG reaches min(C, bound (7)): optimal among routing schedules
``yes (= LP (5))``   RS+AG reaches LP (5): optimal among reduce+broadcast tree schedules
``no``               LP (5) is faster (weighted RS+AG may or may not close the gap)
``open``             LP (5) not computed and RS+AG below both bounds

Usage::

    python benchmarks/allreduce_papers.py                       # the small machines
    python benchmarks/allreduce_papers.py torus:8x8 dgx_a100:4  # others
    python benchmarks/allreduce_papers.py --golden golden/allreduce/papers

``--golden DIR`` writes one case per machine (format collcert-golden-allreduce/1,
checked by ``python golden/check_allreduce.py DIR/*.json`` with max-flows).
Timings are wall seconds on whatever machine runs it.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from fractions import Fraction
from pathlib import Path
from typing import Any

import collcert.reference.allreduce as ar
from collcert.certify.dispatch import check_bundle, check_certificate
from collcert.commands._common import load_topology
from collcert.reference.allreduce import allreduce_rate
from collcert.reference.model import CollcertError, Topology, fraction_str, show

SMALL = ["torus:4x4", "hypercube:5", "dgx_a100:2", "mi250:2"]
ALL = [*SMALL, "dgx_h100:2", "torus:8x8", "hypercube:6", "dgx_a100:4", "dgx_a100:8",
       "dgx_a100:16", "dgx_h100:16", "dgx_a100:128"]
KEYS = ("rsag", "rsag_weighted", "forestcoll_lp", "mac_bc_lp", "bound7", "cut_set_bound")


def _lp5_at_scale(t: Topology) -> tuple[Fraction | None, str]:
    """LP (5) by cut generation where issue 19's face offers it (checked), else why not."""
    fn = getattr(ar, "forestcoll_lp_cuts", None)
    if fn is None:
        return None, "not yet (LP (5) by cut generation is not in collcert.reference.allreduce)"
    try:
        sol = fn(t)
    except CollcertError as exc:
        return None, f"not computed: {exc}"
    kind, verdict = check_certificate(t.to_json(), json.loads(json.dumps(
        sol.certificate(), default=str)))
    if not verdict.ok:
        raise RuntimeError(f"certify rejects the LP (5) certificate ({kind}): "
                           + "; ".join(verdict.all_reasons()[:3]))
    return sol.value, "cut generation, certified"


def verdict_of(v: dict[str, Fraction | None]) -> str:
    rs, lp, c, b7 = v["rsag"], v["forestcoll_lp"], v["cut_set_bound"], v["bound7"]
    if rs is None:
        return "n/a"
    if rs == c:
        return "yes (= C)"
    if b7 is not None and rs == min(c, b7):
        return "yes (bounds)"
    if lp is not None:
        return "yes (= LP (5))" if rs == lp else "no"
    return "open"


def answer(spec: str) -> dict[str, Any]:
    """Every figure of one machine, certified; raises if a certificate fails."""
    t = load_topology(spec)
    t0 = time.monotonic()
    free = not t.switch_nodes
    r = allreduce_rate(t, mac_bc=t.num_compute <= 128)
    vals = dict(r.values)
    how = {k: "certified" for k, x in vals.items() if x is not None}
    how.update({k: f"not computed: {why}" for k, why in r.reasons.items()})
    if vals["forestcoll_lp"] is None and free and vals["mac_bc_lp"] is not None:
        vals["forestcoll_lp"] = vals["mac_bc_lp"]
        how["forestcoll_lp"] = "= R_LP (no switches: Edmonds' branching theorem), certified"
    elif vals["forestcoll_lp"] is None:
        vals["forestcoll_lp"], how["forestcoll_lp"] = _lp5_at_scale(t)
    seconds = time.monotonic() - t0
    bundle = json.loads(json.dumps(r.to_json(certificates=True), default=str))
    t1 = time.monotonic()
    verdict = check_bundle(t.to_json(), bundle)
    if not verdict.ok:
        raise RuntimeError(f"{spec}: certify rejects the bundle: "
                           + "; ".join(verdict.all_reasons()[:3]))
    return {"machine": spec, "topology": t, "K": t.num_compute, "values": vals, "how": how,
            "weighted": r.weighted, "seconds": seconds, "check_seconds": time.monotonic() - t1,
            "rsag_optimal": verdict_of(vals)}


def golden_case(row: dict[str, Any]) -> dict[str, Any]:
    t: Topology = row["topology"]
    v = row["values"]
    exp = {"cut_set_bound": v["cut_set_bound"], "rsag_algbw": v["rsag"],
           "rsag_weighted": v["rsag_weighted"], "bound7_algbw": v["bound7"],
           "forestcoll_lp": v["forestcoll_lp"], "mac_bc_lp": v["mac_bc_lp"]}
    w = row["weighted"]
    witness: dict[str, Any] = {}
    if w is not None:
        witness["rsag_weighted_shards"] = [[fraction_str(x) for x in w.weights()]]
    if w is not None and w.value != v["cut_set_bound"]:
        witness["rsag_weighted_dual"] = [[[x for x in t.nodes if x in s], fraction_str(y)]
                                         for s, y in w.dual]
    spec = row["machine"]
    return {
        "format": "collcert-golden-allreduce/1",
        "id": f"paper-{spec.replace(':', '-')}",
        "description": (f"the allreduce rates of the built-in platform {spec} "
                        f"({row['K']} compute nodes), a machine evaluated by Zhao et al. 2026 / "
                        f"Zhao & Krishnamurthy 2023 / Zhou & Sun 2026 (issue 19 item 6); RS+AG "
                        f"optimal: {row['rsag_optimal']}"),
        "expected": {k: fraction_str(x) for k, x in exp.items() if x is not None},
        "check": "max-flow",
        "provenance": [
            f"collcert (benchmarks/allreduce_papers.py {spec}): every value with its "
            "certificate, the bundle checked by collcert.certify (check_bundle)",
            "golden/check_allreduce.py re-derives cut_set_bound, rsag_algbw, rsag_weighted "
            "(witness shards and dual) and bound7_algbw with its own max-flow; forestcoll_lp "
            "and mac_bc_lp are recorded from collcert's exact LPs (certificates checked by "
            "collcert.certify), not re-derived there",
            "how each figure was obtained: " + "; ".join(
                f"{k}: {row['how'][k]}" for k in KEYS if k in row["how"]),
        ],
        "witness": witness,
        "topology": t.to_json(),
    }


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("machines", nargs="*", help=f"platform specs (default: {' '.join(SMALL)}; "
                    f"issue 19 names {' '.join(ALL)})")
    ap.add_argument("--golden", metavar="DIR", help="write one golden case per machine here")
    ap.add_argument("--json", metavar="FILE", help="write the figures as JSON here")
    args = ap.parse_args(argv)
    rows = []
    head = ["machine", "K", "RS+AG", "weighted", "LP (5)", "R_LP", "bound (7)", "C",
            "RS+AG optimal", "s", "check s"]
    print(" | ".join(head), flush=True)
    for spec in args.machines or SMALL:
        row = answer(spec)
        rows.append(row)
        v = row["values"]
        cells = [spec, str(row["K"]), *("—" if v[k] is None else show(v[k]) for k in KEYS),
                 row["rsag_optimal"], f"{row['seconds']:.1f}", f"{row['check_seconds']:.1f}"]
        print(" | ".join(cells), flush=True)
        for k in KEYS:
            if v[k] is None or not row["how"].get(k, "").startswith("certified"):
                print(f"    {k}: {row['how'].get(k, '')}", flush=True)
        if args.golden:
            out = Path(args.golden) / f"paper-{spec.replace(':', '-')}.json"
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(json.dumps(golden_case(row), indent=1) + "\n")
    if args.json:
        Path(args.json).write_text(json.dumps(
            [{"machine": r["machine"], "K": r["K"], "rsag_optimal": r["rsag_optimal"],
              "seconds": round(r["seconds"], 2),
              **{k: None if x is None else fraction_str(x) for k, x in r["values"].items()}}
             for r in rows], indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
