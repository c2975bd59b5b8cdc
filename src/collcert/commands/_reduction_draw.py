"""Pictures of reduction schedules: the tree with a Gantt chart, and Figure 2.

``collcert draw SCHEDULE.json -o tree.png`` comes here when the file is a
``collcert-reduction/1`` document (see :mod:`collcert.commands._reduction_file`);
the dates drawn are the ones the independent simulator recomputes. The model
and Figure 2 are Canon & Antoniu 2012's.
"""

from __future__ import annotations

import os
from fractions import Fraction
from typing import Any

from collcert.reference.reduction import ReductionError

from ..drawing import save
from ._reduction_file import read_reduction_file

MAX_DRAWN = 256
BIG = 40
"""Above this many machines the leaves are drawn small and unlabelled, and the chart has
one row per reducing machine (the leaves' one send each is the tree's arrows)."""


def _output(path: str, option: str = "-o") -> None:
    if os.path.splitext(path)[1].lower() not in (".png", ".svg"):
        raise ReductionError(f"{option} {path}: use a .png or .svg file name")


def draw_file(path: str, output: str) -> int:
    """Draw the tree (top) and the Gantt chart (bottom) of a reduction schedule file."""
    from collcert.certify.reduction import check_reduction

    _output(output)
    data = read_reduction_file(path)
    n = data.get("n") if isinstance(data, dict) else None
    if type(n) is int and n > MAX_DRAWN:  # before simulating a million machines
        raise ReductionError(f"{path}: {n} machines are too many to draw (at most "
                             f"{MAX_DRAWN}); draw a smaller instance")
    verdict, sim = check_reduction(data)
    if sim is None or not sim.depth:
        raise ReductionError(f"{path}: cannot draw it: " + "; ".join(verdict.all_reasons()[:3]))
    if sim.n > MAX_DRAWN:
        raise ReductionError(f"{path}: {sim.n} machines are too many to draw (at most "
                             f"{MAX_DRAWN}); draw a smaller instance")
    _draw(sim, data, output, verdict.ok, verdict.all_reasons())
    print(f"wrote {output}" + ("" if verdict.ok else " (the schedule is INVALID: see the title)"))
    return 0 if verdict.ok else 1


def _draw(sim: Any, data: dict[str, Any], output: str, ok: bool, reasons: list[str]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n, sink, parent = sim.n, sim.sink, sim.parent
    order = sim.order or _preorder(sim)
    x = {v: j for j, v in enumerate(order)}
    depth = sim.depth
    big = n > BIG  # leaves only send once: unlabelled in the tree, left out of the chart
    shown = [v for v in order if not big or v == sink or sim.ready[v]]
    place = {v: len(shown) - 1 - i for i, v in enumerate(shown)}
    rows = len(shown)
    width = min(4 + 0.35 * n, 18 if big else 30)
    fig, (top, gantt) = plt.subplots(
        2, 1, figsize=(width, 5 + 0.22 * rows), layout="constrained",
        gridspec_kw={"height_ratios": [1, max(1.2, 0.045 * rows)]})
    small = 7 if n <= 128 else 5.5  # font of the node and date labels
    span = sim.exact(max(sim.ready[sink], 1))
    # --- the tree: x = position of the element in the product, y = depth
    for v in range(n):
        if v == sink:
            continue
        p = parent[v]
        top.annotate("", xy=(x[p], -depth[p]), xytext=(x[v], -depth[v]),
                     arrowprops={"arrowstyle": "-|>", "color": "0.35", "lw": 1,
                                 "shrinkA": 9 if not big else 4, "shrinkB": 9 if not big else 4})
        if big and not sim.ready[v]:
            continue
        mx, my = (x[v] + x[p]) / 2, -(depth[v] + depth[p]) / 2
        top.text(mx, my, _txt(sim.exact(sim.send[v])), fontsize=small, color="tab:blue",
                 ha="center", va="center", bbox={"fc": "white", "ec": "none", "pad": 0.5})
    for v in range(n):
        leaf = big and v != sink and not sim.ready[v]
        top.scatter([x[v]], [-depth[v]], s=30 if leaf else 260 if n <= 128 else 120, zorder=3,
                    color="tab:red" if v == sink else "tab:orange" if sim.ready[v] else "0.8",
                    edgecolors="black", linewidths=0.5 if leaf else 1.0)
        if not leaf:
            top.text(x[v], -depth[v], str(v + 1), ha="center", va="center", fontsize=small,
                     zorder=4)
    top.set_axis_off()
    top.set_title("tree: arrows from sender to receiver, labelled with the transfer's start\n"
                  "x = place of the element in the product; red: sink, orange: reducers"
                  + (f"; the {n - rows} grey leaves only send (unlabelled)" if big else ""),
                  fontsize=9)
    # --- the Gantt chart: one row per machine (per reducer when big), in product order
    D, C = sim.transfer, sim.compute
    red = sim.reductions
    for v in shown:
        if v != sink and D:
            s = sim.send[v]
            gantt.broken_barh([(_f(sim, s), _f(sim, D))], (place[v] - 0.35, 0.7),
                              color="tab:blue", alpha=0.8)
    for s in sim.arrivals:
        row = place[parent[s]]
        if D:
            gantt.broken_barh([(_f(sim, sim.send[s]), _f(sim, D))], (row - 0.35, 0.25),
                              color="tab:cyan", edgecolor="white", linewidth=0.8)
        if C:
            gantt.broken_barh([(_f(sim, red[s]), _f(sim, C))], (row - 0.05, 0.4),
                              color="tab:orange", edgecolor="black", linewidth=0.4)
    gantt.set_yticks(range(rows))
    gantt.set_yticklabels([str(shown[rows - 1 - r] + 1) for r in range(rows)], fontsize=small)
    gantt.set_ylim(-0.7, rows - 0.3)
    gantt.set_ylabel("machine (in product order)" + (": the sink and the reducers"
                                                      if big else ""))
    gantt.set_xlabel("time")
    gantt.set_xlim(0, float(span) * 1.02)
    gantt.grid(axis="x", alpha=0.3)
    from matplotlib.patches import Patch

    gantt.legend(handles=[Patch(color="tab:blue", label="sends (d)"),
                          Patch(color="tab:cyan", label="receives (d)"),
                          Patch(color="tab:orange", label="reduces (c)")],
                 loc="lower right", fontsize=7)
    title = (f"{n} elements, d = {data.get('transfer')}, c = {data.get('compute')}, "
             f"{sim.model}; makespan {_txt(sim.exact(sim.ready[sink]))} (simulated)")
    if data.get("algorithm"):
        title += f"\n{data['algorithm']}"
    if not ok:
        import textwrap

        width = max(60, int(12 * min(4 + 0.35 * n, 30)))
        title += "\n" + "\n".join(textwrap.wrap("INVALID: " + "; ".join(reasons[:2]), width))
    fig.suptitle(title, fontsize=10, color="black" if ok else "tab:red")
    save(fig, output, dpi=110)  # all or nothing


def _preorder(sim: Any) -> list[int]:
    kids: dict[int, list[int]] = {}
    for s in sim.arrivals:
        kids.setdefault(sim.parent[s], []).append(s)
    out, stack = [], [sim.sink]
    while stack:
        v = stack.pop()
        out.append(v)
        stack.extend(reversed(kids.get(v, [])))
    return out


def _f(sim: Any, value: int) -> float:
    return float(Fraction(value, sim.scale))  # drawing only


def _txt(value: Fraction) -> str:
    return str(value.numerator) if value.denominator == 1 else f"{value.numerator}/" \
        f"{value.denominator}"


def draw_figure2(output: str, N: int, marks: tuple[Fraction, Fraction] | None = None) -> None:
    """Figure 2 (ratio against n) and the worst ratio over n against c/d."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from collcert.reference.reduction import (
        figure2,
        ratio_grid,
        ratios_against_costs,
        theorem_bound,
    )

    _output(output, "--figure2")
    if N < 2:
        raise ReductionError(f"--figure2 needs N ≥ 2 (got {N})")
    if N > 200_000:
        raise ReductionError(f"--figure2 draws n ≤ N for N ≤ 200000 (got {N})")
    curves = figure2(N)
    small = min(N, 1000)
    grid = ratio_grid(41)
    worst = ratios_against_costs(small, grid)
    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 4.8))
    ns = list(range(2, N + 1))
    for name, colour, where in (("binomial", "tab:blue", "d = c"),
                                ("fibonacci", "tab:green", "min(d, c) = 0")):
        ys = [float(r) if r is not None else float("nan") for r in curves[name][1:]]
        left.plot(ns, ys, color=colour, lw=0.8, label=f"{name} strategy at {where}")
    left.set_xscale("log")
    left.set_xlabel("number of elements n")
    left.set_ylabel("length / optimal length")
    left.set_title("Figure 2: ratios at the conjectured worst costs", fontsize=10)
    left.axhline(2, color="0.5", ls=":", lw=1)
    left.legend(fontsize=8)
    xs = [float(r) for r in grid]
    for name, colour in (("binomial", "tab:blue"), ("fibonacci", "tab:green")):
        right.plot(xs, [float(w) for _, w, _ in worst[name]], "o-", ms=3, color=colour,
                   label=f"{name}: worst over 2 ≤ n ≤ {small}")
    right.plot(xs, [float(theorem_bound("binomial", 1, r)) for r in grid], "--",
               color="tab:blue", lw=1, label="Thm 18: 1 + min/max")
    right.axhline(2, color="tab:green", ls="--", lw=1, label="Thm 19: 2")
    if marks is not None and max(marks) > 0 and marks[0] > 0:
        right.axvline(float(marks[1] / marks[0]), color="tab:red", lw=1,
                      label=f"your c/d = {_txt(marks[1] / marks[0])}")
    right.set_xscale("log", base=2)
    right.set_xlabel("c / d")
    right.set_ylabel("worst length / optimal length")
    right.set_title("against the cost ratio (symmetric in d ↔ c)", fontsize=10)
    right.legend(fontsize=8)
    fig.suptitle("Binomial and Fibonacci strategies vs Algorithm 1 (Canon & Antoniu §7.3). "
                 "Tie-break: Algorithm 1's argmin takes the smallest index among equal s_j; "
                 "trees measured with Prop 2", fontsize=9)
    fig.tight_layout()
    save(fig, output, dpi=110)  # all or nothing
