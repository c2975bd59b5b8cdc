"""Optima by orbits of the box symmetry, and the certificates that carry an automorphism.

The orbit-wise optimum is compared with the general algorithm (one max-flow per
compute node) on the same topology; its certificate is checked by collcert.certify,
which verifies the automorphism itself and must refuse every forgery below: a
permutation that is not one, one that breaks a link or a capacity, a topology
where one box differs, an orbit without a flow.
"""

from __future__ import annotations

import copy
import json
from fractions import Fraction
from typing import Any

import pytest

from collcert import platforms
from collcert.certify.forestcoll import check_optimum
from collcert.certify.model import Topo
from collcert.certify.symmetry.automorphisms import orbits, read, verify
from collcert.cli import main
from collcert.fuzz.generators import RandomSource, boxes, generate
from collcert.reference.forestcoll import optimum
from collcert.reference.model import Topology, limits
from collcert.reference.symmetry import find_symmetry


def _json(data: Any) -> Any:
    return json.loads(json.dumps(data))


def _cert(t: Topology, **kw: Any) -> dict[str, Any]:
    return _json(optimum(t, symmetry=True, **kw).certificate())


@pytest.fixture(scope="module")
def dgx4() -> Topology:
    return platforms.dgx_a100(4)


@pytest.fixture(scope="module")
def dgx4_cert(dgx4: Topology) -> dict[str, Any]:
    return _cert(dgx4)


@pytest.mark.parametrize("coll", ["allgather", "reduce-scatter", "allreduce"])
@pytest.mark.parametrize("build", [lambda: platforms.dgx_a100(4), lambda: platforms.mi250(2),
                                   lambda: platforms.dgx_h100(3)])
def test_orbits_give_the_general_optimum_with_fewer_maxflows(coll: str, build: Any) -> None:
    t = build()
    general = optimum(t, coll, symmetry=False)
    orb = optimum(t, coll, symmetry=True)
    assert (orb.algbw, orb.inv_x, orb.k, orb.U) == (general.algbw, general.inv_x, general.k,
                                                    general.U)
    # one flow per orbit, not one per compute node: the product group (box shift × the
    # shifts inside a box) of dgx_a100 and dgx_h100 has one orbit; mi250's is the box shift
    sym = find_symmetry(t)
    assert sym is not None
    assert len(orb.flows) == len(sym.reps) < len(general.flows) == t.num_compute
    assert len(sym.reps) == (16 if "MI250" in str(t.name) else 1)
    assert orb.maxflows < general.maxflows
    assert len(orb.automorphisms) == len(sym.factors)
    if coll == "allreduce":  # bound (7)'s cuts mapped by the symmetry are the computed ones
        for key in ("bound7_cuts", "bound7_time_per_unit", "lower_bound_time_per_unit",
                    "rsag_proven_optimal"):
            assert orb.extra[key] == general.extra[key]
    v = check_optimum(t.to_json(), _json(orb.certificate()))
    assert v.ok, v.reasons
    assert v.facts["algbw"] == general.algbw


def test_random_box_machines_agree_with_the_general_algorithm() -> None:
    """Random box topologies (the fuzz family; each box draws its own fast capacity and
    shape, so only some are symmetric): same optimum, and every certificate checks."""
    symmetric = 0
    for seed in range(30):
        t = boxes(RandomSource(f"orbits:{seed}"), max_boxes=4, max_per_box=4,
                  capacities="small")
        orb, general = optimum(t, symmetry=True), optimum(t, symmetry=False)
        assert (orb.algbw, orb.k, orb.U) == (general.algbw, general.k, general.U), t.name
        if orb.automorphisms:
            symmetric += 1
            assert len(orb.flows) < t.num_compute
            for fk in (1, 2):
                assert optimum(t, fixed_k=fk, symmetry=True).U == optimum(
                    t, fixed_k=fk, symmetry=False).U
        v = check_optimum(t.to_json(), _json(orb.certificate()))
        assert v.ok, (t.name, v.reasons)
    assert symmetric >= 5  # the family draws identical boxes often enough


def test_fixed_k_by_orbits(dgx4: Topology) -> None:
    general = optimum(dgx4, fixed_k=1, symmetry=False)
    orb = optimum(dgx4, fixed_k=1, symmetry=True)
    assert (orb.algbw, orb.U, orb.cut) == (general.algbw, general.U, general.cut)
    assert len(orb.flows) == 1  # the group 4 × 2 × 4 has one orbit
    v = check_optimum(dgx4.to_json(), _json(orb.certificate()))
    assert v.ok, v.reasons


def test_known_value_of_two_dgx_boxes() -> None:
    # docs: 2-box DGX A100, 1/x* = 3/65, algbw 1040/3 (also in test_certify_optimum)
    orb = optimum(platforms.dgx_a100(2), symmetry=True)
    assert orb.inv_x == Fraction(3, 65) and orb.algbw == Fraction(1040, 3)
    assert orb.maxflows < 16


def test_certificate_with_automorphism_is_checked(dgx4: Topology,
                                                  dgx4_cert: dict[str, Any]) -> None:
    assert len(dgx4_cert["flows"]) == 1 < dgx4.num_compute
    v = check_optimum(dgx4.to_json(), dgx4_cert)
    assert v.ok, v.reasons
    # the checker's own orbits: one orbit of 32 compute nodes (box shift × the shift of
    # the GPUs between the two IB switches × the shift by two GPUs), 4 of 8 with the box
    # shift alone (its first generator)
    topo = Topo(dgx4.to_json())
    for gens, expect in ((dgx4_cert["automorphisms"], [32]),
                         (dgx4_cert["automorphisms"][:1], [4] * 8)):
        orbit = orbits(topo, read(topo, gens))
        sizes: dict[object, int] = {}
        for c in topo.compute:
            sizes[orbit[c]] = sizes.get(orbit[c], 0) + 1
        assert sorted(sizes.values()) == expect


def _refused(t: Topology, cert: dict[str, Any], words: str) -> None:
    v = check_optimum(t.to_json(), cert)
    assert not v.ok
    assert any(words in r for r in v.reasons), v.reasons


def test_forged_automorphisms_are_refused(dgx4: Topology, dgx4_cert: dict[str, Any]) -> None:
    pairs = dgx4_cert["automorphisms"][0]
    # without the automorphism, the flows cover only the representatives
    bad = copy.deepcopy(dgx4_cert)
    del bad["automorphisms"]
    _refused(dgx4, bad, "no flow from the super source to compute node")
    # the identity generates one-node orbits
    bad["automorphisms"] = [[]]
    _refused(dgx4, bad, "or to any node of its orbit")
    # two nodes with the same image
    bad = copy.deepcopy(dgx4_cert)
    bad["automorphisms"][0][0][1] = pairs[1][1]
    _refused(dgx4, bad, "not a permutation")
    # GPU 0 and GPU 1 of a box hang on different IB switches: swapping their images
    # breaks a link
    bad = copy.deepcopy(dgx4_cert)
    sigma = {u: w for u, w in bad["automorphisms"][0]}
    sigma["b0.gpu0"], sigma["b0.gpu1"] = sigma["b0.gpu1"], sigma["b0.gpu0"]
    bad["automorphisms"] = [[[u, w] for u, w in sigma.items()]]
    _refused(dgx4, bad, "not a link")
    # a compute node mapped to a switch (a transposition of the two)
    bad = copy.deepcopy(dgx4_cert)
    bad["automorphisms"] = [[["b0.gpu0", "ib0"], ["ib0", "b0.gpu0"]], *bad["automorphisms"]]
    _refused(dgx4, bad, "a compute node and a switch")


def test_hostile_automorphism_lists_are_refused(dgx4: Topology,
                                                dgx4_cert: dict[str, Any]) -> None:
    from collcert.certify.model import InputError
    from collcert.certify.symmetry import automorphisms

    topo = Topo(dgx4.to_json())
    with pytest.raises(InputError, match="permutations, more than"):
        read(topo, [[]] * (automorphisms.MAX_AUTOMORPHISMS + 1))
    with pytest.raises(InputError, match="twice"):
        read(topo, [[["b0.gpu0", "b1.gpu0"], ["b0.gpu0", "b2.gpu0"]]])
    with pytest.raises(InputError, match="not a node"):
        read(topo, [[["b0.gpu0", "nowhere"]]])
    with pytest.raises(InputError, match="pair"):
        read(topo, [[["b0.gpu0"]]])
    with pytest.raises(InputError):
        read(topo, {"b0.gpu0": "b1.gpu0"})
    bad = copy.deepcopy(dgx4_cert)
    bad["automorphisms"] = "shift"
    with pytest.raises(InputError):
        check_optimum(dgx4.to_json(), bad)


def test_a_box_that_differs_is_caught(dgx4: Topology, dgx4_cert: dict[str, Any]) -> None:
    """The representatives' flows and the automorphism are presented for a topology in
    which box 2's NVSwitch links are slower: the topology is still Eulerian and every
    representative flow may still be valid, but the orbit argument no longer holds."""
    data = dgx4.to_json()
    for link in data["links"]:
        ends = (str(link["src"] if isinstance(link, dict) else link[0]),
                str(link["dst"] if isinstance(link, dict) else link[1]))
        if all(e.startswith("b2.") for e in ends):
            if isinstance(link, dict):
                link["capacity"] = "1"
            else:
                link[2] = "1"
    cert = copy.deepcopy(dgx4_cert)
    cert.pop("topology")  # the hash would name the change first
    slow = Topology.from_json(data)
    v = check_optimum(slow.to_json(), cert)
    assert not v.ok
    assert any("automorphisms[0] maps link" in r and "capacity" in r for r in v.reasons)


def test_weights_must_be_kept() -> None:
    t = platforms.dgx_a100(4)
    topo = Topo(t.to_json())
    # weights equal per GPU position: the box shift keeps them, and is used
    w = [1 + int(str(c).rsplit("gpu", 1)[1]) for c in t.compute_nodes]
    opt = optimum(t, weights=w, symmetry=True)
    assert opt.automorphisms and opt.algbw == optimum(t, weights=w, symmetry=False).algbw
    cert = _json(opt.certificate())
    assert check_optimum(t.to_json(), cert).ok
    # all weights distinct: no automorphism but the identity keeps them, every node
    # gets a flow
    opt2 = optimum(t, weights=list(range(1, t.num_compute + 1)), symmetry=True)
    assert not opt2.automorphisms and len(opt2.flows) == t.num_compute
    w2 = [2 if str(c).startswith("b0.") else 1 for c in t.compute_nodes]
    # a forged certificate claiming the shift keeps those weights is refused
    sigma = read(topo, cert["automorphisms"])[0]
    weights = {c: w2[i] for i, c in enumerate(topo.compute)}
    v = verify(topo, sigma, weights, "σ")
    assert not v.ok and "weight" in v.reasons[0]


def test_no_symmetry_falls_back() -> None:
    t = generate("orbits:0", max_nodes=8, switches=True)
    opt = optimum(t, symmetry=True)
    if not opt.automorphisms:  # the usual case: a random topology has no box symmetry
        assert len(opt.flows) == t.num_compute
    assert check_optimum(t.to_json(), _json(opt.certificate())).ok


def test_auto_uses_orbits_only_on_large_topologies() -> None:
    assert not optimum(platforms.dgx_a100(2)).automorphisms  # 16 GPUs: explicit flows
    big = platforms.dgx_a100(8)  # 64 GPUs
    assert optimum(big).automorphisms
    assert not optimum(big, symmetry=False).automorphisms


def test_size_estimate_counts_one_flow_per_orbit() -> None:
    full = limits.Size(8192, 17410, 49152)
    orb = limits.Size(8192, 17410, 49152, sinks=8)
    assert orb.flow_entries * 1024 == full.flow_entries
    assert orb.describe() == full.describe()


def test_cli_orbits_and_check(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["optimum", "dgx_a100:8", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["maxflows"] < 64 and "orbit" in out["symmetry"]
    assert main(["optimum", "dgx_a100:8", "--json", "--no-symmetry"]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert plain["maxflows"] >= 64 and "symmetry" not in plain
    assert plain["algbw"] == out["algbw"]
    assert main(["optimum", "dgx_a100:8", "--certificate"]) == 0
    cert = tmp_path / "cert.json"
    cert.write_text(capsys.readouterr().out)
    assert len(json.loads(cert.read_text())["flows"]) == 1
    assert main(["check", "dgx_a100:8", str(cert)]) == 0
    assert "OK" in capsys.readouterr().out
