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


def _int(value: Any, what: str, least: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise ScheduleError(f"{what} must be an integer ≥ {least}, got {value!r}")
    return value


class _Ranks:
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


def plan_from_schedule(doc: Any, origin: str = "schedule") -> Plan:
    """The execution plan of a ``collcert-schedule/1`` dict."""
    if not isinstance(doc, dict):
        raise ScheduleError(f"{origin}: a schedule is a JSON object")
    coll = doc.get("collective")
    if coll not in PHASES:
        raise ScheduleError(f"{origin}: collective {coll!r} is not one of {', '.join(PHASES)}")
    nodes = doc.get("compute_nodes")
    if not isinstance(nodes, list) or len(nodes) < 2:
        raise ScheduleError(f"{origin}: compute_nodes must list at least two nodes")
    rank = _Ranks(nodes)
    n = len(nodes)
    phases = doc.get("phases")
    if not isinstance(phases, list) or [p.get("collective") if isinstance(p, dict) else None
                                        for p in phases] != PHASES[coll]:
        raise ScheduleError(f"{origin}: a {coll} schedule has the phases "
                            f"{PHASES[coll]}; this one has "
                            f"{[p.get('collective') for p in phases if isinstance(p, dict)]}"
                            if isinstance(phases, list) else f"{origin}: phases is missing")
    root = None
    if coll in ("broadcast", "reduce"):
        root = rank(doc.get("root"), f"{origin}: root")
    ks = [_int(p.get("k"), f"{origin}: phase {i + 1} k") for i, p in enumerate(phases)]
    L = math.lcm(*ks)
    # shard sizes in units of L cells (non-uniform allgather: integer weights)
    weights = [1] * n
    raw_w = doc.get("weights")
    if raw_w is not None and coll != "broadcast" and coll != "reduce":
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
        weights = [w // g for w in ints]
    if coll in ("broadcast", "reduce"):
        assert root is not None
        shards = [(0, L) if r == root else (0, 0) for r in range(n)]
        total = L
    else:
        shards, off = [], 0
        for r in range(n):
            shards.append((off, weights[r] * L))
            off += weights[r] * L
        total = off
    spec = _spec(coll, n, total, root, shards)
    buffers: list[dict[str, int]] = [{} for _ in range(n)]
    for r in range(n):
        _, _, _, ilen = spec.inputs[r]
        _, _, _, olen = spec.outputs[r]
        buffers[r] = {"i": ilen if coll in ("allgather", "broadcast") else total,
                      "o": olen, "s": 0}
        if coll == "broadcast":
            buffers[r]["i"] = ilen
    plan = Plan(spec, buffers, [], name=str(doc.get("topology_name") or origin),
                labels=rank.names)
    builder = _Builder(plan, coll, shards)
    for ph, (phase, k) in enumerate(zip(phases, ks)):
        trees = phase.get("trees")
        if not isinstance(trees, list):
            raise ScheduleError(f"{origin}: phase {ph + 1} has no list of trees")
        used: dict[int, int] = {}
        for t, tree in enumerate(trees):
            where = f"{origin}: phase {ph + 1} tree {t}"
            if not isinstance(tree, dict):
                raise ScheduleError(f"{where} is not an object")
            r = rank(tree.get("root"), f"{where} root")
            m = _int(tree.get("multiplicity"), f"{where} multiplicity")
            direction = tree.get("direction", "out" if phase["collective"] in OUT else "in")
            want = "out" if phase["collective"] in OUT else "in"
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
            if root is not None and r != root:
                # a wrong schedule, not an unreadable one: the tree carries no data of the
                # root, whose part then reaches no rank (the run names it, exit 1)
                plan.problems.append(f"phase {ph + 1}: tree {t} is rooted at {plan.label(r)}, "
                                     f"not at the {coll} root {plan.label(root)}: it carries "
                                     "nothing")
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
                builder.tree(ph, phase["collective"], t, r, label, pairs,
                             shards[r][0] + lo, hi - lo)
        for r in ([root] if root is not None else range(n)):
            assert r is not None
            if used.get(r, 0) < k and shards[r][1]:
                plan.notes.append(f"phase {ph + 1}: the trees of {plan.label(r)} carry "
                                  f"{used.get(r, 0)}/{k} of its shard")
    plan.validate()
    return plan


def _spec(coll: str, n: int, total: int, root: int | None,
          shards: list[tuple[int, int]]) -> Spec:
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


class _Builder:
    def __init__(self, plan: Plan, coll: str, shards: list[tuple[int, int]]) -> None:
        self.plan = plan
        self.coll = coll
        self.shards = shards
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
        group = (ph, t)
        plan = self.plan
        note = f"{label} of {plan.label(root)}"
        children: dict[int, list[int]] = {}
        for u, v in edges:
            if u == v:
                plan.problems.append(f"{note}: edge {u} -> {v} is a loop")
                continue
            children.setdefault(u, []).append(v)
        if coll in OUT:
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
            covered = frozenset(holder)
            stray = sorted({(u, v) for u, v in edges if u not in holder and u != v})
            if stray:
                u, v = stray[0]
                plan.notes.append(f"{note}: {len(stray)} edge(s) such as {plan.label(u)} -> "
                                  f"{plan.label(v)} start at a node the tree never reaches; "
                                  "they carry nothing")
        else:
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
            # whose contributions reach the root: walk the executed edges backwards
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
            covered = frozenset(seen)
        plan.segments.append(Segment(ph, coll, lo, lo + n, root, label, covered))
