"""NCCL's double binary tree: allreduce (reduce up, broadcast down, pipelined), broadcast, reduce.

Read from NCCL's public source (NVIDIA/nccl): ``src/graph/trees.cc``
(``ncclGetBtree``: a binary tree over the nodes 0..n-1 built from the bits of
the node index, node 0 its root; ``ncclGetDtree``: the second tree is the
mirror image n-1-i when n is even, the first shifted by one when n is odd, so
that a node that is inner in one tree is mostly a leaf in the other);
``src/graph/connect.cc`` (``ncclTopoPreset``, ``connectTrees``): inside a node
the tree is a chain ``intra[0] -> intra[1] -> ..`` along the tree graph's
channel; with NCCL's default ``BALANCED_TREE`` pattern a node's parent link and
its second child (the larger index) attach to ``intra[0]``, its first child to
``intra[1]``, spreading NIC traffic over two GPUs; channels are doubled, channel
c running the first tree and c + nChannels the second, each carrying an equal
part of the data.

The model: the chains are the ring channels' orders inside each box
(:mod:`.rings`; NCCL searches its tree graph the same way, with the tree
pattern), so each ring channel gives two trees. The allreduce is written as
ForestColl's pipelined reduce and broadcast trees (``overlap``: the reduction
up and the broadcast down run at the same time on different chunks, as NCCL's
tree kernel does: ``src/device/all_reduce.h``, ``runTreeSplit`` gives part of
the threads the reduction toward ``tree->up`` and the rest the broadcast down), each tree's root reducing a share proportional to its trees
(``weights``). Broadcast and reduce orient the same trees away from, or toward,
the given root.
"""

from __future__ import annotations

from dataclasses import dataclass

from collcert.reference.model import Topology

from .document import Baseline, PhaseDoc, document, lcm
from .fabric import Fabric, Node, Route
from .rings import BaselineError, Rings


def btree(nranks: int, rank: int) -> tuple[int, int, int]:
    """(parent, first child, second child) of ``rank`` in NCCL's binary tree of node 0
    (-1: none); ``ncclGetBtree``."""
    bit = 1
    while bit < nranks and not bit & rank:
        bit <<= 1
    if rank == 0:
        return -1, -1, (bit >> 1 if nranks > 1 else -1)
    up = (rank ^ bit) | (bit << 1)
    if up >= nranks:
        up = rank ^ bit
    low = bit >> 1
    down0 = -1 if low == 0 else rank - low
    down1 = -1 if low == 0 else rank + low
    while down1 >= nranks:
        down1 = -1 if low == 0 else rank + low
        low >>= 1
    return up, down0, down1


def dtree(nranks: int, rank: int, which: int) -> tuple[int, int, int]:
    """Tree ``which`` (0 or 1) of NCCL's double binary tree (``ncclGetDtree``)."""
    if which == 0:
        return btree(nranks, rank)
    if nranks % 2:  # shift by one
        u, d0, d1 = btree(nranks, (rank - 1) % nranks)
        return tuple(-1 if x == -1 else (x + 1) % nranks for x in (u, d0, d1))  # type: ignore
    u, d0, d1 = btree(nranks, nranks - 1 - rank)  # mirror
    return tuple(-1 if x == -1 else nranks - 1 - x for x in (u, d0, d1))  # type: ignore


@dataclass
class NcclTree:
    """One tree of one channel: its root and its edges (parent, child), parents first."""

    root: Node
    edges: list[tuple[Node, Node]]


def nccl_trees(rings: Rings, balanced: bool = True) -> list[NcclTree]:
    """Two trees per ring channel (``connectTrees``: channel c and c + nChannels).
    ``balanced``: NCCL's BALANCED_TREE pattern (first child on ``intra[1]``); else
    its TREE pattern (parent and children on ``intra[0]``)."""
    nodes = len(rings.boxes)
    out: list[NcclTree] = []
    for which in (0, 1):
        for c in range(len(rings.channels)):
            intra = _intra(rings, c)
            edges: list[tuple[Node, Node]] = []
            root = None
            for b in range(nodes):
                up, d0, d1 = dtree(nodes, b, which)
                if up == -1:
                    root = intra[b][0]
                for child, slot in ((d0, 1), (d1, 0)):  # BALANCED_TREE: d0 on intra[1]
                    if child != -1:
                        head = intra[b][slot if balanced and len(intra[b]) > 1 else 0]
                        edges.append((head, intra[child][0]))
                edges += list(zip(intra[b], intra[b][1:]))
            assert root is not None
            out.append(NcclTree(root, _parents_first(root, edges)))
    return out


def _intra(rings: Rings, c: int) -> list[list[Node]]:
    """Channel ``c``'s chain in every box. NCCL's tree graph is searched once and used
    on every node alike: where the boxes have the same size, every box takes the
    positions of the first box's chain; else each its own piece of the ring."""
    first = rings.nodes_in_box(c, 0)
    sizes = {len(b) for b in rings.boxes}
    if len(sizes) > 1:
        return [rings.nodes_in_box(c, b) for b in range(len(rings.boxes))]
    pos = {v: i for i, v in enumerate(rings.boxes[0])}
    return [[box[pos[v]] for v in first] for box in rings.boxes]


def _parents_first(root: Node, edges: list[tuple[Node, Node]]) -> list[tuple[Node, Node]]:
    children: dict[Node, list[Node]] = {}
    for a, b in edges:
        children.setdefault(a, []).append(b)
    order, todo = [], [root]
    while todo:
        a = todo.pop()
        for b in children.get(a, []):
            order.append((a, b))
            todo.append(b)
    return order


def _oriented(tree: NcclTree, root: Node) -> list[tuple[Node, Node]]:
    """The tree's edges oriented away from ``root`` (any compute node)."""
    near: dict[Node, list[Node]] = {}
    for a, b in tree.edges:
        near.setdefault(a, []).append(b)
        near.setdefault(b, []).append(a)
    out, seen, todo = [], {root}, [root]
    while todo:
        a = todo.pop()
        for b in near.get(a, []):
            if b not in seen:
                seen.add(b)
                out.append((a, b))
                todo.append(b)
    return out


class _Router:
    """One route per ordered GPU pair, chosen when first needed (least used first)."""

    def __init__(self, topology: Topology, rings: Rings) -> None:
        self.fabric = Fabric(topology)
        self.rings = rings
        self.cache: dict[tuple[Node, Node], Route] = {}

    def __call__(self, a: Node, b: Node) -> Route:
        r = self.cache.get((a, b))
        if r is None:
            r = self.fabric.route(a, b, self.rings.within(a, b))
            if r is None:
                raise BaselineError(f"NCCL tree: no route through switches from {a!r} to "
                                    f"{b!r}; the tree needs links both ways")
            self.fabric.use(r)
            self.cache[(a, b)] = r
        return r


def _trees(topology: Topology, rings: Rings) -> tuple[list[NcclTree], _Router]:
    """NCCL's trees with the BALANCED_TREE pattern where its routes exist, else with the
    TREE pattern (as NCCL falls back when its search finds no balanced tree)."""
    for balanced in (True, False):
        trees = nccl_trees(rings, balanced)
        route = _Router(topology, rings)
        try:
            for t in trees:
                for a, b in t.edges:
                    route(a, b)
                    route(b, a)
        except BaselineError:
            if balanced:
                continue
            raise
        return trees, route
    raise AssertionError("unreachable")


def tree_allreduce(topology: Topology, rings: Rings) -> Baseline:
    """NCCL's tree allreduce: every tree reduces up, then broadcasts down (pipelined)."""
    trees, route = _trees(topology, rings)
    count: dict[Node, int] = {}
    for t in trees:
        count[t.root] = count.get(t.root, 0) + 1
    k = lcm(count.values())
    rs, ag = PhaseDoc("reduce-scatter", k), PhaseDoc("allgather", k)
    for t in trees:
        m = k // count[t.root]
        rs.tree(t.root, [route(b, a) for a, b in t.edges], m)
        ag.tree(t.root, [route(a, b) for a, b in t.edges], m)
    label = _label(rings)
    doc = document(topology, "allreduce", [rs, ag], name="nccl-tree", label=label,
                   weights=count, overlap=True, options={"channels": len(rings.channels)})
    roots = ", ".join(f"{v} ({n})" for v, n in list(count.items())[:6])
    return Baseline("nccl-tree", label, "allreduce", doc,
                    [f"{len(count)} tree roots: {roots}{' …' if len(count) > 6 else ''}"])


def tree_rooted(topology: Topology, rings: Rings, collective: str, root: Node) -> Baseline:
    """Broadcast (out of ``root``) or reduce (into it) along NCCL's trees."""
    trees, route = _trees(topology, rings)
    phase = PhaseDoc(collective, len(trees))
    for t in trees:
        edges = _oriented(t, root)
        phase.tree(root, [route(a, b) if collective == "broadcast" else route(b, a)
                          for a, b in edges])
    label = _label(rings)
    doc = document(topology, collective, [phase], name="nccl-tree", label=label, root=root,
                   options={"channels": len(rings.channels)})
    return Baseline("nccl-tree", label, collective, doc)


def _label(rings: Rings) -> str:
    n = len(rings.channels)
    return f"NCCL double binary tree, {2 * n} tree{'s' if n else ''} over {len(rings.boxes)} box" \
        + ("es" if len(rings.boxes) != 1 else "")
