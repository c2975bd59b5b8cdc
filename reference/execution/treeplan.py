"""Execution plans from tree schedules (``collcert-schedule/1``).

Each tree carries ``multiplicity / k`` of its root's shard (docs/schedule-format.md):
the shard is cut into ``k`` parts (``lcm`` of the phases' k for allreduce) and a
root's trees take consecutive parts in file order. The part travels along the
tree's edges in dependency order:

* out-trees (allgather, broadcast, the allgather phase of allreduce): the root
  sends its part to its children; a node forwards only what it has received
  (edges in breadth-first order from the root);
* in-trees (reduce-scatter, reduce, the reduce-scatter phase): a node adds what
  each child sends to its own contribution and sends the partial sum to its
  parent once every child has delivered (edges in topological order from the
  leaves); the root's sum lands in its output.

The plan is built from what the schedule says, not from what it should say: a
tree that misses a node, a cycle, or multiplicities that do not sum to k give
a plan whose run produces wrong data, and :attr:`Plan.segments` tells which
root's shard and which tree the missing data belongs to. Only what cannot be
interpreted at all (unknown nodes, missing keys) raises ``ScheduleError``.

:func:`plan_from_schedule` reads a schedule file; the pieces it builds with are
also what :mod:`.msccl_allreduce` builds the LP (5) allreduce with, from trees
it already holds: :class:`Ranks` (node names to ranks), :func:`tree_plan` (the
empty plan of a collective over given shards) and :class:`TreeBuilder` (the
operations of one tree at a time).
"""

from __future__ import annotations

import math
from collections import deque
from fractions import Fraction
from typing import Any

from ..model import ScheduleError
from .execplan import Op, Plan, Region, Segment, Spec

PHASES = {
    "allgather": ["allgather"],
    "reduce-scatter": ["reduce-scatter"],
    "broadcast": ["broadcast"],
    "reduce": ["reduce"],
    "allreduce": ["reduce-scatter", "allgather"],
}
OUT = ("allgather", "broadcast")
ROOTED = ("broadcast", "reduce")


def _int(value: Any, what: str, least: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise ScheduleError(f"{what} must be an integer ≥ {least}, got {value!r}")
    return value


class Ranks:
    """The ranks of a schedule's compute nodes: rank i is ``nodes[i]``, named
    ``str(nodes[i])`` (``names``). Calling it maps a node to its rank, or raises
    ScheduleError naming ``where`` for a node that is not one of them."""

    def __init__(self, nodes: list[Any]) -> None:
        self.names = [str(n) for n in nodes]
        self.index = {n: i for i, n in enumerate(self.names)}
        if len(self.index) != len(nodes):
            raise ScheduleError("compute_nodes lists a node twice")

    def __call__(self, node: Any, where: str) -> int:
        r = self.index.get(str(node))
        if r is None:
            raise ScheduleError(f"{where}: {node!r} is not one of the schedule's compute_nodes")
        return r


# --------------------------------------------------------------------------- #
# reading a schedule
# --------------------------------------------------------------------------- #
def plan_from_schedule(doc: Any, origin: str = "schedule") -> Plan:
    """The execution plan of a ``collcert-schedule/1`` dict."""
    coll, rank, phases, root = _header(doc, origin)
    ks = [_int(p.get("k"), f"{origin}: phase {i + 1} k") for i, p in enumerate(phases)]
    shards = _shards(coll, root, math.lcm(*ks), _weights(doc, coll, rank, origin))
    plan = tree_plan(coll, shards, root, str(doc.get("topology_name") or origin), rank.names)
    builder = TreeBuilder(plan)
    for ph, (phase, k) in enumerate(zip(phases, ks)):
        _add_phase(builder, origin, ph, phase, k, rank, root)
    plan.validate()
    return plan


def _header(doc: Any, origin: str) -> tuple[str, Ranks, list[dict[str, Any]], int | None]:
    """The collective, the ranks, the phases and the root (broadcast, reduce) of a
    schedule, each checked for what the plan needs."""
    if not isinstance(doc, dict):
        raise ScheduleError(f"{origin}: a schedule is a JSON object")
    coll = doc.get("collective")
    if coll not in PHASES:
        raise ScheduleError(f"{origin}: collective {coll!r} is not one of {', '.join(PHASES)}")
    nodes = doc.get("compute_nodes")
    if not isinstance(nodes, list) or len(nodes) < 2:
        raise ScheduleError(f"{origin}: compute_nodes must list at least two nodes")
    rank = Ranks(nodes)
    phases = doc.get("phases")
    if not isinstance(phases, list) or [p.get("collective") if isinstance(p, dict) else None
                                        for p in phases] != PHASES[coll]:
        raise ScheduleError(f"{origin}: a {coll} schedule has the phases "
                            f"{PHASES[coll]}; this one has "
                            f"{[p.get('collective') for p in phases if isinstance(p, dict)]}"
                            if isinstance(phases, list) else f"{origin}: phases is missing")
    root = rank(doc.get("root"), f"{origin}: root") if coll in ROOTED else None
    return coll, rank, phases, root


def _weights(doc: dict[str, Any], coll: str, rank: Ranks, origin: str) -> list[int]:
    """Each rank's shard size in parts of the least whole numbers in the ratio of the
    schedule's ``weights`` (non-uniform allgather); all 1 without weights, and for
    broadcast and reduce, whose data is the root's alone."""
    raw_w = doc.get("weights")
    if raw_w is None or coll in ROOTED:
        return [1] * len(rank.names)
    if not isinstance(raw_w, dict):
        raise ScheduleError(f"{origin}: weights must be an object {{node: \"p/q\"}}")
    try:
        fr = [Fraction(str(raw_w[name])) for name in rank.names]
    except (KeyError, ValueError, ZeroDivisionError):
        raise ScheduleError(f"{origin}: weights must give every compute node a number "
                            "such as \"1\" or \"3/2\"") from None
    if any(w < 0 for w in fr) or not any(fr):
        raise ScheduleError(f"{origin}: weights must be ≥ 0, not all 0 (a node of "
                            "weight 0 roots no trees)")
    den = math.lcm(*(w.denominator for w in fr))
    ints = [int(w * den) for w in fr]
    g = math.gcd(*ints)
    return [w // g for w in ints]


def _shards(coll: str, root: int | None, parts: int, weights: list[int],
            ) -> list[tuple[int, int]]:
    """(offset, cells) of every rank's shard, ``parts`` cells per unit of weight, end
    to end; broadcast and reduce: the root's ``parts`` cells, nothing elsewhere."""
    if coll in ROOTED:
        assert root is not None
        return [(0, parts) if r == root else (0, 0) for r in range(len(weights))]
    shards, off = [], 0
    for w in weights:
        shards.append((off, w * parts))
        off += w * parts
    return shards


def _add_phase(builder: TreeBuilder, origin: str, ph: int, phase: dict[str, Any], k: int,
               rank: Ranks, root: int | None) -> None:
    """Every tree of phase ``ph``: each root's trees take consecutive parts of its shard,
    ``multiplicity`` of ``k`` each; what does not add up is a problem or a note."""
    plan = builder.plan
    shards = plan.spec.shards
    trees = phase.get("trees")
    if not isinstance(trees, list):
        raise ScheduleError(f"{origin}: phase {ph + 1} has no list of trees")
    used: dict[int, int] = {}
    for t, tree in enumerate(trees):
        r, m, pairs = _read_tree(tree, phase, f"{origin}: phase {ph + 1} tree {t}", rank)
        if root is not None and r != root:
            # a wrong schedule, not an unreadable one: the tree carries no data of the
            # root, whose part then reaches no rank (the run names it, exit 1)
            plan.problems.append(f"phase {ph + 1}: tree {t} is rooted at {plan.label(r)}, "
                                 f"not at the {plan.spec.collective} root {plan.label(root)}: "
                                 "it carries nothing")
            continue
        start = used.get(r, 0)
        used[r] = start + m
        part = shards[r][1] // k
        lo, hi = start * part, min(start + m, k) * part
        label = f"tree #{tree.get('index', t)} (multiplicity {m} of k = {k})"
        if start + m > k:
            plan.problems.append(
                f"phase {ph + 1}: the multiplicities of {plan.label(r)}'s trees sum to "
                f"more than k = {k} (at least {start + m}): {label} would carry "
                f"{min(m, start + m - k)}/{k} of the shard beyond its end")
        if hi > lo:
            builder.tree(ph, phase["collective"], t, r, label, pairs, shards[r][0] + lo, hi - lo)
    for r in ([root] if root is not None else range(plan.nranks)):
        assert r is not None
        if used.get(r, 0) < k and shards[r][1]:
            plan.notes.append(f"phase {ph + 1}: the trees of {plan.label(r)} carry "
                              f"{used.get(r, 0)}/{k} of its shard")


def _read_tree(tree: Any, phase: dict[str, Any], where: str, rank: Ranks,
               ) -> tuple[int, int, list[tuple[int, int]]]:
    """A tree's root, multiplicity and edges as rank pairs (a compact schedule's edges
    are indices into the phase's walks)."""
    if not isinstance(tree, dict):
        raise ScheduleError(f"{where} is not an object")
    r = rank(tree.get("root"), f"{where} root")
    m = _int(tree.get("multiplicity"), f"{where} multiplicity")
    want = "out" if phase["collective"] in OUT else "in"
    direction = tree.get("direction", want)
    if direction != want:
        raise ScheduleError(f"{where}: direction {direction!r}, but a "
                            f"{phase['collective']} phase has {want}-trees")
    edges = tree.get("edges")
    if not isinstance(edges, list):
        raise ScheduleError(f"{where} has no list of edges")
    walks = phase.get("walks")
    pairs = []
    for j, e in enumerate(edges):
        if isinstance(walks, list) and type(e) is int:  # compact trees: walk indices
            if not 0 <= e < len(walks):
                raise ScheduleError(f"{where} edge {j}: walk {e} is not one of the "
                                    f"phase's {len(walks)} walks")
            e = walks[e]
        if not isinstance(e, dict):
            raise ScheduleError(f"{where} edge {j} is not an object (or, in a compact "
                                "schedule, an index into the phase's walks)")
        pairs.append((rank(e.get("src"), f"{where} edge {j} src"),
                      rank(e.get("dst"), f"{where} edge {j} dst")))
    return r, m, pairs


# --------------------------------------------------------------------------- #
# building a plan from trees
# --------------------------------------------------------------------------- #
def collective_spec(coll: str, root: int | None, shards: list[tuple[int, int]]) -> Spec:
    """Where the data of ``coll`` lives when rank r's shard is the cells ``shards[r]``
    = (offset, length) of the global data (broadcast, reduce: ``root``'s alone)."""
    n = len(shards)
    total = sum(size for _, size in shards)
    spec = Spec(coll, n, total, root, shards)
    for r in range(n):
        off, size = shards[r]
        if coll == "allgather":
            spec.inputs.append(("i", 0, off, size))
            spec.outputs.append(("o", 0, 0, total))
        elif coll == "reduce-scatter":
            spec.inputs.append(("i", 0, 0, total))
            spec.outputs.append(("o", 0, off, size))
        elif coll == "allreduce":
            spec.inputs.append(("i", 0, 0, total))
            spec.outputs.append(("o", 0, 0, total))
        elif coll == "broadcast":
            spec.inputs.append(("i", 0, 0, total if r == root else 0))
            spec.outputs.append(("o", 0, 0, total))
        else:  # reduce
            spec.inputs.append(("i", 0, 0, total))
            spec.outputs.append(("o", 0, 0, total if r == root else 0))
    return spec


def tree_plan(coll: str, shards: list[tuple[int, int]], root: int | None, name: str,
              labels: list[str]) -> Plan:
    """The plan of ``coll`` over ``shards`` (see :func:`collective_spec`) before any tree:
    input and output buffers of the spec's sizes, no scratch, no operations;
    :class:`TreeBuilder` adds the trees."""
    spec = collective_spec(coll, root, shards)
    buffers = [{"i": spec.inputs[r][3], "o": spec.outputs[r][3], "s": 0}
               for r in range(spec.nranks)]
    return Plan(spec, buffers, [], name=name, labels=labels)


class TreeBuilder:
    """Appends to a :func:`tree_plan` the operations of one tree at a time
    (:meth:`tree`), numbering messages in order and taking scratch space for
    partial sums as it goes."""

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self.coll = plan.spec.collective
        self.shards = plan.spec.shards
        self.msg = 0

    def _in(self, r: int, lo: int, n: int) -> Region:
        """Rank r's input holding global cells [lo, lo+n)."""
        if self.coll == "allgather":
            return Region("i", lo - self.shards[r][0], n)
        return Region("i", lo, n)

    def _out(self, r: int, lo: int, n: int) -> Region:
        if self.coll == "reduce-scatter":
            return Region("o", lo - self.shards[r][0], n)
        return Region("o", lo, n)

    def _scratch(self, r: int, n: int) -> Region:
        off = self.plan.buffers[r]["s"]
        self.plan.buffers[r]["s"] = off + n
        return Region("s", off, n)

    def _xfer(self, u: int, v: int, src: Region, dst: Region, red: Region | None,
              group: tuple[int, int], note: str) -> None:
        self.plan.ops.append(Op("send", u, v, src=src, msg=self.msg, group=group, note=note))
        self.plan.ops.append(Op("recv", v, u, dst=dst, red=red, msg=self.msg, group=group,
                                note=note))
        self.msg += 1

    def tree(self, ph: int, coll: str, t: int, root: int, label: str,
             edges: list[tuple[int, int]], lo: int, n: int) -> None:
        """Tree ``t`` of phase ``ph`` (a ``coll`` phase: out-trees for allgather and
        broadcast, in-trees otherwise), rooted at rank ``root``, with ``edges`` as rank
        pairs in the direction data moves, carrying global cells [lo, lo + n);
        ``label`` names it in notes and in its :class:`Segment`."""
        group = (ph, t)
        note = f"{label} of {self.plan.label(root)}"
        children: dict[int, list[int]] = {}
        edges = [(u, v) for u, v in edges if u != v]  # a self-edge (a GPU's own share through
        for u, v in edges:                            # a switch and back) moves nothing
            children.setdefault(u, []).append(v)      # between ranks
        if coll in OUT:
            covered = self._out_tree(root, children, edges, lo, n, group, note)
        else:
            covered = self._in_tree(root, children, lo, n, group, note)
        self.plan.segments.append(Segment(ph, coll, lo, lo + n, root, label, covered))

    def _out_tree(self, root: int, children: dict[int, list[int]],
                  edges: list[tuple[int, int]], lo: int, n: int, group: tuple[int, int],
                  note: str) -> frozenset[int]:
        """The root's cells down the tree, breadth first; the ranks they reach."""
        plan = self.plan
        # the root's copy: its input, or (allreduce) the sum the first phase left in o
        if self.coll == "allreduce":
            holder = {root: Region("o", lo, n)}
        else:
            holder = {root: self._in(root, lo, n)}
            plan.ops.append(Op("copy", root, src=holder[root], dst=self._out(root, lo, n),
                               group=group, note=note))
        queue = deque([root])
        while queue:
            u = queue.popleft()
            for v in children.get(u, []):
                dst = self._out(v, lo, n)
                self._xfer(u, v, holder[u], dst, None, group, note)
                if v not in holder:
                    holder[v] = dst
                    queue.append(v)
        stray = sorted({(u, v) for u, v in edges if u not in holder and u != v})
        if stray:
            u, v = stray[0]
            plan.notes.append(f"{note}: {len(stray)} edge(s) such as {plan.label(u)} -> "
                              f"{plan.label(v)} start at a node the tree never reaches; "
                              "they carry nothing")
        return frozenset(holder)

    def _in_tree(self, root: int, children: dict[int, list[int]], lo: int, n: int,
                 group: tuple[int, int], note: str) -> frozenset[int]:
        """Partial sums up the tree, leaves first; the ranks whose contributions reach
        the root."""
        plan = self.plan
        parents: dict[int, list[int]] = {}
        indeg: dict[int, int] = {}
        for u, vs in children.items():  # in-tree: data moves u -> v, toward the root
            for v in vs:
                parents.setdefault(u, []).append(v)
                indeg[v] = indeg.get(v, 0) + 1
        nodes = set(range(plan.nranks))
        acc: dict[int, Region] = {}
        ready = deque(sorted(x for x in nodes if indeg.get(x, 0) == 0))
        done: set[int] = set()
        while ready:
            u = ready.popleft()
            done.add(u)
            if u == root:
                continue
            src = acc.get(u) or self._in(u, lo, n)
            for v in parents.get(u, []):
                if v not in acc:
                    acc[v] = (self._out(v, lo, n) if v == root else self._scratch(v, n))
                    red = self._in(v, lo, n)
                else:
                    red = acc[v]
                self._xfer(u, v, src, acc[v], red, group, note)
                indeg[v] -= 1
                if indeg[v] == 0:
                    ready.append(v)
        if root not in acc:  # nothing reaches the root: its sum is its own part
            plan.ops.append(Op("copy", root, src=self._in(root, lo, n),
                               dst=self._out(root, lo, n), group=group, note=note))
        stuck = sorted(nodes - done)
        if stuck:
            plan.notes.append(f"{note}: rank(s) {', '.join(map(str, stuck[:8]))} wait on "
                              "each other (a cycle): they never send")
        return _reaching(root, done, parents)


def _reaching(root: int, done: set[int], parents: dict[int, list[int]]) -> frozenset[int]:
    """The ranks whose contributions reach the root: the executed edges (from the ranks
    in ``done``) walked backwards from it."""
    into: dict[int, list[int]] = {}
    for u in done:
        if u != root:
            for v in parents.get(u, []):
                into.setdefault(v, []).append(u)
    seen = {root}
    stack = [root]
    while stack:
        x = stack.pop()
        for y in into.get(x, []):
            if y not in seen:
                seen.add(y)
                stack.append(y)
    return frozenset(seen)
