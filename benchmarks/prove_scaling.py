"""How far the Z3 proofs of ``collcert prove`` scale: prints seconds per proof and size.

Usage: python benchmarks/prove_scaling.py [--timeout SECONDS] [--quick]

Cut proofs (allgather 1/x*: UNSAT above + SAT at the claim) on platforms of
growing size, then tree proofs (fixed k: SAT at U*, UNSAT just below) on seeded
random topologies with growing N·k. Figures go to stdout; nothing is asserted.
"""

from __future__ import annotations

import argparse
import time

from collcert import optimum, platforms
from collcert.fuzz import z3proofs as z
from collcert.fuzz.generators import RandomSource, bidirectional, cycle_union


def _cut_row(name: str, t, timeout: float) -> None:
    opt = optimum(t)
    started = time.perf_counter()
    steps = z.prove_allgather(t, opt.inv_x, timeout)
    total = time.perf_counter() - started
    res = " ".join(f"{s.result}:{s.seconds:.2f}s" for s in steps)
    print(f"cut   {name:24s} nodes={len(t.nodes):4d} links={len(t.capacity):5d} "
          f"{res:34s} total={total:7.2f}s ok={all(s.ok for s in steps)}", flush=True)


def _tree_row(name: str, t, k: int, timeout: float) -> None:
    fk = optimum(t, fixed_k=k)
    steps = z.prove_fixed_k(t, k, fk.U, timeout)
    res = " ".join(f"{s.result}:{s.seconds:.2f}s" for s in steps)
    print(f"trees {name:24s} nodes={len(t.nodes):4d} links={len(t.capacity):5d} N*k="
          f"{t.num_compute * k:3d} {res:34s} ok={all(s.ok for s in steps)}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--quick", action="store_true", help="small sizes only")
    args = ap.parse_args()
    cuts = [("two_box_example", platforms.two_box_example()),
            ("ring:8", platforms.ring(8)), ("dgx_a100:2", platforms.dgx_a100(2)),
            ("torus:4x4", platforms.torus((4, 4))), ("mi250:2", platforms.mi250(2)),
            ("dgx_a100:4", platforms.dgx_a100(4))]
    if not args.quick:
        cuts += [("torus:6x6", platforms.torus((6, 6))), ("dgx_a100:8", platforms.dgx_a100(8)),
                 ("torus:8x8", platforms.torus((8, 8))), ("mi250:4", platforms.mi250(4)),
                 ("dgx_a100:16", platforms.dgx_a100(16))]
    rand_sizes = (10, 20, 40) if args.quick else (10, 20, 40, 80, 120)
    for n in rand_sizes:
        cuts.append((f"random cycles-{n}", cycle_union(
            RandomSource(f"cut:{n}"), min_compute=n, max_compute=n, max_cycles=n,
            capacities="mixed")))
        cuts.append((f"random bidir-{n}", bidirectional(
            RandomSource(f"cut:{n}"), min_compute=n, max_compute=n, max_extra=2 * n,
            capacities="mixed")))
    for name, t in cuts:
        _cut_row(name, t, args.timeout)
    sizes = [(3, 1), (3, 2), (4, 1), (4, 2), (5, 2), (4, 3), (6, 2)]
    if not args.quick:
        sizes += [(6, 3), (8, 2), (8, 3)]
    for n, k in sizes:
        for label, build in (("cycles", cycle_union), ("bidir", bidirectional)):
            t = build(RandomSource(f"bench:{n}:{label}"), min_compute=n, max_compute=n,
                      capacities="small")
            _tree_row(f"{label}-{n} k={k}", t, k, args.timeout)
    plat = [("two_box_example", platforms.two_box_example(), k) for k in (1, 2, 3)]
    if not args.quick:
        plat += [("dgx_a100:2", platforms.dgx_a100(2), 1), ("dgx_a100:2", platforms.dgx_a100(2), 2),
                 ("mi250:2", platforms.mi250(2), 1)]
    for name, t, k in plat:
        _tree_row(f"{name} k={k}", t, k, args.timeout)


if __name__ == "__main__":
    main()
