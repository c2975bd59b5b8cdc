"""Exact LP layer: time of the float solve and of the exact proof on LPs of growing size.

The LP: maximum concurrent flow on a k×k bidirectional torus, one aggregated
flow per source (every source sends λ to every other node), unit capacities.
Prints rows, columns, seconds of the float (GLOP) solve, seconds of the exact proof,
how the proof was obtained, and the optimum λ (exact).

    python benchmarks/bench_lp.py [k ...]
"""

from __future__ import annotations

import argparse
import time

from collcert.reference.model import show
from collcert.reference.solvers import LinearProgram, solve_lp


def torus_concurrent_flow(k: int) -> LinearProgram:
    nodes = [(i, j) for i in range(k) for j in range(k)]
    arcs = []
    for i, j in nodes:
        for di, dj in ((1, 0), (-1, 0), (0, 1), (0, -1)):
            arcs.append(((i, j), ((i + di) % k, (j + dj) % k)))
    lp = LinearProgram("max")
    lp.add_variable("lam", 1)
    for s in nodes:
        for v in nodes:
            coefs: dict[object, object] = {("f", s, a): 0 for a in ()}
            for a in arcs:
                if a[1] == v:
                    coefs[("f", s, a)] = coefs.get(("f", s, a), 0) + 1
                if a[0] == v:
                    coefs[("f", s, a)] = coefs.get(("f", s, a), 0) - 1
            if v == s:
                coefs["lam"] = len(nodes) - 1
                lp.add_row(("cons", s, v), coefs, "=", 0)
            else:
                coefs["lam"] = -1
                lp.add_row(("cons", s, v), coefs, "=", 0)
    for a in arcs:
        lp.add_row(("cap", a), {("f", s, a): 1 for s in nodes}, "<=", 1)
    return lp


def main(sizes: list[int]) -> None:
    print(f"{'torus':>7} {'rows':>6} {'cols':>7} {'build s':>8} {'float s':>8} {'exact s':>8}  "
          f"{'proof':<28} lambda")
    for k in sizes:
        t = time.perf_counter()
        lp = torus_concurrent_flow(k)
        build = time.perf_counter() - t
        res = solve_lp(lp)
        st = res.stats
        print(f"{k:>4}x{k:<2} {st['rows']:>6} {st['columns']:>7} {build:>8.2f} "
              f"{st['float_seconds']:>8.2f} {st['exact_seconds']:>8.2f}  {st['proof']:<28} "
              f"{show(res.objective)}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("k", type=int, nargs="*", default=[3, 4, 6, 8],
                    help="torus sides (default: 3 4 6 8)")
    main(ap.parse_args().k)
