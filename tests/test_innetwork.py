"""The allreduce optimum when switches add (issue 30): exact figures, certificates, refusals.

Figures derived by hand in docs/in-network.md: one reducing switch joining the GPUs
reaches the cut-set bound (a GPU's link rate); DGX boxes joined by an InfiniBand switch
that only forwards are held by their NICs to 400·n/(2(n−1)) (the partition into boxes,
met by a schedule that adds in each NVSwitch); with SHARP the IB switch adds too and
the cut-set bound 400 is reached. Column generation with exact pricing and the
symmetric two-level LP must agree where both apply.
"""

from __future__ import annotations

import copy
import json
from fractions import Fraction
from typing import Any

import pytest

from collcert import Topology, platforms
from collcert.certify.innetwork import check_in_network
from collcert.reference.allreduce import forestcoll_lp
from collcert.reference.innetwork import (
    check_structure,
    in_network_lp,
    in_network_rate,
    loads,
    recognise,
    unchanged_reason,
)


def two_level(g: int, n: int, a: object, c: object, sharp: bool = False) -> Topology:
    """n boxes of g GPUs on a reducing switch (a each way), each GPU to one top switch (c)."""
    comp: list[str] = []
    links: list[tuple[str, str, object]] = []
    for b in range(n):
        for i in range(g):
            x = f"b{b}.g{i}"
            comp.append(x)
            links += [(x, f"b{b}.s", a), (f"b{b}.s", x, a)]
            if n > 1:
                links += [(x, "top", c), ("top", x, c)]
    hubs = [f"b{b}.s" for b in range(n)]
    return Topology(comp, links, hubs + (["top"] if n > 1 else []),
                    reducing_switches=hubs + (["top"] if sharp else []))


def _checked(t: Topology) -> tuple[Any, dict[str, Any]]:
    r = in_network_rate(t)
    assert r is not None
    cert = json.loads(json.dumps(r.certificate()))
    v = check_in_network(t.to_json(), cert)
    assert v.ok, v.all_reasons()
    assert (v.facts["lower"], v.facts["upper"]) == (r.lower, r.upper)
    return r, cert


@pytest.mark.parametrize("build, value", [
    (lambda: platforms.dgx_h100(1), 450),            # the cut-set bound: one switch adds all
    (lambda: platforms.dgx_h100(2), 400),            # the NICs: 400·2/2
    (lambda: platforms.dgx_h100(3), 300),            # 400·3/4: the partition into boxes
    (lambda: platforms.dgx_h100(3, "sharp"), 400),   # the IB switch adds: the cut-set bound
    (lambda: platforms.dgx_b200(1), 900),
    (lambda: two_level(4, 2, 2, 1), Fraction(16, 7)),  # the partition into single GPUs
])
def test_exact_figures_with_their_certificates(build: Any, value: Fraction) -> None:
    t = build()
    r, _ = _checked(t)
    assert r.exact and r.lower == value
    assert r.model.startswith("in-network: ")
    lp5 = forestcoll_lp(t).value  # schedules of switches that forward are in the model
    assert lp5 <= r.lower


def test_a_machine_where_switches_only_forward_has_no_in_network_figure() -> None:
    assert in_network_rate(platforms.dgx_h100(2, "none")) is None
    assert in_network_rate(platforms.dgx_a100(2)) is None


def test_column_generation_agrees_with_the_symmetric_lp() -> None:
    t = two_level(3, 2, 3, 2)  # 18/5: singletons bound, met by both methods
    assert recognise(t) is not None
    exact = in_network_lp(t)
    assert exact.value == in_network_rate(t).lower == Fraction(18, 5)
    for s, _ in exact.structures:
        check_structure(t, s)
    link, _ = loads(t, exact.structures)
    assert all(x <= t.capacity[e] for e, x in link.items())


def test_a_reduction_rate_limits_the_switch_and_the_dual_proves_it() -> None:
    # three GPUs on a reducing switch that outputs at most 1 of sums per unit of time
    t = Topology(["a", "b", "c"], [(x, "w", 3) for x in "abc"] + [("w", x, 3) for x in "abc"],
                 ["w"], reducing_switches=["w"], reduction_rates={"w": 1})
    r, cert = _checked(t)
    assert r.exact and forestcoll_lp(t).value < r.lower < 3  # 3: no rate, the cut-set bound
    assert cert["upper"]["kind"] == "dual"
    worse = copy.deepcopy(cert)
    worse["upper"]["y"] = [[u, v, "0"] for u, v, _ in cert["upper"]["y"]]
    worse["upper"]["value"] = "1"
    v = check_in_network(t.to_json(), worse)
    assert not v.ok and "not dual feasible" in " ".join(v.all_reasons())


def _fails(t: Topology, cert: dict[str, Any], words: str) -> None:
    v = check_in_network(t.to_json(), cert)
    assert not v.ok and words in " ".join(v.all_reasons()), v.all_reasons()


def test_the_checker_refuses_what_is_wrong() -> None:
    t = platforms.dgx_h100(2)
    _, cert = _checked(t)
    heavy = copy.deepcopy(cert)
    heavy["lower"]["structures"][0]["weight"] = "500"
    heavy["lower"]["value"] = "500"
    _fails(t, heavy, "> its capacity")
    # the same certificate on the machine without NVLS: its model is not the machine's
    _fails(platforms.dgx_h100(2, "none"), cert, "model is not the topology's")
    # adding at a switch that only forwards (the NIC), with the model made to match
    forward = copy.deepcopy(cert)
    s = forward["lower"]["structures"][0]
    s["reduce"].append(["b1.nic0", "ib", "b0.nic0"])
    _fails(t, forward, "adds nothing")
    part = copy.deepcopy(cert)
    part["upper"] = {"kind": "partition", "side": "in", "value": "1",
                     "parts": [[v for v in t.compute_nodes if v.startswith("b0")],
                               [v for v in t.compute_nodes if v.startswith("b1")]]}
    _fails(t, part, "'b0.nvswitch' is in no part")
    low = copy.deepcopy(cert)
    low["upper"]["value"] = "399"
    _fails(t, low, "upper.value")


def test_unchanged_collectives() -> None:
    for coll in ("allgather", "reduce-scatter", "broadcast", "reduce"):
        assert "any schedule" in str(unchanged_reason(coll))
    assert unchanged_reason("allreduce") is None


def _cli(argv: list[str], capsys: Any) -> dict[str, Any]:
    from collcert.cli import main

    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_the_top_level_figure_is_the_best_certified_rate_in_its_model(capsys: Any) -> None:
    got = _cli(["optimum", "dgx_h100:1", "-c", "allreduce", "--json"], capsys)
    assert (got["algbw"], got["time_per_unit"], got["algbw_key"]) == ("450", "1/450",
                                                                      "in_network")
    assert got["algbw_model"] == "in-network: b0.nvswitch adds and copies"
    assert (got["rsag_algbw"], got["rsag_time_per_unit"]) == ("1800/7", "7/1800")
    assert got["in_network"]["exact"] and got["checked_by_certify"]["in_network"]
    # ForestColl's model (switches forward): the best is LP (5), the routing figure
    plain = _cli(["optimum", "dgx_h100:1", "-c", "allreduce", "--forward-only", "--json"],
                 capsys)
    assert plain["in_network"] is None and plain["algbw_model"] == "routing"
    assert plain["algbw"] == plain["forestcoll_lp"] == "1800/7"


def test_reducing_collectives_name_their_model(capsys: Any) -> None:
    from collcert.cli import main

    assert main(["optimum", "dgx_h100:2", "-c", "reduce-scatter"]) == 0
    out = capsys.readouterr().out
    assert "model: any schedule, so also the in-network model" in out
    got = _cli(["optimum", "dgx_h100:2,none", "-c", "reduce-scatter", "--reducing", "ib",
                "--json"], capsys)
    assert "ib adds and copies" in got["model"]


def _simple_paths(t: Topology, a: Any, b: Any) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    stack = [(a,)]
    while stack:
        p = stack.pop()
        if p[-1] == b:
            out.append(p)
            continue
        stack += [p + (v,) for (u, v) in t.capacity if u == p[-1] and v not in p]
    return out


def _trees(t: Topology, root: Any, optional: list[Any], inward: bool) -> list[tuple[Any, ...]]:
    """Every tree of ``root`` over the compute nodes and a subset of ``optional``, each edge
    a simple path: reduce trees (``inward``, paths child -> parent) or broadcast trees."""
    import itertools

    out = []
    for k in range(len(optional) + 1):
        for extra in itertools.combinations([w for w in optional if w != root], k):
            nodes = [v for v in [*t.compute_nodes, *extra] if v != root]
            for parents in itertools.product([root, *nodes], repeat=len(nodes)):
                par = dict(zip(nodes, parents))
                ok = True
                for v in nodes:  # no cycles: every node reaches the root
                    seen, x = set(), v
                    while x != root and ok:
                        ok = x not in seen and par[x] != x
                        seen.add(x)
                        x = par[x]
                if not ok:
                    continue
                choices = [_simple_paths(t, v, par[v]) if inward else
                           _simple_paths(t, par[v], v) for v in nodes]
                out += list(itertools.product(*choices))
    return out


def test_exact_pricing_agrees_with_every_structure_enumerated() -> None:
    """Column generation's optimum equals the LP over every structure (simple paths),
    written out in full: 3 GPUs on a reducing switch w that outputs at most 1 of sums
    (links 3 each way) and a direct link a -> b. A structure's column is its reduce
    tree's plus its broadcast tree's, so per root the LP takes reduce trees and broadcast
    trees apart, with equal totals (any two such sets pair up into structures)."""
    from collcert.reference.solvers import LinearProgram, solve_lp

    links = [(x, "w", 3) for x in "abc"] + [("w", x, 3) for x in "abc"] + [("a", "b", 1)]
    t = Topology(["a", "b", "c"], links, ["w"], reducing_switches=["w"],
                 reduction_rates={"w": 1}, strict=False)
    lp = LinearProgram("max")
    for (u, v), c in t.capacity.items():
        lp.add_row(("cap", u, v), {}, "<=", c)
    lp.add_row("rate", {}, "<=", 1)
    n = 0
    for root in ["a", "b", "c", "w"]:
        lp.add_row(("red", root), {}, "=", 0)
        lp.add_row(("bc", root), {}, "=", 0)
        lp.add_variable(("t", root), 1, column={("red", root): -1, ("bc", root): -1})
        for side, inward in (("red", True), ("bc", False)):
            for tree in _trees(t, root, ["w"], inward):
                col: dict[Any, int] = {(side, root): 1}
                for path in tree:
                    for u, v in zip(path, path[1:]):
                        col[("cap", u, v)] = col.get(("cap", u, v), 0) + 1
                ends = {p[0] for p in tree} | {p[-1] for p in tree} | {root}
                if inward and "w" in ends:
                    col["rate"] = 1
                n += 1
                lp.add_variable(("x", n), 0, column=col)
    assert n > 80
    exact = in_network_lp(t)
    assert exact.value == solve_lp(lp).objective == Fraction(11, 4)
    assert forestcoll_lp(t).value < exact.value < 3  # LP (5) 5/2; the cut-set bound 3
