"""The general schedule path (no symmetry): its estimate before it starts, its
progress while it runs, and the packing's skipped max-flows (issue 20, item 2)."""

from __future__ import annotations

import json

import pytest

import collcert
from collcert.cli import main
from collcert.platforms import dgx_a100, torus
from collcert.reference.forestcoll import packing, remove_switches
from collcert.reference.forestcoll.general_estimate import GeneralEstimate, estimate_general
from collcert.reference.forestcoll.pipeline import _unit_capacities
from collcert.reference.model import TopologyError, what_if

HALF = ["b1.nic2=25/2"]


def _degraded(boxes: int = 2) -> collcert.Topology:
    t = what_if(dgx_a100(boxes), degrade=HALF).topology
    assert t is not None
    return t


def _gstar_input(t: collcert.Topology) -> tuple[dict, dict]:
    opt = collcert.optimum(t, "allgather", symmetry=False)
    caps = _unit_capacities(t, opt.U, False)
    return caps, {c: opt.k for c in t.compute_nodes}


def test_estimate_counts_what_it_will_split_and_pack() -> None:
    t = _degraded()
    caps, supply = _gstar_input(t)
    est = estimate_general(t.compute_nodes, t.switch_nodes, caps, supply)
    n = t.num_compute
    assert (est.compute, est.switches, est.arcs) == (n, len(t.switch_nodes), len(caps))
    assert est.k == max(supply.values()) and est.demand == sum(supply.values())
    assert 0 < est.gstar_arcs <= n * (n - 1)
    assert est.placed >= n - 1 and est.maxflows >= est.placed
    assert est.seconds > 0 and est.memory_bytes > 0
    line = est.describe()
    for figure in (f"{n} compute nodes", f"k = {est.k}", f"about {est.maxflows} max-flows"):
        assert figure in line
    assert est.to_json()["packing_maxflows"] == est.maxflows


def test_estimate_grows_with_the_machine() -> None:
    small = estimate_general(*_args(torus([4, 4])))
    large = estimate_general(*_args(torus([8, 8])))
    assert small.switches == 0 and small.pairs == 0  # nothing to split
    assert large.placed > small.placed and large.seconds > small.seconds
    assert large.memory_bytes > small.memory_bytes


def _args(t: collcert.Topology) -> tuple:
    caps, supply = _gstar_input(t)
    return t.compute_nodes, t.switch_nodes, caps, supply


def test_schedule_announces_each_general_phase_before_it_starts() -> None:
    t = _degraded()
    events: list[object] = []
    s = collcert.schedule(t, "allreduce", symmetry=False, estimate=events.append,
                          progress=lambda stage, done, total: events.append(stage))
    estimates = [i for i, e in enumerate(events) if isinstance(e, GeneralEstimate)]
    assert len(estimates) == 2  # reduce-scatter, then allgather
    for i, phase in zip(estimates, ("reduce-scatter", "allgather")):
        assert events[i + 1] == f"{phase}: switch removal"  # before any of its work
    assert s.time_per_unit == s.extra["target_time_per_unit"]


def test_orbit_phases_are_not_announced() -> None:
    events: list[GeneralEstimate] = []
    s = collcert.schedule(dgx_a100(4), estimate=events.append)
    assert "representative root" in s.phases[0].stats["symmetry"]
    assert events == []


def test_progress_counts_switches_and_tree_edges_to_their_totals() -> None:
    t = _degraded()
    seen: dict[str, list[tuple[int, int]]] = {}
    s = collcert.schedule(t, symmetry=False,
                          progress=lambda st, d, tot: seen.setdefault(st, []).append((d, tot)))
    split, pack = seen["allgather: switch removal"], seen["allgather: tree packing"]
    assert split[-1] == (len(t.switch_nodes), len(t.switch_nodes))
    k = s.phases[0].k
    assert pack[-1] == (k * t.num_compute * (t.num_compute - 1),) * 2
    for calls in (split, pack):
        done = [d for d, _ in calls]
        assert done == sorted(done) and len({tot for _, tot in calls}) == 1


def test_a_general_path_over_the_time_limit_is_refused(monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str],
                                                       ) -> None:
    est = estimate_general(*_args(_degraded()))
    # below the general path's estimate, far above the optimum's (0.1 ms)
    monkeypatch.setenv("COLLCERT_MAX_SECONDS", str(est.seconds / 2))
    with pytest.raises(TopologyError, match="general algorithms.*COLLCERT_MAX_SECONDS"):
        collcert.schedule(_degraded(), symmetry=False)
    assert main(["schedule", "dgx_a100:2", "--degrade", HALF[0], "--no-symmetry"]) == 2
    err = capsys.readouterr().err
    assert "general algorithms" in err and "Traceback" not in err


def test_cli_prints_the_estimate_and_lists_it_in_json(capsys: pytest.CaptureFixture[str],
                                                      ) -> None:
    assert main(["schedule", "dgx_a100:2", "--degrade", HALF[0], "--no-symmetry", "--json",
                 "--progress"]) == 0
    out, err = capsys.readouterr()
    (est,) = json.loads(out)["general_path_estimates"]
    assert est["compute_nodes"] == 16 and est["packing_maxflows"] > 0
    assert "general path (no symmetry used): 16 compute nodes" in err


def test_skipping_rejected_arcs_packs_the_same_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    """The packing never asks again for an arc once rejected for a batch, and rejects
    some by a cut without a max-flow: the batches are those of asking every time."""
    t = _degraded()
    split = remove_switches(t.compute_nodes, t.switch_nodes,
                                     *_gstar_input(t))
    args = (t.compute_nodes, split.capacity, split.supply)
    fast = packing.pack_trees(*args)
    assert fast.maxflows == fast.placed + fast.rejected - fast.bounded

    class Forgetful(set):  # type: ignore[type-arg]
        def add(self, item: object) -> None:
            pass

        def __contains__(self, item: object) -> bool:
            return False

    init, split_batch = packing._Batches.__init__, packing._Batches.split

    def forgetful_init(self: packing._Batches, *a: object) -> None:
        init(self, *a)
        self.dead = [Forgetful() for _ in self.dead]

    def forgetful_split(self: packing._Batches, i: int, mu: int) -> int:
        j = split_batch(self, i, mu)
        self.dead[j] = Forgetful()
        return j

    dbar_init = packing._Dbar.__init__

    def unbounded(self: packing._Dbar, *a: object) -> None:
        dbar_init(self, *a)
        self.g_in = [float("inf")] * self.n

    monkeypatch.setattr(packing._Batches, "__init__", forgetful_init)
    monkeypatch.setattr(packing._Batches, "split", forgetful_split)
    monkeypatch.setattr(packing._Dbar, "__init__", unbounded)
    slow = packing.pack_trees(*args)
    assert slow.maxflows > fast.maxflows
    assert [(b.root, b.multiplicity, b.edges) for b in slow.batches] == \
        [(b.root, b.multiplicity, b.edges) for b in fast.batches]


def test_switch_removal_walks_are_paths_on_a_fat_tree() -> None:
    """Splitting a fat tree's switches one after another joins walks that pass a switch
    twice; each joined walk is cut down to a path (certify reads at most 64 nodes)."""
    t = collcert.platforms.fat_tree(4)
    s = collcert.schedule(t, symmetry=False, multicast=False)
    for path in {e.path for tr in s.trees for e in tr.edges}:
        assert len(set(path)) == len(path), path
    assert s.time_per_unit == s.extra["target_time_per_unit"]


def test_a_single_root_is_estimated_by_its_own_trees() -> None:
    """Broadcast packs the trees of one root: far fewer arcs than allgather's N roots."""
    t = _degraded()
    caps, supply = _gstar_input(t)
    root = t.compute_nodes[0]
    one = estimate_general(t.compute_nodes, t.switch_nodes, caps,
                           {c: (supply[c] if c == root else 0) for c in t.compute_nodes})
    every = estimate_general(t.compute_nodes, t.switch_nodes, caps, supply)
    assert t.num_compute - 1 <= one.placed < every.placed


def test_capacities_beyond_int64_are_said_to_need_the_exact_engine() -> None:
    from collcert.fuzz.generators import RandomSource, switched

    huge = switched(RandomSource(3), min_compute=8, max_compute=8, capacities="huge")
    events: list[GeneralEstimate] = []
    s = collcert.schedule(huge, symmetry=False, estimate=events.append)
    assert events and all(e.exact_engine for e in events)
    assert "exact max-flow engine" in events[0].describe()
    assert s.time_per_unit == s.extra["target_time_per_unit"]
    assert not estimate_general(*_args(_degraded())).exact_engine
