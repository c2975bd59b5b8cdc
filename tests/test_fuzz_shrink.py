"""The shrinker: cycle decomposition round trip, shrinking to minimal failing topologies,
and saving regressions."""

from __future__ import annotations

import json
from fractions import Fraction

from hypothesis import HealthCheck, given, settings

from collcert import Topology, platforms
from collcert.fuzz import strategies as cst
from collcert.fuzz.generators import RandomSource, case_seed, cycle_union, generate
from collcert.fuzz.shrink import cycles_of, from_cycles, save_regression, shrink, size

CI = settings(max_examples=40, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow])


@CI
@given(cst.topologies(max_nodes=9))
def test_cycle_decomposition_rebuilds_the_topology(t: Topology) -> None:
    cycles = cycles_of(t)
    assert all(w > 0 and len(nodes) >= 2 and len(set(nodes)) == len(nodes)
               for nodes, w in cycles)
    assert from_cycles(t, cycles) == t


def test_cycle_decomposition_of_a_platform_with_fractions() -> None:
    t = platforms.two_box_example().scaled(Fraction(2, 3))
    assert from_cycles(t, cycles_of(t)) == t


def test_shrinks_to_the_smallest_failing_topology() -> None:
    # fails when there are at least 3 compute nodes and some link carries >= 2
    def fails(t: Topology) -> bool:
        return t.num_compute >= 3 and max(t.capacity.values()) >= 2

    for i in range(15):
        t = generate(case_seed(6, i), max_nodes=10)
        if not fails(t):
            continue
        small = shrink(t, fails)
        assert fails(small)
        assert size(small) <= size(t)
        assert small.num_compute == 3
        # no link can be lowered or removed without losing the failure: a directed
        # 3-cycle of capacity 2, or 2 plus a 2-cycle, is the best possible
        assert len(small.capacity) <= 4 and max(small.capacity.values()) == 2


def test_shrink_keeps_the_input_when_nothing_smaller_fails() -> None:
    t = cycle_union(RandomSource(3), min_compute=2, max_compute=2, capacities="small")
    assert shrink(t, lambda x: x == t) == t


def test_shrink_respects_the_call_budget() -> None:
    calls = []

    def fails(t: Topology) -> bool:
        calls.append(t)
        return True

    shrink(generate(case_seed(1, 2), max_nodes=10), fails, max_calls=5)
    assert len(calls) <= 5


def test_save_regression_writes_topology_and_readme(tmp_path) -> None:
    t = platforms.ring(3)
    path = save_regression(t, "brute: something odd", "collcert fuzz check --replay {file}",
                           directory=tmp_path)
    assert path.parent == tmp_path and path.name.startswith("brute-")
    data = json.loads(path.read_text())
    assert data["description"] == "brute: something odd"
    assert data["source"].startswith("collcert fuzz check --replay ")
    assert Topology.from_json(str(path)) == t
    readme = (tmp_path / "README.md").read_text()
    assert f"`{path.name}`" in readme
    # saving the same case again does not repeat its README line
    save_regression(t, "brute: something odd", "collcert fuzz check --replay {file}",
                    directory=tmp_path)
    assert (tmp_path / "README.md").read_text().count(f"`{path.name}`") == 1


def test_default_folder_outside_a_source_checkout_is_the_current_one(tmp_path,
                                                                     monkeypatch) -> None:
    # an installed package (site-packages/collcert/fuzz/shrink.py) has no golden/ folder
    # beside it: saving must not create one inside site-packages
    from collcert.fuzz import shrink as shrink_module

    site = tmp_path / "site-packages" / "collcert"
    (site / "fuzz").mkdir(parents=True)
    monkeypatch.setattr(shrink_module, "__file__", str(site / "fuzz" / "shrink.py"))
    monkeypatch.delenv("COLLCERT_REGRESSIONS", raising=False)
    monkeypatch.chdir(tmp_path)
    path = save_regression(platforms.ring(3), "brute: odd", "collcert fuzz check --replay {file}")
    assert path.resolve().parent == tmp_path / "fuzz-failures"
    assert not (site / "golden").exists()
    # a source checkout keeps its regressions in golden/regressions
    (site / "golden" / "regressions").mkdir(parents=True)
    assert shrink_module.default_regressions_dir() == site / "golden" / "regressions"
