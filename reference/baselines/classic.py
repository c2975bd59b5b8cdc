"""The classic collective algorithms as tree schedules: direct, recursive doubling and
halving, Bruck, hierarchical.

Each algorithm is written as the trees its data follows (every root's shard, or
the root's data, reaches every GPU along one tree), the form of every collcert
schedule; step order is not part of the bandwidth model, so a tree's edges are
simply all its sends. Ranks are the topology's compute nodes in order.

- **direct** (all pairs): every root sends to (allgather, broadcast) or receives
  from (reduce-scatter, reduce) every GPU itself; any number of GPUs.
- **recursive** doubling (allgather: in step s GPU i sends all it holds to
  i xor 2^s) and halving (reduce-scatter: the same pairs, in reverse);
  allreduce is halving then doubling (Rabenseifner's algorithm). These need a
  power-of-two number of GPUs; broadcast and reduce use the binomial tree
  (relative rank i sends to i + 2^s), which does not.
- **bruck** (allgather only): in step s GPU i sends to i - 2^s (mod N) the
  blocks it holds, the last step only the N - 2^s still missing; any N.
- **hierarchical**: rings inside boxes and rings across boxes between GPUs of the
  same position (the NIC rail): a shard goes along its rail to every box, then
  around each box (allgather; reduce-scatter the reverse; allreduce both;
  broadcast and reduce from the root's rail). Needs at least two boxes of
  equal size.

Every hop between two GPUs takes the least used route through switches
(:class:`~.fabric.Fabric`); a hop that has none makes the algorithm inapplicable
(:class:`~.rings.BaselineError`, saying which).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import chain

from collcert.reference.model import Topology

from .document import PHASES, Baseline, PhaseDoc, document
from .fabric import Fabric, Node, Route, find_boxes
from .rings import BaselineError

Edges = list[tuple[int, int]]  # (sender rank, receiver rank) of one root's out-tree
TreeOf = Callable[[int], Edges]


class _Ranked:
    """Ranks, routes (one per ordered pair and phase) and the trees of one phase."""

    def __init__(self, topology: Topology, name: str) -> None:
        self.topology = topology
        self.name = name
        self.nodes = list(topology.compute_nodes)
        self.fabric = Fabric(topology)

    def phase(self, collective: str, roots: Sequence[int], out_tree: TreeOf) -> PhaseDoc:
        """Trees of ``roots``: ``out_tree(root)`` gives the edges of the root's out-tree;
        in-tree phases reverse them."""
        ph = PhaseDoc(collective, 1)
        out = collective in ("allgather", "broadcast")
        nodes = self.nodes
        self._first_sender_reaches(out, out_tree(roots[0]) if roots else [])
        trees = {r: out_tree(r) for r in roots}
        hops = dict.fromkeys(chain.from_iterable(trees.values()))  # (a, b), as first used
        pairs: dict[int, list[int]] = {}  # sender -> its receivers, as first used
        for a, b in hops:
            if out:
                pairs.setdefault(a, []).append(b)
            else:
                pairs.setdefault(b, []).append(a)
        route: dict[tuple[int, int], Route] = {}  # (a, b) -> the route its data takes
        for s, ds in pairs.items():  # one search per sender: routes to all its receivers
            found = self.fabric.routes(nodes[s], [nodes[d] for d in ds], use=True)
            for d in ds:
                if nodes[d] not in found:
                    raise BaselineError(f"no route through switches from "
                                        f"{nodes[s]!r} to {nodes[d]!r}")
            got = [found[nodes[d]][2] for d in ds]
            route.update(zip([(s, d) for d in ds] if out else [(d, s) for d in ds], got))
        walk = {h: ph.walk(route[h]) for h in hops}  # numbered as the trees first use them
        for r, edges in trees.items():
            ph.indexed(nodes[r], list(map(walk.__getitem__, edges)))
        return ph


    def _first_sender_reaches(self, out: bool, edges: Edges) -> None:
        """Refuse before the N trees are written (a torus: N² edges) when the phase's first
        sender reaches no receiver of the first tree: the error :meth:`phase` would raise
        (a route never passes a GPU, so whether one exists depends on nothing else)."""
        if not edges:
            return
        s = edges[0][0] if out else edges[0][1]
        ds = list(dict.fromkeys(b if out else a for a, b in edges if (a if out else b) == s))
        found = self.fabric.routes(self.nodes[s], [self.nodes[d] for d in ds])
        for d in ds:
            if self.nodes[d] not in found:
                raise BaselineError(f"no route through switches from "
                                    f"{self.nodes[s]!r} to {self.nodes[d]!r}")


def _build(topology: Topology, name: str, label: str, collective: str, root: Node | None,
           out_tree: TreeOf, rooted_tree: TreeOf | None = None) -> Baseline:
    ranked = _Ranked(topology, name)
    n = len(ranked.nodes)
    phases = []
    for coll in PHASES[collective]:
        if coll in ("broadcast", "reduce"):
            r = ranked.nodes.index(root)
            phases.append(ranked.phase(coll, [r], rooted_tree or out_tree))
        else:
            phases.append(ranked.phase(coll, list(range(n)), out_tree))
    doc = document(topology, collective, phases, name=name, label=label, root=root)
    return Baseline(name, label, collective, doc)


def direct(topology: Topology, collective: str, root: Node | None = None) -> Baseline:
    """All pairs: every root's data goes straight to every GPU."""
    n = topology.num_compute
    return _build(topology, "direct", "direct (all pairs)", collective, root,
                  lambda r: [(r, v) for v in range(n) if v != r])


def recursive(topology: Topology, collective: str, root: Node | None = None) -> Baseline:
    """Recursive doubling / halving (allreduce: Rabenseifner); binomial trees for
    broadcast and reduce."""
    n = topology.num_compute
    if collective not in ("broadcast", "reduce") and n & (n - 1):
        raise BaselineError(f"recursive doubling/halving needs a power-of-two number of "
                            f"GPUs; this topology has {n} (Bruck's allgather does not)")

    def doubling(r: int) -> Edges:  # step s: the 2^s holders w, (w ^ r) < 2^s, ascending
        return [(w, w ^ (1 << s)) for s in range(n.bit_length() - 1)
                for w in range(r >> s << s, (r >> s << s) + (1 << s))]

    def binomial(r: int) -> Edges:
        out, s = [], 1
        while s < n:
            out += [((r + i) % n, (r + i + s) % n) for i in range(s) if i + s < n]
            s <<= 1
        return out

    label = {"allgather": "recursive doubling", "reduce-scatter": "recursive halving",
             "allreduce": "recursive halving + doubling (Rabenseifner)"}.get(
                 collective, "binomial tree")
    return _build(topology, "recursive", label, collective, root, doubling, binomial)


def bruck(topology: Topology, collective: str, root: Node | None = None) -> Baseline:
    """Bruck's allgather: any number of GPUs, ⌈log2 N⌉ steps."""
    if collective != "allgather":
        raise BaselineError("Bruck's algorithm is an allgather")
    n = topology.num_compute

    def tree(r: int) -> Edges:
        out, s = [], 1
        while s < n:  # holders at distance d < s send to distance d + s
            out += [((r - d) % n, (r - d - s) % n) for d in range(min(s, n - s))]
            s <<= 1
        return out

    return _build(topology, "bruck", "Bruck", collective, root, tree)


def hierarchical(topology: Topology, collective: str, root: Node | None = None) -> Baseline:
    """Rings across boxes along each rail, then rings inside every box."""
    boxes = find_boxes(topology)
    size = len(boxes[0])
    if len(boxes) < 2 or any(len(b) != size for b in boxes):
        raise BaselineError(f"hierarchical needs at least two boxes of equal size; this "
                            f"topology has {len(boxes)} box(es) of "
                            f"{sorted({len(b) for b in boxes})} GPUs")
    nodes = list(topology.compute_nodes)
    rank = {v: i for i, v in enumerate(nodes)}
    grid = [[rank[v] for v in box] for box in boxes]  # grid[box][position]
    where = {grid[b][p]: (b, p) for b in range(len(boxes)) for p in range(size)}
    nb = len(boxes)

    def tree(r: int) -> Edges:
        b0, p0 = where[r]
        out = [(grid[(b0 + i) % nb][p0], grid[(b0 + i + 1) % nb][p0]) for i in range(nb - 1)]
        for b in range(nb):
            out += [(grid[b][(p0 + i) % size], grid[b][(p0 + i + 1) % size])
                    for i in range(size - 1)]
        return out

    return _build(topology, "hierarchical", f"hierarchical ({nb} boxes × {size})",
                  collective, root, tree)
