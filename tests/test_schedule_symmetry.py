"""Schedules by orbits of a box symmetry, compact schedule files and gzip (issue 13).

Every schedule built by orbits is checked here by collcert.certify (which
knows nothing of the symmetry) and compared with the optimum computed and
certified separately; the automorphism itself is re-checked link by link
with code written for the test.
"""

from __future__ import annotations

import copy
import gzip
import json
from pathlib import Path
from typing import Any

import jsonschema
import numpy as np
import pytest

import collcert
from collcert import platforms
from collcert.certify.forestcoll import check_schedule, read_schedule
from collcert.certify.model import InputError, Topo
from collcert.certify.model import read_text as certify_read_text
from collcert.cli import main
from collcert.reference.forestcoll import expand, read_text, render, schedule, write_schedule
from collcert.reference.model import Topology
from collcert.reference.symmetry import Symmetry, find_symmetry, orbits

SCHEMA = json.loads((Path(__file__).resolve().parent.parent / "docs" / "schema" /
                     "schedule.schema.json").read_text(encoding="utf-8"))


def _certified(t: Topology, doc: Any) -> Any:
    v = check_schedule(Topo(t.to_json()), doc)
    assert v.ok, v.all_reasons()[:3]
    return v


def _is_automorphism(t: Topology, sym: Symmetry) -> bool:
    """Independent of symmetry.verify: every link of t maps to a link of t with the
    same capacity, compute nodes to compute nodes (every element of the group)."""
    for perm in sym.perms:
        sigma = {t.nodes[i]: t.nodes[int(j)] for i, j in enumerate(perm)}
        if sorted(map(str, sigma.values())) != sorted(map(str, t.nodes)):
            return False
        if any(t.is_compute(v) != t.is_compute(sigma[v]) for v in t.nodes):
            return False
        if not all(t.capacity.get((sigma[a], sigma[b])) == c
                   for (a, b), c in t.capacity.items()):
            return False
    return True


def test_box_symmetry_of_dgx_is_a_verified_free_shift() -> None:
    t = platforms.dgx_a100(4)
    sym = orbits.box_shift(t)
    assert sym is not None and sym.order == 4 and len(sym.reps) == 8
    assert _is_automorphism(t, sym)
    # orbits of the representatives cover every compute node exactly once
    images = [t.nodes[int(p[r])] for p in sym.perms for r in sym.reps]
    assert sorted(images) == sorted(t.compute_nodes)


def test_symmetry_verification_rejects_a_broken_automorphism() -> None:
    t = platforms.dgx_a100(3)
    sym = orbits.box_shift(t)
    assert sym is not None
    idx = t.index
    arcs = {(idx[a], idx[b]): c for (a, b), c in t.capacity.items()}
    assert sym.verify(t.num_compute, arcs) is None
    one = next(iter(arcs))
    arcs[one] = arcs[one] + 1  # a single link of one box gets faster
    assert "link" in str(sym.verify(t.num_compute, arcs))
    arcs[one] = arcs[one] - 1
    assert "supply" in str(sym.verify(t.num_compute, arcs, supply={0: 2}))
    swapped = sym.perms.copy()
    swapped[1][[0, 1]] = swapped[1][[1, 0]]
    bad = Symmetry(sym.nodes, swapped, sym.reps, sym.element, sym.rep_of)
    assert bad.verify(t.num_compute, arcs) is not None


def test_no_symmetry_is_claimed_where_boxes_differ() -> None:
    t = platforms.dgx_a100(3)
    links = []
    for (a, b), c in t.capacity.items():
        if {a, b} == {"b1.gpu2", "b1.nvswitch"}:
            c = c + 1  # one GPU of box 1 gets a faster NVSwitch port, both ways
        links.append((a, b, c))
    lopsided = Topology(t.compute_nodes, links, t.switch_nodes)
    sym = find_symmetry(lopsided)
    assert sym is None or _is_automorphism(lopsided, sym)
    assert find_symmetry(t) is not None
    ring = find_symmetry(platforms.ring(6))  # its rotation (a translation, no boxes)
    assert ring is not None and len(ring.reps) == 1 and _is_automorphism(platforms.ring(6), ring)


@pytest.mark.parametrize("make,collective", [
    (lambda: platforms.dgx_a100(4), "allgather"),
    (lambda: platforms.dgx_a100(4), "reduce-scatter"),
    (lambda: platforms.mi250(8), "allgather"),
    (lambda: platforms.two_box_example(), "allreduce"),
    (lambda: platforms.dgx_a100(5), "allreduce"),
])
def test_orbit_schedules_are_certified_and_optimal(make: Any, collective: str) -> None:
    t = make()
    s = schedule(t, collective)
    assert all("representative root" in p.stats["symmetry"] for p in s.phases)
    v = _certified(t, s.to_json(compact=True))
    opt = collcert.optimum(t, collective)
    target = opt.extra["rsag_time_per_unit"] if collective == "allreduce" else opt.time_per_unit
    assert v.facts["time_per_unit"] == target
    # per-root multiplicities are k (certify checks it too; here from the trees themselves)
    for p in s.phases:
        per_root: dict[Any, int] = {}
        for tr in p.trees:
            per_root[tr.root] = per_root.get(tr.root, 0) + tr.multiplicity
        assert set(per_root.values()) == {p.k} and len(per_root) == t.num_compute


def test_orbit_splitting_flows_are_checked_for_every_sink() -> None:
    t = platforms.dgx_a100(3)
    s = schedule(t)
    doc = s.to_json(compact=True)
    flows = doc["certificates"]["flows"]
    assert {f["sink"] for f in flows} == set(t.compute_nodes)
    _certified(t, doc)
    broken = copy.deepcopy(doc)
    f = broken["certificates"]["flows"][-1]["flow"]
    f[0][2] += 1
    v = check_schedule(Topo(t.to_json()), broken)
    assert not v.ok


def test_stuck_orbit_packing_falls_back_to_the_general_algorithm(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from collcert.reference.forestcoll import schedule_build
    from collcert.reference.forestcoll.symsplit import SymmetryFailed

    def stuck(*args: Any, **kwargs: Any) -> Any:
        raise SymmetryFailed("no arc with budget left extends a tree")

    # the greedy orbit packing gets stuck (it did on mi250:3 until the product group and
    # the bit-reversed spread of symsplit; dgx_a100:2 before symsplit spread each GPU's
    # capacity over several G* arcs): here it is made to
    monkeypatch.setattr(schedule_build, "pack_orbits", stuck)
    t = platforms.mi250(3)
    s = schedule(t)
    assert s.phases[0].stats["symmetry"].startswith("general algorithms")
    _certified(t, s.to_json())
    plain = schedule(t, symmetry=False)
    assert plain.algbw == s.algbw and plain.phases[0].stats["symmetry"] == "none found"


def test_compact_and_expanded_documents_say_the_same() -> None:
    t = platforms.dgx_a100(3)
    s = schedule(t)
    compact = s.to_json(compact=True)
    expanded = s.to_json()
    assert "walks" in compact["phases"][0] and "walks" not in expanded["phases"][0]
    assert all(isinstance(i, int) for tr in compact["phases"][0]["trees"] for i in tr["edges"])
    assert expand(json.loads(json.dumps(compact)))["phases"] == json.loads(
        json.dumps(expanded["phases"]))
    for doc in (compact, expanded):
        jsonschema.validate(doc, SCHEMA, cls=jsonschema.Draft202012Validator)
    assert (_certified(t, compact).facts["time_per_unit"]
            == _certified(t, expanded).facts["time_per_unit"])


@pytest.mark.parametrize("bad,words", [(10**9, "not an index"), (-1, "not an index"),
                                       (True, "not an index"), ("0", "not an index")])
def test_compact_trees_with_bad_walk_indices_are_refused(bad: Any, words: str) -> None:
    t = platforms.two_box_example()
    doc = schedule(t).to_json(compact=True)
    doc["phases"][0]["trees"][1]["edges"][2] = bad
    with pytest.raises(InputError, match=words):
        read_schedule(Topo(t.to_json()), doc)


def test_compact_tree_reusing_a_walk_twice_is_invalid() -> None:
    t = platforms.two_box_example()
    doc = schedule(t).to_json(compact=True)
    edges = doc["phases"][0]["trees"][0]["edges"]
    edges[1] = edges[0]  # one node receives twice, another never
    assert not check_schedule(Topo(t.to_json()), doc).ok


def test_gzip_files_round_trip_and_are_audited(tmp_path: Path) -> None:
    t = platforms.dgx_a100(2)
    s = schedule(t)
    out = tmp_path / "s.json.gz"
    write_schedule(s, out)
    raw = out.read_bytes()
    assert raw[:2] == b"\x1f\x8b"
    assert read_text(out) == render(s) == gzip.decompress(raw).decode()
    renamed = tmp_path / "plain-name.json"  # gzip recognised by content, not by name
    renamed.write_bytes(raw)
    assert collcert.audit_file(t, renamed).valid
    assert main(["audit", "dgx_a100:2", str(out)]) == 0


def test_gzip_bombs_and_broken_files_are_refused(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.json.gz"
    bomb.write_bytes(gzip.compress(b" " * (4 << 20)))
    assert bomb.stat().st_size < 64 << 10
    with pytest.raises(InputError, match="after decompression"):
        certify_read_text(bomb, 1 << 20)
    cut = tmp_path / "cut.json.gz"
    cut.write_bytes(gzip.compress(b'{"format": 1}' * 1000)[:40])
    with pytest.raises(InputError, match="gzip"):
        certify_read_text(cut, 1 << 20)
    assert main(["audit", "two_box_example", str(cut)]) == 2


def test_schedule_command_reports_stages_memory_and_checks(tmp_path: Path, capsys: Any) -> None:
    out = tmp_path / "s.json.gz"
    assert main(["schedule", "dgx_a100:3", "-o", str(out), "--json", "--check"]) == 0
    summary = json.loads(capsys.readouterr().out)
    names = [st["stage"] for st in summary["stages"]]
    assert names[:2] == ["optimum", "symmetry"] and "checking" in names and "writing" in names
    assert all(st["seconds"] >= 0 and st["peak_memory_mb"] > 0 for st in summary["stages"])
    assert summary["peak_memory_mb"] >= max(st["peak_memory_mb"] for st in summary["stages"])
    assert "representative root" in summary["symmetry"][0]
    doc = json.loads(read_text(out))
    assert "walks" in doc["phases"][0]
    flat = tmp_path / "flat.json"
    assert main(["schedule", "dgx_a100:3", "-o", str(flat), "--expanded", "--no-symmetry"]) == 0
    doc = json.loads(flat.read_text())
    assert "walks" not in doc["phases"][0] and isinstance(doc["phases"][0]["trees"][0]["edges"][0],
                                                          dict)


def test_orbit_trees_share_edges_and_time_is_exact() -> None:
    t = platforms.mi250(8)
    s = schedule(t)
    ids = {id(e) for tr in s.trees for e in tr.edges}
    assert len(ids) < sum(len(tr.edges) for tr in s.trees)  # shared walk objects
    assert s.time_per_unit == collcert.optimum(t).time_per_unit
    perms = find_symmetry(t)
    assert perms is not None and np.all(perms.perms[0] == np.arange(len(t.nodes)))


def test_schedule_check_says_so_and_a_rejection_is_an_internal_error(
        monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
    assert main(["schedule", "two_box_example", "--check"]) == 0
    assert "Checked by collcert.certify" in capsys.readouterr().out
    import collcert.certify.forestcoll as certify_schedule

    def reject(topo: Any, doc: Any) -> Any:
        verdict = check_schedule(topo, doc)
        verdict.fail("tree 0 misses a node (simulated)")
        return verdict

    monkeypatch.setattr(certify_schedule, "check_schedule", reject)
    assert main(["schedule", "two_box_example", "--check"]) == 3
    assert "collcert.certify rejects the schedule just built" in capsys.readouterr().err


def test_progress_by_stage_with_time_left(capsys: Any) -> None:
    assert main(["schedule", "dgx_a100:3", "--progress"]) == 0
    err = capsys.readouterr().err
    for n, stage in enumerate(["optimum", "symmetry", "allgather: switch removal",
                               "allgather: tree packing"], 1):
        assert f"[{n}] {stage} [" in err
    assert "s left)" in err  # each bar estimates the time left while it runs


def test_gzip_is_recognised_by_its_magic_bytes_not_the_name(tmp_path: Path) -> None:
    packed = tmp_path / "s.json.gz"
    assert main(["schedule", "two_box_example", "-o", str(packed)]) == 0
    assert packed.read_bytes()[:2] == b"\x1f\x8b"
    plain_name = tmp_path / "s.json"  # the same gzip bytes under a name without .gz
    plain_name.write_bytes(packed.read_bytes())
    assert main(["audit", "two_box_example", str(plain_name)]) == 0
    assert main(["check", "two_box_example", str(plain_name)]) == 0


def test_gzip_bomb_is_refused_in_bounded_memory(tmp_path: Path) -> None:
    # 64 MiB of blanks in about 64 KiB: reading stops after the 1 MiB limit, so memory stays
    # near the limit however large the decompressed file would be
    import tracemalloc

    bomb = tmp_path / "bomb.json"
    with gzip.open(bomb, "wb", compresslevel=1) as fh:
        block = b" " * (1 << 20)
        for _ in range(64):
            fh.write(block)
    tracemalloc.start()
    try:
        with pytest.raises(InputError, match="after decompression"):
            certify_read_text(bomb, 1 << 20)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20, f"reading a gzip bomb took {peak >> 20} MiB"
