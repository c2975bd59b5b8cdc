"""Fat trees by orbits (issue 20): the pod shift fixes the core switches, so pairs of
one orbit share links (core → core shortcuts, core ↔ host links) and the orbit-wise
switch removal has to count them (reference/forestcoll/symsplit.py).

Every schedule here is checked by collcert.certify (which knows nothing of the
symmetry) and compared with the optimum of the general path (no symmetry), computed
and certified separately.
"""

from __future__ import annotations

import json
from fractions import Fraction
from typing import Any

import numpy as np
import pytest

from collcert import platforms
from collcert.certify.forestcoll import check_schedule
from collcert.certify.model import Topo
from collcert.cli import main
from collcert.reference.forestcoll import optimum, schedule
from collcert.reference.forestcoll.symsplit import SymmetryFailed, remove_switches_orbits
from collcert.reference.model import Topology, what_if
from collcert.reference.symmetry import Symmetry, find_symmetry


def _certified(t: Topology, doc: Any) -> Any:
    v = check_schedule(Topo(t.to_json()), json.loads(json.dumps(doc)))
    assert v.ok, v.all_reasons()[:3]
    return v


@pytest.mark.parametrize("k", [4, 8])
def test_healthy_fat_tree_is_built_by_orbits_and_certified(k: int) -> None:
    t = platforms.fat_tree(k)
    s = schedule(t, "allgather")
    assert all("representative root" in p.stats["symmetry"] for p in s.phases)
    assert s.phases[0].stats.get("shared_pairs", 0) > 0  # the fixed cores were shared
    v = _certified(t, s.to_json(compact=True))
    # the optimum of the general path, without any symmetry
    assert v.facts["time_per_unit"] == optimum(t, "allgather", symmetry=False).time_per_unit


def test_orbit_schedule_matches_the_general_path_on_fat_tree_4() -> None:
    t = platforms.fat_tree(4)
    by_orbits = schedule(t, "allgather")
    general = schedule(t, "allgather", symmetry=False)
    assert general.phases[0].stats["symmetry"] == "none found"
    assert by_orbits.time_per_unit == general.time_per_unit
    _certified(t, general.to_json())


def test_fat_tree_split_walks_are_equivariant() -> None:
    """The walks of every G* arc σ(e) are σ of the walks of e, also where they went
    through links the shift fixes (the orbit packing maps walks by σ)."""
    t = platforms.fat_tree(4)
    sym = find_symmetry(t)
    assert sym is not None
    opt = optimum(t, "allgather", symmetry=False)
    assert opt.U is not None and opt.k is not None
    caps = {e: int(opt.U * c) for e, c in t.capacity.items()}
    nodes = list(t.compute_nodes) + list(t.switch_nodes)
    assert tuple(nodes) == tuple(sym.nodes)
    split = remove_switches_orbits(t.compute_nodes, t.switch_nodes, caps,
                                   {c: opt.k for c in t.compute_nodes}, sym)
    assert split.stats["shared_pairs"] > 0
    for perm in sym.generators():
        sigma = {nodes[i]: nodes[int(j)] for i, j in enumerate(perm)}
        for (a, b), walks in split.paths.items():
            image = {tuple(sigma[v] for v in w): x for w, x in walks.items()}
            assert split.paths[(sigma[a], sigma[b])] == image
    for (a, b), walks in split.paths.items():  # every pair's walks, once
        assert sum(walks.values()) == split.capacity[(a, b)]
        for w in walks:
            assert w[0] == a and w[-1] == b and all(
                t.capacity.get((x, y), 0) > 0 for x, y in zip(w, w[1:]))


def test_a_link_fixed_by_part_of_the_group_falls_back() -> None:
    """σ of order 4 that swaps two switch pairs s0↔s1, x0↔x1: the link s0 → x0 has an
    orbit of 2 links, which the orbit split cannot count: SymmetryFailed (the
    caller's fallback), never an internal error."""
    compute = ["c0", "c1", "c2", "c3"]
    switches = ["s0", "s1", "x0", "x1"]
    caps = {}
    for i, c in enumerate(compute):
        caps[(c, f"s{i % 2}")] = caps[(f"s{i % 2}", c)] = 3
    for j in range(2):
        caps[(f"s{j}", f"x{j}")] = caps[(f"x{j}", f"s{j}")] = 2
    caps[("x0", "x1")] = caps[("x1", "x0")] = 2
    nodes = tuple(compute + switches)
    sigma = [1, 2, 3, 0, 5, 4, 7, 6]
    perms = [list(range(8))]
    for _ in range(3):
        perms.append([sigma[v] for v in perms[-1]])
    sym = Symmetry(nodes, np.array(perms), [0], {i: i for i in range(4)}, {i: 0 for i in range(4)})
    with pytest.raises(SymmetryFailed):
        remove_switches_orbits(compute, switches, caps, {c: 1 for c in compute}, sym)


def test_a_partly_fixed_link_keeps_its_walks_in_blocks() -> None:
    """A rail-optimized fabric's leaf → spine link is fixed by the server shift and moved
    by the rail shift: the split of nic → leaf → spine by the images of one pair takes
    one unit of the direct walk per image (the bag of the link's orbit is one walk, each
    unit standing for every image), and the whole fabric splits by orbits."""
    t = platforms.dgx_h100_rails(8, 4, 2)
    sym = find_symmetry(t)
    assert sym is not None and len(sym.reps) == 1
    s = schedule(t, "allgather")
    assert "1 representative root" in s.phases[0].stats["symmetry"]
    assert s.phases[0].stats.get("shared_pairs", 0) > 0
    _certified(t, s.to_json(compact=True))


def test_failed_core_link_is_borrowed_from_the_symmetrized_fat_tree() -> None:
    h = platforms.fat_tree(4)
    t = what_if(h, fail=["core0.0<>agg0.0"]).topology
    assert t is not None and find_symmetry(t) is None
    s = schedule(t, "allgather", healthy=h)
    assert "symmetrized" in s.extra  # the core link costs nothing: loss 0 %
    assert s.time_per_unit == optimum(h, "allgather").time_per_unit
    v = _certified(t, s.to_json(compact=True))
    assert v.facts["time_per_unit"] == optimum(t, "allgather", symmetry=False).time_per_unit


def test_schedule_command_checks_and_audit_says_valid(capsys: pytest.CaptureFixture[str],
                                                      tmp_path: Any) -> None:
    out = tmp_path / "s.json"
    assert main(["schedule", "fat_tree:4", "--fail", "core0.0<>agg0.0", "--check",
                 "--json", "-o", str(out)]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["optimal"] and summary["algbw"] == "16/15"  # loss 0 %
    assert "representative root" in summary["symmetry"][0]  # borrowed, by orbits
    degraded = what_if(platforms.fat_tree(4), fail=["core0.0<>agg0.0"]).topology
    assert degraded is not None
    topo = tmp_path / "degraded.json"
    topo.write_text(json.dumps(degraded.to_json()))
    assert main(["audit", str(topo), str(out), "--json"]) == 0
    assert Fraction(json.loads(capsys.readouterr().out)["ratio"]) == 1
    healthy = tmp_path / "h.json"
    assert main(["schedule", "fat_tree:4", "--check", "--json", "-o", str(healthy)]) == 0
    assert "representative root" in json.loads(capsys.readouterr().out)["symmetry"][0]
    assert main(["audit", "fat_tree:4", str(healthy), "--json"]) == 0
    audit = json.loads(capsys.readouterr().out)
    assert Fraction(audit["ratio"]) == 1


def test_spread_split_gives_shallow_trees() -> None:
    """The first pass at every egress limits each G* arc to 1/SPREAD_WAYS of its tail's
    out-capacity: hosts send to several hosts, so trees are not the long paths that a
    host sending its whole capacity to one neighbour forces (height n - 1 at worst)."""
    from collcert.reference.forestcoll import symsplit

    t = platforms.fat_tree(8)
    sym = find_symmetry(t)
    assert sym is not None
    opt = optimum(t, "allgather", symmetry=False)
    assert opt.U is not None and opt.k is not None
    caps = {e: int(opt.U * c) for e, c in t.capacity.items()}
    supply = {c: opt.k for c in t.compute_nodes}
    degree = {}
    for spread in (False, True):
        split = remove_switches_orbits(t.compute_nodes, t.switch_nodes, caps, supply, sym,
                                       spread=spread)
        degree[spread] = min(sum(1 for a, _ in split.capacity if a == h)
                             for h in t.compute_nodes)
    assert degree[True] >= symsplit.SPREAD_WAYS > degree[False]
    s = schedule(t, "allgather")
    assert max(tr.height for tr in s.phases[0].trees) < t.num_compute // 4
