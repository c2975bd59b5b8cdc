"""The MSCCL export refuses, from the schedule's counts and before any plan is built, a
program whose buffers the runtime cannot address (issue 24 row 2: --fixed-k 10^5 on ring:4
built its plan for 14.7 s and 550 MB before the 64-step refusal)."""

from __future__ import annotations

import json
import math

import pytest

from collcert import platforms
from collcert.reference.execution import msccl_export, msccl_size
from collcert.reference.forestcoll import schedule
from collcert.reference.model import ScheduleError


def _doc(**kw: object) -> dict[str, object]:
    s = schedule(platforms.ring(4), **kw)  # type: ignore[arg-type]
    return json.loads(json.dumps(s.to_json(), default=str))


def test_chunks_are_ranks_times_the_lcm_of_k() -> None:
    doc = _doc(collective="allgather", fixed_k=3)
    assert msccl_size.msccl_chunks(doc) == 4 * 3
    rooted = _doc(collective="broadcast", root=0)  # the root's shard alone
    assert msccl_size.msccl_chunks(rooted) == math.lcm(*(p["k"] for p in rooted["phases"]))
    bad = {**doc, "phases": [{"k": "three"}]}
    assert msccl_size.msccl_chunks(bad) == 0  # the plan's reader says why


@pytest.mark.parametrize("k", [10**5, 10**7, 10**20])
def test_a_huge_k_is_refused_before_the_plan(k: int, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_plan(*args: object, **kw: object) -> None:
        raise AssertionError("the plan was built")

    monkeypatch.setattr(msccl_export, "plan_from_schedule", no_plan)
    s = schedule(platforms.ring(4), "allgather", fixed_k=k)
    with pytest.raises(ScheduleError) as err:
        msccl_export.msccl_xml(s, strict=False)
    text = str(err.value)
    assert "32,768 chunk offsets" in text and "at most 8,192" in text
    assert f"{4 * k:,}" in text or "about 10^" in text


def test_the_limit_itself_passes_the_estimate() -> None:
    doc = _doc(collective="allgather", fixed_k=8192)
    assert msccl_size.msccl_chunks(doc) == 32768
    msccl_size.check_chunks(doc, 32768)  # no refusal: the runtime's own limits decide
    with pytest.raises(ScheduleError):
        msccl_size.check_chunks(_doc(collective="allgather", fixed_k=8193), 32768)
