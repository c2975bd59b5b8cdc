"""Baselines (NCCL ring and tree, classic algorithms) are valid schedules with the right speed;
``collcert compare`` never ranks one above the certified optimum (docs/baselines.md)."""

from __future__ import annotations

import itertools
import json
from fractions import Fraction
from pathlib import Path

import pytest

from collcert import platforms
from collcert.certify.forestcoll import check_schedule
from collcert.certify.model import Topo
from collcert.fuzz.generators import generate
from collcert.reference import baselines as bl
from collcert.reference.model import Topology

BUILT_IN = [
    platforms.dgx_a100(1), platforms.dgx_a100(2), platforms.dgx_h100(2), platforms.mi250(1),
    platforms.mi250(2, 8), platforms.dgx1(25), platforms.two_box_example(25), platforms.ring(6),
    platforms.complete(5), platforms.hypercube(3), platforms.torus((3, 3)),
    platforms.fat_tree(4),
]
ROOTED = ("broadcast", "reduce")


def _algbw(t: Topology, doc: dict) -> Fraction:
    v = check_schedule(Topo(t.to_json()), doc)
    assert v.ok, v.all_reasons()[:3]
    return v.facts["algbw"]


@pytest.mark.parametrize("t", BUILT_IN, ids=lambda t: t.name)
def test_ring_and_tree_are_valid_on_every_built_in_platform(t: Topology) -> None:
    rings = bl.ring_channels(t)
    n = t.num_compute
    for ch in rings.channels:  # every channel is a Hamiltonian cycle of routes through switches
        assert sorted(map(str, ch.order)) == sorted(map(str, t.compute_nodes))
        for i, r in enumerate(ch.routes):
            assert (r[0], r[-1]) == (ch.order[i], ch.order[(i + 1) % n])
            assert all(not t.is_compute(v) for v in r[1:-1])
    for coll in ("allgather", "reduce-scatter", "allreduce", *ROOTED):
        ring = bl.baseline(t, "nccl-ring", coll, rings=rings)
        assert _algbw(t, ring.document) > 0
    for coll in ("allreduce", *ROOTED):
        tree = bl.baseline(t, "nccl-tree", coll, rings=rings)
        assert _algbw(t, tree.document) > 0


def test_ring_on_an_nvswitch_box_runs_at_n_over_n_minus_1_times_b() -> None:
    # 8 GPUs on one NVSwitch, B = 300 GB/s each way per GPU. A ring hop uses the sender's
    # uplink and the receiver's downlink once; in a ring allgather each hop carries the
    # shards of N-1 roots, (N-1)/N of the data: time (N-1)/(N·B), algbw N/(N-1)·B.
    t = platforms.dgx_a100(1)
    b, n = Fraction(300), 8
    for channels in (1, 2, 4):
        ring = bl.baseline(t, "nccl-ring", "allgather", channels=channels)
        assert _algbw(t, ring.document) == Fraction(n, n - 1) * b
    # allreduce = reduce-scatter + allgather: twice the time
    ar = bl.baseline(t, "nccl-ring", "allreduce")
    assert _algbw(t, ar.document) == Fraction(n, n - 1) * b / 2
    # broadcast: a chain, every link carries the whole data once: algbw B
    assert _algbw(t, bl.baseline(t, "nccl-ring", "broadcast").document) == b


def test_ring_across_boxes_is_bound_by_the_nics() -> None:
    # 2 DGX A100: 8 channels, each leaves each box once through one 25 GB/s NIC (every NIC
    # sends for one channel): per channel 25 GB/s on the NIC, so algbw = 8·25·16/15.
    t = platforms.dgx_a100(2)
    rings = bl.ring_channels(t)
    assert len(rings.channels) == 8
    assert [len(b) for b in rings.boxes] == [8, 8]
    ring = bl.baseline(t, "nccl-ring", "allgather", rings=rings)
    assert _algbw(t, ring.document) == 8 * 25 * Fraction(16, 15)


def test_ncclgetbtree_shape() -> None:
    # the example drawn in NCCL's src/graph/trees.cc: 14 ranks, root 0 -> 8, 8 -> 4 and 12
    parents = {r: bl.btree(14, r)[0] for r in range(14)}
    assert parents[0] == -1 and parents[8] == 0
    assert parents[4] == 8 and parents[12] == 8 and parents[13] == 12
    assert parents[1] == 2 and parents[3] == 2 and parents[6] == 4
    for n in range(1, 33):
        for which in (0, 1):
            ups = [bl.dtree(n, r, which)[0] for r in range(n)]
            assert ups.count(-1) == 1  # one root; every other rank reaches it
            for r in range(n):
                seen, x = set(), r
                while x != -1:
                    assert x not in seen
                    seen.add(x)
                    x = ups[x]
    # mirror (even n): tree 1's root is rank n-1; shift (odd n): rank 1
    assert [bl.dtree(8, r, 1)[0] for r in range(8)].index(-1) == 7
    assert [bl.dtree(7, r, 1)[0] for r in range(7)].index(-1) == 1


def _hamiltonian(t: Topology) -> bool:
    """Brute force: a cycle of compute nodes whose hops go through switches only."""
    comp = list(t.compute_nodes)
    reach = {u: set() for u in comp}
    for u in comp:
        todo, seen = [u], {u}
        while todo:
            x = todo.pop()
            for (a, b) in t.capacity:
                if a == x and b not in seen:
                    seen.add(b)
                    if t.is_compute(b):
                        reach[u].add(b)
                    else:
                        todo.append(b)
    first = comp[0]
    return any(all(b in reach[a] for a, b in zip((first, *p), (*p, first)))
               for p in itertools.permutations(comp[1:]))


@pytest.mark.parametrize("seed", range(24))
def test_ring_and_tree_on_random_topologies(seed: int) -> None:
    t = generate(seed, max_nodes=8)
    try:
        rings = bl.ring_channels(t)
    except bl.BaselineError:
        assert t.num_compute <= 7 and not _hamiltonian(t), "a ring exists but was not found"
        return
    for coll in ("allgather", "reduce-scatter", "allreduce", "broadcast"):
        assert _algbw(t, bl.baseline(t, "nccl-ring", coll, rings=rings).document) > 0
    try:
        tree = bl.baseline(t, "nccl-tree", "allreduce", rings=rings)
    except bl.BaselineError as exc:
        assert "both ways" in str(exc)  # a one-way link: NCCL's trees need both directions
        return
    assert _algbw(t, tree.document) > 0


def test_classic_algorithms_and_where_they_apply() -> None:
    t = platforms.dgx_a100(1)
    for name, coll in [("direct", "allgather"), ("recursive", "allreduce"),
                       ("bruck", "allgather"), ("direct", "reduce")]:
        # one NVSwitch: every algorithm sends each byte over one uplink and one downlink
        # per receiver, so all reach the optimum N/(N-1)·B (allreduce: half; reduce: B/(N-1))
        got = _algbw(t, bl.baseline(t, name, coll).document)
        want = {"allgather": Fraction(2400, 7), "allreduce": Fraction(1200, 7),
                "reduce": Fraction(300, 7)}[coll]
        assert got == want, (name, coll)
    with pytest.raises(bl.BaselineError, match="power-of-two"):
        bl.baseline(platforms.ring(6), "recursive", "allgather")
    bruck6 = bl.baseline(platforms.complete(6), "bruck", "allgather")
    assert _algbw(platforms.complete(6), bruck6.document) > 0
    with pytest.raises(bl.BaselineError, match="two boxes"):
        bl.baseline(platforms.dgx_a100(1), "hierarchical", "allgather")
    h = bl.baseline(platforms.dgx_a100(2), "hierarchical", "allgather")
    assert _algbw(platforms.dgx_a100(2), h.document) == Fraction(2400, 7)


def test_audit_gives_the_baselines_exact_algbw() -> None:
    from collcert.auditing import audit

    t = platforms.dgx_a100(2)
    ring = bl.baseline(t, "nccl-ring", "allgather")
    report = audit(t, json.dumps(ring.document))
    assert report.valid and report.algbw == 8 * 25 * Fraction(16, 15)
    assert report.ratio is not None and report.ratio < 1


def test_baselines_export_to_msccl_and_audit_valid_at_their_algbw() -> None:
    from collcert.auditing import audit

    for t, name, coll in [(platforms.dgx_a100(1), "nccl-ring", "allgather"),
                          (platforms.dgx_a100(1), "nccl-ring", "allreduce"),
                          (platforms.dgx_a100(1), "nccl-tree", "allreduce"),
                          (platforms.ring(4), "nccl-ring", "reduce-scatter"),
                          (platforms.hypercube(2), "recursive", "allreduce"),
                          (platforms.complete(4), "direct", "allgather")]:
        b = bl.baseline(t, name, coll)
        own = _algbw(t, b.document)
        report = audit(t, bl.msccl_program(b), "msccl-xml")
        assert report.valid, (name, coll, report.reasons[:3])
        # the program names no paths: its traffic is routed at least as well as the trees
        assert report.algbw is not None and report.algbw >= own, (name, coll)
        if t.name.startswith("1-box"):  # one route between every pair: the same figure
            assert report.algbw == own, (name, coll)
    with pytest.raises(bl.BaselineError, match="MSCCL"):
        bl.msccl_program(bl.baseline(platforms.ring(4), "nccl-ring", "broadcast"))


def test_compare_ranks_and_refuses_a_baseline_above_the_optimum(monkeypatch, capsys) -> None:
    from collcert.reference.baselines import checks

    t = platforms.dgx_a100(1)
    cmp = bl.compare(t, "allgather", sizes=[1024, 2**30], alpha=2)
    assert cmp.rows[0].name == "optimum" and cmp.rows[0].ratio == 1
    assert all(r.ratio is not None and r.ratio <= 1 for r in cmp.rows)
    assert len(cmp.best) == 2 and all(b in {r.name for r in cmp.rows} for b in cmp.best)
    # a checker gone wrong: the ring's algbw comes back doubled; compare must refuse
    real = checks.checked_row

    def doubled(*args, **kwargs):
        row = real(*args, **kwargs)
        if row.name == "nccl-ring":
            row.algbw *= 2
        return row

    monkeypatch.setattr("collcert.reference.baselines.comparison.checked_row", doubled)
    with pytest.raises(bl.ComparisonRefused, match="nccl-ring"):
        bl.compare(t, "allgather")
    from collcert.cli import main  # the command says so and exits 1

    capsys.readouterr()
    assert main(["compare", "dgx_a100:1", "--baselines", "nccl-ring"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("REFUSED: refusing to rank nccl-ring") and "4800/7" in out


def test_compare_cli(tmp_path, capsys) -> None:
    from collcert.cli import main

    code = main(["compare", "ring:4", "-c", "allreduce", "--sizes", "1K:1G:32", "--alpha", "1",
                 "--json", "--save-schedules", str(tmp_path / "s")])
    assert code == 0
    doc = json.loads(capsys.readouterr().out)
    names = [r["name"] for r in doc["rows"]]
    assert names[:2] == ["optimum", "lp5"] and "nccl-ring" in names and "nccl-tree" in names
    assert all(Fraction(r["ratio_to_optimum"]) <= 1 for r in doc["rows"])
    assert len(doc["best_per_size"]) == 5  # 1K, 32K, 1M, 32M, 1G
    assert (tmp_path / "s" / "nccl-tree.json").exists()
    assert main(["compare", "ring:4", "--baselines", "nope"]) == 2
    assert "unknown nope" in capsys.readouterr().err


def test_ring_and_tree_on_an_imported_nccl_dump() -> None:
    import collcert

    boxes = 2
    path = Path(__file__).resolve().parent / "data" / "importers" / "dgx_a100_dump.xml"
    t = collcert.import_topology(path, boxes=boxes).topology
    rings = bl.ring_channels(t)
    assert [len(b) for b in rings.boxes] == [8] * boxes  # NCCL's nodes: the dump's hosts
    for name, coll in [("nccl-ring", "allgather"), ("nccl-ring", "allreduce"),
                       ("nccl-tree", "allreduce"), ("nccl-tree", "broadcast")]:
        assert _algbw(t, bl.baseline(t, name, coll, rings=rings).document) > 0
    # NCCL's rings across the two hosts leave through the NICs: 8 channels, one per NIC
    assert len(rings.channels) == 8
