"""`collcert smoke` on MSCCL++ execution plans: exported plans of every collective (in
place and out of place, memory and port channels) and the plans MSCCL++'s own DSL wrote
(tests/data/mscclpp) run on gloo ranks and on the single-gpu backend's emulated streams
with their expected verdicts; a plan with an op removed is refused, or FAILs naming the
data that never arrived. The host runs (numpy) need no torch; the rest is skipped without
it, unless COLLCERT_REQUIRE_TORCH=1 (CI) makes that a failure."""

from __future__ import annotations

import copy
import json
import os
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import collcert
from collcert.certify.execution import mscclpp, mscclpp_sim
from collcert.cli import main
from collcert.commands._common import load_topology
from collcert.reference.execution import dependencies, mscclpp_json, nvls_mscclpp_json, run_host
from collcert.reference.execution.execplan import expected_values
from collcert.smoke.mscclppplan import plan_from_mscclpp, subcells
from collcert.smoke.single import emulated_order

DATA = Path(__file__).resolve().parent / "data" / "mscclpp"
EXPECTED = json.loads((DATA / "expected.json").read_text())
CASES = [("allgather", None), ("reduce-scatter", None), ("allreduce", None),
         ("broadcast", 1), ("reduce", 2)]


def _torch() -> None:
    try:
        import torch  # noqa: F401
    except ImportError:
        if os.environ.get("COLLCERT_REQUIRE_TORCH") == "1":
            raise RuntimeError("COLLCERT_REQUIRE_TORCH=1 but torch cannot be imported") from None
        pytest.skip("torch is not installed (pip install 'collcert[smoke]')")


_EXPORTS: dict[tuple[str, bool, str], str] = {}


def _export(coll: str, root: int | None, inplace: bool, channel: str = "memory") -> str:
    """The MSCCL++ plan `collcert schedule ring:4 -c coll --format mscclpp-json` writes."""
    key = (coll, inplace, channel)
    if key not in _EXPORTS:
        t = load_topology("ring:4")
        node = None if root is None else t.compute_nodes[root]
        _EXPORTS[key] = mscclpp_json(collcert.schedule(t, coll, root=node), inplace=inplace,
                                     channel=channel)
    return _EXPORTS[key]


def _exports() -> list[tuple[str, str]]:
    out = [(f"{c} {'in place' if ip else 'out of place'}", _export(c, r, ip))
           for c, r in CASES for ip in (False, True)]
    out.append(("allreduce over port channels", _export("allreduce", None, False, "port")))
    return out


def _outputs_right(plan: Any, outs: list[Any], ce: int) -> list[int]:
    return [r for r, o in enumerate(outs)
            if o is not None and not np.array_equal(o, expected_values(plan.spec, r, ce))]


def _drop(text: str, name: str, rank: int = 0) -> tuple[str, Any]:
    """The plan without the first op called ``name`` of rank ``rank``; and that op as the
    reader resolves it (its destination ranks and chunks)."""
    doc = json.loads(text)
    read = mscclpp.read(text)
    for tb in doc["gpus"][rank]["threadblocks"]:
        for i, op in enumerate(tb["ops"]):
            if op["name"] == name:
                del tb["ops"][i]
                return json.dumps(doc), read.tbs[(rank, tb["id"])][i]
    raise AssertionError(f"rank {rank} has no {name} op")


# -- on the host (numpy): the execution plan of every plan is right ------------------------

# a race within one call shows in smoke's adversarial order of the threads; the others
# (across calls) only in the audit's two-call check
ONE_CALL_RACES = ("executor-tests_reduce_tbg.json",)


@pytest.mark.parametrize("case", [c for c in EXPECTED if c["verdict"] != "NOT SIMULATED"],
                         ids=lambda c: c["plan"])
def test_dsl_plans_run_right_on_the_host(case: dict[str, Any]) -> None:
    """Every plan of MSCCL++'s DSL the audit simulates runs, as the executor's threads
    would, to the collective's result in every adversarial order tried, and then in
    random orders that keep its data dependencies (as the single-gpu backend's streams may
    run it). The race in reduce_tbg shows: one of the orders gives a wrong result, and that
    is the order smoke runs (reduce-scatter's race is across calls: the audit's)."""
    pp = mscclpp.read((DATA / case["plan"]).read_text())
    plan = plan_from_mscclpp(pp)
    assert plan.runnable and not plan.problems, plan.problems
    assert plan.spec.collective == pp.collective and plan.nranks == pp.ngpus
    if case["plan"] in ONE_CALL_RACES:
        assert _outputs_right(plan, run_host(plan, 1), 1) != []
        assert "it gives a wrong result on the host" in plan.notes[-1]
        return
    assert "adversarial order(s) of the threads tried on the host give the collective's " \
           "result" in plan.notes[-1]
    for ce in (1, 3):
        assert _outputs_right(plan, run_host(plan, ce), ce) == []
    deps, keys = dependencies(plan), [("rank", op.rank) for op in plan.ops]
    for seed in range(3):
        order = emulated_order(plan, deps, keys, seed)
        assert _outputs_right(plan, run_host(plan, 2, order), 2) == []


def test_exports_run_right_on_the_host() -> None:
    for what, text in _exports():
        plan = plan_from_mscclpp(mscclpp.read(text))
        assert plan.runnable and plan.messages() > 0, what
        assert _outputs_right(plan, run_host(plan, 2), 2) == [], what


def test_a_dropped_put_leaves_its_destination_unwritten() -> None:
    text, put = _drop(_export("allgather", None, False), "put")
    dst = put.dst[0]
    plan = plan_from_mscclpp(mscclpp.read(text))
    outs = run_host(plan, 1)
    assert dst.rank in _outputs_right(plan, outs, 1)
    sub = subcells(mscclpp.read(text))  # every chunk cell cut into one part per thread
    assert (outs[dst.rank][dst.index * sub:(dst.index + 1) * sub] == -1).all()  # never written


def test_a_dropped_signal_deadlocks_and_is_not_run() -> None:
    text, _ = _drop(_export("allgather", None, False), "signal", rank=1)
    plan = plan_from_mscclpp(mscclpp.read(text))
    assert not plan.runnable
    assert plan.problems[0].startswith("deadlock: no op can run; rank ")
    assert "waits for a signal from rank" in plan.problems[0]


FAMILIES = [("ppkt", "cpkt"), ("upkt", "rppkt"), ("respkt", "repkt", "recpkt", "recspkt"),
            ("re", "res", "rre", "rres"), ("put", "pws", "pwsf"), ("signal", "rlxsignal"),
            ("wait", "rlxwait"), ("nop", "flush")]


def _mutate(rng: random.Random, doc: dict[str, Any]) -> None:
    """One op of one threadblock dropped, copied, moved, renamed within its family or its
    range shifted."""
    tb = rng.choice([t for g in doc["gpus"] for t in g["threadblocks"] if t["ops"]])
    ops, k = tb["ops"], rng.random()
    i = rng.randrange(len(ops))
    if k < 0.3:
        ops.pop(i)
    elif k < 0.45:
        ops.insert(rng.randrange(len(ops) + 1), copy.deepcopy(ops[i]))
    elif k < 0.65:
        j = rng.randrange(len(ops))
        ops[i], ops[j] = ops[j], ops[i]
    elif k < 0.85:
        family = next((f for f in FAMILIES if ops[i]["name"] in f), (ops[i]["name"],))
        ops[i]["name"] = rng.choice(family)
    elif ops[i].get("src_buff", []) + ops[i].get("dst_buff", []):
        ref = rng.choice(ops[i].get("src_buff", []) + ops[i].get("dst_buff", []))
        key = rng.choice(["index", "size"])
        ref[key] = max(0, ref[key] + rng.choice([-1, 1]))


def test_smoke_agrees_with_the_audit_on_mutated_plans() -> None:
    """The audit's simulator (symbolic, every interleaving through vector clocks per
    thread) and smoke's executor (the executor's threads in adversarial orders, real
    integers) are separate readings of the executor: on mutated plans, whatever the
    simulator finds VALID smoke runs to the collective's result in every order it tries,
    and in a random order of its data dependencies; nothing raises. (Checked on 3000
    mutants while writing this, see docs/smoke.md; 60 here.)"""
    rng = random.Random(22)
    docs = [json.loads((DATA / c["plan"]).read_text()) for c in EXPECTED
            if c["verdict"] != "NOT SIMULATED"]
    docs += [json.loads(_export(c, r, False)) for c, r in CASES[:3]]
    valid = 0
    for n in range(60):
        doc = copy.deepcopy(rng.choice(docs))
        _mutate(rng, doc)
        pp = mscclpp.read(json.dumps(doc))
        if not mscclpp_sim.run(pp).verdict.ok:
            continue
        plan = plan_from_mscclpp(pp, tries=4, reasons=[])
        assert "it gives a wrong result" not in plan.notes[-1], plan.notes[-1]
        valid += 1
        assert plan.runnable, plan.problems
        assert _outputs_right(plan, run_host(plan, 2), 2) == []
        order = emulated_order(plan, dependencies(plan), [("rank", op.rank) for op in plan.ops],
                               n)
        assert _outputs_right(plan, run_host(plan, 2, order), 2) == []
    assert valid >= 12  # dropped nops, swapped independent ops, relaxed signals …


def test_exports_on_random_machines_run_right() -> None:
    """Every exported collective, in both call modes, on random switch topologies
    (collcert.fuzz): the execution plan smoke runs gives the collective's result."""
    from collcert.fuzz.generators import RandomSource, random_topology
    from collcert.reference.model import ScheduleError

    ran = 0
    for seed in range(12):
        t = random_topology(RandomSource(f"smoke-mscclpp:{seed}"), max_nodes=6,
                            kinds=["switched_cycles", "switched", "boxes"], capacities="small")
        for coll, root in CASES:
            node = None if root is None else t.compute_nodes[root % t.num_compute]
            try:
                s = collcert.schedule(t, coll, root=node)
            except ScheduleError:
                continue
            if max(p.k for p in s.phases) * t.num_compute > 40:
                continue  # thousands of ops: slow here
            for inplace in (False, True):
                plan = plan_from_mscclpp(mscclpp.read(mscclpp_json(s, inplace=inplace,
                                                                   strict=False)), tries=2)
                assert plan.runnable, plan.problems
                assert _outputs_right(plan, run_host(plan, 1), 1) == [], (seed, coll, inplace)
                ran += 1
    assert ran >= 60, ran


# -- torch: gloo processes and the single-gpu backend -------------------------------------

def test_gloo_runs_every_export_and_the_dsl_plans() -> None:
    """One gloo run (one process per rank, one launcher for all plans) executes the
    exports of every collective in both call modes and the DSL's 4-GPU plans (its 2-GPU
    plans run on the single-gpu backend below)."""
    _torch()
    from collcert.smoke import dist

    plans = [(what, plan_from_mscclpp(mscclpp.read(text))) for what, text in _exports()]
    plans += [(c["plan"], plan_from_mscclpp(mscclpp.read((DATA / c["plan"]).read_text())))
              for c in EXPECTED if c["verdict"] == "VALID" and "4gpu" in c["plan"]]
    plans.append(("the NVLS allreduce export (switch ops)", plan_from_mscclpp(mscclpp.read(
        nvls_mscclpp_json(load_topology(str(DATA / "topologies" / "nvswitch_4gpu.json")))))))
    assert {plan.nranks for _, plan in plans} == {4}
    results = dist.run([(plan, 2, 1) for _, plan in plans], "gloo", timeout=60)
    for (what, plan), ranks in zip(plans, results):
        assert [r.mismatch for r in ranks] == [None] * plan.nranks, what
        assert all(r.device == "cpu" and len(r.times) == 1 for r in ranks), what


def test_single_gpu_emulated_streams_run_every_export() -> None:
    _torch()
    from collcert.smoke import single

    for what, text in _exports():
        plan = plan_from_mscclpp(mscclpp.read(text))
        for seed in (0, 7):
            res = single.run(plan, 3, 1, "cpu", seed)
            assert [r.mismatch for r in res] == [None] * plan.nranks, what


def test_cli_pass_with_the_exact_model(tmp_path: Path, capsys: Any) -> None:
    _torch()
    path = tmp_path / "rs.json"
    path.write_text(_export("reduce-scatter", None, True))
    argv = ["smoke", str(path), "-b", "single-gpu", "--device", "cpu", "--size", "4K",
            "--iters", "1", "--topology", "ring:4", "--json"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["result"] == "PASS" and out["format"] == "mscclpp-json"
    assert out["collective"] == "reduce-scatter" and out["ranks"] == 4
    want = collcert.schedule(load_topology("ring:4"), "reduce-scatter").algbw
    assert out["model_algbw"] == str(want)
    assert any("in-place calls" in n for n in out["notes"])


def test_cli_dsl_plans_with_their_expected_verdicts(capsys: Any) -> None:
    """VALID plans PASS on the single-gpu backend; the INVALID one (a race) is refused
    with the audit's reason, exit 2; the NVLS plan is refused, naming what is not run."""
    _torch()
    for case in EXPECTED:
        argv = ["smoke", str(DATA / case["plan"]), "-b", "single-gpu", "--device", "cpu",
                "--size", "8K", "--iters", "1"]
        code = main(argv)
        out = capsys.readouterr()
        if case["verdict"] == "VALID":
            assert code == 0 and out.out.startswith("PASS"), (case["plan"], out)
        elif case["verdict"] == "INVALID":
            assert code == 2 and "not run: the schedule is INVALID" in out.err
            assert case["reason"] in out.err
        else:
            assert code == 2 and "switch (NVLS multicast)" in out.err, out.err


def test_cli_dropped_put_refused_then_fails_naming_the_missing_data(tmp_path: Path,
                                                                    capsys: Any) -> None:
    _torch()
    text, put = _drop(_export("allgather", None, False), "put")
    dst = put.dst[0]
    path = tmp_path / "bad.json"
    path.write_text(text)
    argv = ["smoke", str(path), "-b", "single-gpu", "--device", "cpu", "--size", "4K",
            "--iters", "1"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "not run: the schedule is INVALID" in err
    # the first reason: the rank that never gets the chunk, or the op that forwards it
    assert f"rank {dst.rank} output chunk {dst.index} should hold" in err or (
        f"o[chunk {dst.index}] of rank {dst.rank} before it holds any data" in err)
    assert main(argv + ["--run-invalid", "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["result"] == "FAIL" and out["wrong_ranks"] >= 1
    first = next(f for f in out["failures"] if f.startswith("rank "))
    ce = out["elements_per_cell"] * subcells(mscclpp.read(text))  # elements per chunk cell
    assert first.startswith(f"rank {dst.rank}: output element {dst.index * ce} ")
    assert "is -1, expected" in first and "never written" in first
    assert "  no op of the program writes that cell" in out["failures"]
    assert any("the MSCCL++ simulator says: " in f and f"rank {dst.rank}" in f
               for f in out["failures"])


def test_cli_dropped_signal_refused_as_a_deadlock(tmp_path: Path, capsys: Any) -> None:
    _torch()
    text, _ = _drop(_export("allreduce", None, True), "signal", rank=1)
    path = tmp_path / "bad.json"
    path.write_text(text)
    assert main(["smoke", str(path), "-b", "single-gpu", "--device", "cpu"]) == 2
    assert "deadlock" in capsys.readouterr().err
    bad = copy.deepcopy(json.loads(text))
    bad["gpus"][0]["threadblocks"] = []  # rank 0 runs nothing: the others wait for it
    path.write_text(json.dumps(bad))
    assert main(["smoke", str(path), "-b", "single-gpu", "--device", "cpu",
                 "--run-invalid"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("FAIL") and "deadlock" in out and "not run" in out


def test_cli_format_mistakes_are_named(tmp_path: Path, capsys: Any) -> None:
    _torch()
    path = tmp_path / "ag.json"
    path.write_text(_export("allgather", None, True))
    assert main(["smoke", str(path), "--format", "json"]) == 2
    assert "an MSCCL++ plan, not a collcert JSON schedule" in capsys.readouterr().err
    path.write_text('{"gpus": []}')
    assert main(["smoke", str(path)]) == 2
    assert "pass --format mscclpp-json if it is one" in capsys.readouterr().err
