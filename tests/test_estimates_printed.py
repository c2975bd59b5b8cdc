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
