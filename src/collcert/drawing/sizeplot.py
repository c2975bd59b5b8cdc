"""algbw against message size, log-log, for schedules and bounds (``--plot FILE``)."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from collcert.reference.execution import AlphaBeta

from .common import DrawError, check_output, require_matplotlib, save


@dataclass
class Series:
    label: str
    model: AlphaBeta
    marks: Sequence[int] = ()  # sizes (bytes) to mark: the table's rows
    bound: bool = False  # drawn dashed: an upper bound, not a schedule


def _bytes_label(x: float, _pos: object = None) -> str:
    for unit, div in (("G", 2**30), ("M", 2**20), ("K", 2**10)):
        if x >= div:
            return f"{x / div:g}{unit}"
    return f"{x:g}"


def _curve(model: AlphaBeta, lo: int, hi: int) -> tuple[list[float], list[float]]:
    """algbw at four sizes per doubling from lo to hi (for drawing only)."""
    xs: list[float] = []
    k = 0
    while not xs or xs[-1] < hi:
        xs.append(min(lo * 2 ** (k / 4), float(hi)))
        k += 1
    return xs, [float(model.algbw_gbps(Fraction(x))) for x in xs]


def plot_algbw(path: str, series: Sequence[Series], title: str, note: str = "") -> None:
    """Write a log-log plot of algbw (GB/s) against size (bytes) to ``path``."""
    check_output(path)
    plt = require_matplotlib()
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    sizes = [m for s in series for m in s.marks if m > 0]
    if not sizes:
        raise DrawError("nothing to plot: every size is 0 bytes")
    lo, hi = min(sizes), max(sizes)
    fig, ax = plt.subplots(figsize=(8, 5))
    colours = ["tab:blue", "tab:green", "tab:purple", "tab:orange"]
    k = 0
    for s in series:
        xs, ys = _curve(s.model, lo, hi)
        peak = 1 / s.model.time_per_unit * s.model.unit_bytes / 10**9
        label = f"{s.label} (→ {float(peak):.4g} GB/s)"
        if s.bound:
            ax.plot(xs, ys, color="black", linestyle="--", linewidth=1.4, label=label)
            continue
        colour = colours[k % len(colours)]
        k += 1
        ax.plot(xs, ys, color=colour, linewidth=1.8, label=label)
        marks = [m for m in s.marks if m > 0]
        ax.plot(marks, [float(s.model.algbw_gbps(m)) for m in marks], "o", color=colour,
                markersize=3.5)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    octaves = max(1, (hi // max(lo, 1)).bit_length())
    step = 2 ** max(1, -(-octaves // 12))
    ax.xaxis.set_major_locator(LogLocator(base=step, numticks=40))
    ax.xaxis.set_major_formatter(FuncFormatter(_bytes_label))
    plain = FuncFormatter(lambda y, _pos: f"{y:g}")
    ax.yaxis.set_major_formatter(plain)
    y_lo, y_hi = ax.get_ylim()
    ax.yaxis.set_minor_formatter(plain if y_hi / y_lo < 30 else NullFormatter())
    ax.set_xlabel("message size (bytes; K, M, G = 2^10, 2^20, 2^30)")
    ax.set_ylabel("algbw = size / time (GB/s)")
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="major", alpha=0.35)
    ax.grid(True, which="minor", axis="y", alpha=0.12)
    ax.legend(loc="lower right", fontsize=8)
    lines = textwrap.wrap(note, 130) if note else []
    if lines:
        fig.text(0.01, 0.01, "\n".join(lines), fontsize=7, color="0.3", ha="left",
                 va="bottom")
    fig.tight_layout(rect=(0, 0.025 * len(lines), 1, 1))
    save(fig, path)
