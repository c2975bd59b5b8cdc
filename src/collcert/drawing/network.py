"""Pictures of a topology: its bottleneck cut, one schedule tree, or every link's load.

:func:`draw_network` makes one of three pictures (layouts: :mod:`.layout`):

* **cut** — the topology with the certified bottleneck cut S*: nodes in S*
  shaded, the links the bound counts in red with arrowheads and capacities,
  and a caption saying what the cut proves;
* **tree** — one tree of a schedule: its paths on the network (arrows, root
  marked) beside the same tree drawn as a tree (root on top, edges coloured by
  the way they go: direct link, through a box's switch, between boxes);
* **loads** — all trees at once as a heat map: each direction of each link
  coloured by the share of the schedule's time it is busy (1 = a bottleneck).

Large topologies (more than ``AGGREGATE_ABOVE`` compute nodes, or
``detail="boxes"``) are drawn one node per box, links between boxes and global
switches summed.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from collcert.reference.model import Link, Node, Topology, decimal_str, fraction_str

from .common import DrawError, require_matplotlib, save
from .layout import Aggregate, Layout, aggregate, group_loads, layout
from .model import CutInfo, DrawnSchedule, DrawnTree
from .sheet import place_legend, plan_sheet
from .treeplot import draw_tree_panel

AGGREGATE_ABOVE = 256
CUT_COLOUR, TREE_COLOUR, ROOT_COLOUR = "#d62728", "#1f5fbf", "#ff9f1c"
SHADE, NODE_EDGE, LINK_GREY = "#f6c9c9", "#333333", "#b8b8b8"


def _fmt(x: Fraction) -> str:
    return fraction_str(x) if x.denominator == 1 else decimal_str(x, 2)


def _short(v: Node, lay: Layout) -> str:
    text = str(v)
    box = lay.box_of.get(v)
    if box and text.startswith(box + "."):
        return text[len(box) + 1:]
    return text


def draw_network(t: Topology, path: str, *, cut: CutInfo | None = None,
                 schedule: DrawnSchedule | None = None, tree: int | None = None,
                 loads: bool = False, detail: str = "auto", title: str = "") -> str:
    """Draw ``t`` to ``path``; returns a one-line description of the picture."""
    plt = require_matplotlib()
    lay = layout(t)
    if detail == "boxes" and lay.kind != "boxes":
        raise DrawError("--detail boxes: this topology's node ids show no boxes (ids such as "
                        "'b0.gpu3' do); draw it in full")
    agg = lay.kind == "boxes" and (detail == "boxes" or (
        detail == "auto" and t.num_compute > AGGREGATE_ABOVE))
    chosen: DrawnTree | None = None
    if schedule is not None and tree is not None:
        if not 0 <= tree < len(schedule.trees):
            raise DrawError(f"--tree {tree}: the schedule has trees 0..{len(schedule.trees) - 1}")
        chosen = schedule.trees[tree]
    caption = []
    if cut is not None:
        caption.append(cut.text)
    if loads and schedule is not None:
        caption.append(_busiest(schedule, len(t.capacity)))
    sheet = plan_sheet(t, lay, agg, caption, chosen)
    if chosen is not None:
        fig, (ax, ax_tree) = plt.subplots(1, 2, figsize=(sheet.width + sheet.extra, sheet.height),
                                          gridspec_kw={"width_ratios": [sheet.width, sheet.extra]})
    else:
        fig, ax = plt.subplots(figsize=(sheet.width + (1.3 if loads else 0.0), sheet.height))
        ax_tree = None
    ax.set_aspect("equal")
    ax.set_axis_off()
    handles: list[Any] = []
    if agg:
        what = _draw_aggregate(ax, t, lay, cut, schedule, chosen, loads, handles)
    else:
        what = _draw_full(ax, t, lay, cut, schedule, chosen, loads, handles)
    if loads and schedule is not None and schedule.busy:
        lo, hi = _span(schedule.busy)
        if lo == hi:  # one colour says it all: no scale to read
            title += (f"\nevery link drawn is busy {decimal_str(100 * hi, 1)}% of the time: "
                      "the load is perfectly even")
        else:
            from matplotlib.cm import ScalarMappable
            from matplotlib.colors import Normalize

            sm = ScalarMappable(norm=Normalize(100 * float(lo), 100 * float(hi)), cmap=_cmap())
            bar = fig.colorbar(sm, ax=ax, fraction=0.035, pad=0.01, shrink=0.75)
            bar.set_label("busy: % of the schedule's time\nthe link carries data",
                          fontsize=9)  # two short lines: one long one ran off the figure
    if ax_tree is not None and chosen is not None:
        draw_tree_panel(ax_tree, t, chosen, lay.box_of, detail_labels=t.num_compute <= 40,
                        chars=int(10 * sheet.extra))
    ax.set_title(title, fontsize=11, loc="left")
    if sheet.lines:
        fig.text(0.01, 0.01, "\n".join(sheet.lines), fontsize=8.5, ha="left", va="bottom")
    place_legend(fig, ax, handles, sheet)
    save(fig, path)
    return what


def _cmap() -> Any:
    from matplotlib import colormaps

    return colormaps["YlOrRd"]


def _span(busy: dict[Any, Fraction]) -> tuple[Fraction, Fraction]:
    """The least and the largest busy share: the colour scale runs between them (a
    scale from 0 to 100% paints a balanced schedule one dark red)."""
    return min(busy.values()), max(busy.values())


def _busy_colour(x: Fraction, span: tuple[Fraction, Fraction] | None = None) -> Any:
    lo, hi = span or (Fraction(0), Fraction(1))
    share = (x - lo) / (hi - lo) if hi > lo else Fraction(3, 4)
    return _cmap()(0.12 + 0.88 * float(share))


def _busiest(s: DrawnSchedule, total_links: int) -> str:
    if not s.busy:
        return ""
    top = max(s.busy.values())
    full = [e for e, x in s.busy.items() if x == top]
    idle = total_links - len(s.busy)
    if len(full) == len(s.busy):
        return (f"Every one of the {len(s.busy)} links the schedule uses is busy "
                f"{decimal_str(100 * top, 1)}% of the time: the load is perfectly even, and "
                "each of them decides the time"
                + (f"; {idle} links in grey carry nothing." if idle else "."))
    names = ", ".join(f"{u} → {v}" for u, v in full[:4]) + (
        f" and {len(full) - 4} more" if len(full) > 4 else "")
    return (f"The schedule uses {len(s.busy)} of the {total_links} directed links"
            + (f" ({idle} in grey carry nothing)" if idle else "")
            + f". Busiest ({decimal_str(100 * top, 1)}% of the time, they decide the time): "
            f"{names}.")


def _sizes(n: int) -> tuple[float, float]:
    """(compute marker area, label font size) for n drawn nodes."""
    area = max(18.0, min(300.0, 5200.0 / max(n, 1)))
    return area, (7.0 if n <= 40 else 6.0 if n <= 90 else 5.0)


def _arrow(ax: Any, p: tuple[float, float], q: tuple[float, float], colour: Any, lw: float,
           rad: float = 0.0, shrink: float = 7.0, z: int = 3, scale: float = 11.0,
           style: str = "-|>", dashed: bool = False) -> None:
    from matplotlib.patches import FancyArrowPatch

    ax.add_patch(FancyArrowPatch(p, q, arrowstyle=style, mutation_scale=scale, color=colour,
                                 linewidth=lw, connectionstyle=f"arc3,rad={rad}",
                                 shrinkA=shrink, shrinkB=shrink, zorder=z,
                                 linestyle=(0, (4, 2)) if dashed else "solid"))


def _label(ax: Any, p: tuple[float, float], q: tuple[float, float], text: str, colour: str,
           at: float = 0.5, size: float = 7.0, rad: float = 0.0,
           avoid: list[tuple[float, float]] | None = None, clear: float = 0.0) -> None:
    """Write ``text`` on the arrow p -> q (an arc3 arc of curvature ``rad``), at fraction
    ``at`` of its length, or at the first of a few other fractions that keeps clear of the
    points in ``avoid`` by ``clear`` (nodes: a long link, such as a torus wrap-around, passes
    other nodes); the spot chosen is added to ``avoid``, so later labels keep clear of it."""
    cx, cy = (p[0] + q[0]) / 2 + rad * (q[1] - p[1]), (p[1] + q[1]) / 2 - rad * (q[0] - p[0])

    def point(f: float) -> tuple[float, float]:  # the quadratic Bezier curve arc3 draws
        a, b, c = (1 - f) ** 2, 2 * (1 - f) * f, f * f
        return a * p[0] + b * cx + c * q[0], a * p[1] + b * cy + c * q[1]

    x, y = point(at)
    if avoid:
        for f in (at, 0.5, 0.4, 0.75, 0.3, 0.85):
            fx, fy = point(f)
            if all(math.dist((fx, fy), w) >= clear for w in avoid):
                x, y = fx, fy
                break
        avoid.append((x, y))
    ax.text(x, y, text, fontsize=size, color=colour, ha="center", va="center", zorder=6,
            bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": colour, "lw": 0.5,
                  "alpha": 0.9})


def _spots(t: Topology, lay: Layout) -> tuple[list[tuple[float, float]] | None, float]:
    """The node positions labels keep clear of, and by how much (0.3 × the least distance
    between two nodes); none above 300 nodes."""
    if len(t.nodes) > 300:
        return None, 0.0
    spots = [lay.pos[w] for w in t.nodes]
    return spots, 0.3 * min((math.dist(u, w) for i, u in enumerate(spots)
                             for w in spots[i + 1:] if u != w), default=1.0)


def _proxy(kind: str, label: str, colour: str = "black", face: str = "white") -> Any:
    from matplotlib.lines import Line2D

    if kind == "line":
        return Line2D([], [], color=colour, lw=2.2, label=label, marker=">", markersize=6)
    if kind == "grey":
        return Line2D([], [], color=LINK_GREY, lw=2, label=label)
    marker = {"compute": "o", "switch": "s", "box": "s"}[kind]
    return Line2D([], [], marker=marker, linestyle="", markersize=9 if kind == "box" else 8,
                  markerfacecolor=face, markeredgecolor=NODE_EDGE, label=label)


def _pairs(caps: dict[Any, Fraction]) -> dict[tuple[Any, Any], Fraction]:
    """Undirected pairs with the larger of the two directions' capacities."""
    out: dict[tuple[Any, Any], Fraction] = {}
    for (u, v), c in caps.items():
        key = (u, v) if (v, u) not in out else (v, u)
        out[key] = max(out.get(key, Fraction(0)), c)
    return out


def _plain_links(ax: Any, pos: dict[Any, tuple[float, float]], caps: dict[Any, Fraction],
                 skip: set[Any], grid: bool, faint: bool) -> None:
    from matplotlib.collections import LineCollection

    pairs = _pairs(caps)
    cmax = max(pairs.values())
    segs, widths, curved = [], [], []
    for (u, v), c in pairs.items():
        if (u, v) in skip or (v, u) in skip:
            continue
        w = (0.5 + 2.6 * math.sqrt(float(c / cmax))) * (0.6 if faint else 1.0)
        (xa, ya), (xb, yb) = pos[u], pos[v]
        if grid and math.hypot(xa - xb, ya - yb) > 1.5:
            curved.append((u, v, w))
            continue
        segs.append([pos[u], pos[v]])
        widths.append(w)
    ax.add_collection(LineCollection(segs, linewidths=widths, colors=LINK_GREY, zorder=1,
                                     alpha=0.55 if faint else 0.9))
    for u, v, w in curved:  # torus wrap-around links: arcs, not lines through the grid
        _arrow(ax, pos[u], pos[v], LINK_GREY, w, rad=0.12 * 4 / max(
            math.dist(pos[u], pos[v]), 1), style="-", shrink=0, z=1)


def _nodes(ax: Any, t: Topology, lay: Layout, cut: CutInfo | None, root: Node | None,
           labels: bool) -> float:
    area, font = _sizes(len(t.nodes))
    for v in t.nodes:
        x, y = lay.pos[v]
        compute = t.is_compute(v)
        face = ROOT_COLOUR if v == root else SHADE if cut and v in cut.nodes else "white"
        big = any(v in b.hubs for b in lay.boxes)
        ax.scatter([x], [y], s=area * (1.6 if big else 1.0 if compute else 0.7),
                   marker="o" if compute else "s", facecolor=face, edgecolor=NODE_EDGE,
                   linewidths=0.8, zorder=4)
        if labels and (compute or big or len(t.nodes) <= 60):
            dx, dy = _label_direction(v, lay, compute, big)
            off = math.sqrt(area) / 2 + 3
            ax.annotate(_short(v, lay), (x, y), textcoords="offset points",
                        xytext=(dx * off, dy * off), ha="center", va="center",
                        fontsize=font, zorder=5,
                        bbox={"boxstyle": "round,pad=0.05", "fc": "white", "ec": "none",
                              "alpha": 0.7})
    return area


def _label_direction(v: Node, lay: Layout, compute: bool, hub: bool) -> tuple[float, float]:
    """Unit offset of a node's label: GPUs of a box inward, its switches outward, ring and
    circle nodes outward, grid nodes below, layered compute below and switches above."""
    if hub:
        return (0.0, -1.6)
    centre: tuple[float, float] | None = None
    for b in lay.boxes:
        if v in b.compute or v in b.switches:
            centre = b.center
    if centre is None and lay.kind in ("ring", "circle"):
        centre = (0.0, 0.0)
    if centre is None:
        return (0.0, -1.3) if compute or lay.kind == "grid" else (0.0, 1.3)
    x, y = lay.pos[v]
    d = math.hypot(x - centre[0], y - centre[1]) or 1.0
    ux, uy = (x - centre[0]) / d, (y - centre[1]) / d
    sign = -1.0 if compute and lay.kind == "boxes" else 1.0
    return (sign * ux * 1.9, sign * uy * 1.5)


def _frames(ax: Any, lay: Layout, fills: dict[str, str] | None = None) -> None:
    from matplotlib.patches import Circle

    for b in lay.boxes:
        if not b.name:  # the whole topology as one box: no outline
            continue
        face = (fills or {}).get(b.name, "#f3f5fa")
        ax.add_patch(Circle(b.center, b.frame, facecolor=face, edgecolor="#8a94a6",
                            linewidth=1.0, zorder=0))
        ax.text(b.center[0], b.center[1] + b.frame * 1.02, b.name, ha="center",
                va="bottom", fontsize=9, fontweight="bold", color="#44506a")


def _draw_full(ax: Any, t: Topology, lay: Layout, cut: CutInfo | None,
               schedule: DrawnSchedule | None, chosen: DrawnTree | None, loads: bool,
               handles: list[Any]) -> str:
    _frames(ax, lay)
    grid = lay.kind == "grid"
    busy = schedule.busy if (loads and schedule is not None) else None
    skip: set[Any] = set(busy or {})
    if cut is not None and busy is None and chosen is None:
        skip |= set(cut.links)
    _plain_links(ax, lay.pos, dict(t.capacity), skip, grid, faint=chosen is not None)
    area = _nodes(ax, t, lay, cut, chosen.root if chosen else None,
                  labels=t.num_compute <= 128)
    shrink = math.sqrt(area) / 2 + 1
    what = "the topology"
    if busy is not None:
        span = _span(busy) if busy else None
        for (u, v), x in busy.items():
            _arrow(ax, lay.pos[u], lay.pos[v], _busy_colour(x, span), 0.6 + 1.2 * float(x),
                   rad=0.13, shrink=shrink, scale=7 + 3 * float(x))
        handles.append(_proxy("line", "link direction, coloured by load", "#e8590c"))
        handles.append(_proxy("grey", "link carrying nothing"))
        if cut is not None and len(cut.links) <= 16:  # what the bound counts, and how busy
            spots, clear = _spots(t, lay)
            for u, v in cut.links:
                x = busy.get((u, v), Fraction(0))
                _label(ax, lay.pos[u], lay.pos[v], f"{round(100 * float(x))}%", CUT_COLOUR,
                       at=0.62, rad=0.13, avoid=spots, clear=clear)
            handles.append(_proxy("line", "bottleneck cut link: % of the time busy",
                                  CUT_COLOUR))
        what = f"the loads of all {len(schedule.trees)} trees" if schedule else what
    elif chosen is not None:
        hops: dict[Link, int] = {}
        for _, _, p in chosen.edges:
            for h in zip(p, p[1:]):
                hops[h] = hops.get(h, 0) + 1
        switches = set(t.switch_nodes)
        for (u, v), m in hops.items():  # small heads into a switch: they pile up at a hub
            _arrow(ax, lay.pos[u], lay.pos[v], TREE_COLOUR, 1.3 + 0.5 * min(m, 4),
                   rad=0.1 if (v, u) in hops else 0.0, shrink=shrink,
                   scale=6.0 if v in switches else 11.0)
        if cut is not None:  # above the tree, curved the other way: never hidden under it
            for u, v in cut.links:
                _arrow(ax, lay.pos[u], lay.pos[v], CUT_COLOUR, 1.8, rad=-0.18, shrink=shrink,
                       z=6, scale=9.0, dashed=True)
            handles.append(_proxy("grey", "bottleneck cut link (dashed)"))
            handles[-1].set_color(CUT_COLOUR)
            handles[-1].set_linestyle((0, (4, 2)))
        handles.append(_proxy("line", "tree path (data direction)", TREE_COLOUR))
        handles.append(_proxy("compute", "tree root", face=ROOT_COLOUR))
        what = "one tree"
    elif cut is not None:
        labelled = len(cut.links) <= 16
        spots, clear = _spots(t, lay) if labelled else (None, 0.0)
        for u, v in cut.links:
            c = t.capacity[(u, v)]
            rad = 0.08 if (v, u) in t.capacity else 0.0
            _arrow(ax, lay.pos[u], lay.pos[v], CUT_COLOUR, 1.6 + 1.6 * float(c / max(
                t.capacity[e] for e in cut.links)), rad=rad, shrink=shrink, z=5, scale=13)
            if labelled:
                _label(ax, lay.pos[u], lay.pos[v], f"{_fmt(c)}", CUT_COLOUR, at=0.62, rad=rad,
                       avoid=spots, clear=clear)
        handles.append(_proxy("line", f"cut link, labelled with its capacity ({t.unit})"
                              if labelled else "cut link", CUT_COLOUR))
        what = "the topology and its bottleneck cut"
    handles.append(_proxy("compute", "compute node (GPU)"))
    if t.switch_nodes:
        handles.append(_proxy("switch", "switch / NIC"))
    if cut is not None:
        handles.append(_proxy("compute", "in the bottleneck cut S*", face=SHADE))
    if any(b.name for b in lay.boxes):
        handles.append(_proxy("box", "box (grouped by id prefix)", face="#f3f5fa"))
    handles.append(_proxy("grey", "link (width ~ capacity)"))
    ax.autoscale_view()
    ax.margins(0.06)
    return what


def _draw_aggregate(ax: Any, t: Topology, lay: Layout, cut: CutInfo | None,
                    schedule: DrawnSchedule | None, chosen: DrawnTree | None, loads: bool,
                    handles: list[Any]) -> str:
    ag = aggregate(t, lay)
    fills, partial = _box_fills(lay, cut)
    _draw_boxes(ax, lay, ag, fills, cut)
    busy = None
    if loads and schedule is not None:
        load = group_loads(ag, schedule.loads)
        busy = {e: x / ag.capacity[e] / schedule.time_per_unit for e, x in load.items()}
    skip = set(busy or {})
    caps = {e: c for e, c in ag.capacity.items()}
    _plain_links(ax, ag.pos, caps, skip, False, faint=False)
    if busy is not None:
        span = _span(busy) if busy else None
        for (u, v), x in busy.items():
            _arrow(ax, ag.pos[u], ag.pos[v], _busy_colour(x, span), 0.6 + 2 * float(x), rad=0.1,
                   shrink=8)
        handles.append(_proxy("line", "links between boxes, coloured by load", "#e8590c"))
    elif chosen is not None:
        hops: dict[tuple[str, str], int] = {}
        for _, _, p in chosen.edges:
            for n_a, n_b in zip(p, p[1:]):
                ga, gb = ag.group[n_a], ag.group[n_b]
                if ga != gb:
                    hops[(ga, gb)] = hops.get((ga, gb), 0) + 1
        for (u, v), m in hops.items():
            _arrow(ax, ag.pos[u], ag.pos[v], TREE_COLOUR, 1.0 + 0.4 * min(m, 5), rad=0.08,
                   shrink=8)
        handles.append(_proxy("line", "tree path between boxes", TREE_COLOUR))
    elif cut is not None:
        partial += _aggregate_cut(ax, t, ag, cut, handles)
    if partial:
        ax.text(0.0, -0.02, "; ".join(partial[:6]), transform=ax.transAxes, fontsize=8,
                color=CUT_COLOUR, va="top", wrap=True)
    handles.append(_proxy("box", "a box (all its GPUs and switches)", face="#eef1f7"))
    handles.append(_proxy("switch", "global switch"))
    if SHADE in fills.values():
        handles.append(_proxy("box", "box inside the bottleneck cut S*", face=SHADE))
    if "#fbe6e6" in fills.values():
        handles.append(_proxy("box", "box partly inside S*", face="#fbe6e6"))
    handles.append(_proxy("grey", "links, summed per box (width ~ capacity)"))
    ax.autoscale_view()
    ax.margins(0.05)
    return f"one node per box ({len(lay.boxes)} boxes)"


def _box_fills(lay: Layout, cut: CutInfo | None) -> tuple[dict[str, str], list[str]]:
    """Each box's colour (inside the cut S*, partly inside) and a note per box partly in it."""
    fills: dict[str, str] = {}
    partial: list[str] = []
    if cut is not None:
        for b in lay.boxes:
            inside = sum(1 for v in b.compute if v in cut.nodes)
            if inside == len(b.compute):
                fills[b.name] = SHADE
            elif inside:
                fills[b.name] = "#fbe6e6"
                partial.append(f"{b.name}: {inside} of {len(b.compute)} GPUs in S*")
    return fills, partial


def _draw_boxes(ax: Any, lay: Layout, ag: Aggregate, fills: dict[str, str],
                cut: CutInfo | None) -> None:
    """One rounded square per box, named, and the global switches around them."""
    from matplotlib.patches import FancyBboxPatch

    n = len(ag.nodes)
    r = lay.boxes[0].radius if lay.boxes else 1.0
    half = r * (0.9 if n < 40 else 1.25)
    for b in lay.boxes:
        x, y = b.center
        ax.add_patch(FancyBboxPatch((x - half, y - half), 2 * half, 2 * half,
                                    boxstyle=f"round,pad={0.15 * half}",
                                    facecolor=fills.get(b.name, "#eef1f7"),
                                    edgecolor="#555f73", linewidth=0.9, zorder=4))
        font = 8 if n <= 40 else 6 if n <= 80 else 4.5
        ax.text(x, y, f"{b.name}\n{len(b.compute)} GPUs" if n <= 80 else b.name,
                ha="center", va="center", fontsize=font, zorder=5)
    for w in lay.global_switches:
        x, y = ag.pos[str(w)]
        face = SHADE if cut is not None and w in cut.nodes else "white"
        ax.scatter([x], [y], s=220, marker="s", facecolor=face, edgecolor=NODE_EDGE, zorder=4)
        ax.annotate(str(w), (x, y), textcoords="offset points", xytext=(0, 9), ha="center",
                    fontsize=8, zorder=5)


def _aggregate_cut(ax: Any, t: Topology, ag: Aggregate, cut: CutInfo,
                   handles: list[Any]) -> list[str]:
    """The cut's links between boxes, drawn; returns a note on those inside boxes (none
    drawn: a box is one node)."""
    crossing = [(ag.group[u], ag.group[v]) for u, v in cut.links
                if ag.group[u] != ag.group[v]]
    for u, v in set(crossing):
        _arrow(ax, ag.pos[u], ag.pos[v], CUT_COLOUR, 2.0, shrink=8, z=5)
    handles.append(_proxy("line", "cut link between boxes", CUT_COLOUR))
    inner = [(u, v) for u, v in cut.links if ag.group[u] == ag.group[v]]
    if not inner:
        return []
    listed = ", ".join(f"{u} → {v} ({_fmt(t.capacity[(u, v)])} {t.unit})"
                       for u, v in inner[:4])
    more = f" and {len(inner) - 4} more" if len(inner) > 4 else ""
    return [f"cut links inside boxes: {listed}{more}"]
