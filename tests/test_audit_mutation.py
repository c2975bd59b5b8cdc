"""Mutation testing of the checkers: corrupted schedules are rejected, rewrites accepted.

Valid schedules (collcert's own on several topologies and collectives, plus the
hand-made ones of test_certify_schedule) get random corruptions — drop a send,
retarget an edge, break a path hop, raise a multiplicity, duplicate a tree,
overload a link, make a cycle — and every mutant must be rejected with at
least one reason. Semantically equivalent rewrites — reordered trees and
edges, split multiplicities, node ids written by their string form — must
still be accepted with the same time. The kill rate is printed (pytest -s).
"""

from __future__ import annotations

import copy
import functools
import random
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import pytest
from test_certify_schedule import complete_allgather, ring_allgather

import collcert
from collcert import platforms
from collcert.certify.forestcoll import check_schedule
from collcert.certify.model import Topo

Doc = dict[str, Any]


BUILD_ERRORS: list[str] = []


@functools.lru_cache(maxsize=1)
def _schedules() -> list[tuple[str, Any, Doc]]:
    P = platforms
    out = []
    for name, topo, kw in [
        ("two_box allgather", P.two_box_example(), {"collective": "allgather"}),
        ("dgx_a100:2 allgather", P.dgx_a100(2), {"collective": "allgather"}),
        ("dgx_a100:2 reduce-scatter", P.dgx_a100(2), {"collective": "reduce-scatter"}),
        ("dgx_a100:2 fixed k=1", P.dgx_a100(2), {"collective": "allgather", "fixed_k": 1}),
        ("mi250:2,8 allgather", P.mi250(2, 8), {"collective": "allgather"}),
        ("fat_tree:4 allgather", P.fat_tree(4), {"collective": "allgather"}),
        ("two_box broadcast", P.two_box_example(), {"collective": "broadcast", "root": "c1.1"}),
        ("two_box reduce", P.two_box_example(), {"collective": "reduce", "root": "c2.2"}),
        ("ring:5 allreduce", P.ring(5), {"collective": "allreduce"}),
    ]:
        try:
            out.append((name, topo, collcert.schedule(topo, **kw).to_json()))
        except Exception as exc:  # noqa: BLE001 - the generator is tested elsewhere
            BUILD_ERRORS.append(f"{name}: {type(exc).__name__}: {exc}")
    data = P.dgx_a100(2).to_json()
    data["multicast_switches"] = list(data["switch_nodes"])  # in-network multicast (Zhao et al. 2026, §5.6)
    mc = collcert.Topology.from_json(data)
    try:
        out.append(("dgx_a100:2 multicast broadcast", mc,
                    collcert.schedule(mc, "broadcast", root="b0.gpu0").to_json()))
    except Exception as exc:  # noqa: BLE001 - the generator is tested elsewhere
        BUILD_ERRORS.append(f"multicast broadcast: {type(exc).__name__}: {exc}")
    ring = ring_allgather(4)
    ring["claimed"] = {"algbw": "8/3"}  # derived in test_certify_schedule.ring_allgather
    out.append(("hand-made ring:4 allgather", P.ring(4), ring))
    comp = complete_allgather(3)
    comp["claimed"] = {"algbw": "3"}  # derived in test_certify_schedule.complete_allgather
    out.append(("hand-made complete:3 allgather", P.complete(3), comp))
    return out


# ------------------------------------------------------------------ corruptions
def _pick_tree(doc: Doc, rng: random.Random) -> tuple[dict[str, Any], dict[str, Any]]:
    phase = rng.choice(doc["phases"])
    return phase, rng.choice(phase["trees"])


def drop_send(doc: Doc, rng: random.Random, topo: Topo) -> bool:
    _, tree = _pick_tree(doc, rng)
    tree["edges"].pop(rng.randrange(len(tree["edges"])))
    return True


def retarget_edge(doc: Doc, rng: random.Random, topo: Topo) -> bool:
    _, tree = _pick_tree(doc, rng)
    e = rng.choice(tree["edges"])
    # out-trees: the receiver gets a second parent; in-trees: the sender sends twice
    end, pos = ("dst", -1) if tree["direction"] == "out" else ("src", 0)
    choices = [c for c in topo.compute if str(c) not in (str(e["src"]), str(e["dst"]))]
    if not choices:
        return False
    x = rng.choice(choices)
    e[end] = x
    e["path"][pos] = x
    return True


def break_path_hop(doc: Doc, rng: random.Random, topo: Topo) -> bool:
    _, tree = _pick_tree(doc, rng)
    e = rng.choice(tree["edges"])
    path = [topo.node(p, "path") for p in e["path"]]
    i = rng.randrange(1, len(path)) if len(path) > 2 else 1
    prev = path[i - 1]
    nxt = path[i + 1] if i + 1 < len(path) else None
    if len(path) == 2:  # a direct link: insert a node that breaks the walk
        bad = [z for z in topo.nodes if (prev, z) not in topo.cap or (z, path[1]) not in topo.cap]
        if not bad:
            return False
        e["path"] = [path[0], rng.choice(bad), path[1]]
        return True
    if nxt is None:
        i -= 1
        prev, nxt = path[i - 1], path[i + 1]
    bad = [z for z in topo.nodes if z != path[i]
           and ((prev, z) not in topo.cap or (z, nxt) not in topo.cap)]
    if not bad:
        return False
    e["path"][i] = rng.choice(bad)
    return True


def raise_multiplicity(doc: Doc, rng: random.Random, topo: Topo) -> bool:
    _, tree = _pick_tree(doc, rng)
    tree["multiplicity"] += 1
    return True


def duplicate_tree(doc: Doc, rng: random.Random, topo: Topo) -> bool:
    phase, tree = _pick_tree(doc, rng)
    phase["trees"].insert(rng.randrange(len(phase["trees"]) + 1), copy.deepcopy(tree))
    return True


def overload_link(doc: Doc, rng: random.Random, topo: Topo) -> bool:
    """Send one tree edge's data over one of its links twice more (a round trip). A
    round trip over a link with room to spare leaves a valid schedule of the same time,
    so the link is one of the checker's bottlenecks where a tree edge crosses one."""
    hops = set()
    for line in check_schedule(topo, doc).facts.get("bottleneck", []):
        a, _, rest = str(line).partition(" -> ")
        hops.add((a, rest.split(" carries ")[0]))
    crossing = [(e, i) for ph in doc["phases"] for tr in ph["trees"] for e in tr["edges"]
                for i in range(len(e["path"]) - 1)
                if (str(e["path"][i]), str(e["path"][i + 1])) in hops]
    if crossing:
        e, i = rng.choice(crossing)
    else:
        _, tree = _pick_tree(doc, rng)
        e = rng.choice(tree["edges"])
        i = rng.randrange(len(e["path"]) - 1)
    path = e["path"]
    a, b = topo.node(path[i], "p"), topo.node(path[i + 1], "p")
    if (b, a) not in topo.cap:
        return False
    e["path"] = path[: i + 2] + [path[i], path[i + 1]] + path[i + 2:]
    return True


def make_cycle(doc: Doc, rng: random.Random, topo: Topo) -> bool:
    """Hang a node below one of its own descendants."""
    phase, tree = _pick_tree(doc, rng)
    out = tree["direction"] == "out"
    parent: dict[str, str] = {}
    children: dict[str, list[str]] = {}
    for e in tree["edges"]:
        c, p = (str(e["dst"]), str(e["src"])) if out else (str(e["src"]), str(e["dst"]))
        parent[c] = p
        children.setdefault(p, []).append(c)
    inner = [v for v in parent if children.get(v)]
    if not inner:
        return False
    v = rng.choice(inner)
    below, stack = [], list(children[v])
    while stack:
        u = stack.pop()
        below.append(u)
        stack += children.get(u, [])
    d = rng.choice(below)
    for e in tree["edges"]:
        if str(e["dst" if out else "src"]) == v:
            vn, dn = topo.node(v, "v"), topo.node(d, "d")
            if out:
                e["src"], e["dst"], e["path"] = dn, vn, [dn, vn]
            else:
                e["src"], e["dst"], e["path"] = vn, dn, [vn, dn]
            return True
    return False


CORRUPTIONS: dict[str, Callable[[Doc, random.Random, Topo], bool]] = {
    "drop a send": drop_send, "retarget an edge": retarget_edge,
    "break a path hop": break_path_hop, "raise a multiplicity": raise_multiplicity,
    "duplicate a tree": duplicate_tree, "overload a link": overload_link,
    "make a cycle": make_cycle,
}


# ------------------------------------------------------------------ rewrites
def reorder(doc: Doc, rng: random.Random, topo: Topo) -> bool:
    for phase in doc["phases"]:
        rng.shuffle(phase["trees"])
        for tree in phase["trees"]:
            rng.shuffle(tree["edges"])
    return True


def split_multiplicity(doc: Doc, rng: random.Random, topo: Topo) -> bool:
    phase = rng.choice(doc["phases"])
    if all(t["multiplicity"] < 2 for t in phase["trees"]):
        phase["k"] *= 2  # count in half units: every tree's share stays the same
        for t in phase["trees"]:
            t["multiplicity"] *= 2
    tree = rng.choice([t for t in phase["trees"] if t["multiplicity"] >= 2])
    part = rng.randrange(1, tree["multiplicity"])
    twin = copy.deepcopy(tree)
    tree["multiplicity"] -= part
    twin["multiplicity"] = part
    phase["trees"].append(twin)
    return True


def node_ids_as_text(doc: Doc, rng: random.Random, topo: Topo) -> bool:
    for phase in doc["phases"]:
        for tree in phase["trees"]:
            tree["root"] = str(tree["root"])
            for e in tree["edges"]:
                e["src"], e["dst"] = str(e["src"]), str(e["dst"])
                e["path"] = [str(p) for p in e["path"]]
    return True


REWRITES = {"reorder trees and edges": reorder, "split a multiplicity": split_multiplicity,
            "node ids as text": node_ids_as_text}

TRIALS = 3


def test_mutation_kill_rate() -> None:
    rng = random.Random(20261121)
    killed = total = 0
    survivors: list[str] = []
    per_kind: dict[str, list[int]] = {k: [0, 0] for k in CORRUPTIONS}
    schedules = _schedules()
    # every reference schedule must build: a silently missing one would shrink what
    # the mutations cover (multicast, in-trees, fixed k, ...)
    assert not BUILD_ERRORS, BUILD_ERRORS
    for name, topology, doc in schedules:
        tj = topology.to_json()
        topo = Topo(tj)
        base = check_schedule(topo, doc)
        assert base.ok, (name, base.all_reasons())
        for kind, mutate in CORRUPTIONS.items():
            for _ in range(TRIALS):
                mutant = copy.deepcopy(doc)
                if not mutate(mutant, rng, topo):
                    continue
                total += 1
                per_kind[kind][1] += 1
                v = check_schedule(topo, mutant)
                if not v.ok and v.all_reasons():
                    killed += 1
                    per_kind[kind][0] += 1
                else:
                    survivors.append(f"{name}: {kind}")
    print(f"\nmutation kill rate: {killed}/{total} over {len(schedules)} schedules")
    for kind, (k, n) in per_kind.items():
        print(f"  {kind:22s} {k}/{n}")
    assert total >= 40
    assert not survivors, survivors


@pytest.mark.parametrize("kind", list(REWRITES))
def test_equivalent_rewrites_are_accepted(kind: str) -> None:
    rng = random.Random(7)
    for name, topology, doc in _schedules():
        topo = Topo(topology.to_json())
        want = check_schedule(topo, doc).facts["time_per_unit"]
        for _ in range(2):
            rewritten = copy.deepcopy(doc)
            REWRITES[kind](rewritten, rng, topo)
            v = check_schedule(topo, rewritten)
            assert v.ok, (name, kind, v.all_reasons())
            assert v.facts["time_per_unit"] == want


def test_a_detour_through_switches_is_caught_by_the_claim_or_the_ratio() -> None:
    """A round trip NIC -> IB -> NIC -> IB keeps the path a walk through switches: the data
    still arrives, only slower. With the emitter's claim the schedule is INVALID; without
    it, the audit is VALID but reports the exact loss against the optimum."""
    from collcert.auditing import audit

    topology = platforms.dgx_a100(2)
    doc = collcert.schedule(topology, "allgather").to_json()
    edge = next(e for t in doc["phases"][0]["trees"] for e in t["edges"] if len(e["path"]) == 5)
    p = edge["path"]
    edge["path"] = p[:3] + [p[1], p[2]] + p[3:]  # gpu, nic, ib, nic, ib, nic, gpu
    v = check_schedule(topology.to_json(), doc)
    assert not v.ok and "claims" in " ".join(v.reasons)
    doc.pop("claimed")
    doc["phases"][0].pop("time_per_unit", None)
    r = audit(topology, doc)
    assert r.valid and r.ratio is not None and r.ratio < 1


def test_top_level_claim_is_checked_against_the_trees_not_the_optimum() -> None:
    """Regression: the embedded optimum certificate's facts once overwrote the schedule's
    own time, so a slower schedule still matched its (optimal) claim."""
    topology = platforms.dgx_a100(2)
    doc = collcert.schedule(topology, "allgather").to_json()
    edge = next(e for t in doc["phases"][0]["trees"] for e in t["edges"] if len(e["path"]) == 5)
    p = edge["path"]
    edge["path"] = p[:3] + [p[1], p[2]] + p[3:]
    doc["phases"][0].pop("time_per_unit", None)
    v = check_schedule(topology.to_json(), doc)
    assert not v.ok and "the schedule claims algbw 1040/3, but its trees give" in v.reasons[0]
    assert v.facts["time_per_unit"] > Fraction(3, 1040)
