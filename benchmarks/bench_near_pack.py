"""Benchmark: degraded clusters with faults at different positions (issue 20), built by
grouping the faults one class per box orbit (reference/forestcoll/nearpack.py).

The row of the issue: dgx_a100:128 with 8 random NIC failures, certified schedule
< 5 min and < 6 GiB. Each case runs the CLI in a fresh process under /usr/bin/time
(address space capped, --max-memory) and prints wall time, CPU time, peak memory, the
written file's size and how the schedule was built. The written file is then audited
against the degraded machine (``collcert audit``, knowing nothing of the grouping).

    python benchmarks/bench_near_pack.py                 # the seed-20 draw of the issue
    python benchmarks/bench_near_pack.py --draws 3       # and three more draws
    python benchmarks/bench_near_pack.py --boxes 32      # a smaller machine

The failures are drawn as benchmarks/bench_degraded.py draws them (random.Random(20),
sample of (box, NIC) pairs), so both scripts measure the same machine.
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

ISSUE_DRAW = 20


def nic_failures(boxes: int, count: int, draw: int) -> list[str]:
    """``count`` NICs of a dgx_a100 cluster, drawn with ``random.Random(draw)``."""
    rng = random.Random(draw)
    picked = rng.sample([(b, g) for b in range(boxes) for g in range(8)], count)
    return [f"b{b}.nic{g}" for b, g in sorted(picked)]


def grouping(boxes: int, fails: list[str]) -> str:
    """How nearpack groups these faults: cycles, their length, representatives."""
    from collcert import platforms
    from collcert.reference.forestcoll.nearpack import regrouped
    from collcert.reference.model import what_if

    h = platforms.dgx_a100(boxes)
    t = what_if(h, fail=fails).topology
    got = None if t is None else regrouped(t, h)
    if got is None:
        return "no grouping applies"
    sym = got[1]
    return (f"{boxes // sym.order} cycle(s) of {sym.order} boxes, "
            f"{len(sym.reps)} representative roots")


def timed(args: list[str], timeout: float, workdir: str, gib: float,
          ) -> dict[str, object]:
    """One CLI command under /usr/bin/time, address space capped; its figures."""
    return timed_cli(args, timeout, workdir, gib)


def _row(label: str, info: dict[str, object], extra: str = "") -> None:
    cpu = f"{info['cpu']:>8.1f}" if "cpu" in info else f"{'':>8}"
    peak = f"{info['peak_mb']:>8.0f}" if "peak_mb" in info else f"{'':>8}"
    print(f"{label:<46}{info['status']:>18}{info['wall']:>8.1f}{cpu}{peak}{extra}", flush=True)


def one_draw(boxes: int, draw: int, args: argparse.Namespace, workdir: str) -> None:
    from collcert import platforms
    from collcert.reference.model import what_if

    fails = nic_failures(boxes, args.failures, draw)
    print(f"dgx_a100:{boxes}, {args.failures} NICs failed (draw {draw}): {', '.join(fails)}")
    print(f"    grouping: {grouping(boxes, fails)}")
    opts = [a for f in fails for a in ("--fail", f)]
    out = os.path.join(workdir, f"schedule{draw}.json")
    info = timed(["optimum", f"dgx_a100:{boxes}", *opts], args.timeout, workdir,
                 args.max_memory)
    _row("  optimum", info)
    info = timed(["schedule", f"dgx_a100:{boxes}", *opts, "--check", "--json", "-o", out],
                 args.timeout, workdir, args.max_memory)
    size = os.path.getsize(out) / 2**20 if os.path.exists(out) else 0.0
    _row("  certified schedule (--check -o)", info, f"{size:>8.1f} MB  goal < 300 s, < 6 GiB")
    try:
        doc = json.loads(str(info.get("stdout", "")))
        print(f"    built: {'; '.join(doc.get('symmetry') or ['general path'])}; algbw "
              f"{doc['algbw']}, optimal {doc['optimal']}")
    except (ValueError, KeyError):
        print(f"    {str(info.get('stderr', '')).strip().splitlines()[-1:]}")
    if os.path.exists(out):
        topo = os.path.join(workdir, "degraded.json")
        t = what_if(platforms.dgx_a100(boxes), fail=fails).topology
        assert t is not None
        with open(topo, "w") as f:
            json.dump(t.to_json(), f)
        info = timed(["audit", topo, out], args.timeout, workdir, args.max_memory)
        verdict = str(info.get("stdout", "")).strip().splitlines()[:1]
        ratio = [ln.strip() for ln in str(info.get("stdout", "")).splitlines() if "ratio" in ln]
        _row("  collcert audit of the file", info, f"  {' '.join(verdict + ratio)}")
        os.remove(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--boxes", type=int, default=128, help="dgx_a100 boxes (default 128)")
    ap.add_argument("--failures", type=int, default=8, help="NICs failed (default 8)")
    ap.add_argument("--draws", type=int, default=0,
                    help="also this many other random draws of the failures")
    ap.add_argument("--timeout", type=float, default=600,
                    help="stop a command after this many seconds (default 600)")
    ap.add_argument("--max-memory", type=float, default=6, metavar="GIB",
                    help="cap each command's address space (default 6 GiB, the issue's goal)")
    args = ap.parse_args(argv)
    print(f"python {platform.python_version()}, {os.cpu_count()} CPUs, load average "
          f"{os.getloadavg()[0]:.1f}; wall and CPU in s, peak memory in MB")
    print(f"{'':<46}{'status':>18}{'wall':>8}{'CPU':>8}{'peak':>8}")
    with tempfile.TemporaryDirectory() as workdir:
        for draw in [ISSUE_DRAW] + [ISSUE_DRAW + 1 + i for i in range(args.draws)]:
            one_draw(args.boxes, draw, args, workdir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
