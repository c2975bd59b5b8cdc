"""One schedule tree drawn as a tree: root on top, one row per depth.

Edges point the way data flows (down an out-tree, up an in-tree) and are
coloured by the way they go through the network: a direct link between two
GPUs, through a switch of one box (NVSwitch), or between boxes (NICs, IB).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from collcert.reference.model import Node, Topology

from .model import DrawnTree

KINDS = {"direct": ("#2b8a3e", "direct GPU-GPU link"),
         "box": ("#1f5fbf", "through a switch in the box"),
         "switch": ("#1f5fbf", "through switches"),
         "between": ("#c2255c", "between boxes (NIC / network switch)")}


def _kind(path: list[Node], box_of: Mapping[Node, str], t: Topology | None = None) -> str:
    if len(path) == 2 and (t is None or (t.is_compute(path[0]) and t.is_compute(path[1]))):
        return "direct"  # (a path that starts or ends at a switch that copies or adds is not)
    if not box_of:
        return "switch"
    homes = {box_of.get(v) for v in path}
    return "box" if len(homes) == 1 and None not in homes else "between"


def draw_tree_panel(ax: Any, t: Topology, tree: DrawnTree, box_of: Mapping[Node, str],
                    detail_labels: bool = True, chars: int = 80) -> None:
    from matplotlib.lines import Line2D
    from matplotlib.patches import FancyArrowPatch

    out = tree.direction == "out"
    children: dict[Node, list[tuple[Node, list[Node]]]] = {}
    for src, dst, path in tree.edges:
        if src == dst:  # a self-edge: the GPU's own share through a switch and back
            continue
        parent, child = (src, dst) if out else (dst, src)
        children.setdefault(parent, []).append((child, path))
    for lst in children.values():
        lst.sort(key=lambda cp: t.index[cp[0]])
    # tidy layout: leaves left to right in depth-first order, parents over their children
    x: dict[Node, float] = {}
    depth: dict[Node, int] = {tree.root: 0}
    order: list[Node] = []
    stack = [tree.root]
    while stack:
        v = stack.pop()
        order.append(v)
        for c, _ in reversed(children.get(v, [])):
            depth[c] = depth[v] + 1
            stack.append(c)
    leaf = 0
    for v in order:
        if not children.get(v):
            x[v] = float(leaf)
            leaf += 1
    for v in reversed(order):  # children before parents
        kids = [c for c, _ in children.get(v, [])]
        if kids:
            x[v] = sum(x[c] for c in kids) / len(kids)
    height = max(depth.values())
    n = len(order)
    area = max(25.0, min(260.0, 4000.0 / n))
    font = 7 if n <= 24 else 6 if n <= 64 else 4.5
    used = set()
    for parent, lst in children.items():
        for child, path in lst:
            kind = _kind(path, box_of, t)
            used.add(kind)
            colour = KINDS[kind][0]
            a, b = (parent, child) if out else (child, parent)
            ax.add_patch(FancyArrowPatch((x[a], -depth[a]), (x[b], -depth[b]),
                                         arrowstyle="-|>", mutation_scale=10, color=colour,
                                         linewidth=1.4, shrinkA=6, shrinkB=6, zorder=2))
            if detail_labels and len(path) > 2:
                via = ", ".join(str(w).split(".", 1)[-1] if kind == "box" else str(w)
                                for w in path[1:-1])
                ax.text((x[a] + x[b]) / 2, -(depth[a] + depth[b]) / 2, via, fontsize=5.5,
                        color=colour, ha="center", va="center", zorder=3,
                        bbox={"boxstyle": "round,pad=0.1", "fc": "white", "ec": "none",
                              "alpha": 0.85})
    for v in order:
        root = v == tree.root
        ax.scatter([x[v]], [-depth[v]], s=area * (1.5 if root else 1.0), marker="o",
                   facecolor="#ff9f1c" if root else "white", edgecolor="#333333", zorder=4)
        ax.annotate(str(v), (x[v], -depth[v]), textcoords="offset points", xytext=(6, 0),
                    ha="left", va="center", fontsize=font, zorder=5,
                    bbox={"boxstyle": "round,pad=0.05", "fc": "white", "ec": "none",
                          "alpha": 0.75})
    ax.set_xlim(-0.8, max(leaf + 0.2, 1.2))
    ax.set_ylim(-height - 0.9, 0.6)
    ax.set_yticks([-d for d in range(height + 1)])
    ax.set_yticklabels([f"depth {d}" for d in range(height + 1)], fontsize=7)
    ax.set_xticks([])
    for side in ("top", "right", "bottom"):
        ax.spines[side].set_visible(False)
    flow = "down from the root" if out else "up to the root"
    import textwrap

    head = (f"The same tree as a tree ({tree.collective}, root {tree.root}): it carries "
            f"{tree.multiplicity}/{tree.k} of the root's data, flowing {flow}.")
    ax.set_title("\n".join(textwrap.wrap(head, max(chars, 30))), fontsize=9, loc="left")
    ax.legend(handles=[Line2D([], [], color=KINDS[k][0], lw=2, label=KINDS[k][1])
                       for k in KINDS if k in used],
              loc="upper center", bbox_to_anchor=(0.5, -0.01), ncol=2, fontsize=7,
              frameon=False)  # below the tree: inside, it covered the root's label
