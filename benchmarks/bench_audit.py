"""Benchmark: auditing a large allgather schedule, and certificate checking vs generation.

    python benchmarks/bench_audit.py                 # dgx_a100:128 = 1024 GPUs
    python benchmarks/bench_audit.py --boxes 16      # smaller
    python benchmarks/bench_audit.py --reference     # audit collcert.schedule's own schedule
    python benchmarks/bench_audit.py --schedule ag.json   # audit an existing schedule file
    python benchmarks/bench_audit.py --msccl            # MSCCL exports, dgx_a100:2,8,16,32
    python benchmarks/bench_audit.py --msccl 2,8 -c allreduce --trace-memory
    python benchmarks/bench_audit.py --msccl mi250:2 -c allreduce   # a platform by name

By default the audited schedule is a "rail" allgather built here in a few
seconds, independently of collcert.schedule (--reference audits that one, about as
fast now that it uses the box symmetry): every root's data
runs along its own rail (GPU g of every box, through NIC g and the IB switch)
as a chain over the boxes, and each box's rail GPU hands it to its 7 box peers
through the NVSwitch. 1024 trees of 1023 edges. Each link out of a NIC
carries boxes − 1 of the boxes roots of its rail, each with 1/(8·boxes) of the
data: time (boxes − 1)/(8·boxes·25), algbw 25600/127 at 128 boxes, which is
the optimum (the audit prints the ratio).

Prints (wall-clock seconds on this machine):
* optimum: generating it (collcert.optimum) vs checking its certificate
  (collcert.certify.forestcoll.optimum.check_optimum), and the check's share of the
  generation (with one flow per orbit both are well under a second);
* schedule: building it (the rail one, or collcert.schedule with --reference;
  nothing with --schedule);
* audit: `audit_file` end to end (read, check trees / paths / loads and the
  certificates the schedule carries, compute and check the optimum) — target
  under 60 s for 1024 GPUs on a 2-core machine; and its parts.

With --msccl, the MSCCL programs `collcert schedule dgx_a100:B --format
msccl-xml` writes (marked for in-place and out-of-place calls, so simulated
twice) are audited instead, and each stage is timed in CPU seconds (the
machine may be shared; wall time would mislead): reading the XML (of which
the expat parse), simulating each mode and its postcondition, routing the
traffic (exact column generation and its checker), the certified optimum;
then `collcert audit` end to end in a fresh process, with its CPU time and
peak resident memory. --trace-memory adds each stage's peak Python
allocation (tracemalloc; a second, slower pass).

Measured on the shared 2-core development machine, allgather exports, CPU s
and peak RSS of `collcert audit` end to end, before (node-arc routing LP,
sweep-every-threadblock simulator) and after (column generation, event-driven
sweep): dgx_a100:2 0.54 s / 0.64 s; :8 3.96 s, 117 MB / 0.57 s, 75 MB;
:16 45.8 s, 309 MB / 1.11 s, 118 MB; :32 1224 s, 1.17 GB / 3.41 s, 285 MB.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from typing import Any


def rail_allgather(boxes: int) -> dict[str, object]:
    """The rail schedule described in the module docstring (collcert-schedule/1)."""
    trees = []
    for b in range(boxes):
        for g in range(8):
            edges = []
            for j in range(boxes):  # the chain along rail g, starting at box b
                here, nxt = (b + j) % boxes, (b + j + 1) % boxes
                src = f"b{here}.gpu{g}"
                if j + 1 < boxes:
                    dst = f"b{nxt}.gpu{g}"
                    ib = "ib0" if g % 2 == 0 else "ib1"
                    edges.append({"src": src, "dst": dst,
                                  "path": [src, f"b{here}.nic{g}", ib, f"b{nxt}.nic{g}", dst]})
                for h in range(8):  # hand it to the box peers
                    if h != g:
                        dst = f"b{here}.gpu{h}"
                        edges.append({"src": src, "dst": dst,
                                      "path": [src, f"b{here}.nvswitch", dst]})
            trees.append({"root": f"b{b}.gpu{g}", "multiplicity": 1, "direction": "out",
                          "edges": edges})
    return {"format": "collcert-schedule/1", "collective": "allgather",
            "compute_nodes": [f"b{b}.gpu{g}" for b in range(boxes) for g in range(8)],
            "phases": [{"collective": "allgather", "k": 1, "trees": trees}]}


def msccl_stages(boxes: int | str, collective: str = "allgather", trace: bool = False,
                 ) -> dict[str, object]:
    """Per-stage CPU seconds (and with ``trace`` peak Python bytes) of auditing the MSCCL
    export of ``collective`` on dgx_a100:``boxes`` (or the platform ``boxes`` names, e.g.
    ``mi250:2``); see the module docstring."""
    import tracemalloc
    from fractions import Fraction

    import collcert
    from collcert.auditing import certified_optimum, route
    from collcert.certify.execution import msccl, msccl_sim
    from collcert.certify.model import Topo, Verdict, xmlsafe
    from collcert.commands._common import load_topology
    from collcert.reference.execution import msccl_xml

    spec = f"dgx_a100:{boxes}" if str(boxes).isdigit() else str(boxes)
    topo = load_topology(spec)
    text = msccl_xml(collcert.schedule(topo, collective))
    out: dict[str, object] = {"topology": topo.name, "gpus": topo.num_compute,
                              "xml_MB": round(len(text) / 1e6, 1)}
    peaks: dict[str, int] = {}

    def stage(name: str, fn: Any) -> Any:
        if trace:
            tracemalloc.start()
        t = time.process_time()
        value = fn()
        out[name] = round(time.process_time() - t, 2)
        if trace:
            peaks[name] = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
        return value

    stage("parse", lambda: xmlsafe.parse(text, max_per_tag={"step": msccl.MAX_STEPS}))
    prog = stage("read", lambda: msccl.read(text))
    traffic: dict[tuple[int, int], int] = {}
    for mode in prog.modes():
        label = "in-place" if mode else "out-of-place"
        for tb in prog.tbs:
            tb.pc = 0
        sim = msccl_sim._Run(prog, mode, Verdict("bench"))
        stage(f"simulate {label}", sim.run)
        stage(f"postcondition {label}", sim.postcondition)
        assert sim.v.ok, sim.v.reasons[:3]
        traffic = traffic or sim.traffic
    nodes = list(topo.compute_nodes)
    demands = {(nodes[p], nodes[q]): Fraction(c, prog.nchunks)
               for (p, q), c in traffic.items() if p != q}
    r = stage("route", lambda: route(topo, demands))
    out["time_per_unit"] = str(r.time)
    ctopo = Topo(topo.to_json())
    stage("optimum", lambda: certified_optimum(topo, ctopo, prog.collective, None, None, True))
    if trace:
        out["peak_python_MB"] = {k: round(v / 2**20, 1) for k, v in peaks.items()}
    fd, path = tempfile.mkstemp(suffix=".xml")
    with os.fdopen(fd, "w") as fh:
        fh.write(text)
    child = ("import contextlib, io, json, resource, sys, time\n"
             "from collcert.cli import main\n"
             "with contextlib.redirect_stdout(io.StringIO()):\n"
             "    code = main(['audit', sys.argv[1], sys.argv[2]])\n"
             "u = resource.getrusage(resource.RUSAGE_SELF)\n"
             "print(json.dumps([code, u.ru_utime + u.ru_stime, u.ru_maxrss]))\n")
    try:
        proc = subprocess.run([sys.executable, "-c", child, spec, path],
                              capture_output=True, text=True, check=True)
    finally:
        os.unlink(path)
    code, cpu, rss = json.loads(proc.stdout.strip().splitlines()[-1])
    out["audit_exit"] = code
    out["audit_cpu_s"] = round(cpu, 2)
    out["audit_peak_rss_MB"] = round(rss / 1024, 1)  # ru_maxrss is in KiB on Linux
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--boxes", type=int, default=128, help="DGX A100 boxes (8 GPUs each)")
    ap.add_argument("--schedule", help="audit this schedule file instead of generating one")
    ap.add_argument("--reference", action="store_true",
                    help="audit collcert.schedule's schedule instead of the rail one")
    ap.add_argument("--msccl", nargs="?", const="2,8,16,32", metavar="BOXES",
                    help="audit MSCCL exports on dgx_a100 with these box counts (or these "
                         "platforms, e.g. mi250:2), stage by stage (default 2,8,16,32)")
    ap.add_argument("-c", "--collective", default="allgather",
                    help="with --msccl: the collective exported (allgather, allreduce, …)")
    ap.add_argument("--trace-memory", action="store_true",
                    help="with --msccl: each stage's peak Python allocation (slower)")
    args = ap.parse_args()
    if args.msccl:
        ok = True
        for boxes in args.msccl.split(","):
            row = msccl_stages(boxes, args.collective, args.trace_memory)
            peaks = row.pop("peak_python_MB", {})
            assert isinstance(peaks, dict)
            stages = [k for k in row if isinstance(row[k], float) and not k.startswith("audit")
                      and k != "xml_MB"]
            print(f"{args.collective} on {row['topology']} ({row['gpus']} GPUs, "
                  f"{row['xml_MB']} MB of XML, time per unit {row['time_per_unit']}), CPU s"
                  + (" [peak Python MB]" if peaks else "") + ":")
            print("  " + ", ".join(f"{k} {row[k]:.2f}" + (f" [{peaks[k]}]" if peaks else "")
                                   for k in stages))
            print(f"  collcert audit end to end: exit {row['audit_exit']}, "
                  f"{row['audit_cpu_s']:.2f} CPU s, peak RSS {row['audit_peak_rss_MB']} MB")
            ok = ok and row["audit_exit"] == 0
        return 0 if ok else 1

    import collcert
    from collcert.auditing import audit_file
    from collcert.certify.forestcoll import (
        check_optimum,
        check_schedule,
        read_schedule,
        schedule_json,
    )
    from collcert.certify.model import Topo

    topo = collcert.platforms.dgx_a100(args.boxes)
    print(f"topology: {topo.name}: {topo.num_compute} GPUs, {len(topo.switch_nodes)} switches, "
          f"{len(topo.capacity)} links")

    t0 = time.perf_counter()
    opt = collcert.optimum(topo)
    t_opt = time.perf_counter() - t0
    cert = opt.certificate()
    t1 = time.perf_counter()
    verdict = check_optimum(topo.to_json(), cert)
    t_chk = time.perf_counter() - t1
    arcs = sum(len(f["flow"]) for f in cert["flows"])
    print(f"optimum: algbw {collcert.fraction_str(opt.algbw)} {topo.unit}, k = {opt.k}, "
          f"{opt.maxflows} max-flows, generated in {t_opt:.2f} s")
    print(f"optimum certificate: {len(cert['flows'])} flows, {arcs} arcs; checked "
          f"({'ok' if verdict.ok else 'FAILED'}) in {t_chk:.2f} s = "
          f"{100 * t_chk / t_opt:.0f}% of generating it")

    path = args.schedule
    tmp = None
    if path is None:
        t2 = time.perf_counter()
        if args.reference:
            sched = collcert.schedule(topo, "allgather")
            doc = sched.to_json()
            what = (f"collcert.schedule: {len(sched.trees)} trees ("
                    + ", ".join(f"{k} {v:.1f} s" for k, v in sched.timings.items()) + ")")
        else:
            doc = rail_allgather(args.boxes)
            what = f"rail allgather: {8 * args.boxes} trees"
        t_sched = time.perf_counter() - t2
        fd, tmp = tempfile.mkstemp(suffix=".json")
        with os.fdopen(fd, "w") as fh:
            json.dump(doc, fh)
        del doc
        path = tmp
        print(f"schedule: {what}, built in {t_sched:.2f} s")
    size = os.path.getsize(path)
    print(f"schedule file: {size / 1e6:.1f} MB")

    t3 = time.perf_counter()
    report = audit_file(topo, path)
    t_audit = time.perf_counter() - t3
    print(f"audit: {'VALID' if report.valid else 'INVALID'}, algbw "
          f"{report.to_json()['algbw']}, ratio {report.to_json()['ratio']}: {t_audit:.2f} s "
          f"end to end (target < 60 s)")
    if not report.valid:
        for r in report.reasons[:5]:
            print("  -", r)

    # the parts, once more
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    ta = time.perf_counter()
    data = schedule_json(text)
    tb = time.perf_counter()
    ct = Topo(topo.to_json())
    sc = read_schedule(ct, data)
    tc = time.perf_counter()
    check_schedule(ct, sc, certificates=False)
    td = time.perf_counter()
    sc = read_schedule(ct, data)
    te = time.perf_counter()
    check_schedule(ct, sc, certificates=True)
    tf = time.perf_counter()
    print(f"  parts: parse JSON {tb - ta:.2f} s; read schedule {tc - tb:.2f} s; "
          f"trees/paths/loads {td - tc:.2f} s; with embedded certificates {tf - te:.2f} s")
    if tmp:
        os.unlink(tmp)
    return 0 if report.valid and verdict.ok else 1


if __name__ == "__main__":
    sys.exit(main())
