"""Issue 22: an MSCCL++ export too large to build is refused from its estimate, before any
work (the estimate the MSCCL export uses: collcert.reference.model.schedule_transfers)."""

from __future__ import annotations

from pathlib import Path

import pytest

import collcert
from collcert.cli import main
from collcert.reference.execution import mscclpp_json
from collcert.reference.model import TopologyError, schedule_transfers


def test_a_huge_fixed_k_is_refused_with_the_estimate() -> None:
    doc = collcert.schedule(collcert.platforms.dgx1(), fixed_k=10**7).to_json()
    need = schedule_transfers(doc)
    assert need > 10**8  # every tree edge moves multiplicity·lcm/k cells
    with pytest.raises(TopologyError, match=f"about {need} transfers"):
        mscclpp_json(doc)


def test_a_small_one_is_estimated_and_built() -> None:
    doc = collcert.schedule(collcert.platforms.ring(4), "allreduce").to_json()
    assert 0 < schedule_transfers(doc) < 1000
    assert '"gpus"' in mscclpp_json(doc)


def test_cli_exit_2_and_nothing_written(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "plan.json"
    assert main(["schedule", "dgx1", "--fixed-k", "10000000", "--format", "mscclpp-json",
                 "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "MSCCL++ export of 8 ranks" in err and "transfers" in err and "--fixed-k" in err
    assert not out.exists()
