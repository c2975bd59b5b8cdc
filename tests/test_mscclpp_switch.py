"""MSCCL++ switch (NVLS) channels in the audit (docs/mscclpp.md, "Switch channels"): the
DSL's NVLS plans get a verdict and their exact traffic on the GPU↔switch links; a
switch op through a switch that cannot add or copy, a missing nop and a broken channel
are refused, naming the op."""

from __future__ import annotations

import copy
import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from collcert.auditing import audit
from collcert.certify.execution import mscclpp, mscclpp_sim
from collcert.reference.model import Topology

DATA = Path(__file__).parent / "data" / "mscclpp"
STAR = json.loads((DATA / "topologies" / "nvswitch_4gpu.json").read_text())


def _plan(name: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((DATA / name).read_text())
    return doc


def _strong(doc: dict[str, Any]) -> dict[str, Any]:
    """The DSL's NVLS plan with its closing rlxsignal/rlxwait made signal/wait."""
    doc = copy.deepcopy(doc)
    for g in doc["gpus"]:
        for tb in g["threadblocks"]:
            for op in tb["ops"][6:]:
                if op["name"] in ("rlxsignal", "rlxwait"):
                    op["name"] = op["name"][3:]
    return doc


def _audit(doc: dict[str, Any], **topo: Any) -> Any:
    return audit(Topology.from_json({**STAR, **topo}), json.dumps(doc))


def test_the_dsl_nvls_allreduce_moves_five_quarters_of_m_on_every_gpu_link() -> None:
    res = mscclpp_sim.run(mscclpp.read(json.dumps(_plan("allreduce_nvls_4gpu.json"))))
    facts = res.verdict.facts["switch"]
    for r in range(4):  # 32 chunks up (its data) + 8 (its stores); 8 sums + 32 stores down
        assert facts[f"up|{r}|0,1,2,3"] == facts[f"down|{r}|0,1,2,3"] == 40
    assert facts["add|0,1,2,3"] == 32 and res.traffic == {}
    assert not res.verdict.ok and "(rule 4: relaxed is not a fence)" in res.verdict.reasons[0]


def test_with_strong_closing_signals_it_is_valid_at_four_fifths_of_the_link() -> None:
    report = _audit(_strong(_plan("allreduce_nvls_4gpu.json")))
    assert report.valid and report.algbw == 360, report.reasons
    # the in-network optimum of an NVLS switch joining 4 GPUs, 450·4/5: the DSL's plan
    # reaches it (a SHARP switch would reach the GPU's link, 450)
    assert report.optimum_algbw == 360 and report.ratio == 1


def test_a_reduction_rate_slows_the_plan_to_what_the_switch_adds() -> None:
    report = _audit(_strong(_plan("allreduce_nvls_4gpu.json")),
                    reduction_rates={"nvswitch": "200"})
    assert report.valid and report.algbw == 200  # it adds all of M once
    assert "reduction rate" in report.bottleneck[0]


@pytest.mark.parametrize("declare, plan, needle", [
    ({"nvls_switches": []}, "allreduce_nvls_4gpu.json",
     "rank 0 tb 0 op 5 (glres): multimem.ld_reduce adds in switch 'nvswitch'"),
    ({"nvls_switches": [], "multicast_switches": ["nvswitch"]}, "allreduce_nvls_4gpu.json",
     "does not declare it reducing"),
    ({"nvls_switches": []}, "allgather_nvls_pkt_4gpu.json",
     "rank 0 tb 0 op 1 (gstorepkt): multimem.st copies through switch 'nvswitch'"),
])
def test_a_switch_that_cannot_add_or_copy_is_refused(declare: dict[str, Any], plan: str,
                                                     needle: str) -> None:
    doc = _strong(_plan(plan)) if "allreduce" in plan else _plan(plan)
    report = _audit(doc, **declare)
    assert not report.valid and any(needle in r for r in report.reasons), report.reasons


def test_a_multicast_switch_serves_a_plan_that_only_copies() -> None:
    report = _audit(_plan("allgather_nvls_pkt_4gpu.json"), nvls_switches=[],
                    multicast_switches=["nvswitch"])
    assert report.valid and report.algbw == 450


def test_ranks_no_switch_joins_are_refused() -> None:
    links = [{"src": a, "dst": b, "capacity": 450, "bidirectional": True}
             for a in range(4) for b in range(a + 1, 4)]
    doc = _strong(_plan("allreduce_nvls_4gpu.json"))
    report = audit(Topology.from_json({"compute_nodes": [0, 1, 2, 3], "links": links}),
                   json.dumps(doc))
    assert not report.valid
    assert "no switch of the topology has a link to and from each of them" in report.reasons[0]


@pytest.mark.parametrize("drop, rule", [(4, "rule 1: wait before data"),
                                        (6, "rule 2: stores before signal")])
def test_a_missing_nop_around_a_switch_op_is_a_race(drop: int, rule: str) -> None:
    doc = _strong(_plan("allreduce_nvls_4gpu.json"))
    assert doc["gpus"][0]["threadblocks"][0]["ops"][drop]["name"] == "nop"
    del doc["gpus"][0]["threadblocks"][0]["ops"][drop]
    report = _audit(doc)
    assert not report.valid and any(rule in r and "(glres)" in r for r in report.reasons)


def test_switch_channels_the_executor_cannot_set_up_are_refused() -> None:
    doc = _plan("allreduce_nvls_4gpu.json")
    doc["gpus"][1]["channels"] = doc["gpus"][1]["channels"][:2]  # 1 switch channel, not 8
    for tb in doc["gpus"][1]["threadblocks"]:
        tb["channels"][1]["channel_ids"] = [0]
    plan = mscclpp.read(json.dumps(doc))
    assert any("rank 1 declares 1: the group's connectNvlsCollective" in r
               for r in plan.refusals), plan.refusals
    doc = _plan("allreduce_nvls_4gpu.json")
    doc["gpus"][0]["channels"][1]["rank_groups"][0]["ranks"] = [1, 2, 3]
    plan = mscclpp.read(json.dumps(doc))
    assert any("without rank 0" in r and "rank is not among allRanks" in r
               for r in plan.refusals)
    from collcert.certify.execution import runtimes

    judged = runtimes.get("mscclpp", "mscclpp-json").judge(json.dumps(doc), "file")
    assert not judged.ok and judged.rule == "switch-channel"


def test_a_glres_with_a_local_source_is_not_what_the_executor_runs() -> None:
    doc = _strong(_plan("allreduce_nvls_4gpu.json"))
    op = doc["gpus"][0]["threadblocks"][0]["ops"][5]
    op["src_buff"] = [{"type": "i", "index": 0, "size": 1}]
    report = _audit(doc)
    assert any("glres lists 1 source(s)" in r for r in report.reasons)


def test_gstorepkt_waits_for_the_flags_of_the_packets_it_reads() -> None:
    doc = _plan("allgather_nvls_pkt_4gpu.json")
    ops = doc["gpus"][0]["threadblocks"][0]["ops"]
    ops[0], ops[1] = ops[1], ops[0]  # the multicast before the packets are made: it waits
    res = mscclpp_sim.run(mscclpp.read(json.dumps(doc)))
    assert not res.verdict.ok and "deadlock" in res.verdict.reasons[0]
    assert "(gstorepkt) waits for the packets" in res.verdict.reasons[0]


def test_the_traffic_is_exact_shares_of_m() -> None:
    report = _audit(_strong(_plan("allreduce_nvls_4gpu.json")))
    assert report.time_per_unit == Fraction(5, 4) / 450


# -- smoke: the switch ops run on the host as the executor's threads would ----------------

def _host_right(doc: dict[str, Any]) -> tuple[Any, list[int]]:
    import numpy as np

    from collcert.reference.execution import run_host
    from collcert.reference.execution.execplan import expected_values
    from collcert.smoke.mscclppplan import plan_from_mscclpp

    plan = plan_from_mscclpp(mscclpp.read(json.dumps(doc)))
    assert plan.runnable, plan.problems
    outs = run_host(plan, 1)
    return plan, [r for r, o in enumerate(outs)
                  if o is not None and not np.array_equal(o, expected_values(plan.spec, r, 1))]


def test_smoke_sums_over_the_switch_and_stores_into_every_member() -> None:
    plan, wrong = _host_right(_strong(_plan("allreduce_nvls_4gpu.json")))
    assert wrong == [] and "give the collective's result" in plan.notes[-1]
    plan, wrong = _host_right(_plan("allgather_nvls_pkt_4gpu.json"))
    assert wrong == []


def test_smoke_shows_a_signal_sent_before_the_other_threads_stored() -> None:
    doc = _strong(_plan("allreduce_nvls_4gpu.json"))
    del doc["gpus"][0]["threadblocks"][0]["ops"][6]  # the nop between glres and signal
    plan, wrong = _host_right(doc)
    assert wrong != [] and "it gives a wrong result on the host" in plan.notes[-1]


# -- the export: an allreduce that adds in the switch (reference/execution/mscclpp_nvls) --

def _export(t: Topology, inplace: bool = False) -> str:
    from collcert.reference.execution import nvls_mscclpp_json

    return nvls_mscclpp_json(t, inplace=inplace)


@pytest.mark.parametrize("inplace", [False, True])
def test_the_nvls_export_of_one_h100_box_audits_valid_at_the_nvls_optimum(
        inplace: bool) -> None:
    from collcert import platforms
    from collcert.certify.execution import runtimes
    from collcert.reference.execution import nvls_rate

    t = platforms.dgx_h100(1)
    text = _export(t, inplace)
    report = audit(t, text)
    assert report.valid and report.algbw == 400 == nvls_rate(t, "b0.nvswitch"), report.reasons
    # the NVSwitch adds the NVLS way: 400 = 450·8/9 is the in-network optimum (ratio 1)
    assert report.optimum_algbw == 400 and report.ratio == 1
    assert runtimes.get("mscclpp", "mscclpp-json").judge(text, "file").ok
    doc = json.loads(text)
    name = doc["name"]
    assert name.startswith(f"collcert_allreduce_{'inplace' if inplace else 'outofplace'}")
    for g in doc["gpus"]:
        for tb in g["threadblocks"]:
            ops = [o["name"] for o in tb["ops"]]
            assert len(ops) <= 64
            for i, o in enumerate(ops):  # a nop (or barrier) on each side of a sync op
                if o in ("signal", "wait"):
                    assert ops[i - 1] in ("nop", "signal", "wait")
                    assert i + 1 == len(ops) or ops[i + 1] in ("nop", "signal", "wait")


def test_the_export_with_a_relaxed_closing_signal_is_refused() -> None:
    from collcert import platforms

    t = platforms.dgx_h100(1)
    doc = json.loads(_export(t))
    ops = doc["gpus"][0]["threadblocks"][0]["ops"]  # its peer: rank 1
    assert [o["name"] for o in ops[5:9]] == ["barrier", "glres", "barrier", "nop"]
    assert ops[9]["name"] == "signal"
    ops[9]["name"] = "rlxsignal"  # as the DSL's example closes
    report = audit(t, json.dumps(doc))
    assert not report.valid
    assert any(r.startswith("rank 1 output chunk 0 is written by rank 0 tb 0 op 6 (glres)")
               and "rule 4" in r for r in report.reasons), report.reasons[:2]


def test_a_plan_for_many_gpus_spreads_the_handshakes_over_its_threadblocks() -> None:
    from collcert import platforms
    from collcert.reference.execution import nvls_rate, nvls_switch

    t = platforms.gb200_nvl72(1)
    assert nvls_rate(t, nvls_switch(t)) == Fraction(900 * 72, 73)
    plan = mscclpp.read(_export(t))
    assert not plan.refusals and plan.ngpus == 72 and len(plan.tbs) == 72 * 8
    assert max(len(ops) for ops in plan.tbs.values()) <= 64


def test_the_nvls_export_runs_right_on_the_host() -> None:
    star = Topology.from_json(STAR)
    plan, wrong = _host_right(json.loads(_export(star)))
    assert wrong == [], plan.problems


def test_schedule_writes_the_nvls_plan_where_it_is_faster(tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]
                                                         ) -> None:
    from collcert.cli import main

    out = tmp_path / "ar.json"
    assert main(["schedule", "dgx_h100:1", "-c", "allreduce", "--format", "mscclpp-json",
                 "-o", str(out)]) == 0
    text = capsys.readouterr()
    assert "the NVLS plan is written; --method forestcoll writes the trees" in text.err
    assert json.loads(out.read_text())["gpus"][0]["channels"][1]["channel_type"] == "switch"
    assert main(["schedule", str(DATA / "topologies" / "nvswitch_4gpu.json"), "-c", "allreduce",
                 "--format", "mscclpp-json", "--method", "in-network", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    # 360 = 450·4/5: the NVLS optimum of 4 GPUs (docs/in-network.md)
    assert (summary["algbw"], summary["ratio_to_in_network"]) == ("360", "1")


@pytest.mark.parametrize("argv, needle", [
    (["dgx_h100:2", "-c", "allreduce", "--format", "mscclpp-json"],
     "no reducing switch is linked to and from every GPU"),
    (["dgx_h100:1", "-c", "allreduce", "--format", "json"], "add --format mscclpp-json"),
    (["dgx_h100:1", "-c", "reduce-scatter", "--format", "mscclpp-json"], "is for allreduce"),
    (["dgx_h100:1,none", "-c", "allreduce", "--format", "mscclpp-json"],
     "neither nvls_switches nor reducing_switches"),
    (["dgx_h100:1", "-c", "allreduce", "--format", "mscclpp-json", "--mscclpp-channel",
      "port"], "--mscclpp-channel port does not apply"),
])
def test_method_in_network_refuses_what_it_cannot_write(argv: list[str], needle: str,
                                                       capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    from collcert.cli import main

    assert main(["schedule", *argv, "--method", "in-network"]) == 2
    assert needle in capsys.readouterr().err
