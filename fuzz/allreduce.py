"""Fuzz properties of the allreduce rate (Zhou & Sun 2026, Zhao et al. 2026, App. G) and Zhao et al. 2026's §5.7 hypothesis.

``allreduce_rate`` (always true; in the default set)
    On the topology and on a non-Eulerian variant of it (every third link
    dropped, a graph only :class:`Topology` ``strict=False`` reads), every
    certificate of :func:`collcert.reference.allreduce.report.allreduce_rate` passes
    ``collcert.certify``, and the chain holds: MAC-BC LP = LP (5) without
    switches, R_LP ≤ C, RS+AG ≤ LP (5) ≤ min(bound (7), C); on small ones the
    LP (5) schedule is VALID at exactly the LP value.

``allreduce_hypothesis`` and ``rsag_lp`` (opt-in: ``--property``)
    Zhao et al. 2026, §5.7: "directly combining reduce-scatter and allgather trees has
    been sufficient to achieve optimality in all topologies we have
    evaluated, and we hypothesize that this holds for any topology with equal
    bandwidth per compute node". The topology is first *equalised*: a new
    switch joins every compute node v whose bandwidth B⁺(v) is below the
    largest, by links of the difference both ways, so every compute node
    sends and receives the same (still Eulerian; switches included).
    ``rsag_lp``: ForestColl's RS+AG time (reduce-scatter, then allgather)
    equals the optimum of LP (5). ``allreduce_hypothesis``: LP (5) with equal
    shares per root (RS and AG trees combined as well as possible, running
    at the same time) equals LP (5).

``rsag_weighted_lp`` (opt-in)
    The reading of §5.7 that the golden counterexamples leave open: weighted
    RS+AG (reduce-scatter, then allgather, with the best unequal shards:
    :mod:`collcert.reference.allreduce.rsag_weighted`) equals LP (5) on the
    equalised topology; its certificate checks, and RS+AG ≤ weighted RS+AG
    ≤ LP (5) holds.
"""

from __future__ import annotations

from fractions import Fraction

from collcert.reference.model import Topology, fraction_str

from .generators import Source
from .outcomes import PropertyFailure, Skipped

MAX_NODES = 12
"""LP-based properties skip larger topologies (LP (5) grows as N³ with switches)."""


class _Fail(AssertionError):
    pass


def equalized(t: Topology) -> Topology:
    """``t`` with a switch that tops every compute node up to the largest bandwidth."""
    out = {v: t.out_capacity([v]) for v in t.compute_nodes}
    top = max(out.values())
    if all(b == top for b in out.values()):
        return t
    w = "eq"
    while w in t.index or any(str(v) == w for v in t.nodes):
        w += "_"
    links = [(u, v, c) for (u, v), c in t.capacity.items()]
    for v, b in out.items():
        if b < top:
            links += [(v, w, top - b), (w, v, top - b)]
    return Topology(t.compute_nodes, links, [*t.switch_nodes, w],
                    name=f"{t.name or 'topology'} equalised", unit=t.unit)


def non_eulerian(t: Topology) -> Topology:
    """``t`` without every third link (deterministic): usually unbalanced, maybe cut."""
    links = [(u, v, c) for i, ((u, v), c) in enumerate(t.capacity.items()) if i % 3 != 2]
    return Topology(t.compute_nodes, links, t.switch_nodes, name=f"{t.name} thinned",
                    unit=t.unit, strict=False)


def _size_ok(t: Topology) -> bool:
    return len(t.nodes) <= MAX_NODES


def check_rate_chain(t: Topology, label: str) -> None:
    """Every certificate checks and the chain of rates holds (raises AssertionError)."""
    from collcert.certify.allreduce import (
        Graph,
        check_cut_set,
        check_forestcoll_lp,
        check_mac_bc_lp,
        check_rsag_weighted,
    )
    from collcert.reference.allreduce import allreduce_rate

    r = allreduce_rate(t)
    g = Graph(t.to_json())
    certs = r.certificates()
    for key, checker in (("cut_set_bound", check_cut_set), ("mac_bc_lp", check_mac_bc_lp),
                         ("forestcoll_lp", check_forestcoll_lp),
                         ("rsag_weighted", check_rsag_weighted)):
        if key in certs:
            v = checker(g, certs[key])
            if not v.ok:
                raise _Fail(f"{label}: certify rejects the {key} certificate: "
                            + "; ".join(v.all_reasons()[:2]))
    vals = r.values
    c = vals["cut_set_bound"]
    assert c is not None
    lp, mb, rs, b7 = vals["forestcoll_lp"], vals["mac_bc_lp"], vals["rsag"], vals["bound7"]
    wr = vals["rsag_weighted"]
    if mb is not None and lp is not None and mb != lp:
        raise _Fail(f"{label}: MAC-BC LP {fraction_str(mb)} ≠ LP (5) {fraction_str(lp)} on a "
                    "network without switches")
    for low, high, what in ((mb, c, "R_LP ≤ C"), (lp, c, "LP (5) ≤ C"),
                            (rs, wr, "RS+AG ≤ weighted RS+AG"),
                            (wr, lp, "weighted RS+AG ≤ LP (5)"),
                            (rs, lp, "RS+AG ≤ LP (5)"), (lp, b7, "LP (5) ≤ bound (7)")):
        if low is not None and high is not None and low > high:
            raise _Fail(f"{label}: {what} fails: {fraction_str(low)} > {fraction_str(high)}")
    if lp and len(t.nodes) <= 8:
        from collcert.certify.forestcoll import check_schedule
        from collcert.certify.model import Topo
        from collcert.reference.allreduce import lp_schedule

        assert r.forestcoll is not None
        doc = lp_schedule(t, lp=r.forestcoll).to_json()
        v = check_schedule(Topo(t.to_json()), doc)
        if not v.ok or v.facts.get("time_per_unit") != 1 / lp:
            raise _Fail(f"{label}: the LP (5) schedule is not VALID at time 1/LP: "
                        + "; ".join(v.all_reasons()[:2] or [str(v.facts.get('time_per_unit'))]))


def prop_allreduce_rate(t: Topology) -> None:
    if not _size_ok(t):
        raise Skipped(f"{len(t.nodes)} nodes > {MAX_NODES}: LP (5) too slow for fuzzing")
    try:
        check_rate_chain(t, "topology")
        thin = non_eulerian(t)
        if thin.num_compute >= 2:
            check_rate_chain(thin, "without every third link")
    except _Fail as exc:
        raise PropertyFailure(str(exc)) from None


def _hypothesis(t: Topology, uniform: bool) -> None:
    from collcert.reference.allreduce import forestcoll_lp
    from collcert.reference.forestcoll import optimum

    if not _size_ok(t):
        raise Skipped(f"{len(t.nodes)} nodes > {MAX_NODES}: LP (5) too slow for fuzzing")
    e = equalized(t)
    best = forestcoll_lp(e).value
    rsag = optimum(e, "allreduce").algbw
    got = forestcoll_lp(e, uniform=True).value if uniform else rsag
    if got != best:
        what = ("LP (5) with equal shares (RS and AG trees combined at best)" if uniform
                else "RS+AG (reduce-scatter, then allgather)")
        raise PropertyFailure(
            f"on {e.name} (equal bandwidth {fraction_str(e.out_capacity([e.compute_nodes[0]]))} "
            f"per compute node) {what} reaches {fraction_str(got)}, LP (5) {fraction_str(best)} "
            f"(ratio {fraction_str(Fraction(got) / best)}; RS+AG {fraction_str(rsag)})")


def prop_allreduce_hypothesis(t: Topology) -> None:
    _hypothesis(t, uniform=True)


def prop_rsag_lp(t: Topology) -> None:
    _hypothesis(t, uniform=False)


def prop_rsag_weighted_lp(t: Topology) -> None:
    """Weighted RS+AG = LP (5) on ``t`` equalised (see the module docstring)."""
    from collcert.certify.allreduce import Graph, check_rsag_weighted
    from collcert.reference.allreduce import forestcoll_lp, weighted_rsag
    from collcert.reference.forestcoll import optimum

    if not _size_ok(t):
        raise Skipped(f"{len(t.nodes)} nodes > {MAX_NODES}: LP (5) too slow for fuzzing")
    e = equalized(t)
    best = forestcoll_lp(e, method="flows").value  # App. G's own form: small here
    w = weighted_rsag(e)
    rsag = optimum(e, "allreduce").algbw
    v = check_rsag_weighted(Graph(e.to_json()), w.certificate())
    if not v.ok:
        raise PropertyFailure(f"on {e.name} certify rejects the weighted RS+AG certificate: "
                              + "; ".join(v.all_reasons()[:2]))
    if not rsag <= w.value <= best:
        raise PropertyFailure(f"on {e.name} RS+AG {fraction_str(rsag)} ≤ weighted RS+AG "
                              f"{fraction_str(w.value)} ≤ LP (5) {fraction_str(best)} fails")
    if w.value != best:
        shards = ", ".join(f"{x}: {fraction_str(f)}" for x, f in w.shards.items())
        raise PropertyFailure(
            f"on {e.name} (equal bandwidth {fraction_str(e.out_capacity([e.compute_nodes[0]]))} "
            f"per compute node) weighted RS+AG reaches {fraction_str(w.value)} (shards {shards}), "
            f"LP (5) {fraction_str(best)} (ratio {fraction_str(w.value / best)}; RS+AG "
            f"{fraction_str(rsag)})")


def equal_bandwidth(src: Source, *, max_compute: int = 6, max_switches: int = 2,
                    max_layers: int = 3) -> Topology:
    """A random topology in which every compute node sends and receives the same.

    A sum of weighted *derangements* of the compute nodes (permutations without
    a fixed point: disjoint directed cycles covering every compute node once),
    some hops detouring through a switch. By Birkhoff's theorem every
    switch-free topology with equal bandwidth per compute node is such a sum.
    """
    n = src.integer(3, max(3, max_compute))
    ns = src.integer(0, max_switches)
    compute = [f"c{i}" for i in range(n)]
    switches = [f"w{i}" for i in range(ns)]
    caps: dict[tuple[str, str], int] = {}
    for _ in range(src.integer(1, max_layers)):
        order = src.permutation(compute)
        cuts = sorted({0, n, *(src.integer(2, n - 2) for _ in range(src.integer(0, 1))
                                if n >= 4)})
        weight = src.integer(1, 4)
        for a, b in zip(cuts, cuts[1:]):  # one directed cycle per block of the order
            block = order[a:b]
            for x, y in zip(block, block[1:] + block[:1]):
                hop = [x, src.choice(switches), y] if switches and src.integer(0, 2) == 0 \
                    else [x, y]
                for p, q in zip(hop, hop[1:]):
                    caps[(p, q)] = caps.get((p, q), 0) + weight
    used = {x for e in caps for x in e}
    return Topology(compute, [(a, b, c) for (a, b), c in caps.items()],
                    [w for w in switches if w in used], name=f"equal-bandwidth-{n}")
