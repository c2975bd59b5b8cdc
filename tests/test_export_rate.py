"""Issue 22 item 1: no export runs slower than its schedule without saying so.

The issue's 5-GPU topology: the allgather schedule reaches its certified optimum 15,
its MSCCL export audits at 15/2 (c3 sends 4/15 per unit of data to c2; the schedule
sends half of it through s0, the runtime all of it over the direct link of capacity 2).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import collcert
from collcert.cli import main
from collcert.fuzz.generators import RandomSource, random_topology
from collcert.reference.execution import SlowExportError, export_rate, msccl_xml
from collcert.reference.model import ScheduleError, Topology

ISSUE = ("c4>c2 5, c2>c0 3, c0>s1 7, s1>c3 5, c3>s0 8, s0>c1 5, c1>c4 3, c2>c3 8, s0>c4 5, "
         "c4>c0 5, c0>c1 4, c1>c2 4, c0>c2 1, c2>c1 1, c1>c3 1, c1>s1 2, s1>c4 2, c4>c1 4, "
         "s1>s0 2, s0>c2 2, c3>c4 4, c1>c0 4, c2>s0 2, c3>c2 2")


def issue_topology() -> Topology:
    links = []
    for item in ISSUE.split(","):
        arc, cap = item.split()
        a, b = arc.split(">")
        links.append((a, b, int(cap)))
    return Topology([f"c{i}" for i in range(5)], links, ["s0", "s1"], name="issue-22")


def test_issue_example_python_api_refuses() -> None:
    t = issue_topology()
    s = collcert.schedule(t, "allgather")
    assert s.algbw == collcert.optimum(t).algbw
    with pytest.raises(SlowExportError) as info:
        msccl_xml(s)
    rate = info.value.rate
    assert rate.pair is not None and rate.slower
    assert f"{rate.pair[0]} -> {rate.pair[1]}" in str(info.value)
    # the independent audit of the program written anyway gives the rate the refusal named
    report = collcert.audit(t, msccl_xml(s, strict=False))
    assert report.valid and report.time_per_unit == rate.export_time > s.time_per_unit
    # the pair named is a linked pair whose direct link alone is slower than the schedule
    assert rate.pair_data / rate.capacity == rate.export_time
    assert rate.pair in t.capacity


def test_issue_example_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # --routes forestcoll: ForestColl's program, written with a warning, refused by --strict
    topo = tmp_path / "topo.json"
    topo.write_text(json.dumps(issue_topology().to_json()))
    out = tmp_path / "ag.xml"
    assert main(["schedule", str(topo), "--format", "msccl-xml", "-o", str(out),
                 "--routes", "forestcoll"]) == 0
    err = capsys.readouterr().err
    assert "warning" in err and "direct link" in err and out.exists()
    strict = tmp_path / "strict.xml"
    assert main(["schedule", str(topo), "--format", "msccl-xml", "-o", str(strict),
                 "--strict", "--routes", "forestcoll"]) == 1
    err = capsys.readouterr().err
    assert "refused" in err and not strict.exists()


@pytest.mark.parametrize("fmt", ["msccl-xml", "mscclpp-json"])
def test_issue_example_default_writes_the_faster_runtime_routes_program(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str) -> None:
    # issue 29 item 6: the default export is the fastest program the runtime can run: the
    # ForestColl program would run at 15/2, the runtime-routes one runs at 15 and is written
    t = issue_topology()
    topo = tmp_path / "topo.json"
    topo.write_text(json.dumps(t.to_json()))
    out = tmp_path / "ag.prog"
    assert main(["schedule", str(topo), "--format", fmt, "-o", str(out), "--strict"]) == 0
    text = capsys.readouterr().out
    assert "would run at algbw 15/2" in text and "--routes forestcoll" in text
    report = collcert.audit(t, out.read_text(), fmt=fmt)
    assert report.valid and report.algbw == 15 == collcert.optimum(t).algbw


def test_dict_schedule_is_checked_with_its_topology() -> None:
    t = issue_topology()
    doc = collcert.schedule(t).to_json()
    msccl_xml(doc)  # no capacities without the topology: not checked
    with pytest.raises(SlowExportError):
        msccl_xml(doc, topology=t)


SWITCHED = ["switched_cycles", "switched", "boxes"]


def test_fuzz_export_audits_at_the_schedule_rate_or_says_why_not() -> None:
    """Property: on random switch topologies (collcert.fuzz, small capacities), in both call
    modes, the written program's audited time is the schedule's, or the export said it is
    slower, with exactly the audited time."""
    slower = exported = 0
    for seed in range(80):
        if exported >= 8 and slower >= 2:
            break
        t = random_topology(RandomSource(f"export-rate:{seed}"), max_nodes=7, kinds=SWITCHED,
                            capacities="small")
        for coll in ("allgather", "reduce-scatter", "allreduce"):
            try:
                s = collcert.schedule(t, coll)
            except ScheduleError:
                continue
            if max(p.k for p in s.phases) * t.num_compute > 40:
                continue  # a program of thousands of steps: beyond the executor, slow here
            rate = export_rate(s, t)
            assert rate.schedule_time == s.time_per_unit
            try:
                text = msccl_xml(s)  # strict: the Python API refuses a slower program
                strict_ok = True
            except SlowExportError:
                strict_ok = False
            except ScheduleError:
                continue  # beyond the executor's limits: said, nothing written
            if not strict_ok:
                text = msccl_xml(s, strict=False)
            exported += 1
            slower += rate.slower
            audited = collcert.audit(t, text).time_per_unit
            assert audited is not None
            assert strict_ok == (not rate.slower)
            if rate.slower:
                assert audited == rate.export_time > s.time_per_unit
            elif not rate.multicast:
                assert audited <= s.time_per_unit
                if coll != "allreduce":  # phases add up in the schedule, not in the audit
                    assert audited == s.time_per_unit
    assert exported >= 8 and slower >= 2  # the property was tried, on slow exports too
