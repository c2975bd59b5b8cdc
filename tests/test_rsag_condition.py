"""Zhao & Krishnamurthy 2023, Thm 19 decided exactly (reference.allreduce.rsag_condition):

- against the theorem's literal statement by brute force (every node set S enumerated:
  the maximisers S* of eq. (1), s_v of bound (7)), on random Eulerian topologies with
  and without switches;
- against ForestColl's LP (5) (Zhao et al. 2026, App. G): where the condition holds,
  RS+AG must reach the LP's optimum (LP (5) ≤ min(C, bound (7)) = RS+AG);
- its certificate checked by certify.allreduce.check_rsag_condition, and wrong claims
  refused.
"""

from __future__ import annotations

import copy
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings

from collcert import platforms
from collcert.certify.allreduce.rsag_condition import check_rsag_condition
from collcert.certify.forestcoll import check_optimum
from collcert.fuzz import strategies as cst
from collcert.reference.allreduce import closed_forms as forms
from collcert.reference.allreduce import cut_set_bound, forestcoll_lp
from collcert.reference.allreduce.rsag_condition import rsag_condition
from collcert.reference.forestcoll import optimum
from collcert.reference.model import Topology, TopologyError


def brute(t: Topology) -> tuple[bool, bool]:
    """Thm 19 (a), (b) as stated (complement reading of (b)), by enumerating node sets."""
    nodes, comp = list(t.nodes), set(t.compute_nodes)
    n = len(comp)
    sets = []
    for mask in range(1, 1 << len(nodes)):
        s = frozenset(nodes[i] for i in range(len(nodes)) if mask >> i & 1)
        k = len(s & comp)
        if 0 < k < n:
            sets.append((s, k, t.out_capacity(s)))
    inv_x = max(Fraction(k) / b for _, k, b in sets)
    maximisers = [(s, k) for s, k, b in sets if Fraction(k) / b == inv_x]
    single = {v: min(b for s, _, b in sets if s & comp == {v}) for v in comp}
    a = any(2 * k == n for _, k in maximisers)
    b = any(len(comp - s) == 1 and single[next(iter(comp - s))] == max(single.values())
            for s, _ in maximisers)
    return a, b


def proven(t: Topology, opt: object) -> Fraction:
    """The RS+AG rate as certify proves it from the optimum certificate."""
    verdict = check_optimum(t.to_json(), opt.certificate())  # type: ignore[attr-defined]
    assert verdict.ok
    return verdict.facts["algbw"]


def _decide_and_check(t: Topology) -> tuple[object, object]:
    opt, cut = optimum(t, "allreduce"), cut_set_bound(t)
    r = rsag_condition(t, opt=opt, cut=cut)
    verdict = check_rsag_condition(t.to_json(), proven(t, opt), cut.certificate(t),
                                   r.certificate(t))
    assert verdict.ok, verdict.all_reasons()
    return r, opt


CI = settings(max_examples=30, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow])


@CI
@given(cst.topologies(max_nodes=7))
def test_decision_equals_the_theorem_by_brute_force(t: Topology) -> None:
    r, opt = _decide_and_check(t)
    assert (r.a, r.b) == brute(t)
    assert r.holds is bool(opt.extra["rsag_proven_optimal"])


FAMILIES = [("dgx1", platforms.dgx1()), ("two-box", platforms.two_box_example()),
            *((f"ring{k}", forms.ring_network(k)) for k in (3, 4, 5)),
            *((f"complete{k}", forms.complete_network(k)) for k in (2, 3, 4)),
            *((f"hypercube{u}", forms.hypercube_network(u)) for u in (1, 2, 3))]


@pytest.mark.parametrize("name, t", FAMILIES, ids=[f[0] for f in FAMILIES])
def test_where_it_holds_rsag_reaches_lp5(name: str, t: Topology) -> None:
    r, opt = _decide_and_check(t)
    lp = forestcoll_lp(t).value
    assert opt.algbw <= lp  # RS+AG is one reduce+broadcast tree schedule
    if r.holds:
        assert opt.algbw == lp
    if len(t.nodes) <= 8:
        assert (r.a, r.b) == brute(t)


@CI
@given(cst.topologies(max_nodes=6))
def test_lp5_on_random_topologies(t: Topology) -> None:
    r, opt = _decide_and_check(t)
    lp = forestcoll_lp(t).value
    assert opt.algbw <= lp
    if r.holds:
        assert opt.algbw == lp


def test_wrong_claims_are_refused() -> None:
    t = platforms.two_box_example()
    opt, cut = optimum(t, "allreduce"), cut_set_bound(t)
    cert = rsag_condition(t, opt=opt, cut=cut).certificate(t)
    assert cert["condition"] == "a"
    for key, value in (("a", False), ("condition", "b"), ("inv_x", "2")):
        bad = copy.deepcopy(cert)
        bad[key] = value
        assert not check_rsag_condition(t.to_json(), proven(t, opt), cut.certificate(t),
                                        bad).ok
    bad = copy.deepcopy(cert)
    bad["b_refutation"]["flow"] = bad["b_refutation"]["flow"][1:]
    assert not check_rsag_condition(t.to_json(), proven(t, opt), cut.certificate(t), bad).ok


def test_a_topology_that_is_not_eulerian_is_refused() -> None:
    t = Topology([0, 1, 2], [(0, 1, 2), (1, 2, 1), (2, 0, 1)], strict=False)
    with pytest.raises(TopologyError, match="Eulerian|sends|receives"):
        rsag_condition(t)
