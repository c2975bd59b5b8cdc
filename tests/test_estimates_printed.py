"""The estimate a size check computes is printed whenever the work goes ahead (issue 33
row 5: 'schedule torus:3x3 --format mscclpp-json --fixed-k 100000' ran 50 s to minutes
with nothing printed, though check_budget had estimated 72 s before it started)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from collcert.commands._common import announce_estimates
from collcert.reference.model import TopologyError, check_budget


def test_a_long_estimate_is_printed_once_and_a_short_one_only_with_progress(
        capsys: pytest.CaptureFixture[str]) -> None:
    with announce_estimates("x"):
        check_budget("the work", 1, "doing it", seconds=12.0)
        check_budget("the work", 1, "doing it again", seconds=12.0)
        check_budget("small work", 1, "a moment", seconds=0.5)
    err = capsys.readouterr().err
    assert err.count("collcert x: the work: doing it, estimated about 12 s") == 1
    assert "small work" not in err
    with announce_estimates("x", force=True):
        check_budget("small work", 1, "a moment", seconds=0.5)
    assert "small work: a moment, estimated about 1 s" in capsys.readouterr().err
    check_budget("outside", 1, "no listener", seconds=100.0)  # nothing prints outside
    assert capsys.readouterr().err == ""
    with pytest.raises(TopologyError), announce_estimates("x"):
        check_budget("too long", 1, "forever", seconds=1e9)
    assert "too long" not in capsys.readouterr().err  # refused: not announced


def test_schedule_prints_the_export_estimate(tmp_path: Path, monkeypatch: Any,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    from collcert.cli import main
    from collcert.reference.execution import mscclpp_export

    monkeypatch.setattr(mscclpp_export, "SECONDS_PER_MESSAGE", 1.0)  # as if it were long
    out = tmp_path / "a.json"
    assert main(["schedule", "ring:4", "--format", "mscclpp-json", "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "collcert schedule: MSCCL++ export of 4 ranks: compiling about" in err
    assert "estimated about" in err and out.exists()


def test_fuzz_check_estimates_the_campaign_and_reports_progress(
        monkeypatch: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 33 row 6: 'fuzz check --count 1000 --jobs 8' on 2 cores printed nothing but
    failures for minutes. Now the whole run's estimate first, then (stderr not a
    terminal) a line with the cases done and the time left every LINE_EVERY seconds."""
    from collcert.cli import main
    from collcert.commands import fuzz

    monkeypatch.setattr(fuzz, "LINE_EVERY", 0.0)
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    assert main(["fuzz", "check", "--count", "3", "--jobs", "8", "-p", "transpose",
                 "--no-save"]) == 0
    err = capsys.readouterr().err
    assert "fuzz check: 3 topologies × 1 properties in 8 processes on 2 cores (so 2 at a " \
           "time): estimated about" in err
    assert "fuzz check: 1/3 cases (0 failed)" in err and "left" in err
