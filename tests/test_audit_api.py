"""``collcert.audit`` / ``audit_file`` and the ``collcert audit`` command."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys
from fractions import Fraction
from typing import Any

import pytest
from test_certify_msccl import allpairs_allreduce, ring_allgather
from test_certify_schedule import complete_allgather
from test_certify_schedule import ring_allgather as ring_trees

import collcert
from collcert import ScheduleError, platforms
from collcert.auditing import AuditReport, audit, route
from collcert.cli import main


@pytest.fixture(scope="module")
def a100_schedule() -> Any:
    return collcert.schedule(platforms.dgx_a100(2), "allgather")


def test_collcert_schedule_is_valid_and_optimal(a100_schedule: Any) -> None:
    r = audit(platforms.dgx_a100(2), a100_schedule.to_json())
    assert isinstance(r, AuditReport)
    assert r.valid, r.reasons
    assert r.algbw == r.optimum_algbw == Fraction(1040, 3)  # verified value
    assert r.ratio == 1 and r.time_per_unit == Fraction(3, 1040)
    j = r.to_json()
    assert j["algbw"] == "1040/3" and j["ratio"] == "1" and j["time_per_unit"] == "3/1040"
    json.dumps(j)


def test_forestcoll_xml_round_trip(a100_schedule: Any) -> None:
    r = audit(platforms.dgx_a100(2), a100_schedule.to_forestcoll_xml())
    assert r.valid and r.format == "forestcoll-xml" and r.ratio == 1


def test_allreduce_xml_has_two_phases() -> None:
    t = platforms.ring(5)
    s = collcert.schedule(t, "allreduce")
    r = audit(t, s.to_forestcoll_xml())
    assert r.valid, r.reasons
    assert r.collective == "allreduce" and r.algbw == Fraction(5, 4)


def test_allreduce_without_lp5_says_rsag_is_not_proven_optimal(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """When LP (5) is too large to solve, the figure an allreduce is compared with
    is RS+AG's: the report must not call it the certified optimum."""
    import collcert.reference.allreduce.lp5_cuts as lp5_cuts

    t = platforms.ring(5)
    s = collcert.schedule(t, "allreduce").to_json()
    solved = audit(t, s)
    assert solved.optimum_kind == "certified" and "(certified)" in solved.summary()
    monkeypatch.setattr(lp5_cuts, "BYTES_PER_WITNESS_ARC", 1 << 60)  # refused as too large
    r = audit(t, s)
    assert r.valid and r.optimum_algbw == solved.algbw
    assert "not proven optimal" in r.optimum_kind
    assert "(certified)" not in r.summary() and "not proven optimal" in r.summary()
    assert r.to_json()["optimum_kind"] == r.optimum_kind


def test_hand_made_schedules() -> None:
    r = audit(platforms.ring(4), ring_trees(4))
    assert r.valid and r.algbw == Fraction(8, 3) and r.ratio == 1
    r = audit(platforms.complete(3), complete_allgather(3))
    assert r.valid and r.ratio == 1
    # the same ring trees on complete(4) use only ring links: 3/8 time vs optimum 1/4
    r = audit(platforms.complete(4), ring_trees(4))
    assert r.valid and r.ratio == Fraction(8, 3) / 4


def test_invalid_schedule_report(a100_schedule: Any) -> None:
    d = a100_schedule.to_json()
    d["phases"][0]["trees"][0]["edges"].pop()
    r = audit(platforms.dgx_a100(2), d)
    assert not r.valid and r.reasons and r.algbw is None and r.ratio is None
    assert r.to_json()["verdict"] == "INVALID"


def test_msccl_ring_on_direct_links() -> None:
    r = audit(platforms.ring(4), ring_allgather(4))
    assert r.valid and r.format == "msccl-xml"
    assert "direct links" in r.routing
    # each ring link carries 3 chunks of 1/4: time 3/4; optimum 8/3 → ratio 1/2
    assert r.time_per_unit == Fraction(3, 4) and r.ratio == Fraction(1, 2)


@pytest.mark.parametrize("proto, wire", [("LL", 2), ("LL128", Fraction(16, 15))])
def test_msccl_ll_protocols_give_the_wire_time(proto: str, wire: Fraction) -> None:
    """LL puts 4 bytes of data in each 8-byte line, LL128 120 in 128: the report's time
    counts data, and a note gives the time with the flags counted."""
    r = audit(platforms.ring(4), ring_allgather(4).replace('proto="Simple"', f'proto="{proto}"'))
    assert r.valid and r.time_per_unit == Fraction(3, 4)
    note = next(n for n in r.notes if n.startswith(f"protocol {proto}:"))
    t = Fraction(3, 4) * wire
    assert f"time per unit {t.numerator}/{t.denominator}, algbw {t.denominator}/" in note


def test_msccl_through_switches_uses_certified_routing() -> None:
    t = platforms.dgx_a100(2)
    r = audit(t, ring_allgather(16))
    assert r.valid, r.reasons
    assert "certified optimal exactly" in r.routing
    # two ring hops cross boxes, 15/16 of the data each way over 8 NICs of 25 GB/s
    assert r.time_per_unit == Fraction(15, 16) / 200


def test_msccl_allreduce_on_complete_graph_is_optimal() -> None:
    r = audit(platforms.complete(4), allpairs_allreduce(4))
    assert r.valid and r.time_per_unit == Fraction(1, 2) and r.ratio == 1


def test_msccl_ranks_mapping(tmp_path: pathlib.Path) -> None:
    t = platforms.ring(4)
    f = tmp_path / "ranks.txt"
    f.write_text("3\n2\n1\n0\n")  # the ring the other way round: still direct links
    r = audit(t, ring_allgather(4), ranks=str(f))
    assert r.valid and "direct links" in r.routing and r.time_per_unit == Fraction(3, 4)
    # rank order 0, 2, 1, 3: the ring sends 0->2, 2->1, 1->3, 3->0 (3/4 of the data each);
    # 2->1 and 3->0 are links; 0->2 via 0->1->2 and 1->3 via 1->0->3 use four other directed
    # links once each, so no link carries more than 3/4: time 3/4 (the LP dual proves it)
    r = audit(t, ring_allgather(4), ranks=[0, 2, 1, 3])
    assert r.valid and "certified optimal exactly" in r.routing
    assert r.time_per_unit == Fraction(3, 4)
    with pytest.raises(ScheduleError, match="not a compute node"):
        audit(t, ring_allgather(4), ranks=["0", "1", "2", "9"])


def test_route_lp_is_certified() -> None:
    t = platforms.two_box_example()
    demands = {("c1.1", "c2.1"): Fraction(1), ("c1.2", "c2.2"): Fraction(1, 2)}
    time, lower, how, verdict, bottleneck = route(t, demands)
    # 3/2 units must cross to box 2 over the four w0 up-links of box 1 (capacity 1 each;
    # c1.1 spreads over its box through w1): time 3/8, and the LP dual proves no better
    assert time == lower == Fraction(3, 8) and verdict is not None and verdict.ok
    assert "carries 3/8 per unit of data at capacity 1" in bottleneck


def _cli(*args: str) -> tuple[int, str]:
    import contextlib
    import io

    buf = io.StringIO()
    err = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(err):
        code = main(["audit", *args])
    return code, buf.getvalue() + err.getvalue()


def test_cli_exit_codes(tmp_path: pathlib.Path, a100_schedule: Any) -> None:
    good = tmp_path / "ag.json"
    good.write_text(json.dumps(a100_schedule.to_json()))
    code, out = _cli("dgx_a100:2", str(good))
    assert code == 0 and "VALID" in out and "1040/3" in out
    code, out = _cli("dgx_a100:2", str(good), "--json")
    assert code == 0 and json.loads(out)["ratio"] == "1"
    d = a100_schedule.to_json()
    d["phases"][0]["trees"][3]["multiplicity"] += 1
    badf = tmp_path / "bad.json"
    badf.write_text(json.dumps(d))
    code, out = _cli("dgx_a100:2", str(badf))
    assert code == 1 and "INVALID" in out and "not k = 13" in out
    code, out = _cli("dgx_a100:2", str(tmp_path / "missing.json"))
    assert code == 2 and "no such file" in out
    xml = tmp_path / "ring.xml"
    xml.write_text(ring_allgather(4))
    code, out = _cli("ring:4", str(xml), "--format", "msccl-xml", "--json")
    assert code == 0 and json.loads(out)["time_per_unit"] == "3/4"


def test_cli_help_runs_as_a_program() -> None:
    out = subprocess.run([sys.executable, "-m", "collcert", "audit", "--help"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "VALID" in out.stdout and "--ranks" in out.stdout


def test_public_audit_names_stay_the_functions() -> None:
    # ``collcert.audit`` is the public function; the code lives in ``collcert.auditing``,
    # so no submodule shares its name and importing the package cannot replace it.
    script = (
        "import collcert, collcert.auditing\n"
        "from collcert.auditing import audit, audit_file\n"
        "assert callable(collcert.audit) and collcert.audit is audit, collcert.audit\n"
        "assert collcert.audit_file is audit_file\n"
        "assert collcert.AuditReport.__name__ == 'AuditReport'\n"
        "import importlib.util\n"
        "assert importlib.util.find_spec('collcert.audit') is None\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True)
    assert callable(collcert.audit) and collcert.audit is audit


def test_schedule_for_another_topology_names_the_one_it_was_made_for(tmp_path: Any,
                                                                     capsys: Any) -> None:
    doc = collcert.schedule(platforms.ring(4), "allgather").to_json()
    path = tmp_path / "ring4.json"
    path.write_text(json.dumps(doc))
    for argv in (["audit", "ring:5", str(path)], ["audit", "complete:3", str(path)],
                 ["draw", "complete:3", str(path), "-o", str(tmp_path / "x.png")]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert "made for 'ring(4)'" in err and doc["topology"][:19] in err, (argv, err)
    # the hint comes only when the recorded topology differs
    with pytest.raises(ScheduleError) as exc:
        audit(platforms.ring(4), {**doc, "phases": "x"})
    assert "made for" not in str(exc.value)


# --------------------------------------------------------------------------- #
# steady-state broadcast schedules (collcert-steady-broadcast/1): the Python API
# audits them on their one-port platform, as 'collcert audit PLATFORM FILE' does
# --------------------------------------------------------------------------- #
@pytest.fixture(scope="module")
def steady_fig1() -> tuple[Any, dict[str, Any]]:
    from collcert.reference.broadcast import paper_fig1, steady_broadcast

    platform = paper_fig1()
    return platform, steady_broadcast(platform, "s").to_json()


def test_steady_broadcast_schedule_audits_valid_from_python(
        tmp_path: pathlib.Path, steady_fig1: tuple[Any, dict[str, Any]],
        capsys: pytest.CaptureFixture[str]) -> None:
    from collcert.auditing import SteadyBroadcastReport

    platform, doc = steady_fig1
    path = tmp_path / "bs.json"
    path.write_text(json.dumps(doc))
    for r in (audit(platform, doc), audit(platform, json.dumps(doc)),
              audit(platform.to_json(), doc), collcert.audit_file(platform, path)):
        assert isinstance(r, SteadyBroadcastReport) and isinstance(r, AuditReport)
        assert r.valid and r.reasons == []
        assert (r.collective, r.format) == ("broadcast", "steady-broadcast")
        assert r.throughput == 1 and r.period == 2  # Legrand et al. 2003, Fig. 1: TP = 1
        assert isinstance(r.throughput, Fraction) and isinstance(r.period, Fraction)
    # the file's report says what the command prints, and --json gives its to_json()
    assert main(["audit", "fig1", str(path)]) == 0
    assert capsys.readouterr().out == r.summary() + "\n"
    assert main(["audit", "fig1", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == r.to_json()


def test_tampered_steady_broadcast_schedule_is_invalid_with_the_reason(
        steady_fig1: tuple[Any, dict[str, Any]]) -> None:
    platform, doc = steady_fig1
    bad = dict(doc, throughput="2")  # claims twice the proven optimum
    r = audit(platform, bad)
    assert not r.valid and r.throughput is None and r.period is None
    assert any("the claimed throughput 2 is not 1/T* = 1" in reason for reason in r.reasons)
    assert r.summary().startswith("INVALID steady-state broadcast schedule:")
    assert r.to_json()["valid"] is False


def test_steady_broadcast_schedule_needs_its_platform(
        steady_fig1: tuple[Any, dict[str, Any]], a100_schedule: Any) -> None:
    platform, doc = steady_fig1
    with pytest.raises(ScheduleError, match="one-port platform"):
        audit(platforms.dgx_a100(2), doc)
    with pytest.raises(ScheduleError, match="audits only steady-state broadcast"):
        audit(platform, a100_schedule.to_json())
    with pytest.raises(TypeError):
        audit({"compute_nodes": ["a", "b"]}, doc)
