"""The sheet a network picture is drawn on: the figure's size from the layout, the
tree panel and the caption, and the legend's own band between the drawing and the
caption."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from typing import Any

from collcert.reference.model import Topology

from .layout import Layout
from .model import DrawnTree


@dataclass
class Sheet:
    """The figure's size in inches: the drawing's width, the tree panel's (0: none), the
    height, the caption's lines and the heights of the caption and legend bands."""

    width: float
    extra: float
    height: float
    lines: list[str]
    cap_h: float
    leg_h: float


def plan_sheet(t: Topology, lay: Layout, agg: bool, caption: list[str],
               chosen: DrawnTree | None) -> Sheet:
    """The figure's size from the layout's extent (``agg``: one node per box, with room
    around the boxes), the leaves of the ``chosen`` tree (its panel) and the caption's
    paragraphs, wrapped to the width."""
    x0, x1, y0, y1 = lay.extent()
    if agg:
        x0, x1, y0, y1 = x0 - 1.5, x1 + 1.5, y0 - 1.5, y1 + 1.5
    span = max(x1 - x0, y1 - y0, 1.0)
    width = min(max(7.0, 0.75 * span + 4), 17.0)
    aspect = (y1 - y0 + 1) / (x1 - x0 + 1)
    drawing = max(3.5, min(width * aspect, 15.0))
    extra = 0.0
    if chosen is not None:
        leaves = max(2, sum(1 for v in t.compute_nodes
                            if not any(s == v for s, _, _ in chosen.edges)))
        extra = min(max(5.0, 0.55 * leaves + 2.0), 14.0)
    chars = int(12.5 * (width + extra))
    lines = [ln for c in caption for ln in textwrap.wrap(c, chars)]
    cap_h = 0.17 * len(lines) + 0.1  # caption band at the bottom, inches
    leg_h = 0.75  # legend band above it (resized by place_legend once its rows are known)
    return Sheet(width, extra, drawing + 0.6 + cap_h + leg_h, lines, cap_h, leg_h)


def place_legend(fig: Any, ax: Any, handles: list[Any], sheet: Sheet) -> None:
    """The legend goes in its own band between the drawing and the caption: a legend hung
    below the axes is not always counted by tight_layout and then covers the caption."""
    height = sheet.height
    ncol = max(1, min(4, len(handles), int(sheet.width / 3.3)))
    rows = -(-len(handles) // ncol)
    band = 0.22 * rows + 0.2
    if abs(band - sheet.leg_h) > 0.01:
        height += band - sheet.leg_h
        fig.set_figheight(height)
    ax.set_anchor("S")  # spare height (equal aspect) above the drawing, not above the legend
    for _ in range(2):  # twice: the first pass starts from default margins, which an
        fig.tight_layout(rect=(0, (sheet.cap_h + band) / height, 1, 1))  # equal-aspect box skews
    ax.apply_aspect()  # the drawing's real box (equal aspect may shrink it within its slot)
    box = ax.get_position()
    fig.legend(handles=handles, loc="upper center", fontsize=8, frameon=False, ncol=ncol,
               bbox_to_anchor=(box.x0 + box.width / 2,
                               max(box.y0, (sheet.cap_h + band) / height)))
