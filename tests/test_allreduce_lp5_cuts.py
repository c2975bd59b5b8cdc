"""LP (5) by cut generation (issue 19, items 1-3): the cut form against App. G's flow form
on small random topologies (switches, unbalanced links, equal shares), symmetric and
general paths, the golden cases, and the stdlib checker on good and mutated certificates."""

from __future__ import annotations

import copy
import json
import random
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from collcert import platforms
from collcert.certify.allreduce import check_forestcoll_lp
from collcert.reference.allreduce import forestcoll_lp, lp5_cuts
from collcert.reference.model import Topology, TopologyError

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "allreduce"


def _random_digraph(rng: random.Random) -> Topology:
    """Any directed graph with up to 5 compute nodes and 2 switches (not balanced)."""
    nc, ns = rng.randint(2, 5), rng.randint(0, 2)
    comp = [f"c{i}" for i in range(nc)]
    sw = [f"s{i}" for i in range(ns)]
    p = rng.choice([0.35, 0.6, 0.9])
    links = [[u, v, rng.choice([1, 2, 3, Fraction(1, 2), 5])]
             for u in comp + sw for v in comp + sw if u != v and rng.random() < p]
    return Topology(comp, links, sw, strict=False)


def _checked(t: Topology, **kw: Any) -> Fraction:
    r = forestcoll_lp(t, **kw)
    cert = json.loads(json.dumps(r.certificate()))
    v = check_forestcoll_lp(t.to_json(), cert)
    key = "uniform_lp" if kw.get("uniform") else "forestcoll_lp"
    assert v.ok and v.facts[key] == r.value, v.all_reasons()
    return r.value


@pytest.mark.parametrize("seed", range(6))
def test_cut_form_equals_app_g_flow_form_on_random_digraphs(seed: int) -> None:
    t = _random_digraph(random.Random(seed))
    for uniform in (False, True):
        want = forestcoll_lp(t, method="flows", uniform=uniform).value
        assert _checked(t, uniform=uniform, symmetry=False) == want
        assert _checked(t, uniform=uniform) == want


@pytest.mark.parametrize("spec", ["ring:5", "torus:3x3", "two_box_example", "dgx_a100:2"])
def test_symmetric_and_general_paths_agree_with_the_flow_form(spec: str) -> None:
    from collcert.commands._common import load_topology

    t = load_topology(spec)
    sym = forestcoll_lp(t)
    assert sym.stats["node_orbits"] < t.num_compute  # these machines have symmetry
    assert sym.value == forestcoll_lp(t, symmetry=False).value
    if spec != "dgx_a100:2":  # the flow form takes 20 s there on a loaded machine
        assert sym.value == forestcoll_lp(t, method="flows").value


def test_golden_cases_by_the_cut_form_and_its_checker() -> None:
    for path in sorted(GOLDEN.glob("*.json")):
        case = json.loads(path.read_text())
        exp = case["expected"]
        want = exp.get("forestcoll_lp", exp.get("mac_bc_lp"))
        if want is None:
            continue
        t = Topology.from_json(case["topology"], strict=False)
        assert _checked(t) == Fraction(want), path.stem


def _cert(t: Topology) -> dict[str, Any]:
    return json.loads(json.dumps(forestcoll_lp(t).certificate()))


def _fails(t: Topology, cert: dict[str, Any], needle: str) -> None:
    v = check_forestcoll_lp(t.to_json(), cert)
    assert not v.ok and any(needle in r for r in v.all_reasons()), v.all_reasons()


def test_mutated_certificates_are_refused() -> None:
    t = platforms.dgx_a100(2)
    good = _cert(t)
    assert check_forestcoll_lp(t.to_json(), good).ok
    bad = copy.deepcopy(good)
    bad["value"] = "200"
    _fails(t, bad, "claims 200")
    bad = copy.deepcopy(good)  # more x than the flows carry
    bad["x"][0][1] = str(Fraction(bad["x"][0][1]) * 2)
    bad["value"] = str(Fraction(good["value"]) * 2)
    _fails(t, bad, "")
    bad = copy.deepcopy(good)  # a weaker dual
    bad["cuts"][0]["multiplier"] = "0"
    _fails(t, bad, "")
    bad = copy.deepcopy(good)  # a cut that holds every compute node is no row of LP (5)
    bad["cuts"][0].pop("nodes", None)
    bad["cuts"][0]["outside"] = []
    _fails(t, bad, "every compute node")
    bad = copy.deepcopy(good)  # an automorphism that is not one
    bad["automorphisms"][0] = [["b0.gpu0", "b0.nvswitch"], ["b0.nvswitch", "b0.gpu0"]]
    _fails(t, bad, "automorphism 0")
    bad = copy.deepcopy(good)  # no witness for the broadcast side
    bad["flows"] = [f for f in bad["flows"] if f["side"] != "bc"]
    _fails(t, bad, "no broadcast flow witness")


def test_flow_witness_mutations_are_refused() -> None:
    t = platforms.ring(4)
    good = _cert(t)
    bad = copy.deepcopy(good)
    arc = bad["flows"][0]["flow"][0]
    arc[2] = str(Fraction(arc[2]) + 100)
    _fails(t, bad, "more than")
    bad = copy.deepcopy(good)
    bad["flows"][0]["flow"] = bad["flows"][0]["flow"][1:]
    _fails(t, bad, "flows[0]")


def test_a_machine_without_symmetry_takes_the_general_path() -> None:
    t = Topology(["a", "b", "c"], [["a", "b", 2], ["b", "c", 2], ["c", "a", 3]], strict=False)
    r = forestcoll_lp(t)
    assert r.stats["node_orbits"] == 3 and r.certificate()["automorphisms"] == []
    assert r.value == forestcoll_lp(t, method="flows").value == Fraction(7, 4)


def test_beyond_the_budget_is_refused_before_work(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lp5_cuts, "BYTES_PER_WITNESS_ARC", 1 << 60)
    with pytest.raises(TopologyError, match="LP \\(5\\) of .*needs about .* of memory"):
        forestcoll_lp(platforms.ring(4))
    with pytest.raises(TopologyError, match="method"):
        forestcoll_lp(platforms.ring(4), method="simplex")


@pytest.mark.parametrize("spec,most", [("torus:3x3", 9), ("torus:4x4", 64)])
def test_symmetric_shares_export_to_few_msccl_chunks(spec: str, most: int) -> None:
    """The LP (5) schedule takes the solution fixed by the automorphisms: the MSCCL
    program needs few chunks (22 932 and 26 797 024 with App. G's own vertex) and its
    certificate is the cut form's."""
    from collcert.certify.forestcoll import check_schedule
    from collcert.certify.model import Topo
    from collcert.commands._common import load_topology
    from collcert.reference.allreduce import lp_schedule
    from collcert.reference.execution import chunks

    t = load_topology(spec)
    s = lp_schedule(t)
    assert s.algbw == forestcoll_lp(t, method="flows").value and chunks(s) <= most
    v = check_schedule(Topo(t.to_json()), s.to_json())
    assert v.ok and v.facts["forestcoll_lp"] == s.algbw, v.all_reasons()


def test_schedule_beyond_the_flow_form_by_splitting_at_switches() -> None:
    """dgx_a100:4: App. G's flow form is too large; the cut form's per-link capacities,
    balanced at switches, are split off there and packed: the trees reach LP (5)."""
    from collcert.certify.forestcoll import check_schedule
    from collcert.certify.model import Topo
    from collcert.reference.allreduce import lp_schedule
    from collcert.reference.allreduce.lp5_flows import MAX_LP_NONZEROS, lp5_size

    t = platforms.dgx_a100(4)
    assert lp5_size(t) > MAX_LP_NONZEROS
    s = lp_schedule(t)
    v = check_schedule(Topo(t.to_json()), s.to_json())
    assert v.ok and v.facts["forestcoll_lp"] == s.algbw == 1 / v.facts["time_per_unit"]


def test_schedule_balances_compute_nodes_when_the_optimum_allows() -> None:
    """mi250:2: the symmetric optimum is unbalanced at GPUs, which edge splitting refuses;
    the same optimum balanced at every node is found and its trees reach LP (5)."""
    from collcert.certify.forestcoll import check_schedule
    from collcert.certify.model import Topo
    from collcert.reference.allreduce import lp_schedule

    t = platforms.mi250(2)
    s = lp_schedule(t)
    v = check_schedule(Topo(t.to_json()), s.to_json())
    assert v.ok and v.facts["forestcoll_lp"] == s.algbw == Fraction(2656, 15)


def test_two_sinks_finding_the_same_new_cut_in_the_exact_step() -> None:
    """Regression: capacities near 8e20 (a random topology given equal bandwidth by
    collcert.fuzz) made two sinks of one exact step find the same *new* cut; the second
    was taken for a cut the exact LP already had ("internal: ... a violated cut it
    already has"). The cut form must answer as App. G's flow form does."""
    from collcert.fuzz.allreduce import equalized
    from collcert.fuzz.generators import generate

    t = equalized(generate("random-69", max_nodes=8))
    assert _checked(t) == forestcoll_lp(t, method="flows").value
