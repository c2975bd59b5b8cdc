#!/usr/bin/env python3
"""Machines as they are built (issue 31, items 1, 5, 6): rail-optimized fabrics, NVL72
racks and 3D tori, by the orbits of the group collcert finds on each.

Every case runs the ``collcert`` command a user would type, in a fresh process under
``/usr/bin/time`` (benchmarks/_timed.py): wall seconds, CPU seconds (user + system),
peak resident memory (MB), printed beside the case's goal. Schedules are certified
(``--check``: every tree, path and load by collcert.certify, or by orbits for a
symmetric file); every optimum's certificate is checked by collcert.certify as the
command runs. The "same run" baseline dgx_h100:128 runs first, and the rail fabric's
goal is checked against it (within 2×).

    python benchmarks/bench_machines_as_built.py             # the issue's rows
    python benchmarks/bench_machines_as_built.py -k torus    # the cases naming torus
    python benchmarks/bench_machines_as_built.py --compare   # also collcert compare

Goals (issue 31, 2 cores): rail-optimized DGX H100 of 128 servers (1024 GPUs)
schedule within 2× of dgx_h100:128, alltoall optimum < 3 min, allreduce LP (5)
< 3 min; 4 GB200 NVL72 racks allreduce LP (5) < 60 s; 8 racks schedule < 120 s and
alltoall < 3 min; torus 8×8×8 schedule < 60 s; torus 16×16×16 optimum and symmetric
schedule < 5 min. ``--compare`` adds ``collcert compare`` on the same machines
(goal: under a minute).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

from _timed import case_options, print_case_header, timed_cli

RAILS = "dgx_h100_rails:128"


def cases(compare: bool) -> list[tuple[str, list[str], str]]:
    """(label, collcert arguments, goal); '{out}' is a file to write."""
    out = [
        ("dgx_h100:128 schedule (baseline)", ["schedule", "dgx_h100:128", "--check", "-o",
                                              "{out}"], "baseline of the next row"),
        ("rails 1024 GPUs: schedule", ["schedule", RAILS, "--check", "-o", "{out}"],
         "within 2x of the baseline"),
        ("rails 1024 GPUs: alltoall optimum", ["optimum", "-c", "alltoall", RAILS], "< 180 s"),
        ("rails 1024 GPUs: allreduce LP (5)", ["optimum", "-c", "allreduce", RAILS], "< 180 s"),
        ("NVL72 x4 (288 GPUs): allreduce LP (5)", ["optimum", "-c", "allreduce",
                                                   "gb200_nvl72:4"], "< 60 s"),
        ("NVL72 x8 (576 GPUs): schedule", ["schedule", "gb200_nvl72:8", "--check", "-o",
                                           "{out}"], "< 120 s"),
        ("NVL72 x8 (576 GPUs): alltoall optimum", ["optimum", "-c", "alltoall",
                                                   "gb200_nvl72:8"], "< 180 s"),
        ("torus 8x8x8: schedule", ["schedule", "torus:8x8x8", "--check", "-o", "{out}"],
         "< 60 s"),
        ("torus 16x16x16: optimum", ["optimum", "torus:16x16x16"], "< 300 s"),
        ("torus 16x16x16: symmetric schedule", ["schedule", "torus:16x16x16", "--symmetric",
                                                "--check", "-o", "{out}"], "< 300 s"),
    ]
    if compare:
        out += [(f"compare {m}", ["compare", m], "< 60 s")
                for m in ("gb200_nvl72:4", "torus:8x8x8", "dgx_a100:16", RAILS)]
        out.append(("compare dgx_a100:16 allreduce sizes",
                    ["compare", "dgx_a100:16", "-c", "allreduce", "--sizes", "1K:1G"],
                    "< 60 s (19 s before)"))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--compare", action="store_true", help="also collcert compare")
    case_options(ap, 600, 6, ": a shared machine")
    args = ap.parse_args(argv)
    print_case_header()
    baseline: tuple[float, float] | None = None  # wall, CPU
    with tempfile.TemporaryDirectory() as workdir:
        out_file = os.path.join(workdir, "s.json")
        for label, cmd, goal in cases(args.compare):
            if args.k not in label:
                continue
            if os.path.exists(out_file):
                os.remove(out_file)
            info = timed_cli([a.replace("{out}", out_file) for a in cmd], args.timeout,
                             workdir, args.max_memory)
            wall = float(info["wall"])  # type: ignore[arg-type]
            used = float(info.get("cpu", 0.0))  # type: ignore[arg-type]
            if label.endswith("(baseline)") and info["status"] == "ok":
                baseline = (wall, used)
            if "within 2x" in goal and baseline is not None and baseline[1]:
                goal += (f" (wall {wall / baseline[0]:.2f}x of {baseline[0]:.1f} s, "
                         f"CPU {used / baseline[1]:.2f}x of {baseline[1]:.1f} s)")
            cpu = f"{info['cpu']:>8.1f}" if "cpu" in info else f"{'':>8}"
            peak = f"{info['peak_mb']:>7.0f}" if "peak_mb" in info else f"{'':>7}"
            print(f"{label:<42}{info['status']:>10}{wall:>8.1f}{cpu}{peak}  {goal}",
                  flush=True)
            lines = (str(info.get("stdout", "")) + str(info.get("stderr", ""))).splitlines()
            if args.verbose or str(info["status"]).startswith("exit"):
                for line in lines[-6:]:
                    print(f"    {line[:300]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
