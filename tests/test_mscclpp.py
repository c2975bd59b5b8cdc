"""MSCCL++ execution plans written by MSCCL++'s own DSL (tests/data/mscclpp, unchanged):
each audits as the folder's expected.json says, and mutants of them are refused naming
the op at fault (docs/mscclpp.md)."""

from __future__ import annotations

import copy
import hashlib
import json
import random
import re
from pathlib import Path
from typing import Any

import pytest

from collcert.auditing import audit
from collcert.certify.execution import mscclpp, mscclpp_sim
from collcert.certify.model import InputError
from collcert.cli import main
from collcert.commands._common import load_topology

DATA = Path(__file__).parent / "data" / "mscclpp"
EXPECTED = json.loads((DATA / "expected.json").read_text())


def test_the_plans_are_unchanged() -> None:
    listed = re.findall(r"^([0-9a-f]{64})  (\S+)$", (DATA / "PROVENANCE.md").read_text(), re.M)
    assert {name for _, name in listed} == {p.name for p in DATA.glob("*.json")} - {
        "expected.json"}
    for digest, name in listed:
        assert hashlib.sha256((DATA / name).read_bytes()).hexdigest() == digest, name


@pytest.mark.parametrize("case", EXPECTED, ids=lambda e: e["plan"])
def test_dsl_plans_audit_as_expected(case: dict[str, Any],
                                     capsys: pytest.CaptureFixture[str]) -> None:
    topology = case["topology"]  # a built-in, or a topology file of this folder
    if topology.endswith(".json"):
        topology = str(DATA / topology)
    code = main(["audit", topology, str(DATA / case["plan"]), "--json"])
    captured = capsys.readouterr()
    if case["verdict"] == "NOT SIMULATED":
        assert code == 2 and "which collcert does not simulate" in captured.err
        return
    out = json.loads(captured.out)
    if case["verdict"] == "INVALID":
        assert (code, out["verdict"]) == (1, "INVALID")
        assert any(case["reason"] in r for r in out["reasons"]), out["reasons"]
        return
    assert (code, out["verdict"], out["algbw"]) == (0, case["verdict"], case["algbw"])


def _plan(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((DATA / name).read_text())
    return data


def _run(doc: dict[str, Any]) -> mscclpp_sim.Result:
    return mscclpp_sim.run(mscclpp.read(json.dumps(doc)))


def _ops(doc: dict[str, Any], rank: int, tb: int) -> list[dict[str, Any]]:
    ops: list[dict[str, Any]] = doc["gpus"][rank]["threadblocks"][tb]["ops"]
    return ops


def _first(ops: list[dict[str, Any]], name: str) -> int:
    return next(i for i, o in enumerate(ops) if o["name"] == name)


def test_the_traffic_is_what_the_plan_moves() -> None:
    # all-pairs allreduce: every rank reads a quarter of the 32 chunks from each other rank
    # and writes the sums back: 8 + 8 chunks on each directed pair
    res = _run(_plan("allreduce_4gpu.json"))
    assert res.verdict.ok
    assert res.traffic == {(p, q): 16 for p in range(4) for q in range(4) if p != q}


def test_a_dropped_reduction_leaves_its_chunk_unsummed() -> None:
    doc = _plan("allreduce_4gpu.json")
    ops = _ops(doc, 1, 2)
    del ops[_first(ops, "rres")]
    res = _run(doc)
    assert not res.verdict.ok
    assert "output chunk 10 should hold the sum of chunk 10 of all ranks" in (
        res.verdict.reasons[0])


def test_a_wrong_chunk_index_is_a_race_naming_the_op() -> None:
    doc = _plan("allreduce_4gpu.json")
    ops = _ops(doc, 1, 2)
    ops[_first(ops, "rres")]["dst_buff"][1]["index"] += 1
    res = _run(doc)
    assert not res.verdict.ok
    assert "rank 1 tb 3 op 5 (rres): reads i[chunk 11] of rank 0, written by rank 1 tb 2 op 5" in (
        res.verdict.reasons[0])


def test_a_wrong_put_index_names_the_op_that_wrote_it() -> None:
    doc = _plan("allgather_2gpu.json")
    ops = _ops(doc, 0, 0)
    ops[_first(ops, "put")]["dst_buff"][0]["index"] = 1  # onto rank 1's own chunk
    reasons = " | ".join(_run(doc).verdict.reasons)
    assert "rank 0 tb 0 op 5 (put)" in reasons


def test_a_dropped_signal_deadlocks_naming_the_waiting_op() -> None:
    doc = _plan("allreduce_4gpu.json")
    ops = _ops(doc, 1, 2)
    del ops[_first(ops, "signal")]
    reasons = _run(doc).verdict.reasons
    assert reasons[0].startswith("deadlock: no op can run; rank 0 tb 2 op 9 (wait) waits for "
                                 "a signal from rank 1")


def test_a_dropped_wait_leaves_a_signal_for_the_next_call() -> None:
    doc = _plan("allgather_2gpu.json")
    ops = _ops(doc, 1, 0)
    del ops[_first(ops, "wait")]
    reasons = " | ".join(_run(doc).verdict.reasons)
    assert "rank 1's memory channel 0 (to rank 0) receives 1 signal(s) never waited for" in reasons


def test_without_the_final_wait_a_rank_may_return_early() -> None:
    # rank 0 drops its last wait and its matching signal is dropped on rank 1: rank 0's
    # kernel can end before rank 1's put into rank 0's output lands
    doc = _plan("allgather_2gpu.json")
    for rank in (0, 1):
        ops = _ops(doc, rank, 0)
        if rank == 0:
            del ops[len(ops) - 1 - _first(ops[::-1], "wait")]
        else:
            del ops[_first(ops, "signal")]
    reasons = " | ".join(_run(doc).verdict.reasons)
    assert "rank 0 output chunk 1 is written by rank 1 tb 0 op 5 (put), which no op of rank 0 " \
           "waits for" in reasons


def test_ll_packets_carry_their_own_synchronisation() -> None:
    # a dropped packet put: the peers' reductions wait for packets that never come
    doc = _plan("allreduce_pkt_4gpu.json")
    ops = _ops(doc, 1, 0)
    del ops[_first(ops, "ppkt")]
    reasons = _run(doc).verdict.reasons
    assert reasons[0].startswith("deadlock: no op can run; rank 0 tb 0 op 1 (respkt) waits for "
                                 "the packets of s[chunk 0]")
    # packets written twice into one place by two threadblocks: a race, named
    doc = _plan("allreduce_pkt_4gpu.json")
    ops = _ops(doc, 1, 0)
    ops[_first(ops, "respkt")]["dst_buff"][1]["index"] += 1  # onto tb 1's packets
    reasons = _run(doc).verdict.reasons
    assert reasons[0].startswith("rank 1 tb 1 op 1 (respkt): overwrites the packets of s[chunk "
                                 "13] of rank 0, written by rank 1 tb 0 op 1")


def test_a_barrier_short_of_a_threadblock_deadlocks() -> None:
    doc = _plan("allgather_tbg_2gpu.json")
    tbs = doc["gpus"][0]["threadblocks"]
    ops = tbs[1]["ops"]
    del ops[_first(ops, "barrier")]
    reasons = _run(doc).verdict.reasons
    assert reasons[0].startswith("deadlock") and "waits at barrier" in reasons[0]


def test_too_many_ops_in_a_threadblock_are_refused() -> None:
    doc = _plan("allgather_2gpu.json")
    _ops(doc, 0, 0).extend({"name": "nop"} for _ in range(60))
    reasons = _run(doc).verdict.reasons
    assert "rank 0 tb 0 has 70 ops; the executor loads at most 64" in reasons[0]


@pytest.mark.parametrize("edit, needle", [
    (lambda d: d.update(collective="alltoall"), "collcert audits allgather"),
    (lambda d: d["gpus"][0]["threadblocks"][0]["ops"].append({"name": "frob"}),
     "unknown operation 'frob'"),
    (lambda d: d["gpus"][0]["threadblocks"][0]["ops"][1].update(channel_ids=[5]),
     "rank 0 tb 0 op 1: channel id 5"),
    (lambda d: d.update(gpus=d["gpus"][:1]), "1 gpus"),
    # found by mutating plans at random: a list where a buffer type belongs
    (lambda d: d["gpus"][0]["threadblocks"][0]["ops"][5]["src_buff"][0].update(type=["o"]),
     "buffer type \"['o']\""),
])
def test_unreadable_plans_are_input_errors(edit: Any, needle: str) -> None:
    doc = copy.deepcopy(_plan("allgather_2gpu.json"))
    edit(doc)
    with pytest.raises(InputError, match=re.escape(needle)):
        mscclpp.read(json.dumps(doc))


def test_the_format_is_detected() -> None:
    report = audit(load_topology("complete:2"), (DATA / "allgather_2gpu.json").read_text())
    assert report.valid and report.format == "mscclpp-json"


def test_a_buffer_of_no_chunks_is_refused() -> None:
    doc = _plan("allgather_2gpu.json")
    for g in doc["gpus"]:
        g["input_chunks"] = 0
    reasons = _run(doc).verdict.reasons
    assert "the executor divides the buffer sizes by both" in reasons[0]


@pytest.mark.parametrize("name", [e["plan"] for e in EXPECTED if e["verdict"] != "NOT SIMULATED"])
def test_another_interleaving_gives_the_same_verdict(name: str) -> None:
    # the ordering checks make the verdict independent of the interleaving run
    plan = mscclpp.read((DATA / name).read_text())
    ahead, behind = mscclpp_sim.run(plan), mscclpp_sim.run(plan, backwards=True)
    assert ahead.verdict.ok == behind.verdict.ok
    assert ahead.traffic == behind.traffic


def test_a_semaphore_listed_twice_is_acquired_twice() -> None:
    doc = _plan("allgather_2gpu.json")
    doc["gpus"][0]["semaphores"] = [{"init_value": 1}]
    _ops(doc, 0, 0).append({"name": "sem_acquire", "semaphore_ids": [0, 0]})
    reasons = _run(doc).verdict.reasons
    assert reasons[0] == ("deadlock: no op can run; rank 0 tb 0 op 10 (sem_acquire) waits to "
                          "acquire device semaphore 0")
    _ops(doc, 0, 0)[-1]["semaphore_ids"] = [3]
    assert "which rank 0 does not declare" in _run(doc).verdict.reasons[0]


def test_random_mutations_give_verdicts_or_input_errors() -> None:
    """Odd plans (ops dropped or copied, fields set to odd values) are read and run without
    an internal error: a verdict, or an InputError that names what is wrong."""
    rng = random.Random(22)
    odd: list[Any] = [-1, 0, 1, 3, 64, 10**12, None, "x", [], {}, 1.5, True, "port", "s"]
    plans = [_plan(e["plan"]) for e in EXPECTED if e["verdict"] != "NOT SIMULATED"]
    for _ in range(80):
        doc = copy.deepcopy(rng.choice(plans))
        g = rng.choice(doc["gpus"])
        tb = rng.choice(g["threadblocks"])
        target: Any = rng.choice([doc, g, tb] + tb["ops"] + [
            b for o in tb["ops"] for b in o.get("src_buff", []) + o.get("dst_buff", [])])
        if rng.random() < 0.2 and tb["ops"]:
            tb["ops"].insert(rng.randrange(len(tb["ops"])), tb["ops"].pop())
        target[rng.choice(list(target))] = rng.choice(odd)
        try:
            plan = mscclpp.read(json.dumps(doc))
        except InputError:
            continue
        mscclpp_sim.run(plan)
