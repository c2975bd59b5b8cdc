"""MSCCL++ exports that the executor's threads run as audited (issue 29): barriers (``nop``)
where MSCCL++'s DSL puts them, checked against plans the DSL wrote; a threadblock within
the executor's 64 ops; a plan name no other plan shares (docs/mscclpp.md)."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest

import collcert
from collcert.auditing import audit
from collcert.certify.execution import mscclpp, mscclpp_sim
from collcert.commands._common import load_topology
from collcert.reference.execution import dsl_passes, export_rate, mscclpp_json

DATA = Path(__file__).parent / "data" / "mscclpp"
COMPILED = DATA / "dsl-compiled"
SYNC = {"signal", "wait", "rlxsignal", "rlxwait", "flush", "sem_acquire", "sem_release"}
# DSL plans written with the DSL's default SyncType.both and without packets: collcert's
# passes give them exactly (the others chose SyncType.before/after, or read packets,
# where collcert puts more nops)
DEFAULT_SYNC = ["allreduce_4gpu.json", "allreduce_nvls_4gpu.json", "allgather_pkt_4gpu.json",
                "executor-tests_reduce.json", "executor-tests_reduce_tbg.json"]
Ops = list[dict[str, Any]]


def _tbs(doc: dict[str, Any]) -> list[tuple[int, int, Ops]]:
    return [(g["id"], tb["id"], tb["ops"]) for g in doc["gpus"] for tb in g["threadblocks"]]


def _sorted_ids(ops: Ops) -> Ops:
    # the DSL keeps a fused signal's (wait's) channels in a set: their order is not meant
    return [{**o, "channel_ids": sorted(o["channel_ids"])} if o["name"] in SYNC and
            "channel_ids" in o else {**o, "semaphore_ids": sorted(o["semaphore_ids"])}
            if "semaphore_ids" in o else o for o in ops]


def _unfused(ops: Ops) -> Ops:
    """The DSL calls that made ``ops``, one op each: fused ops split, nops dropped."""
    out: Ops = []
    for o in ops:
        if o["name"] in ("signal", "wait"):
            out += [{**o, "channel_ids": [c]} for c in o["channel_ids"]]
        elif o["name"] in ("sem_acquire", "sem_release"):
            out += [{**o, "semaphore_ids": [s]} for s in o["semaphore_ids"]]
        elif o["name"] == "pwsf":
            out += [{**o, "src_buff": [s], "dst_buff": [d], "channel_ids": [c]}
                    for s, d, c in zip(o["src_buff"], o["dst_buff"], o["channel_ids"])]
        elif o["name"] == "res":  # a reduce, then a put of its result per remote destination
            out.append({"name": "re", "src_buff": o["src_buff"], "dst_buff": o["dst_buff"][:1],
                        "reduce_op": o["reduce_op"]})
            out += [{"name": "put", "src_buff": o["dst_buff"][:1], "dst_buff": [d],
                     "channel_type": "memory"} for d in o["dst_buff"][1:]]
        elif o["name"] != "nop":
            out.append(o)
    return out


def test_the_dsls_compilations_are_unchanged() -> None:
    listed = re.findall(r"^([0-9a-f]{64})  (\S+)$", (COMPILED / "PROVENANCE.md").read_text(),
                        re.M)
    assert {name for _, name in listed} == {p.name for p in COMPILED.glob("*.json")}
    for digest, name in listed:
        assert hashlib.sha256((COMPILED / name).read_bytes()).hexdigest() == digest, name


@pytest.mark.parametrize("name", sorted(p.name for p in COMPILED.glob("*.json")))
def test_collcerts_passes_write_what_the_dsl_wrote(name: str) -> None:
    # the DSL compiled these programs itself (fusion, nops around every synchronising op,
    # nops between dependent data ops): collcert's passes over the same calls give the
    # same threadblocks, op for op
    doc = json.loads((COMPILED / name).read_text())
    nops = apart = 0
    for _, _, ops in _tbs(doc):
        mine = dsl_passes(_unfused(ops))
        theirs = _pwsf_fused_as_the_dsl_does(mine)
        apart += len(mine) - len(theirs)
        assert _sorted_ids(theirs) == _sorted_ids(ops)
        nops += sum(o["name"] == "nop" for o in ops)
    assert nops > 20
    # one difference, on purpose: the DSL fuses two pwsf on one port channel, whose two
    # threads then push onto that channel's FIFO in either order (fifo_device.hpp:110,
    # a relaxed fetch-add): the receiver, counting that channel's signals, may read the
    # first message's slot on the second's signal. collcert keeps them apart.
    assert apart == (1 if name == "collcert_ring4_allreduce_port_dsl.json" else 0)


def _pwsf_fused_as_the_dsl_does(ops: Ops) -> Ops:
    """Adjacent pwsf of one size fused whatever their channels (PutOperation.__add__)."""
    out: Ops = []
    for o in ops:
        last = out[-1] if out else None
        if last is not None and o["name"] == last["name"] == "pwsf" and \
                o["src_buff"][0]["size"] == last["src_buff"][0]["size"]:
            out[-1] = {**last, "src_buff": last["src_buff"] + o["src_buff"],
                       "dst_buff": last["dst_buff"] + o["dst_buff"],
                       "channel_ids": last["channel_ids"] + o["channel_ids"]}
        else:
            out.append(o)
    return out


@pytest.mark.parametrize("name", sorted(p.name for p in DATA.glob("*.json")
                                        if p.name != "expected.json"))
def test_every_nop_of_the_dsls_own_plans_is_kept(name: str) -> None:
    doc = json.loads((DATA / name).read_text())
    for r, t, ops in _tbs(doc):
        mine = dsl_passes([o for o in ops if o["name"] != "nop"])
        assert [o for o in mine if o["name"] != "nop"] == [o for o in ops if o["name"] != "nop"]
        gaps = [_nop_gaps(x) for x in (ops, mine)]
        assert gaps[0] <= gaps[1], f"rank {r} tb {t}: a nop of the DSL is missing"
        if name in DEFAULT_SYNC:
            assert mine == ops


def _nop_gaps(ops: Ops) -> set[int]:
    """k for each nop that stands before the k-th other op."""
    gaps, k = set(), 0
    for o in ops:
        if o["name"] == "nop":
            gaps.add(k)
        else:
            k += 1
    return gaps


def _places(doc: dict[str, Any], r: int, tb: dict[str, Any], o: dict[str, Any]
            ) -> list[tuple[Any, int, int, bool]]:
    """(buffer, first, last, writes) of every range the op touches; a remote buffer is
    named by its (rank, type)."""
    g = doc["gpus"][r]
    refs = {x["access_channel_type"]: x["remote_buffer_ids"] for x in tb["remote_buffer_refs"]}
    out = []
    for key, writes in (("src_buff", False), ("dst_buff", True)):
        for b in o.get(key, ()):
            if "type" in b:
                buf: Any = (r, b["type"])
            else:
                rb = g["remote_buffers"][refs[o["channel_type"]][b["buffer_id"]]]
                buf = (rb["rank"], rb["type"])
            out.append((buf, b["index"], b["index"] + b["size"] - 1, writes))
    return out


def _check_thread_rules(doc: dict[str, Any]) -> int:
    """The executor's thread model (docs/mscclpp.md), checked here without collcert's
    passes: every synchronising op has a nop right before and after it (no thread runs a
    data op before the wait guarding it; no signal is seen before the stores it
    publishes); two data ops with no nop between touch no common range, local or remote,
    where one writes; at most 64 ops. Returns the ops checked."""
    count = 0
    for g in doc["gpus"]:
        for tb in g["threadblocks"]:
            ops = tb["ops"]
            count += len(ops)
            assert len(ops) <= mscclpp.MAX_OPERATION
            for i, o in enumerate(ops):
                if o["name"] in SYNC:
                    assert 0 < i < len(ops) - 1, (g["id"], tb["id"], i)
                    assert ops[i - 1]["name"] == ops[i + 1]["name"] == "nop", (g["id"], i)
            seen: list[tuple[Any, int, int, bool]] = []
            for o in ops:
                if o["name"] in ("nop", "barrier"):
                    seen = []  # every thread of the block meets here
                if o["name"] in ("nop", "barrier") or o["name"] in SYNC:
                    continue
                mine = _places(doc, g["id"], tb, o)
                assert not any(a[0] == b[0] and a[1] <= b[2] and b[1] <= a[2] and (a[3] or b[3])
                               for a in mine for b in seen), (g["id"], tb["id"], o)
                seen += mine
    return count


EXPORTS = [(p, c) for p in ("ring:4", "torus:3x3")
           for c in ("allgather", "reduce-scatter", "allreduce", "broadcast", "reduce")]


@pytest.mark.parametrize("platform, coll", EXPORTS)
def test_exports_have_the_barriers_the_executors_threads_need(platform: str, coll: str) -> None:
    topo = load_topology(platform)
    root = topo.compute_nodes[1] if coll in ("broadcast", "reduce") else None
    sched = collcert.schedule(topo, coll, root=root)
    for inplace in (False, True):
        for channel in ("memory", "port"):
            doc = json.loads(mscclpp_json(sched, inplace=inplace, channel=channel))
            assert _check_thread_rules(doc) > 0
            for _, _, ops in _tbs(doc):  # and they are the DSL's passes' (a fixed point)
                assert dsl_passes([o for o in ops if o["name"] != "nop"]) == ops


def test_without_its_nops_an_export_breaks_the_thread_rules() -> None:
    # the check above is not a formality: the same plan without barriers fails it
    doc = json.loads(mscclpp_json(collcert.schedule(load_topology("ring:4"), "allgather")))
    for g in doc["gpus"]:
        for tb in g["threadblocks"]:
            tb["ops"] = [o for o in tb["ops"] if o["name"] != "nop"]
    with pytest.raises(AssertionError):
        _check_thread_rules(doc)
    # and the audit, with the executor's thread model, names the race
    report = audit(load_topology("ring:4"), json.dumps(doc))
    assert not report.valid
    assert any("(rule 2: stores before signal): a race" in str(r) for r in report.reasons)


def test_barriers_that_push_a_threadblock_over_64_ops_split_the_work() -> None:
    # dgx_a100:1's in-place allreduce: 10 plan ops per threadblock make 67 ops with the
    # barriers; the ranks where that happens are compiled with fewer per threadblock
    topo = load_topology("dgx_a100:1")
    sched = collcert.schedule(topo, "allreduce")
    text = mscclpp_json(sched, inplace=True)
    doc = json.loads(text)
    assert max(len(ops) for _, _, ops in _tbs(doc)) <= mscclpp.MAX_OPERATION
    counts = {len(g["threadblocks"]) for g in doc["gpus"]}
    assert max(counts) > 3  # more threadblocks than the 3 of the out-of-place plan
    report = audit(topo, text)
    assert report.valid and report.time_per_unit == sched.time_per_unit


def test_no_two_plans_share_a_name() -> None:
    # the executor caches a plan's connections and device plan by (buffers, name):
    # executor.cc ExecutionContextKey. Every collective, call mode, channel type, root
    # and k on two topologies: all names differ, and say what the plan is
    names: dict[str, tuple[Any, ...]] = {}
    for platform in ("ring:4", "ring:5"):
        topo = load_topology(platform)
        digest = topo.content_hash().split(":")[1][:8]
        variants: list[tuple[str, Any, int | None]] = [
            (c, None, None) for c in ("allgather", "reduce-scatter", "allreduce")]
        variants += [(c, root, None) for c in ("broadcast", "reduce")
                     for root in topo.compute_nodes[:2]]
        variants.append(("allgather", None, 4))
        if platform == "ring:5":
            variants = variants[:1]  # the same program on another topology
        for coll, root, k in variants:
            sched = collcert.schedule(topo, coll, root=root, fixed_k=k)
            for inplace in (False, True):
                for channel in ("memory", "port"):
                    doc = json.loads(mscclpp_json(sched, inplace=inplace, channel=channel))
                    name = doc["name"]
                    assert name not in names, (name, names.get(name))
                    names[name] = (platform, coll, root, k, inplace, channel)
                    assert name.startswith(f"collcert_{doc['collective']}_")
                    assert ("_inplace_" if inplace else "_outofplace_") in name
                    assert f"_{channel}_t{digest}_p" in name
    assert len(names) == 2 * 2 * (8 + 1)
    # the same plan keeps its name; a name given is kept
    sched = collcert.schedule(load_topology("ring:4"), "allgather")
    assert json.loads(mscclpp_json(sched))["name"] == json.loads(mscclpp_json(sched))["name"]
    assert json.loads(mscclpp_json(sched, name="mine"))["name"] == "mine"


def test_fuzz_every_collective_exports_valid_at_its_stated_rate() -> None:
    """Property: on random switch topologies (collcert.fuzz), every collective, both call
    modes, memory and port channels: the export loads in the MSCCL++ executor's runtime
    profile, keeps the executor's thread rules and limits, and audits VALID (with the
    executor's thread model) at the rate the export states (``export_rate``). The bigger
    campaign: ``collcert fuzz check -p mscclpp_export --switches``."""
    from collcert.certify.execution import runtimes
    from collcert.fuzz.generators import RandomSource, random_topology
    from collcert.reference.model import ScheduleError

    tried = set()
    for seed in range(12):
        t = random_topology(RandomSource(f"mscclpp-barriers:{seed}"), max_nodes=5,
                            kinds=["switched_cycles", "switched", "boxes"], capacities="small")
        for coll in ("allgather", "reduce-scatter", "allreduce", "broadcast", "reduce"):
            root = t.compute_nodes[seed % t.num_compute] if coll in ("broadcast",
                                                                     "reduce") else None
            try:
                s = collcert.schedule(t, coll, root=root)
            except ScheduleError:
                continue
            if max(p.k for p in s.phases) * t.num_compute > 24:
                continue  # thousands of ops: slow to simulate here
            rate = export_rate(s, t)
            inplace, channel = seed % 2 == 1, ("memory", "port")[seed // 2 % 2]
            text = mscclpp_json(s, inplace=inplace, channel=channel, strict=False)
            loads = runtimes.get("mscclpp", "mscclpp-json").judge(text, "export")
            assert loads.ok, loads.describe()  # the MSCCL++ executor's profile
            _check_thread_rules(json.loads(text))
            report = audit(t, text)
            assert report.valid, (seed, coll, report.reasons)
            audited = report.time_per_unit
            assert audited is not None
            if rate.slower:
                assert audited == rate.export_time > s.time_per_unit  # what the warning says
            elif not rate.multicast:
                assert audited <= s.time_per_unit
            tried.add((coll, inplace, channel))
    assert {c for c, _, _ in tried} == {"allgather", "reduce-scatter", "allreduce",
                                        "broadcast", "reduce"}
    assert len(tried) >= 12


def test_the_plans_run_twice_without_a_race() -> None:
    # the simulator runs a second call on what the first left, in two orders
    sched = collcert.schedule(load_topology("torus:3x3"), "reduce-scatter")
    plan = mscclpp.read(mscclpp_json(sched, inplace=True, channel="port"))
    assert mscclpp_sim.run(plan).verdict.ok and mscclpp_sim.run(plan, backwards=True).verdict.ok


def test_the_fuzz_property_holds_and_catches_missing_barriers(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # collcert fuzz check -p mscclpp_export: the campaign's property on one topology
    from collcert.fuzz import properties
    from collcert.fuzz.outcomes import PropertyFailure
    from collcert.reference.execution import mscclpp_export

    topo = load_topology("ring:3")
    assert properties.check("mscclpp_export", topo) is None
    monkeypatch.setattr(mscclpp_export, "dsl_passes", lambda ops: ops)  # no barriers
    with pytest.raises(PropertyFailure, match="is not between two nops"):
        properties.OPT_IN["mscclpp_export"](topo)


def test_the_dsls_same_channel_pwsf_goes_wrong_and_collcerts_does_not() -> None:
    # the one place collcert's passes differ from the DSL on purpose: running the DSL's
    # port allreduce thread by thread (smoke's host executor) gives wrong sums, where the
    # two outputs of the fused pwsf on one channel land in the other order; collcert's
    # export of the same program, which keeps them apart, gives the collective's result
    import numpy as np

    from collcert.reference.execution import run_host
    from collcert.reference.execution.execplan import expected_values
    from collcert.smoke.mscclppplan import plan_from_mscclpp

    def wrong_ranks(text: str) -> list[int]:
        plan = plan_from_mscclpp(mscclpp.read(text))
        outs = run_host(plan, 2)
        return [r for r, o in enumerate(outs)
                if o is not None and not np.array_equal(o, expected_values(plan.spec, r, 2))]

    dsl = (COMPILED / "collcert_ring4_allreduce_port_dsl.json").read_text()
    assert any(len(set(o["channel_ids"])) < len(o["channel_ids"]) for _, _, ops in
               _tbs(json.loads(dsl)) for o in ops if o["name"] == "pwsf")
    assert wrong_ranks(dsl)
    ours = json.loads(dsl)
    for g in ours["gpus"]:
        for tb in g["threadblocks"]:
            tb["ops"] = dsl_passes(_unfused(tb["ops"]))
    assert wrong_ranks(json.dumps(ours)) == []
