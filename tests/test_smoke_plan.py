"""Execution plans (no torch): trees and MSCCL programs run on the host, mutations fail
with the missing data named, and the dependencies are enough for any stream interleaving."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import collcert
from collcert import platforms
from collcert.certify.execution import msccl
from collcert.reference.execution import plan_from_schedule
from collcert.reference.execution.execplan import (
    Plan,
    dependencies,
    describe_cell,
    expected_values,
    explain_value,
    first_mismatch,
    input_values,
    run_host,
)
from collcert.reference.model import ScheduleError
from collcert.smoke.mscclplan import plan_from_program
from collcert.smoke.single import _streams, emulated_order

DATA = Path(__file__).resolve().parent / "data" / "formats"
CASES = [("allgather", None), ("reduce-scatter", None), ("allreduce", None),
         ("broadcast", "c1.2"), ("reduce", "c2.4")]


def _doc(collective: str, root: Any = None, topo: Any = None, **kw: Any) -> dict[str, Any]:
    t = topo or platforms.two_box_example()
    return collcert.schedule(t, collective, root=root, **kw).to_json(certificates=False)


def _wrong(plan: Plan, outs: list[Any], ce: int) -> list[Any]:
    return [m for r, o in enumerate(outs) if o is not None
            for m in [first_mismatch(plan.spec, r, o, ce)] if m]


def _definition(plan: Plan, rank: int, ce: int) -> np.ndarray:
    """The collective's result for ``rank`` computed straight from every rank's input."""
    spec = plan.spec
    ins = {q: input_values(spec, q, ce) for q in range(spec.nranks) if spec.inputs[q][3]}
    total = spec.cells * ce
    if spec.collective in ("allgather", "broadcast"):
        full = np.full(total, -7, dtype=np.int64)
        for q, data in ins.items():
            lo = spec.inputs[q][2] * ce
            full[lo:lo + data.size] = data
    else:
        full = sum(ins.values())  # every input covers the whole data
    _, _, goff, n = spec.outputs[rank]
    return np.asarray(full[goff * ce:(goff + n) * ce])


@pytest.mark.parametrize("collective,root", CASES)
def test_expected_values_are_the_collectives_definition(collective: str, root: Any) -> None:
    plan = plan_from_schedule(_doc(collective, root))
    for r in range(plan.nranks):
        if plan.spec.outputs[r][3]:
            assert np.array_equal(expected_values(plan.spec, r, 3), _definition(plan, r, 3))


@pytest.mark.parametrize("topo", ["two_box_example", "dgx_a100:1", "torus:3x3", "ring:5"])
@pytest.mark.parametrize("collective,root", CASES)
def test_tree_plans_deliver_every_element(topo: str, collective: str, root: Any) -> None:
    from collcert.commands._common import load_topology

    t = load_topology(topo)
    doc = _doc(collective, t.compute_nodes[1] if root else None, t)
    plan = plan_from_schedule(doc)
    assert not plan.problems and not plan.notes
    outs = run_host(plan, 2)
    assert not _wrong(plan, outs, 2)
    # any interleaving that keeps the dependencies and the stream order gives the same
    order = emulated_order(plan, dependencies(plan), _streams(plan), seed=7)
    assert sorted(order) == list(range(len(plan.ops)))
    assert not _wrong(plan, run_host(plan, 2, order), 2)


def test_dependencies_matter() -> None:
    """Without the hazard dependencies some interleaving computes a wrong allreduce."""
    plan = plan_from_schedule(_doc("allreduce"))
    deps = dependencies(plan)
    only_msgs = [[d for d in ds if plan.ops[i].kind == "recv" and plan.ops[d].msg ==
                  plan.ops[i].msg] for i, ds in enumerate(deps)]
    wrong = 0
    for seed in range(5):
        order = emulated_order(plan, only_msgs, _streams(plan), seed)
        wrong += bool(_wrong(plan, run_host(plan, 1, order), 1))
    assert wrong


def test_weighted_allgather() -> None:
    weights = [1, 2, 1, 2, 1, 2, 1, 2]
    plan = plan_from_schedule(_doc("allgather", weights=weights))
    sizes = [n for _, n in plan.spec.shards]
    assert sizes == [sizes[0] * w for w in weights]
    assert not _wrong(plan, run_host(plan, 3), 3)


def test_dropped_edge_names_the_missing_data() -> None:
    doc = _doc("allgather")
    tree = doc["phases"][0]["trees"][0]
    root = tree["root"]
    edge = tree["edges"].pop()  # a leaf edge: exactly one node loses root's shard
    plan = plan_from_schedule(doc)
    outs = run_host(plan, 4)
    wrong = _wrong(plan, outs, 4)
    names = plan.labels
    assert [names[m.rank] for m in wrong] == [edge["dst"]]
    m = wrong[0]
    assert m.got == -1 and explain_value(plan.spec, m, 4) == "never written"
    why = describe_cell(plan, m.rank, m.element // 4)
    assert len(why) == 1 and f"({root})'s data" in why[0] and "never reaches" in why[0]
    assert f"({edge['dst']})" in why[0]


def test_dropped_edge_in_a_reduction_names_the_lost_contributions() -> None:
    doc = _doc("reduce-scatter")
    tree = doc["phases"][0]["trees"][3]
    edge = next(e for e in tree["edges"] if e["dst"] == tree["root"])
    tree["edges"].remove(edge)
    plan = plan_from_schedule(doc)
    wrong = _wrong(plan, run_host(plan, 2), 2)
    assert [plan.labels[m.rank] for m in wrong] == [tree["root"]]
    lost = plan.labels.index(edge["src"])
    text = explain_value(plan.spec, wrong[0], 2)
    assert text.startswith("the sum lacks the contribution of rank(s)") and str(lost) in text
    why = describe_cell(plan, wrong[0].rank, wrong[0].element // 2)
    assert "never reach the root" in why[0] and str(lost) in why[0]


def test_multiplicities_that_do_not_sum_to_k() -> None:
    doc = _doc("allgather", topo=platforms.dgx_a100(2))  # k = 13
    trees = doc["phases"][0]["trees"]
    assert doc["phases"][0]["k"] > 1
    low = copy.deepcopy(doc)
    victim = low["phases"][0]["trees"].pop(5)  # its root's trees now carry less than k/k
    plan = plan_from_schedule(low)
    assert any("carry" in n and f"({victim['root']})" in n for n in plan.notes)
    wrong = _wrong(plan, run_host(plan, 1), 1)
    assert len(wrong) == plan.nranks  # the last part(s) reach no rank, not even its root
    why = describe_cell(plan, wrong[0].rank, wrong[0].element)
    assert "carried by no tree" in why[0] and f"({victim['root']})'s shard" in why[0]
    high = copy.deepcopy(doc)
    high["phases"][0]["trees"][0]["multiplicity"] += 1
    plan = plan_from_schedule(high)
    assert any("sum to more than k" in p and f"({trees[0]['root']})" in p for p in plan.problems)


def test_cycle_in_an_in_tree_is_reported() -> None:
    doc = _doc("reduce", "c2.4")
    tree = doc["phases"][0]["trees"][0]
    a, b = tree["edges"][0]["src"], tree["edges"][0]["dst"]
    tree["edges"] = [e for e in tree["edges"] if e["src"] != b] + [{"src": b, "dst": a}]
    plan = plan_from_schedule(doc)
    assert any("cycle" in n for n in plan.notes)
    assert _wrong(plan, run_host(plan, 1), 1)


@pytest.mark.parametrize("bad,msg", [
    (lambda d: d.update(collective="gather"), "collective"),
    (lambda d: d["phases"][0]["trees"][0]["edges"][0].update(src="nobody"), "nobody"),
    (lambda d: d["phases"][0]["trees"][0].update(multiplicity=0), "multiplicity"),
    (lambda d: d["phases"][0].update(k="13"), "k must be"),
    (lambda d: d.update(compute_nodes=["c1.1"]), "at least two"),
    (lambda d: d["phases"][0]["trees"][0].update(direction="in"), "direction"),
])
def test_uninterpretable_schedules_are_bad_input(bad: Any, msg: str) -> None:
    doc = _doc("allgather")
    bad(doc)
    with pytest.raises(ScheduleError, match=msg):
        plan_from_schedule(doc)


@pytest.mark.parametrize("name", ["msccl-tools_allgather_ring_4gpu_inplace.xml",
                                  "msccl-tools_allreduce_ring_4gpu_inplace.xml"])
def test_public_msccl_programs_run_in_place(name: str) -> None:
    prog = msccl.read((DATA / name).read_text())
    plan = plan_from_program(prog)
    assert plan.runnable and any("in place" in n for n in plan.notes)
    assert not _wrong(plan, run_host(plan, 3), 3)


def test_broken_msccl_program_fails() -> None:
    text = (DATA / "msccl-tools_allgather_ring_4gpu_inplace.xml").read_text()
    # the last receive of gpu 2 goes to the wrong output chunk
    lines = text.splitlines()
    gpu2 = next(i for i, line in enumerate(lines) if '<gpu id="2"' in line)
    last = next(i for i in range(gpu2, len(lines)) if 'type="r"' in lines[i])
    lines[last] = lines[last].replace('dstoff="3"', 'dstoff="1"')
    plan = plan_from_program(msccl.read("\n".join(lines)))
    wrong = _wrong(plan, run_host(plan, 1), 1)
    assert [m.rank for m in wrong] == [2]
    # and a program that deadlocks is not run
    lines = text.splitlines()
    first_r = next(i for i, line in enumerate(lines) if 'type="s"' in line)
    lines[first_r] = lines[first_r].replace('type="s"', 'type="r"')
    plan = plan_from_program(msccl.read("\n".join(lines)))
    assert not plan.runnable and any("deadlock" in p for p in plan.problems)


def test_plans_survive_json_round_trip() -> None:
    doc = json.loads(json.dumps(_doc("allreduce")))
    plan = plan_from_schedule(doc)
    assert not _wrong(plan, run_host(plan, 1), 1)


def test_dependencies_cover_every_hazard() -> None:
    """Read-after-write, write-after-read and write-after-write on one rank's cells, and
    a receive after its send; nothing between different ranks' cells."""
    from collcert.reference.execution import Op, Region, Spec

    spec = Spec("allgather", 2, 2, None, [(0, 1), (1, 1)])
    o0, i0 = Region("o", 0, 1), Region("i", 0, 1)
    ops = [Op("send", 0, 1, src=o0, msg=0),            # 0 reads o[0] of rank 0
           Op("copy", 0, src=i0, dst=o0),              # 1 overwrites it: after 0 (WAR)
           Op("recv", 1, 0, dst=o0, msg=0),            # 2 its send first; rank 1's o[0]
           Op("copy", 0, src=o0, dst=Region("o", 1, 1)),  # 3 reads what 1 wrote (RAW)
           Op("copy", 0, src=i0, dst=o0)]              # 4 rewrites: after 1 (WAW), 3 (WAR)
    plan = Plan(spec, [{"i": 1, "o": 2}, {"i": 1, "o": 2}], ops)
    assert dependencies(plan) == [[], [0], [0], [1], [1, 3]]


def test_compact_schedule_files() -> None:
    """Files written by `collcert schedule` list tree edges as indices into walks."""
    from collcert.reference.forestcoll import render

    s = collcert.schedule(platforms.two_box_example(), "allreduce")
    doc = json.loads(render(s, "json"))
    assert isinstance(doc["phases"][0]["trees"][0]["edges"][0], int)
    plan = plan_from_schedule(doc)
    assert not _wrong(plan, run_host(plan, 1), 1)
    doc["phases"][1]["trees"][0]["edges"][0] = 10**6
    with pytest.raises(ScheduleError, match="walk 1000000"):
        plan_from_schedule(doc)
