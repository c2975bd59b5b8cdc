"""The random topology generators: valid by construction, seeded, and the `fuzz generate` CLI."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from collcert import Topology, TopologyError
from collcert.cli import main
from collcert.fuzz import generators as gen
from collcert.fuzz import strategies as cst

CI = settings(max_examples=40, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow])


def _strongly_connected_compute(t: Topology) -> bool:
    adj: dict[object, list[object]] = {v: [] for v in t.nodes}
    radj: dict[object, list[object]] = {v: [] for v in t.nodes}
    for u, v in t.capacity:
        adj[u].append(v)
        radj[v].append(u)

    def reach(graph: dict[object, list[object]]) -> set[object]:
        seen = {t.compute_nodes[0]}
        stack = [t.compute_nodes[0]]
        while stack:
            for w in graph[stack.pop()]:
                if w not in seen:
                    seen.add(w)
                    stack.append(w)
        return seen

    return set(t.compute_nodes) <= reach(adj) and set(t.compute_nodes) <= reach(radj)


def _check_invariants(t: Topology, max_nodes: int | None = None) -> None:
    assert isinstance(t, Topology)
    # Eulerian, recomputed here from the links (independently of Topology's own check)
    bal = Counter()
    for (u, v), c in t.capacity.items():
        bal[u] += c
        bal[v] -= c
    assert all(x == 0 for x in bal.values())
    assert _strongly_connected_compute(t)
    assert t.num_compute >= 2
    assert all(c > 0 and c.denominator == 1 for c in t.capacity.values())
    if max_nodes is not None:
        assert len(t.nodes) <= max_nodes
    assert Topology.from_json(json.dumps(t.to_json())) == t


@CI
@given(cst.topologies(max_nodes=9))
def test_any_family_is_valid(t: Topology) -> None:
    _check_invariants(t, 9)


@CI
@given(st.one_of(cst.cycle_unions(max_compute=5), cst.bidirectional(max_compute=5),
                 cst.switch_topologies(max_compute=5, max_tiers=3), cst.boxes(),
                 cst.switched_cycles()))
def test_each_strategy_is_valid(t: Topology) -> None:
    _check_invariants(t)


@CI
@given(cst.bidirectional(capacities=st.sampled_from([25, 300])))
def test_capacity_strategy_is_used_and_symmetric(t: Topology) -> None:
    # parallel links are summed, so every capacity is a sum of drawn values
    assert all(c % 25 == 0 for c in t.capacity.values())
    for (u, v), c in t.capacity.items():
        assert t.capacity[(v, u)] == c


@CI
@given(cst.cycle_unions(capacities="huge"))
def test_huge_capacities_go_beyond_int64(t: Topology) -> None:
    _check_invariants(t)
    # each of at most 4 cycles adds at most 2**70 to a link
    assert max(t.capacity.values()) <= 4 * 2**70


def test_huge_mode_reaches_beyond_int64_for_some_seed() -> None:
    big = [gen.generate(f"huge:{i}", capacities="huge") for i in range(10)]
    assert any(max(t.int_capacity.values()) > 2**63 for t in big)


def test_seeded_generation_is_deterministic_and_varied() -> None:
    a = [gen.generate(gen.case_seed(5, i), max_nodes=8) for i in range(30)]
    b = [gen.generate(gen.case_seed(5, i), max_nodes=8) for i in range(30)]
    assert [t.content_hash() for t in a] == [t.content_hash() for t in b]
    assert len({t.content_hash() for t in a}) >= 25
    c = [gen.generate(gen.case_seed(6, i), max_nodes=8) for i in range(30)]
    assert [t.content_hash() for t in a] != [t.content_hash() for t in c]


@pytest.mark.parametrize("max_nodes", [2, 3, 4, 5, 7, 12])
def test_seeded_families_respect_max_nodes(max_nodes: int) -> None:
    kinds = Counter()
    for i in range(150):
        t = gen.generate(gen.case_seed(max_nodes, i), max_nodes=max_nodes)
        _check_invariants(t, max_nodes)
        kinds[t.name.split("-")[0]] += 1
    if max_nodes >= 7:  # every family shows up
        assert {"cycles", "bidir", "switched", "boxes"} <= set(kinds)


def test_without_switches_only_direct_connect() -> None:
    for i in range(100):
        t = gen.generate(gen.case_seed(1, i), max_nodes=8, switches=False)
        assert not t.switch_nodes


def test_switch_topologies_have_switch_to_switch_links_and_tiers() -> None:
    seen_multi_tier = False
    for i in range(60):
        t = gen.switched(gen.RandomSource(i), max_tiers=3, max_compute=6)
        tiers = {w.split(".")[0] for w in t.switch_nodes}
        if len(tiers) > 1:
            seen_multi_tier = True
            assert any(not t.is_compute(u) and not t.is_compute(v) for u, v in t.capacity)
    assert seen_multi_tier


def test_boxes_have_fast_inside_slow_outside() -> None:
    for i in range(40):
        t = gen.boxes(gen.RandomSource(i), max_boxes=3, max_per_box=4)
        nic = [c for (u, v), c in t.capacity.items() if str(v).startswith("ib")]
        inside = [c for (u, v), c in t.capacity.items()
                  if str(u).split(".")[0] == str(v).split(".")[0] and str(u)[0] == "b"]
        assert nic
        if inside:
            assert min(inside) >= 2 * max(nic)


def test_bad_parameters_are_reported() -> None:
    with pytest.raises(TopologyError, match="max_nodes"):
        gen.generate(1, max_nodes=1)
    with pytest.raises(TopologyError, match="capacity mode"):
        gen.capacity_drawer("enormous")


def test_cli_generate_writes_loadable_files(tmp_path, capsys) -> None:
    out = tmp_path / "gen"
    rc = main(["fuzz", "generate", "--seed", "3", "--count", "6", "--max-nodes", "7",
               "--switches", "-o", str(out)])
    assert rc == 0
    files = sorted(out.glob("case-*.json"))
    assert len(files) == 6
    for i, f in enumerate(files):
        t = Topology.from_json(str(f))
        assert t == gen.generate(gen.case_seed(3, i), max_nodes=7)
        assert "collcert fuzz generate --seed 3" in json.loads(f.read_text())["source"]


def test_cli_generate_bad_input(tmp_path, capsys) -> None:
    with pytest.raises(SystemExit) as exc:  # argparse refuses the value itself
        main(["fuzz", "generate", "--count", "2", "--max-nodes", "1", "-o", str(tmp_path / "x")])
    assert exc.value.code == 2
    assert "--max-nodes" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()
    f = tmp_path / "file"
    f.write_text("x")
    assert main(["fuzz", "generate", "--count", "1", "-o", str(f)]) == 2
