"""Checker: the alltoall optimum from flows of representatives and link lengths.

The certificate (``"method": "symmetric flows"``) lists ``automorphisms``
(generators, verified by :mod:`collcert.certify.symmetry.automorphisms`; none means the
trivial group),
``flows`` (``{"source": r, "flow": [[u, v, amount], …]}``, one source per orbit
of compute nodes), ``lambda`` and ``lengths`` (``[[u, v, ℓ], …]``, absent
links have ℓ = 0). H is the group the generators generate; the checker computes
the orbits of nodes and of links under H itself (union-find over the generators).

**λ is achievable.** Each f_r must be a flow that leaves r with (N−1)·λ and
leaves λ at every other compute node (conservation at switches). For s = h(r),
let f_s be the average of h(f_r) over the h ∈ H with h(r) = s: a flow from s
delivering λ to every compute node, since h keeps links and compute nodes. The
total load on a link e is then Σ_r (k_r/|H|) Σ_{h∈H} f_r(h⁻¹e), with k_r the
size of r's orbit; as h runs over H, h⁻¹e runs over the orbit O_e, each link
|H|/|O_e| times, so the load is Σ_r (k_r/|O_e|) Σ_{e'∈O_e} f_r(e'), the same for
every link of O_e. It must be ≤ c_e (equal on O_e: automorphisms keep capacities).

**No more than λ.** For lengths ℓ ≥ 0, each pair's λ travels on paths at least
dist_ℓ(s, t) long, so Σ_e c_e·ℓ_e ≥ Σ_e ℓ_e·load_e ≥ λ·Σ_{s≠t} dist_ℓ(s, t): λ is at
most Σ c·ℓ / Σ dist. ℓ must be the same on every link of an orbit; then
dist(h(r), h(t)) = dist(r, t), so Σ_{t} dist(s, t) = Σ_t dist(r, t) for every s in r's
orbit, and Dijkstra (exact) from the representatives alone gives Σ_{s≠t} dist.
The bound must equal λ.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from ..model import InputError, Link, Node, Topo, Verdict, frac_str, number
from ..symmetry import automorphisms


def _arc_list(topo: Topo, raw: object, where: str, v: Verdict) -> dict[Link, Fraction] | None:
    """[[u, v, amount], …] as {link: amount}; an amount on a pair that is not a link, a
    negative one or a link listed twice fails ``v`` (None)."""
    if not isinstance(raw, list):
        raise InputError(f"{where} must be an array of [u, v, amount]")
    out: dict[Link, Fraction] = {}
    for i, item in enumerate(raw):
        if not isinstance(item, list) or len(item) != 3:
            raise InputError(f"{where}[{i}] is not [u, v, amount]")
        e = (topo.node(item[0], f"{where}[{i}] u"), topo.node(item[1], f"{where}[{i}] v"))
        a = number(item[2], f"{where}[{i}] amount")
        if e not in topo.cap or a < 0 or e in out:
            what = "not a link" if e not in topo.cap else (
                "a negative amount" if a < 0 else "listed twice")
            v.fail(f"{where}[{i}]: {e[0]!r} -> {e[1]!r} is {what}")
            return None
        out[e] = a
    return out


def _distances(topo: Topo, length: Mapping[Link, Fraction], source: Node) -> dict[Node, Fraction]:
    out: dict[Node, list[Node]] = {u: [] for u in topo.nodes}
    for (a, b) in topo.cap:
        out[a].append(b)
    dist: dict[Node, Fraction] = {}
    heap: list[tuple[Fraction, int, Node]] = [(Fraction(0), 0, source)]
    count = 1
    while heap:
        d, _, u = heapq.heappop(heap)
        if u in dist:
            continue
        dist[u] = d
        for w in out[u]:
            if w not in dist:
                heapq.heappush(heap, (d + length.get((u, w), Fraction(0)), count, w))
                count += 1
    return dist


def check_flows_and_lengths(topo: Topo, cert: Mapping[str, Any], v: Verdict) -> Fraction | None:
    """Check the certificate (module docstring); λ when both bounds hold, else None
    (the reasons are in ``v``)."""
    perms = automorphisms.read(topo, cert.get("automorphisms", []))
    for g, sigma in enumerate(perms):
        v.absorb(automorphisms.verify(topo, sigma, None, f"automorphisms[{g}]"))
    if not v.ok:
        return None
    lam = number(cert.get("lambda"), "lambda")
    if lam <= 0:
        v.fail("λ must be positive")
        return None
    orbit = automorphisms.orbits(topo, perms)
    size: dict[Node, int] = {}
    for c in topo.compute:
        size[orbit[c]] = size.get(orbit[c], 0) + 1
    link_orbit = automorphisms.link_orbits(topo, perms)
    flows = _representative_flows(topo, cert, lam, orbit, size, link_orbit, v)
    if flows is None or not _within_capacities(topo, flows[0], link_orbit, v):
        return None
    length = _invariant_lengths(topo, cert, perms, v)
    if length is None:
        return None
    total_dist = Fraction(0)
    for orb, r in flows[1].items():
        dist = _distances(topo, length, r)
        total_dist += size[orb] * sum((dist[t] for t in topo.compute if t != r), Fraction(0))
    if total_dist <= 0:
        v.fail("the lengths make some pair's distance 0: they bound nothing")
        return None
    bound = sum((c * length.get(e, Fraction(0)) for e, c in topo.cap.items()), Fraction(0))
    bound /= total_dist
    if bound != lam:
        v.fail(f"the lengths bound λ by Σ c·ℓ / Σ dist = {frac_str(bound)}, not λ = "
               f"{frac_str(lam)}")
        return None
    return lam


def _representative_flows(
    topo: Topo, cert: Mapping[str, Any], lam: Fraction, orbit: Mapping[Node, Node],
    size: Mapping[Node, int], link_orbit: Mapping[Link, Link], v: Verdict,
) -> tuple[dict[Link, Fraction], dict[Node, Node]] | None:
    """One flow per orbit of compute nodes, each sending (N−1)·λ from its representative
    and delivering λ to every other compute node: the load of all their images on each
    link orbit (keyed by the orbit's representative link) and each orbit's representative
    node; None when a flow fails ``v``."""
    raw = cert.get("flows")
    if not isinstance(raw, list):
        raise InputError("the certificate needs 'flows': one flow per orbit of compute nodes")
    n = len(topo.compute)
    load: dict[Link, Fraction] = {}
    sources: dict[Node, Node] = {}  # orbit -> its representative
    for i, rec in enumerate(raw):
        if not isinstance(rec, Mapping):
            raise InputError(f"flows[{i}] is not an object")
        r = topo.node(rec.get("source"), f"flows[{i}] source")
        if r not in topo.compute_set or orbit[r] in sources:
            v.fail(f"flows[{i}]: source {r!r} is not a compute node, or its orbit has a flow "
                   "already")
            return None
        sources[orbit[r]] = r
        flow = _arc_list(topo, rec.get("flow"), f"flows[{i}].flow", v)
        if flow is None:
            return None
        net = {u: Fraction(0) for u in topo.nodes}
        for (a, b), amount in flow.items():
            net[a] += amount
            net[b] -= amount
            key = link_orbit[(a, b)]
            load[key] = load.get(key, Fraction(0)) + size[orbit[r]] * amount
        for u in topo.nodes:
            want = (n - 1) * lam if u == r else (-lam if u in topo.compute_set else 0)
            if net[u] != want:
                v.fail(f"flows[{i}] (from {r!r}): {u!r} sends out {frac_str(net[u])} net, "
                       f"not {frac_str(want)}")
                return None
    missing = [c for c in topo.compute if orbit[c] not in sources]
    if missing:
        v.fail(f"no flow from compute node {missing[0]!r} or any node of its orbit")
        return None
    return load, sources


def _within_capacities(topo: Topo, load: Mapping[Link, Fraction],
                       link_orbit: Mapping[Link, Link], v: Verdict) -> bool:
    """The load of a link orbit, shared by its |O_e| links, is at most their capacity."""
    members: dict[Link, int] = {}
    for e in topo.cap:
        members[link_orbit[e]] = members.get(link_orbit[e], 0) + 1
    for key, total in load.items():
        if total / members[key] > topo.cap[key]:
            v.fail(f"the flows overload {key[0]!r} -> {key[1]!r} (and its orbit): "
                   f"{frac_str(total / members[key])} > {frac_str(topo.cap[key])}")
            return False
    return True


def _invariant_lengths(topo: Topo, cert: Mapping[str, Any], perms: list[dict[Node, Node]],
                       v: Verdict) -> dict[Link, Fraction] | None:
    """The link lengths ℓ ≥ 0, the same on a link and its image under every generator."""
    length = _arc_list(topo, cert.get("lengths"), "lengths", v)
    if length is None:
        return None
    for (a, b), ell in length.items():
        for g, sigma in enumerate(perms):
            image = (sigma.get(a, a), sigma.get(b, b))
            if length.get(image, Fraction(0)) != ell:
                v.fail(f"the length of {a!r} -> {b!r} differs from that of its image under "
                       f"automorphisms[{g}]")
                return None
    return length
