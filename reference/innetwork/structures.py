"""Reduce-broadcast structures: the schedules of the in-network model, and their loads.

A *structure* generalises the MAC-BC network of Zhou & Sun 2026, Thm 2 (and the
reduce and broadcast trees of Zhao et al. 2026, App. G) to switches that add:

* a **reduce tree** into a root ρ: its nodes are ρ, every compute node, and any
  switches that add (SHARP or NVLS); each tree edge x → parent(x) is a *path* of
  links (through nodes that only forward). Streams meet only at tree nodes, so
  only compute nodes and switches that add do;
* a **broadcast tree** from ρ: its nodes are ρ, every compute node, and any
  switches that copy (SHARP, NVLS or multicast); each edge is a path.

ρ holds the whole sum: a compute node or a SHARP switch. An **NVLS switch** w
(:mod:`collcert.reference.model.capabilities`) is a tree node only the way
NVLink SHARP runs: its *members* are the compute nodes linked to it both ways;

* in the reduce tree its children are members, each by the single link x → w,
  and its parent is a member g by the single link w → g: g issues
  ``multimem.ld_reduce``, so g's own share also goes up g → w (one more use of
  that link, implied) and the sum comes down to g;
* in the broadcast tree its parent is a member g by the single link g → w and its
  children are members by single links w → x: g issues ``multimem.st``, which
  also writes g itself (one more use of w → g, implied).

Run pipelined (reduce a chunk along the first tree, broadcast it along the
second), a structure carries an allreduce at rate 1 and loads each link by the
number of its paths that use the link, plus the implied uses. A switch that adds
and is a node of the reduce tree performs one reduction: it outputs one stream
(the *reduction rate* of :mod:`collcert.reference.model.capabilities` counts
these). A schedule is a weighted set of structures; its rate is the total
weight, and it fits the topology when every link's load and every switch's
reductions stay within its capacity and rate.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ..model import Link, Node, Topology, TopologyError, fraction_str

Path = tuple[Node, ...]


@dataclass(frozen=True)
class Structure:
    """One reduce tree and one broadcast tree with the same root (see the module docstring).

    ``reduce``: paths, each from a tree node to its parent (child first); ``broadcast``:
    paths, each from a parent to a child."""

    root: Node
    reduce: tuple[Path, ...]
    broadcast: tuple[Path, ...]

    def usage(self, nvls: Collection[Node] = ()) -> dict[Link, int]:
        """How many of the structure's paths use each link, with the uses that the NVLS
        switches (``nvls``) among its tree nodes imply (the issuer's own share up, the
        store's copy down to the issuer: the module docstring)."""
        out: dict[Link, int] = {}
        for path in (*self.reduce, *self.broadcast):
            for e in zip(path, path[1:]):
                out[e] = out.get(e, 0) + 1
        for e in self.implied(nvls):
            out[e] = out.get(e, 0) + 1
        return out

    def implied(self, nvls: Collection[Node]) -> list[Link]:
        """The links an NVLS switch's issuer uses once more: g → w for a reduce-tree node w
        with parent g, w → g for a broadcast-tree node w with parent g."""
        if not nvls:
            return []
        out = [(p[1], p[0]) for p in self.reduce if p[0] in nvls and len(p) == 2]
        out += [(p[1], p[0]) for p in self.broadcast if p[-1] in nvls and len(p) == 2]
        return out

    def reductions(self, reducing: Iterable[Node]) -> set[Node]:
        """The reducing switches that add in this structure (nodes of its reduce tree)."""
        tree = {p[0] for p in self.reduce} | {p[-1] for p in self.reduce} | {self.root}
        return tree & set(reducing)

    def to_json(self) -> dict[str, Any]:
        return {"root": self.root, "reduce": [list(p) for p in self.reduce],
                "broadcast": [list(p) for p in self.broadcast]}

    def mapped(self, sigma: Mapping[Node, Node]) -> Structure:
        """The image of the structure under a node permutation (moved nodes only)."""
        def m(p: Path) -> Path:
            return tuple(sigma.get(v, v) for v in p)
        return Structure(sigma.get(self.root, self.root), tuple(map(m, self.reduce)),
                         tuple(map(m, self.broadcast)))


def merge_nodes(t: Topology) -> frozenset[Node]:
    """The nodes where streams may be added: compute nodes and switches that add."""
    return frozenset(t.compute_nodes) | t.reducing_switches


def copy_nodes(t: Topology) -> frozenset[Node]:
    """The nodes that may copy a stream: compute nodes, switches that add, multicast
    switches."""
    return merge_nodes(t) | t.multicast_switches


def root_nodes(t: Topology) -> frozenset[Node]:
    """The nodes that may hold a whole sum: compute nodes and SHARP switches."""
    return frozenset(t.compute_nodes) | t.sharp_switches


def members(t: Topology) -> dict[Node, frozenset[Node]]:
    """The member GPUs of each NVLS switch: compute nodes linked to it both ways."""
    out: dict[Node, set[Node]] = {w: set() for w in t.nvls_switches}
    for x, w in t.capacity:
        if w in out and t.is_compute(x) and (w, x) in t.capacity:
            out[w].add(x)
    return {w: frozenset(m) for w, m in out.items()}


def _nvls_ok(p: Path, inward: bool, member: Mapping[Node, frozenset[Node]]) -> str | None:
    """Why path ``p`` breaks an NVLS switch's rules (module docstring), or None."""
    for end in (p[0], p[-1]):
        if end in member:
            other = p[-1] if end == p[0] else p[0]
            if len(p) != 2 or other not in member[end]:
                return (f"{'reduce' if inward else 'broadcast'} path {p!r}: NVLS switch "
                        f"{end!r} is joined to its tree by single links to member GPUs only")
    return None


def check_structure(t: Topology, s: Structure) -> None:
    """Raise :class:`TopologyError` naming what is wrong when ``s`` is not a structure of
    ``t`` (its own checker is :mod:`collcert.certify.innetwork`; this guards the builders)."""
    if s.root not in root_nodes(t):
        raise TopologyError(f"structure root {s.root!r} neither computes nor holds sums")
    member = members(t)
    for kind, paths, allowed in (("reduce", s.reduce, merge_nodes(t)),
                                 ("broadcast", s.broadcast, copy_nodes(t))):
        parent: dict[Node, Node] = {}
        for p in paths:
            if len(p) < 2 or any(e not in t.capacity for e in zip(p, p[1:])):
                raise TopologyError(f"{kind} path {p!r} is not a path of links")
            child, up = (p[0], p[-1]) if kind == "reduce" else (p[-1], p[0])
            if child in parent or child == s.root or p[0] not in allowed \
                    or p[-1] not in allowed:
                raise TopologyError(f"{kind} path {p!r}: not a tree edge between tree nodes")
            why = _nvls_ok(p, kind == "reduce", member)
            if why:
                raise TopologyError(why)
            parent[child] = up
        for v in t.compute_nodes:
            seen = {v}
            while v != s.root:
                if v not in parent or parent[v] in seen:
                    raise TopologyError(f"{kind} tree of root {s.root!r} misses {v!r}")
                v = parent[v]
                seen.add(v)


def loads(t: Topology, weighted: Sequence[tuple[Structure, Fraction]],
          ) -> tuple[dict[Link, Fraction], dict[Node, Fraction]]:
    """(load per link, reductions per switch that adds) of a weighted set of structures."""
    link: dict[Link, Fraction] = {}
    red: dict[Node, Fraction] = {}
    for s, w in weighted:
        for e, k in s.usage(t.nvls_switches).items():
            link[e] = link.get(e, Fraction(0)) + w * k
        for v in s.reductions(t.reducing_switches):
            red[v] = red.get(v, Fraction(0)) + w
    return link, red


def fits(t: Topology, weighted: Sequence[tuple[Structure, Fraction]]) -> bool:
    """Whether the weighted structures stay within every capacity and reduction rate."""
    link, red = loads(t, weighted)
    return (all(x <= t.capacity[e] for e, x in link.items())
            and all(x <= t.reduction_rates[v] for v, x in red.items()
                    if v in t.reduction_rates))


def weighted_json(weighted: Sequence[tuple[Structure, Fraction]]) -> list[dict[str, Any]]:
    return [dict(s.to_json(), weight=fraction_str(w)) for s, w in weighted]
