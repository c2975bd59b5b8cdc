"""Legrand et al. 2003, Thm 8 made visible: T_pipe(L) / (L·T*) → 1 as the message size L grows.

For two platforms with start-ups (Fig. 1 with β = 1 on every link; a random
10-node platform with β drawn from {0, 1/2, 1, 3}), for sizes L from 1 to 10^8,
the PIPE makespan with the paper's ν = ⌈√L⌉ packets and with the best packet
count found, divided by the lower bound L·T* — every makespan replayed by
``collcert.certify.broadcast.pipe`` first. Prints the figures; ``--plot FILE``
draws them (log-log of ratio − 1 would be a line of slope −1/2).

    python benchmarks/plot_pipe_ratio.py --plot docs/img/pipe-ratio.png
"""

from __future__ import annotations

import argparse
import json
import random
import time

from collcert.certify.broadcast.pipe import check_pipe
from collcert.reference.broadcast import OnePortPlatform, paper_fig1, random_platform
from collcert.reference.broadcast.pipe import pipe_broadcast


def platforms() -> list[tuple[str, OnePortPlatform, str]]:
    fig1 = paper_fig1().to_json()
    for link in fig1["links"]:
        link["startup"] = "1"
    rnd = random_platform(10, 7, 3).to_json()
    rng = random.Random(7)
    for link in rnd["links"]:
        link["startup"] = rng.choice(["0", "1/2", "1", "3"])
    return [("Fig. 1, β = 1", OnePortPlatform.from_json(fig1), "s"),
            ("random:10,7, β ∈ {0, 1/2, 1, 3}", OnePortPlatform.from_json(rnd), "p0")]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--plot", metavar="PNG", help="draw the ratios to this file")
    ap.add_argument("--points", type=int, default=17, help="sizes from 1 to 10^8")
    args = ap.parse_args()
    sizes = sorted({round(10 ** (8 * i / (args.points - 1))) for i in range(args.points)})
    curves = []
    for label, p, src in platforms():
        paper, best = [], []
        t0 = time.perf_counter()
        for L in sizes:
            res = pipe_broadcast(p, src, L)
            v = check_pipe(p.to_json(), json.loads(json.dumps(res.to_json())))
            assert v.ok, v.all_reasons()
            paper.append(float(res.paper.makespan / res.lower_bound))
            best.append(float(res.best.makespan / res.lower_bound))
            print(f"{label:34s} L = {L:>9}: ν = {res.paper.packets:>5} ratio {paper[-1]:.6f}; "
                  f"best {res.best.packets:>6} packets ratio {best[-1]:.6f}")
        print(f"  {len(sizes)} sizes in {time.perf_counter() - t0:.1f} s (solve + search + "
              "certify replay; loaded 2-core machine)")
        curves.append((label, paper, best))
    if args.plot:
        _draw(args.plot, sizes, curves)


def _draw(path: str, sizes: list[int], curves: list) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax, gap) = plt.subplots(1, 2, figsize=(13, 5))
    for (label, paper, best), colour in zip(curves, ("tab:blue", "tab:red")):
        for axis, f in ((ax, lambda r: r), (gap, lambda r: r - 1)):
            axis.plot(sizes, [f(r) for r in paper], "o-", color=colour,
                      label=f"{label}: paper's ν = ⌈√L⌉ packets")
            axis.plot(sizes, [f(r) for r in best], "s--", color=colour, alpha=0.6,
                      label=f"{label}: best packet count found")
    ax.axhline(1, color="black", lw=1, ls=":", label="lower bound L·T* (ratio 1)")
    ref = [curves[0][1][-1] - 1] * len(sizes)
    gap.plot(sizes, [r * (sizes[-1] / L) ** 0.5 for r, L in zip(ref, sizes)], color="grey",
             lw=1, ls=":", label="slope −1/2 (Thm 8: O(√L)/L)")
    for axis in (ax, gap):
        axis.set_xscale("log")
        axis.set_yscale("log")
        axis.set_xlabel("message size L")
        axis.grid(True, which="both", alpha=0.3)
        axis.legend(fontsize=7)
    ax.set_ylabel("makespan / (L·T*)")
    gap.set_ylabel("makespan / (L·T*) − 1")
    ax.set_title("PIPE (Legrand et al. 2003, Thm 8): the ratio tends to 1")
    gap.set_title("the excess falls like 1/√L")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
