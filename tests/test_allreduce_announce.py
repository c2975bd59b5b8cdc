"""optimum -c allreduce: R_LP from Zhou & Sun 2026's closed forms where they apply, checked
by collcert.certify like the LP's own certificate; elsewhere an estimate of the MAC-BC LP
from its size before any work, and stage and round progress (issue 24 row 8)."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

from collcert import platforms
from collcert.certify.allreduce import Graph, check_mac_bc_lp
from collcert.commands import _allreduce
from collcert.reference.allreduce import closed_form_mac_bc, closed_forms, mac_bc_lp
from collcert.reference.model import Topology


def _ring_with_slow_link(n: int) -> Topology:
    base = platforms.ring(n)
    return Topology(base.nodes, [(u, v, Fraction(1, 2) if {u, v} == {0, 1} else c)
                                 for (u, v), c in base.capacity.items()], name="slow link")


CLOSED = [platforms.ring(6), closed_forms.ring_network(7, "5/2"), platforms.ring(5,
          bidirectional=False), closed_forms.cycle_network(6, 3), platforms.complete(5),
          platforms.ring(2), platforms.hypercube(3), closed_forms.hypercube_network(4, 2)]


@pytest.mark.parametrize("t", CLOSED, ids=lambda t: t.name)
def test_a_closed_form_is_the_lp_optimum_and_its_certificate_checks(t: Topology) -> None:
    got = closed_form_mac_bc(t)
    assert got is not None and got.value == mac_bc_lp(t).value
    cert = json.loads(json.dumps(got.certificate(t)))
    verdict = check_mac_bc_lp(Graph(t.to_json()), cert)
    assert verdict.ok and verdict.facts["mac_bc_lp"] == got.value, verdict.all_reasons()


def test_the_checker_refuses_a_forged_closed_form() -> None:
    t = platforms.ring(6)
    got = closed_form_mac_bc(t)
    assert got is not None
    heavier = got.certificate(t)
    heavier["columns"][0]["weight"] = "1"  # over the capacity of its links
    cheaper = got.certificate(t)
    cheaper["dual"] = cheaper["dual"][1:]  # one price missing: a network costs < 1
    for cert in (heavier, cheaper):
        assert not check_mac_bc_lp(Graph(t.to_json()), json.loads(json.dumps(cert))).ok


@pytest.mark.parametrize("t", [_ring_with_slow_link(6), platforms.torus([3, 3]),
                               platforms.dgx1(), closed_forms.three_cycle_network(1, 2, 3)],
                         ids=["slow link", "torus", "switches", "3-cycle"])
def test_no_closed_form_where_the_paper_gives_none(t: Topology) -> None:
    assert closed_form_mac_bc(t) is None


def test_a_ring_of_a_hundred_is_a_closed_form_not_an_lp(capsys: pytest.CaptureFixture[str],
                                                        ) -> None:
    assert _allreduce._announce_mac_bc(platforms.ring(100), progress_shown=False) is False
    err = capsys.readouterr().err
    assert "closed form" in err and "Thm 5" in err and "no LP" in err


def test_the_lp_is_estimated_from_its_size_first(capsys: pytest.CaptureFixture[str]) -> None:
    assert _allreduce._announce_mac_bc(_ring_with_slow_link(200), progress_shown=False)
    err = capsys.readouterr().err
    assert "200 compute nodes and 400 links" in err and "estimated" in err
    low, high, memory = _allreduce.mac_bc_estimate(200, 400)
    assert 0 < low < high and memory > 0
    assert _allreduce.mac_bc_estimate(100, 200)[1] < high  # grows with the LP's size


@pytest.mark.parametrize("t", [_ring_with_slow_link(8), platforms.dgx_a100(8),
                               platforms.ring(300)], ids=["small", "switches", "over 256"])
def test_nothing_is_said_where_the_lp_is_quick_or_not_solved(
        t: Topology, capsys: pytest.CaptureFixture[str]) -> None:
    assert _allreduce._announce_mac_bc(t, progress_shown=False) is False
    assert capsys.readouterr().err == ""


def test_stages_and_rounds_are_shown(capsys: pytest.CaptureFixture[str]) -> None:
    from collcert.reference.allreduce import allreduce_rate

    stages = _allreduce._Stages(True)
    allreduce_rate(_ring_with_slow_link(5), progress=stages.round, stage=stages,
                   warm=stages.warm)
    stages.finish()
    err = capsys.readouterr().err
    for name in ("cut-set bound", "MAC-BC LP", "LP (5)", "RS+AG", "weighted RS+AG"):
        assert f"allreduce: {name} ..." in err and f"allreduce: {name}: " in err
    assert "warm start" in err and "round 1" in err
