"""Degraded machines with faults at different positions: the faults grouped one per box
orbit (reference/forestcoll/nearpack.py), the schedule borrowed and certified on the
degraded machine itself."""

from __future__ import annotations

import json
from typing import Any

from collcert import platforms
from collcert.certify.forestcoll import check_schedule
from collcert.certify.model import Topo
from collcert.reference.forestcoll import optimum, schedule, symsplit
from collcert.reference.forestcoll.nearpack import regrouped
from collcert.reference.forestcoll.symmetrize import symmetrized
from collcert.reference.model import Topology, what_if
from collcert.reference.symmetry import is_automorphism

THREE_POSITIONS = ["b0.nic1", "b1.nic2", "b3.nic5"]
NO_ROOM = ["b0.nic2", "b1.nic5", "b3.nic1", "b3.nic3"]


def _degraded(boxes: int, fail: list[str], degrade: list[str] | None = None,
              ) -> tuple[Topology, Topology]:
    h = platforms.dgx_a100(boxes)
    t = what_if(h, fail=fail, degrade=degrade or []).topology
    assert t is not None
    return h, t


def _certified(t: Topology, s: object) -> None:
    doc = json.loads(json.dumps(s.to_json(compact=True)))  # type: ignore[attr-defined]
    verdict = check_schedule(Topo(t.to_json()), doc)
    assert verdict.ok, verdict.all_reasons()[:3]
    assert verdict.facts["time_per_unit"] == s.time_per_unit  # type: ignore[attr-defined]


def test_grouped_machine_is_below_the_degraded_one_with_a_free_symmetry() -> None:
    h, t = _degraded(8, THREE_POSITIONS)
    got = regrouped(t, h)
    assert got is not None
    m, sym = got
    assert all(c <= t.capacity[e] for e, c in m.capacity.items())
    # NICs 1 and 5 (both on ib1) are one class, aligned by a swap inside a box, NIC 2 the
    # other: 2 cycles of 4 boxes, and every box lost exactly one NIC, none lost two
    lost = [sum(f"b{b}.nic{g}" not in m.index for g in range(8)) for b in range(8)]
    assert lost == [1] * 8 and sym.order == 4
    idx = m.index
    arcs = {(idx[a], idx[b]): c for (a, b), c in m.capacity.items()}
    sigma = sym.perms[1].tolist()
    assert is_automorphism(sigma, m.num_compute, arcs)
    # acts freely: σ'^j moves every compute node for 0 < j < order
    for j in range(1, sym.order):
        assert all(int(sym.perms[j][v]) != v for v in range(m.num_compute))


def test_faults_at_different_positions_are_borrowed_at_the_optimum() -> None:
    h, t = _degraded(8, THREE_POSITIONS)
    best = optimum(t, "allgather", symmetry=False).time_per_unit
    # the box shift's symmetrization loses bandwidth here (every box loses three NICs)
    m0 = symmetrized(t, h)
    assert m0 is not None and optimum(m0, "allgather").time_per_unit > best
    s = schedule(t, "allgather", healthy=h)
    assert "faults grouped" in s.extra["symmetrized"]
    assert s.topology is t and s.time_per_unit == best
    _certified(t, s)


def test_two_faults_in_one_box_and_a_halved_nic() -> None:
    h, t = _degraded(8, ["b2.nic3", "b2.nic6", "b5.nic0"], degrade=["b7.nic4=25/2"])
    s = schedule(t, "allgather", healthy=h)
    assert "faults grouped" in s.extra["symmetrized"]
    assert s.time_per_unit == optimum(t, "allgather", symmetry=False).time_per_unit
    _certified(t, s)


def test_a_stuck_greedy_is_unstuck_by_moving_another_trees_arc(monkeypatch: Any) -> None:
    # every box of the grouped machine is a bottleneck: both greedy orders of sympack get
    # stuck here, and the packing with each box entered once and re-routed arcs completes
    # (on the plain orbit split: the spread one of symsplit packs greedily)
    monkeypatch.setattr(symsplit, "SPREAD_WAYS", 0)
    h, t = _degraded(8, ["b2.nic0", "b3.nic6", "b5.nic7"])
    s = schedule(t, "allgather", healthy=h)
    assert "faults grouped" in s.extra["symmetrized"]
    assert s.phases[0].stats["repair_moves"] > 0
    assert s.time_per_unit == optimum(t, "allgather", symmetry=False).time_per_unit
    _certified(t, s)


def test_reduce_scatter_and_allreduce_too() -> None:
    h, t = _degraded(4, ["b0.nic2", "b3.nic5"])
    for coll in ("reduce-scatter", "allreduce"):
        s = schedule(t, coll, healthy=h)
        assert "faults grouped" in s.extra["symmetrized"]
        own = optimum(t, coll, symmetry=False)
        target = own.extra["rsag_time_per_unit"] if coll == "allreduce" else own.time_per_unit
        assert s.time_per_unit == target
        _certified(t, s)


def test_no_room_for_the_signatures_falls_back() -> None:
    # three classes (an even NIC, an odd NIC, two NICs of one box) on four boxes: cycles
    # of equal length ≥ 2 give at most 2 orbits
    h, t = _degraded(4, NO_ROOM)
    assert regrouped(t, h) is None
    s = schedule(t, "allgather", healthy=h)
    assert "symmetrized" not in s.extra
    assert s.time_per_unit == optimum(t, "allgather").time_per_unit


def test_not_applicable_without_box_faults_or_with_a_failed_gpu_or_without_boxes() -> None:
    h = platforms.dgx_a100(4)
    assert regrouped(h, h) is None  # nothing degraded
    _, gone = _degraded(4, ["b1.gpu0"])
    assert regrouped(gone, h) is None  # the compute nodes changed
    ring = platforms.ring(8)
    a, b = next(iter(ring.capacity))
    slow = what_if(ring, degrade=[f"{a}<>{b}=1/2"]).topology
    assert slow is not None
    assert regrouped(slow, ring) is None  # the shift moves every node: no boxes to permute
