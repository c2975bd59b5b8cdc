"""Random Eulerian topologies with switches: every schedule is valid and optimal.

The topologies have several switch tiers, switch-to-switch links, direct
compute links, asymmetric capacities (directed cycles added on top of
bidirectional links, which keeps them Eulerian) and round trips u→w→u. The
expected time is the certified ``collcert.optimum``; the schedule is checked
by the plain checker (spanning, rooted, multiplicities, walks, per-link load,
G* certificates).
"""

from __future__ import annotations

import random

import pytest
from test_schedule_checker import check_doc

import collcert
from collcert import Topology


def random_topology(seed: int) -> Topology:
    rng = random.Random(seed)
    nc = rng.randint(3, 7)
    comp = [f"c{i}" for i in range(nc)]
    tiers = [[f"s{t}.{j}" for j in range(rng.randint(1, 3))] for t in range(rng.randint(1, 3))]
    switches = [w for tier in tiers for w in tier]
    caps: dict[tuple[str, str], int] = {}

    def add(u: str, v: str, c: int) -> None:
        caps[(u, v)] = caps.get((u, v), 0) + c

    def both(u: str, v: str, c: int) -> None:
        add(u, v, c)
        add(v, u, c)

    for c in comp:  # every GPU on a first-tier switch
        both(c, rng.choice(tiers[0]), rng.randint(1, 4))
    for lo, hi in zip(tiers, tiers[1:]):  # upper tiers: switch-to-switch links
        for w in lo:
            both(w, rng.choice(hi), rng.randint(1, 5))
        for w in hi:
            both(w, rng.choice(lo), rng.randint(1, 5))
    for a, b in zip(tiers[0], tiers[0][1:]):
        both(a, b, rng.randint(1, 3))
    for _ in range(rng.randint(0, 3)):  # direct compute links
        a, b = rng.sample(comp, 2)
        both(a, b, rng.randint(1, 3))
    nodes = comp + switches
    for _ in range(rng.randint(1, 4)):  # directed cycles: asymmetric but Eulerian
        length = rng.randint(2, 5)
        cyc = [rng.choice(nodes)]
        while len(cyc) < length:
            x = rng.choice(nodes)
            if x != cyc[-1]:
                cyc.append(x)
        if cyc[0] == cyc[-1]:
            cyc.pop()
        if len(cyc) < 2:
            continue
        c = rng.randint(1, 3)
        for a, b in zip(cyc, cyc[1:] + cyc[:1]):
            add(a, b, c)
    w = rng.choice(switches)  # an explicit round trip through a switch
    add(comp[0], w, 1)
    add(w, comp[0], 1)
    multicast = [x for x in switches if rng.random() < 0.3]
    return Topology(comp, [(u, v, c) for (u, v), c in caps.items()], switches,
                    name=f"random-{seed}", multicast_switches=multicast)


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
