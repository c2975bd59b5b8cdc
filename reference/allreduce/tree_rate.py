"""The all-reduce rate of a bi-directed tree (Zhou & Sun 2026, Thm 3), with its proofs.

*On the Computation Rate of All-Reduce*, §3.3: "Theorem 3 covers all networks
whose topology is a bi-directed tree as a special case." The formula is not
printed; it follows from the theorem and its proof:

- In a tree the in-arborescence into a root r and the out-arborescence from r
  are unique, and together they use every directed tree edge exactly once
  (towards r to reduce, away from r to broadcast). So *every* MAC-BC network is
  the same all-ones vector, and LP (16) (Thm 2) gives R_LP = min over directed
  edges of β_uv.
- Removing the edge {u, v} leaves the side S of u, and only u → v leaves S, so
  the cut-set bound (Thm 1) is C ≤ min β_uv.

Hence R_LP = R* = C = min β. The certificates are the usual ones of the room,
checked by ``collcert.certify.allreduce`` (:func:`check_mac_bc_lp`,
:func:`check_cut_set`): one MAC-BC column of weight min β and the dual y = 1
on the least edge; the cut S and a path flow of value min β between the first
compute node and every other, both ways.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from ..model import Link, Node, Topology, TopologyError, fraction_str
from .cut_set import check_two_compute_nodes


@dataclass(frozen=True)
class TreeRate:
    """R* = R_LP = C = ``value`` on a bi-directed tree, reached at the directed ``edge``;
    ``side`` is the node set that ``edge`` alone leaves (the cut-set witness)."""

    value: Fraction
    edge: Link
    side: frozenset[Node]
    parent: dict[Node, Node] = field(repr=False, default_factory=dict)

    def to_json(self, t: Topology) -> dict[str, Any]:
        return {"closed_form": "Zhou & Sun 2026, Thm 3 (bi-directed tree): R* = min β",
                "r_star": fraction_str(self.value), "edge": list(self.edge),
                "cut": [v for v in t.nodes if v in self.side]}

    def certificates(self, t: Topology) -> dict[str, dict[str, Any]]:
        """The ``allreduce-cut-set`` and ``allreduce-mac-bc-lp`` certificates of the value."""
        root = t.compute_nodes[0]
        up = [(v, p) for v, p in self.parent.items()]
        down = [(p, v) for v, p in self.parent.items()]
        mac_bc = {"kind": "allreduce-mac-bc-lp", "value": fraction_str(self.value),
                  "columns": [{"root": root, "reduce": [list(e) for e in up],
                               "broadcast": [list(e) for e in down],
                               "weight": fraction_str(self.value)}],
                  "dual": [[self.edge[0], self.edge[1], "1"]]}
        amount = int(self.value * t.scale)
        flows = []
        for v in t.compute_nodes[1:]:
            path = self._path(v)  # root -> v as a list of directed edges
            flows.append({"source": root, "sink": v, "value": amount,
                          "flow": [[a, b, amount] for a, b in path]})
            flows.append({"source": v, "sink": root, "value": amount,
                          "flow": [[b, a, amount] for a, b in path]})
        cut = {"kind": "allreduce-cut-set", "value": fraction_str(self.value),
               "cut": [v for v in t.nodes if v in self.side], "multiplier": t.scale,
               "flows": flows}
        return {"cut_set_bound": cut, "mac_bc_lp": mac_bc}

    def _path(self, v: Node) -> list[Link]:
        edges = []
        while v in self.parent:
            edges.append((self.parent[v], v))
            v = self.parent[v]
        return edges[::-1]


def bidirected_tree_rate(t: Topology) -> TreeRate:
    """R* of a bi-directed tree (Zhou & Sun 2026, Thm 3), exact, with its witnesses.

    Refused with :class:`TopologyError` (exit 2 in the CLI), naming what to fix:
    switches (the paper's networks have none), fewer than two compute nodes, a
    link without its reverse, a cycle, a disconnected graph.
    """
    if t.switch_nodes:
        raise TopologyError(
            f"the bi-directed tree closed form (Zhou & Sun 2026, Thm 3) is for networks of "
            f"compute nodes only, and this topology has {len(t.switch_nodes)} switch(es) "
            f"({t.switch_nodes[0]!r}, …); use `collcert optimum -c allreduce` instead")
    check_two_compute_nodes(t)
    cap = {e: c for e, c in t.capacity.items() if c > 0}
    for (u, v) in cap:
        if (v, u) not in cap:
            raise TopologyError(
                f"link {u!r} -> {v!r} has no reverse link {v!r} -> {u!r}: a bi-directed tree "
                "has every edge in both directions, each with a positive capacity; add the "
                "reverse link (without it the rate is 0: the network is not strongly connected)")
    nbrs: dict[Node, list[Node]] = {x: [] for x in t.nodes}
    for (u, v) in cap:
        nbrs[u].append(v)
    parent = _spanning_parent(t, nbrs)
    best = min(cap, key=lambda e: (cap[e], t.index[e[0]], t.index[e[1]]))
    return TreeRate(cap[best], best, _side(nbrs, best), parent)


def _spanning_parent(t: Topology, nbrs: dict[Node, list[Node]]) -> dict[Node, Node]:
    """Parents of a search from the first node; refuses a cycle or a disconnected graph."""
    root = t.nodes[0]
    parent: dict[Node, Node] = {}
    seen = {root}
    stack = [root]
    while stack:
        x = stack.pop()
        for y in nbrs[x]:
            if y == parent.get(x):
                continue
            if y in seen:
                raise TopologyError(
                    f"the topology is not a tree: it has a cycle through the edge "
                    f"{x!r} – {y!r} ({_cycle(parent, x, y)}); a bi-directed tree on K nodes "
                    "has exactly K − 1 edges, each in both directions")
            seen.add(y)
            parent[y] = x
            stack.append(y)
    missing = [v for v in t.nodes if v not in seen]
    if missing:
        raise TopologyError(
            f"the topology is not a tree: node {missing[0]!r} cannot be reached from "
            f"{root!r} ({len(missing)} node(s) cut off); connect it, or its rate is 0")
    return parent


def _cycle(parent: dict[Node, Node], x: Node, y: Node) -> str:
    """The cycle closed by the edge x – y in the search tree, as text."""
    def up(v: Node) -> list[Node]:
        out = [v]
        while v in parent:
            v = parent[v]
            out.append(v)
        return out
    ax, ay = up(x), up(y)
    common = next(v for v in ax if v in set(ay))
    loop = ax[:ax.index(common) + 1] + ay[:ay.index(common)][::-1]
    return " – ".join(repr(v) for v in loop + [x])


def _side(nbrs: dict[Node, list[Node]], edge: Link) -> frozenset[Node]:
    """The nodes on u's side of the tree edge (u, v): the only link leaving them is u → v."""
    u, v = edge
    seen = {u}
    stack = [u]
    while stack:
        x = stack.pop()
        for y in nbrs[x]:
            if y not in seen and (x, y) != (u, v):
                seen.add(y)
                stack.append(y)
    return frozenset(seen)
