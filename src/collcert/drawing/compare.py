"""algbw against message size for every schedule of a comparison (``collcert compare --plot``).

One curve per schedule (the optimum's trees, LP (5), NCCL's ring and tree, the
classic algorithms) in the α-β model, log-log; the band along the top says
which schedule is fastest at each size, the crossovers NCCL's tuner looks for.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from collcert.reference.execution import AlphaBeta

from .common import DrawError, check_output, require_matplotlib, save, size_axes

_STYLE = {"optimum": ("black", "-", 1.8), "lp5": ("0.35", "--", 1.6)}
_COLOURS = ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown",
            "tab:pink", "tab:olive"]


@dataclass
class CompareSeries:
    name: str
    label: str
    kind: str  # "optimum", "lp5", "baseline"
    model: AlphaBeta


def _xs(lo: int, hi: int) -> list[float]:
    xs: list[float] = []
    k = 0
    while not xs or xs[-1] < hi:
        xs.append(min(lo * 2 ** (k / 4), float(hi)))
        k += 1
    return xs


def plot_comparison(path: str, series: Sequence[CompareSeries], sizes: Sequence[int],
                    best: Sequence[str], title: str, note: str = "",
                    before: Sequence[CompareSeries] = ()) -> None:
    """Write the comparison plot to ``path`` (.png, .svg, .pdf); ``before``: the same
    schedules on the machine before a what-if, dotted in the same colours."""
    check_output(path)
    plt = require_matplotlib()
    from matplotlib.ticker import LogLocator, NullFormatter

    marks = [s for s in sizes if s > 0]
    if not marks or not series:
        raise DrawError("nothing to plot: no sizes above 0 bytes, or no schedule")
    lo, hi = min(marks), max(marks)
    fig, ax = plt.subplots(figsize=(9, 5.6))
    colour: dict[str, str] = {}
    k = 0
    for s in series:
        xs = _xs(lo, hi)
        ys = [float(s.model.algbw_gbps(Fraction(x))) for x in xs]
        peak = float(s.model.unit_bytes / s.model.time_per_unit / 10**9)
        c, style, width = _STYLE.get(s.kind, (None, "-", 1.6))
        if c is None:  # curves that coincide stay visible: wider first, then dashed
            c = _COLOURS[k % len(_COLOURS)]
            style = ("-", "-.", "--", ":")[k % 4]
            width = max(1.2, 3.0 - 0.4 * k)
            k += 1
        colour[s.name] = c
        z = 5 if s.kind in _STYLE else 3  # the optimum on top of a baseline that reaches it
        ax.plot(xs, ys, color=c, linestyle=style, linewidth=width, zorder=z,
                label=f"{s.label} (→ {peak:.4g} GB/s)")
        ax.plot(marks, [float(s.model.algbw_gbps(m)) for m in marks], "o", color=c,
                markersize=3, zorder=z)
    for s in before:  # the healthy machine: thin dotted, under the changed one's curves
        xs = _xs(lo, hi)
        ax.plot(xs, [float(s.model.algbw_gbps(Fraction(x))) for x in xs],
                color=colour.get(s.name, "0.6"), linestyle=(0, (1, 1.5)), linewidth=1.2,
                alpha=0.7, zorder=2)
    if before:
        peak = max(float(s.model.unit_bytes / s.model.time_per_unit / 10**9) for s in before)
        ax.plot([], [], color="0.4", linestyle=(0, (1, 1.5)), linewidth=1.2,
                label=f"dotted: the same schedules before (healthy; up to {peak:.4g} GB/s)")
    plain = size_axes(ax, lo, hi)
    ax.yaxis.set_minor_formatter(NullFormatter())
    low, high = ax.get_ylim()
    if high < 10 * low:  # no power of ten inside (flat lines at α = 0): label 2, 3, 5 ×
        ax.yaxis.set_minor_locator(LogLocator(base=10, subs=(2, 3, 5)))
        ax.yaxis.set_minor_formatter(plain)
    _best_band(ax, sizes, best, colour)
    ax.set_xlabel("message size (bytes; K, M, G = 2^10, 2^20, 2^30)")
    ax.set_ylabel("algbw = size / time (GB/s), α-β model")
    ax.set_title("\n".join(textwrap.wrap(title, 95)), fontsize=10, pad=16)
    ax.grid(True, which="major", alpha=0.35)
    ax.legend(loc="best", fontsize=7.5)  # lower right covered flat lines (α = 0)
    lines = textwrap.wrap(note, 140) if note else []
    if lines:
        fig.text(0.01, 0.01, "\n".join(lines), fontsize=7, color="0.3", ha="left",
                 va="bottom")
    fig.tight_layout(rect=(0, 0.022 * len(lines), 1, 1))
    save(fig, path)


def _best_band(ax: object, sizes: Sequence[int], best: Sequence[str],
               colour: dict[str, str]) -> None:
    """Along the top: a coloured tick per size in the colour of the fastest schedule."""
    from matplotlib.transforms import blended_transform_factory

    trans = blended_transform_factory(ax.transData, ax.transAxes)  # type: ignore[attr-defined]
    for size, name in zip(sizes, best):
        if size > 0:
            ax.plot([size], [1.015], marker="s", markersize=6,  # type: ignore[attr-defined]
                    color=colour.get(name, "0.5"), transform=trans, clip_on=False)
    ax.text(-0.008, 1.015, "fastest:", transform=ax.transAxes,  # type: ignore
            fontsize=7, color="0.3", ha="right", va="center")  # beside the band, not under
    # the title (it ran into a long title, issue 33 row 10)
