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


def test_the_estimate_covers_the_barriers(monkeypatch: pytest.MonkeyPatch) -> None:
    # issue 29: with its nops (about 13 ops a message) and the compiles again with fewer
    # ops per threadblock, the export takes at most what it estimated
    import json
    import tracemalloc

    from collcert.reference.execution import mscclpp_export as me

    doc = collcert.schedule(collcert.platforms.torus((3, 3)), "allreduce").to_json()
    messages = me._messages(doc)
    need = me.BYTES_PER_TRANSFER * schedule_transfers(doc) + me.BYTES_PER_MESSAGE * messages
    tracemalloc.start()
    try:
        text = mscclpp_json(doc, inplace=True)  # 2 compiles: 10 plan ops make 65 here
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    ops = [o["name"] for g in json.loads(text)["gpus"] for tb in g["threadblocks"]
           for o in tb["ops"]]
    assert ops.count("nop") > len(ops) / 3 and len(ops) <= 16 * messages
    assert peak <= need
    # and a budget between the transfers' share and the whole estimate refuses it, naming
    # the messages
    monkeypatch.setenv("COLLCERT_MAX_MEMORY", str(need - 1))
    with pytest.raises(TopologyError, match=f"in {messages} messages"):
        mscclpp_json(doc, inplace=True)
