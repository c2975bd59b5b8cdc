"""Issue 22: `--routes runtime` at scale (cut generation) and for allreduce (RS then AG)."""

from __future__ import annotations

import copy
import json
from fractions import Fraction
from pathlib import Path

import pytest
from test_export_rate import issue_topology
from test_runtime_routes import _random

import collcert
from collcert.auditing import audit
from collcert.certify.dispatch import check_certificate
from collcert.certify.forestcoll import check_schedule
from collcert.certify.model import InputError, Topo
from collcert.cli import main
from collcert.reference.execution import msccl_xml, mscclpp_json, runtime_optimum, runtime_schedule

MACHINES = [issue_topology, lambda: collcert.platforms.ring(4), lambda: _random(0),
            lambda: _random(2), lambda: _random(3), lambda: _random(9)]


@pytest.mark.parametrize("build", MACHINES)
def test_cut_generation_proves_the_full_lps_optimum(build: object) -> None:
    """Two formulations, one optimum: the full LP (a flow per sink) and the master LP with
    generated cut rows plus sink flows; both certificates are checked."""
    t = build()  # type: ignore[operator]
    for constrained in (True, False):
        full = runtime_optimum(t, constrained, method="lp")
        cuts = runtime_optimum(t, constrained, method="cuts")
        assert cuts.x == full.x
        cert = cuts.certificate()
        assert cert["method"] == "cuts" and any(
            r["name"].startswith("cut:") for r in cert["lp"]["rows"])
        kind, v = check_certificate(t.to_json(), cert)
        assert v.ok, v.all_reasons()
        assert v.facts["algbw"] == full.algbw


def _reasons(t: collcert.Topology, cert: dict) -> str:
    v = check_certificate(t.to_json(), cert)[1]
    assert not v.ok
    return " ".join(v.all_reasons())


def test_a_wrong_cut_certificate_fails_naming_what() -> None:
    t = _random(0)
    cert = runtime_optimum(t).certificate()
    bad = copy.deepcopy(cert)
    sink, flow = next(iter(bad["flows"].items()))
    arc = next(iter(flow))
    flow[arc] = str(Fraction(flow[arc]) / 2)  # a sink short of x
    assert "'flows'" in _reasons(t, bad)
    bad = copy.deepcopy(cert)
    del bad["flows"][sink]
    assert "'flows'" in _reasons(t, bad)
    bad = copy.deepcopy(cert)
    row = next(r for r in bad["lp"]["rows"] if r["name"].startswith("cut:"))
    row["coefs"]["x"] = "-1000"  # not the cut it names
    assert "not the runtime-routes LP" in _reasons(t, bad)
    bad = copy.deepcopy(cert)
    row = next(r for r in bad["lp"]["rows"] if r["name"].startswith("cut:"))
    row["name"] = "cut:" + ",".join(str(i) for i in range(t.num_compute))  # not proper
    with pytest.raises(InputError, match="proper, non-empty"):
        check_certificate(t.to_json(), bad)
    for key, value in (("algbw", "1000"), ("method", "lp")):
        assert not check_certificate(t.to_json(), dict(cert, **{key: value}))[1].ok


@pytest.mark.parametrize("build", [issue_topology, lambda: _random(0), lambda: _random(3)])
def test_allreduce_is_rs_then_ag_at_both_optima_and_exports_at_its_rate(build: object) -> None:
    t = build()  # type: ignore[operator]
    doc = runtime_schedule(t, "allreduce")
    v = check_schedule(Topo(t.to_json()), doc)
    assert v.ok, v.all_reasons()
    rs, ag = (runtime_optimum(t, collective=c).algbw for c in ("reduce-scatter", "allgather"))
    assert v.facts["algbw"] == v.facts["certified_optimum_algbw"] == 1 / (1 / rs + 1 / ag)
    assert [p["collective"] for p in doc["phases"]] == ["reduce-scatter", "allgather"]
    assert v.facts["algbw"] <= collcert.optimum(t, "allreduce").algbw
    for text in (msccl_xml(doc, topology=t), mscclpp_json(doc, topology=t)):
        report = audit(t, text)
        assert report.valid and report.algbw >= v.facts["algbw"]


def test_a_wrong_allreduce_certificate_fails_naming_the_field() -> None:
    t = issue_topology()
    cert = runtime_schedule(t, "allreduce")["certificates"]["runtime_routes"]
    assert check_certificate(t.to_json(), cert)[1].ok
    for key, value in (("algbw", "15"), ("time_per_unit", "1"), ("scope", "allreduce"),
                       ("constrained", False), ("speedup", "2")):
        assert f"'{key}'" in _reasons(t, dict(cert, **{key: value}))
    swapped = dict(cert, reduce_scatter=cert["allgather"], allgather=cert["reduce_scatter"])
    assert "collective" in _reasons(t, swapped)
    bad = copy.deepcopy(cert)
    bad["allgather"]["algbw"] = "100"
    assert "allgather: " in _reasons(t, bad)


def test_cli_allreduce(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    topo = tmp_path / "t.json"
    t = _random(0)
    topo.write_text(json.dumps(t.to_json()))
    out = tmp_path / "ar.json"
    assert main(["schedule", str(topo), "--routes", "runtime", "-c", "allreduce", "--check",
                 "--format", "mscclpp-json", "--strict", "--json", "-o", str(out)]) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["optimal"] and s["runtime_routes_optimum_scope"] == "reduce-scatter then allgather"
    assert Fraction(s["gap"]) == (Fraction(s["runtime_routes_optimum_algbw"])
                                  / Fraction(s["forestcoll_optimum_algbw"]))
    assert Fraction(s["algbw"]) <= Fraction(s["allreduce_upper_bound_algbw"])
    assert audit(t, out.read_text()).valid
    assert main(["schedule", str(topo), "--routes", "runtime", "-c", "allreduce"]) == 0
    text = capsys.readouterr().out
    assert "reduce-scatter-then-allgather" in text and "not proven" in text


def test_fuzz_runtime_routes_exports_audit_at_the_schedules_rate() -> None:
    """Property: on random switch topologies (collcert.fuzz, small capacities), every
    `--routes runtime` schedule (allgather, reduce-scatter, allreduce) exports to MSCCL
    (both call modes, audited together) and to MSCCL++ (in place and out of place) at its
    own rate: the strict exporters never refuse it as slower, and the audit is VALID at
    the schedule's time (allreduce: at most it, the audit overlapping the phases), or the
    export says why it cannot be written (the executor's limits)."""
    from collcert.fuzz.generators import RandomSource, random_topology
    from collcert.reference.execution import SlowExportError, export_rate
    from collcert.reference.model import ScheduleError

    exported = 0
    for seed in range(40):
        if exported >= 12:
            break
        t = random_topology(RandomSource(f"rt-export:{seed}"), max_nodes=6,
                            kinds=["switched_cycles", "switched", "boxes"], capacities="small")
        for coll in ("allgather", "reduce-scatter", "allreduce"):
            try:
                doc = runtime_schedule(t, coll)
            except ScheduleError:
                continue  # some GPU cannot reach another on these routes: said
            if max(p["k"] for p in doc["phases"]) * t.num_compute > 30:
                continue  # thousands of steps: beyond the executor, slow to simulate here
            assert not export_rate(doc, t).slower
            time = Fraction(doc["claimed"]["time_per_unit"])
            texts = []
            try:
                texts.append(msccl_xml(doc, topology=t))  # strict
                texts += [mscclpp_json(doc, inplace=i, topology=t) for i in (False, True)]
            except SlowExportError as exc:
                pytest.fail(f"a runtime-routes export refused as slower: {exc}")
            except ScheduleError:
                continue  # beyond the executor's limits: said, nothing written
            for text in texts:
                report = audit(t, text)
                assert report.valid, report.reasons
                assert report.time_per_unit is not None
                if coll == "allreduce":
                    assert report.time_per_unit <= time
                else:
                    assert report.time_per_unit == time
            exported += 1
    assert exported >= 12  # the property was tried


@pytest.mark.parametrize("coll", ["allgather", "allreduce"])
def test_forestcolls_schedule_is_taken_where_it_already_fits(coll: str) -> None:
    """torus:3x3 has no switch: ForestColl's trees use direct links only, so they are on the
    runtime's routes at ForestColl's optimum, which the constrained optimum cannot beat."""
    t = collcert.platforms.torus((3, 3))
    doc = runtime_schedule(t, coll)
    assert doc["routes"] == "runtime" and "optimum" in doc["certificates"]
    v = check_schedule(Topo(t.to_json()), doc)
    assert v.ok, v.all_reasons()
    solved = runtime_schedule(t, coll, method="cuts")
    assert "runtime_routes" in solved["certificates"]
    assert v.facts["algbw"] == Fraction(solved["claimed"]["algbw"])
