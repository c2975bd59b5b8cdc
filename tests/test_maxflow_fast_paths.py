"""The lean FlowNetwork paths used by switch removal and tree packing agree with solve().

``solve_value``, ``solve_array``, ``from_arrays`` and ``update_capacities``
must compute exactly what ``FlowNetwork(...).solve`` computes, on both
engines, including capacities beyond int64 (exact engine).
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from collcert.reference.solvers import FlowNetwork


def _random_network(rng: random.Random, big: bool = False) -> tuple[int, list[int], list[int],
                                                                   list[int]]:
    n = rng.randint(2, 9)
    m = rng.randint(0, 25)
    tails = [rng.randrange(n) for _ in range(m)]
    heads = [rng.randrange(n) for _ in range(m)]
    top = 2**70 if big else 12
    caps = [rng.randint(0, top) for _ in range(m)]
    return n, tails, heads, caps


@pytest.mark.parametrize("engine", ["auto", "ortools", "exact"])
def test_fast_paths_agree_with_solve(engine: str) -> None:
    rng = random.Random(3)
    for trial in range(150):
        big = engine != "ortools" and trial % 5 == 0
        n, tails, heads, caps = _random_network(rng, big)
        s, t = rng.sample(range(n), 2)
        ref = FlowNetwork(n, tails, heads, caps, engine=engine).solve(s, t)
        net = FlowNetwork(n, tails, heads, caps, engine=engine)
        assert net.solve_value(s, t) == ref.value
        value, flow = FlowNetwork(n, tails, heads, caps, engine=engine).solve_array(s, t)
        assert value == ref.value and type(value) is int
        assert len(flow) == len(tails)
        # a valid flow of that value (not necessarily the same one as solve's)
        bal = [0] * n
        for a, b, c, x in zip(tails, heads, caps, flow):
            assert 0 <= int(x) <= c
            bal[a] -= int(x)
            bal[b] += int(x)
        assert bal[t] == value and all(bal[v] == 0 for v in range(n) if v not in (s, t))
        dtype = object if big else np.int64
        arr = FlowNetwork.from_arrays(n, np.array(tails, dtype=np.int64),
                                      np.array(heads, dtype=np.int64),
                                      np.array(caps, dtype=dtype), engine=engine)
        assert arr.solve_value(s, t) == ref.value
        # update a few capacities in place, then compare with a fresh network
        if tails:
            for _ in range(3):
                picks = rng.sample(range(len(tails)), min(3, len(tails)))
                new = [rng.randint(0, 2**70 if big else 12) for _ in picks]
                arr.update_capacities(picks, new)
                for p, c in zip(picks, new):
                    caps[p] = c
                fresh = FlowNetwork(n, tails, heads, caps, engine=engine).solve(s, t)
                assert arr.solve_value(s, t) == fresh.value


def test_update_capacities_with_infinite_arcs_falls_back() -> None:
    net = FlowNetwork(3, [0, 1], [1, 2], [None, 4])
    assert net.solve_value(0, 2) == 4
    net.update_capacities([1], [7])
    assert net.solve_value(0, 2) == 7
    assert net.solve(0, 2).value == 7


def test_from_arrays_rejects_bad_input() -> None:
    with pytest.raises(ValueError):
        FlowNetwork.from_arrays(2, np.array([0]), np.array([1]), np.array([-1]))
    with pytest.raises(ValueError):
        FlowNetwork.from_arrays(2, np.array([0]), np.array([1, 0]), np.array([1, 1]))
    with pytest.raises(ValueError):
        FlowNetwork.from_arrays(2, np.array([0]), np.array([1]), np.array([1.5]))
    net = FlowNetwork.from_arrays(2, np.array([0]), np.array([1]), np.array([3]))
    with pytest.raises(ValueError):
        net.update_capacities([0], [-2])


def test_switch_removal_repairs_instead_of_resolving() -> None:
    """Broken flows are repaired from the kept ones (reference/forestcoll/splitting_repair.py):
    on 4-box DGX A100 the re-solves stay a few dozen (≈ 950 max-flows before
    the repair existed) and the schedule still reaches the optimum (checked by
    schedule() itself)."""
    from collcert import platforms
    from collcert.reference.forestcoll import schedule

    s = schedule(platforms.dgx_a100(4), "allgather", symmetry=False)
    stats = s.phases[0].stats
    assert stats["repairs"] > 500
    assert stats["resolves"] < 100
    assert stats["maxflows"] < 32 + 100


def test_set_all_capacities_replaces_every_arc_and_is_checked() -> None:
    from collcert.reference.solvers import FlowNetwork

    for engine in ("ortools", "exact"):
        net = FlowNetwork(3, [0, 1, 0], [1, 2, 2], [5, 5, 1], engine=engine)
        assert net.solve(0, 2).value == 6
        net.set_all_capacities([1, None, 0])
        assert net.solve(0, 2).value == 1
        net.set_all_capacities([7, 3, 2])
        assert net.solve(0, 2).value == 5
        try:
            net.set_all_capacities([1, 2])
        except ValueError as exc:
            assert "2 capacities for 3 arcs" in str(exc)
        else:
            raise AssertionError("a wrong-length capacity list was accepted")
