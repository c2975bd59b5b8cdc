"""Machines as they are built (issue 31, items 1, 5, 6): the group that sees the whole
machine, symmetric files with several generators, the new built-ins, rings on tori.

Every group found is re-checked here with code written for the test (each element an
automorphism, free on the compute nodes); every schedule is certified by collcert.certify,
and every optimum figure of a built-in is derived by hand from its cut.
"""

from __future__ import annotations

import copy
import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from collcert import platforms
from collcert.certify.forestcoll import check_schedule, expand_symmetric
from collcert.certify.model import Topo
from collcert.reference.baselines import ring_channels
from collcert.reference.baselines.hamilton import hamiltonian_cycle
from collcert.reference.forestcoll import optimum, schedule
from collcert.reference.model import Topology, TopologyError
from collcert.reference.symmetry import Symmetry, find_symmetry, orbits

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = json.loads((ROOT / "docs" / "schema" / "schedule.schema.json").read_text("utf-8"))


def _group_holds(t: Topology, sym: Symmetry) -> None:
    """Every element maps links to links of the same capacity and compute nodes to
    compute nodes, and no element but the identity fixes a compute node."""
    nodes = t.nodes
    for j, perm in enumerate(sym.perms):
        g = {nodes[i]: nodes[int(x)] for i, x in enumerate(perm)}
        assert all(t.capacity.get((g[a], g[b])) == c for (a, b), c in t.capacity.items())
        assert all(t.is_compute(g[v]) for v in t.compute_nodes)
        if j:
            assert all(g[v] != v for v in t.compute_nodes)


@pytest.mark.parametrize("make,factors", [
    (lambda: platforms.dgx_h100_rails(8, 4), (2, 4, 8)),  # units, servers, rails
    (lambda: platforms.gb200_nvl72(2), (2, 72)),  # racks × GPUs
    (lambda: platforms.torus((4, 6)), None),  # translations (a side of 4 may split)
    (lambda: platforms.torus((3, 3, 3)), (3, 3, 3)),
    (lambda: platforms.dgx_a100(3), (3, 2, 4)),  # boxes × IB switch halves × GPUs
])
def test_the_group_found_has_one_orbit(make: Any, factors: Any) -> None:
    t = make()
    sym = find_symmetry(t)
    assert sym is not None and len(sym.reps) == 1 and sym.order == t.num_compute
    if factors is not None:
        assert sorted(sym.factors) == sorted(factors)
    _group_holds(t, sym)
    box = orbits.box_shift(t)  # the cyclic box shift alone has more orbits, or none
    assert box is None or len(box.reps) > 1


@pytest.fixture(scope="module")
def rails() -> tuple[Topology, Any]:
    t = platforms.dgx_h100_rails(8, 4, 2)  # 2 units of 4 servers, 2:1 oversubscribed
    return t, schedule(t, "allgather")


def test_a_rail_fabric_schedule_by_one_root_is_certified(rails: tuple[Topology, Any]) -> None:
    t, s = rails
    assert "1 representative root" in s.phases[0].stats["symmetry"]
    v = check_schedule(Topo(t.to_json()), s.to_json(compact=True))
    assert v.ok, v.all_reasons()[:3]
    assert v.facts["time_per_unit"] == optimum(t, "allgather", symmetry=False).time_per_unit


@pytest.fixture(scope="module")
def torus_file() -> tuple[Topology, dict[str, Any]]:
    t = platforms.torus((3, 4))
    s = schedule(t, "allgather")
    assert s.symmetric
    doc: dict[str, Any] = json.loads(json.dumps(s.to_json(compact=True, symmetric=True)))
    return t, doc


def _reasons(t: Topology, doc: Any) -> str:
    v = check_schedule(Topo(t.to_json()), doc)
    assert not v.ok
    return " | ".join(v.all_reasons())


def test_a_file_of_several_generators_checks_by_orbits(
        torus_file: tuple[Topology, dict[str, Any]]) -> None:
    t, doc = torus_file
    block = doc["symmetry"]
    assert len(block["generators"]) == len(block["orders"]) > 1
    assert block["order"] == 12 and len(block["representatives"]) == 1
    jsonschema.validate(doc, SCHEMA)
    v = check_schedule(Topo(t.to_json()), doc)
    assert v.ok and "checked_by_orbits" in v.facts, v.all_reasons()[:3]
    full = check_schedule(Topo(t.to_json()), expand_symmetric(doc))
    assert full.ok and full.facts["time_per_unit"] == v.facts["time_per_unit"]
    assert len(expand_symmetric(doc)["phases"][0]["trees"]) == 12 * len(
        doc["phases"][0]["trees"])


def test_forged_groups_are_refused_naming_the_field(
        torus_file: tuple[Topology, dict[str, Any]]) -> None:
    t, doc = torus_file
    bad = copy.deepcopy(doc)
    bad["symmetry"]["order"] = 24
    assert "field 'symmetry.order': 24, but the orders" in _reasons(t, bad)
    bad = copy.deepcopy(doc)
    bad["symmetry"]["orders"] = list(reversed(bad["symmetry"]["orders"]))
    assert "field 'symmetry.orders'" in _reasons(t, bad)
    bad = copy.deepcopy(doc)  # one generator twice: the products repeat, not free
    bad["symmetry"]["generators"][1] = bad["symmetry"]["generators"][0]
    bad["symmetry"]["orders"][1] = bad["symmetry"]["orders"][0]
    bad["symmetry"]["order"] = bad["symmetry"]["orders"][0] ** 2
    text = _reasons(t, bad)
    assert "does not act freely" in text or "field 'symmetry" in text
    bad = copy.deepcopy(doc)  # the reflection x -> -x does not commute with the shift
    bad["symmetry"]["generators"][0] = [[f"{x}.0", f"{(-x) % 3}.0"] for x in (1, 2)] + \
        [[f"{x}.{y}", f"{(-x) % 3}.{y}"] for x in (1, 2) for y in range(1, 4)]
    assert "do not commute" in _reasons(t, bad) or "maps link" in _reasons(t, bad)
    bad = copy.deepcopy(doc)
    bad["symmetry"]["representatives"] = ["0.0", "1.1"]
    assert "lie in one orbit" in _reasons(t, bad)


def test_one_generator_files_are_written_as_before() -> None:
    t = platforms.dgx_a100(3)
    s = schedule(t, "allgather", symmetry=orbits.box_shift(t))
    block = s.to_json(symmetric=True)["symmetry"]
    assert list(block) == ["generators", "order", "representatives"]  # no 'orders'
    assert len(block["generators"]) == 1 and block["order"] == 3


def test_rail_fabric_figures_follow_the_superpod_tables() -> None:
    t = platforms.dgx_h100_rails(64, 32)  # 2 units: 16 leaves, 8 spines (DGX SuperPOD RA)
    leaves = [v for v in t.switch_nodes if str(v).startswith("leaf")]
    spines = [v for v in t.switch_nodes if str(v).startswith("spine")]
    assert (len(leaves), len(spines), t.num_compute) == (16, 8, 512)
    up = sum(c for (a, b), c in t.capacity.items() if a == "leaf0.0" and b in spines)
    assert up == 32 * 50  # non-blocking: as much up as down
    assert platforms.size_of("dgx_h100_rails", 64, 32) is not None
    size = platforms.size_of("dgx_h100_rails", 64, 32)
    assert size is not None and (size.compute, size.nodes, size.links) == (
        t.num_compute, len(t.nodes), len(t.capacity))
    with pytest.raises(TopologyError, match="do not fill scalable units"):
        platforms.dgx_h100_rails(10, 4)
    with pytest.raises(TopologyError, match="oversubscription"):
        platforms.dgx_h100_rails(8, 4, "1/2")


def test_an_oversubscribed_fabric_has_the_hand_computed_optimum() -> None:
    """8 servers, 4 a leaf (2 units), 8:1: a unit's 8 leaves take 8 · 4 · 50 / 8 = 200 GB/s
    from the spines, less than a server's 8 NICs (400): the cut around a unit rules,
    algbw = N · B⁺(S) / |S ∩ V_c| = 64 · 200 / 32 with S every node but one unit."""
    t = platforms.dgx_h100_rails(8, 4, 8)
    opt = optimum(t, "allgather")
    assert opt.algbw == Fraction(64 * 200, 32)
    plain = optimum(platforms.dgx_h100_rails(8, 4), "allgather")
    assert plain.algbw == Fraction(64 * 400, 56)  # every node but one server


def test_mi300x_and_the_mixed_cluster() -> None:
    t = platforms.mi300x(2)
    gpu = "b0.gpu0"
    assert sum(1 for (a, b) in t.capacity if a == gpu and t.is_compute(b)) == 7
    # one box alone: every GPU has 7 links of 64 GB/s in; two boxes: the cut around one GPU
    # and its NIC (7 links of 64 and the NIC's 50 in, 15 GPUs outside) is the tightest,
    # tighter than the one around a box (8 NICs of 50: 16 · 400 / 8 = 800)
    assert optimum(platforms.mi300x(1), "allgather").algbw == Fraction(8 * 7 * 64, 7)
    assert optimum(t, "allgather").algbw == Fraction(16 * (7 * 64 + 50), 15)
    m = platforms.mixed_cluster(1, 2)
    assert m.num_compute == 24 and find_symmetry(m) is None or len(
        find_symmetry(m).reps) > 1  # type: ignore[union-attr]


@pytest.mark.parametrize("dims", [(16, 16), (3, 5), (4, 4, 4), (2, 3)])
def test_tori_have_rings(dims: tuple[int, ...]) -> None:
    t = platforms.torus(dims)
    cycle = hamiltonian_cycle(t)
    assert cycle is not None and sorted(map(str, cycle)) == sorted(map(str, t.compute_nodes))
    assert all((a, b) in t.capacity for a, b in zip(cycle, cycle[1:] + cycle[:1]))
    rings = ring_channels(t)
    assert rings.channels and all(len(ch.order) == t.num_compute for ch in rings.channels)


def test_no_ring_where_none_exists() -> None:
    star = Topology(range(4), [(0, i, 1) for i in (1, 2, 3)] + [(i, 0, 1) for i in (1, 2, 3)])
    assert hamiltonian_cycle(star) is None


def test_a_group_too_large_for_a_table_still_gives_the_optimum(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Past MAX_TABLE_ENTRIES (elements × nodes) the group is kept by its generators: the
    optimum takes one max-flow and its certificate checks; the schedule is built by its
    orbits all the same (images by the generators' cycles) and its symmetric file is the
    one the table gives (here a small torus, the limit lowered)."""
    import json as _json

    from collcert.certify.forestcoll import check_optimum
    from collcert.reference.symmetry import group

    monkeypatch.setattr(group, "MAX_TABLE_ENTRIES", 100)
    t = platforms.torus((4, 6))
    sym = find_symmetry(t)
    assert sym is not None and not sym.tabled and len(sym.reps) == 1
    opt = optimum(t, "allgather", symmetry=True)
    assert opt.maxflows <= 3 and len(opt.flows) == 1
    v = check_optimum(t.to_json(), _json.loads(_json.dumps(opt.certificate())))
    assert v.ok, v.reasons
    assert opt.algbw == optimum(t, "allgather", symmetry=False).algbw
    s = schedule(t, "allgather")
    assert s.phases[0].stats["symmetry"].startswith("a group of 24 (")  # 1 orbit
    doc = _json.loads(_json.dumps(s.to_json(compact=True, symmetric=True)))
    assert check_schedule(Topo(t.to_json()), doc).ok
    with pytest.raises(group.TableTooLarge, match="kept by its generators"):
        _ = sym.perms
    monkeypatch.setattr(group, "MAX_TABLE_ENTRIES", 10**6)
    tabled = schedule(t, "allgather").to_json(compact=True, symmetric=True)
    assert _json.loads(_json.dumps(tabled))["phases"] == doc["phases"]


def test_a_group_without_its_table_builds_through_switches_it_fixes(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """dgx_h100:4 by its group 4 × 8 kept by its generators (the limit lowered, as for
    dgx_h100:16384): the InfiniBand switch is fixed by every element and each NVSwitch
    by the rail shifts, so canonical arcs come from stabilizers of switches; the
    symmetric file checks and is the file the table gives."""
    from collcert.reference.symmetry import boxes, group

    t = platforms.dgx_h100(4)
    for limit in (100, 10**6):
        monkeypatch.setattr(group, "MAX_TABLE_ENTRIES", limit)
        monkeypatch.setattr(boxes, "MAX_TABLE_ENTRIES", limit)
        s = schedule(t, "allgather")
        assert s.phases[0].stats["symmetry"] == "a group of 32 (4 × 8), 1 representative root"
        doc = json.loads(json.dumps(s.to_json(compact=True, symmetric=True,
                                              certificates=True)))
        assert check_schedule(Topo(t.to_json()), doc).ok
        full = json.loads(json.dumps(s.to_json(compact=True)))  # every root's trees mapped
        assert len(full["phases"][0]["trees"]) == 32 * len(doc["phases"][0]["trees"])
        if limit == 100:
            free, free_full = doc, full
    assert free["phases"] == doc["phases"] and free["symmetry"] == doc["symmetry"]
    assert free_full["phases"] == full["phases"]


def test_a_rail_fabric_symmetric_file_states_nothing_unchecked(
        rails: tuple[Topology, Any]) -> None:
    """Three generators (units, servers, rails) on a fabric whose leaf → spine links the
    server shift fixes: the file checks by orbits, and its G* capacities and routing are
    checked against the topology (a unit more is refused, naming the arc or the link)."""
    t, s = rails
    doc = json.loads(json.dumps(s.to_json(compact=True, symmetric=True)))
    assert len(doc["symmetry"]["orders"]) == 3
    assert check_schedule(Topo(t.to_json()), doc).ok
    bad = copy.deepcopy(doc)
    bad["certificates"]["gstar"]["capacities"][0][2] += 5
    assert "routed through G" in _reasons(t, bad)
    bad = copy.deepcopy(doc)
    bad["certificates"]["routing"][0]["paths"][0][1] += 1
    assert "more than ⌊U·c⌋" in _reasons(t, bad)
