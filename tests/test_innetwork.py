"""The allreduce optimum when switches add (issue 30): exact figures, certificates, refusals.

Two kinds of switch that adds (docs/in-network.md). An **NVLS** switch (NVLink SHARP:
``nvls_switches``, the built-ins' NVSwitches) adds only into a member GPU whose own
share goes up too, and copies only what a member stores, that member included: one
NVLS star of N ≥ 4 GPUs at B each way gives N·B/(N+1) (400 on a DGX H100, what NCCL's
NVLS and collcert's MSCCL++ export reach), proven by the box-dual count. A **SHARP**
switch (``reducing_switches``, as every file before NVLS switches were modelled) holds
its sum and multicasts it: one joining all GPUs reaches the cut-set bound. DGX boxes
joined by an InfiniBand switch that only forwards are held by their NICs to
400·n/(2(n−1)) either way. Column generation with exact pricing, the symmetric
two-level LP with its box-dual, and a brute-force LP over every structure must agree.
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


def two_level(g: int, n: int, a: object, c: object, sharp: bool = False,
              nvls: bool = False) -> Topology:
    """n boxes of g GPUs on a switch that adds (a each way; NVLS with ``nvls``, else
    SHARP), each GPU to one top switch (c; SHARP with ``sharp``) through a NIC of its
    own where ``nvls``."""
    comp: list[str] = []
    links: list[tuple[str, str, object]] = []
    nics: list[str] = []
    for b in range(n):
        for i in range(g):
            x = f"b{b}.g{i}"
            comp.append(x)
            links += [(x, f"b{b}.s", a), (f"b{b}.s", x, a)]
            if n > 1 and nvls:
                nics.append(f"b{b}.n{i}")
                links += [(x, nics[-1], c), (nics[-1], x, c), (nics[-1], "top", c),
                          ("top", nics[-1], c)]
            elif n > 1:
                links += [(x, "top", c), ("top", x, c)]
    hubs = [f"b{b}.s" for b in range(n)]
    return Topology(comp, links, hubs + nics + (["top"] if n > 1 else []),
                    reducing_switches=(["top"] if sharp else []) + ([] if nvls else hubs),
                    nvls_switches=hubs if nvls else [])


def star(n: int, b: object, kind: str = "nvls", rate: object = None) -> Topology:
    """n GPUs on one switch that adds (``kind`` nvls or sharp), b each way."""
    links = [(f"g{i}", "w", b) for i in range(n)] + [("w", f"g{i}", b) for i in range(n)]
    return Topology([f"g{i}" for i in range(n)], links, ["w"],
                    **{"nvls_switches" if kind == "nvls" else "reducing_switches": ["w"]},
                    reduction_rates={"w": rate} if rate is not None else None)


def _checked(t: Topology) -> tuple[Any, dict[str, Any]]:
    r = in_network_rate(t)
    assert r is not None
    cert = json.loads(json.dumps(r.certificate()))
    v = check_in_network(t.to_json(), cert)
    assert v.ok, v.all_reasons()
    assert (v.facts["lower"], v.facts["upper"]) == (r.lower, r.upper)
    return r, cert


@pytest.mark.parametrize("build, value", [
    (lambda: platforms.dgx_h100(1), 400),            # NVLS: 450·8/9, the box-dual count
    (lambda: platforms.dgx_h100(2), 400),            # the NICs: 400·2/2
    (lambda: platforms.dgx_h100(3), 300),            # 400·3/4: the partition into boxes
    (lambda: platforms.dgx_h100(3, "sharp"), 400),   # the IB switch adds: the cut-set bound
    (lambda: platforms.dgx_b200(1), 800),            # 900·8/9
    (lambda: two_level(4, 2, 2, 1), Fraction(16, 7)),  # SHARP hubs: single GPUs' partition
    (lambda: two_level(4, 2, 3, 1, nvls=True), Fraction(92, 35)),  # NVLS hubs: box-dual
    (lambda: two_level(4, 2, 3, 1, sharp=True, nvls=True), Fraction(14, 5)),  # IB SHARP
])
def test_exact_figures_with_their_certificates(build: Any, value: Fraction) -> None:
    t = build()
    r, _ = _checked(t)
    assert r.exact and r.lower == value
    assert r.model.startswith("in-network: ")
    lp5 = forestcoll_lp(t).value  # schedules of switches that forward are in the model
    assert lp5 <= r.lower


@pytest.mark.parametrize("n", [2, 3, 4, 5, 8])
def test_one_nvls_star(n: int) -> None:
    """N GPUs on one NVLS switch: N/(N+1) of the link from 4 GPUs on (the load-reduce and
    the store each cost their issuer a round trip), the routing optimum N/(2(N−1)) below
    (2 GPUs: the link; 3: both 3/4); a SHARP switch reaches the link."""
    r, cert = _checked(star(n, 450))
    assert r.exact and r.lower == max(Fraction(450 * n, n + 1), Fraction(450 * n, 2 * (n - 1)))
    assert r.model == "in-network: NVLS: w reduces to a member GPU and multicasts from one"
    assert _checked(star(n, 450, "sharp"))[0].lower == 450
    assert all(s["root"] != "w" for s in cert["lower"]["structures"])  # never holds a sum


def test_old_files_with_reducing_switches_read_as_before() -> None:
    """``reducing_switches`` keeps its meaning (SHARP: the switch holds its sums and
    multicasts them): the figure and the model of a file written before NVLS switches."""
    doc = {"compute_nodes": ["a", "b", "c", "d"], "switch_nodes": ["w"],
           "reducing_switches": ["w"],
           "links": [{"src": x, "dst": "w", "capacity": "3", "bidirectional": True}
                     for x in "abcd"]}
    old = Topology.from_json(doc)
    assert old.reducing_switches == {"w"} and not old.nvls_switches
    r, cert = _checked(old)
    assert r.lower == 3 and r.model == "in-network: SHARP: w adds and multicasts its sums"
    assert cert["model"]["reducing_switches"] == ["w"] and cert["model"]["nvls_switches"] == []
    new = Topology.from_json({**doc, "reducing_switches": [], "nvls_switches": ["w"]})
    assert _checked(new)[0].lower == Fraction(12, 5)
    # a certificate of the SHARP model does not hold on the NVLS machine
    _fails(new, cert, "model is not the topology's")


def test_a_machine_where_switches_only_forward_has_no_in_network_figure() -> None:
    assert in_network_rate(platforms.dgx_h100(2, "none")) is None
    assert in_network_rate(platforms.dgx_a100(2)) is None


@pytest.mark.parametrize("t, value", [
    (two_level(3, 2, 3, 2), Fraction(18, 5)),  # SHARP hubs: the singletons bound
    (two_level(4, 2, 3, 1, nvls=True), Fraction(92, 35)),  # NVLS hubs: the box-dual
])
def test_column_generation_agrees_with_the_symmetric_lp(t: Topology, value: Fraction) -> None:
    assert recognise(t) is not None
    exact = in_network_lp(t)
    assert exact.value == in_network_rate(t).lower == value
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


def test_the_checker_holds_nvls_switches_to_nvlink_sharp() -> None:
    t = platforms.dgx_h100(1)
    _, cert = _checked(t)
    assert cert["upper"]["kind"] == "box-dual" and cert["model"]["nvls_switches"] == [
        "b0.nvswitch"]
    (s,) = cert["lower"]["structures"]
    shared = copy.deepcopy(cert)  # the switch holding the sum (SHARP's way): refused
    shared["lower"]["structures"][0].update(
        root="b0.nvswitch", reduce=[[x, "b0.nvswitch"] for x in t.compute_nodes],
        broadcast=[["b0.nvswitch", x] for x in t.compute_nodes])
    _fails(t, shared, "neither computes nor holds sums")
    far = copy.deepcopy(cert)  # a child reaching the switch through a GPU: not a member read
    red = far["lower"]["structures"][0]["reduce"]
    child = next(p for p in red if p[-1] == "b0.nvswitch")
    other = next(x for x in t.compute_nodes if x not in (child[0], s["root"]))
    red.remove(child)
    red.append([child[0], "b0.nvswitch", other, "b0.nvswitch"])
    _fails(t, far, "only by single links to member GPUs")
    # the issuer's round trip is counted: 450 of weight no longer fits
    fast = copy.deepcopy(cert)
    fast["lower"]["structures"][0]["weight"] = fast["lower"]["value"] = "450"
    _fails(t, fast, "> its capacity")
    split = copy.deepcopy(cert)  # the switch in a box without its members
    split["upper"]["boxes"] = [list(t.compute_nodes), ["b0.nvswitch"]]
    _fails(t, split, "not in one box with all its member GPUs")
    up = copy.deepcopy(cert)  # lengths on the GPUs' uplinks only: a weaker bound, 450
    up["upper"]["y"] = [y for y in cert["upper"]["y"] if y[1] == "b0.nvswitch"]
    _fails(t, up, "but the box-dual proves 450")
    zero = copy.deepcopy(cert)  # no lengths: structures cost nothing, no bound
    zero["upper"]["y"] = []
    _fails(t, zero, "no positive least cost")
    high = copy.deepcopy(cert)
    high["upper"]["value"] = "450"
    _fails(t, high, "but the box-dual proves 400")


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
    assert (got["algbw"], got["time_per_unit"], got["algbw_key"]) == ("400", "1/400",
                                                                      "in_network")
    assert got["algbw_model"] == ("in-network: NVLS: b0.nvswitch reduces to a member GPU "
                                  "and multicasts from one")
    assert (got["rsag_algbw"], got["rsag_time_per_unit"]) == ("1800/7", "7/1800")
    assert got["in_network"]["exact"] and got["checked_by_certify"]["in_network"]
    # ForestColl's model (switches forward): the best is LP (5), the routing figure
    plain = _cli(["optimum", "dgx_h100:1", "-c", "allreduce", "--forward-only", "--json"],
                 capsys)
    assert plain["in_network"] is None and plain["algbw_model"] == "routing"
    assert plain["algbw"] == plain["forestcoll_lp"] == "1800/7"
    # the NVSwitch declared SHARP for one run: the cut-set bound, as the old model said
    sharp = _cli(["optimum", "dgx_h100:1", "-c", "allreduce", "--reducing", "b0.nvswitch",
                  "--json"], capsys)
    assert sharp["algbw"] == "450" and "SHARP: b0.nvswitch" in sharp["algbw_model"]


def test_one_switch_declared_both_ways_is_refused(capsys: Any) -> None:
    from collcert.cli import main

    assert main(["optimum", "dgx_h100:2", "-c", "allreduce", "--reducing", "ib",
                 "--nvls", "ib,b0.nvswitch"]) == 2
    err = capsys.readouterr().err
    assert "switch 'ib' is declared both a SHARP switch" in err
    assert main(["optimum", "dgx_h100:1", "-c", "allreduce", "--nvls", "b0.gpu3"]) == 2
    assert "NVLS switch 'b0.gpu3' is a compute node" in capsys.readouterr().err
    assert main(["optimum", "dgx_h100:1", "-c", "allgather", "--nvls", "b0.nvswitch"]) == 2
    assert "--nvls 'b0.nvswitch': allgather adds no data" in capsys.readouterr().err


def test_reducing_collectives_name_their_model(capsys: Any) -> None:
    from collcert.cli import main

    assert main(["optimum", "dgx_h100:2", "-c", "reduce-scatter"]) == 0
    out = capsys.readouterr().out
    assert "model: any schedule, so also the in-network model" in out
    got = _cli(["optimum", "dgx_h100:2,none", "-c", "reduce-scatter", "--reducing", "ib",
                "--json"], capsys)
    assert "SHARP: ib adds and multicasts its sums" in got["model"]


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


def _nvls_trees(t: Topology, root: Any, w: Any, inward: bool) -> set[tuple[Any, ...]]:
    """Every reduce (``inward``) or broadcast tree of ``root`` over the compute nodes and
    any set of load-reduces (stores) at NVLS switch ``w``, several at once allowed, each
    issued by a member g (its round trip g -> w -> g counted) and reading (writing)
    members by single links; other edges simple paths. Distinct (column, reductions)."""
    import itertools

    comp = list(t.compute_nodes)
    out: set[tuple[Any, ...]] = set()
    for k in range(len(comp) + 1):
        for issuers in itertools.combinations(comp, k):
            virt = [("at", g) for g in issuers]
            others = [x for x in comp if x != root]
            options = [[p for p in comp if p != x] + [v for v in virt if v[1] != x]
                       for x in others]
            for parents in itertools.product(*options):
                par: dict[Any, Any] = {**dict(zip(others, parents)), **{v: v[1] for v in virt}}
                if any(_loops(par, s, root) for s in par):
                    continue
                fixed = [e for v in virt for e in ((v[1], w), (w, v[1]))]
                choices = [[((x, w) if inward else (w, x),)] if par[x] in virt else
                           [tuple(zip(q, q[1:])) for q in
                            (_simple_paths(t, x, par[x]) if inward
                             else _simple_paths(t, par[x], x))] for x in others]
                for combo in itertools.product(*choices):
                    col: dict[Any, int] = {}
                    for e in fixed + [e for es in combo for e in es]:
                        col[e] = col.get(e, 0) + 1
                    out.add((frozenset(col.items()), len(virt) if inward else 0))
    return out


def _loops(par: dict[Any, Any], s: Any, root: Any) -> bool:
    seen = set()
    while s != root:
        if s in seen:
            return True
        seen.add(s)
        s = par[s]
    return False


def test_nvls_pricing_agrees_with_every_structure_enumerated() -> None:
    """Column generation's optimum on an NVLS switch equals the LP over every structure,
    load-reduces and stores issued by any set of members (several at one switch, which
    the pricing never needs), written out: 4 GPUs at 3 each way on an NVLS switch that
    outputs at most 2 of sums. 7/3: above routing (LP (5) 2), below the switch without a
    rate (12/5), below SHARP's 3."""
    from collcert.reference.solvers import LinearProgram, solve_lp

    t = star(4, 3, rate=2)
    lp = LinearProgram("max")
    for (u, v), c in t.capacity.items():
        lp.add_row(("cap", u, v), {}, "<=", c)
    lp.add_row("rate", {}, "<=", 2)
    n = 0
    for root in t.compute_nodes:
        lp.add_row(("red", root), {}, "=", 0)
        lp.add_row(("bc", root), {}, "=", 0)
        lp.add_variable(("t", root), 1, column={("red", root): -1, ("bc", root): -1})
        for side, inward in (("red", True), ("bc", False)):
            for col, adds in _nvls_trees(t, root, "w", inward):
                column: dict[Any, int] = {(side, root): 1}
                column.update({("cap", *e): k for e, k in col})
                if adds:
                    column["rate"] = adds
                n += 1
                lp.add_variable(("x", n), 0, column=column)
    assert n > 1000
    exact = in_network_lp(t)
    assert exact.value == solve_lp(lp).objective == Fraction(7, 3)
    assert forestcoll_lp(t).value == 2 and in_network_lp(star(4, 3)).value == Fraction(12, 5)
