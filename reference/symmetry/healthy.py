"""Near-symmetry from the file alone: the symmetric machine a topology is a changed copy of.

A degraded cluster usually arrives as a file (an imported NCCL topology, a
JSON written by a tool), not as ``--degrade`` options on a built-in machine.
:func:`restore` finds, from the topology M alone, a machine H of identical
boxes that M is a copy of with a few links changed (a NIC at half speed, a
failed cable), and lists the links that differ:

1. the boxes and the shared switches of M, and its classes of interchangeable
   boxes, as :mod:`.near` finds them (individualisation-refinement, each swap
   checked exactly on M);
2. the largest class must hold most boxes: its first box is the *model*; every
   other box B is mapped onto the model node by node, in node order (the order
   in which :mod:`.boxes` pairs the nodes of two boxes), nodes of one kind onto
   nodes of that kind, the shared switches fixed;
3. H is M with the links at every such box B replaced by the model's links,
   mapped into B (a link missing from M comes back, a link the model lacks
   goes);
4. H must have a box shift, found and verified exactly, link by link
   (:func:`.orbits.find_symmetry`); else there is no H.

Nothing here is trusted and no figure comes from H: the caller borrows a
schedule of a machine built from H and M (``forestcoll.symmetrize``,
``forestcoll.nearpack``: every link at most M's capacity), which is used only
when its *certified* optimum equals M's certified optimum, and ``collcert
check`` certifies the schedule on M, knowing nothing of H. A wrong guess only
costs the time of that attempt; then the general algorithms run (with their
estimate first). :class:`Restored` says what was found in words ("a 128-box
machine with 4 links different: b3.nic2 (every link, 4) at 25/2 instead of
25").

A *coincidental* near-symmetry (half the boxes changed, each in its own way)
is not called one: at most :data:`MAX_ODD_SHARE` of the boxes may differ from
the model and at most :data:`MAX_CHANGED_SHARE` of the links.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from ..model import Topology, TopologyError, fraction_str
from .near import box_classes
from .orbits import find_symmetry

Node = Hashable
Link = tuple[Node, Node]

MAX_ODD_SHARE = Fraction(1, 2)
"""Boxes that may differ from the model, at most (half: 64 of 128 DGX boxes)."""

MAX_CHANGED_SHARE = Fraction(1, 10)
"""Links that may differ between M and H, at most."""

MIN_COMPUTE = 16
"""Below this many compute nodes the general algorithms take seconds: not looked for."""


@dataclass
class Restored:
    """The outcome of :func:`restore`: ``healthy`` (H) and its verified box shift
    ``symmetry``, the ``changed`` links (M's capacity, H's; 0 = no such link), the
    box counts; or ``healthy`` None and the ``reason``."""

    healthy: Topology | None
    reason: str = ""
    symmetry: Any = None
    """The verified box shift of ``healthy`` (a :class:`Symmetry`)."""
    boxes: int = 0
    box_compute: int = 0
    box_nodes: int = 0
    shared: int = 0
    changed: list[tuple[Link, Fraction, Fraction]] = field(default_factory=list)
    odd_boxes: int = 0
    missing: dict[Node, str] = field(default_factory=dict)
    """Switches H adds (a box lacks them): their name -> "the box of Y: its counterpart of X"."""
    like: str = ""
    """Set by the caller: the name of a built-in machine whose boxes H's boxes match."""

    @property
    def found(self) -> bool:
        return self.healthy is not None

    def machine(self) -> str:
        """``"128-box DGX A100-like machine"`` or ``"128-box machine (8 compute nodes and
        9 switches a box, 2 shared switches)"``."""
        if self.like:
            return f"{self.boxes}-box {self.like}-like machine"
        return (f"{self.boxes}-box machine ({self.box_compute} compute nodes and "
                f"{self.box_nodes - self.box_compute} switches a box, {self.shared} shared "
                f"switch{'es' if self.shared != 1 else ''})")

    def describe(self, unit: str = "", most: int = 6) -> str:
        """What was found, in words (module docstring)."""
        if self.healthy is None:
            return f"not near-symmetric: {self.reason}"
        links: dict[Node, int] = {}
        for a, b in self.healthy.capacity:
            links[a] = links.get(a, 0) + 1
            links[b] = links.get(b, 0) + 1
        parts = _changes_in_words(self.changed, unit, links, self.missing)
        shown = "; ".join(parts[:most]) + (f"; … ({len(parts) - most} more)"
                                           if len(parts) > most else "")
        n = len(self.changed)
        what = self.machine()
        article = "an" if what.startswith(("8", "11-", "18")) else "a"
        return (f"near-symmetric: {article} {what} with {n} directed link"
                f"{'s' if n != 1 else ''} different in {self.odd_boxes} "
                f"box{'es' if self.odd_boxes != 1 else ''}: {shown}")


def _changes_in_words(changed: Sequence[tuple[Link, Fraction, Fraction]], unit: str,
                      links: Mapping[Node, int], missing: Mapping[Node, str]) -> list[str]:
    """One phrase per node all of whose links changed alike (``b3.nic2 (all 4 of its
    links) at 25/2 GB/s instead of 25``; a switch a box lacks: ``no counterpart of
    b0.nic2 in the box of b3.gpu0 (4 links)``), else one per link."""
    u = f" {unit}" if unit else ""

    def what(now: Fraction, was: Fraction) -> str:
        if not now:
            return f"missing (capacity {fraction_str(was)}{u} in the symmetric machine)"
        if not was:
            return f"at {fraction_str(now)}{u}, a link the symmetric machine lacks"
        return f"at {fraction_str(now)}{u} instead of {fraction_str(was)}"

    by_node: dict[Node, list[tuple[Link, Fraction, Fraction]]] = {}
    for item in changed:
        (a, b), _, _ = item
        by_node.setdefault(a, []).append(item)
        by_node.setdefault(b, []).append(item)
    done: set[Link] = set()
    out: list[str] = []
    for node, items in sorted(by_node.items(), key=lambda kv: -len(kv[1])):
        kinds = {(now, was) for _, now, was in items}
        if (len(items) != links.get(node) or len(kinds) != 1
                or any(e in done for e, _, _ in items)):
            continue
        now, was = next(iter(kinds))
        out.append(f"{missing[node]} missing ({len(items)} links)" if node in missing else
                   f"{node} (all {len(items)} of its links) {what(now, was)}")
        done.update(e for e, _, _ in items)
    for (a, b), now, was in changed:
        if (a, b) not in done:
            out.append(f"{a}>{b} {what(now, was)}")
    return out


def restore(t: Topology) -> Restored:
    """H for the topology ``t`` (module docstring), or the reason there is none."""
    if t.num_compute < MIN_COMPUTE:
        return Restored(None, f"fewer than {MIN_COMPUTE} compute nodes")
    got = box_classes(t)
    if got is None:
        return Restored(None, "no two compute nodes are interchangeable (no boxes found)")
    boxes, classes, shared = got
    if len(boxes) < 3:
        return Restored(None, f"{len(boxes)} box{'es' if len(boxes) != 1 else ''} found; "
                        "a near-symmetric machine needs at least 3")
    main = max(classes, key=len)
    odd = [b for cls in classes if cls is not main for b in cls]
    nc = t.num_compute
    held = sum(1 for box in main for v in box if v < nc)
    if held * 2 < nc:
        return Restored(None, f"the most common kind of box ({len(main)} alike, "
                        f"{held // len(main)} compute nodes each) holds {held} of {nc} "
                        "compute nodes, fewer than half")
    if len(main) < 2 or len(odd) > MAX_ODD_SHARE * len(boxes):
        return Restored(None, f"of {len(boxes)} boxes, {len(odd)} differ from the most common "
                        f"kind ({len(main)} alike); more than {MAX_ODD_SHARE} may not differ")
    model = main[0]
    try:
        h, missing = _healthy(t, model, odd, shared, boxes)
    except _NoMatch as exc:
        return Restored(None, str(exc))
    changed = _differences(t, h)
    if len(changed) > MAX_CHANGED_SHARE * len(h.capacity):
        return Restored(None, f"{len(changed)} of {len(h.capacity)} links differ from the "
                        f"symmetric machine found (more than {MAX_CHANGED_SHARE})")
    sym = find_symmetry(h)
    if sym is None:
        return Restored(None, "the machine with every box like the most common kind has no "
                        "verified box shift")
    return Restored(h, symmetry=sym, boxes=len(boxes),
                    box_compute=sum(1 for v in model if v < nc), box_nodes=len(model),
                    shared=len(shared), changed=changed, odd_boxes=len(odd), missing=missing)


class _NoMatch(Exception):
    """A box that cannot be mapped onto the model (other compute nodes, more switches)."""


@dataclass
class _Boxes:
    """The topology on indices, for aligning boxes: undirected neighbours, node kinds."""

    t: Topology
    adj: list[set[int]]
    kind: list[int]
    shared: set[int]

    @classmethod
    def of(cls, t: Topology, shared: set[int]) -> _Boxes:
        idx, nc = t.index, t.num_compute
        adj: list[set[int]] = [set() for _ in t.nodes]
        for a, b in t.capacity:
            adj[idx[a]].add(idx[b])
            adj[idx[b]].add(idx[a])
        multicast = {idx[v] for v in t.multicast_switches}
        kind = [0 if v < nc else (2 if v in multicast else 1) for v in range(len(t.nodes))]
        return cls(t, adj, kind, shared)

    def align(self, model: Sequence[int], box: Sequence[int], orphans: list[int],
              ) -> dict[int, int | None]:
        """π: model node -> node of ``box`` (None: the box lacks it). Compute nodes in
        node order; then every switch of the model to the switch of the box with the
        same neighbours (mapped by π so far, shared nodes fixed) and kind, the first in
        node order, until nothing more is matched; then those left to the switch with
        most neighbours in common, of the box or of ``orphans`` (switches of no box:
        a NIC whose only cable into the box failed), which loses it (step 2 of the
        module docstring)."""
        nodes, nc = self.t.nodes, self.t.num_compute
        mc = [v for v in model if v < nc]
        bc = [v for v in box if v < nc]
        if len(mc) != len(bc):
            raise _NoMatch(f"the box of {nodes[bc[0] if bc else box[0]]} has {len(bc)} compute "
                           f"nodes, the others {len(mc)}")
        pi: dict[int, int | None] = dict(zip(mc, bc))
        left = [v for v in model if v >= nc]
        free = [v for v in box if v >= nc]
        for exact in (True, False):  # same neighbours first; then the most in common
            pool = free if exact else free + orphans
            while left:
                taken = self._match(left, pool, pi, exact)
                if not taken:
                    break
                left = [w for w in left if w not in taken]
        free[:] = [y for y in free if y not in pi.values()]
        orphans[:] = [y for y in orphans if y not in pi.values()]
        if free:
            raise _NoMatch(f"the box of {nodes[bc[0]]} has switches the other boxes lack "
                           f"({', '.join(str(nodes[y]) for y in free[:3])})")
        pi.update((w, None) for w in left)
        return pi

    def _match(self, left: list[int], free: list[int], pi: dict[int, int | None],
               exact: bool) -> set[int]:
        """One sweep of :meth:`align` over the model switches ``left``: each matched to a
        switch of ``free`` of its kind with the same known neighbours (``exact``) or the
        most in common (at least one), taken out of ``free``."""
        taken: set[int] = set()
        for w in left:
            want = self._image(w, pi)
            if want is None:
                continue
            best, score = None, 0
            for y in free:
                if self.kind[y] != self.kind[w]:
                    continue
                known = self._known(y, pi)
                if known == want:
                    best = y
                    break
                common = len(known & want)
                if not exact and common > score:
                    best, score = y, common
            if best is not None:
                pi[w] = best
                free.remove(best)
                taken.add(w)
        return taken

    def _image(self, w: int, pi: Mapping[int, int | None]) -> frozenset[int] | None:
        """The neighbours of model node ``w`` that are shared or mapped, as nodes of the
        box; None while none is."""
        got = {x if x in self.shared else pi.get(x) for x in self.adj[w]
               if x in self.shared or pi.get(x) is not None}
        return frozenset(v for v in got if v is not None) or None

    def _known(self, y: int, pi: Mapping[int, int | None]) -> frozenset[int]:
        """The neighbours of box node ``y`` that are shared or images under ``pi``."""
        images = {v for v in pi.values() if v is not None}
        return frozenset(x for x in self.adj[y] if x in self.shared or x in images)


def _healthy(t: Topology, model: Sequence[int], odd: Sequence[Sequence[int]],
             shared: set[int], boxes: Sequence[Sequence[int]],
             ) -> tuple[Topology, dict[Node, str]]:
    """H: ``t`` with the links at every odd box replaced by the model's (step 3); a
    switch a box lacks gets a new name, ``<model's switch>@<the box's first node>``,
    and its place in the node order (where the boxes' nodes are paired in order)."""
    nodes = t.nodes
    geo = _Boxes.of(t, shared)
    idx = t.index
    in_model = set(model)
    at_model = [(idx[a], idx[b], c) for (a, b), c in t.capacity.items()
                if idx[a] in in_model or idx[b] in in_model]
    in_box = {v for box in boxes for v in box}
    orphans = [v for v in range(t.num_compute, len(nodes)) if v not in in_box | shared]
    maps = [geo.align(model, box, orphans) for box in odd]
    moved = {v for pi in maps for v in pi.values() if v is not None} | {
        v for box in odd for v in box}
    links: list[tuple[Node, Node, Fraction]] = [
        (a, b, c) for (a, b), c in t.capacity.items()
        if idx[a] not in moved and idx[b] not in moved]
    added: dict[Node, str] = {}
    place: dict[Node, float] = {v: float(i) for i, v in enumerate(nodes)}
    for box, pi in zip(odd, maps):
        name: dict[int, Node] = {}
        before = float(min(y for y in pi.values() if y is not None and y >= t.num_compute)
                       if any(y is not None and y >= t.num_compute for y in pi.values())
                       else len(nodes)) - 0.5
        for w in sorted(pi):
            y = pi[w]
            if y is None:
                name[w] = f"{nodes[w]}@{nodes[box[0]]}"
                added[name[w]] = f"the box of {nodes[box[0]]}: its counterpart of {nodes[w]}"
                before += 1e-6
                place[name[w]] = before
            else:
                name[w] = nodes[y]
                before = max(before, float(y))
        for a, b, c in at_model:
            links.append((name.get(a, nodes[a]), name.get(b, nodes[b]), c))
    switches = sorted([*t.switch_nodes, *added], key=place.__getitem__)
    try:
        h = Topology(t.compute_nodes, links, switches,
                     name=f"{t.name or 'topology'} (every box alike)", unit=t.unit,
                     multicast_switches=t.multicast_switches)
    except TopologyError as exc:
        raise _NoMatch(f"the machine with every box alike is not a valid topology ({exc})"
                       ) from None
    return h, added


def _differences(t: Topology, h: Topology) -> list[tuple[Link, Fraction, Fraction]]:
    """Links whose capacity differs between ``t`` and ``h`` (0: absent), in ``t``'s link
    order, then those only ``h`` has."""
    zero = Fraction(0)
    out = [(e, c, h.capacity.get(e, zero)) for e, c in t.capacity.items()
           if h.capacity.get(e) != c]
    out += [(e, zero, c) for e, c in h.capacity.items() if e not in t.capacity]
    return out


def box_profile(t: Topology) -> tuple[object, ...] | None:
    """What a box of the symmetric machine ``t`` looks like, independent of the number
    of boxes (to name a built-in machine whose boxes match: "DGX A100-like"): compute
    nodes and nodes a box, shared switches, and the sorted capacities of the links at
    one box. None when ``t`` has no box shift."""
    got = box_classes(t)
    if got is None:
        return None
    boxes, _, shared = got
    if len(boxes) < 2:
        return None
    return _profile(t, boxes[0], len(shared))


def _profile(t: Topology, box: Sequence[int], shared: int) -> tuple[object, ...]:
    inside = set(box)
    idx = t.index
    caps = sorted((idx[a] in inside, idx[b] in inside, c) for (a, b), c in t.capacity.items()
                  if idx[a] in inside or idx[b] in inside)
    return (sum(1 for v in box if v < t.num_compute), len(box), shared, tuple(caps))


def restored_profile(r: Restored) -> tuple[object, ...] | None:
    """:func:`box_profile` of ``r.healthy``, for the comparison with built-ins."""
    return None if r.healthy is None else box_profile(r.healthy)


def like_builtin(r: Restored, candidates: Mapping[str, Topology]) -> str:
    """The name of the first candidate (a built-in machine of at least 2 boxes) whose
    boxes match H's (:func:`box_profile`), or ""."""
    mine = restored_profile(r)
    if mine is None:
        return ""
    for label, cand in candidates.items():
        if box_profile(cand) == mine:
            return label
    return ""
