"""collcert schedules exported as MSCCL++ execution plans (reference.execution.mscclpp_export):
every export audits VALID, by the independent MSCCL++ simulator, at the rate of the schedule
it came from, in place and out of place, over memory and port channels (docs/mscclpp.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import collcert
from collcert.auditing import audit
from collcert.certify.execution import mscclpp, mscclpp_sim
from collcert.certify.model import InputError
from collcert.cli import main
from collcert.commands._common import load_topology
from collcert.reference.execution import SlowExportError, mscclpp_json
from collcert.reference.model import ScheduleError

CASES = [(p, c) for p in ("dgx_a100:1", "ring:4", "torus:3x3")
         for c in ("allgather", "reduce-scatter", "allreduce")] + [
    ("ring:4", "broadcast"), ("torus:3x3", "reduce"), ("dgx_a100:1", "reduce")]


@pytest.mark.parametrize("platform, coll", CASES)
def test_exports_audit_at_the_schedules_rate(platform: str, coll: str) -> None:
    topo = load_topology(platform)
    root = topo.compute_nodes[1] if coll in ("broadcast", "reduce") else None
    sched = collcert.schedule(topo, coll, root=root)
    rate = 1 / sched.time_per_unit  # the schedule's own, proven by its checkers
    # both call modes and both channel kinds move the same data (the simulator shows it);
    # the audit (its slow part is the certified optimum) runs on one of the four
    texts = {(inplace, ch): mscclpp_json(sched, inplace=inplace, channel=ch)
             for inplace in (False, True) for ch in ("memory", "port")}
    runs = {k: mscclpp_sim.run(mscclpp.read(t)) for k, t in texts.items()}
    assert all(r.verdict.ok for r in runs.values())
    assert len({tuple(sorted(r.traffic.items())) for r in runs.values()}) == 1
    for (inplace, _), text in texts.items():
        assert json.loads(text)["inplace"] is inplace
    report = audit(topo, texts[(True, "port")])
    assert report.format == "mscclpp-json"
    assert report.valid, report.reasons
    assert report.algbw == rate


def test_the_plan_keeps_the_executors_limits() -> None:
    topo = load_topology("torus:3x3")
    doc = json.loads(mscclpp_json(collcert.schedule(topo, "allreduce"), inplace=True))
    for g in doc["gpus"]:
        for tb in g["threadblocks"]:
            assert len(tb["ops"]) <= mscclpp.MAX_OPERATION
            for c in tb["channels"]:
                assert len(c["channel_ids"]) <= mscclpp.MAX_CHANNEL
    # every signal is waited for and every device semaphore released as often as acquired,
    # whichever threadblocks run first
    plan = mscclpp.read(json.dumps(doc))
    assert mscclpp_sim.run(plan).verdict.ok and mscclpp_sim.run(plan, backwards=True).verdict.ok


def test_a_broken_export_is_caught() -> None:
    # the audit is not a formality: drop one receive's copy and the simulator names it
    topo = load_topology("ring:4")
    doc = json.loads(mscclpp_json(collcert.schedule(topo, "allgather")))
    ops = doc["gpus"][2]["threadblocks"][0]["ops"]
    i = next(k for k, o in enumerate(ops) if o["name"] == "copy")
    del ops[i]
    report = audit(topo, json.dumps(doc))
    assert not report.valid
    assert any("rank 2 output chunk" in r and "holds nothing" in r for r in report.reasons)


def test_a_rooted_plan_names_its_root() -> None:
    topo = load_topology("ring:4")
    doc = json.loads(mscclpp_json(collcert.schedule(topo, "broadcast", root=topo.compute_nodes[2])))
    assert doc["root"] == 2 and mscclpp.read(json.dumps(doc)).root == 2
    # every rank declares both buffers: the executor divides by the chunk counts
    assert all(g["input_chunks"] == g["output_chunks"] > 0 for g in doc["gpus"])
    del doc["root"]
    with pytest.raises(InputError, match="a broadcast plan must name its root rank"):
        mscclpp.read(json.dumps(doc))


def test_other_collectives_are_refused() -> None:
    topo = load_topology("ring:4")
    with pytest.raises(ScheduleError, match="not alltoall"):
        mscclpp_json({**collcert.schedule(topo, "allgather").to_json(), "collective": "alltoall"})


def test_the_command_writes_a_plan(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "ar.json"
    assert main(["schedule", "ring:4", "--collective", "allreduce", "--format", "mscclpp-json",
                 "--in-place", "--mscclpp-channel", "port", "-o", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["collective"] == "allreduce" and doc["inplace"] is True
    assert {c["channel_type"] for g in doc["gpus"] for c in g["channels"]} == {"port"}
    capsys.readouterr()
    assert main(["audit", "ring:4", str(out), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["algbw"] == "4/3"


def test_a_slower_export_is_said_and_refused_under_strict(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # issue 22's 5-GPU machine: c3 -> c2 has a direct link of 2 and a path through s0; a plan
    # names ranks, so the runtime sends all of that pair's traffic over the link
    from test_export_rate import issue_topology

    topo = issue_topology()
    path = tmp_path / "issue.json"
    path.write_text(json.dumps(topo.to_json()))
    out = tmp_path / "ag.json"
    # --routes forestcoll keeps ForestColl's schedule (--routes auto writes the faster
    # schedule on the runtime's routes instead: tests/test_runtime_routes.py)
    args = ["schedule", str(path), "-c", "allgather", "--format", "mscclpp-json", "-o", str(out),
            "--routes", "forestcoll"]
    assert main([*args, "--strict"]) == 1 and not out.exists()
    assert "refused (--strict)" in capsys.readouterr().err
    assert main(args) == 0
    assert "the exported program runs at algbw 15/2" in capsys.readouterr().err
    report = audit(topo, out.read_text())
    assert report.valid and report.algbw == 15 / 2  # what the warning said, audited
    sched = collcert.schedule(topo, "allgather")
    with pytest.raises(SlowExportError, match="c3 -> c2"):  # the Python API refuses
        mscclpp_json(sched)
    assert mscclpp_json(sched, strict=False) == out.read_text()


def test_fuzz_plans_audit_at_the_schedule_rate_or_say_why_not() -> None:
    """Property: on random switch topologies (collcert.fuzz, small capacities), in both call
    modes, the plan is VALID and its audited time is the schedule's, or the export says it
    is slower, with exactly the audited time."""
    from collcert.fuzz.generators import RandomSource, random_topology
    from collcert.reference.execution import export_rate

    slower = exported = 0
    for seed in range(80):
        if exported >= 4 and slower >= 2:
            break
        t = random_topology(RandomSource(f"mscclpp-rate:{seed}"), max_nodes=6,
                            kinds=["switched_cycles", "switched", "boxes"], capacities="small")
        for coll in ("allgather", "reduce-scatter", "allreduce"):
            try:
                s = collcert.schedule(t, coll)
            except ScheduleError:
                continue
            if max(p.k for p in s.phases) * t.num_compute > 30:
                continue  # thousands of ops: slow to simulate here
            rate = export_rate(s, t)
            if exported >= 4 and not rate.slower:
                continue  # enough at the schedule's rate: look for slower ones
            for inplace in (False, True):
                try:
                    text = mscclpp_json(s, inplace=inplace)
                    assert not rate.slower
                except SlowExportError:
                    assert rate.slower
                    text = mscclpp_json(s, inplace=inplace, strict=False)
                report = audit(t, text)
                assert report.valid, report.reasons
                audited = report.time_per_unit
                assert audited is not None
                if rate.slower:
                    assert audited == rate.export_time > s.time_per_unit
                elif not rate.multicast:
                    assert audited <= s.time_per_unit
            exported += 1
            slower += rate.slower
    assert exported >= 4 and slower >= 2  # the property was tried, on slow exports too


def test_an_lp_allreduce_plan_exports_too() -> None:
    # plan_mscclpp takes any execution plan: here LP (5)'s reduce and broadcast trees, which
    # run at the same time (its threadblocks then wait on each other by device semaphores)
    from collcert.reference.allreduce import lp_schedule
    from collcert.reference.execution import lp_plan, plan_mscclpp

    topo = load_topology("ring:4")
    s = lp_schedule(topo)
    for inplace in (False, True):
        report = audit(topo, json.dumps(plan_mscclpp(lp_plan(s), inplace=inplace)))
        assert report.valid and report.time_per_unit == s.time_per_unit


def test_the_command_writes_lp_plans(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "lp.json"
    assert main(["schedule", "torus:3x3", "-c", "allreduce", "--method", "lp", "--format",
                 "mscclpp-json", "--in-place", "--check", "-o", str(out)]) == 0
    assert "MSCCL++ plan:" in capsys.readouterr().out
    assert main(["audit", "torus:3x3", str(out), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert (result["algbw"], result["ratio"]) == ("9/4", "1")


def test_without_the_ready_handshake_a_rank_runs_into_the_next_call(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # the checker runs a second call on what the first left: a rank that starts its next
    # call may put into a scratch slot its peer's previous call still reads
    from collcert.reference.execution import mscclpp_export

    topo = load_topology("torus:3x3")
    sched = collcert.schedule(topo, "allgather")
    assert mscclpp_sim.run(mscclpp.read(mscclpp_json(sched))).verdict.ok
    make_streams = mscclpp_export._Compiler.make_streams

    def without_handshake(self: mscclpp_export._Compiler) -> None:
        make_streams(self)
        for stream in self.streams.values():
            stream.greeted = True  # no sender waits for "ready"
        for tbs in self.tbs:
            for tb in tbs:
                tb.ready.clear()  # and no receiver signals it

    monkeypatch.setattr(mscclpp_export._Compiler, "make_streams", without_handshake)
    text = mscclpp_json(sched)
    reasons = mscclpp_sim.run(mscclpp.read(text)).verdict.reasons
    assert any(r.startswith("in the next call: ") and "(put): overwrites " in r and
               "still to be read by" in r for r in reasons), reasons[:3]
