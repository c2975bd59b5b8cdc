"""The α-β model, nccl-tests-style tables and --sizes / --plot (docs/alpha-beta.md).

Expected values come from hand derivations (ring distances, ring step counts N−1 and
2(N−1)), nccl-tests' own formulas (doc/PERFORMANCE.md busbw factors, the per-rank
count rounding of its all_gather.cu, its header format string), and networkx's
shortest paths as an independent check of the latency bound.
"""

from __future__ import annotations

import json
import random
from fractions import Fraction
from pathlib import Path
from typing import Any

import networkx as nx
import pytest

import collcert
from collcert import platforms
from collcert.cli import main
from collcert.commands._sizes import read_tree_schedule
from collcert.perftable import (
    SizeError,
    busbw_factor,
    format_table,
    nccl_size,
    parse_size,
    parse_sizes,
    table_rows,
)
from collcert.reference.execution import (
    AlphaBeta,
    Latency,
    bytes_per_unit,
    latency_lower_bound,
    link_alphas,
    msccl_latency,
    tree_schedule_latency,
)
from collcert.reference.model import Topology, TopologyError

DATA = Path(__file__).resolve().parent / "data" / "formats"


# ----------------------------------------------------------------- units, sizes, factors
def test_units_convert_to_bytes_per_second() -> None:
    assert bytes_per_unit("GB/s") == 10**9
    assert bytes_per_unit("GiB/s") == 2**30
    assert bytes_per_unit("Gbit/s") == bytes_per_unit("Gbps") == Fraction(10**9, 8)
    assert bytes_per_unit("MB/s") == 10**6
    for bad in ("NVLink", "b", ""):
        with pytest.raises(TopologyError, match="not a data rate"):
            bytes_per_unit(bad)


def test_busbw_factors_are_nccl_tests_ones() -> None:
    # doc/PERFORMANCE.md: allreduce 2(n-1)/n, (all)gather / reduce-scatter / alltoall (n-1)/n,
    # broadcast and reduce 1
    assert busbw_factor("allreduce", 8) == Fraction(14, 8)
    assert busbw_factor("allgather", 8) == busbw_factor("reduce-scatter", 8) == Fraction(7, 8)
    assert busbw_factor("alltoall", 4) == Fraction(3, 4)
    assert busbw_factor("broadcast", 8) == busbw_factor("reduce", 3) == 1


def test_sizes_parse_like_nccl_tests() -> None:
    assert parse_size("8") == 8
    assert parse_size("1K") == 1024 and parse_size("4M") == 4 * 2**20
    assert parse_size("8G") == 8 * 2**30 and parse_size("1.5K") == 1536
    assert parse_sizes("1K:8K") == [1024, 2048, 4096, 8192]
    assert parse_sizes("1K:8K:4") == [1024, 4096]
    assert parse_sizes("1K:8K", factor=8) == [1024, 8192]
    assert parse_sizes("1M,64") == [2**20, 64]
    for bad in ("1X", "-1K", "0.5", "1K:8K:1", "8K:1K", "1K:2K:3:4", "1K:2K:x"):
        with pytest.raises(SizeError):
            parse_sizes(bad)
    assert len(parse_sizes("1:1024T")) == 51  # 2**0 .. 2**50
    with pytest.raises(SizeError, match="more than"):
        parse_sizes("1:2048T")
    with pytest.raises(SizeError, match="at most"):
        parse_sizes(",".join(["8"] * 1001))


def test_counts_follow_nccl_tests_rounding() -> None:
    # all_gather.cu: per-rank count = (count / nranks) & ~(16/eltsize - 1); size = that·n·elt
    assert nccl_size("allgather", 8, 1024, 4) == (1024, 32)
    assert nccl_size("allgather", 8, 1000, 4) == (28 * 8 * 4, 28)  # 250/8 = 31 -> 28
    assert nccl_size("reduce-scatter", 16, 1024, 4) == (1024, 16)
    assert nccl_size("allgather", 1024, 1024, 4) == (0, 0)
    assert nccl_size("allreduce", 8, 1000, 4) == (1000, 250)
    assert nccl_size("broadcast", 8, 1001, 2) == (1000, 500)


def test_table_layout_is_nccl_tests_layout() -> None:
    model = AlphaBeta(Fraction(1, 100), Latency(Fraction(5), 5), Fraction(10**9))
    rows = table_rows("allreduce", 8, [1024, 2**30], "float", -1, model)
    text = format_table(rows, ["a comment"])
    lines = text.splitlines()
    # nccl-tests' src/util.cu header format
    assert "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s" % (  # noqa: UP031 - C's format
        "size", "count", "type", "redop", "root", "time", "algbw", "busbw") in lines
    assert "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s" % (  # noqa: UP031
        "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)") in lines
    # time(1 KiB) = 1024 B / 1e9 B·s⁻¹ per unit · 1/100 s per unit · 1e6 + 5 µs
    t = Fraction(1024, 10**9) * Fraction(1, 100) * 10**6 + 5
    assert rows[0].time == t and rows[0].algbw == Fraction(1024, 1000) / t
    assert rows[0].busbw == rows[0].algbw * Fraction(14, 8)
    assert rows[0].count == 256 and rows[0].redop == "sum" and rows[0].root == -1
    assert "%12d  %12d  %8s  %6s  %6d" % (1024, 256, "float", "sum", -1) in text  # noqa: UP031
    assert f"{float(t):7.2f}" in lines[-3]
    assert lines[-1].startswith("# Avg bus bandwidth")


# ----------------------------------------------------------------- latency of trees
def _chain_schedule(nodes: list[Any], direction: str = "out") -> dict[str, Any]:
    edges = [{"src": a, "dst": b, "path": [a, b]} for a, b in zip(nodes, nodes[1:])]
    if direction == "in":
        edges = [{"src": b, "dst": a, "path": [b, a]} for a, b in zip(nodes, nodes[1:])]
    return {"format": "collcert-schedule/1", "collective": "broadcast", "root": nodes[0],
            "phases": [{"collective": "broadcast", "k": 1, "trees": [
                {"root": nodes[0], "multiplicity": 1, "direction": direction,
                 "edges": edges}]}]}


def _latency(t: Topology, doc: Any, alpha: Any) -> Latency:
    return tree_schedule_latency(t, read_tree_schedule(t, doc).phases, alpha)


def test_tree_latency_is_the_sum_of_alpha_along_the_deepest_route() -> None:
    t = platforms.ring(4)
    lat = _latency(t, _chain_schedule([0, 1, 2, 3]), link_alphas(t, 2))
    assert (lat.latency, lat.hops, lat.route) == (6, 3, [0, 1, 2, 3])
    # per-link alpha from the topology; a path through a switch pays both links
    topo = Topology.from_json({
        "compute_nodes": ["a", "b"], "switch_nodes": ["s"],
        "links": [{"src": "a", "dst": "s", "capacity": 1, "alpha": "2"},
                  {"src": "s", "dst": "b", "capacity": 1, "alpha": "1/2"},
                  {"src": "b", "dst": "s", "capacity": 1, "alpha": 7},
                  {"src": "s", "dst": "a", "capacity": 1, "alpha": 9}]})
    out = {"format": "collcert-schedule/1", "collective": "broadcast", "root": "a",
           "phases": [{"collective": "broadcast", "k": 1, "trees": [
               {"root": "a", "multiplicity": 1, "edges": [
                   {"src": "a", "dst": "b", "path": ["a", "s", "b"]}]}]}]}
    assert _latency(topo, out, link_alphas(topo)).latency == Fraction(5, 2)
    # an in-tree toward the root: data goes b -> s -> a, links (b, s) and (s, a)
    red = {"format": "collcert-schedule/1", "collective": "reduce", "root": "a",
           "phases": [{"collective": "reduce", "k": 1, "trees": [
               {"root": "a", "multiplicity": 1, "direction": "in", "edges": [
                   {"src": "b", "dst": "a", "path": ["b", "s", "a"]}]}]}]}
    assert _latency(topo, red, link_alphas(topo)).latency == 16


def test_one_pass_over_a_tree_of_paths_agrees_with_the_relaxation() -> None:
    """tree_arrivals' one pass (a tree of paths, no multicast) gives the arrival, hops,
    deepest node and route that tree_routes' relaxation over all paths settles on;
    where the paths are no such tree (two paths into one GPU) it declines."""
    from collcert.reference.execution.tree_routes import (
        arrival_route,
        route_of,
        tree_arrivals,
        tree_routes,
    )
    rng = random.Random(5)
    t = platforms.fat_tree(4)
    gpus = list(t.compute_nodes)
    rank = {v: -i for i, v in enumerate(gpus)}
    adj: dict[Any, list[Any]] = {}
    for a, b in t.capacity:
        adj.setdefault(a, []).append(b)
    compute = frozenset(gpus)

    def walk(a: Any, b: Any) -> list[Any]:  # a random simple path a -> b through switches
        while True:
            p = [a]
            while p[-1] != b and len(p) < 8:
                nxt = [v for v in adj[p[-1]] if v not in p and (v == b or v not in compute)]
                if not nxt:
                    break
                p.append(rng.choice(nxt))
            if p[-1] == b:
                return p

    declined = 0
    for trial in range(60):
        order = gpus[:]
        rng.shuffle(order)
        root, away = order[0], []  # paths away from the root
        for i, v in enumerate(order[1:], 1):
            away.append(walk(order[rng.randrange(i)], v))
        rng.shuffle(away)
        if trial % 5 == 4:  # a second path into one GPU: not a tree of paths
            away.append(walk(root, away[0][-1]))
        out = trial % 2 == 0
        alpha = {e: rng.randrange(1, 9) for e in t.capacity}
        # as the schedule writes them: an in-tree's paths toward the root (fat_tree's links
        # go both ways)
        written = away if out else [p[::-1] for p in away]
        fast = tree_arrivals(root, written, alpha, out, compute, rank, {})
        if trial % 5 == 4:
            assert fast is None
            declined += 1
            continue
        lat, hops, via = tree_routes(root, away, alpha, out, t)  # reverses an in-tree's hops
        assert fast is not None
        for v in gpus:
            assert (fast[0][v], fast[1][v]) == (lat[v], hops[v])
            assert arrival_route(fast[2], root, v, out) == route_of(via, root, v)
        assert fast[3] == max((lat[v], hops[v], rank[v]) for v in gpus)
    assert declined == 12


def test_phases_add_up_and_cli_matches_the_schedules_own_heights(tmp_path: Path,
                                                                capsys: Any) -> None:
    out = tmp_path / "ar.json"
    assert main(["schedule", "ring:6", "-c", "allreduce", "-o", str(out)]) == 0
    doc = json.loads(out.read_text())
    capsys.readouterr()
    t = platforms.ring(6)
    lat = _latency(t, doc, link_alphas(t, 3))
    heights = [max(tr["height"] for tr in ph["trees"]) for ph in doc["phases"]]
    assert lat.phases == [3 * h for h in heights]  # the writer's own tree heights
    assert lat.latency == 3 * sum(heights) and lat.hops == sum(heights)


def test_msccl_latency_counts_sequential_ring_steps() -> None:
    from collcert.certify.execution import msccl

    t = Topology.from_json(str(DATA / "complete4_topology.json"))
    alpha = link_alphas(t, Fraction(3, 2))
    # a ring allgather on N ranks takes N-1 dependent steps, a ring allreduce 2(N-1)
    for name, steps in (("msccl-tools_allgather_ring_4gpu_inplace.xml", 3),
                        ("msccl-tools_allreduce_ring_4gpu_inplace.xml", 6)):
        prog = msccl.read((DATA / name).read_text())
        lat = msccl_latency(t, prog, list(t.compute_nodes), alpha)
        assert lat.hops == steps and lat.latency == Fraction(3, 2) * steps


# ----------------------------------------------------------------- the latency bound
def test_latency_bound_by_hand() -> None:
    ring = platforms.ring(8)
    assert latency_lower_bound(ring, "allgather", link_alphas(ring, 1)).latency == 4
    one_way = platforms.ring(8, bidirectional=False)
    assert latency_lower_bound(one_way, "allgather", link_alphas(one_way, 1)).latency == 7
    lb = latency_lower_bound(ring, "broadcast", link_alphas(ring, 1), root=3)
    assert lb.latency == 4 and lb.route[0] == 3
    # 2-box DGX A100: b0.gpu0 (IB switch ib0) to b1.gpu1 (ib1) is 6 links either way
    dgx = platforms.dgx_a100(2)
    assert latency_lower_bound(dgx, "allgather", link_alphas(dgx, 1)).latency == 6
    assert latency_lower_bound(dgx, "allgather", link_alphas(dgx, 0)).latency == 0


def test_latency_bound_matches_networkx_on_random_alphas() -> None:
    rng = random.Random(5)
    t0 = platforms.dgx_a100(2)
    alpha = {e: Fraction(rng.randint(0, 40), rng.randint(1, 6)) for e in t0.capacity}
    t = Topology(t0.compute_nodes, [(u, v, c) for (u, v), c in t0.capacity.items()],
                 t0.switch_nodes, alpha=alpha)
    g = nx.DiGraph()
    g.add_weighted_edges_from((u, v, a) for (u, v), a in alpha.items())
    want = max(d for s in t.compute_nodes
               for v, d in nx.single_source_dijkstra_path_length(g, s).items()
               if t.is_compute(v) and v != s)
    got = latency_lower_bound(t, "allgather", link_alphas(t))
    assert got.latency == want
    assert sum(alpha[(a, b)] for a, b in zip(got.route, got.route[1:])) == want
    want_red = max(nx.single_source_dijkstra_path_length(g.reverse(), "b1.gpu5")[v]
                   for v in t.compute_nodes)
    assert latency_lower_bound(t, "reduce", link_alphas(t), "b1.gpu5").latency == want_red


def test_topology_alpha_field_round_trips_and_is_checked() -> None:
    t = Topology.from_json({"compute_nodes": ["a", "b"], "links": [
        {"src": "a", "dst": "b", "capacity": 1, "bidirectional": True, "alpha": "0.25"}]})
    assert t.alpha == {("a", "b"): Fraction(1, 4), ("b", "a"): Fraction(1, 4)}
    back = Topology.from_json(t.to_json())
    assert back.alpha == t.alpha and back.content_hash() == t.content_hash()
    assert t.transpose().alpha == t.alpha and t.scaled(2).alpha == t.alpha
    plain = Topology.from_json({"compute_nodes": ["a", "b"], "links": [
        {"src": "a", "dst": "b", "capacity": 1, "bidirectional": True}]})
    assert plain.content_hash() == t.content_hash()  # latency changes no optimum
    assert link_alphas(plain, 3) == {("a", "b"): 3, ("b", "a"): 3}
    for bad in ("-1", "nan", "x"):
        with pytest.raises(TopologyError, match="alpha"):
            Topology.from_json({"compute_nodes": ["a", "b"], "links": [
                {"src": "a", "dst": "b", "capacity": 1, "bidirectional": True,
                 "alpha": bad}]})


# ----------------------------------------------------------------- the commands
def test_optimum_sizes_json_rows_are_exact(capsys: Any) -> None:
    assert main(["optimum", "ring:8", "--sizes", "1K:4K", "--alpha", "1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)["sizes"]
    # ring(8) allgather: algbw 16/7 GB/s (8 nodes, 2 GB/s leave any one node) and the
    # farthest pair is 4 links away
    assert [r["size"] for r in out["rows"]] == [1024, 2048, 4096]
    for r in out["rows"]:
        t = Fraction(r["size"], 10**9) * Fraction(7, 16) * 10**6 + 4
        assert Fraction(r["time"]) == t
        assert Fraction(r["alg_bw"]) == Fraction(r["size"], 1000) / t
        assert Fraction(r["bus_bw"]) == Fraction(r["alg_bw"]) * Fraction(7, 8)
        assert r["type"] == "float" and r["redop"] == "none" and r["root"] == -1
    assert out["latency"]["latency_us"] == "4"


def test_audit_sizes_table_and_plot(tmp_path: Path, capsys: Any) -> None:
    sched = tmp_path / "s.json"
    assert main(["schedule", "ring:6", "-o", str(sched)]) == 0
    heights = max(tr["height"] for tr in json.loads(sched.read_text())["phases"][0]["trees"])
    capsys.readouterr()
    png = tmp_path / "p.png"
    assert main(["audit", "ring:6", str(sched), "--sizes", "1K:1M:32", "--alpha", "2",
                 "--plot", str(png)]) == 0
    text = capsys.readouterr().out
    assert "VALID" in text and f"L = {2 * heights} µs along {heights} links" in text
    assert "%bound" in text and "Plot written" in text
    rows = [ln.split() for ln in text.splitlines() if ln[:1] == " " and ln.split()[0].isdigit()]
    # 6 ranks, floats: per-rank counts 256/6 -> 40, 8192/6 -> 1364, 262144/6 -> 43688
    # (multiples of 4 elements), sizes = count·6·4 bytes
    assert [r[0] for r in rows] == ["960", "32736", "1048512"]
    assert all(len(r) == 9 for r in rows)  # nccl-tests' 8 columns and %bound
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 20_000
    assert main(["audit", "ring:6", str(sched), "--sizes", "1K", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)["sizes"]
    assert Fraction(got["rows"][0]["bound_alg_bw"]) >= Fraction(got["rows"][0]["alg_bw"])


@pytest.mark.parametrize("argv,needle", [
    (["optimum", "ring:4", "--sizes", "1X"], "not a number of bytes"),
    (["optimum", "ring:4", "--sizes", "1K:8K", "--alpha", "-1"], "--alpha"),
    (["optimum", "ring:4", "--sizes", "1K:8K", "--stepfactor", "1"], "--stepfactor"),
    (["optimum", "dgx1", "--sizes", "1K"], "not a data rate"),
    (["optimum", "ring:4", "--plot", "x.gif"], ".png"),
    (["optimum", "ring:4", "--alpha", "nan"], "not a finite number"),  # without --sizes too
    (["audit", "dgx1", "{sched}", "--sizes", "1K"], "not a data rate"),
    (["audit", "ring:4", "{sched}", "--sizes", "1X"], "not a number of bytes"),
    (["optimum", "dgx1", "-c", "allreduce", "--plot", "x.png"], "not a data rate"),
])
def test_bad_size_arguments_exit_2(argv: list[str], needle: str, capsys: Any,
                                   tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.chdir(tmp_path)
    if "{sched}" in argv:
        topo = platforms.dgx1() if argv[1] == "dgx1" else platforms.ring(4)
        (tmp_path / "s.json").write_text(json.dumps(collcert.schedule(topo, "allgather")
                                                    .to_json()))
        argv = [a.replace("{sched}", "s.json") for a in argv]
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse refuses bad --alpha / --stepfactor values itself
        code = exc.code
    assert code == 2
    out, err = capsys.readouterr()
    assert needle in err
    assert out == "", "bad input must be refused before the result is printed"


def test_alpha_alone_is_never_ignored(capsys: Any) -> None:
    """--alpha (or --stepfactor) without --sizes shows the default table, not nothing."""
    assert main(["optimum", "ring:4", "--alpha", "2"]) == 0
    out = capsys.readouterr().out
    assert "busbw" in out and "8589934592" in out  # the default sizes 1K:8G
