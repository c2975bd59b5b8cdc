"""collcert.Topology: validation messages, exact capacities, constructors, platforms.

Every error case of issue 2 has a test that checks the message names the
culprit (node / link / file line) and not just that *some* error is raised.
"""

from __future__ import annotations

import json
import math
from decimal import Decimal
from fractions import Fraction

import networkx as nx
import pytest

from collcert import Topology, TopologyError, platforms
from collcert.reference.model import fraction_str, parse_number


def bidi(pairs: list[tuple[object, object, object]]) -> list[tuple[object, object, object]]:
    """Both directions of every (u, v, c)."""
    out = []
    for u, v, c in pairs:
        out += [(u, v, c), (v, u, c)]
    return out


def ring3(cap: object = 1) -> list[tuple[object, object, object]]:
    return bidi([("a", "b", cap), ("b", "c", cap), ("c", "a", cap)])


# --------------------------------------------------------------------------- #
# validation errors: each names its culprit
# --------------------------------------------------------------------------- #
def test_not_eulerian_names_every_unbalanced_node_with_totals() -> None:
    links = ring3(1) + [("a", "b", 2), ("b", "c", Fraction(1, 2))]
    with pytest.raises(TopologyError) as err:
        Topology(["a", "b", "c"], links)
    msg = str(err.value)
    assert "Eulerian" in msg
    # a: in 2, out 4; b: in 2+2=4, out 2+1/2=5/2; c: in 2+1/2=5/2, out 2
    assert "'a' receives 2 but sends 4" in msg
    assert "'b' receives 4 but sends 5/2" in msg
    assert "'c' receives 5/2 but sends 2" in msg
    assert "3 unbalanced nodes" in msg


def test_not_eulerian_balanced_nodes_not_named() -> None:
    # a and b balanced, c and d not
    links = bidi([("a", "b", 3), ("b", "c", 1), ("c", "d", 1)]) + [("c", "d", 1)]
    with pytest.raises(TopologyError) as err:
        Topology(["a", "b", "c", "d"], links)
    msg = str(err.value)
    assert "'c' receives 2 but sends 3" in msg
    assert "'d' receives 2 but sends 1" in msg
    assert "'a'" not in msg and "'b'" not in msg


@pytest.mark.parametrize(
    "cap, shown",
    [(0, "0"), (-3, "-3"), ("0", "0"), ("-1/2", "-1/2"), (Fraction(0), "0"), (0.0, "0")],
)
def test_nonpositive_capacity_names_link(cap: object, shown: str) -> None:
    links = ring3(1) + [("b", "a", cap), ("a", "b", cap)]
    with pytest.raises(TopologyError) as err:
        Topology(["a", "b", "c"], links)
    msg = str(err.value)
    assert "link #6" in msg and "'b' -> 'a'" in msg
    assert f"capacity {shown}" in msg
    assert "positive" in msg


@pytest.mark.parametrize(
    "cap",
    [float("nan"), float("inf"), float("-inf"), Decimal("NaN"), Decimal("Infinity"), "nan",
     "inf", "1/0", "twelve", None, True],
)
def test_non_finite_or_non_numeric_capacity_names_link(cap: object) -> None:
    links = ring3(1) + [("c", "b", cap)]
    with pytest.raises(TopologyError) as err:
        Topology(["a", "b", "c"], links)
    msg = str(err.value)
    assert "link #6" in msg and "'c' -> 'b'" in msg
    assert repr(cap) in msg


def test_self_loop_names_node() -> None:
    with pytest.raises(TopologyError) as err:
        Topology(["a", "b", "c"], ring3() + [("b", "b", 5)])
    msg = str(err.value)
    assert "self-loop" in msg and "'b'" in msg and "link #6" in msg


def test_undeclared_node_named() -> None:
    with pytest.raises(TopologyError) as err:
        Topology(["a", "b", "c"], ring3() + bidi([("c", "ghost", 1)]))
    msg = str(err.value)
    assert "undeclared node 'ghost'" in msg
    assert "link #6" in msg and "'c' -> 'ghost'" in msg


@pytest.mark.parametrize(
    "compute, switches, dup",
    [(["a", "b", "a"], [], "'a'"), (["a", "b"], ["s", "s"], "'s'"), (["a", "b"], ["b"], "'b'")],
)
def test_duplicate_node_id_named(compute: list[str], switches: list[str], dup: str) -> None:
    with pytest.raises(TopologyError) as err:
        Topology(compute, bidi([("a", "b", 1)]), switches)
    msg = str(err.value)
    assert f"duplicate node id {dup}" in msg


def test_ids_with_same_string_form_rejected() -> None:
    with pytest.raises(TopologyError) as err:
        Topology([1, "1"], bidi([(1, "1", 1)]))
    msg = str(err.value)
    assert "1" in msg and "'1'" in msg and "same string form" in msg


@pytest.mark.parametrize("compute", [[], ["a"]])
def test_fewer_than_two_compute_nodes(compute: list[str]) -> None:
    with pytest.raises(TopologyError) as err:
        Topology(compute, bidi([("a", "s", 1)]), ["s"] if compute else ["a", "s"])
    msg = str(err.value)
    assert "at least two compute nodes" in msg
    assert f"has {len(compute)}" in msg
    if compute:
        assert "'a'" in msg


def test_compute_node_without_links_names_both() -> None:
    with pytest.raises(TopologyError) as err:
        Topology(["a", "b", "c", "lonely"], ring3())
    msg = str(err.value)
    assert "'lonely'" in msg and "'a'" in msg and "cannot receive" in msg


def test_disconnected_compute_nodes_named() -> None:
    # two balanced islands {a, b} and {c, d}
    with pytest.raises(TopologyError) as err:
        Topology(["a", "b", "c", "d"], bidi([("a", "b", 1), ("c", "d", 1)]))
    msg = str(err.value)
    assert "cannot receive" in msg
    assert "'a'" in msg and ("'c'" in msg or "'d'" in msg)


def test_disconnected_through_switches_named() -> None:
    links = bidi([("a", "s1", 2), ("b", "s2", 2)])
    with pytest.raises(TopologyError) as err:
        Topology(["a", "b"], links, ["s1", "s2"])
    msg = str(err.value)
    assert "compute node 'b' cannot receive from compute node 'a'" in msg


def test_no_links() -> None:
    with pytest.raises(TopologyError, match="no links"):
        Topology(["a", "b"], [])


def test_multicast_switch_must_be_a_switch() -> None:
    with pytest.raises(TopologyError, match="'a'"):
        Topology(["a", "b"], bidi([("a", "b", 1)]), multicast_switches=["a"])


# --------------------------------------------------------------------------- #
# exact capacities
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize(
    "raw, exact",
    [
        (3, Fraction(3)),
        (Fraction(7, 3), Fraction(7, 3)),
        ("12.5", Fraction(25, 2)),
        ("3/4", Fraction(3, 4)),
        (" 3 / 4 ", Fraction(3, 4)),
        ("1e3", Fraction(1000)),
        (".5", Fraction(1, 2)),
        (0.1, Fraction(1, 10)),  # the printed decimal, not the binary expansion
        (2.675, Fraction(2675, 1000)),
        (1e-7, Fraction(1, 10**7)),
        (Decimal("0.3"), Fraction(3, 10)),
        (2**100, Fraction(2**100)),
        (str(2**100 + 1), Fraction(2**100 + 1)),
    ],
)
def test_capacity_parsing_exact(raw: object, exact: Fraction) -> None:
    t = Topology(["a", "b"], [("a", "b", raw), ("b", "a", raw)])
    assert t.capacity[("a", "b")] == exact
    assert type(t.capacity[("a", "b")]) is Fraction
    assert t.int_capacity[("a", "b")] == exact * t.scale
    assert t.scale == exact.denominator


def test_float_capacity_is_not_binary_expansion() -> None:
    assert parse_number(0.1) != Fraction(0.1)  # the binary expansion is a different number
    assert parse_number(0.1) == Fraction(1, 10)


def test_parallel_links_summed_and_scale_exact() -> None:
    links = [("a", "b", "1/3"), ("a", "b", "1/6"), ("b", "a", "1/2"),
             ("b", "c", Fraction(2, 7)), ("c", "b", "2/7"), ("a", "c", 0.25), ("c", "a", "1/4")]
    t = Topology(["a", "b", "c"], links)
    assert t.capacity[("a", "b")] == Fraction(1, 2)
    assert len(t.capacity) == 6
    assert t.scale == 28  # lcm of 2, 7, 4
    for e, c in t.capacity.items():
        assert t.int_capacity[e] == c * t.scale
        assert isinstance(t.int_capacity[e], int)
    assert math.gcd(*t.int_capacity.values()) >= 1


def test_bidirectional_link_mapping() -> None:
    t = Topology(["a", "b"], [{"src": "a", "dst": "b", "capacity": "5/2",
                               "bidirectional": True}])
    assert t.capacity == {("a", "b"): Fraction(5, 2), ("b", "a"): Fraction(5, 2)}


def test_huge_capacities() -> None:
    big = 2**100
    t = Topology(["a", "b", "c"], ring3(big) + bidi([("a", "b", Fraction(1, 3))]))
    assert t.capacity[("a", "b")] == big + Fraction(1, 3)
    assert t.int_capacity[("a", "b")] == 3 * big + 1
    assert t.out_capacity({"a"}) == 2 * big + Fraction(1, 3)


def test_out_in_capacity_equal_on_eulerian() -> None:
    t = platforms.two_box_example()
    s = {"c1.1", "c1.2", "c1.3", "c1.4", "w1"}
    assert t.out_capacity(s) == 4
    assert t.in_capacity(s) == 4


def test_transpose_reverses_links() -> None:
    t = Topology(["a", "b", "c"], [("a", "b", 1), ("b", "c", 1), ("c", "a", 1)])
    tt = t.transpose()
    assert set(tt.capacity) == {("b", "a"), ("c", "b"), ("a", "c")}
    assert tt.transpose() == t


# --------------------------------------------------------------------------- #
# networkx and JSON
# --------------------------------------------------------------------------- #
def test_from_networkx_all_compute_ids_kept() -> None:
    g = nx.DiGraph()
    g.add_edge((0, 1), "x", capacity=2)
    g.add_edge("x", (0, 1), capacity="2")
    g.add_edge(7, "x", capacity=Fraction(1, 2))
    g.add_edge("x", 7, capacity=0.5)
    t = Topology.from_networkx(g)
    assert set(t.compute_nodes) == {(0, 1), "x", 7}
    assert t.switch_nodes == ()
    assert t.capacity[(7, "x")] == Fraction(1, 2) == t.capacity[("x", 7)]


def test_from_networkx_switches_and_undirected_multigraph() -> None:
    g = nx.MultiGraph()
    g.add_edge("a", "s", capacity=1)
    g.add_edge("a", "s", capacity=2)  # parallel: summed
    g.add_edge("b", "s", capacity=3)
    t = Topology.from_networkx(g, compute_nodes=["a", "b"])
    assert t.compute_nodes == ("a", "b")
    assert t.switch_nodes == ("s",)
    assert t.capacity[("a", "s")] == 3 and t.capacity[("s", "a")] == 3


def test_from_networkx_errors_name_culprit() -> None:
    g = nx.DiGraph()
    g.add_edge("a", "b", capacity=1)
    g.add_edge("b", "a", bw=1)
    with pytest.raises(TopologyError, match="'b' -> 'a'.*'capacity'"):
        Topology.from_networkx(g)
    g["b"]["a"]["capacity"] = 1
    with pytest.raises(TopologyError, match="'zz'"):
        Topology.from_networkx(g, compute_nodes=["a", "zz"])


@pytest.mark.parametrize(
    "build",
    [lambda: platforms.two_box_example(), lambda: platforms.dgx_a100(2),
     lambda: platforms.mi250(2, 8), lambda: platforms.ring(5, "1/3"),
     lambda: Topology([1, 2, 3], [(1, 2, 2**100), (2, 3, 2**100), (3, 1, 2**100)], ["s"]),
     lambda: Topology(["a", "b"], bidi([("a", "w", "7/3"), ("b", "w", "7/3")]), ["w"],
                      name="mc", multicast_switches=["w"])],
)
def test_json_round_trip(build: object, tmp_path: object) -> None:
    t = build()  # type: ignore[operator]
    data = t.to_json()
    assert data["format"] == "collcert-topology/1"
    assert all(isinstance(link["capacity"], str) for link in data["links"])
    text = json.dumps(data, indent=1)
    for src in (data, text, json.loads(text)):
        back = Topology.from_json(src)
        assert back == t
        assert back.compute_nodes == t.compute_nodes
        assert back.switch_nodes == t.switch_nodes
        assert back.multicast_switches == t.multicast_switches
        assert back.content_hash() == t.content_hash()
        assert back.to_json() == data
    path = tmp_path / "t.json"  # type: ignore[operator]
    t.save(path)
    assert Topology.from_json(path) == t
    assert Topology.from_json(str(path)) == t


def test_content_hash_depends_on_capacity() -> None:
    assert platforms.ring(4, 1).content_hash() != platforms.ring(4, 2).content_hash()
    assert platforms.ring(4, 1).content_hash() == platforms.ring(4, "1").content_hash()


def _json_text(links: list[str]) -> str:
    return (
        '{\n  "format": "collcert-topology/1",\n  "compute_nodes": ["a", "b", "c"],\n'
        '  "links": [\n' + ",\n".join("    " + x for x in links) + "\n  ]\n}\n"
    )


def test_json_error_names_link_index_and_line(tmp_path: object) -> None:
    good = '{"src": "a", "dst": "b", "capacity": "1", "bidirectional": true}'
    links = [good,
             '{"src": "b", "dst": "c", "capacity": "1", "bidirectional": true}',
             '{"src": "c", "dst": "a", "capacity": "0", "bidirectional": true}']
    path = tmp_path / "bad.json"  # type: ignore[operator]
    path.write_text(_json_text(links))
    with pytest.raises(TopologyError) as err:
        Topology.from_json(path)
    msg = str(err.value)
    # links start on line 5; links[2] is on line 7
    assert "links[2] (line 7)" in msg
    assert str(path) in msg
    assert "capacity 0" in msg


def test_json_error_line_multiline_link() -> None:
    text = (
        '{"compute_nodes": ["a", "b"],\n "links": [\n'
        '  {"src": "a", "dst": "b", "capacity": 1},\n'
        '  {"src": "b",\n   "dst": "b",\n   "capacity": 1}\n ]}'
    )
    with pytest.raises(TopologyError) as err:
        Topology.from_json(text)
    assert "links[1] (line 4)" in str(err.value)
    assert "self-loop" in str(err.value)


@pytest.mark.parametrize(
    "text, needle",
    [
        ('{"compute_nodes": ["a", "b"], "links": [', "not valid JSON at line 1"),
        ('{"compute_nodes": ["a", "b"]}', "missing 'links'"),
        ('{"links": []}', "missing 'compute_nodes'"),
        ('{"format": "other/2", "compute_nodes": ["a", "b"], "links": []}', "'other/2'"),
        ('{"compute_nodes": ["a", "b"], "links": [], "colour": 1}', "'colour'"),
        ('{"compute_nodes": ["a", 1.5], "links": []}', "1.5"),
        ('{"compute_nodes": ["a", "b"], "links": [{"src": "a", "dst": "b"}]}', "capacity"),
        ('{"compute_nodes": ["a", "b"], "links": [{"src": "a", "dst": "b", "capacity": 1, '
         '"latency": 2}]}', "latency"),
        ('{"compute_nodes": ["a", "b"], "links": ["a-b"]}', "links[0]"),
    ],
)
def test_json_errors(text: str, needle: str) -> None:
    with pytest.raises(TopologyError) as err:
        Topology.from_json(text)
    assert needle in str(err.value)


def test_json_top_level_not_object(tmp_path: object) -> None:
    path = tmp_path / "list.json"  # type: ignore[operator]
    path.write_text("[1, 2]\n")
    with pytest.raises(TopologyError, match="list.json: the top level must be a JSON object"):
        Topology.from_json(path)


def test_json_missing_file_named(tmp_path: object) -> None:
    path = tmp_path / "nope.json"  # type: ignore[operator]
    with pytest.raises(TopologyError, match="nope.json: no such file"):
        Topology.from_json(path)


def test_json_numbers_are_exact() -> None:
    text = (
        '{"compute_nodes": ["a", "b"], "links": ['
        '{"src": "a", "dst": "b", "capacity": 0.1, "bidirectional": true},'
        f'{{"src": "a", "dst": "b", "capacity": {2**100}, "bidirectional": true}}]}}'
    )
    t = Topology.from_json(text)
    assert t.capacity[("a", "b")] == Fraction(1, 10) + 2**100


def test_json_long_decimal_literal_is_exact() -> None:
    """A JSON number literal is a decimal; collcert must read it as written.

    ``json.loads`` turns 0.10000000000000000001 into the float 0.1 (17
    significant digits), so the capacity silently becomes 1/10. Exposes a
    bug: Topology.from_json should parse with ``parse_float=decimal.Decimal``.
    """
    lit = "0.10000000000000000001"
    text = (
        '{"compute_nodes": ["a", "b"], "links": ['
        f'{{"src": "a", "dst": "b", "capacity": {lit}, "bidirectional": true}}]}}'
    )
    t = Topology.from_json(text)
    assert t.capacity[("a", "b")] == Fraction(Decimal(lit))


def test_integer_node_ids_survive_json() -> None:
    t = platforms.ring(4)
    back = Topology.from_json(json.dumps(t.to_json()))
    assert back.compute_nodes == (0, 1, 2, 3)


# --------------------------------------------------------------------------- #
# platforms
# --------------------------------------------------------------------------- #
def _eulerian(t: Topology) -> bool:
    bal = {v: Fraction(0) for v in t.nodes}
    for (u, v), c in t.capacity.items():
        bal[u] += c
        bal[v] -= c
    return all(x == 0 for x in bal.values())


# (builder, compute nodes, switch nodes, directed links)
PLATFORMS = [
    (lambda: platforms.dgx_a100(1), 8, 1, 16),
    (lambda: platforms.dgx_a100(2), 16, 2 + 16 + 2, 2 * (16 + 16 + 16)),
    (lambda: platforms.dgx_h100(2), 16, 2 + 16 + 1, 2 * (16 + 16 + 16)),
    (lambda: platforms.dgx_h100(3), 24, 3 + 24 + 1, 3 * (16 + 16 + 16)),
    (lambda: platforms.mi250(1), 16, 0, 2 * 28),
    (lambda: platforms.mi250(2), 32, 1, 2 * (2 * 28 + 32)),
    (lambda: platforms.mi250(2, 8), 16, 1, 2 * (2 * 11 + 16)),
    (lambda: platforms.dgx1(), 8, 0, 2 * 16),
    (lambda: platforms.two_box_example(), 8, 3, 2 * 16),
    (lambda: platforms.ring(6), 6, 0, 12),
    (lambda: platforms.ring(6, bidirectional=False), 6, 0, 6),
    (lambda: platforms.complete(5), 5, 0, 20),
    (lambda: platforms.hypercube(3), 8, 0, 24),
    (lambda: platforms.torus((3, 4)), 12, 0, 48),
    (lambda: platforms.torus((2, 3)), 6, 0, 2 * (3 + 6)),
    (lambda: platforms.fat_tree(4), 16, 20, 2 * 48),
]


@pytest.mark.parametrize("build, n_compute, n_switch, n_links", PLATFORMS)
def test_platforms_build(build: object, n_compute: int, n_switch: int, n_links: int) -> None:
    t = build()  # type: ignore[operator]
    assert t.num_compute == n_compute
    assert len(t.switch_nodes) == n_switch
    assert len(t.capacity) == n_links
    assert _eulerian(t)
    assert len(set(t.nodes)) == len(t.nodes)


def test_platform_capacities_match_hardware_notes() -> None:
    """Link data of ForestColl's platforms (Zhao et al. 2026, §6.2-6.3, Fig. 9) and the DGX-1 cube-mesh."""
    mi = platforms.mi250(1)
    # GPU 0: 4 links to 1, 2 to 4, 1 to 8 -> 350 GB/s out of GPU 0
    assert mi.out_capacity({"b0.gpu0"}) == 350
    assert mi.capacity[("b0.gpu0", "b0.gpu1")] == 200
    assert mi.capacity[("b0.gpu13", "b0.gpu15")] == 50
    for i in range(16):
        assert sum(platforms.MI250_LINKS[i]) == 7  # every MI250 GCD has 7 IF links
        for j in range(16):
            assert platforms.MI250_LINKS[i][j] == platforms.MI250_LINKS[j][i]
    two = platforms.mi250(2)
    assert two.capacity[("b1.gpu3", "ib")] == 16 == two.capacity[("ib", "b1.gpu3")]
    a100 = platforms.dgx_a100(2)
    assert a100.capacity[("b0.gpu0", "b0.nvswitch")] == 300
    assert a100.capacity[("b1.nic2", "ib0")] == 25
    assert a100.capacity[("b1.nic3", "ib1")] == 25
    h100 = platforms.dgx_h100(2)
    assert h100.capacity[("b0.gpu0", "b0.nvswitch")] == 450
    assert h100.capacity[("b0.nic0", "ib")] == 50
    d1 = platforms.dgx1()
    for i in range(8):
        assert sum(platforms.DGX1_LINKS[i]) == 6  # V100: 6 NVLinks per GPU
    assert platforms.dgx1(25).capacity[("gpu0", "gpu1")] == 50
    assert d1.capacity[("gpu0", "gpu1")] == 2


def test_two_box_example_bandwidth_parameter() -> None:
    t = platforms.two_box_example("5/2")
    assert t.capacity[("c1.1", "w1")] == 25
    assert t.capacity[("c2.4", "w0")] == Fraction(5, 2)


@pytest.mark.parametrize(
    "call, needle",
    [(lambda: platforms.dgx_a100(0), "boxes"), (lambda: platforms.mi250(2, 12), "gpus_per_box"),
     (lambda: platforms.ring(1), "n"), (lambda: platforms.fat_tree(3), "even"),
     (lambda: platforms.torus(()), "dimension")],
)
def test_platform_bad_arguments(call: object, needle: str) -> None:
    with pytest.raises(TopologyError, match=needle):
        call()  # type: ignore[operator]


def test_fraction_str() -> None:
    assert fraction_str(Fraction(1040, 3)) == "1040/3"
    assert fraction_str(Fraction(8, 1)) == "8"
    assert fraction_str(Fraction(-1, 2)) == "-1/2"
