"""The box symmetry is searched once per schedule and handed to the optimum (issue 18, rule 4).

``schedule()`` looks for the symmetry itself (its phases go by orbits) and passes
what it found to ``optimum()``, which would otherwise search again from
``orbits.AUTO_MIN_COMPUTE`` compute nodes on; ``schedule(symmetry=False)``
reaches the optimum with no search at all. The search function is counted by
monkeypatching it. Both entry points check their arguments with one validator:
the same words, TopologyError from optimum() and ScheduleError from schedule().
"""

from __future__ import annotations

from typing import Any

import pytest

from collcert import platforms
from collcert.certify.forestcoll import check_optimum
from collcert.certify.model import Topo
from collcert.reference.forestcoll import optimum, schedule
from collcert.reference.model import ScheduleError, TopologyError
from collcert.reference.symmetry import find_symmetry, orbits


@pytest.fixture
def searches(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every call of the symmetry search, as (topology name, weights)."""
    calls: list[Any] = []
    real = orbits.find_symmetry

    def counted(t: Any, weights: Any = None) -> Any:
        calls.append((t.name, weights))
        return real(t, weights)

    monkeypatch.setattr(orbits, "find_symmetry", counted)
    return calls


@pytest.mark.parametrize("collective", ["allgather", "reduce-scatter", "allreduce"])
def test_a_schedule_searches_once_and_its_optimum_uses_what_was_found(
        searches: list[Any], collective: str) -> None:
    t = platforms.dgx_a100(8)  # 64 compute nodes: optimum() would search by itself
    assert t.num_compute >= orbits.AUTO_MIN_COMPUTE
    s = schedule(t, collective)
    assert len(searches) == 1
    assert s.optimum.automorphisms  # the optimum went by orbits, without searching
    assert all("representative root" in p.stats["symmetry"] for p in s.phases)
    assert check_optimum(Topo(t.to_json()), s.optimum.certificate()).ok
    # the same optimum and certificate as optimum() finds by itself
    searches.clear()
    alone = optimum(t, collective)
    assert len(searches) == 1
    assert alone.certificate() == s.optimum.certificate()


def test_schedule_without_symmetry_reaches_the_optimum_with_no_search(
        searches: list[Any]) -> None:
    t = platforms.dgx_a100(8)
    s = schedule(t, symmetry=False)
    assert searches == []
    assert not s.optimum.automorphisms and len(s.optimum.flows) == t.num_compute
    assert s.phases[0].stats["symmetry"] == "none found"
    assert s.algbw == optimum(t, symmetry=False).algbw
    assert [st for st in s.timings if st in ("optimum", "symmetry")] == ["optimum"]


def test_small_machines_search_once_for_the_phases_only(searches: list[Any]) -> None:
    t = platforms.two_box_example()  # below AUTO_MIN_COMPUTE: the optimum stays explicit
    s = schedule(t, "allreduce")
    assert len(searches) == 1
    assert not s.optimum.automorphisms
    assert all("representative root" in p.stats["symmetry"] for p in s.phases)
    assert list(s.timings)[:2] == ["optimum", "symmetry"]  # reported in the usual order
    assert s.optimum.certificate() == optimum(t, "allreduce").certificate()


def test_weights_are_searched_with_and_single_roots_not_at_all(searches: list[Any]) -> None:
    t = platforms.two_box_example()
    schedule(t, weights=[1, 2, 1, 2, 1, 2, 1, 2])
    assert searches == [(t.name, [1, 2, 1, 2, 1, 2, 1, 2])]
    searches.clear()
    schedule(t, "broadcast", root="c1.1")
    assert searches == []


@pytest.mark.parametrize("collective", ["allgather", "reduce-scatter", "allreduce"])
def test_optimum_takes_a_symmetry_found_already(searches: list[Any], collective: str) -> None:
    t = platforms.dgx_a100(3)
    sym = find_symmetry(t)
    assert sym is not None
    searches.clear()
    given = optimum(t, collective, symmetry=sym)
    assert searches == []
    assert given.certificate() == optimum(t, collective, symmetry=True).certificate()


def test_optimum_refuses_a_symmetry_of_something_else() -> None:
    t = platforms.dgx_a100(3)
    other = find_symmetry(platforms.dgx_a100(2))
    assert other is not None
    with pytest.raises(TopologyError, match="not an automorphism"):
        optimum(t, symmetry=other)
    sym = find_symmetry(t)
    assert sym is not None
    lopsided = [1] * 8 + [2] * 16  # box 0 lighter: the box shift does not keep it
    with pytest.raises(TopologyError, match="supply"):
        optimum(t, weights=lopsided, symmetry=sym)


@pytest.mark.parametrize("collective, kw, words", [
    ("gather", {}, "unknown collective 'gather'"),
    ("broadcast", {}, "broadcast needs a root"),
    ("reduce", {"root": "w0"}, "'w0' is not a compute node"),
    ("allgather", {"root": "c1.1"}, "allgather has no root"),
    ("broadcast", {"root": "c1.1", "fixed_k": 2}, "fixed k applies to allgather and "
                                                  "reduce-scatter, not broadcast"),
    ("allreduce", {"fixed_k": 1}, "fixed k applies to allgather and reduce-scatter, "
                                  "not allreduce"),
    ("allgather", {"fixed_k": 0}, "fixed k must be a positive integer, got 0"),
    ("allgather", {"fixed_k": 2, "weights": [1] * 8}, "fixed k and weights cannot be combined"),
    ("allgather", {"weights": [1, 2]}, "weights has 2 entries"),
])
def test_one_validator_one_wording(collective: str, kw: dict[str, Any], words: str) -> None:
    t = platforms.two_box_example()
    with pytest.raises(TopologyError) as from_optimum:
        optimum(t, collective, **kw)
    with pytest.raises(ScheduleError) as from_schedule:
        schedule(t, collective, **kw)
    assert words in str(from_optimum.value)
    assert str(from_optimum.value) == str(from_schedule.value)


def test_weights_of_other_collectives_are_refused_by_schedule_ignored_by_optimum() -> None:
    t = platforms.two_box_example()
    with pytest.raises(ScheduleError, match="weights apply to allgather and reduce-scatter"):
        schedule(t, "allreduce", weights=[1] * 8)
    # the audit passes an allreduce schedule's weights along: the RS+AG bounds ignore them
    assert (optimum(t, "allreduce", weights=[1] * 8).certificate()
            == optimum(t, "allreduce").certificate())
