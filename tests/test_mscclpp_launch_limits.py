"""MSCCL++ plans the executor cannot launch (red team O.5.8, O.5.9): a block size beyond
CUDA's, message sizes that are not unsigned 64-bit, and a threadblock over the executor's
64 ops, refused at that threadblock without reading the rest; and a block too small for
the channels its ops list (thread i handles channel i: the rest are never signalled)."""

from __future__ import annotations

import copy
import json
import time
from pathlib import Path
from typing import Any

import pytest

from collcert.certify.execution import mscclpp, mscclpp_sim
from collcert.cli import main

DATA = Path(__file__).parent / "data" / "mscclpp"


@pytest.fixture(scope="module")
def plan() -> dict[str, Any]:
    """MSCCL++'s own 2-GPU allgather (tests/data/mscclpp): one channel per op."""
    doc: dict[str, Any] = json.loads((DATA / "allgather_2gpu.json").read_text())
    return doc


def _reasons(doc: dict[str, Any]) -> list[str]:
    v = mscclpp_sim.run(mscclpp.read(json.dumps(doc))).verdict
    return [] if v.ok else v.all_reasons()


@pytest.mark.parametrize("value", [1, 256, 1024])
def test_a_block_size_cuda_launches_is_valid(plan: dict[str, Any], value: int) -> None:
    assert _reasons({**plan, "num_threads_per_block": value}) == []


def test_a_block_smaller_than_an_ops_channels_leaves_channels_unsignalled() -> None:
    # allreduce_4gpu signals and waits on 3 channels per op: with 2 threads per block,
    # channel 3 of each op has no thread (handleSignal/handleWait: tid < nChannels)
    doc = json.loads((DATA / "allreduce_4gpu.json").read_text())
    reasons = _reasons({**doc, "num_threads_per_block": 2})
    assert reasons[0] == ("rank 0 tb 0 op 1 (rlxsignal): acts on 3 channels, semaphores or "
                          "outputs, but its block has 2 thread(s) and thread i handles the "
                          "i-th: the rest are never handled (execution_kernel.hpp: tid < n)")
    assert _reasons({**doc, "num_threads_per_block": 3}) == []


@pytest.mark.parametrize("value", [10**50, 0, -3, 1025, 2048, "1024", 512.0, None, True])
def test_a_block_size_cuda_refuses_is_named(plan: dict[str, Any], value: Any) -> None:
    reasons = _reasons({**plan, "num_threads_per_block": value})
    assert len(reasons) == 1
    assert "num_threads_per_block" in reasons[0] and "1 to 1024" in reasons[0]


@pytest.mark.parametrize("key", ["min_message_size", "max_message_size"])
@pytest.mark.parametrize("value", [-1, 1 << 64, "0", 1.5])
def test_message_sizes_are_unsigned_64_bit(plan: dict[str, Any], key: str, value: Any) -> None:
    reasons = _reasons({**plan, key: value})
    assert len(reasons) == 1 and key in reasons[0] and "unsigned 64-bit" in reasons[0]
    assert _reasons({**plan, key: (1 << 64) - 1}) == []


def test_a_threadblock_over_64_ops_stops_the_reading(plan: dict[str, Any]) -> None:
    doc = copy.deepcopy(plan)
    tb = doc["gpus"][0]["threadblocks"][0]
    tb["ops"] = [tb["ops"][0]] * (mscclpp.MAX_OPERATION + 1)
    # what comes after it would not even be read as a plan: never reached
    doc["gpus"][1]["threadblocks"].append({"id": "garbage", "ops": "garbage"})
    reasons = _reasons(doc)
    assert len(reasons) == 1
    assert "rank 0 tb 0 has 65 ops" in reasons[0] and "not read" in reasons[0]
    tb["ops"] = tb["ops"][:mscclpp.MAX_OPERATION]  # 64 are loaded: the garbage is read
    with pytest.raises(mscclpp.InputError, match="garbage"):
        mscclpp.read(json.dumps(doc))


def test_cli_refuses_half_a_million_ops_quickly(plan: dict[str, Any], tmp_path: Any,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    doc = copy.deepcopy(plan)
    tb = doc["gpus"][0]["threadblocks"][0]
    tb["ops"] = [tb["ops"][0]] * 100_001
    path = tmp_path / "big.json"
    path.write_text(json.dumps(doc))
    started = time.monotonic()
    assert main(["audit", "complete:2", str(path)]) == 1
    assert time.monotonic() - started < 15
    out = capsys.readouterr().out
    assert "INVALID" in out and "100001 ops" in out and "moves no data" not in out
