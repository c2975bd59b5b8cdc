"""Emitted schedules pass the independent checker collcert.certify (when it is present).

certify/ never imports the reference implementation: it re-reads the JSON
document and the topology JSON, checks the trees, walks, multiplicities, the
G* certificates (gstar, routing, flows) and the embedded optimum
certificate, and recomputes the time exactly.
"""

from __future__ import annotations

from typing import Any

import pytest
from conftest import tiered_topology as random_topology

import collcert
from collcert import Topology, platforms

certify_schedule = pytest.importorskip("collcert.certify.forestcoll.schedule")


def _multicast_two_box() -> Topology:
    base = platforms.two_box_example()
    return Topology(base.compute_nodes, [(u, v, c) for (u, v), c in base.capacity.items()],
                    base.switch_nodes, name="2-box multicast", unit=base.unit,
                    multicast_switches=base.switch_nodes)


CASES: list[tuple[str, Any, str, dict[str, Any]]] = [
    ("two_box", platforms.two_box_example, "allgather", {}),
    ("two_box", platforms.two_box_example, "allreduce", {}),
    ("two_box", platforms.two_box_example, "broadcast", {"root": "c1.1"}),
    ("two_box", platforms.two_box_example, "reduce", {"root": "c2.2"}),
    ("two_box", platforms.two_box_example, "allgather", {"weights": [1, 2] * 4}),
    ("multicast", _multicast_two_box, "allgather", {}),
    ("multicast", _multicast_two_box, "reduce-scatter", {}),
    ("dgx_a100:2", lambda: platforms.dgx_a100(2), "allgather", {}),
    ("mi250:2", lambda: platforms.mi250(2), "allgather", {"fixed_k": 2}),
]


@pytest.mark.parametrize("name,build,collective,kw", CASES)
def test_certify_accepts_emitted_schedules(name: str, build: Any, collective: str,
                                           kw: dict[str, Any]) -> None:
    t = build()
    s = collcert.schedule(t, collective, **kw)
    verdict = certify_schedule.check_schedule(t.to_json(), s.to_json())
    assert verdict.ok, verdict
    assert verdict.facts["time_per_unit"] == s.time_per_unit


@pytest.mark.parametrize("seed", range(0, 30, 3))
def test_certify_accepts_random_topology_schedules(seed: int) -> None:
    t = random_topology(seed)
    for collective in ("allgather", "reduce-scatter"):
        s = collcert.schedule(t, collective)
        verdict = certify_schedule.check_schedule(t.to_json(), s.to_json())
        assert verdict.ok, verdict
        assert verdict.facts["time_per_unit"] == collcert.optimum(t, collective).time_per_unit
