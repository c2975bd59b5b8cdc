"""An MSCCL++ plan's simulation is sized from its counts before it runs (red team R1:
an NVLS export of 128 ranks simulated for 2 minutes without a word): announced with
--progress-like thresholds by ``collcert audit`` and ``collcert smoke``, refused beyond
the time budget with the plan's size (exit 2), never silent."""

from __future__ import annotations

from pathlib import Path

import pytest

from collcert.auditing import check_mscclpp_size
from collcert.certify.execution import mscclpp
from collcert.cli import main

DATA = Path(__file__).parent / "data" / "mscclpp"
PLAN = DATA / "allreduce_4gpu.json"


def test_the_estimate_grows_with_the_plan_and_refuses_beyond_the_budget(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from collcert.reference.model import estimates_to

    plan = mscclpp.read(PLAN.read_text(), str(PLAN))
    heard: list[tuple[str, str, float]] = []
    with estimates_to(lambda *a: heard.append(a)):
        check_mscclpp_size(plan)
    assert len(heard) == 1 and "MSCCL++ plan of 4 ranks" in heard[0][0]
    assert "threadblocks" in heard[0][1] and 0 < heard[0][2] < 1
    monkeypatch.setenv("COLLCERT_MAX_SECONDS", "1e-9")
    with pytest.raises(Exception, match="would take about .* more than"):
        check_mscclpp_size(plan)


def test_audit_refuses_with_exit_2_naming_the_plan(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from collcert.reference.model import estimates_to

    heard: list[float] = []
    with estimates_to(lambda what, detail, s: heard.append(s)):
        check_mscclpp_size(mscclpp.read(PLAN.read_text(), str(PLAN)))
    # a budget below the plan's estimate (ring:4's optimum still fits: micro-seconds)
    monkeypatch.setenv("COLLCERT_MAX_SECONDS", repr(heard[0] / 2))
    assert main(["audit", "ring:4", str(PLAN)]) == 2
    err = capsys.readouterr().err
    assert "MSCCL++ plan of 4 ranks" in err and "audit a smaller plan" in err
    assert "Traceback" not in err
