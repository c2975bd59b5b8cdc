"""Issue 22 item 2: schedules on the runtime's routes, at their own certified optimum."""

from __future__ import annotations

import copy
import json
from fractions import Fraction
from pathlib import Path

import pytest
from test_export_rate import issue_topology

import collcert
from collcert.certify.dispatch import check_certificate
from collcert.certify.forestcoll import check_schedule
from collcert.certify.model import Topo
from collcert.cli import main
from collcert.fuzz.generators import RandomSource, random_topology
from collcert.reference.execution import export_rate, msccl_xml, runtime_optimum, runtime_schedule
from collcert.reference.model import Topology

SWITCHED = ["switched_cycles", "switched", "boxes"]


def _random(i: int) -> Topology:
    return random_topology(RandomSource(f"rt:{i}"), max_nodes=7, kinds=SWITCHED,
                           capacities="small")


MACHINES = [issue_topology, collcert.platforms.dgx1, lambda: collcert.platforms.ring(4),
            lambda: _random(0), lambda: _random(2), lambda: _random(9)]


@pytest.mark.parametrize("build", MACHINES)
def test_the_lp_without_the_constraint_is_forestcolls_optimum(build: object) -> None:
    """The LP is the allgather condition on a routable logical graph: without the runtime's
    constraint its certified optimum must be ForestColl's (switch splitting, Thm 8)."""
    t = build()  # type: ignore[operator]
    free = runtime_optimum(t, constrained=False)
    assert free.algbw == collcert.optimum(t).algbw
    tied = runtime_optimum(t, constrained=True)
    assert 0 < tied.algbw <= free.algbw
    for opt in (free, tied):
        kind, v = check_certificate(t.to_json(), opt.certificate())
        assert kind == "runtime-routes-optimum" and v.ok, v.all_reasons()
        assert v.facts["algbw"] == opt.algbw


def test_a_gap_exists_and_is_certified() -> None:
    t = _random(0)
    tied, free = runtime_optimum(t).algbw, collcert.optimum(t).algbw
    assert tied < free  # on this machine the runtime's routes cost bandwidth


def test_wrong_certificates_fail() -> None:
    t = issue_topology()
    cert = runtime_optimum(t).certificate()
    bad = dict(cert, algbw="16")
    assert not check_certificate(t.to_json(), bad)[1].ok
    bad = copy.deepcopy(cert)
    bad["lp"]["rows"][0]["rhs"] = "100"  # a looser LP: not this machine's
    v = check_certificate(t.to_json(), bad)[1]
    assert not v.ok and "not the runtime-routes LP" in " ".join(v.all_reasons())
    bad = dict(cert, constrained=False)  # the constrained solution is not optimal there
    assert not check_certificate(t.to_json(), bad)[1].ok


@pytest.mark.parametrize("coll", ["allgather", "reduce-scatter"])
@pytest.mark.parametrize("build", [issue_topology, lambda: _random(0), lambda: _random(3)])
def test_runtime_schedule_is_valid_optimal_and_exports_at_its_rate(coll: str,
                                                                   build: object) -> None:
    t = build()  # type: ignore[operator]
    doc = runtime_schedule(t, coll)
    v = check_schedule(Topo(t.to_json()), doc)
    assert v.ok, v.all_reasons()
    assert v.facts["algbw"] == runtime_optimum(t, collective=coll).algbw
    assert v.facts["certified_optimum_algbw"] == v.facts["algbw"]
    for phase in doc["phases"]:
        for tree in phase["trees"]:
            for e in tree["edges"]:
                if (e["src"], e["dst"]) in t.capacity:
                    assert e["path"] == [e["src"], e["dst"]]
    assert not export_rate(doc, t).slower
    report = collcert.audit(t, msccl_xml(doc, topology=t))
    assert report.valid and report.algbw == v.facts["algbw"]


def test_routes_runtime_is_checked() -> None:
    """The issue's ForestColl schedule sends c3 -> c2 partly through s0: marked as on the
    runtime's routes, it fails naming the pair."""
    t = issue_topology()
    doc = collcert.schedule(t).to_json()
    doc["routes"] = "runtime"
    v = check_schedule(Topo(t.to_json()), doc)
    assert not v.ok and "direct link" in " ".join(v.all_reasons())


def test_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    topo = tmp_path / "t.json"
    topo.write_text(json.dumps(_random(0).to_json()))
    out = tmp_path / "rt.json"
    assert main(["schedule", str(topo), "--routes", "runtime", "--check", "--json",
                 "-o", str(out)]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["optimal"] and summary["routes"] == "runtime"
    gap = (Fraction(summary["runtime_routes_optimum_algbw"])
           / Fraction(summary["forestcoll_optimum_algbw"]))
    assert Fraction(summary["gap"]) == gap < 1
    assert main(["check", str(topo), str(out)]) == 0
    capsys.readouterr()
    assert main(["schedule", str(topo), "--routes", "runtime", "-c", "broadcast"]) == 2
