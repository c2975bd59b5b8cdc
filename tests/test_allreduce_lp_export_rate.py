"""`collcert schedule -c allreduce --method lp --format msccl-xml|mscclpp-json`: the
export is rated before it is written (issue 22 item 1, for LP (5)'s exports as for the
tree exports): slower than the schedule is a warning, or with --strict exit 1 and
nothing written. The figure said is the one `collcert audit` gives the written program."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest
from test_export_rate import issue_topology  # the 5-GPU, 2-switch machine of issue 22

import collcert
from collcert.cli import main


@pytest.mark.parametrize("fmt", ["msccl-xml", "mscclpp-json"])
def test_slower_lp_export_refused_under_strict(fmt: str, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    t = issue_topology()  # linked GPU pairs whose trees also go through switches
    topo = tmp_path / "t.json"
    topo.write_text(json.dumps(t.to_json()))
    out = tmp_path / "export.out"
    args = ["schedule", str(topo), "-c", "allreduce", "--method", "lp", "--format", fmt,
            "-o", str(out)]
    assert main([*args, "--strict"]) == 1
    err = capsys.readouterr().err
    assert "refused (--strict)" in err and "direct link" in err
    assert not out.exists()
    assert main([*args, "--json"]) == 0  # without --strict: written, with a warning
    captured = capsys.readouterr()
    assert "warning:" in captured.err and out.exists()
    export = json.loads(captured.out)["export"]
    assert export["at_schedule_rate"] is False
    assert Fraction(export["algbw"]) < Fraction(json.loads(captured.out)["algbw"])
    if fmt == "msccl-xml":  # the independent audit of the written program agrees
        report = collcert.audit(t, out.read_text())
        assert report.valid and report.algbw == Fraction(export["algbw"])


def test_lp_export_at_rate_passes_strict(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "t.xml"
    assert main(["schedule", "torus:3x3", "-c", "allreduce", "--method", "lp", "--format",
                 "msccl-xml", "-o", str(out), "--strict", "--json"]) == 0
    captured = capsys.readouterr()
    assert out.exists() and "warning" not in captured.err
    assert json.loads(captured.out)["export"]["at_schedule_rate"] is True
