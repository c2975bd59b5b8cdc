#!/usr/bin/env python3
"""Time the in-network allreduce optimum (switches that add: NVLS, SHARP), certified.

The built-ins' NVSwitches are NVLS switches (NVLink SHARP: the sum goes into a member
GPU, which stores it back by multicast); ``,sharp`` makes the InfiniBand switch a SHARP
switch (it holds its sums and multicasts them).

For each machine, in a fresh process: the topology is built, the in-network optimum is
computed (:func:`collcert.reference.innetwork.in_network_rate`: upper bounds, then the
schedule by the machine's symmetry or by column generation), its certificate is written
as JSON, read back and checked by ``collcert.certify`` alone. Columns:

* ``lower``/``upper`` the certified bracket (exact when equal), with decimals;
  ``method`` how the schedule was found; ``bound`` what proves the upper bound;
* ``solve`` seconds of the reference (the cut-set bound's max-flows included),
  ``check`` seconds of the independent checker, ``total`` both, ``MB`` peak memory,
  ``goal`` the target and whether it is met.

``--command`` times the whole ``collcert optimum SPEC -c allreduce --json`` instead
(every allreduce figure, the in-network one among them, each certificate checked).

    python benchmarks/bench_innetwork.py                     # the issue's machines
    python benchmarks/bench_innetwork.py dgx_b200:16 gb200_nvl72:2,sharp
    python benchmarks/bench_innetwork.py --command dgx_h100:128

Target (issue 30): dgx_h100:128 (1024 GPUs) and 8 GB200 NVL72 racks (576 GPUs) under
60 s on 2 cores, certified. On a shared machine the wall time depends on the load.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

DEFAULT = ("dgx_h100:1", "dgx_h100:2", "dgx_h100:16", "dgx_h100:16,sharp", "dgx_b200:1",
           "dgx_b200:16", "gb200_nvl72:1", "gb200_nvl72:2", "dgx_h100:128", "gb200_nvl72:8",
           "gb200_nvl72:8,sharp")
GOAL = 60.0


def one(spec: str) -> dict[str, object]:
    from collcert.certify.innetwork import check_in_network
    from collcert.commands._common import load_topology
    from collcert.reference.innetwork import in_network_rate
    from collcert.reference.model import decimal_str, fraction_str

    t = load_topology(spec, strict=False)
    t0 = time.perf_counter()
    r = in_network_rate(t)
    if r is None:
        return {"spec": spec, "error": "no switch adds on this machine"}
    solve = time.perf_counter() - t0
    cert = json.loads(json.dumps(r.certificate()))
    t1 = time.perf_counter()
    v = check_in_network(t.to_json(), cert)
    check = time.perf_counter() - t1
    return {"spec": spec, "gpus": t.num_compute, "ok": v.ok,
            "lower": fraction_str(r.lower), "upper": fraction_str(r.upper),
            "approx": f"{decimal_str(r.lower, 2)}..{decimal_str(r.upper, 2)}",
            "exact": r.exact, "method": r.method.split(" (")[0].replace("averaged over the machine's symmetry", "by symmetry (orbits)"),
            "bound": "dual" if r.bound is None else r.bound.kind + (
                f" ({r.bound.label})" if r.bound.label else ""),
            "solve": solve, "check": check,
            "mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def command(spec: str) -> dict[str, object]:
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "collcert", "optimum", spec, "-c",
                           "allreduce", "--json"], capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode:
        return {"spec": spec, "error": proc.stderr.strip()[-300:]}
    out = json.loads(proc.stdout)
    return {"spec": spec, "algbw": out["algbw"], "model": out["algbw_model"],
            "exact": (out.get("in_network") or {}).get("exact"), "total": wall}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("specs", nargs="*", default=list(DEFAULT),
                    help="platform specs or topology files (default: the issue's machines)")
    ap.add_argument("--command", action="store_true",
                    help="time the whole 'collcert optimum SPEC -c allreduce --json'")
    ap.add_argument("--one", metavar="SPEC", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(command(args.one) if args.command else one(args.one)))
        return 0
    bad = 0
    if not args.command:
        print(f"{'machine':22} {'GPUs':>5} {'lower':>14} {'upper':>14} {'≈':>18} {'':7} "
              f"{'schedule':32} {'upper bound':24} {'solve':>6} {'check':>6} {'total':>6} "
              f"{'MB':>6}  goal")
    for spec in args.specs:
        flag = ["--command"] if args.command else []
        proc = subprocess.run([sys.executable, __file__, "--one", spec, *flag],
                              capture_output=True, text=True)
        if proc.returncode:
            print(f"{spec:22} FAILED: {proc.stderr.strip()[-300:]}")
            bad += 1
            continue
        row = json.loads(proc.stdout)
        if "error" in row:
            print(f"{spec:22} {row['error']}")
            continue
        if args.command:
            met = "met" if row["total"] <= GOAL else "MISSED"
            print(f"{spec:22} algbw {row['algbw']:>12} [{row['model']}] exact={row['exact']} "
                  f"total {row['total']:6.1f} s  goal {GOAL:.0f} s {met}")
            continue
        total = row["solve"] + row["check"]
        met = "met" if total <= GOAL and row["ok"] else "MISSED"
        bad += not row["ok"]
        print(f"{spec:22} {row['gpus']:5} {row['lower']:>14} {row['upper']:>14} "
              f"{row['approx']:>18} {'exact' if row['exact'] else 'bracket':7} "
              f"{row['method']:32} {row['bound']:24} {row['solve']:6.1f} {row['check']:6.1f} "
              f"{total:6.1f} {row['mb']:6.0f}  {GOAL:.0f} s {met}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
