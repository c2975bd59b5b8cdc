"""Every benchmark answers --help with its usage and exits 0, without running.

bench_lp.py ended in a ValueError traceback on --help, and bench_reduction.py and
bench_smoke.py ignored it and started the full benchmark (minutes).
"""

from __future__ import annotations

import json
import runpy
import sys
from fractions import Fraction
from pathlib import Path

import pytest

BENCHMARKS = sorted(p for p in (Path(__file__).resolve().parents[1] / "benchmarks").glob("*.py")
                    if not p.name.startswith("_"))  # _timed.py: a helper the scripts import


@pytest.mark.parametrize("path", BENCHMARKS, ids=lambda p: p.name)
def test_benchmark_help(path: Path, monkeypatch: pytest.MonkeyPatch,
                        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "argv", [str(path), "--help"])
    monkeypatch.syspath_prepend(str(path.parent))  # as `python benchmarks/NAME.py` has it
    with pytest.raises(SystemExit) as exc:
        runpy.run_path(str(path), run_name="__main__")
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: {path.name}"), out[:200]


def test_bench_audit_schedule_is_a_valid_schedule(tmp_path: Path) -> None:
    """The rail allgather bench_audit.py builds is audited VALID at the optimum (it lacked
    compute_nodes once the format required them, and the benchmark ended in a traceback)."""
    from collcert import audit_file, platforms

    path = next(p for p in BENCHMARKS if p.name == "bench_audit.py")
    doc = runpy.run_path(str(path))["rail_allgather"](4)
    (tmp_path / "rail.json").write_text(json.dumps(doc))  # read as the benchmark reads it
    report = audit_file(platforms.dgx_a100(4), str(tmp_path / "rail.json"))
    assert report.valid, report.reasons
    # its docstring: time (boxes − 1)/(8·boxes·25), the optimum
    assert report.algbw == Fraction(8 * 4 * 25, 3) and report.ratio == 1


def test_bench_audit_msccl_stages() -> None:
    """--msccl times every stage of auditing an exported MSCCL program and audits it end to
    end in a fresh process (exit 0, its CPU time and peak memory)."""
    path = next(p for p in BENCHMARKS if p.name == "bench_audit.py")
    row = runpy.run_path(str(path))["msccl_stages"](1, "allgather", True)
    for stage in ("parse", "read", "simulate in-place", "simulate out-of-place", "route",
                  "optimum"):
        assert isinstance(row[stage], float) and row[stage] >= 0
        assert stage in row["peak_python_MB"]
    assert row["time_per_unit"] == "7/2400" and row["audit_exit"] == 0
    assert row["audit_peak_rss_MB"] > 0
