"""Checker 5, the paths of a tree: walks in G, switches that copy and add, and their loads.

A tree edge (u, v) of the switch-free graph G* is carried by a *path*, a walk in G
from u to v whose inner nodes are switches (docs/schedule-format.md). Switches
may do more than forward, as the topology declares (docs/topology.md):

* a switch that **copies** (``multicast_switches``, and ``reducing_switches``,
  which copy too: NVLS and SHARP return their sums by multicast) may send the
  data of an out-tree that reaches it once on several links: a path of the
  out-tree may *start* at it (Zhao et al. 2026, §5.6);
* a switch that **adds** (``reducing_switches``) may add streams of an in-tree
  that reach it on several links into one: a path of the in-tree may *end* at it,
  its stream added into the stream of another path through it. A multicast switch
  aggregates in reduce-scatter and reduce trees too, as ForestColl's §5.6 post-
  processing writes them (Zhao et al. 2026: "in-network multicast/aggregation";
  the optimum of those collectives holds for any schedule, docs/in-network.md),
  but not in an allreduce whose phases overlap: there a multicast switch only
  copies, as in the in-network model of allreduce (docs/in-network.md);
* a compute node's own data may make a round trip through the network (an edge
  with ``src`` = ``dst``, a *self-edge*: NCCL's NVLS reads each GPU's share
  through the switch, ``multimem.ld_reduce``, and writes the sum to every GPU
  including the writer, ``multimem.st``). A self-edge is not a G* edge and adds
  nothing to the tree's shape; it only loads its links. Its path starts at the
  node (in-tree: it ends there or at a switch that adds) or ends there
  (out-tree: it starts there or at a switch that copies);
* a switch that adds all the data and multicasts the sum (SHARP, NVLS) is written
  with the root at a compute node r: the in-tree adds at the switch and brings the
  sum to r, the out-tree sends it from r through the switch, which copies it: each
  link carries what it carries when the switch itself holds the sum;
* an **NVLS switch** (``nvls_switches``) adds and copies only as NVLink SHARP runs
  (:func:`nvls_rules`): in a tree where paths end (in-tree) or start (out-tree) at
  it, those are single links from (to) member GPUs (compute nodes linked to it both
  ways), exactly one path runs through it, ``[x, w, g]`` between members, and the
  GPU that issues the load-reduce (g, in-trees) sends its own share up, the one that
  issues the store (x, out-trees) receives its copy: a self-edge or its own path.

Every path must be fed from the root (:func:`check_paths`): the paths run from the
root outwards (an in-tree: from the root backwards), a path once its free end holds
the data; one that never runs is a cyclic dependency and is rejected. A switch
with a ``reduction_rates`` entry outputs one stream per in-tree in which it adds
(:func:`added_at`): the schedule's time is at least that load over its rate.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from itertools import chain

from ..model import Link, Node, Topo, Verdict
from .trees import Edge, Tree


def copying(topo: Topo) -> frozenset[Node]:
    """The switches that may copy a stream onto several links."""
    return topo.multicast | topo.reducing


class PlainPaths:
    """The common case of :func:`check_paths`, fast: a tree whose every path is a
    walk in G from its edge's src to its dst through switches only (no multicast
    start). Each distinct edge object is judged once (compact schedules share them
    between trees) and the trees using it are counted per amount, then its load is
    spread over its links."""

    def __init__(self, topo: Topo) -> None:
        self.topo = topo
        self.good: set[int] = set()  # ids of the edges judged plain
        self.bad: set[int] = set()
        self.count: dict[int, Counter[int]] = {}  # amount -> trees using each edge id
        self.first: dict[int, None] = {}  # edge ids in the order they were first booked
        # (kept once there are two amounts; with one, its counter has that order)
        self.edge: dict[int, Edge] = {}

    def _judge(self, edges: list[Edge], ids: list[int]) -> None:
        """Judge the edges not judged yet: is the path a walk in G from the edge's src to
        its dst with only switches inside? All at once when they all are (the links and
        inner nodes looked up in C), else one by one."""
        good, bad = self.good, self.bad
        new = {i: e for e, i in zip(edges, ids) if i not in good and i not in bad}
        self.edge.update(new)
        paths = [e.path for e in new.values()]
        switches = self.topo.switch_set.issuperset
        if min(map(len, paths), default=2) >= 2 \
                and [p[0] for p in paths] == [e.src for e in new.values()] \
                and [p[-1] for p in paths] == [e.dst for e in new.values()] \
                and all(map(self.topo.cap.__contains__, chain.from_iterable(map(_hops, paths)))) \
                and switches(chain.from_iterable(p[1:-1] for p in paths)):
            self.good.update(new)
            return
        has_link = self.topo.cap.__contains__
        for i, e in new.items():
            p = e.path
            plain = (len(p) >= 2 and p[0] == e.src and p[-1] == e.dst
                     and all(map(has_link, zip(p, p[1:]))) and switches(p[1:-1]))
            (self.good if plain else self.bad).add(i)

    def add(self, tree: Tree, amount: int) -> bool:
        """Book the tree's loads if all its paths are plain (else book nothing: False)."""
        ids = list(map(id, tree.edges))
        if not self.good.issuperset(ids):
            self._judge(tree.edges, ids)
            if not self.good.issuperset(ids):
                return False
        counter = self.count.get(amount)
        if counter is None:
            if len(self.count) == 1:  # a second amount: keep the order of first booking
                self.first = dict.fromkeys(next(iter(self.count.values())))
            counter = self.count[amount] = Counter()
        if len(self.count) > 1:  # (with one amount its counter keeps that order)
            self.first.update(dict.fromkeys(ids))
        counter.update(ids)
        return True

    def loads(self, load: dict[Link, int]) -> None:
        """Add every booked edge's data to the links of its path (in the order the edges
        were first booked: the first busiest link named is the same as link by link)."""
        order: Mapping[int, object] = self.first
        if len(self.count) == 1:
            order = next(iter(self.count.values()))
        total = dict.fromkeys(order, 0)  # edge id -> its data, over all trees
        for per_tree, counter in self.count.items():
            for i, times in counter.items():
                total[i] += per_tree * times
        paths: dict[int, list[list[Node]]] = {}  # data -> the paths carrying that much
        edge = self.edge
        for i, amount in total.items():
            paths.setdefault(amount, []).append(edge[i].path)
        hops: dict[Link, int] = {}
        for amount, same in paths.items():  # the links counted in C, then weighed
            for h, times in Counter(chain.from_iterable(map(_hops, same))).items():
                hops[h] = hops.get(h, 0) + amount * times
        if len(paths) > 1:  # the links in the order the booked edges first reach them
            hops = {h: hops[h] for h in dict.fromkeys(
                chain.from_iterable(_hops(edge[i].path) for i in total))}
        for h, amount in hops.items():
            load[h] = load.get(h, 0) + amount


def _hops(path: list[Node]) -> zip[tuple[Node, Node]]:
    return zip(path, path[1:])


def _walk_ok(topo: Topo, tree: Tree, e: Edge, out: bool, verdict: Verdict) -> bool:
    """The path is a walk in G through switches, with its fixed end where it must be."""
    p = e.path
    if len(p) < 2:
        verdict.fail(f"{tree.label}: edge {e.src!r} -> {e.dst!r} has a path of one node")
        return False
    good = True
    for h in zip(p, p[1:]):
        if h not in topo.cap:
            verdict.fail(f"{tree.label}: edge {e.src!r} -> {e.dst!r}: path hop {h[0]!r} -> "
                         f"{h[1]!r} is not a link of the topology")
            good = False
    inner = [w for w in p[1:-1] if w not in topo.switch_set]
    if inner:
        verdict.fail(f"{tree.label}: edge {e.src!r} -> {e.dst!r}: path passes through "
                     f"compute node {inner[0]!r}; only switches may sit inside a path")
        good = False
    fixed_end, want_fixed = (p[-1], e.dst) if out else (p[0], e.src)
    if fixed_end != want_fixed:
        verdict.fail(f"{tree.label}: edge {e.src!r} -> {e.dst!r}: path "
                     f"{'ends' if out else 'starts'} at {fixed_end!r}, not at {want_fixed!r}")
        good = False
    return good


def adding(topo: Topo, overlap: bool) -> frozenset[Node]:
    """The switches that may add an in-tree's streams (see the module docstring)."""
    return topo.reducing if overlap else topo.reducing | topo.multicast


def check_paths(topo: Topo, tree: Tree, verdict: Verdict, load: dict[Link, int], amount: int,
                overlap: bool = False) -> None:
    """Every path is a walk in G with switch interiors, starting (out-trees) at its src or
    at a switch that copies, ending (in-trees) at its dst or at a switch that adds, and
    fed from the root; add ``amount`` per traversal. ``overlap``: the tree is part of an
    allreduce whose phases overlap."""
    out = tree.direction == "out"
    free_ok = copying(topo) if out else adding(topo, overlap)
    pending: list[Edge] = []
    grounded: list[Edge] = []
    for e in tree.edges:
        if not _walk_ok(topo, tree, e, out, verdict):
            continue
        p = e.path
        for h in zip(p, p[1:]):
            load[h] = load.get(h, 0) + amount
        free_end, want_free = (p[0], e.src) if out else (p[-1], e.dst)
        if free_end == want_free:
            grounded.append(e)
        elif free_end in free_ok:
            pending.append(e)
        else:
            verdict.fail(f"{tree.label}: edge {e.src!r} -> {e.dst!r}: path "
                         f"{'starts' if out else 'ends'} at {free_end!r}, which is neither "
                         f"{want_free!r} nor a "
                         + ("multicast switch (a switch that copies: the topology's "
                            "multicast_switches or reducing_switches)" if out else
                            "reducing switch (a switch that adds: the topology's "
                            "reducing_switches" + ("" if overlap else
                                                   ", or multicast_switches, which "
                                                   "aggregate in reduce-scatter and reduce")
                            + ")"))
    if pending:
        _fed(topo, tree, verdict, grounded + pending, out)
        nvls_rules(topo, tree, verdict, {e.path[0] if out else e.path[-1] for e in pending})


def nvls_rules(topo: Topo, tree: Tree, verdict: Verdict, acting: set[Node]) -> None:
    """The NVLS switches among ``acting`` (where this tree's paths start, out-trees, or
    end, in-trees) act as NVLink SHARP does (module docstring)."""
    out = tree.direction == "out"
    for w in sorted(acting & topo.nvls, key=str):
        why = _nvls_why(topo, tree, w, out)
        if why:
            verdict.fail(f"{tree.label}: NVLS switch {w!r} {'copies' if out else 'adds'} "
                         "here, which NVLink SHARP does only for one member GPU "
                         f"(nvls_switches): {why}")


def _member(topo: Topo, w: Node, x: Node) -> bool:
    return x in topo.compute_set and (x, w) in topo.cap and (w, x) in topo.cap


def _nvls_why(topo: Topo, tree: Tree, w: Node, out: bool) -> str:
    """Why the tree's use of NVLS switch ``w`` is not one load-reduce (in-tree) or one
    multicast store (out-tree) issued by a member GPU, or ``""``."""
    ends = [tuple(e.path) for e in tree.edges if e.path[0 if out else -1] == w]
    through = [tuple(e.path) for e in tree.edges if w in e.path[1:-1]]
    bad = [p for p in ends if len(p) != 2 or not _member(topo, w, p[1 if out else 0])]
    if bad:
        return f"its path {list(bad[0])} is not a single link {'to' if out else 'from'} a member GPU"
    if len(through) != 1 or len(through[0]) != 3 \
            or not all(_member(topo, w, x) for x in through[0][::2]):
        return (f"the {'store' if out else 'load-reduce'} needs exactly one path through it, "
                f"a member GPU -> {w!r} -> a member GPU; this tree has "
                + (f"{len(through)}" if len(through) != 1 else f"{list(through[0])}"))
    issuer = through[0][0 if out else -1]
    if through[0][0] == through[0][-1] or ((w, issuer) if out else (issuer, w)) in ends:
        return ""
    return f"its issuer {issuer!r} " + (
        "gets no copy: the store writes every member, the issuer too (a self-edge)" if out
        else "sends no share of its own: the load-reduce reads every member, the issuer "
             "too (a self-edge)")


def _fed(topo: Topo, tree: Tree, verdict: Verdict, edges: list[Edge], out: bool) -> None:
    """Follow the data itself from the root. A path runs once its free end holds the
    tree's data (for an in-tree: once its end can pass data on to the root), and then
    every other node on it does too. A path that never runs waits, through the switches
    that copy or add, on its own output: a cyclic dependency."""
    starts: dict[Node, list[Edge]] = {}
    for e in edges:
        starts.setdefault(e.path[0] if out else e.path[-1], []).append(e)
    holders = {tree.root}
    stack = [tree.root]
    while stack:
        for e in starts.pop(stack.pop(), []):
            for w in e.path[1:] if out else e.path[:-1]:
                if w not in holders:
                    holders.add(w)
                    stack.append(w)
    kind = "multicast switch" if out else "reducing switch"
    for w, never in starts.items():
        for e in never:
            if w in topo.switch_set:
                verdict.fail(f"{tree.label}: edge {e.src!r} -> {e.dst!r}: path "
                             f"{'starts' if out else 'ends'} at {kind} {w!r}, but "
                             f"no other path of this tree {'brings' if out else 'takes'} the "
                             f"tree's data {'to' if out else 'from'} {w!r} "
                             f"{'from' if out else 'to'} the root (a cyclic dependency)")
            else:
                verdict.fail(f"{tree.label}: edge {e.src!r} -> {e.dst!r}: {w!r} never "
                             f"{'gets' if out else 'passes on'} the tree's data: the paths "
                             f"{'into' if out else 'out of'} it start from switches "
                             f"fed only through {w!r} itself (a cyclic dependency)")


def added_at(topo: Topo, tree: Tree) -> set[Node]:
    """The switches that add in an in-tree: those a path ends at (not its dst)."""
    if tree.direction != "in":
        return set()
    return {e.path[-1] for e in tree.edges
            if e.path and e.path[-1] != e.dst and e.path[-1] in topo.switch_set}
