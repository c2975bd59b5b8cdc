#!/usr/bin/env python3
"""Time ForestColl's allreduce LP (5) at scale, by cut generation, with its certificate checked.

For each topology, in a fresh process: the topology is built, LP (5) is solved
in its cut form (``forestcoll_lp``, method ``cuts``: one max-flow per orbit of
compute nodes, Zhao et al. 2026, App. G), the certificate is written as JSON and
read back, and ``collcert.certify`` checks it alone. Columns:

* ``LP (5)`` the exact optimum; ``orbits`` sink orbits (compute nodes up to the
  verified automorphisms); ``cuts`` cuts generated; ``rounds`` float rounds;
  ``flows`` max-flows run;
* ``solve`` seconds of the solve, ``check`` seconds of the independent checker,
  ``total`` both, ``exact%`` the share of ``total`` spent in exact certification
  (the exact LP proof and exact witness max-flows inside the solve, plus the
  checker), ``MB`` the process's peak resident memory.

    python benchmarks/bench_allreduce_scale.py            # the issue's four machines
    python benchmarks/bench_allreduce_scale.py torus:4x4  # any platform spec or file
    python benchmarks/bench_allreduce_scale.py --schedule dgx_a100:16  # LP (5)'s trees

``--schedule``: instead, the LP (5) schedule (reduce and broadcast trees that reach
it, :func:`collcert.reference.allreduce.lp_schedule`) and collcert.certify's check of
the whole schedule file (time recomputed from the trees, LP (5) certificate).

Targets (issue 19), each with its certificate checked, on a 2-core machine:
mi250:2 and dgx_a100:16 under 30 s, the 8×8 torus under 10 s, dgx_a100:128
(1024 GPUs) under 5 minutes and 4 GiB. On a shared machine the wall time
depends on the load. The LP (5) schedule for dgx_a100:16: under 60 s.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

DEFAULT = ("mi250:2", "dgx_a100:16", "torus:8x8", "dgx_a100:128")
TARGETS = {"mi250:2": 30.0, "dgx_a100:16": 30.0, "torus:8x8": 10.0, "dgx_a100:128": 300.0}
SCHEDULE_TARGETS = {"dgx_a100:16": 60.0}


def one_schedule(spec: str) -> dict[str, object]:
    from collcert.certify.forestcoll import check_schedule
    from collcert.certify.model import Topo
    from collcert.commands._common import load_topology
    from collcert.reference.allreduce import lp_schedule
    from collcert.reference.model import fraction_str

    t = load_topology(spec, strict=False)
    t0 = time.perf_counter()
    s = lp_schedule(t)
    solve = time.perf_counter() - t0
    doc = json.loads(json.dumps(s.to_json()))
    t1 = time.perf_counter()
    v = check_schedule(Topo(t.to_json()), doc)
    check = time.perf_counter() - t1
    ok = v.ok and v.facts.get("forestcoll_lp") == s.algbw == 1 / v.facts["time_per_unit"]
    return {"topology": spec, "nodes": t.num_compute, "lp5": fraction_str(s.algbw),
            "trees": len(s.trees), "solve": solve, "check": check, "total": solve + check,
            "ok": ok, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def one(spec: str) -> dict[str, object]:
    from collcert.certify.allreduce import check_forestcoll_lp
    from collcert.commands._common import load_topology
    from collcert.reference.allreduce import forestcoll_lp
    from collcert.reference.model import fraction_str

    t = load_topology(spec, strict=False)
    t0 = time.perf_counter()
    r = forestcoll_lp(t, method="cuts")
    solve = time.perf_counter() - t0
    text = json.dumps(r.certificate())
    t1 = time.perf_counter()
    verdict = check_forestcoll_lp(t.to_json(), json.loads(text))
    check = time.perf_counter() - t1
    ru = resource.getrusage(resource.RUSAGE_SELF)
    total = solve + check
    return {
        "topology": spec, "nodes": t.num_compute, "links": len(t.capacity),
        "lp5": fraction_str(r.value), "orbits": r.stats["node_orbits"],
        "cuts": r.stats["cuts"], "rounds": r.stats["rounds"], "flows": r.stats["max_flows"],
        "solve": solve, "check": check, "total": total,
        "exact_share": (r.stats["exact_seconds"] + check) / max(total, 1e-9),
        "certificate_bytes": len(text), "ok": verdict.ok, "rss_mb": ru.ru_maxrss / 1024,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("topologies", nargs="*", help="platform specs or topology files "
                    f"(default: {' '.join(DEFAULT)})")
    ap.add_argument("--schedule", action="store_true",
                    help="time LP (5)'s schedule and its check instead (default: dgx_a100:16)")
    ap.add_argument("--one", help=argparse.SUPPRESS)  # the child process
    args = ap.parse_args()
    if args.one:
        print(json.dumps(one_schedule(args.one) if args.schedule else one(args.one)))
        return 0
    if args.schedule:
        return schedules(args.topologies or ["dgx_a100:16"])
    print(f"{'topology':<14}{'N':>6}{'LP (5)':>12}{'orbits':>7}{'cuts':>6}{'rounds':>7}"
          f"{'flows':>6}{'solve s':>9}{'check s':>9}{'total s':>9}{'exact%':>7}{'MB':>7}"
          f"{'target':>8}")
    failed = 0
    for spec in args.topologies or DEFAULT:
        proc = subprocess.run([sys.executable, __file__, "--one", spec], capture_output=True,
                              text=True)
        if proc.returncode:
            print(f"{spec:<14} failed: {proc.stderr.strip().splitlines()[-1:]}")
            failed += 1
            continue
        r = json.loads(proc.stdout)
        target = TARGETS.get(spec)
        verdict = "" if target is None else ("met" if r["total"] < target else "MISSED")
        print(f"{spec:<14}{r['nodes']:>6}{r['lp5']:>12}{r['orbits']:>7}{r['cuts']:>6}"
              f"{r['rounds']:>7}{r['flows']:>6}{r['solve']:>9.2f}{r['check']:>9.2f}"
              f"{r['total']:>9.2f}{100 * r['exact_share']:>6.0f}%{r['rss_mb']:>7.0f}"
              f"{verdict:>8}" + ("" if r["ok"] else "  CERTIFICATE REFUSED"))
        failed += not r["ok"]
    return 1 if failed else 0


def schedules(specs: list[str]) -> int:
    print(f"{'topology':<14}{'N':>6}{'LP (5)':>12}{'trees':>7}{'build s':>9}{'check s':>9}"
          f"{'total s':>9}{'MB':>7}{'target':>8}")
    failed = 0
    for spec in specs:
        proc = subprocess.run([sys.executable, __file__, "--schedule", "--one", spec],
                              capture_output=True, text=True)
        if proc.returncode:
            print(f"{spec:<14} failed: {proc.stderr.strip().splitlines()[-1:]}")
            failed += 1
            continue
        r = json.loads(proc.stdout)
        target = SCHEDULE_TARGETS.get(spec)
        verdict = "" if target is None else ("met" if r["total"] < target else "MISSED")
        print(f"{spec:<14}{r['nodes']:>6}{r['lp5']:>12}{r['trees']:>7}{r['solve']:>9.2f}"
              f"{r['check']:>9.2f}{r['total']:>9.2f}{r['rss_mb']:>7.0f}{verdict:>8}"
              + ("" if r["ok"] else "  SCHEDULE REFUSED"))
        failed += not r["ok"]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
