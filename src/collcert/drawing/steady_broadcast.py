"""Picture of a steady-state broadcast schedule (Legrand et al. 2003): its trees and one period.

Left: the platform, nodes in layers by hop distance from the source, every
link with its cost; each weighted broadcast tree in its own colour (the DAG
method: the links in use, labelled with their messages per batch). Right: a
Gantt chart of one period, one row per port (a node's send port and its
receive port): every transfer is a bar from its start to its end, one segment
per block of messages in the colour of the tree the block belongs to,
labelled with the receiver (send rows) or the sender (receive rows) and the
number of messages. No two bars
of one row overlap: that is the one-port rule.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from collcert.reference.model import ScheduleError, fraction_str

from .common import check_output, require_matplotlib, save

LABEL_ALL = 16  # platforms with at most this many links get every link's cost written


def _layers(platform: Any, source: Any) -> dict[Any, tuple[float, float]]:
    depth = {source: 0}
    frontier = [source]
    while frontier:
        nxt = []
        for u in frontier:
            for v in platform.out_adj[u]:
                if v not in depth:
                    depth[v] = depth[u] + 1
                    nxt.append(v)
        frontier = nxt
    rows: dict[int, list[Any]] = {}
    for v in platform.nodes:
        rows.setdefault(depth.get(v, max(depth.values()) + 1), []).append(v)
    pos = {}
    for d, vs in rows.items():
        for i, v in enumerate(vs):
            pos[v] = ((i + 0.5) / len(vs), -float(d))
    return pos


def draw_steady(platform: Any, doc: dict[str, Any], output: str) -> None:
    """Draw the schedule ``doc`` (a collcert-steady-broadcast/1 dict) on ``platform``."""
    check_output(output)
    plt = require_matplotlib()
    _check(platform, doc)
    by_text = {str(v): v for v in platform.nodes}
    source = by_text[str(doc["source"])]
    trees = doc.get("trees") or []
    cmap = plt.get_cmap("tab10" if len(trees) <= 10 else "tab20")
    colours = [cmap(i % cmap.N) for i in range(max(len(trees), 1))]
    pos = _layers(platform, source)
    n = len(platform.nodes)
    height = max(4.0, min(0.32 * 2 * n + 1.5, 40.0))
    fig, (ax_g, ax_t) = plt.subplots(1, 2, figsize=(14, height),
                                     gridspec_kw={"width_ratios": [1, 1.6]})
    _draw_platform(ax_g, platform, doc, pos, colours)
    _draw_period(ax_t, platform, doc, colours)
    fig.tight_layout()
    save(fig, output)


def _check(platform: Any, doc: dict[str, Any]) -> None:
    """Draw only what the checker accepts: the picture must not show an invalid schedule."""
    from collcert.certify.broadcast import check_steady_broadcast
    from collcert.certify.model import InputError

    try:
        verdict = check_steady_broadcast(platform.to_json(), doc)
    except InputError as exc:
        raise ScheduleError(f"the schedule cannot be read: {exc}") from None
    if not verdict.ok:
        raise ScheduleError("the schedule is INVALID (run collcert audit for the reasons): "
                            + "; ".join(verdict.all_reasons()[:3]))


def _draw_platform(ax: Any, platform: Any, doc: dict[str, Any],
                   pos: dict[Any, tuple[float, float]], colours: list[Any]) -> None:
    """The left panel: the platform in layers, its link costs, and the trees in their
    colours (or, for a DAG schedule, the links in use with their messages per batch)."""
    from matplotlib.patches import FancyArrowPatch, Patch

    by_text = {str(v): v for v in platform.nodes}
    source = by_text[str(doc["source"])]
    trees = doc.get("trees") or []
    n = len(platform.nodes)
    # Costs are written on every link of a small platform; above LABEL_ALL links only on the
    # links the schedule uses (else the labels pile up into an unreadable smear).
    used = {(by_text[str(e[0])], by_text[str(e[1])])
            for e in ([e for t in trees for e in t["edges"]] if trees
                      else doc.get("packing", {}).get("loads", []))}
    label_all = len(platform.cost) <= LABEL_ALL
    for (u, v), c in platform.cost.items() if n <= 20 else ():  # big: trees only
        ax.add_patch(FancyArrowPatch(pos[u], pos[v], arrowstyle="-|>", mutation_scale=9,
                                     color="0.8", linewidth=0.8, zorder=1,
                                     connectionstyle="arc3,rad=0.15", shrinkA=9, shrinkB=9))
        if label_all or (u, v) in used:
            (x1, y1), (x2, y2) = pos[u], pos[v]  # on the link's own arc (arc3: the middle
            mx, my = (x1 + x2) / 2 + 0.075 * (y2 - y1), (y1 + y2) / 2 - 0.075 * (x2 - x1)
            ax.annotate(f"c={fraction_str(c)}", (mx, my), fontsize=6, color="0.3",
                        ha="center", va="center", zorder=5,
                        bbox={"boxstyle": "round,pad=0.1", "fc": "white", "ec": "none",
                              "alpha": 0.8})
    if trees:
        for k, t in enumerate(trees[:20]):
            # trees curve apart, on alternate sides of the link: never drawn on each other
            # (the sign follows the link's orientation, so u -> v and v -> u stay apart too)
            for u_raw, v_raw in t["edges"]:
                u, v = by_text[str(u_raw)], by_text[str(v_raw)]
                side = (-1 if k % 2 else 1) * (1 if str(u) < str(v) else -1)
                rad = side * (0.25 + 0.12 * (k // 2)) if n <= 20 else 0.03 * k
                ax.add_patch(FancyArrowPatch(pos[u], pos[v], arrowstyle="-|>",
                                             mutation_scale=10, color=colours[k],
                                             linewidth=1.5, zorder=2, shrinkA=9, shrinkB=9,
                                             connectionstyle=f"arc3,rad={rad}"))
    else:
        for u_raw, v_raw, m in doc.get("packing", {}).get("loads", []):
            u, v = by_text[str(u_raw)], by_text[str(v_raw)]
            ax.add_patch(FancyArrowPatch(pos[u], pos[v], arrowstyle="-|>", mutation_scale=10,
                                         color="tab:blue", linewidth=1.5, zorder=2,
                                         shrinkA=9, shrinkB=9,
                                         connectionstyle="arc3,rad=0.08"))
            mx, my = (pos[u][0] + pos[v][0]) / 2, (pos[u][1] + pos[v][1]) / 2
            ax.annotate(f"×{m}", (mx, my + 0.05), fontsize=7, color="tab:blue", ha="center")
    for v, (x, y) in pos.items():
        ax.scatter([x], [y], s=300 if n <= 30 else 80, zorder=3,
                   facecolor="tab:orange" if v == source else "white", edgecolor="black")
        ax.annotate(str(v), (x, y), ha="center", va="center", fontsize=7 if n <= 30 else 5,
                    zorder=4)
    ax.set_xlim(-0.05, 1.05)
    ax.set_ylim(min(p[1] for p in pos.values()) - 0.5, 0.5)
    ax.set_axis_off()
    ax.set_title(f"{platform.name or 'platform'}, source {source}\n"
                 f"{_platform_caption(trees, n, label_all)}", fontsize=9)
    if trees:
        ax.legend(handles=[Patch(color=colours[k], label=f"tree {k}: λ = {t['weight']}")
                           for k, t in enumerate(trees[:20])], fontsize=7, loc="lower left")


def _platform_caption(trees: list[Any], n: int, label_all: bool) -> str:
    if trees:
        what = f"{len(trees)} weighted broadcast tree{'s' if len(trees) != 1 else ''} (colours)"
        if n <= 20:
            what += ", link costs in grey" if label_all else ", costs c of the links in use"
        return what
    return ("DAG schedule: ×messages per batch on each link in use"
            + (", c = cost" if n <= 20 else ""))


def _tree_bounds(doc: dict[str, Any]) -> list[int]:
    """Where each tree's messages end: tree l has the message numbers
    [stretch·off_l, stretch·off_{l+1}), off_l the weights of the trees before it."""
    stretch = int(doc.get("packing", {}).get("stretch", 1))
    bounds = []
    off = 0
    for t in doc.get("trees") or []:
        off += int(t["weight"])
        bounds.append(stretch * off)
    return bounds


def _tree_of(first: int, bounds: list[int]) -> int:
    """The tree message number ``first`` belongs to."""
    for k, b in enumerate(bounds):
        if first < b:
            return k
    return 0


def _draw_period(ax: Any, platform: Any, doc: dict[str, Any], colours: list[Any]) -> None:
    """The right panel: one period as a Gantt chart of the ports, a row per port, a bar per
    transfer, one segment per block in its tree's colour."""
    by_text = {str(v): v for v in platform.nodes}
    trees = doc.get("trees") or []
    bounds = _tree_bounds(doc)
    n = len(platform.nodes)
    period = Fraction(str(doc["period"]))
    steps = doc["steps"]
    rows = {}
    labels = []
    for i, v in enumerate(platform.nodes):
        rows[(v, "send")] = 2 * i
        rows[(v, "recv")] = 2 * i + 1
        labels += [f"{v} send", f"{v} recv"]
    T = float(period)
    for st in steps:
        start = Fraction(str(st["start"]))
        for tr in st["transfers"]:
            u, v = by_text[str(tr["src"])], by_text[str(tr["dst"])]
            c = platform.cost[(u, v)]
            count = sum(int(b["count"]) for b in tr["blocks"])
            end = start + count * c
            for (node, port), other in (((u, "send"), f"→{v}"), ((v, "recv"), f"←{u}")):
                y = rows[(node, port)]
                at = start
                for b in tr["blocks"]:  # one segment per block, in its tree's colour
                    length = int(b["count"]) * c
                    colour = colours[_tree_of(int(b["first"]), bounds)] if trees else "tab:blue"
                    ax.barh(y, float(length), left=float(at), height=0.8, color=colour,
                            edgecolor="black", linewidth=0.3)
                    at += length
                if float(end - start) > T / 25 and n <= 30:
                    ax.annotate(f"{other} ×{count}", (float(start + (end - start) / 2), y),
                                ha="center", va="center", fontsize=6)
        ax.axvline(float(start), color="0.85", linewidth=0.6, zorder=0)
    ax.set_yticks(range(len(labels)))
    ax.set_yticklabels(labels, fontsize=7 if n <= 30 else 4)
    ax.invert_yaxis()
    ax.set_xlim(0, T)
    ax.set_xlabel(f"time within one period (T = {fraction_str(period)}; {len(steps)} steps, "
                  "one matching each, grey lines)", fontsize=8)
    ax.set_title(f"one period: {doc['messages_per_period']} messages, throughput "
                 f"{doc['throughput']} = 1/T* (optimal); bars are transfers, ×k messages",
                 fontsize=9)
