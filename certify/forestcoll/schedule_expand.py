"""A symmetric schedule file written out in full, for the tools that need every tree.

A symmetric file (docs/schedules.md, "Symmetric schedule files") stands for every
image σ^j(T), 0 ≤ j < ``order``, of each tree T it holds (with several generators
and their ``orders``: every image by element j of the group, j's digits in the
mixed radix of the orders the powers of the generators; a pipeline of spanning
trees, Zhao & Krishnamurthy 2023, §2). ``collcert check`` and ``collcert audit``
check it by orbits (:mod:`.schedule_orbits`); drawing, the α-β view, smoke runs and
exports need the trees themselves, and get them from :func:`expand_symmetric`,
which maps node ids only (no topology, nothing trusted: what it returns is checked
as any schedule is). It stops before writing out more than
:data:`MAX_EXPANDED_EDGES` tree edges.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..model import InputError, integer

MAX_EXPANDED_EDGES = 5_000_000
"""Most tree edges a symmetric file is written out to (a 2048-GPU allgather has 4.2
million); beyond, only the orbit-wise checks of ``collcert check``/``audit`` read it."""


class _Power:
    """σ^j of node ids (matched by their string form, as checkers match ids)."""

    def __init__(self, pairs: Any, g: int = 0) -> None:
        if not isinstance(pairs, list):
            raise InputError(f"symmetry.generators[{g}] must be an array of [node, image] "
                             "pairs")
        image: dict[str, Any] = {}
        value: dict[str, Any] = {}
        for i, pair in enumerate(pairs):
            if not isinstance(pair, list) or len(pair) != 2 or not all(
                    isinstance(x, str | int) and not isinstance(x, bool) for x in pair):
                raise InputError(f"symmetry.generators[{g}][{i}] is not a [node, image] pair")
            image[str(pair[0])] = str(pair[1])
            value[str(pair[0])] = pair[0]
            value.setdefault(str(pair[1]), pair[1])
        self.cycle: dict[str, list[Any]] = {}
        self.pos: dict[str, int] = {}
        for x in image:
            if x in self.pos:
                continue
            cyc = [x]
            y = image.get(x)
            while y is not None and y != x and y not in self.pos and len(cyc) <= len(image):
                cyc.append(y)
                y = image.get(y)
            if y != x:
                raise InputError(f"symmetry.generators[{g}] is not a permutation: following it "
                                 f"from {value[x]!r} does not come back")
            vals = [value[c] for c in cyc]
            for p, c in enumerate(cyc):
                self.pos[c] = p
                self.cycle[c] = vals

    def __call__(self, x: Any, j: int) -> Any:
        key = str(x)
        cyc = self.cycle.get(key)
        return x if cyc is None else cyc[(self.pos[key] + j) % len(cyc)]


class _Element:
    """Element j of the file's group on node ids: the generators' powers by j's digits."""

    def __init__(self, sym: Mapping[str, Any], order: int) -> None:
        gens = sym["generators"]
        raw = sym.get("orders", [order] if len(gens) == 1 else None)
        if not isinstance(raw, list) or len(raw) != len(gens):
            raise InputError("symmetry.orders must list the order of each generator "
                             "(docs/schedules.md, symmetric schedule files)")
        self.orders = [integer(m, f"symmetry.orders[{i}]", 1, strict=True)
                       for i, m in enumerate(raw)]
        self.powers = [_Power(p, g) for g, p in enumerate(gens)]

    def __call__(self, x: Any, j: int) -> Any:
        for power, m in zip(self.powers, self.orders):
            j, a = divmod(j, m)
            if a:
                x = power(x, a)
        return x


def expand_symmetric(doc: Mapping[str, Any], origin: str = "schedule",
                     limit: int = MAX_EXPANDED_EDGES) -> dict[str, Any]:
    """The same schedule with every image of its trees written out, and its G*
    certificates' arcs too; without its ``symmetry``. InputError past ``limit`` tree
    edges, or when the symmetry block cannot be read."""
    sym = doc.get("symmetry")
    if not isinstance(sym, Mapping) or not isinstance(sym.get("generators"), list) or not sym[
            "generators"]:
        raise InputError(f"{origin}: 'symmetry' must be an object with exactly one generator, "
                         "or several with their 'orders' (docs/schedules.md, symmetric "
                         "schedule files)")
    order = integer(sym.get("order"), "symmetry.order", 1, strict=True)
    power = _Element(sym, order)
    phases = doc.get("phases")
    trees = edges = 0
    for ph in phases if isinstance(phases, list) else []:
        for tr in (ph.get("trees") if isinstance(ph, Mapping) else None) or []:
            trees += 1
            if isinstance(tr, Mapping) and isinstance(tr.get("edges"), list):
                edges += len(tr["edges"])
    if edges * order > limit:
        raise InputError(f"{origin}: this symmetric schedule stands for {trees * order} trees "
                         f"with {edges * order} tree edges; what was asked needs every tree, "
                         f"and collcert writes out at most {limit}. Its validity, time and "
                         "rate need none of them: 'collcert audit TOPOLOGY FILE' (without "
                         "--sizes or --plot) and 'collcert check' read it by orbits")
    out = {k: v for k, v in doc.items() if k != "symmetry"}
    rank = {str(c): i for i, c in enumerate(doc.get("compute_nodes") or [])
            if isinstance(c, str | int)}
    if isinstance(phases, list):
        out["phases"] = [_phase(ph, power, order, rank) if isinstance(ph, Mapping) else ph
                         for ph in phases]
    certs = doc.get("certificates")
    if isinstance(certs, Mapping):
        out["certificates"] = _certificates(certs, power, order)
    return out


def _phase(ph: Mapping[str, Any], power: _Element, order: int,
           rank: Mapping[str, int]) -> dict[str, Any]:
    out = dict(ph)
    walks = ph.get("walks")
    compact = isinstance(walks, list)
    if isinstance(walks, list):
        out["walks"] = [_walk(w, power, j) for w in walks for j in range(order)]
    trees = ph.get("trees")
    if isinstance(trees, list):
        made = []
        for tr in trees:
            if not isinstance(tr, Mapping) or not isinstance(tr.get("edges"), list):
                made.append((0, tr))
                continue
            for j in range(order):
                t = dict(tr)
                t["root"] = power(tr.get("root"), j)
                t["edges"] = ([i * order + j if type(i) is int and i >= 0 else i for i in tr["edges"]]
                              if compact else [_walk(e, power, j) for e in tr["edges"]])
                made.append((rank.get(str(t["root"]), 0), t))
        made.sort(key=lambda item: item[0])  # root order; a root's trees keep theirs
        out["trees"] = [t for _, t in made]
    certs = ph.get("certificates")
    if isinstance(certs, Mapping):
        out["certificates"] = _certificates(certs, power, order)
    return out


def _walk(w: Any, power: _Element, j: int) -> Any:
    """An edge {src, dst, path} mapped by σ^j (anything else unchanged, for the reader)."""
    if not isinstance(w, Mapping):
        return w
    out = dict(w)
    for key in ("src", "dst"):
        if key in w:
            out[key] = power(w[key], j)
    if isinstance(w.get("path"), list):
        out["path"] = [power(x, j) for x in w["path"]]
    return out


def _certificates(certs: Mapping[str, Any], power: _Element, order: int) -> dict[str, Any]:
    """G*'s arcs and their routing, one arc per orbit in a symmetric file, mapped to all
    of their orbit."""
    out = dict(certs)
    gstar = certs.get("gstar")
    if isinstance(gstar, Mapping) and isinstance(gstar.get("capacities"), list):
        g = dict(gstar)
        g["capacities"] = [[power(a[0], j), power(a[1], j), a[2]]
                           if isinstance(a, list) and len(a) == 3 else a
                           for a in gstar["capacities"] for j in range(order)]
        out["gstar"] = g
    routing = certs.get("routing")
    if isinstance(routing, list):  # the walks of each listed arc, mapped with it
        out["routing"] = [_route(r, power, j) for r in routing for j in range(order)]
    return out


def _route(r: Any, power: _Element, j: int) -> Any:
    """A routing entry {src, dst, paths: [[walk, count], …]} mapped by σ^j."""
    if not isinstance(r, Mapping) or not isinstance(r.get("paths"), list):
        return r
    out = {**r, "src": power(r.get("src"), j), "dst": power(r.get("dst"), j)}
    out["paths"] = [[[power(x, j) for x in p[0]], p[1]]
                    if isinstance(p, list) and len(p) == 2 and isinstance(p[0], list) else p
                    for p in r["paths"]]
    return out
