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
