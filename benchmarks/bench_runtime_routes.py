"""`collcert schedule --routes runtime` at scale (issue 22): per machine and collective, the
runtime-routes optimum (cut generation), ForestColl's, the gap, the time to build and to
check the schedule, and the rate of its MSCCL export (collcert.reference.execution.export_rate).
By default the constrained optimum is always solved (``--method cuts``); the CLI first tries
ForestColl's own schedule (``--method auto``).

    python benchmarks/bench_runtime_routes.py [MACHINE ...] [--collectives allgather,allreduce]

Prints one line per case; figures are exact (p/q). Machines default to the issue's list:
the 5-GPU example of issue 22, torus:4x4, dgx_a100:2, mi250:2, dgx_a100:4.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import collcert  # noqa: E402
from collcert.certify.forestcoll import check_schedule  # noqa: E402
from collcert.certify.model import Topo  # noqa: E402
from collcert.commands._common import load_topology  # noqa: E402
from collcert.reference.execution import export_rate, runtime_schedule  # noqa: E402
from collcert.reference.model import show  # noqa: E402

DEFAULT = ["issue22", "torus:4x4", "dgx_a100:2", "mi250:2", "dgx_a100:4"]


def machine(name: str) -> collcert.Topology:
    if name == "issue22":
        from test_export_rate import issue_topology

        return issue_topology()
    return load_topology(name)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("machines", nargs="*", default=DEFAULT)
    ap.add_argument("--collectives", default="allgather,reduce-scatter,allreduce")
    ap.add_argument("--method", default="cuts", choices=("cuts", "auto"),
                    help="cuts (default): always solve the constrained optimum; auto: what "
                    "the CLI does (ForestColl's own schedule when it already fits)")
    args = ap.parse_args()
    for name in args.machines:
        t = machine(name)
        for coll in args.collectives.split(","):
            t0 = time.perf_counter()
            doc = runtime_schedule(t, coll, method=args.method)
            t1 = time.perf_counter()
            v = check_schedule(Topo(t.to_json()), doc)
            t2 = time.perf_counter()
            free = collcert.optimum(t, coll).algbw
            rate = export_rate(doc, t)
            bound = v.facts["certified_optimum_algbw"]
            print(f"{name:11} {coll:14} runtime {show(bound):>26}  forestcoll {show(free):>26}"
                  f"  gap {show(bound / free):>22}  schedule {'valid' if v.ok else 'INVALID'}"
                  f" {show(v.facts.get('algbw'))}  export {show(1 / rate.export_time)}"
                  f"  build {t1 - t0:.1f} s  check {t2 - t1:.1f} s", flush=True)


if __name__ == "__main__":
    main()
