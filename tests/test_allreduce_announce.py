"""optimum -c allreduce says before the work that the MAC-BC LP may take minutes (issue 24 row 8)."""

from __future__ import annotations

import pytest

from collcert import platforms
from collcert.commands import _allreduce


@pytest.mark.parametrize(("nodes", "said"), [(8, False), (64, True), (256, True), (257, False)])
def test_the_slow_mac_bc_lp_is_announced_first(nodes: int, said: bool,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    _allreduce._announce_mac_bc(platforms.ring(nodes), progress_shown=False)
    err = capsys.readouterr().err
    assert ("can take minutes" in err) is said
    if said:
        assert f"on {nodes} compute nodes" in err and "--progress" in err


def test_no_announcement_where_the_lp_is_not_solved(capsys: pytest.CaptureFixture[str]) -> None:
    _allreduce._announce_mac_bc(platforms.dgx_a100(8), progress_shown=False)  # switches
    assert capsys.readouterr().err == ""
