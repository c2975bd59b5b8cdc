"""The MSCCL++ executor's thread model (docs/mscclpp.md, "The executor's threads"): the
audit names each rule a plan breaks, and every barrier of MSCCL++'s own plans
(tests/data/mscclpp) removed in turn is found needed (a race, named) or shown not needed
(with why); smoke's adversarial order of the threads makes a missing barrier FAIL."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest

from collcert.certify.execution import mscclpp, mscclpp_sim, runtimes
from collcert.certify.execution.mscclpp_threads import why_unneeded
from collcert.smoke.mscclppplan import plan_from_mscclpp

DATA = Path(__file__).parent / "data" / "mscclpp"
EXPECTED = [e for e in json.loads((DATA / "expected.json").read_text())
            if e["verdict"] != "NOT SIMULATED"]


def _doc(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((DATA / name).read_text())
    return data


def _reasons(doc: dict[str, Any]) -> list[str]:
    return mscclpp_sim.run(mscclpp.read(json.dumps(doc))).verdict.reasons


def _without(doc: dict[str, Any], rank: int, tb: int, pos: int) -> dict[str, Any]:
    """``doc`` without op ``pos`` of (rank, tb); a barrier goes from every threadblock
    of the rank that meets at it (the same occurrence of its barrier_id)."""
    out = copy.deepcopy(doc)
    tbs = {t["id"]: t for t in out["gpus"][rank]["threadblocks"]}
    op = tbs[tb]["ops"][pos]
    if op["name"] != "barrier":
        del tbs[tb]["ops"][pos]
        return out
    nth = sum(1 for o in tbs[tb]["ops"][:pos] if o == op)
    for t in tbs.values():
        at = [i for i, o in enumerate(t["ops"]) if o == op]
        if len(at) > nth:
            del t["ops"][at[nth]]
    return out


def _representatives(doc: dict[str, Any]) -> list[tuple[int, int, int]]:
    """Every nop and barrier position of one threadblock per distinct op sequence (the
    plans are symmetric: other ranks' blocks of the same sequence behave alike; the full
    sweep is benchmarks/bench_mscclpp_barriers.py)."""
    seen, out = set(), []
    for g in doc["gpus"]:
        for t in g["threadblocks"]:
            sig = tuple((o["name"], o.get("channel_type")) for o in t["ops"])
            if sig in seen:
                continue
            seen.add(sig)
            out += [(g["id"], t["id"], i) for i, o in enumerate(t["ops"])
                    if o["name"] in ("nop", "barrier")]
    return out


# what removing each barrier of the representative blocks shows: the rule the audit
# names, or why the barrier is not needed (the first words of why_unneeded)
OUTCOMES = {
    "allgather_2gpu.json": ["start", "threads", "rule 1", "rule 2", "end"],
    "allgather_tbg_2gpu.json": ["start", "threads", "race", "rule 2", "end", "race",
                                "rule 2"],
    "allgather_2node_4gpu.json": ["start", "threads", "rule 1", "ordered", "threads",
                                  "threads", "rule 1", "rule 2", "threads", "end"],
    "reducescatter_2node_4gpu.json": ["start", "threads", "rule 1", "no new problem",
                                      "threads", "threads", "rule 1", "no new problem",
                                      "threads", "end"],
    "allreduce_4gpu.json": ["start", "threads", "rule 1", "rule 2", "threads", "end"],
    "allgather_pkt_4gpu.json": [],
    "allreduce_pkt_4gpu.json": [],
    # NVLS (INVALID already, rule 4): the nop after glres is rule 2, the one before it adds
    # nothing new to the relaxed handshake's race
    "allreduce_nvls_4gpu.json": ["start", "threads", "no new problem", "rule 2", "threads",
                                 "end"],
    "allgather_nvls_4gpu.json": ["start", "threads", "no new problem", "rule 2", "threads",
                                 "end"],
    "allgather_nvls_pkt_4gpu.json": [],
    "executor-tests_reduce.json": ["rule 2", "threads", "rule 1", "rule 3", "rule 2",
                                   "threads", "end", "rule 2", "threads", "rule 1", "rule 3",
                                   "rule 3", "rule 2", "threads", "end"],
    "execution-files_allreduce.json": ["rule 1", "rule 2"],
    "executor-tests_reduce_tbg.json": ["rule 2", "threads", "rule 1", "rule 3",
                                       "no new problem", "threads", "end", "rule 2",
                                       "threads", "no new problem", "rule 3", "rule 3",
                                       "no new problem", "threads", "end"],
}


def _same(reason: str) -> str:
    return re.sub(r"op \d+", "op N", reason)  # ops after the removed one move up by one


def _outcome(base: list[str], doc: dict[str, Any], at: tuple[int, int, int]) -> str:
    known = {_same(r) for r in base}
    new = [r for r in _reasons(_without(doc, *at)) if _same(r) not in known]
    if not new:
        kind = why_unneeded(mscclpp.read(json.dumps(doc)).tbs[at[:2]], at[2])[0]
        return "no new problem" if base and kind == "ordered" else kind
    first = new[0]
    assert "rank " in first and (" op " in first or "output" in first), first
    for rule in ("rule 1", "rule 2", "rule 3", "rule 4", "rule 5"):
        if rule in first:
            return rule
    assert "a race" in first or "deadlock" in first or "which no op" in first, first
    return "race"


@pytest.mark.parametrize("case", EXPECTED, ids=lambda c: c["plan"])
def test_each_barrier_removed_is_needed_or_shown_not_needed(case: dict[str, Any]) -> None:
    doc = _doc(case["plan"])
    base = _reasons(doc)
    got = [_outcome(base, doc, at) for at in _representatives(doc)]
    assert got == OUTCOMES[case["plan"]]


SMALL = ["allgather_2gpu.json", "allgather_tbg_2gpu.json", "allgather_2node_4gpu.json",
         "executor-tests_reduce.json"]


@pytest.mark.parametrize("name", SMALL)
def test_smoke_fails_where_a_removed_barrier_races_within_a_call(name: str) -> None:
    """Where the audit finds a race in the call itself, smoke's adversarial order of the
    threads gives a wrong result (races across calls are the audit's alone: smoke runs
    one call)."""
    doc = _doc(name)
    base = _reasons(doc)
    found = 0
    for at in _representatives(doc):
        mutant = _without(doc, *at)
        new = [r for r in _reasons(mutant) if r not in base]
        plan = plan_from_mscclpp(mscclpp.read(json.dumps(mutant)), tries=8)
        wrong = "it gives a wrong result on the host" in plan.notes[-1]
        if not new:
            assert plan.runnable and not wrong, (at, plan.notes[-1])
        elif any(not r.startswith("in the next call") for r in new):
            # the one race no output shows: rank 0's first copy reads input[2:4] into its
            # scratch, which nothing reads, while rank 1 may already put into input[2:4]
            assert wrong != ((name, at) == ("executor-tests_reduce.json", (0, 0, 1))), (
                at, new[0])
            found += wrong
    assert found >= 1


def _ops(doc: dict[str, Any], rank: int, tb: int = 0) -> list[dict[str, Any]]:
    ops: list[dict[str, Any]] = doc["gpus"][rank]["threadblocks"][tb]["ops"]
    return ops


def test_a_relaxed_signal_does_not_publish_data() -> None:
    # allgather_2gpu's last handshake (signal, wait) is what tells each rank the peer's put
    # into its output landed; relaxed, it orders execution only
    doc = _doc("allgather_2gpu.json")
    for rank in (0, 1):
        for op in _ops(doc, rank)[7:9]:
            op["name"] = "rlx" + op["name"]
    reasons = _reasons(doc)
    assert reasons[0] == ("rank 0 output chunk 1 is written by rank 1 tb 0 op 5 (put), which "
                          "no op of rank 0 waits for: its call may return before the data "
                          "lands (only relaxed signals order it: execution, not data (rule 4: "
                          "relaxed is not a fence))")


def test_a_flush_op_as_the_dsl_writes_it_flushes_nothing() -> None:
    """allgather_2node_4gpu's pwsf (put, signal, flush) split into pws and flush: the
    executor's handleFlush flushes op.nOutputs channels, the flush op's dst_buff entries,
    and the DSL writes none: the proxy may still read the source when the call returns.
    With a dst_buff, one thread flushes and the plan is valid again."""
    doc = _doc("allgather_2node_4gpu.json")
    for rank in range(4):
        ops = _ops(doc, rank)
        at = next(i for i, o in enumerate(ops) if o["name"] == "pwsf")
        ops[at]["name"] = "pws"
        ops.insert(at + 1, {"name": "flush", "channel_ids": ops[at]["channel_ids"],
                            "channel_type": "port"})
    reasons = _reasons(doc)
    assert any("rule 5: port data lands late" in r and "can read the user's next input" in r
               for r in reasons), reasons
    for rank in range(4):
        flush = next(o for o in _ops(doc, rank) if o["name"] == "flush")
        flush["dst_buff"] = [{"type": "o", "index": 0, "size": 1}]
    assert _reasons(doc) == []


def test_a_port_put_is_seen_through_a_signal_on_its_own_channel() -> None:
    """A port put's data lands when the proxy gets to it: the signal that follows it on
    the same channel (pws) tells the peer; a plain put (no signal) leaves the peer's wait
    on that channel unanswered."""
    doc = _doc("allgather_2node_4gpu.json")
    for rank in range(4):
        next(o for o in _ops(doc, rank) if o["name"] == "pwsf")["name"] = "put"
    reasons = _reasons(doc)
    assert reasons[0].startswith("deadlock: no op can run;") and "on port channel" in reasons[0]


def test_the_executors_profile_is_the_mscclpp_runtime() -> None:
    profile = runtimes.get("mscclpp", "mscclpp-json")
    assert profile.source.startswith("microsoft/mscclpp@1f5f065d")
    assert profile.export["port_put"] == "pwsf" and profile.export["nop_after_wait"]
    ok = profile.judge((DATA / "allgather_2gpu.json").read_text(), "ag")
    assert ok.ok and ok.calls == ["in-place allgather calls of 2 ranks"]
    doc = _doc("allgather_2gpu.json")
    _ops(doc, 0).extend({"name": "nop"} for _ in range(60))
    refused = profile.judge(json.dumps(doc), "ag")
    assert (refused.status, refused.rule) == ("refuses", "max-operations")
    assert "executor.cc:478" in refused.source and "70 ops" in refused.message
