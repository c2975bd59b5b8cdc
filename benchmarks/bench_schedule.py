"""Benchmark of certified schedules: build, write (gzip), check; per stage, per size.

Run:  python benchmarks/bench_schedule.py                 (dgx_a100:16..256, mi250:8..64)
      python benchmarks/bench_schedule.py dgx_a100:64 mi250:8 -c allreduce
      python benchmarks/bench_schedule.py --quick           (the smaller half)
      python benchmarks/bench_schedule.py --no-symmetry dgx_a100:16

Each topology runs in a fresh process (so its peak memory is its own): the
schedule is built (seconds per stage: optimum, symmetry, switch removal,
packing, mapping back), written as compact JSON to a ``.json.gz`` file, and
then read back and checked by ``collcert.certify`` alone (every tree, path
and load, the exact time, the embedded optimum certificate and the G*
certificates): the "certify" column. "ok" means valid and equal to the
certified optimum (allreduce: to the RS+AG time of the certified optima). Peak memory
is the process's maximum resident set; CPU is user + system seconds (on a
shared machine wall time depends on the load, CPU time much less).

The growth exponent is the least-squares slope of log(total seconds) over
log(boxes) for each family (dgx_a100, mi250), on CPU and on wall time.

Targets (issue 13, a 2-core 24 GiB machine): dgx_a100:64 under 30 s;
dgx_a100:128 and mi250:64 (1024 GPUs) under 3 min and 4 GiB; dgx_a100:256
(2048 GPUs) under 15 min and 12 GiB; the 1024-GPU file under 100 MB; growth
no faster than about N² in the number of boxes.

Findings (loaded shared machine, ~9 sessions on 2 cores; allgather):
see docs/schedules.md "Large machines" for the table of the last run.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time

DEFAULT = ["dgx_a100:16", "dgx_a100:32", "dgx_a100:64", "dgx_a100:128", "dgx_a100:256",
           "mi250:8", "mi250:16", "mi250:32", "mi250:64"]
QUICK = ["dgx_a100:16", "dgx_a100:32", "dgx_a100:64", "mi250:8", "mi250:16"]
STAGES = ["optimum", "symmetry", "switch removal", "packing", "mapping back"]


def worker(spec: str, collective: str, symmetry: bool, out: str) -> None:
    """Build, write, audit one topology; print one JSON line."""
    import resource

    from collcert.certify.forestcoll import check_schedule, schedule_json
    from collcert.certify.model import Topo, read_text
    from collcert.commands._common import load_topology
    from collcert.reference.forestcoll import schedule, write_schedule

    t = load_topology(spec)
    t0 = time.monotonic()
    s = schedule(t, collective, symmetry=None if symmetry else False)
    t1 = time.monotonic()
    write_schedule(s, out)
    t2 = time.monotonic()
    info = {
        "spec": spec, "n": t.num_compute, "k": [p.k for p in s.phases],
        "trees": len(s.trees), "height": s.max_height,
        "stages": {k: round(v, 3) for k, v in s.timings.items()},
        "memory": {k: round(v, 1) for k, v in s.memory.items()},
        "build": round(t1 - t0, 3), "write": round(t2 - t1, 3),
        "symmetry": s.phases[0].stats.get("symmetry"), "bytes": os.path.getsize(out),
    }
    target = s.extra["target_time_per_unit"]
    del s
    # the check: the file read back and judged by collcert.certify alone (trees, paths,
    # loads, exact time; the embedded optimum and G* certificates)
    verdict = check_schedule(Topo(t.to_json()), schedule_json(read_text(out, 1 << 30), out))
    t3 = time.monotonic()
    ru = resource.getrusage(resource.RUSAGE_SELF)
    optimal = verdict.facts.get("time_per_unit") == target and (
        collective == "allreduce" or verdict.facts.get("certified_optimum_algbw") == 1 / target)
    info.update({"certify": round(t3 - t2, 3), "valid": verdict.ok,
                 "optimal": optimal, "wall": round(t3 - t0, 3),
                 "cpu": round(ru.ru_utime + ru.ru_stime, 2), "peak_mb": round(ru.ru_maxrss / 1024)})
    print(json.dumps(info), flush=True)


def slope(points: list[tuple[float, float]]) -> float | None:
    """Least-squares slope of log y over log x."""
    pts = [(math.log(x), math.log(y)) for x, y in points if x > 0 and y > 0]
    if len(pts) < 2:
        return None
    mx = sum(p[0] for p in pts) / len(pts)
    my = sum(p[1] for p in pts) / len(pts)
    den = sum((p[0] - mx) ** 2 for p in pts)
    return sum((p[0] - mx) * (p[1] - my) for p in pts) / den if den else None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("topologies", nargs="*")
    ap.add_argument("--collective", "-c", default="allgather")
    ap.add_argument("--quick", action="store_true", help="the smaller sizes only")
    ap.add_argument("--no-symmetry", action="store_true", help="general algorithms only")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args.worker, args.collective, not args.no_symmetry, args.out)
        return
    specs = args.topologies or (QUICK if args.quick else DEFAULT)
    head = (f"{'topology':<14}{'GPUs':>5}{'k':>4}" + "".join(f"{s[:8]:>9}" for s in STAGES)
            + f"{'write':>8}{'certify':>9}{'wall':>8}{'cpu':>8}{'peak MB':>9}{'file MB':>9}"
            f"{'trees':>7}{'ht':>4}  ok")
    print(f"{args.collective}; seconds per stage (wall); certify = the written file checked by "
          "collcert.certify")
    print(head)
    print("-" * len(head))
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for spec in specs:
            out = os.path.join(tmp, spec.replace(":", "_") + ".json.gz")
            cmd = [sys.executable, __file__, "--worker", spec, "--out", out,
                   "-c", args.collective] + (["--no-symmetry"] if args.no_symmetry else [])
            proc = subprocess.run(cmd, capture_output=True, text=True)
            if proc.returncode != 0:
                print(f"{spec:<14} failed: {proc.stderr.strip().splitlines()[-1:]}", flush=True)
                continue
            r = json.loads(proc.stdout.strip().splitlines()[-1])
            results.append(r)
            st = r["stages"]
            print(f"{spec:<14}{r['n']:>5}{r['k'][0]:>4}"
                  + "".join(f"{st.get(s, 0.0):>9.2f}" for s in STAGES)
                  + f"{r['write']:>8.2f}{r['certify']:>9.2f}{r['wall']:>8.1f}{r['cpu']:>8.1f}"
                  f"{r['peak_mb']:>9}{r['bytes'] / 1e6:>9.1f}{r['trees']:>7}{r['height']:>4}  "
                  f"{'yes' if r['valid'] and r['optimal'] else 'NO'}", flush=True)
    print()
    for family in sorted({r["spec"].split(":")[0] for r in results}):
        rows = [r for r in results if r["spec"].split(":")[0] == family]
        boxes = [int(r["spec"].split(":")[1]) for r in rows]
        cpu = slope([(b, r["cpu"]) for b, r in zip(boxes, rows)])
        wall = slope([(b, r["wall"]) for b, r in zip(boxes, rows)])
        if cpu is not None and wall is not None:
            print(f"{family}: time grows as boxes^{cpu:.2f} (CPU seconds), boxes^{wall:.2f} "
                  f"(wall), over {min(boxes)}..{max(boxes)} boxes")
    sym = {r["symmetry"] for r in results}
    print("built by: " + "; ".join(sorted(str(x) for x in sym)))


if __name__ == "__main__":
    main()
