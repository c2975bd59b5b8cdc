#!/usr/bin/env python3
"""Time the certified alltoall optimum (maximum concurrent flow) by symmetry and by the
full LP, and the time to check its certificate.

Each (topology, method) runs in a fresh process, so its peak memory is its own:

* ``orbits``: ``alltoall_optimum(t, symmetry=True)``: automorphisms found and verified,
  the LP restricted to one commodity per orbit of compute nodes (docs/optimum.md); the
  certificate (generators, flows of the representatives, link lengths) is written as
  JSON, read back and checked by ``collcert.certify`` alone (the "check" columns);
* ``full``: ``alltoall_optimum(t, symmetry=False)``: one commodity per compute node,
  N·E columns, its LP certificate checked the same way (refused beyond 400,000 columns).

Columns: wall seconds of the optimum, CPU seconds (user + system) of building the
topology and solving, peak resident memory of the process up to then, orbits of compute
nodes, LP columns, check wall/CPU seconds and certificate size. On a shared machine wall
time depends on the load; CPU time much less.

    python benchmarks/bench_alltoall.py                    # the default cases below
    python benchmarks/bench_alltoall.py dgx_a100:256       # one topology
    python benchmarks/bench_alltoall.py --full-max-gpus 0  # orbits only

Default cases: dgx_a100:{2,16,64,128}, mi250:{8,64}, torus:8x8, torus:32x32; the full
LP up to 64 GPUs (dgx_a100:16, 128 GPUs, takes about 80 s and 400 MB that way).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time

CASES = ("dgx_a100:2", "torus:8x8", "mi250:8", "dgx_a100:16", "dgx_a100:64", "dgx_a100:128",
         "mi250:64", "torus:32x32")


def worker(spec: str, method: str) -> None:
    """One optimum in this process; print one JSON line."""
    import resource

    from collcert.certify.alltoall import check_alltoall_optimum
    from collcert.commands._common import load_topology
    from collcert.reference.alltoall import alltoall_optimum

    c0 = time.process_time()
    t = load_topology(spec)
    w1 = time.perf_counter()
    opt = alltoall_optimum(t, symmetry=method == "orbits")
    w2, c2 = time.perf_counter(), time.process_time()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    text = json.dumps(opt.certificate())
    topo = t.to_json()
    info: dict[str, object] = {
        "spec": spec, "method": method, "gpus": t.num_compute, "links": len(t.capacity),
        "optimum_s": w2 - w1, "cpu_s": c2 - c0, "peak_mb": peak, "algbw": str(opt.algbw),
        "orbits": len(opt.sym.orbits.reps) if opt.sym else t.num_compute,
        "columns": opt.result.stats.get("columns"),
    }
    del opt, t
    c3, w3 = time.process_time(), time.perf_counter()
    verdict = check_alltoall_optimum(topo, json.loads(text))
    info.update({"check_s": time.perf_counter() - w3, "check_cpu_s": time.process_time() - c3,
                 "check_ok": verdict.ok, "cert_mb": len(text) / 2**20,
                 "check_algbw": str(verdict.facts.get("algbw"))})
    print(json.dumps(info))


def run_one(spec: str, method: str) -> dict[str, object] | None:
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", spec, method]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        print(f"{spec} {method}: failed (exit {proc.returncode}): "
              f"{proc.stderr.strip().splitlines()[-1:]}", flush=True)
        return None
    info: dict[str, object] = json.loads(proc.stdout.strip().splitlines()[-1])
    return info


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("specs", nargs="*", help="topologies (default: the cases above)")
    ap.add_argument("--full-max-gpus", type=int, default=64,
                    help="run the full LP (a commodity per GPU) up to this many GPUs")
    ap.add_argument("--worker", nargs=2, metavar=("SPEC", "METHOD"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        worker(*args.worker)
        return 0
    print(f"python {platform.python_version()}, {os.cpu_count()} CPUs, {platform.machine()}; "
          f"load average {os.getloadavg()[0]:.1f}")
    print(f"{'topology':<14}{'GPUs':>6}{'method':>8}{'optimum s':>11}{'CPU s':>8}"
          f"{'peak MB':>9}{'orbits':>8}{'columns':>9}{'check s':>9}{'check CPU':>10}"
          f"{'cert MB':>9}  algbw")
    bad = 0
    for spec in args.specs or CASES:
        gpus = args.full_max_gpus + 1
        for method in ("orbits", "full"):
            if method == "full" and gpus > args.full_max_gpus:
                continue
            info = run_one(spec, method)
            if info is None:
                continue
            gpus = int(str(info["gpus"]))
            ok = "" if info["check_ok"] and info["check_algbw"] == info["algbw"] else " BAD"
            bad += bool(ok)
            print(f"{spec:<14}{info['gpus']:>6}{method:>8}{info['optimum_s']:>11.2f}"
                  f"{info['cpu_s']:>8.2f}{info['peak_mb']:>9.0f}{info['orbits']:>8}"
                  f"{info['columns']:>9}{info['check_s']:>9.2f}{info['check_cpu_s']:>10.2f}"
                  f"{info['cert_mb']:>9.2f}{ok}  {info['algbw']}", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
