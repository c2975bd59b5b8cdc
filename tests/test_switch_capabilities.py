"""Switches that add (issue 30): SHARP and NVLS switches and reduction rates in the model.

The declarations travel through every path a topology takes (JSON both ways, the schema,
networkx both ways, transpose, scaling, what-if, the checkers' reader), the built-in NVLS
machines carry them, and bad declarations are refused naming the node. A file's
``reducing_switches`` keeps its meaning (SHARP: the switch holds its sums); NVLink SHARP
is ``nvls_switches``.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from collcert import Topology, TopologyError, platforms
from collcert.certify.model import InputError, Topo
from collcert.reference.model import what_if

SCHEMA = Path(__file__).resolve().parents[1] / "docs" / "schema" / "topology.schema.json"


def _star(**extra: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {"compute_nodes": ["a", "b", "c"], "switch_nodes": ["w"],
                           "links": [{"src": v, "dst": "w", "capacity": "3",
                                      "bidirectional": True} for v in "abc"]}
    doc.update(extra)
    return doc


def test_reducing_switches_round_trip_through_json_networkx_and_the_checkers_reader() -> None:
    t = Topology.from_json(_star(reducing_switches=["w"], reduction_rates={"w": "5/2"}))
    assert t.reducing_switches == {"w"} and t.reduction_rates == {"w": Fraction(5, 2)}
    assert t.in_network and t.in_network_model() == ("SHARP: w (at most 5/2) adds and "
                                                     "multicasts its sums")
    assert t.sharp_switches == {"w"} and not t.nvls_switches
    doc = t.to_json()
    assert doc["reducing_switches"] == ["w"] and doc["reduction_rates"] == {"w": "5/2"}
    assert Topology.from_json(json.loads(json.dumps(doc))) == t
    assert Topology.from_networkx(t.to_networkx(), t.compute_nodes) == t
    assert t.transpose().reducing_switches == {"w"}
    assert t.scaled(2).reduction_rates == {"w": 5}  # a rate scales with the capacities
    topo = Topo(doc)
    assert topo.reducing == {"w"} and topo.reduction_rate == {"w": Fraction(5, 2)}
    assert topo.transposed().reducing == {"w"}
    # the declaration changes no optimum and no content hash (like multicast, alpha)
    plain = Topology.from_json(_star())
    assert plain.content_hash() == t.content_hash() and plain != t
    assert not plain.in_network and plain.in_network_model() == "switches forward only"
    changed = what_if(t, degrade=["a<>w=1"])
    assert changed.topology is not None and changed.topology.reducing_switches == {"w"}


def test_nvls_switches_round_trip_too() -> None:
    t = Topology.from_json(_star(nvls_switches=["w"], reduction_rates={"w": "5/2"}))
    assert t.reducing_switches == t.nvls_switches == {"w"} and not t.sharp_switches
    assert t.in_network_model() == ("NVLS: w (at most 5/2) reduces to a member GPU and "
                                    "multicasts from one")
    doc = t.to_json()
    assert doc["nvls_switches"] == ["w"] and "reducing_switches" not in doc
    assert Topology.from_json(json.loads(json.dumps(doc))) == t
    g = t.to_networkx()
    assert g.nodes["w"]["nvls"] is True and g.nodes["w"]["reduce"] is False
    assert Topology.from_networkx(g, t.compute_nodes) == t
    assert t.transpose().nvls_switches == {"w"} == t.scaled(3).nvls_switches
    changed = what_if(t, degrade=["a<>w=1"]).topology
    assert changed is not None and changed.nvls_switches == {"w"}
    topo = Topo(doc)
    assert topo.nvls == topo.reducing == {"w"} and topo.transposed().nvls == {"w"}
    assert Topology.from_json(_star(nvls_switches=["w"])) != Topology.from_json(
        _star(reducing_switches=["w"]))  # the two kinds are different models


def test_schema_takes_the_declarations() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    validator = jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text(encoding="utf-8")))
    for t in (platforms.dgx_h100(2, "sharp"), platforms.gb200_nvl72(2),
              Topology.from_json(_star(reducing_switches=["w"], reduction_rates={"w": 7})),
              Topology.from_json(_star(nvls_switches=["w"], reduction_rates={"w": 7}))):
        validator.validate(t.to_json())
    assert list(validator.iter_errors(_star(nvls_switches="w")))
    assert list(validator.iter_errors(_star(reduction_rates={"w": "0"})))  # not positive
    assert list(validator.iter_errors(_star(reducing_switches="w")))


@pytest.mark.parametrize("extra, words", [
    ({"reducing_switches": ["a"]}, ["'a'", "compute node", "remove it from reducing_switches"]),
    ({"reducing_switches": ["nowhere"]}, ["'nowhere'", "not a declared switch"]),
    ({"reduction_rates": {"w": "3"}}, ["'w'", "not declared to add"]),
    ({"nvls_switches": ["b"]}, ["NVLS switch 'b'", "compute node", "remove it from nvls_switches"]),
    ({"nvls_switches": ["x"]}, ["NVLS switch 'x'", "not a declared switch"]),
    ({"nvls_switches": ["w"], "reducing_switches": ["w"]}, ["'w'", "both a SHARP switch",
                                                            "one way"]),
    ({"nvls_switches": ["w"], "multicast_switches": ["w"]}, ["'w'", "both an NVLS switch",
                                                             "multicast"]),
    ({"nvls_switches": ["w"], "reduction_rates": {"w": "0"}}, ["'w'", "must be positive"]),
    ({"nvls_switches": "w"}, ["nvls_switches", "JSON array"]),
    ({"reducing_switches": ["w"], "reduction_rates": {"w": "0"}}, ["'w'", "must be positive"]),
    ({"reducing_switches": ["w"], "reduction_rates": {"w": "-1"}}, ["'w'", "must be positive"]),
    ({"reducing_switches": ["w"], "reduction_rates": {"w": "NaN"}}, ["'w'", "not a usable"]),
    ({"reducing_switches": ["w"], "reduction_rates": {"w": "inf"}}, ["'w'", "not a usable"]),
    ({"reducing_switches": ["w"], "reduction_rates": {"w": "1e400"}}, ["'w'", "too large"]),
    ({"reducing_switches": ["w"], "reduction_rates": {"w": True}}, ["'w'", "boolean"]),
    ({"reducing_switches": ["w"], "reduction_rates": ["w", 3]}, ["reduction_rates",
                                                                 "JSON object"]),
    ({"reducing_switches": "w"}, ["reducing_switches", "JSON array"]),
])
def test_bad_declarations_name_the_node(extra: dict[str, Any], words: list[str]) -> None:
    with pytest.raises(TopologyError) as err:
        Topology.from_json(_star(**extra))
    for word in words:
        assert word in str(err.value), str(err.value)


def test_the_checkers_reader_refuses_the_same() -> None:
    for extra in ({"reducing_switches": ["a"]}, {"reduction_rates": {"w": "3"}},
                  {"reducing_switches": ["w"], "reduction_rates": {"w": "0"}},
                  {"nvls_switches": ["a"]}, {"nvls_switches": ["w"], "reducing_switches": ["w"]},
                  {"nvls_switches": ["w"], "multicast_switches": ["w"]}):
        with pytest.raises(InputError):
            Topo(_star(**extra))


def test_a_graph_declaring_one_switch_both_ways_is_refused() -> None:
    import networkx as nx

    g = nx.DiGraph()
    for x in "ab":
        g.add_edge(x, "w", capacity=1)
        g.add_edge("w", x, capacity=1)
    g.nodes["w"].update(reduce=True, nvls=True)
    with pytest.raises(TopologyError, match="'w' is declared both"):
        Topology.from_networkx(g, ["a", "b"])


def test_nvls_machines() -> None:
    h = platforms.dgx_h100(2)
    assert h.reducing_switches == {"b0.nvswitch", "b1.nvswitch"}  # NVLS on, IB SHARP off
    assert h.nvls_switches == h.reducing_switches and not h.sharp_switches
    sharp = platforms.dgx_h100(2, "sharp")
    assert sharp.nvls_switches == {"b0.nvswitch", "b1.nvswitch"} and sharp.sharp_switches == {
        "ib"}
    assert not platforms.dgx_h100(2, "none").reducing_switches
    assert not platforms.dgx_a100(2).reducing_switches  # NVSwitch 2 has no NVLink SHARP
    assert h.name == "2-box DGX H100" and h.capacity[("b0.gpu0", "b0.nvswitch")] == 450
    b = platforms.dgx_b200(2)
    assert b.capacity[("b1.gpu7", "b1.nvswitch")] == 900 == b.capacity[("b1.nvswitch", "b1.gpu7")]
    assert b.capacity[("b1.nic7", "ib")] == 50 == b.capacity[("b1.gpu7", "b1.nic7")]
    one = platforms.gb200_nvl72()
    assert one.num_compute == 72 and one.switch_nodes == ("r0.nvswitch",)
    assert one.capacity[("r0.gpu71", "r0.nvswitch")] == 900 and one.nvls_switches == {
        "r0.nvswitch"}
    assert platforms.dgx_b200(1).nvls_switches == {"b0.nvswitch"}
    two = platforms.gb200_nvl72(2)
    assert two.num_compute == 144 and len(two.switch_nodes) == 2 + 144 + 1
    assert two.capacity[("r1.nic70", "ib")] == 50 and "ib" not in two.reducing_switches
    assert platforms.size_of("gb200_nvl72", 8) is not None
    with pytest.raises(TopologyError, match="in_network must be one of"):
        platforms.gb200_nvl72(2, "nvlink")


def test_nccl_dump_of_hopper_gpus_on_an_nvswitch_declares_nvls(tmp_path: Path) -> None:
    from collcert.importers import import_topology

    dump = Path(__file__).parent / "data" / "importers" / "dgx_a100_dump.xml"
    a100 = import_topology(str(dump), "nccl-xml")
    assert not a100.topology.reducing_switches  # sm 80: NVSwitch 2 has no NVLink SHARP
    assert any("only forwards" in n for n in a100.lacks + a100.notes)
    hopper = tmp_path / "h100.xml"
    hopper.write_text(dump.read_text().replace('sm="80"', 'sm="90"'))
    got = import_topology(str(hopper), "nccl-xml")
    assert got.topology.nvls_switches == {"nvswitch"} and not got.topology.sharp_switches
    assert any("NVLS" in n for n in got.lacks + got.notes)
