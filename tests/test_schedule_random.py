"""Random Eulerian topologies with switches: every schedule is valid and optimal.

The topologies have several switch tiers, switch-to-switch links, direct
compute links, asymmetric capacities (directed cycles added on top of
bidirectional links, which keeps them Eulerian) and round trips u→w→u. The
expected time is the certified ``collcert.optimum``; the schedule is checked
by the plain checker (spanning, rooted, multiplicities, walks, per-link load,
G* certificates).
"""

from __future__ import annotations

import pytest
from conftest import tiered_topology as random_topology
from test_schedule_checker import check_doc

import collcert


@pytest.mark.parametrize("seed", range(30))
def test_random_topology_schedules_are_optimal(seed: int) -> None:
    t = random_topology(seed)
    mc = bool(t.multicast_switches)
    s = collcert.schedule(t, "allgather")
    check_doc(s.to_json(), t, collcert.optimum(t).time_per_unit, multicast=mc)
    s = collcert.schedule(t, "reduce-scatter")
    check_doc(s.to_json(), t, collcert.optimum(t, "reduce-scatter").time_per_unit, multicast=mc)
    root = t.compute_nodes[seed % t.num_compute]
    s = collcert.schedule(t, "broadcast", root=root)
    check_doc(s.to_json(), t, collcert.optimum(t, "broadcast", root=root).time_per_unit,
              multicast=mc)
    k = 1 + seed % 3
    opt = collcert.optimum(t, fixed_k=k)
    if opt.extra["floored_eulerian"]:
        s = collcert.schedule(t, fixed_k=k)
        check_doc(s.to_json(), t, opt.time_per_unit, multicast=mc)
    else:
        with pytest.raises(collcert.ScheduleError, match="not Eulerian"):
            collcert.schedule(t, fixed_k=k)


def test_random_topologies_exercise_the_exact_gamma() -> None:
    """Some splits must fall back to the auxiliary networks of Zhao & Krishnamurthy 2023, Thm 8."""
    aux = 0
    for seed in range(30):
        s = collcert.schedule(random_topology(seed), "allgather")
        aux += s.phases[0].stats["aux_maxflows"]
    assert aux > 0
