"""``collcert draw``: a picture of a topology, its bottleneck cut and one tree of a schedule."""

from __future__ import annotations

import argparse
import json
import os
from collections import deque
from typing import Any

from collcert.reference.errors import ScheduleError
from collcert.reference.topology import Topology

from ._common import add_topology_argument, load_topology


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "draw",
        help="draw a topology with its bottleneck cut and one tree of a schedule (PNG/SVG)",
        description="Draw the topology (compute nodes as circles, switches as squares, link "
        "width by capacity) with the allgather bottleneck cut S* highlighted: its nodes are "
        "shaded and the links leaving it are red. Given a schedule file (from 'collcert "
        "schedule -o'), one of its trees is drawn on top: every link its paths use, in "
        "colour, with the root marked.",
        epilog="Example: collcert schedule two_box_example -o s.json && "
        "collcert draw two_box_example s.json -o tree.png",
    )
    add_topology_argument(p, optional=False)
    p.add_argument("schedule", nargs="?", metavar="SCHEDULE.json",
                   help="a collcert-schedule/1 file whose tree to draw (optional)")
    p.add_argument("-o", "--output", required=True, metavar="OUT",
                   help="output picture; the extension picks the format (.png or .svg)")
    p.add_argument("--tree", type=int, default=0, metavar="I",
                   help="which tree of the schedule to draw, counting from 0 over all "
                   "phases (default: 0)")
    p.add_argument("--collective", "-c", default="allgather",
                   choices=("allgather", "reduce-scatter"),
                   help="whose bottleneck cut to highlight (default: allgather)")
    p.set_defaults(func=run)


def _layout(t: Topology) -> dict[Any, tuple[float, float]]:
    """Layers by hop distance from the compute nodes (compute at the bottom)."""
    adj: dict[Any, set[Any]] = {v: set() for v in t.nodes}
    for u, v in t.capacity:
        adj[u].add(v)
        adj[v].add(u)
    level = {v: 0 for v in t.compute_nodes}
    q = deque(t.compute_nodes)
    while q:
        x = q.popleft()
        for y in adj[x]:
            if y not in level:
                level[y] = level[x] + 1
                q.append(y)
    for v in t.nodes:
        level.setdefault(v, 1)
    pos: dict[Any, tuple[float, float]] = {}
    for i, v in enumerate(t.compute_nodes):
        pos[v] = (float(i), 0.0)
    top = max(level.values())
    for lev in range(1, top + 1):
        row = [v for v in t.switch_nodes if level[v] == lev]
        # place each switch above the mean of its lower neighbours, then spread
        def key(v: Any, lev: int = lev) -> float:
            xs = [pos[u][0] for u in adj[v] if u in pos and level[u] < lev]
            return sum(xs) / len(xs) if xs else 0.0
        row.sort(key=key)
        width = max(len(t.compute_nodes) - 1, 1)
        for j, v in enumerate(row):
            x = key(v) if len(row) == 1 else width * (j + 0.5) / len(row)
            pos[v] = (x, 1.5 * lev)
    return pos


def _read_tree(path: str, index: int, t: Topology) -> tuple[dict[str, Any], list[str]]:
    notes = []
    try:
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
    except FileNotFoundError:
        raise ScheduleError(f"{path}: no such file") from None
    except (OSError, ValueError) as exc:
        raise ScheduleError(f"{path}: not a JSON schedule ({exc})") from None
    if not isinstance(doc, dict) or doc.get("format") != "collcert-schedule/1":
        raise ScheduleError(f"{path}: not a collcert-schedule/1 document (\"format\" is "
                            f"{doc.get('format') if isinstance(doc, dict) else None!r})")
    if doc.get("topology") not in (None, t.content_hash()):
        notes.append("warning: the schedule was made for a different topology")
    trees = [tr for ph in doc.get("phases", []) for tr in ph.get("trees", [])]
    if not trees:
        raise ScheduleError(f"{path}: the schedule has no trees")
    if not 0 <= index < len(trees):
        raise ScheduleError(f"--tree {index}: the schedule has trees 0..{len(trees) - 1}")
    by_text = {str(v): v for v in t.nodes}
    tree = trees[index]
    for e in tree.get("edges", []):
        for x in e.get("path", []):
            if x not in t.index and str(x) not in by_text:
                raise ScheduleError(f"{path}: tree {index} uses node {x!r}, which is not in "
                                    "the topology; draw it with the topology it was made for")
    return tree, notes


def run(args: argparse.Namespace) -> int:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyArrowPatch

    from collcert.reference.optimum import optimum

    ext = os.path.splitext(args.output)[1].lower()
    if ext not in (".png", ".svg"):
        raise ScheduleError(f"-o {args.output}: use a .png or .svg file name")
    t = load_topology(args.topology)
    tree: dict[str, Any] | None = None
    notes: list[str] = []
    if args.schedule:
        tree, notes = _read_tree(args.schedule, args.tree, t)
    opt = optimum(t, args.collective)
    cut = set(opt.cut or ())
    pos = _layout(t)
    n = len(t.nodes)
    fig_w = min(4 + 0.45 * max(len(t.compute_nodes), 8), 40)
    fig, ax = plt.subplots(figsize=(fig_w, 6 + 0.4 * max(p[1] for p in pos.values())))
    cmax = max(t.capacity.values())
    drawn = set()
    for (u, v), c in t.capacity.items():
        if (v, u) in drawn:
            continue
        drawn.add((u, v))
        leaving = (u in cut) != (v in cut)
        (x1, y1), (x2, y2) = pos[u], pos[v]
        ax.plot([x1, x2], [y1, y2], color="tab:red" if leaving else "0.75",
                linewidth=0.6 + 2.5 * float(c / cmax), zorder=1)
    if tree is not None:
        by_text = {str(v): v for v in t.nodes}
        for e in tree["edges"]:
            p = [x if x in t.index else by_text[str(x)] for x in e["path"]]
            for a, b in zip(p, p[1:]):
                ax.add_patch(FancyArrowPatch(pos[a], pos[b], arrowstyle="-|>", mutation_scale=12,
                                             color="tab:blue", linewidth=1.6, zorder=3,
                                             connectionstyle="arc3,rad=0.12"))
    for v in t.nodes:
        x, y = pos[v]
        is_root = tree is not None and str(v) == str(tree["root"])
        marker = "o" if t.is_compute(v) else "s"
        face = "tab:orange" if is_root else ("#f6d3d3" if v in cut else "white")
        ax.scatter([x], [y], s=260 if n < 60 else 90, marker=marker, facecolor=face,
                   edgecolor="black", zorder=4)
        if n <= 80:
            ax.annotate(str(v), (x, y), textcoords="offset points", xytext=(0, -14 if
                        t.is_compute(v) else 10), ha="center", fontsize=6, rotation=0)
    title = f"{t.name or 'topology'}: bottleneck cut S* ({len(cut)} nodes, shaded; red links " \
            f"cross it)"
    if tree is not None:
        title += f"\ntree {args.tree}: root {tree['root']}, multiplicity {tree['multiplicity']}" \
                 f", direction {tree['direction']} (blue arrows)"
    ax.set_title(title, fontsize=9)
    ax.set_axis_off()
    fig.tight_layout()
    try:
        fig.savefig(args.output, dpi=150)
    except OSError as exc:
        raise ScheduleError(f"cannot write {args.output}: {exc.strerror}") from None
    finally:
        plt.close(fig)
    for note in notes:
        print(note)
    print(f"Drew {t.name or 'topology'} to {args.output}"
          + (f" with tree {args.tree} of {args.schedule}" if tree is not None else "") + ".")
    return 0
