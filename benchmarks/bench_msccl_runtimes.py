"""The MSCCL runtime profiles (issue 29, docs/runtimes.md) over many random machines.

The property of tests/test_msccl_runtimes.py at campaign size: on random switch
topologies of collcert.fuzz, every collective's MSCCL export for every runtime
(msccl-executor-nccl, rccl, microsoft-msccl) passes that runtime's profile and
audits VALID at the rate the export states; and the time the profile takes to
judge a file, against the time of the export.

    python benchmarks/bench_msccl_runtimes.py [--seeds N] [--max-nodes N]

Prints one line per failure (none expected) and a summary: exports checked, per
runtime, and the judge's share of the export's CPU time.
"""

from __future__ import annotations

import argparse
import time
from fractions import Fraction

import collcert
from collcert.certify.execution import runtimes
from collcert.fuzz.generators import RandomSource, random_topology
from collcert.reference.execution import alltoall_msccl_xml, export_rate, msccl_xml
from collcert.reference.model import ScheduleError

RUNTIMES = ("msccl-executor-nccl", "rccl", "microsoft-msccl")
COLLECTIVES = ("allgather", "reduce-scatter", "allreduce", "broadcast", "reduce", "alltoall")
KINDS = ["switched_cycles", "switched", "boxes"]


def export(t: collcert.Topology, coll: str, runtime: str) -> tuple[str, Fraction, bool] | None:
    """(text, the time per unit it states, True for alltoall: a bound), or None."""
    try:
        if coll == "alltoall":
            text, algbw = alltoall_msccl_xml(t, runtime=runtime)
            return text, 1 / algbw, True
        root = t.compute_nodes[-1] if coll in ("broadcast", "reduce") else None
        s = collcert.schedule(t, coll, root=root)
        if max(p.k for p in s.phases) * t.num_compute > 60:
            return None
        text = msccl_xml(s, strict=False, runtime=runtime)
        rate = export_rate(s, t)
        return text, rate.export_time if rate.slower else s.time_per_unit, False
    except ScheduleError:
        return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=40)
    ap.add_argument("--max-nodes", type=int, default=7)
    args = ap.parse_args()
    done = {r: 0 for r in RUNTIMES}
    failures = 0
    export_cpu = judge_cpu = 0.0
    for seed in range(args.seeds):
        t = random_topology(RandomSource(f"bench-runtimes:{seed}"), max_nodes=args.max_nodes,
                            kinds=KINDS, capacities="small")
        for coll in COLLECTIVES:
            for runtime in RUNTIMES:
                t0 = time.process_time()
                got = export(t, coll, runtime)
                t1 = time.process_time()
                if got is None:
                    continue
                text, stated, bound = got
                verdict = runtimes.get(runtime).judge(text + "\n", "bench")  # not remembered
                t2 = time.process_time()
                export_cpu, judge_cpu = export_cpu + t1 - t0, judge_cpu + t2 - t1
                report = collcert.audit(t, text, runtime=runtime)
                ok = verdict.ok and report.valid and report.time_per_unit is not None and (
                    report.time_per_unit >= stated if bound else report.time_per_unit <= stated)
                if not ok:
                    failures += 1
                    print(f"FAIL seed {seed} {coll} {runtime}: {verdict.describe()}; "
                          f"{report.reasons[:2]}")
                done[runtime] += 1
    print(f"{sum(done.values())} exports checked ({', '.join(f'{r} {n}' for r, n in done.items())}),"
          f" {failures} failures; judging took {judge_cpu:.1f} s of CPU, the exports "
          f"{export_cpu:.1f} s (judge included)")


if __name__ == "__main__":
    main()
