"""The group of a symmetric file with several generators, verified (for :mod:`.schedule_orbits`).

A symmetric file may list generators g_0, …, g_{k-1} with their ``orders`` m_i
(docs/schedules.md): its schedule is then every image of its trees under the
``order`` = Π m_i products g_0^{a_0} ∘ … ∘ g_{k-1}^{a_{k-1}}, 0 ≤ a_i < m_i
(element j of the file: the a_i are the digits of j in the mixed radix of the
orders, a_0 the fastest). What makes these images a schedule as good as the
representatives' trees, checked here without trusting the file:

* every g_i is an automorphism of the topology (compute nodes, links with their
  capacities, the weights; :func:`..symmetry.automorphisms.verify`) and keeps the
  multicast switches;
* the generators commute and every cycle of g_i has a length dividing m_i (so
  g_i^{m_i} is the identity): the products form a group H, closed under
  composition, with at most Π m_i elements;
* the images of each listed representative by the Π m_i products are distinct
  compute nodes, and the representatives' orbits cover every compute node once:
  so H has exactly ``order`` elements, none but the identity fixes a compute
  node, and root v = h(r) gets exactly the images by h of r's trees.

Then, as for one generator, the images form a pipeline of spanning trees
(Zhao & Krishnamurthy 2023, §2) and link e carries (order/|O(e)|)·Σ_{e'∈O(e)}
load(e') (O(e) its orbit under H, the closure of e under the generators).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..model import InputError, Node, Topo, Verdict, integer
from ..symmetry import automorphisms

MAX_ORDER = 10_000_000
"""Most elements a file's group may have (each representative's orbit is listed in
memory)."""


@dataclass
class Group:
    """The verified group: representatives, each compute node's representative and
    element index, and each representative's images by element index."""

    orders: list[int]
    reps: list[Node] = field(default_factory=list)
    rep_of: dict[Node, Node] = field(default_factory=dict)
    pos: dict[Node, int] = field(default_factory=dict)
    orbit: dict[Node, list[Node]] = field(default_factory=dict)


def read_group(topo: Topo, gens: list[dict[Node, Node]], raw_orders: Any, order: int,
               raw_reps: Any, weights: Mapping[Node, int] | None,
               v: Verdict) -> Group | None:
    """The group of the module docstring, or None with ``v`` failed naming the field;
    InputError when the fields cannot be read."""
    if not isinstance(raw_orders, list) or len(raw_orders) != len(gens):
        raise InputError(f"symmetry.orders must be an array of {len(gens)} integers, the "
                         "order of each generator (docs/schedules.md)")
    orders = [integer(m, f"symmetry.orders[{i}]", 1, strict=True)
              for i, m in enumerate(raw_orders)]
    product = 1
    for m in orders:
        product *= m
    if product != order:
        v.fail(f"field 'symmetry.order': {order}, but the orders {orders} multiply to "
               f"{product}")
        return None
    if order > MAX_ORDER:
        raise InputError(f"symmetry.order {order} is more than the {MAX_ORDER} elements a "
                         "checker lists")
    for i, g in enumerate(gens):
        gv = automorphisms.verify(topo, g, weights, f"symmetry.generators[{i}]")
        if not gv.ok:
            v.absorb(gv)
            return None
        for w in sorted(topo.multicast, key=str):
            if g.get(w, w) not in topo.multicast:
                v.fail(f"symmetry.generators[{i}] maps multicast switch {w!r} to "
                       f"{g.get(w, w)!r}, which is not one")
                return None
    if not _commute(gens, v) or not _divides(gens, orders, v):
        return None
    grp = Group(orders)
    _orbits(topo, gens, grp, raw_reps, v)
    return grp if v.ok else None


def _commute(gens: list[dict[Node, Node]], v: Verdict) -> bool:
    for i, g in enumerate(gens):
        for j in range(i + 1, len(gens)):
            h = gens[j]
            for x in set(g) | set(h):
                if g.get(h.get(x, x), h.get(x, x)) != h.get(g.get(x, x), g.get(x, x)):
                    v.fail(f"symmetry.generators[{i}] and [{j}] do not commute: they take "
                           f"{x!r} to different nodes in the two orders")
                    return False
    return True


def _divides(gens: list[dict[Node, Node]], orders: list[int], v: Verdict) -> bool:
    """Every cycle of g_i has a length dividing m_i."""
    for i, (g, m) in enumerate(zip(gens, orders)):
        seen: set[Node] = set()
        for x in g:
            if x in seen:
                continue
            length, y = 1, g[x]
            seen.add(x)
            while y != x:
                seen.add(y)
                y = g.get(y, y)
                length += 1
            if m % length:
                v.fail(f"field 'symmetry.orders': generator {i} has a cycle of length "
                       f"{length} through {x!r}, which does not divide its order {m}")
                return False
    return True


def _orbits(topo: Topo, gens: list[dict[Node, Node]], grp: Group, raw: Any,
            v: Verdict) -> None:
    """Each listed representative's images by every element (module docstring): distinct
    compute nodes, and all of them once."""
    if not isinstance(raw, list):
        raise InputError("symmetry.representatives must be an array of compute node ids, "
                         "one per orbit")
    strides, s = [], 1
    for m in grp.orders:
        strides.append(s)
        s *= m
    order = s
    for i, ref in enumerate(raw):
        r = topo.compute_node(ref, f"symmetry.representatives[{i}]")
        if r in grp.rep_of:
            v.fail(f"field 'symmetry.representatives': {grp.rep_of[r]!r} and {r!r} lie in "
                   f"one orbit (element {grp.pos[r]} maps {grp.rep_of[r]!r} to {r!r}); list "
                   "one compute node per orbit")
            return
        images = [r]
        grp.rep_of[r], grp.pos[r] = r, 0
        for j in range(1, order):
            k = next(k for k, m in enumerate(grp.orders) if (j // strides[k]) % m)
            prev = images[j - strides[k]]
            x = gens[k].get(prev, prev)
            other = grp.rep_of.get(x)
            if other is not None:
                v.fail(f"the symmetry does not act freely with order {order}: element {j} "
                       f"takes {r!r} to {x!r}, which element {grp.pos[x]} reached already"
                       if other == r else
                       f"field 'symmetry.representatives': {other!r} and {r!r} lie in one "
                       "orbit; list one compute node per orbit")
                return
            images.append(x)
            grp.rep_of[x], grp.pos[x] = r, j
        grp.orbit[r] = images
        grp.reps.append(r)
    missing = [c for c in topo.compute if c not in grp.rep_of]
    if missing:
        v.fail(f"field 'symmetry.representatives': the orbit of compute node {missing[0]!r} "
               "has no representative, so its roots would have no trees")
