"""Baseline schedules run under `collcert smoke` (gloo ranks, and the single-gpu backend on
the CPU) and every rank's output is right. Skipped without torch, unless
COLLCERT_REQUIRE_TORCH=1 (CI) makes that a failure."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from collcert import platforms
from collcert.reference import baselines as bl

try:
    import torch  # noqa: F401
except ImportError:
    if os.environ.get("COLLCERT_REQUIRE_TORCH") == "1":
        raise RuntimeError("COLLCERT_REQUIRE_TORCH=1 but torch cannot be imported: install "
                           "'collcert[smoke]'") from None
    pytest.skip("torch is not installed (pip install 'collcert[smoke]')",
                allow_module_level=True)

from collcert.smoke import smoke  # noqa: E402

CASES = [("nccl-ring", "allreduce"), ("nccl-tree", "allreduce"), ("nccl-ring", "allgather"),
         ("nccl-ring", "reduce-scatter"), ("nccl-tree", "broadcast"), ("recursive", "allreduce"),
         ("bruck", "allgather")]


@pytest.mark.parametrize("name,coll", CASES)
def test_baselines_pass_smoke(name: str, coll: str, tmp_path: Path) -> None:
    t = platforms.complete(4)  # 4 ranks: fast on gloo
    path = tmp_path / "b.json"
    path.write_text(json.dumps(bl.baseline(t, name, coll).document))
    rep = smoke(str(path), backend="single-gpu", device="cpu", size=4096, iters=1, seed=5)
    assert rep.passed, rep.failures
    if (name, coll) == ("nccl-tree", "allreduce"):  # unequal root shares, overlapped phases
        rep = smoke(str(path), backend="gloo", size=4096, iters=1, seed=5)
        assert rep.passed, rep.failures
