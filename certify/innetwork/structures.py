"""A schedule of the in-network model, checked: its structures, and the loads they put.

A structure (docs/in-network.md) is a root, a reduce tree and a broadcast tree,
each tree edge a path of links. This module checks, with nothing but the
topology as :class:`~collcert.certify.model.Topo` reads it:

* every path is a path of links of the topology, of two nodes or more;
* reduce paths run from a tree node to its parent, and tree nodes are compute
  nodes or switches that add (SHARP or NVLS: where streams may be added);
  broadcast paths run from a parent to a child, and tree nodes are compute
  nodes, switches that add or multicast switches (where a stream may be copied);
  the root is a compute node or a SHARP switch (an NVLS switch never holds a sum);
* an NVLS switch joins a tree only by single links to its *members* (compute
  nodes linked to it both ways): its children and its parent are members. Its
  parent g issues the load-reduce (reduce tree: g's own share also goes up
  g → w) or the multicast store (broadcast tree: the switch also writes g,
  w → g): one more use of that link, which the structure does not list;
* each tree gives every tree node but the root exactly one parent, and every
  compute node reaches the root (reduce) or is reached from it (broadcast);
* loads: a weighted structure puts weight × (its paths through the link, and the
  uses NVLS switches imply) on each link, and one reduction on each switch that
  adds in its reduce tree.

With automorphisms (generators, verified here to keep capacities, compute nodes
and every capability), the schedule is the average over the group H they
generate of each listed structure, and the load of link e is
Σ_T W_T · m_P(T) / |P|, P the orbit of e and m_P(T) the uses of T's paths in P:
averaging over H, a use of e' ∈ P lands on e for |H|/|P| of the group's
elements (orbit-stabiliser). Every image of a structure under an automorphism is
a structure, so the average is a schedule of rate Σ_T W_T.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from ..model import InputError, Link, Node, Topo, Verdict, frac_str, number
from ..symmetry import automorphisms as aut

MAX_STRUCTURES = 100_000
MAX_PATH_STEPS = 20_000_000


def read_generators(topo: Topo, raw: object, v: Verdict) -> list[dict[Node, Node]]:
    """The automorphisms listed, each verified (capacities, compute nodes, capabilities)."""
    perms = aut.read(topo, raw if raw is not None else [], "lower.automorphisms")
    for k, sigma in enumerate(perms):
        v.absorb(aut.verify(topo, sigma, None, f"lower.automorphisms[{k}]"))
        for u, w in sigma.items():
            for label, held in (("reducing", topo.reducing), ("NVLS", topo.nvls),
                                ("multicast", topo.multicast)):
                if (u in held) != (w in held):
                    v.fail(f"lower.automorphisms[{k}] maps {u!r} to {w!r}: one is a {label} "
                           "switch, the other not")
            if topo.reduction_rate.get(u) != topo.reduction_rate.get(w):
                v.fail(f"lower.automorphisms[{k}] maps {u!r} to {w!r}, whose reduction "
                       "rates differ")
    return perms


def _paths(topo: Topo, raw: object, where: str) -> list[tuple[Node, ...]]:
    if not isinstance(raw, list):
        raise InputError(f"{where} must be an array of paths")
    out = []
    for i, p in enumerate(raw):
        if not isinstance(p, list) or len(p) < 2:
            raise InputError(f"{where}[{i}] must be a path of at least two nodes")
        out.append(tuple(topo.node(x, f"{where}[{i}] node") for x in p))
    return out


def read_structure(topo: Topo, raw: object, where: str,
                   ) -> tuple[Node, list[tuple[Node, ...]], list[tuple[Node, ...]], Fraction]:
    if not isinstance(raw, Mapping) or set(raw) != {"root", "reduce", "broadcast", "weight"}:
        raise InputError(f"{where} must be an object with root, reduce, broadcast, weight")
    weight = number(raw["weight"], f"{where}.weight")
    if weight < 0:
        raise InputError(f"{where}.weight is negative")
    return (topo.node(raw["root"], f"{where}.root"), _paths(topo, raw["reduce"], f"{where}.reduce"),
            _paths(topo, raw["broadcast"], f"{where}.broadcast"), weight)


def members(topo: Topo) -> dict[Node, frozenset[Node]]:
    """The member GPUs of each NVLS switch: compute nodes linked to it both ways."""
    got = topo.cache.get("nvls members")
    if got is None:
        out: dict[Node, set[Node]] = {w: set() for w in topo.nvls}
        for x, w in topo.cap:
            if w in out and x in topo.compute_set and (w, x) in topo.cap:
                out[w].add(x)
        got = topo.cache["nvls members"] = {w: frozenset(m) for w, m in out.items()}
    return got


def implied(topo: Topo, red: list[tuple[Node, ...]],
            bc: list[tuple[Node, ...]]) -> list[Link]:
    """The links an NVLS switch's issuer uses once more (module docstring)."""
    return ([(p[1], p[0]) for p in red if p[0] in topo.nvls and len(p) == 2]
            + [(p[1], p[0]) for p in bc if p[-1] in topo.nvls and len(p) == 2])


def check_tree(topo: Topo, root: Node, paths: list[tuple[Node, ...]], inward: bool,
               where: str, v: Verdict) -> None:
    """One tree of a structure (see the module docstring)."""
    allowed = topo.compute_set | topo.reducing | (frozenset() if inward else topo.multicast)
    kind = "reduce" if inward else "broadcast"
    member = members(topo)
    parent: dict[Node, Node] = {}
    for i, p in enumerate(paths):
        for a, b in zip(p, p[1:]):
            if (a, b) not in topo.cap:
                v.fail(f"{where}.{kind}[{i}]: {a!r} -> {b!r} is not a link")
                return
        child, up = (p[0], p[-1]) if inward else (p[-1], p[0])
        for end in (child, up):
            if end not in allowed:
                v.fail(f"{where}.{kind}[{i}]: {end!r} is a tree node of the {kind} tree but "
                       f"{'adds' if inward else 'copies'} nothing (a switch that "
                       f"{'is not reducing' if inward else 'neither adds nor multicasts'})")
                return
            if end in member and (len(p) != 2 or (child if end == up else up)
                                  not in member[end]):
                v.fail(f"{where}.{kind}[{i}]: NVLS switch {end!r} joins its {kind} tree "
                       "only by single links to member GPUs (a load-reduce or a multicast "
                       "store issued by a member: nvls_switches)")
                return
        if child == root or child in parent:
            v.fail(f"{where}.{kind}[{i}]: {child!r} gets a second parent (or is the root)")
            return
        parent[child] = up
    for c in topo.compute:
        x, seen = c, {c}
        while x != root:
            if x not in parent or parent[x] in seen:
                v.fail(f"{where}: the {kind} tree does not join compute node {c!r} to the "
                       f"root {root!r}")
                return
            x = parent[x]
            seen.add(x)


def check_schedule(topo: Topo, lower: Mapping[str, Any], v: Verdict) -> Fraction | None:
    """The rate of the listed schedule when it is one and fits the topology, else None."""
    perms = read_generators(topo, lower.get("automorphisms"), v)
    raw = lower.get("structures")
    if not isinstance(raw, list) or len(raw) > MAX_STRUCTURES:
        raise InputError(f"lower.structures must be an array of at most {MAX_STRUCTURES} "
                         "structures")
    link_of = aut.link_orbits(topo, perms)
    node_of = aut.orbits(topo, perms)
    size: dict[Any, int] = {}
    for p in link_of.values():
        size[p] = size.get(p, 0) + 1
    for q in node_of.values():
        size[("node", q)] = size.get(("node", q), 0) + 1
    load: dict[Any, Fraction] = {}
    total, steps = Fraction(0), 0
    for k, rec in enumerate(raw):
        root, red, bc, w = read_structure(topo, rec, f"lower.structures[{k}]")
        steps += sum(len(p) for p in red + bc)
        if steps > MAX_PATH_STEPS:
            raise InputError(f"lower.structures: more than {MAX_PATH_STEPS:,} path steps")
        if root not in topo.compute_set | (topo.reducing - topo.nvls):
            v.fail(f"lower.structures[{k}]: root {root!r} neither computes nor holds sums "
                   "(an NVLS switch returns every sum into a member GPU)")
        check_tree(topo, root, red, True, f"lower.structures[{k}]", v)
        check_tree(topo, root, bc, False, f"lower.structures[{k}]", v)
        total += w
        uses = [e for path in red + bc for e in zip(path, path[1:])]
        for e in uses + implied(topo, red, bc):
            orbit = link_of.get(e)
            if orbit is not None:
                load[orbit] = load.get(orbit, Fraction(0)) + w / size[orbit]
        tree = {p[0] for p in red} | {p[-1] for p in red} | {root}
        for x in tree & topo.reducing:
            key = ("node", node_of[x])
            load[key] = load.get(key, Fraction(0)) + w / size[key]
    _fits(topo, link_of, node_of, load, v)
    return total if v.ok else None


def _fits(topo: Topo, link_of: dict[Link, Link], node_of: dict[Node, Node],
          load: dict[Any, Fraction], v: Verdict) -> None:
    for e, c in topo.cap.items():
        got = load.get(link_of[e], Fraction(0))
        if got > c:
            v.fail(f"link {e[0]!r} -> {e[1]!r} carries {frac_str(got)} > its capacity "
                   f"{frac_str(c)}")
            return
    for x, rate in topo.reduction_rate.items():
        got = load.get(("node", node_of[x]), Fraction(0))
        if got > rate:
            v.fail(f"reducing switch {x!r} outputs {frac_str(got)} of sums > its reduction "
                   f"rate {frac_str(rate)}")
            return
