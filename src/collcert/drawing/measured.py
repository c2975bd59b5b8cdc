"""A measurement beside the model (``collcert measured --plot``): measured algbw (or busbw)
against message size, log-log, with the certified optimum's bound and the baselines' model
curves, one line per series, each labelled."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from .common import DrawError, check_output, require_matplotlib, save, size_axes

_COLOURS = ["tab:blue", "tab:orange", "tab:green", "tab:purple", "tab:brown", "tab:pink",
            "tab:olive", "tab:cyan"]


@dataclass
class MeasuredLine:
    """A measured series: (size, rate) points in GB/s, as printed by nccl-tests."""

    label: str
    points: Sequence[tuple[int, Fraction]]
    above: Sequence[tuple[int, Fraction]] = ()  # points above the certified optimum


@dataclass
class ModelLine:
    """A model curve: rate (GB/s) at any size; ``bound``: drawn dashed black."""

    label: str
    rate: object  # callable size -> Fraction
    limit: Fraction
    bound: bool = False


def plot_measured(path: str, measured: Sequence[MeasuredLine], models: Sequence[ModelLine],
                  title: str, ylabel: str, note: str = "") -> None:
    """Write the picture to ``path`` (.png, .svg, .pdf)."""
    check_output(path)
    plt = require_matplotlib()
    from matplotlib.ticker import NullFormatter

    sizes = [s for m in measured for s, v in m.points if s > 0 and v > 0]
    if not sizes:
        raise DrawError("nothing to plot: no measured rate above 0 GB/s")
    lo, hi = min(sizes), max(sizes)
    xs: list[float] = []
    k = 0
    while not xs or xs[-1] < hi:
        xs.append(min(lo * 2 ** (k / 4), float(hi)))
        k += 1
    fig, ax = plt.subplots(figsize=(9, 5.4 + 0.22 * (len(models) + len(measured))))
    for i, c in enumerate(models):
        ys = [float(c.rate(Fraction(x))) for x in xs]  # type: ignore[operator]
        label = f"{c.label} (→ {float(c.limit):.4g} GB/s)"
        if c.bound:
            ax.plot(xs, ys, color="black", linestyle="--", linewidth=1.5, label=label, zorder=4)
        else:
            ax.plot(xs, ys, color=_COLOURS[(i + 3) % len(_COLOURS)],
                    linestyle=(":", "-.", (0, (5, 2)))[i % 3], linewidth=1.4, label=label,
                    zorder=3)
    for i, line in enumerate(measured):
        pts = [(s, float(v)) for s, v in line.points if s > 0 and v > 0]
        colour = ("tab:red", "tab:blue", "tab:green")[i % 3]
        ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", color=colour, linewidth=2.0,
                markersize=3.5, label=f"{line.label} (peak {max(p[1] for p in pts):.4g} GB/s)",
                zorder=5)
        if line.above:
            ax.plot([p[0] for p in line.above], [float(p[1]) for p in line.above], "X",
                    color="black", markersize=9, markerfacecolor="yellow", zorder=6,
                    label="above the certified optimum: the model is not the machine")
    plain = size_axes(ax, lo, hi)
    y_lo, y_hi = ax.get_ylim()  # within a decade or so the minor ticks carry the numbers
    ax.yaxis.set_minor_formatter(plain if y_hi / y_lo < 30 else NullFormatter())
    ax.set_xlabel("message size (bytes; K, M, G = 2^10, 2^20, 2^30)")
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="major", alpha=0.35)
    lines = textwrap.wrap(note, 140) if note else []
    handles, labels = ax.get_legend_handles_labels()
    band = (0.026 * len(labels) + 0.02 + 0.018 * len(lines))  # legend and note under the axes
    fig.legend(handles, labels, loc="lower left", bbox_to_anchor=(0.01, 0.018 * len(lines) + 0.01),
               fontsize=7.5, frameon=False)  # below the axes: never over a curve
    if lines:
        fig.text(0.01, 0.01, "\n".join(lines), fontsize=7, color="0.3", ha="left",
                 va="bottom")
    fig.tight_layout(rect=(0, band, 1, 1))
    save(fig, path)
