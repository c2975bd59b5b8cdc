"""Times of the smoke harness and the MSCCL export.

Run: python benchmarks/bench_smoke.py [--quick]

Prints, for each case, the wall time end to end and the CPU seconds (this process and
its children: the gloo ranks are child processes):

* building execution plans and compiling MSCCL XML for dgx_a100:2 and mi250:2;
* ``collcert smoke`` with the gloo backend on 8-rank schedules (target: under 30 s in
  CI, start of the ranks included), with the per-iteration time it measured;
* the single-gpu backend on the CPU (emulated streams) on larger schedules.

Needs torch for the first two parts (pip install 'collcert[smoke]').
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import collcert
from collcert.commands._common import load_topology
from collcert.reference.execution import msccl_xml, plan_from_schedule


def _cpu() -> float:
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def timed(label: str, fn: Callable[[], Any]) -> Any:
    c0, t0 = _cpu(), time.perf_counter()
    out = fn()
    wall, cpu = time.perf_counter() - t0, _cpu() - c0
    print(f"{label:<58} {wall:7.2f} s wall {cpu:7.2f} s cpu")
    return out


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="dgx_a100:2 and 1 MiB only (no mi250:2, no 16 MiB runs)")
    quick = ap.parse_args(argv).quick
    tmp = Path(tempfile.mkdtemp(prefix="bench-smoke-"))
    print("MSCCL export and execution plans")
    files: dict[str, Path] = {}
    for topo in ["dgx_a100:2"] + ([] if quick else ["mi250:2"]):
        t = load_topology(topo)
        for coll in ("allgather", "allreduce"):
            s = collcert.schedule(t, coll)
            doc = s.to_json(certificates=False)
            plan = timed(f"  plan   {topo} {coll} ({len(s.trees)} trees)",
                         lambda doc=doc: plan_from_schedule(doc))
            xml = timed(f"  msccl-xml {topo} {coll} ({len(plan.ops)} plan ops)",
                        lambda s=s: msccl_xml(s))
            path = tmp / f"{topo.replace(':', '')}_{coll}.xml"
            path.write_text(xml)
            files[f"{topo} {coll}"] = path
    try:
        import torch  # noqa: F401
    except ImportError:
        print("torch is not installed: pip install 'collcert[smoke]' for the smoke timings")
        return 0
    from collcert.smoke import smoke

    print("collcert smoke, gloo (8 ranks = 8 processes), end to end")
    for topo in ("two_box_example", "dgx_a100:1"):
        t = load_topology(topo)
        for coll in ("allgather", "allreduce"):
            path = tmp / f"{topo.replace(':', '')}_{coll}.json"
            import json

            path.write_text(json.dumps(collcert.schedule(t, coll).to_json(certificates=False)))
            for size in ((1 << 20,) if quick else (1 << 20, 16 << 20)):
                rep = timed(f"  gloo   {topo} {coll} {size >> 20} MiB, 5 iterations",
                            lambda p=path, size=size: smoke(str(p), backend="gloo", size=size,
                                                            iters=5))
                assert rep.passed, rep.summary()
                print(f"{'':<10}{'PASS' if rep.passed else 'FAIL'}: {rep.median_time() * 1e3:.1f} "
                      f"ms per iteration, measured {rep.measured_algbw_gbps():.3g} GB/s "
                      f"(model {rep.model_algbw} {rep.model_unit})")
    print("collcert smoke, single-gpu on the CPU (emulated streams), end to end")
    for name, path in files.items():
        rep = timed(f"  single {name} (msccl-xml), 1 MiB, 2 iterations",
                    lambda p=path: smoke(str(p), backend="single-gpu", device="cpu",
                                         size=1 << 20, iters=2))
        assert rep.passed, rep.summary()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
