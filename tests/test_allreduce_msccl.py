"""`schedule -c allreduce --method lp --format msccl-xml`: the LP (5) allreduce as an MSCCL
program with exact chunk counts (root v owns C·x_v/Σx chunks), VALID in place and out of
place at LP (5)'s algbw; refused (exit 2) where the exact count exceeds the executor."""

from __future__ import annotations

import json
import os
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from collcert.auditing import audit
from collcert.certify.execution import msccl
from collcert.cli import main
from collcert.commands._common import load_topology
from collcert.reference.allreduce import forestcoll_lp, lp_schedule
from collcert.reference.execution import chunks, first_mismatch, lp_msccl_xml, lp_plan, run_host
from collcert.reference.execution import msccl_allreduce as allreduce_msccl
from collcert.reference.model import ScheduleError, Topology
from collcert.smoke.mscclplan import plan_from_program

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "golden" / "allreduce"


def _topo(tmp: Path, spec: str) -> str:
    """A golden counterexample's topology as a file, or a platform name as it is."""
    if not spec.startswith("golden:"):
        return spec
    case = json.loads((GOLDEN / f"{spec[7:]}.json").read_text())
    path = tmp / f"{spec[7:]}.json"
    path.write_text(json.dumps(case["topology"]))
    return str(path)


def _export(tmp: Path, topo: str, capsys: Any, *extra: str) -> tuple[int, dict[str, Any], str]:
    out = tmp / "ar.xml"
    code = main(["schedule", topo, "-c", "allreduce", "--method", "lp", "--format", "msccl-xml",
                 "-o", str(out), "--json", *extra])
    cap = capsys.readouterr()
    return code, (json.loads(cap.out) if code == 0 else {"error": cap.err}), (
        out.read_text() if code == 0 else "")


@pytest.mark.parametrize("spec,lp_value,shares", [
    ("golden:hypothesis-counterexample-rsag", "1", "lp"),  # RS+AG: 5/6
    ("golden:hypothesis-counterexample-equal-shards", "3", "lp"),  # RS+AG: 5/2
    ("ring:4", "4/3", "lp"),
    ("torus:3x3", "9/4", "lp"),
    ("dgx_a100:1", "1200/7", "lp"),  # symmetric shares; App. G's own vertex: 14003160 chunks
    ("two_box_example", "4", "lp"),
])
def test_exported_program_reaches_lp5_in_both_modes(tmp_path: Path, capsys: Any, spec: str,
                                                    lp_value: str, shares: str) -> None:
    topo = _topo(tmp_path, spec)
    code, rep, text = _export(tmp_path, topo, capsys)
    assert code == 0, rep
    assert rep["format"] == "msccl-xml" and rep["shares"] == shares
    assert rep["algbw"] == rep["forestcoll_lp"] == lp_value
    prog = msccl.read(text)
    assert prog.nchunks == rep["nchunksperloop"]
    assert not prog.refusals and not prog.notes  # the executor loads it, ≤ 64 steps per tb
    t = load_topology(topo, strict=False)
    res = audit(t, text, fmt="msccl-xml")
    assert res.valid, res.reasons
    assert res.checks[0]["facts"]["modes"] == ["in-place", "out-of-place"]
    assert res.algbw == Fraction(lp_value) and res.ratio == 1


def test_chunks_are_the_exact_shares() -> None:
    """3 = LP (5) on the equal-shards counterexample: x = 2 at c2 and 1 at c3, so C = 3
    chunks, c2 owns two and c3 one; the other roots own none."""
    case = json.loads((GOLDEN / "hypothesis-counterexample-equal-shards.json").read_text())
    t = Topology.from_json(case["topology"], strict=False)
    s = lp_schedule(t)
    assert chunks(s) == 3
    plan = lp_plan(s)
    sizes = {name: n for name, (_, n) in zip(plan.labels, plan.spec.shards)}
    assert sizes == {"c0": 0, "c1": 0, "c2": 2, "c3": 1, "c4": 0}
    for r, out in enumerate(run_host(plan, 2)):
        assert first_mismatch(plan.spec, r, out, 2) is None
    for inplace in (True, False):
        p2 = plan_from_program(msccl.read(lp_msccl_xml(s)), inplace)
        assert all(first_mismatch(p2.spec, r, o, 2) is None
                   for r, o in enumerate(run_host(p2, 2)))


def test_too_many_chunks_is_refused_not_rounded() -> None:
    """LP (5)'s own solution on dgx_a100:1 has shares like 12967670/116693: exact, it needs
    14003160 chunks, past the executor's chunk offsets: refused, naming the count."""
    t = load_topology("dgx_a100:1")
    s = lp_schedule(t, lp=forestcoll_lp(t, method="flows"))
    with pytest.raises(ScheduleError, match=r"nchunksperloop = 14003160 .*below 32768"):
        lp_msccl_xml(s)


def test_cli_refuses_with_exit_2_when_no_exact_program_fits(
        tmp_path: Path, capsys: Any, monkeypatch: Any) -> None:
    """With a (pretend) executor limit of 2 chunks, the equal-shards counterexample's 3
    exact chunks do not fit, and equal shares reach only 20/7 < 3 there: exit 2, and no
    rounded program is written."""
    topo = _topo(tmp_path, "golden:hypothesis-counterexample-equal-shards")
    monkeypatch.setattr(allreduce_msccl, "MAX_OFFSET", 1)
    code, rep, _ = _export(tmp_path, topo, capsys)
    assert code == 2
    err = rep["error"]
    assert "nchunksperloop = 3" in err and "Equal shares reach only 20/7" in err
    assert "rounding to fewer chunks would give other shares" in err
    assert "Traceback" not in err
    assert not (tmp_path / "ar.xml").exists()


def test_check_runs_the_program(tmp_path: Path, capsys: Any) -> None:
    code, rep, text = _export(tmp_path, "ring:4", capsys, "--check")
    # no <?xml declaration: the MSCCL runtimes refuse it (issue 29, docs/runtimes.md)
    assert code == 0 and rep["checked_time_per_unit"] == "3/4" and text.startswith("<algo ")


def test_smoke_gloo_passes(tmp_path: Path, capsys: Any) -> None:
    try:
        import torch  # noqa: F401
    except ImportError:
        if os.environ.get("COLLCERT_REQUIRE_TORCH") == "1":
            raise
        pytest.skip("torch is not installed (pip install 'collcert[smoke]')")
    topo = _topo(tmp_path, "golden:hypothesis-counterexample-equal-shards")
    assert _export(tmp_path, topo, capsys)[0] == 0
    code = main(["smoke", str(tmp_path / "ar.xml"), "--topology", topo, "--backend", "gloo",
                 "--size", "4K", "--iters", "1", "--json"])
    rep = json.loads(capsys.readouterr().out)
    assert code == 0 and rep["result"] == "PASS", rep
    assert any("ran in place and out of place" in n for n in rep["notes"])


def test_lp_json_schedule_with_zero_shares_runs() -> None:
    """The LP (5) schedule gives some roots share 0 (docs/schedule-format.md allows it); the
    execution plan that `collcert smoke` runs refused it ('weights must be positive')."""
    from collcert.reference.execution import plan_from_schedule

    case = json.loads((GOLDEN / "hypothesis-counterexample-rsag.json").read_text())
    doc = lp_schedule(Topology.from_json(case["topology"], strict=False)).to_json()
    assert sorted(doc["weights"].values()) == ["0", "0", "0", "0", "1"]
    plan = plan_from_schedule(doc)
    assert not plan.problems and not plan.notes
    assert all(first_mismatch(plan.spec, r, o, 2) is None
               for r, o in enumerate(run_host(plan, 2)))
    doc["weights"] = {k: "0" for k in doc["weights"]}
    with pytest.raises(ScheduleError, match="not all 0"):
        plan_from_schedule(doc)
