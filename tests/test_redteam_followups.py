"""Holes the red-team pass of issue 24 found in the other issues' new options."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"


def _collcert(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "collcert", *args], capture_output=True,
                          text=True, timeout=120, cwd=cwd)


def test_strict_is_never_ignored(tmp_path: Path) -> None:
    run = _collcert("schedule", "ring:4", "--strict", "-o", "s.json", cwd=tmp_path)
    assert run.returncode == 2 and "--strict" in run.stderr and "msccl-xml" in run.stderr
    assert not (tmp_path / "s.json").exists()
    ok = _collcert("schedule", "ring:4", "--strict", "--format", "msccl-xml", "-o", "s.xml",
                   cwd=tmp_path)
    assert ok.returncode == 0 and (tmp_path / "s.xml").exists()


def test_an_arrow_in_a_link_gets_the_link_syntax(tmp_path: Path) -> None:
    run = _collcert("optimum", "ring:4", "--fail", "0->1", cwd=tmp_path)
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert "write a link as SRC>DST" in run.stderr and "'0-'" not in run.stderr


def test_check_names_an_mscclpp_plan_and_points_to_audit(tmp_path: Path) -> None:
    plan = DATA / "mscclpp" / "allreduce_4gpu.json"
    run = _collcert("check", "complete:4", str(plan), cwd=tmp_path)
    assert run.returncode == 2 and "MSCCL++ execution plan" in run.stderr
    assert "collcert audit" in run.stderr


def test_a_huge_degrade_capacity_is_called_too_large(tmp_path: Path) -> None:
    run = _collcert("optimum", "ring:4", "--degrade", "0<>1=1e999999", cwd=tmp_path)
    assert run.returncode == 2 and "too large" in run.stderr and "Traceback" not in run.stderr
