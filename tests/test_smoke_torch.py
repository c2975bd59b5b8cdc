"""`collcert smoke` through torch: gloo ranks on every collective, the single-gpu
backend on the CPU with emulated streams, mutated schedules FAIL naming the missing
data. Skipped without torch, unless COLLCERT_REQUIRE_TORCH=1 (CI) makes that a failure."""

from __future__ import annotations

import copy
import json
import os
import re
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

import collcert
from collcert.certify.execution import msccl
from collcert.cli import main
from collcert.commands._common import load_topology
from collcert.reference.execution import msccl_xml, plan_from_schedule
from collcert.smoke import SmokeError, smoke
from collcert.smoke.mscclplan import plan_from_program

try:
    import torch  # noqa: F401
except ImportError:
    if os.environ.get("COLLCERT_REQUIRE_TORCH") == "1":
        raise RuntimeError("COLLCERT_REQUIRE_TORCH=1 but torch cannot be imported: install "
                           "'collcert[smoke]'") from None
    pytest.skip("torch is not installed (pip install 'collcert[smoke]')",
                allow_module_level=True)

DATA = Path(__file__).resolve().parent / "data" / "formats"
CASES = [("allgather", None), ("reduce-scatter", None), ("allreduce", None),
         ("broadcast", 1), ("reduce", 2)]


def _doc(topo: str, collective: str, root: int | None) -> dict[str, Any]:
    t = load_topology(topo)
    node = None if root is None else t.compute_nodes[root]
    return collcert.schedule(t, collective, root=node).to_json(certificates=False)


def _drop_edge(doc: dict[str, Any]) -> dict[str, Any]:
    bad = copy.deepcopy(doc)
    tree = bad["phases"][-1]["trees"][1]
    tree["edges"].pop(len(tree["edges"]) // 2)
    return bad


@pytest.mark.parametrize("topo", ["two_box_example", "complete:4"])
def test_gloo_every_collective_and_mutations(topo: str) -> None:
    """One gloo run (one process per rank) executes every collective's schedule, the
    MSCCL programs compiled from them, and schedules with a tree edge dropped."""
    from collcert.smoke import dist

    docs = [_doc(topo, c, r) for c, r in CASES]
    plans = [plan_from_schedule(d) for d in docs]
    progs = [msccl.read(msccl_xml(d)) for d in docs[:3]]  # marked for both calls: run both
    plans += [plan_from_program(p, inplace) for p in progs for inplace in (True, False)]
    mutated = [plan_from_schedule(_drop_edge(d)) for d in docs]
    results = dist.run([(p, 2, 1) for p in plans + mutated], "gloo", timeout=60)
    good, bad = results[:len(plans)], results[len(plans):]
    for plan, ranks in zip(plans, good):
        assert [r.mismatch for r in ranks] == [None] * plan.nranks, plan.spec.collective
        assert all(len(r.times) == 1 and r.device == "cpu" for r in ranks)
    for plan, ranks in zip(mutated, bad):
        assert any(r.mismatch for r in ranks), plan.spec.collective


def test_gloo_fail_names_root_and_tree(tmp_path: Path, capsys: Any) -> None:
    doc = _doc("two_box_example", "allgather", None)
    bad = copy.deepcopy(doc)
    tree = bad["phases"][0]["trees"][3]
    lost = tree["edges"].pop()  # a leaf: exactly that node misses the root's shard
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad))
    assert main(["smoke", str(path), "--backend", "gloo", "--size", "4K", "--iters", "1"]) == 2
    assert "never receives" in capsys.readouterr().err  # refused: the audit's checks fail
    assert main(["smoke", str(path), "--backend", "gloo", "--size", "4K", "--iters", "1",
                 "--json", "--run-invalid"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["result"] == "FAIL" and out["wrong_ranks"] == 1 and out["backend"] == "gloo"
    assert out["failures"][0].startswith("INVALID before the run")
    first, why = out["failures"][1], out["failures"][2]
    assert first.startswith(f"rank {doc['compute_nodes'].index(lost['dst'])} ({lost['dst']})")
    assert "never written" in first and "expected" in first
    assert f"({tree['root']})'s data" in why and f"tree #{tree['index']}" in why
    assert "never reaches" in why


def test_gloo_pass_with_exact_model(tmp_path: Path) -> None:
    t = load_topology("two_box_example")
    s = collcert.schedule(t, "reduce-scatter")
    path = tmp_path / "rs.xml"
    path.write_text(msccl_xml(s))
    rep = smoke(str(path), topology=t, backend="gloo", size=1 << 14, iters=2)
    assert rep.passed and rep.fmt == "msccl-xml" and rep.model_algbw == s.algbw
    assert len(rep.times) == 2 and rep.measured_algbw_gbps() is not None
    assert rep.size_bytes >= 1 << 14 and rep.size_bytes % (8 * rep.cells) == 0
    assert "gloo" in rep.summary() and "PASS" in rep.summary()


def test_msccl_program_for_both_calls_runs_in_both_modes(tmp_path: Path) -> None:
    """An exported program serves in-place and out-of-place calls; smoke runs it both
    ways. A cpy that writes its input onto itself (no copy into the output) is right only
    in place, where the input already is the output's own block: smoke FAILs out of place."""
    text = msccl_xml(collcert.schedule(load_topology("ring:4"), "allgather"))
    path = tmp_path / "ag.xml"
    path.write_text(text)
    rep = smoke(str(path), backend="single-gpu", device="cpu", size=1024, iters=1)
    assert rep.passed, rep.failures
    assert any("ran in place and out of place" in n for n in rep.notes)
    bad = re.sub(r'(type="cpy" srcbuf="i" srcoff="(\d+)") dstbuf="o" dstoff="\d+"',
                 r'\1 dstbuf="i" dstoff="\2"', text)
    assert bad != text
    path.write_text(bad)
    rep = smoke(str(path), backend="single-gpu", device="cpu", size=1024, iters=1)
    assert not rep.passed and rep.wrong_ranks
    assert rep.failures[0].startswith("out of place: rank ") and "never written" in rep.failures[0]
    assert not any(f.startswith("in place: ") for f in rep.failures)


@pytest.mark.parametrize("collective,root", CASES)
def test_single_gpu_backend_on_the_cpu(collective: str, root: int | None,
                                       tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text(json.dumps(_doc("torus:3x3", collective, root)))
    rep = smoke(str(path), backend="single-gpu", device="cpu", size=4096, iters=1, seed=3)
    assert rep.passed, rep.failures
    assert rep.on_cpu and any("emulated streams" in n for n in rep.notes)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(_drop_edge(_doc("torus:3x3", collective, root))))
    rep = smoke(str(bad), backend="single-gpu", device="cpu", size=4096, iters=1)
    assert not rep.passed and rep.wrong_ranks and "missing data" in rep.summary()


@pytest.mark.parametrize("name", ["msccl-tools_allgather_ring_4gpu_inplace.xml",
                                  "msccl-tools_allreduce_ring_4gpu_inplace.xml"])
def test_public_msccl_programs(name: str) -> None:
    rep = smoke(str(DATA / name), backend="single-gpu", device="cpu", size=1024, iters=1)
    assert rep.passed and rep.nranks == 4


def test_wrong_multiplicity_fails(tmp_path: Path, capsys: Any) -> None:
    doc = _doc("two_box_example", "broadcast", 1)
    doc["phases"][0]["trees"][0]["multiplicity"] += 1
    path = tmp_path / "m.json"
    path.write_text(json.dumps(doc))
    argv = ["smoke", str(path), "-b", "single-gpu", "--device", "cpu", "--iters", "1"]
    assert main(argv) == 2
    assert "multiplicities summing to 5, not k = 4" in capsys.readouterr().err
    assert main(argv + ["--run-invalid"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("FAIL broadcast") and "sum to more than k" in out


def test_bad_requests_exit_2(tmp_path: Path, capsys: Any) -> None:
    path = tmp_path / "ag.json"
    path.write_text(json.dumps(_doc("two_box_example", "allgather", None)))
    if not torch.cuda.is_available():
        assert main(["smoke", str(path), "--backend", "nccl"]) == 2
        assert "one GPU per rank" in capsys.readouterr().err
    assert main(["smoke", str(path), "--size", "lots"]) == 2
    assert "--size" in capsys.readouterr().err
    assert main(["smoke", str(tmp_path / "nope.json")]) == 2
    assert "no such file" in capsys.readouterr().err
    assert main(["smoke", str(DATA / "forestcoll_a100_1box_allgather.xml")]) == 2
    assert "--topology" in capsys.readouterr().err


def test_a_failing_rank_stops_the_run() -> None:
    from collcert.smoke import dist

    plan = plan_from_schedule(_doc("complete:4", "allgather", None))
    with pytest.raises(SmokeError, match="of the nosuchbackend run failed: AssertionError"):
        dist.run([(plan, 1, 1)], "nosuchbackend", timeout=20)


def test_forestcoll_xml_with_its_topology() -> None:
    from collcert.reference.model import Topology

    topo = Topology.from_json(str(DATA / "forestcoll_a100_1box_topology.json"))
    rep = smoke(str(DATA / "forestcoll_a100_1box_allgather.xml"), topology=topo,
                backend="single-gpu", device="cpu", size=2048, iters=1)
    assert rep.passed and rep.fmt == "forestcoll-xml"
    assert rep.model_algbw == 342 + Fraction(6, 7)  # 2400/7, tests/data/formats/README.md
