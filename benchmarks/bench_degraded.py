#!/usr/bin/env python3
"""Degraded machines (issue 20): the what-if optimum and the certified schedule of a
cluster with a NIC at half speed, a NIC removed, random NIC failures, a failed core link.

Every case runs the ``collcert`` command a user would type, in a fresh process under
``/usr/bin/time``: wall seconds, CPU seconds (user + system), peak resident memory
and the size of the file written (schedules, ``-o``). A case that passes its time
limit is stopped and reported as such.

    python benchmarks/bench_degraded.py               # the quick cases (about 2 min)
    python benchmarks/bench_degraded.py --long        # also the big schedules, each
                                                      # stopped after --timeout s
    python benchmarks/bench_degraded.py --timeout 600 --long
    python benchmarks/bench_degraded.py --long -k "128 NIC"   # only those cases

Each case's address space is capped (--max-memory, default 3 GiB) so that a case
falling to the general path cannot take a shared machine's memory.

Fat trees (fat_tree:8 healthy, a failed core, aggregation or host link, a host link
halved) are quick: each is built by orbits, of the fat tree or of the symmetrized one
(printed under the figures), except the failed host link, which cuts a host off (exit 2).

Goals (issue 20, 2 cores): dgx_a100:128 with one NIC halved or removed, certified
schedule < 180 s and < 4 GiB, optimum < 10 s; 8 random NIC failures < 5 min and
< 6 GiB; fat_tree:16 with one failed core link < 5 min; dgx_a100:1024 certified
schedule as a symmetric file < 120 s and < 20 MB.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import tempfile

from _timed import timed_cli

NIC_FAILURES_SEED = 20


def nic_failures(boxes: int, count: int) -> list[str]:
    """``--fail`` options for ``count`` NICs of a dgx_a100 cluster, drawn with a fixed seed."""
    rng = random.Random(NIC_FAILURES_SEED)
    picked = rng.sample([(b, g) for b in range(boxes) for g in range(8)], count)
    return [a for b, g in sorted(picked) for a in ("--fail", f"b{b}.nic{g}")]


def core_link() -> str:
    """The first core switch of fat_tree:16 and its first link, as SRC<>DST."""
    from collcert import platforms

    t = platforms.fat_tree(16)
    core = next(v for v in t.switch_nodes if "core" in str(v))
    u, v = next(e for e in t.capacity if e[0] == core)
    return f"{u}<>{v}"


HALF = ["--degrade", "b3.nic2=25/2"]


def cases(long: bool) -> list[tuple[str, list[str], str]]:
    """(label, collcert arguments, goal); '{out}' is replaced by the output file."""
    sched = ["--check", "--json", "-o", "{out}"]
    out = [
        ("dgx_a100:128 NIC halved: optimum", ["optimum", "dgx_a100:128", *HALF], "< 10 s"),
        ("dgx_a100:128 NIC removed: optimum", ["optimum", "dgx_a100:128", "--fail", "b3.nic2"],
         "< 10 s"),
        ("dgx_a100:128 8 NICs failed: optimum", ["optimum", "dgx_a100:128",
                                                 *nic_failures(128, 8)], ""),
        ("fat_tree:16 core link failed: optimum", ["optimum", "fat_tree:16", "--fail",
                                                   core_link()], ""),
        ("dgx_a100:128 healthy: schedule", ["schedule", "dgx_a100:128", *sched], "baseline"),
        ("dgx_a100:8 NIC halved: schedule", ["schedule", "dgx_a100:8", *HALF, *sched], ""),
        ("dgx_a100:16 NIC halved: schedule", ["schedule", "dgx_a100:16", *HALF, *sched], ""),
        ("fat_tree:8 healthy: schedule", ["schedule", "fat_tree:8", *sched], ""),
        ("fat_tree:8 core link failed: schedule", ["schedule", "fat_tree:8", "--fail",
                                                   "core0.0<>agg0.0", *sched], ""),
        ("fat_tree:8 agg link failed: schedule", ["schedule", "fat_tree:8", "--fail",
                                                  "edge0.0<>agg0.0", *sched], ""),
        ("fat_tree:8 host link halved: schedule", ["schedule", "fat_tree:8", "--degrade",
                                                   "h0.0.0<>edge0.0=1/2", *sched], ""),
        ("fat_tree:8 host link failed: schedule", ["schedule", "fat_tree:8", "--fail",
                                                   "h0.0.0<>edge0.0", *sched],
         "exit 2: h0.0.0 cut off"),
    ]
    if long:
        out += [
            ("dgx_a100:32 NIC halved: schedule", ["schedule", "dgx_a100:32", *HALF, *sched], ""),
            ("dgx_a100:128 NIC halved: schedule", ["schedule", "dgx_a100:128", *HALF, *sched],
             "< 180 s, < 4 GiB"),
            ("dgx_a100:128 NIC removed: schedule", ["schedule", "dgx_a100:128", "--fail",
                                                    "b3.nic2", *sched], "< 180 s, < 4 GiB"),
            ("dgx_a100:128 8 NICs failed: schedule", ["schedule", "dgx_a100:128",
                                                      *nic_failures(128, 8), *sched],
             "< 300 s, < 6 GiB"),
            ("fat_tree:16 core link failed: schedule", ["schedule", "fat_tree:16", "--fail",
                                                        core_link(), *sched], "< 300 s"),
            ("fat_tree:16 agg link failed: schedule", ["schedule", "fat_tree:16", "--fail",
                                                       "edge0.0<>agg0.0", *sched], ""),
            ("dgx_a100:1024 healthy: schedule", ["schedule", "dgx_a100:1024", *sched],
             "< 120 s, < 20 MB"),
        ]
    return out


def _route(stdout: str, whatif: bool) -> str:
    """How a schedule was built, from its --json summary: by orbits (of the machine, or,
    for a what-if machine, of the symmetrized machine it was borrowed from) or the
    general path."""
    try:
        summary = json.loads(stdout)
        notes = [str(n) for n in summary.get("symmetry") or []]
    except (ValueError, AttributeError):
        return ""
    borrowed = whatif and any("boxes" in n for n in notes)
    return ("; ".join(notes) + (" (borrowed from the symmetrized machine)" if borrowed else "")
            + f"; trees of height up to {summary.get('max_height')}")


def run(argv: list[str], timeout: float, workdir: str, gib: float) -> dict[str, object]:
    """One command under /usr/bin/time (address space capped at ``gib``); its figures."""
    out_file = os.path.join(workdir, "schedule.json")
    if os.path.exists(out_file):
        os.remove(out_file)
    args = [a.replace("{out}", out_file) for a in argv]
    info = timed_cli(args, timeout, workdir, gib)
    if "stderr" in info:
        info["tail"] = (str(info["stderr"]).strip().splitlines() or [""])[-1]
        info["route"] = _route(str(info["stdout"]), "--fail" in args or "--degrade" in args)
    if os.path.exists(out_file):
        info["file_mb"] = os.path.getsize(out_file) / 2**20
    return info


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--long", action="store_true",
                    help="also the big schedules (dgx_a100:32/128/1024, fat_tree:16)")
    ap.add_argument("--timeout", type=float, default=300,
                    help="stop a case after this many seconds (default 300)")
    ap.add_argument("--max-memory", type=float, default=3, metavar="GIB",
                    help="cap each case's address space (default 3 GiB: a shared machine)")
    ap.add_argument("-k", metavar="TEXT", default="",
                    help="run only the cases whose label contains TEXT")
    args = ap.parse_args(argv)
    print(f"python {platform.python_version()}, {os.cpu_count()} CPUs, load average "
          f"{os.getloadavg()[0]:.1f}; wall and CPU in s, peak memory and file in MB")
    print(f"{'case':<40}{'status':>22}{'wall':>9}{'CPU':>9}{'peak':>8}{'file':>8}  goal")
    with tempfile.TemporaryDirectory() as workdir:
        for label, cmd, goal in cases(args.long):
            if args.k not in label:
                continue
            info = run(cmd, args.timeout, workdir, args.max_memory)
            cpu = f"{info['cpu']:>9.1f}" if "cpu" in info else f"{'':>9}"
            peak = f"{info['peak_mb']:>8.0f}" if "peak_mb" in info else f"{'':>8}"
            size = f"{info['file_mb']:>8.1f}" if "file_mb" in info else f"{'':>8}"
            print(f"{label:<40}{info['status']:>22}{info['wall']:>9.1f}{cpu}{peak}{size}  {goal}",
                  flush=True)
            if str(info["status"]).startswith("exit"):
                print(f"    {info.get('tail', '')[:200]}")
            elif info.get("route"):
                print(f"    built: {info['route']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
