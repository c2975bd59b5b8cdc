"""Checker 5 by orbits: a symmetric schedule file, checked without mapping its trees.

A symmetric file (docs/schedules.md, "Symmetric schedule files") holds the trees
of one root per orbit of a cyclic group H = <σ>, and σ; its schedule is every
image σ^j(T), 0 ≤ j < ``order``, of every tree T it holds. With several
generators g_0, …, g_{k-1} and their ``orders`` m_i, H is the group of the
products g_0^{a_0} ∘ … ∘ g_{k-1}^{a_{k-1}}, 0 ≤ a_i < m_i, and its schedule every
image of the trees under these ``order`` = Π m_i elements; the same checks hold
once :mod:`.schedule_group` has checked that the generators commute, that
g_i^{m_i} is the identity and that the products act freely on the compute nodes
(each representative's orbit has ``order`` distinct compute nodes). The pipeline of
spanning trees of Zhao & Krishnamurthy 2023, §2 (its time the busiest link's
load) is checked on the representatives once this module has checked what
makes the images as good as them:

* σ is an automorphism of the topology (:func:`..symmetry.automorphisms.verify`:
  compute nodes, links with their capacities, the weights) and keeps the
  multicast switches;
* H acts freely on the compute nodes with the stated order: every compute node
  lies on a cycle of σ of length exactly ``order``, and every other node's cycle
  length divides it (σ^order = 1). So root v = σ^p(r) gets exactly the images by
  σ^p of r's trees: its multiplicities are r's;
* ``representatives``: exactly one compute node per orbit, and every tree's root
  is one of them.

Each image of a representative tree is then an arborescence spanning V_c whose
paths are walks through switches (σ maps links to links and switches to switches),
and the whole schedule loads link e with (order/|O(e)|)·Σ_{e'∈O(e)} load(e')
(:meth:`Orbits.spread`; O(e) is e's orbit under H: as g runs over H, g⁻¹e runs
over O(e), each link order/|O(e)| times). An arc of G* joins compute nodes, so
its orbit has ``order`` arcs and its load is the representatives' load summed
over its orbit (:meth:`Orbits.canon`: the arc of the orbit whose tail is a
representative).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..model import InputError, Link, Node, Topo, Verdict, integer
from ..symmetry import automorphisms
from .schedule_group import read_group
from .trees import Edge, Tree

FIELDS = ("generators", "order", "orders", "representatives")


@dataclass
class Orbits:
    """The generators (their moved nodes), the order of H, and every compute node's
    place: v is element pos[v] of H applied to its orbit's representative rep_of[v];
    cycle[r] lists the images of r by the elements 0, 1, …, order−1 (one generator:
    r, σr, σ²r, …). ``orders``: each generator's order (element j has the digits
    a_i of j in the mixed radix of the orders, a_0 the fastest)."""

    sigma: dict[Node, Node]
    order: int
    reps: list[Node]
    rep_of: dict[Node, Node] = field(default_factory=dict)
    pos: dict[Node, int] = field(default_factory=dict)
    cycle: dict[Node, list[Node]] = field(default_factory=dict)
    gens: list[dict[Node, Node]] = field(default_factory=list)
    orders: list[int] = field(default_factory=list)

    def minus(self, a: int, b: int) -> int:
        """The element index of (element a) ∘ (element b)⁻¹: digits subtracted."""
        if len(self.orders) < 2:
            return (a - b) % self.order
        out, stride = 0, 1
        for m in self.orders:
            out += ((a % m - b % m) % m) * stride
            a, b, stride = a // m, b // m, stride * m
        return out

    def canon(self, a: Node, b: Node) -> Link:
        """The arc of the orbit of (a, b) (compute nodes) whose tail is a representative."""
        return self.rep_of[a], self.cycle[self.rep_of[b]][self.minus(self.pos[b], self.pos[a])]

    def link_orbit(self, e: Link) -> list[Link]:
        """The orbit of a link under H: its images by the generators, closed."""
        gens = self.gens or [self.sigma]
        orbit, known = [e], {e}
        for a, b in orbit:  # grows while it is walked
            for g in gens:
                x = (g.get(a, a), g.get(b, b))
                if x not in known:
                    known.add(x)
                    orbit.append(x)
        return orbit

    def spread(self, load: Mapping[Link, int]) -> dict[Link, int]:
        """The whole schedule's load of every link in the orbit of a loaded link, from
        the representatives' ``load``: (order/|O|)·Σ_{e∈O} load(e) on each link of O."""
        out: dict[Link, int] = {}
        for e in load:
            if e in out:
                continue
            orbit = self.link_orbit(e)
            total = sum(load.get(y, 0) for y in orbit) * (self.order // len(orbit))
            for y in orbit:
                out[y] = total
        return out

    def canon_trees(self, trees: list[Tree]) -> list[Tree]:
        """The trees with every edge replaced by its orbit's canonical arc (no paths):
        what the G* loads of all images sum over."""
        return [Tree(t.root, t.multiplicity, t.direction,
                     [Edge(*self.canon(e.src, e.dst), []) for e in t.edges], t.label)
                for t in trees]

    def canon_caps(self, caps: Mapping[Link, int], v: Verdict) -> dict[Link, int]:
        """A G* certificate's arcs (one per orbit) keyed by their orbit's canonical arc;
        two arcs of one orbit fail ``v``."""
        out: dict[Link, int] = {}
        named: dict[Link, Link] = {}
        for (a, b), c in caps.items():
            key = self.canon(a, b)
            if key in out:
                x, y = named[key]
                v.fail(f"G* certificate: arcs {x!r} -> {y!r} and {a!r} -> {b!r} lie in one "
                       "orbit; a symmetric file lists one arc per orbit")
                continue
            out[key], named[key] = c, (a, b)
        return out


def read_orbits(topo: Topo, raw: Any, weights: Mapping[Node, int] | None,
                v: Verdict) -> Orbits | None:
    """The ``symmetry`` object of a symmetric file, verified (module doc); None, with
    ``v`` failed naming what is wrong, when it does not hold. InputError when it
    cannot be read."""
    if not isinstance(raw, Mapping):
        raise InputError("'symmetry' must be an object {generators, order, representatives} "
                         "(docs/schedules.md, symmetric schedule files)")
    extra = sorted(str(k) for k in raw if k not in FIELDS)
    if extra:
        raise InputError(f"symmetry: field {extra[0]!r} is not one a symmetric file has "
                         f"({', '.join(FIELDS)})")
    gens = automorphisms.read(topo, raw.get("generators"), "symmetry.generators")
    if not gens:
        raise InputError("symmetry.generators lists no permutation; a symmetric file has "
                         "exactly one generator σ (the group is <σ>), or several commuting "
                         "ones with their 'orders'")
    order = integer(raw.get("order"), "symmetry.order", 1, strict=True)
    if len(gens) > 1 or "orders" in raw:
        grp = read_group(topo, gens, raw.get("orders"), order, raw.get("representatives"),
                         weights, v)
        if grp is None:
            return None
        return Orbits(gens[0], order, grp.reps, grp.rep_of, grp.pos, grp.orbit, gens,
                      grp.orders)
    sigma = gens[0]
    gv = automorphisms.verify(topo, sigma, weights, "symmetry.generators[0]")
    if not gv.ok:
        v.absorb(gv)
        return None
    for w in sorted(topo.multicast, key=str):
        if sigma.get(w, w) not in topo.multicast:
            v.fail(f"symmetry.generators[0] maps multicast switch {w!r} to "
                   f"{sigma.get(w, w)!r}, which is not one")
            return None
    orb = Orbits(sigma, order, [])
    if not _cycles(topo, orb, v):
        return None
    _representatives(topo, orb, raw.get("representatives"), v)
    return orb if v.ok else None


def _cycles(topo: Topo, orb: Orbits, v: Verdict) -> bool:
    """Walk σ's cycles: every compute node's of length ``order``, every other's a
    divisor of it. Fills ``pos`` and ``cycle`` (keyed by each cycle's first node)."""
    sigma, order = orb.sigma, orb.order
    seen: set[Node] = set()
    first: tuple[Node, int] | None = None
    for x in topo.nodes:
        if x in seen:
            continue
        cyc = [x]
        y = sigma.get(x, x)
        while y != x:
            cyc.append(y)
            y = sigma.get(y, y)
        seen.update(cyc)
        if x not in topo.compute_set:
            if order % len(cyc):
                v.fail(f"symmetry.generators[0]: σ^{order} is not the identity: switch {x!r} "
                       f"lies on a cycle of length {len(cyc)}, which does not divide the "
                       f"order {order}")
                return False
            continue
        if first is None:
            first = (x, len(cyc))
        elif len(cyc) != first[1]:
            v.fail(f"symmetry.generators[0] does not act freely on the compute nodes: "
                   f"{first[0]!r} lies on a cycle of length {first[1]}, {x!r} on one of "
                   f"length {len(cyc)} (a symmetric file needs every compute node on a "
                   "cycle of length 'order')")
            return False
        for p, y in enumerate(cyc):
            orb.pos[y] = p
            orb.rep_of[y] = x
        orb.cycle[x] = cyc
    if first is not None and first[1] != order:
        v.fail(f"field 'symmetry.order': {order}, but the generator's cycles through the "
               f"compute nodes have length {first[1]} (the order of <σ> on them)")
        return False
    return True


def _representatives(topo: Topo, orb: Orbits, raw: Any, v: Verdict) -> None:
    """One listed compute node per orbit; re-anchor ``pos``/``cycle`` at it."""
    if not isinstance(raw, list):
        raise InputError("symmetry.representatives must be an array of compute node ids, "
                         "one per orbit")
    chosen: dict[Node, Node] = {}  # cycle key -> representative
    for i, ref in enumerate(raw):
        r = topo.compute_node(ref, f"symmetry.representatives[{i}]")
        key = orb.rep_of[r]
        if key in chosen:
            other = chosen[key]
            p = (orb.pos[r] - orb.pos[other]) % orb.order
            v.fail(f"field 'symmetry.representatives': {other!r} and {r!r} lie in one orbit "
                   f"(σ^{p} maps {other!r} to {r!r}); list one compute node per orbit")
            continue
        chosen[key] = r
        orb.reps.append(r)
    for key, cyc in list(orb.cycle.items()):
        rep = chosen.get(key)
        if rep is None:
            v.fail(f"field 'symmetry.representatives': the orbit of compute node {key!r} "
                   f"({len(cyc)} nodes: {key!r}, {cyc[1] if len(cyc) > 1 else key!r}, …) "
                   "has no representative, so its roots would have no trees")
            continue
        shift = orb.pos[rep]
        anchored = cyc[shift:] + cyc[:shift]
        del orb.cycle[key]
        orb.cycle[rep] = anchored
        for p, y in enumerate(anchored):
            orb.pos[y] = p
            orb.rep_of[y] = rep
