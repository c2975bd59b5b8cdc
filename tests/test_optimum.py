"""collcert.optimum against exhaustive cut enumeration and plain max-flow tests.

The reference values here are computed by code written plainly in this file
(enumerate every S ⊂ V; networkx max-flow), never by collcert itself. Random
topologies are unions of random cycles (hence Eulerian) on up to 12 nodes,
with and without switches, with integer and fractional capacities; the seeds
are fixed and the counts bounded so the file runs in seconds.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Iterator, Sequence
from fractions import Fraction

import networkx as nx
import pytest
from conftest import cycle_topology as random_topology

from collcert import Topology, TopologyError, optimum, platforms
from collcert.cli import main as cli_main
from collcert.reference.forestcoll import FlowWitness, Optimum


# --------------------------------------------------------------------------- #
# plain reference computations
# --------------------------------------------------------------------------- #
def all_cuts(t: Topology) -> Iterator[tuple[frozenset[str], int, Fraction]]:
    """(S, |S ∩ V_c| , B⁺(S)) for every S ⊂ V with S ≠ ∅, S ≠ V."""
    nodes = list(t.nodes)
    n = len(nodes)
    bit = {v: 1 << i for i, v in enumerate(nodes)}
    edges = [(bit[u], bit[v], c) for (u, v), c in t.capacity.items()]
    cmask = sum(bit[v] for v in t.compute_nodes)
    for mask in range(1, (1 << n) - 1):
        out = sum((c for bu, bv, c in edges if mask & bu and not mask & bv), Fraction(0))
        inside = bin(mask & cmask).count("1")
        yield frozenset(v for v in nodes if mask & bit[v]), inside, out


def out_cap(t: Topology, s: frozenset[object]) -> Fraction:
    return sum((c for (u, v), c in t.capacity.items() if u in s and v not in s), Fraction(0))


def brute(t: Topology) -> dict[str, object]:
    """Every cut quantity the tests need, by enumeration of all S ⊂ V."""
    n_c = t.num_compute
    inv_x = Fraction(0)
    min_mixed = None  # min over S ∩ V_c ∉ {∅, V_c} of B⁺(S)
    single = {v: None for v in t.compute_nodes}  # min over S ∩ V_c = {v}
    argmax = []
    for s, inside, out in all_cuts(t):
        if inside == 0 or inside == n_c:
            continue
        r = Fraction(inside, 1) / out
        if r > inv_x:
            inv_x, argmax = r, [s]
        elif r == inv_x:
            argmax.append(s)
        if min_mixed is None or out < min_mixed:
            min_mixed = out
        if inside == 1:
            (v,) = [x for x in s if t.is_compute(x)]
            if single[v] is None or out < single[v]:
                single[v] = out
    return {"inv_x": inv_x, "argmax": argmax, "min_mixed": min_mixed, "single": single}


def check_witness(t: Topology, w: FlowWitness, link_cap: dict[tuple[object, object], object],
                  src_cap: Fraction | int, need: Fraction | int) -> None:
    """``w`` is a flow from the super source (tail None) to ``w.sink`` in
    G + s, with amounts/multiplier ≤ the given capacities, conserved, of value ≥ need."""
    m = w.multiplier
    bal = {v: 0 for v in t.nodes}
    bal[None] = 0
    seen_src = 0
    for (u, v), a in zip(w.arcs, w.amounts):
        a = int(a)
        assert a >= 0
        if u is None:
            seen_src += 1
            assert Fraction(a, m) <= src_cap
        else:
            assert Fraction(a, m) <= link_cap[(u, v)]
        bal[u] -= a
        bal[v] += a
    assert seen_src == t.num_compute
    for v, b in bal.items():
        if v not in (None, w.sink):
            assert b == 0, f"flow not conserved at {v!r}"
    assert bal[w.sink] == w.value
    assert Fraction(w.value, m) >= need


def plain_fixed_k_test(t: Topology, k: int, u: Fraction) -> bool:
    """min_v F(s, v; G⃗_k({⌊U c_e⌋})) ≥ N·k, with networkx."""
    g = nx.DiGraph()
    for (a, b), c in t.capacity.items():
        g.add_edge(a, b, capacity=math.floor(u * c))
    for v in t.compute_nodes:
        g.add_edge("__s", v, capacity=k)
    return all(nx.maximum_flow_value(g, "__s", v) >= t.num_compute * k
               for v in t.compute_nodes)


def brute_u_star(t: Topology, k: int) -> tuple[Fraction, Fraction]:
    """(U*, the largest candidate below it) by binary search over the values m/c_e."""
    hi = Fraction(1)
    while not plain_fixed_k_test(t, k, hi):
        hi *= 2
    cands = sorted({Fraction(m, 1) / c for c in set(t.capacity.values())
                    for m in range(1, math.floor(hi * c) + 1)})
    lo_i, hi_i = 0, len(cands) - 1  # cands[hi_i] passes
    assert plain_fixed_k_test(t, k, cands[hi_i])
    while lo_i < hi_i:
        mid = (lo_i + hi_i) // 2
        if plain_fixed_k_test(t, k, cands[mid]):
            hi_i = mid
        else:
            lo_i = mid + 1
    return cands[lo_i], (cands[lo_i - 1] if lo_i > 0 else Fraction(0))


def brute_prop3(inv_x: Fraction, caps: Sequence[Fraction]) -> tuple[int, Fraction]:
    """Least k such that U = k/x* makes every U·c_e an integer (Zhao & Krishnamurthy 2023, Prop 3)."""
    for k in range(1, 10**6):
        u = k * inv_x
        if all((u * c).denominator == 1 for c in caps):
            return k, u
    raise AssertionError("no k below 10**6")


# --------------------------------------------------------------------------- #
# allgather / reduce-scatter against enumeration
# --------------------------------------------------------------------------- #
SEEDS = list(range(48))


@pytest.fixture(scope="module")
def cases() -> dict[int, tuple[Topology, dict[str, object]]]:
    out = {}
    for seed in SEEDS:
        t = random_topology(seed)
        out[seed] = (t, brute(t))
    return out


def test_random_topologies_cover_both_kinds(cases: dict) -> None:
    with_sw = sum(1 for t, _ in cases.values() if t.switch_nodes)
    assert 8 <= with_sw <= len(cases) - 8
    assert any(len(t.nodes) == 12 for t, _ in cases.values())
    assert any(t.scale > 1 for t, _ in cases.values())


@pytest.mark.parametrize("seed", SEEDS)
def test_allgather_matches_enumeration(seed: int, cases: dict) -> None:
    t, ref = cases[seed]
    opt = optimum(t, "allgather")
    assert opt.inv_x == ref["inv_x"]
    assert opt.algbw == t.num_compute / ref["inv_x"]
    assert opt.time_per_unit == 1 / opt.algbw
    # the witness cut: S ⊉ V_c and |S ∩ V_c| / B⁺(S) = 1/x*
    assert opt.cut in ref["argmax"]
    inside = sum(1 for v in opt.cut if t.is_compute(v))
    assert 0 < inside < t.num_compute
    assert Fraction(inside) / out_cap(t, opt.cut) == opt.inv_x
    # Prop 3
    k, u = brute_prop3(opt.inv_x, list(t.capacity.values()))
    assert (opt.k, opt.U) == (k, u)
    # one valid flow witness per compute node, each at some x ≥ x*
    assert sorted(map(str, (w.sink for w in opt.flows))) == sorted(map(str, t.compute_nodes))
    assert opt.maxflows >= len(opt.flows)
    for w in opt.flows:
        x = w.params["x"]
        assert 1 / x <= opt.inv_x
        check_witness(t, w, t.capacity, x, t.num_compute * x)


@pytest.mark.parametrize("seed", SEEDS[::3])
def test_reduce_scatter_is_allgather_on_transpose(seed: int, cases: dict) -> None:
    t, _ = cases[seed]
    rs = optimum(t, "reduce-scatter")
    ref = brute(t.transpose())
    assert rs.collective == "reduce-scatter"
    assert rs.inv_x == ref["inv_x"]
    # an Eulerian graph and its transpose have the same cut values (B⁺(S) = B⁻(S))
    assert rs.algbw == optimum(t, "allgather").algbw
    # the flows live on the transposed topology (allgather trees there, reversed)
    tt = t.transpose()
    assert len(rs.flows) == t.num_compute
    for w in rs.flows:
        x = w.params["x"]
        assert 1 / x <= rs.inv_x
        check_witness(tt, w, tt.capacity, x, t.num_compute * x)


@pytest.mark.parametrize("seed", SEEDS[::2])
def test_engines_agree(seed: int, cases: dict) -> None:
    t, _ = cases[seed]
    a = optimum(t, engine="ortools")
    b = optimum(t, engine="exact")
    assert (a.inv_x, a.k, a.U) == (b.inv_x, b.k, b.U)


def test_huge_capacities_exact() -> None:
    """Capacities near 2**100 (auto → exact engine) give the scaled optimum exactly."""
    t = random_topology(5)
    big = t.scaled(2**100 + Fraction(1, 3))
    a, b = optimum(t), optimum(big)
    assert b.inv_x == a.inv_x / (2**100 + Fraction(1, 3))
    assert b.algbw == a.algbw * (2**100 + Fraction(1, 3))


# --------------------------------------------------------------------------- #
# weights (non-uniform allgather)
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("seed", SEEDS[::3])
def test_weighted_allgather_matches_enumeration(seed: int, cases: dict) -> None:
    t, _ = cases[seed]
    rng = random.Random(seed)
    weights = [Fraction(rng.randint(1, 6), rng.choice([1, 1, 2, 3])) for _ in t.compute_nodes]
    w_of = dict(zip(t.compute_nodes, weights))
    best = Fraction(0)
    for s, inside, out in all_cuts(t):
        if 0 < inside < t.num_compute:
            best = max(best, sum((w_of[v] for v in s if t.is_compute(v)), Fraction(0)) / out)
    opt = optimum(t, "allgather", weights=[str(w) for w in weights])
    assert opt.algbw == sum(weights) / best
    assert sum((w_of[v] for v in opt.cut if t.is_compute(v)), Fraction(0)) / out_cap(
        t, opt.cut) == best


def test_uniform_weights_equal_plain_allgather() -> None:
    t = platforms.dgx_a100(2)
    plain = optimum(t)
    for w in (1, 3, "1/2"):
        assert optimum(t, weights=[w] * t.num_compute).algbw == plain.algbw


def test_weights_errors() -> None:
    t = platforms.two_box_example()
    with pytest.raises(TopologyError, match="8 compute"):
        optimum(t, weights=[1, 2])
    with pytest.raises(TopologyError, match="'c1.2'"):
        optimum(t, weights=[1, 0, 1, 1, 1, 1, 1, 1])


# --------------------------------------------------------------------------- #
# fixed k
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("seed, k", [(s, 1 + s % 3) for s in SEEDS[:12]])
def test_fixed_k_matches_brute_force(seed: int, k: int, cases: dict) -> None:
    t, ref = cases[seed]
    u_star, below = brute_u_star(t, k)
    opt = optimum(t, "allgather", fixed_k=k)
    assert opt.fixed_k == opt.k == k
    assert opt.U == u_star
    assert opt.algbw == t.num_compute * k / u_star
    assert opt.algbw <= t.num_compute / ref["inv_x"]
    # Thm 15: U*/k ≤ 1/x* + 1/(k · min_e c_e)
    assert u_star / k <= ref["inv_x"] + 1 / (k * min(t.capacity.values()))
    assert opt.extra["thm15_holds"] is True
    # the witness cut is satisfied at U* and violated just below it
    cut = opt.cut
    inside = sum(1 for v in cut if t.is_compute(v))
    caps = [c for (a, b), c in t.capacity.items() if a in cut and b not in cut]
    assert sum(math.floor(u_star * c) for c in caps) >= k * inside
    assert sum(math.floor(below * c) for c in caps) < k * inside
    # one flow per compute node; a flow found at an earlier, smaller U is feasible at
    # U* too (⌊U c⌋ only grows with U), so each is checked at its own U ≤ U*
    assert sorted(map(str, (w.sink for w in opt.flows))) == sorted(map(str, t.compute_nodes))
    for w in opt.flows:
        assert w.params["U"] <= u_star
        floored = {e: math.floor(w.params["U"] * c) for e, c in t.capacity.items()}
        check_witness(t, w, floored, k, t.num_compute * k)


def test_fixed_k_large_enough_reaches_optimum() -> None:
    t = platforms.dgx_a100(2)
    best = optimum(t)
    assert best.k is not None
    at_k = optimum(t, fixed_k=best.k)
    assert at_k.algbw == best.algbw
    assert at_k.U == best.U


@pytest.mark.parametrize("k", [0, -1, True, 1.5])
def test_fixed_k_bad(k: object) -> None:
    with pytest.raises(TopologyError, match="fixed k"):
        optimum(platforms.two_box_example(), fixed_k=k)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- #
# broadcast / reduce (Zhao & Krishnamurthy 2023, App. A, bound (5)) and allreduce (App. B)
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("seed", SEEDS[::2])
def test_broadcast_reduce_bound5(seed: int, cases: dict) -> None:
    t, ref = cases[seed]
    roots = t.compute_nodes[:3]
    for root in roots:
        # (5): min over S with r ∈ S ⊉ V_c of B⁺(S); equal to min over mixed S (Eulerian)
        expect = min(out for s, inside, out in all_cuts(t)
                     if root in s and inside < t.num_compute)
        assert expect == ref["min_mixed"]
        for coll in ("broadcast", "reduce"):
            opt = optimum(t, coll, root=root)
            assert opt.algbw == expect
            assert opt.root == root
            assert out_cap(t, opt.cut) == expect
            if coll == "broadcast":
                assert root in opt.cut
            else:
                assert root not in opt.cut
            assert any(not t.is_compute(v) or v not in opt.cut for v in t.compute_nodes)
            values = []
            for w in opt.flows:
                assert w.source is not None and w.sink is not None
                bal = {v: 0 for v in t.nodes}
                for (a, b), amt in zip(w.arcs, w.amounts):
                    assert 0 <= amt and Fraction(amt, w.multiplier) <= t.capacity[(a, b)]
                    bal[a] -= amt
                    bal[b] += amt
                assert all(x == 0 for v, x in bal.items() if v not in (w.source, w.sink))
                assert bal[w.sink] == w.value
                values.append(Fraction(w.value, w.multiplier))
            assert min(values) == expect
            ends = {w.sink if coll == "broadcast" else w.source for w in opt.flows}
            assert ends == set(t.compute_nodes) - {root}


def test_broadcast_needs_compute_root() -> None:
    t = platforms.two_box_example()
    with pytest.raises(TopologyError, match="needs a root"):
        optimum(t, "broadcast")
    with pytest.raises(TopologyError, match="'w0' is not a compute node"):
        optimum(t, "reduce", root="w0")
    with pytest.raises(TopologyError, match="no root"):
        optimum(t, "allgather", root="c1.1")
    with pytest.raises(TopologyError, match="unknown collective 'gather'"):
        optimum(t, "gather")


@pytest.mark.parametrize("seed", SEEDS[::2])
def test_allreduce_bounds_match_enumeration(seed: int, cases: dict) -> None:
    t, ref = cases[seed]
    n_c = t.num_compute
    opt = optimum(t, "allreduce")
    ex = opt.extra
    time6 = 1 / ref["min_mixed"]
    single = ref["single"]
    best_single = max(single.values())
    time7 = Fraction(2 * (n_c - 1), n_c) / best_single
    rsag = 2 * ref["inv_x"] / n_c
    assert ex["bound6_time_per_unit"] == time6
    assert ex["bound7_time_per_unit"] == time7
    assert ex["rsag_time_per_unit"] == rsag
    assert opt.algbw == 1 / rsag
    assert ex["lower_bound_time_per_unit"] == max(time6, time7)
    # RS+AG is a schedule, so it can never beat a lower bound
    assert rsag >= max(time6, time7)
    assert ex["rsag_proven_optimal"] is (rsag == max(time6, time7))
    # witnesses
    cut6 = ex["bound6_cut"]
    assert out_cap(t, cut6) == ref["min_mixed"]
    assert 0 < sum(1 for v in cut6 if t.is_compute(v)) < n_c
    assert single[ex["bound7_node"]] == best_single
    for v, s in ex["bound7_cuts"].items():
        assert {x for x in s if t.is_compute(x)} == {v}
        assert out_cap(t, s) == single[v]
    # Thm 19 is sound: a condition it reports implies optimality
    if ex["thm19_condition"] is not None:
        assert ex["rsag_proven_optimal"]


def _thm19_b(t: Topology, cut: frozenset[object], single: dict) -> bool:
    """Zhao & Krishnamurthy 2023, Thm 19 (b), read consistently with its own remark that |S* ∩ V_c| ≥ N/2.

    The extracted text prints "S* ∩ V_c = {v'}"; but the maximiser S* has at least
    N/2 compute nodes (the remark under the theorem), so the condition only makes
    sense for the complement: V_c − S* = {v'} and min_{S ∩ V_c = {v'}} B⁺(S) equals
    max_v min_{S ∩ V_c = {v}} B⁺(S). Then RS+AG time 2(N−1)/(N·B⁺(S*)) equals
    bound (7), which is what makes RS+AG optimal.
    """
    outside = [v for v in t.compute_nodes if v not in cut]
    return len(outside) == 1 and single[outside[0]] == max(single.values())


def test_thm19_b_on_dgx1() -> None:
    """DGX-1: the bottleneck is a single-GPU cut and bound (7) is met (b holds).

    Exposes a bug: optimum() tests "|S* ∩ V_c| = 1" literally (the garbled
    text), so it reports no Thm 19 condition here although RS+AG is proven
    optimal by (b); the fix is to test |V_c − S*| = 1 for the complement node.
    """
    t = platforms.dgx1()
    opt = optimum(t, "allreduce")
    ref = brute(t)
    assert opt.extra["rsag_proven_optimal"] is True
    assert _thm19_b(t, opt.cut, ref["single"])
    assert opt.extra["thm19_condition"] == "b"


def test_two_box_allreduce_thm19_a() -> None:
    """Zhao & Krishnamurthy 2023, App. B: "The switch topology in figure 1a satisfies condition (a)"."""
    opt = optimum(platforms.two_box_example(), "allreduce")
    assert opt.extra["thm19_condition"] == "a"
    assert opt.extra["rsag_proven_optimal"] is True
    assert opt.extra["rsag_time_per_unit"] == Fraction(1, 4)


# --------------------------------------------------------------------------- #
# verified platform values (digest "Worked values")
# --------------------------------------------------------------------------- #
def test_dgx_a100_digest_values() -> None:
    t = platforms.dgx_a100(2)
    opt = optimum(t)
    assert (opt.inv_x, opt.k, opt.U, opt.algbw) == (Fraction(3, 65), 13, Fraction(3, 5),
                                                    Fraction(1040, 3))
    assert optimum(t, fixed_k=1).algbw == Fraction(2400, 7)


def test_two_box_example_values() -> None:
    for b in (1, 3, "5/2"):
        t = platforms.two_box_example(b)
        bw = Fraction(str(b))
        opt = optimum(t)
        assert opt.inv_x == 1 / bw and opt.k == 1 and opt.U == 1 / bw
        assert optimum(t, "broadcast", root="c2.3").algbw == 4 * bw


# --------------------------------------------------------------------------- #
# CLI
# --------------------------------------------------------------------------- #
def test_cli_json_fields(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["optimum", "dgx_a100:2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["collective"] == "allgather"
    assert out["algbw"] == "1040/3"
    assert out["time_per_unit"] == "3/1040"
    assert out["inv_x"] == "3/65"
    assert out["k"] == 13 and out["U"] == "3/5"
    assert out["num_compute"] == 16
    t = platforms.dgx_a100(2)
    cut = frozenset(out["cut"])
    assert Fraction(sum(1 for v in cut if t.is_compute(v))) / out_cap(t, cut) == Fraction(3, 65)
    assert isinstance(out["maxflows"], int) and out["maxflows"] >= 16
    assert out["topology"] == t.content_hash()


def test_cli_file_fixed_k_and_broadcast(tmp_path: object,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "two_box.json"  # type: ignore[operator]
    platforms.two_box_example().save(path)
    assert cli_main(["optimum", str(path), "--collective", "broadcast", "--root", "c1.1",
                     "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["algbw"] == "4" and out["root"] == "c1.1"
    assert cli_main(["optimum", "mi250:2", "--fixed-k", "3", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["algbw"] == "2400/7" and out["fixed_k"] == 3
    # integer node ids given as text on the command line
    assert cli_main(["optimum", "ring:4", "-c", "reduce", "--root", "2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["algbw"] == "2"


def test_cli_human_output(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["optimum", "two_box_example"]) == 0
    text = capsys.readouterr().out
    assert "algbw" in text and "8" in text


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["optimum", "/nonexistent/t.json"], "no such file"),
        (["optimum", "no_such_platform:3"], "no_such_platform"),
        (["optimum", "two_box_example", "-c", "broadcast", "--root", "zz"], "'zz'"),
        (["optimum", "two_box_example", "--fixed-k", "0"], "fixed k"),
        (["optimum", "torus:4x"], "not a shape"),
        (["optimum", "ring:x"], "not a shape"),
    ],
)
def test_cli_bad_input_exit_2(argv: list[str], needle: str,
                              capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(argv) == 2
    cap = capsys.readouterr()
    assert needle in cap.err
    assert "Traceback" not in cap.err
    assert cap.out == ""


def test_cli_bad_file_names_line(tmp_path: object, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.json"  # type: ignore[operator]
    path.write_text('{"compute_nodes": ["a", "b"],\n "links": [\n'
                    '  {"src": "a", "dst": "b", "capacity": "2"},\n'
                    '  {"src": "b", "dst": "a", "capacity": "3"}\n ]}\n')
    assert cli_main(["optimum", str(path), "--json"]) == 2
    err = capsys.readouterr().err
    assert "not Eulerian" in err and "'a' receives 3 but sends 2" in err


def test_cli_bad_option_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as ex:
        cli_main(["optimum", "two_box_example", "--collective", "gather"])
    assert ex.value.code == 2


def test_optimum_json_has_no_floats() -> None:
    opt: Optimum = optimum(platforms.mi250(2, 8), "allreduce")
    blob = json.dumps(opt.to_json())

    def walk(x: object) -> None:
        assert not isinstance(x, float)
        if isinstance(x, dict):
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    walk(json.loads(blob))


def test_root_given_as_text_names_the_node() -> None:
    # the CLI passes --root as text; optimum() and schedule() both resolve it
    t = platforms.ring(8)
    opt = optimum(t, "broadcast", root="3")
    assert opt.root == 3 and type(opt.root) is int and opt.algbw == 2
    assert t.lookup("7") == 7 and t.lookup(7) == 7 and t.lookup("nope") == "nope"
    with pytest.raises(TopologyError, match="not a compute node"):
        optimum(t, "broadcast", root="8")


def test_cli_certificate_implies_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["optimum", "ring:4", "--certificate"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["kind"] == "optimum" and len(data["flows"]) == 4


def test_summaries_say_from_root_for_broadcast_and_to_root_for_reduce() -> None:
    t = platforms.two_box_example()
    assert "broadcast from root 'c1.1'" in optimum(t, "broadcast", root="c1.1").summary()
    assert "reduce to root 'c1.1'" in optimum(t, "reduce", root="c1.1").summary()
    from collcert import schedule
    assert "reduce to root 'c1.1'" in schedule(t, "reduce", root="c1.1").summary()
