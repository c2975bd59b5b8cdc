"""collcert compare says before any work how long and how much memory it will take
(issue 21 area: 'compare dgx_a100:64 --progress' showed no estimate)."""

from __future__ import annotations

import argparse

import pytest

from collcert import platforms
from collcert.commands import compare


def _args(**kw: object) -> argparse.Namespace:
    base: dict[str, object] = {"collective": "allgather", "progress": False, "degrade": [],
                               "fail": []}
    base.update(kw)
    return argparse.Namespace(**base)


def test_the_estimate_grows_with_the_machine_and_the_collective() -> None:
    small, big = platforms.dgx_a100(8), platforms.dgx_a100(64)
    s_small, m_small = compare.compare_estimate(small, "allgather")
    s_big, m_big = compare.compare_estimate(big, "allgather")
    assert 0 < s_small < s_big and 0 < m_small < m_big
    assert compare.compare_estimate(big, "allreduce")[0] > s_big
    assert compare.compare_estimate(big, "allgather", machines=2)[0] == 2 * s_big


def test_progress_prints_the_estimate_first(capsys: pytest.CaptureFixture[str]) -> None:
    compare._announce(_args(progress=True), platforms.dgx_a100(64))
    err = capsys.readouterr().err
    assert "512 GPUs, 3072 links: estimated" in err and "of memory" in err


def test_a_long_comparison_is_announced_without_progress(
        capsys: pytest.CaptureFixture[str]) -> None:
    compare._announce(_args(), platforms.dgx_a100(64))
    assert "estimated" in capsys.readouterr().err
    compare._announce(_args(), platforms.ring(8))  # a second: nothing said
    assert capsys.readouterr().err == ""


def test_direct_is_left_out_of_a_large_default_comparison_and_built_when_asked(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Above DIRECT_DEFAULT_WALKS walks per phase the default comparison leaves direct out
    and says why (text and --json); named in --baselines it is built; the estimate counts
    its walks only when it is built."""
    import json

    from collcert.cli import main
    from collcert.reference.baselines import registry

    box = platforms.dgx_a100(1)  # 8 GPUs: 56 walks per phase
    with_direct = compare.compare_estimate(box, "allgather")
    monkeypatch.setattr(registry, "DIRECT_DEFAULT_WALKS", 55)
    assert compare.compare_estimate(box, "allgather")[0] < with_direct[0]
    assert compare.compare_estimate(box, "allgather", names=("direct",)) == with_direct
    assert main(["compare", "dgx_a100:1", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    rows = [r["name"] for r in doc["rows"]]
    why = {s["name"]: s["why"] for s in doc["not_applicable"]}
    assert "direct" not in rows and "recursive" in rows
    assert "56 walks per phase" in why["direct"] and "--baselines" in why["direct"]
    assert main(["compare", "dgx_a100:1", "--baselines", "direct,recursive"]) == 0
    out = capsys.readouterr().out
    assert "direct (all pairs)" in out and "not applicable: direct" not in out
    monkeypatch.setattr(registry, "DIRECT_DEFAULT_WALKS", 56)
    assert registry.default_baselines(box) == (registry.BASELINES, [])
