"""Helpers shared by the test modules: seeded random topologies, built by the fuzz generators.

pytest imports this file before the tests; tests/ has no ``__init__.py``, so
pytest puts tests/ on ``sys.path`` (its default ``prepend`` import mode) and a
test module takes these helpers as ``from conftest import cycle_topology``,
as it takes helpers of another test module (``from test_x import ...``).

The topologies come from :mod:`collcert.fuzz.generators` with a
:class:`~collcert.fuzz.generators.RandomSource` seeded by the test: the same
seed gives the same topology on every run and machine. :data:`TOY` is the
external schedule generator the fuzz driver's tests run.
"""

from __future__ import annotations

import textwrap
from fractions import Fraction

from collcert.fuzz.generators import (
    RandomSource,
    Source,
    cycle_union,
    directed_cycles,
    switched,
)
from collcert.reference.model import Topology


def cycle_topology(seed: int, n_nodes: int | None = None, n_switch: int | None = None,
                   fractional: bool | None = None) -> Topology:
    """A union of random directed cycles (hence Eulerian): one through every node, then up
    to ``n_nodes`` more; 3 to 12 nodes, of which 0 to 4 switches; integer capacities
    1..10, or (``fractional``) ratios 1..12 over 1..5. Arguments left None are drawn."""
    src = RandomSource(seed)
    n = n_nodes if n_nodes is not None else src.integer(3, 12)
    ns = n_switch if n_switch is not None else src.integer(0, max(0, min(4, n - 2)))
    frac = fractional if fractional is not None else src.integer(0, 1) == 1

    def fraction(s: Source) -> Fraction:
        return Fraction(s.integer(1, 12), s.choice([1, 2, 3, 4, 5]))

    def whole(s: Source) -> int:
        return s.integer(1, 10)

    return cycle_union(src, min_compute=n - ns, max_compute=n - ns, max_cycles=n + 1,
                       switches=ns, capacities=fraction if frac else whole,  # type: ignore[arg-type]
                       name=f"random-{seed}")


def tiered_topology(seed: int) -> Topology:
    """A switch topology of several tiers (switch-to-switch links, direct compute links,
    3 to 7 compute nodes, capacities 1..5), with directed cycles on top (asymmetric
    capacities, still Eulerian), an explicit round trip from a compute node through a
    switch and back, and some switches multicast-capable."""
    src = RandomSource(seed)

    def capacity(s: Source) -> int:
        return s.integer(1, 5)

    base = switched(src, min_compute=3, max_compute=7, max_tiers=3, max_switches_per_tier=3,
                    capacities=capacity, name=f"random-{seed}")
    t = directed_cycles(src, base, min_cycles=1, max_cycles=4, capacities=capacity)
    w = src.choice(t.switch_nodes)
    c0 = t.compute_nodes[0]
    links = [(u, v, c) for (u, v), c in t.capacity.items()] + [(c0, w, 1), (w, c0, 1)]
    multicast = [x for x in t.switch_nodes if src.integer(0, 9) < 3]
    return Topology(t.compute_nodes, links, t.switch_nodes, name=t.name,
                    multicast_switches=multicast)


# The toy external generator of the fuzz driver's tests (test_fuzz_driver, test_fuzz_parallel):
# it reads the topology JSON with plain json and writes a collcert-schedule/1 allgather, one
# BFS out-tree per root (valid, usually not optimal). Its third argument injects a bug:
# missing-node (a tree misses a compute node when N >= 4), crash-big (capacities beyond
# int64), hang (N >= 5), no-output.
TOY = textwrap.dedent('''
    import json, sys, time
    from collections import deque
    topo_path, sched_path, bug = sys.argv[1], sys.argv[2], sys.argv[3]
    topo = json.load(open(topo_path))
    compute = topo["compute_nodes"]
    switches = set(topo.get("switch_nodes", []))
    links = [(l["src"], l["dst"], l["capacity"]) for l in topo["links"]]
    if bug == "crash-big" and any(int(c.split("/")[0]) > 2**62 for _, _, c in links):
        sys.exit("capacity does not fit in int64")
    if bug == "hang" and len(compute) >= 5:
        time.sleep(60)
    adj = {}
    for u, v, _ in links:
        adj.setdefault(u, []).append(v)
    trees = []
    for r in compute:
        parent = {r: None}
        queue = deque([r])
        while queue:
            u = queue.popleft()
            for v in adj.get(u, []):
                if v not in parent:
                    parent[v] = u
                    queue.append(v)
        edges = []
        targets = [c for c in compute if c != r]
        if bug == "missing-node" and len(compute) >= 4 and r == compute[0]:
            targets = targets[:-1]
        for c in targets:
            path = [c]
            while path[-1] != r and (path[-1] == c or path[-1] in switches):
                path.append(parent[path[-1]])
            path.reverse()
            edges.append({"src": path[0], "dst": c, "path": path})
        trees.append({"root": r, "multiplicity": 1, "direction": "out", "edges": edges})
    out = {"format": "collcert-schedule/1", "collective": "allgather", "unit": "GB/s",
           "compute_nodes": compute, "root": None, "weights": None,
           "phases": [{"collective": "allgather", "k": 1, "U": "1", "trees": trees}]}
    if bug != "no-output":
        json.dump(out, open(sched_path, "w"))
''')
