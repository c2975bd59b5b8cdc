"""A certificate holds only what 'collcert check' proves: the α-β view is refused beside it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.parametrize("coll", ["allgather", "allreduce", "alltoall"])
def test_certificate_with_sizes_is_refused_and_json_keeps_them(coll: str, tmp_path: Path) -> None:
    base = [sys.executable, "-m", "collcert", "optimum", "ring:4", "-c", coll]
    run = subprocess.run(base + ["--certificate", "--sizes", "1K:1M"], capture_output=True,
                         text=True, timeout=120, cwd=tmp_path)
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert "--certificate writes only what 'collcert check' proves" in run.stderr
    assert run.stdout == ""
    cert = subprocess.run(base + ["--certificate"], capture_output=True, text=True, timeout=120,
                          cwd=tmp_path)
    assert cert.returncode == 0
    (tmp_path / "c.json").write_text(cert.stdout)
    check = subprocess.run([sys.executable, "-m", "collcert", "check", "ring:4", "c.json"],
                           capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert check.returncode == 0, check.stdout + check.stderr
    view = subprocess.run(base + ["--json", "--sizes", "1K:1M"], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)
    assert view.returncode == 0 and "sizes" in json.loads(view.stdout)
