#!/usr/bin/env python3
"""The general schedule path (no symmetry; issue 20, item 2): certified schedules built by
switch removal and tree packing on the whole graph, timed as a user runs them.

Every case is ``collcert schedule TOPOLOGY --no-symmetry --check --json`` in a fresh
process under ``/usr/bin/time``: wall seconds, CPU seconds (user + system), peak
resident memory; from the command's JSON, the estimate it printed before it started
(CPU seconds) beside the measured stages, and the max-flows per placed arc of the
packing (all phases together).

    python benchmarks/bench_general_path.py                # quick cases (about 1 min)
    python benchmarks/bench_general_path.py --long         # also dgx_a100:16 (128 GPUs)
    python benchmarks/bench_general_path.py --long --huge  # also dgx_a100:32 (256 GPUs)
    python benchmarks/bench_general_path.py -k random      # only those cases

Cases: dgx_a100 clusters with b1.nic2 (b3.nic2 from 16 boxes) at 25/2 GB/s (what-if
``--degrade``; ``--no-symmetry`` keeps the schedule off the symmetrized machine), a
random 64-node topology (56 GPUs and 8 switches joined by random directed cycles,
``collcert.fuzz.generators.cycle_union``, fixed seed), a random two-tier switched
topology with extra cycles, and fat_tree:8 (128 hosts). Each case's address space is
capped (--max-memory, default 3 GiB: a shared machine).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile

from _timed import timed_cli

RANDOM_SEED = 2


def random_topologies(workdir: str) -> dict[str, str]:
    """The random cases as topology files: name -> path."""
    from collcert.fuzz.generators import RandomSource, cycle_union, directed_cycles, switched

    src = RandomSource(RANDOM_SEED)
    cycles = cycle_union(src, min_compute=56, max_compute=56, max_cycles=12, switches=8,
                         capacities="small", name="random cycles, 56 GPUs + 8 switches")
    src = RandomSource(RANDOM_SEED)
    tiers = switched(src, min_compute=48, max_compute=48, max_tiers=2,
                     max_switches_per_tier=6, capacities="small")
    tiers = directed_cycles(src, tiers, min_cycles=6, max_cycles=10, max_length=8,
                            capacities="small")
    out = {}
    for key, topo in (("cycles", cycles), ("switched", tiers)):
        path = os.path.join(workdir, f"random-{key}.json")
        with open(path, "w") as fh:
            json.dump(topo.to_json(), fh)
        out[key] = path
    return out


def cases(long: bool, huge: bool, files: dict[str, str]) -> list[tuple[str, list[str]]]:
    half = ["--degrade", "b1.nic2=25/2"]
    out = [
        ("dgx_a100:4 NIC halved (32 GPUs)", ["dgx_a100:4", *half]),
        ("dgx_a100:8 NIC halved (64 GPUs)", ["dgx_a100:8", *half]),
        ("random cycles, 64 nodes", [files["cycles"]]),
        ("random switched, 48 GPUs", [files["switched"]]),
        ("fat_tree:8 (128 hosts)", ["fat_tree:8"]),
    ]
    if long:
        out.append(("dgx_a100:16 NIC halved (128 GPUs)", ["dgx_a100:16", "--degrade",
                                                          "b3.nic2=25/2"]))
    if huge:
        out.append(("dgx_a100:32 NIC halved (256 GPUs)", ["dgx_a100:32", "--degrade",
                                                          "b3.nic2=25/2"]))
    return out


def run(args: list[str], timeout: float, workdir: str, gib: float) -> dict[str, object]:
    """One ``collcert schedule`` under /usr/bin/time; its figures and its JSON summary."""
    info = timed_cli(["schedule", *args, "--no-symmetry", "--check", "--json"], timeout,
                     workdir, gib)
    if "stderr" in info:
        info["tail"] = (str(info["stderr"]).strip().splitlines() or [""])[-1]
        if info["returncode"] == 0:
            info["summary"] = json.loads(str(info["stdout"]))
    return info


def _figures(summary: dict[str, object]) -> tuple[str, str, str]:
    """(estimated CPU s, measured split + packing s, max-flows per placed arc)."""
    est = summary.get("general_path_estimates") or []
    measured = summary.get("general_path_measured") or []
    stages = {s["stage"]: s["seconds"] for s in summary.get("stages", [])}  # type: ignore
    guess = sum(e["seconds"] for e in est)  # type: ignore[index]
    took = stages.get("switch removal", 0.0) + stages.get("packing", 0.0)
    placed = sum(m["packing_placed"] for m in measured)  # type: ignore[index]
    flows = sum(m["packing_maxflows"] for m in measured)  # type: ignore[index]
    return (f"{guess:.1f}", f"{took:.1f}", f"{flows / placed:.2f}" if placed else "-")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--long", action="store_true", help="also dgx_a100:16 (128 GPUs)")
    ap.add_argument("--huge", action="store_true", help="also dgx_a100:32 (256 GPUs)")
    ap.add_argument("--timeout", type=float, default=600,
                    help="stop a case after this many seconds (default 600)")
    ap.add_argument("--max-memory", type=float, default=3, metavar="GIB",
                    help="cap each case's address space (default 3 GiB)")
    ap.add_argument("-k", metavar="TEXT", default="",
                    help="run only the cases whose label contains TEXT")
    args = ap.parse_args(argv)
    print(f"python {platform.python_version()}, {os.cpu_count()} CPUs, load average "
          f"{os.getloadavg()[0]:.1f}; seconds and MB. est: the CPU seconds the command "
          "predicted for switch removal + packing; took: their wall seconds")
    print(f"{'case':<36}{'status':>10}{'wall':>8}{'CPU':>8}{'peak':>7}{'est':>8}{'took':>8}"
          f"{'flows/arc':>10}")
    with tempfile.TemporaryDirectory() as workdir:
        files = random_topologies(workdir)
        for label, cmd in cases(args.long, args.huge, files):
            if args.k not in label:
                continue
            info = run(cmd, args.timeout, workdir, args.max_memory)
            est, took, per_arc = _figures(info["summary"]) if "summary" in info else \
                ("", "", "")
            cpu = f"{info['cpu']:>8.1f}" if "cpu" in info else f"{'':>8}"
            peak = f"{info['peak_mb']:>7.0f}" if "peak_mb" in info else f"{'':>7}"
            print(f"{label:<36}{info['status']:>10}{info['wall']:>8.1f}{cpu}{peak}{est:>8}"
                  f"{took:>8}{per_arc:>10}", flush=True)
            if str(info["status"]).startswith("exit"):
                print(f"    {str(info.get('tail', ''))[:200]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
