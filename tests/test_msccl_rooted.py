"""Issue 22 item 4: broadcast and reduce as MSCCL programs; alltoall MSCCL programs smoked.

tests/data/msccl/alltoall_direct_3gpu.xml is written by hand for these tests (each rank
sends its block for every peer straight to it and copies its own): the smallest
alltoall program in the MSCCL executor's format.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import collcert
from collcert.certify.execution import msccl, msccl_sim
from collcert.cli import main
from collcert.reference.execution import export_rate, first_mismatch, msccl_xml, run_host
from collcert.smoke.mscclplan import plan_from_program

A2A = Path(__file__).parent / "data" / "msccl" / "alltoall_direct_3gpu.xml"
MACHINES = [lambda: collcert.platforms.ring(4), collcert.platforms.dgx1,
            collcert.platforms.two_box_example]


@pytest.mark.parametrize("coll", ["broadcast", "reduce"])
@pytest.mark.parametrize("build", MACHINES)
def test_rooted_export_audits_valid_at_the_schedule_rate(coll: str, build: object) -> None:
    t = build()  # type: ignore[operator]
    root = t.compute_nodes[-1]
    s = collcert.schedule(t, coll, root=root)
    assert not export_rate(s, t).slower
    text = msccl_xml(s)
    prog = msccl.read(text)
    assert prog.collective == coll and prog.root == t.compute_nodes.index(root)
    report = collcert.audit(t, text)
    assert report.valid, report.reasons
    assert report.algbw == s.algbw and report.ratio == 1
    for inplace in (True, False):  # the host run of the program, both calls
        plan = plan_from_program(prog, inplace)
        assert not plan.problems
        outs = run_host(plan)
        assert outs[t.compute_nodes.index(root)] is not None


def test_rooted_program_without_root_is_refused() -> None:
    t = collcert.platforms.ring(4)
    text = msccl_xml(collcert.schedule(t, "broadcast", root=1))
    with pytest.raises(Exception, match="root"):
        msccl.read(text.replace(' root="1"', ""))


def test_broadcast_from_the_wrong_rank_is_invalid() -> None:
    t = collcert.platforms.ring(4)
    text = msccl_xml(collcert.schedule(t, "broadcast", root=1))
    res = msccl_sim.run(msccl.read(text.replace(' root="1"', ' root="2"')))
    assert not res.verdict.ok


def test_alltoall_program_audits() -> None:
    report = collcert.audit(collcert.platforms.complete(3), A2A.read_text())
    assert report.valid and report.ratio == 1


def test_smoke_gloo_runs_an_alltoall_program(capsys: pytest.CaptureFixture[str]) -> None:
    """One gloo run (process start-up dominates: about 15 s on the loaded 2-core machine);
    broadcast and reduce programs run through the same harness, checked on the host above."""
    pytest.importorskip("torch")
    assert main(["smoke", str(A2A), "--backend", "gloo", "--size", "4K", "--iters", "1"]) == 0
    assert capsys.readouterr().out.startswith("PASS")


def test_a_wrong_alltoall_fails_on_the_host() -> None:
    bad = A2A.read_text().replace(
        '<step s="1" type="r" srcbuf="i" srcoff="1" dstbuf="o" dstoff="1"',
        '<step s="1" type="r" srcbuf="i" srcoff="1" dstbuf="o" dstoff="2"', 1)
    plan = plan_from_program(msccl.read(bad), False)
    outs = run_host(plan)
    wrong = [r for r in range(plan.nranks)
             if first_mismatch(plan.spec, r, outs[r], 1) is not None]
    assert wrong == [0]
    good = plan_from_program(msccl.read(A2A.read_text()), False)
    outs = run_host(good)
    assert all(first_mismatch(good.spec, r, outs[r], 1) is None for r in range(3))


@pytest.mark.parametrize("spec", ["ring:4", "dgx1", "two_box_example", "torus:3x3"])
def test_alltoall_export_runs_at_the_certified_optimum(spec: str) -> None:
    """Alltoall from the maximum concurrent flow: the program audits VALID at the
    certified optimum, and its host run moves every block to its rank."""
    from collcert.commands._common import load_topology
    from collcert.reference.execution import alltoall_msccl_xml

    t = load_topology(spec)
    text, algbw = alltoall_msccl_xml(t)
    report = collcert.audit(t, text)
    assert report.valid and report.ratio == 1 and report.algbw == algbw
    plan = plan_from_program(msccl.read(text), False)
    outs = run_host(plan)
    assert all(first_mismatch(plan.spec, r, outs[r], 1) is None for r in range(plan.nranks))


def test_alltoall_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "a2a.xml"
    assert main(["schedule", "ring:4", "-c", "alltoall", "--format", "msccl-xml",
                 "-o", str(out)]) == 0
    assert "certified optimum" in capsys.readouterr().out
    assert main(["audit", "ring:4", str(out)]) == 0
    assert main(["schedule", "ring:4", "-c", "alltoall"]) == 2


def test_alltoall_export_below_the_flow_is_said(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """On the issue's machine the flow sends linked pairs through switches: the export
    audits slower, which the command says (and refuses under --strict)."""
    import json

    from test_export_rate import issue_topology

    topo = tmp_path / "t.json"
    topo.write_text(json.dumps(issue_topology().to_json()))
    out = tmp_path / "a.xml"
    assert main(["schedule", str(topo), "-c", "alltoall", "--format", "msccl-xml",
                 "-o", str(out)]) == 0
    assert "warning" in capsys.readouterr().err and out.exists()
    strict = tmp_path / "s.xml"
    assert main(["schedule", str(topo), "-c", "alltoall", "--format", "msccl-xml",
                 "-o", str(strict), "--strict"]) == 1
    assert "refused" in capsys.readouterr().err and not strict.exists()
