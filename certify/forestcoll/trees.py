"""Checker 4: packed trees in the switch-free graph G*.

Zhao & Krishnamurthy 2023, Thm 5 / Alg 1: a schedule of k unit trees per root is feasible in G*
when (a) each tree spans V_c and is an out-arborescence from its root (an
in-arborescence toward its root for reduce / reduce-scatter), (b) the
multiplicities of each root's trees sum to k, and (c) every G* edge (u, v)
is used by at most c*(u, v) unit trees (multiplicities counted), i.e. the
trees are edge-disjoint in the multigraph G*.

An edge from a node to itself (a *self-edge*: its own data through the network and
back, as NCCL's NVLS does) is no G* edge: it is left out here and checked as a path
(``schedule_paths``).

Arborescence test: every compute node but the root has exactly one edge
into it (out-tree; for an in-tree, exactly one edge out of it), the root has
none, and walking the edges from the root reaches every compute node; N − 1
edges with one parent each and full reachability leave no room for a cycle.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from operator import attrgetter, lt

from ..model import Link, Node, Topo, Verdict


@dataclass(slots=True)
class Edge:
    src: Node
    dst: Node
    path: list[Node]


@dataclass(slots=True)
class Tree:
    root: Node
    multiplicity: int
    direction: str  # "out" or "in"
    edges: list[Edge]
    label: str
    extra: dict[str, object] = field(default_factory=dict)


def check_shape(topo: Topo, tree: Tree, verdict: Verdict) -> bool:
    """Is ``tree`` an arborescence spanning all compute nodes (out from / in to its root)?"""
    if _spans(topo, tree):
        return True
    return _shape_reasons(topo, tree, verdict)


def _spans(topo: Topo, tree: Tree) -> bool:
    """The same test, fast, for a tree that passes it (False: it may fail, and
    :func:`_shape_reasons` says why): every edge joins two compute nodes, no self-edge,
    every compute node but the root is a child exactly once, and following parents from
    any node reaches the root (no cycle)."""
    edges = tree.edges
    kid, par = (_DST, _SRC) if tree.direction == "out" else (_SRC, _DST)
    kids, pars = list(map(kid, edges)), list(map(par, edges))
    root = tree.root
    at = dict(zip(kids, range(len(kids))))  # each child's edge
    if len(at) != len(kids) or len(kids) != topo.n - 1 or root in at \
            or not topo.compute_set.issuperset(kids) or not topo.compute_set.issuperset(pars):
        return False  # a self-edge, a child twice, a missing or foreign node: the slow way
    at[root] = -1
    if all(map(lt, map(at.__getitem__, pars), range(len(kids)))):
        return True  # every parent is the root or a child of an earlier edge: no cycle
    parent = dict(zip(kids, pars))
    reached = {root: True}  # True: reaches the root; False: on the walk being followed
    for v in kids:
        walk = []
        while v not in reached:
            reached[v] = False
            walk.append(v)
            v = parent[v]  # every compute node but the root has a parent
        if not reached[v]:
            return False  # a cycle
        for x in walk:
            reached[x] = True
    return True


_SRC, _DST = attrgetter("src"), attrgetter("dst")


def _shape_reasons(topo: Topo, tree: Tree, verdict: Verdict) -> bool:
    """:func:`check_shape` edge by edge, every failure said in ``verdict``."""
    ok = True
    parent: dict[Node, Node] = {}
    children: dict[Node, list[Node]] = {}
    out = tree.direction == "out"
    what = "receives" if out else "sends toward the root"
    for e in tree.edges:
        for end in (e.src, e.dst):
            if end not in topo.compute_set:
                verdict.fail(f"{tree.label}: edge {e.src!r} -> {e.dst!r} ends at {end!r}, "
                             "which is not a compute node (G* edges join compute nodes)")
                ok = False
        if e.src == e.dst:  # a self-edge: the node's own data through the network and
            continue        # back (schedule_paths); only its path is checked, not G*'s shape
        child, par = (e.dst, e.src) if out else (e.src, e.dst)
        if child == tree.root:
            verdict.fail(f"{tree.label}: the root {tree.root!r} "
                         f"{'receives from' if out else 'sends to'} {par!r}; "
                         f"a{'n out' if out else 'n in'}-tree has no edge "
                         f"{'into' if out else 'out of'} its root")
            ok = False
            continue
        if child in parent:
            verdict.fail(f"{tree.label}: compute node {child!r} {what} twice "
                         f"(from {parent[child]!r} and {par!r})" if out else
                         f"{tree.label}: compute node {child!r} sends twice "
                         f"(to {parent[child]!r} and {par!r})")
            ok = False
            continue
        parent[child] = par
        children.setdefault(par, []).append(child)
    if not ok:
        return False
    reached = {tree.root}
    stack = [tree.root]
    while stack:
        u = stack.pop()
        for w in children.get(u, ()):
            if w not in reached:
                reached.add(w)
                stack.append(w)
    missing = [c for c in topo.compute if c not in reached]
    if missing:
        names = ", ".join(repr(c) for c in missing[:6]) + (" …" if len(missing) > 6 else "")
        cyc = [c for c in missing if c in parent]
        why = " (their edges form a cycle cut off from the root)" if cyc else ""
        nodes = f"compute node{'s' if len(missing) > 1 else ''} {names}"
        if out:
            verdict.fail(f"{tree.label}: {nodes} never receive{'' if len(missing) > 1 else 's'}"
                         f" root {tree.root!r}'s data in this tree{why}")
        else:
            verdict.fail(f"{tree.label}: the data of {nodes} never reaches the root "
                         f"{tree.root!r} in this tree{why}")
        return False
    return True


def check_multiplicities(
    topo: Topo, trees: Sequence[Tree], k: int, roots: Sequence[Node], verdict: Verdict,
    what: str = "data",
) -> None:
    """The multiplicities of each root's trees sum to exactly k (and other roots have none)."""
    total: dict[Node, int] = {}
    for t in trees:
        total[t.root] = total.get(t.root, 0) + t.multiplicity
    for r in roots:
        got = total.get(r, 0)
        if got != k:
            frac = Fraction(got, k)
            verdict.fail(f"the trees of root {r!r} have multiplicities summing to {got}, not "
                         f"k = {k}: they carry {frac.numerator}/{frac.denominator} of its "
                         f"{what}" if frac.denominator != 1 else
                         f"the trees of root {r!r} have multiplicities summing to {got}, not "
                         f"k = {k}: they carry {frac.numerator} times its {what}")
    for r in total:
        if r not in roots:
            verdict.fail(f"{len([t for t in trees if t.root == r])} tree(s) have root {r!r}, "
                         "which is not a root of this collective")


def check_gstar_load(
    trees: Sequence[Tree], gstar: Mapping[Link, int], verdict: Verdict,
    weight: Mapping[Node, int] | None = None, den: int = 1,
) -> dict[Link, int]:
    """Unit trees per G* edge ≤ its capacity; returns the loads (over ``den``).

    A tree of root u stands for ``multiplicity · weight[u] / den`` unit trees
    of G* (weight 1, den 1 when its multiplicities count G* units directly;
    a weighted allgather writes multiplicities over a common k, see
    docs/schedule-format.md).
    """
    load: dict[Link, int] = {}
    for t in trees:
        units = t.multiplicity * (1 if weight is None else weight.get(t.root, 0))
        for e in t.edges:
            key = (e.src, e.dst)
            load[key] = load.get(key, 0) + units
    for key, used in load.items():
        cap = gstar.get(key, 0)
        if used > cap * den:
            over = Fraction(used - cap * den, den)
            verdict.fail(f"G* edge {key[0]!r} -> {key[1]!r} carries "
                         f"{_fs(Fraction(used, den))} unit trees but has capacity {cap} "
                         f"(over by {_fs(over)})")
    return load


def _fs(f: Fraction) -> str:
    return str(f.numerator) if f.denominator == 1 else f"{f.numerator}/{f.denominator}"
