"""Near-symmetry (reference.symmetry.near): the box permutations a degraded machine still
has, found, verified, used by the optimum (one max-flow per orbit) and checked by
collcert.certify from the generators the certificate lists."""

from __future__ import annotations

import json

from collcert import platforms
from collcert.certify.forestcoll import check_optimum
from collcert.certify.model import Topo
from collcert.reference.forestcoll import optimum
from collcert.reference.model import what_if
from collcert.reference.symmetry import UnionFind, near_symmetry


def _orbits(t, gens):  # type: ignore[no-untyped-def]
    uf = UnionFind(len(t.nodes))
    for g in gens:
        for v, w in enumerate(g):
            uf.union(v, w)
    return uf


def _automorphism(t, g) -> bool:  # type: ignore[no-untyped-def]
    nodes = t.nodes
    return (sorted(g) == list(range(len(g)))
            and all(t.capacity.get((nodes[g[t.index[a]]], nodes[g[t.index[b]]])) == c
                    for (a, b), c in t.capacity.items())
            and all((v < t.num_compute) == (g[v] < t.num_compute) for v in range(len(g))))


def test_half_speed_nic_leaves_every_other_box_interchangeable() -> None:
    t = what_if(platforms.dgx_a100(8), degrade=["b3.nic2=25/2"]).topology
    assert t is not None
    sym = near_symmetry(t)
    assert sym is not None
    assert all(_automorphism(t, g) for g in sym.generators)
    uf = _orbits(t, sym.generators)
    i = t.index
    # the degraded GPU is fixed by every automorphism: an orbit of its own
    assert all(g[i["b3.gpu2"]] == i["b3.gpu2"] for g in sym.generators)
    # each GPU position of the seven unaffected boxes is one orbit (box permutations)
    for p in range(8):
        assert len({uf.find(i[f"b{b}.gpu{p}"]) for b in range(8) if b != 3}) == 1
    assert len(sym.reps) < t.num_compute // 4


def test_optimum_by_near_symmetry_is_exact_and_certified() -> None:
    t = what_if(platforms.dgx_a100(8), degrade=["b3.nic2=25/2"],
                fail=["b5.nic1", "b6.gpu3<>b6.nvswitch"]).topology
    assert t is not None
    by_orbits = optimum(t, "allgather")
    plain = optimum(t, "allgather", symmetry=False)
    assert by_orbits.algbw == plain.algbw
    assert "near-symmetry" in by_orbits.extra["symmetry"]
    assert by_orbits.maxflows < plain.maxflows
    topo = Topo(t.to_json())
    cert = json.loads(json.dumps(by_orbits.certificate()))
    assert check_optimum(topo, cert).ok
    # a generator that is not an automorphism is refused by the checker
    forged = json.loads(json.dumps(cert))
    forged["automorphisms"][0] = [["b3.gpu2", "b4.gpu2"], ["b4.gpu2", "b3.gpu2"]]
    assert not check_optimum(topo, forged).ok
    # without the generators, the representatives' flows prove nothing for the rest
    bare = json.loads(json.dumps(cert))
    del bare["automorphisms"]
    assert not check_optimum(topo, bare).ok


def test_reduce_scatter_and_fixed_k_by_near_symmetry() -> None:
    t = what_if(platforms.dgx_a100(8), fail=["b2.nic6"]).topology
    assert t is not None
    for kw in ({"collective": "reduce-scatter"}, {"collective": "allgather", "fixed_k": 2}):
        coll = kw.pop("collective")
        a = optimum(t, coll, **kw)  # type: ignore[arg-type]
        b = optimum(t, coll, symmetry=False, **kw)  # type: ignore[arg-type]
        assert a.algbw == b.algbw and "near-symmetry" in a.extra["symmetry"]
        assert check_optimum(Topo(t.to_json()), json.loads(json.dumps(a.certificate()))).ok


def test_no_symmetry_left_gives_none() -> None:
    # a path of distinct capacities has no automorphism but the identity
    from collcert.reference.model import Topology

    links = []
    for k in range(5):
        links += [(f"g{k}", f"g{k + 1}", k + 1), (f"g{k + 1}", f"g{k}", k + 1)]
    assert near_symmetry(Topology([f"g{k}" for k in range(6)], links)) is None
