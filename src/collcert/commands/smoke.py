"""``collcert smoke``: run a schedule on real devices and check every element."""

from __future__ import annotations

import argparse
import re

from collcert.reference.model import ScheduleError
from collcert.smoke import MAX_ITERS  # torch itself is imported only when a run starts

from ._common import add_json_option, bounded_int, load_topology, print_result, seconds

_SIZE = re.compile(r"^\s*(\d{1,20})\s*([kmg]i?b?|b)?\s*$", re.IGNORECASE)


def parse_size(text: str) -> int:
    """Bytes from ``4096``, ``64K``, ``1M``, ``2GiB`` (powers of 1024)."""
    m = _SIZE.match(text)
    if not m:
        raise ScheduleError(f"--size {text[:40]!r} is not a size such as 1048576, 64K or 1M "
                            "(at most 20 digits)")
    unit = (m.group(2) or "b").lower()[0]
    return int(m.group(1)) * {"b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}[unit]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "smoke",
        help="run a schedule on real devices (gloo CPU processes, NCCL/RCCL GPUs, or one GPU) "
        "and check every element of the result",
        description="Execute a schedule (collcert JSON of any collective, ForestColl tree XML "
        "with --topology, or an MSCCL algorithm XML) on real devices with integer data, and "
        "compare every element of every rank's output with the collective's definition "
        "computed on the host. Each tree's share of each shard travels along the tree's edges "
        "in dependency order (reductions on the way for reduce-scatter, reduce, allreduce). "
        "Prints PASS/FAIL (the first wrong rank, element, expected and actual value, and "
        "which root's shard and tree the missing data belongs to), the time per iteration, "
        "the measured algbw beside the model's, and the devices used. Needs torch: "
        "pip install 'collcert[smoke]'. See docs/smoke.md.",
        epilog="Examples: collcert smoke ag.json --backend gloo; "
        "collcert smoke ag.xml --topology dgx_a100:2 --size 64M --iters 20; "
        "collcert smoke ar.json --backend single-gpu --json. "
        "Exit codes: 0 PASS, 1 FAIL, 2 bad input (or no torch, or no such device).",
    )
    p.add_argument("schedule", metavar="SCHEDULE", help="schedule file: collcert JSON, "
                   "ForestColl XML or MSCCL XML (detected from the content)")
    p.add_argument("--topology", "-t", metavar="TOPO",
                   help="topology file or platform (e.g. dgx_a100:2): the model algbw is then "
                   "computed exactly by 'collcert audit'; required for ForestColl XML")
    p.add_argument("--backend", "-b", default="auto",
                   choices=("auto", "gloo", "nccl", "single-gpu"),
                   help="gloo: one CPU process per rank; nccl: one process per GPU (RCCL on "
                   "ROCm), needs a GPU per rank; single-gpu: every rank on one GPU, one stream "
                   "per link (on the CPU with emulated streams when there is no GPU); auto "
                   "(default): nccl if the GPUs suffice, else single-gpu on a GPU, else gloo "
                   "(up to 64 ranks; single-gpu on the CPU beyond)")
    p.add_argument("--size", default="1M", metavar="BYTES",
                   help="data size M in bytes (the allgather output, the reduce-scatter input, "
                   "the broadcast/reduce/allreduce buffer), rounded up to whole cells; "
                   "K, M, G suffixes are powers of 1024 (default: 1M)")
    p.add_argument("--iters", type=bounded_int(1, MAX_ITERS), default=5, metavar="N",
                   help="timed iterations after a checked warm-up (default: 5, at most "
                   f"{MAX_ITERS}); the last one is checked too")
    p.add_argument("--format", choices=("json", "forestcoll-xml", "msccl-xml"),
                   help="schedule format (default: detected)")
    p.add_argument("--device", metavar="DEV",
                   help="single-gpu backend: the device, e.g. cuda:1 or cpu (default: cuda:0 "
                   "when there is a GPU, else cpu)")
    p.add_argument("--timeout", type=seconds, default=120.0, metavar="S",
                   help="gloo/nccl: stop the ranks after S (+30) seconds (default: 120)")
    p.add_argument("--seed", type=int, default=0,
                   help="single-gpu on the CPU: seed of the emulated streams' interleaving")
    add_json_option(p, ' (model algbw exact as "p/q")')
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from collcert.smoke import require_torch, smoke

    require_torch()  # without torch, say how to get it before anything else
    topology = load_topology(args.topology) if args.topology else None
    report = smoke(args.schedule, topology=topology, backend=args.backend,
                   size=parse_size(args.size), iters=args.iters, fmt=args.format,
                   timeout=args.timeout, device=args.device, seed=args.seed)
    print_result(args, report)
    return 0 if report.passed else 1
