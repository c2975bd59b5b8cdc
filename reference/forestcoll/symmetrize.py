"""Schedules of a degraded machine borrowed from a symmetrized one (Zhao & Krishnamurthy 2023, §2; Zhao et al. 2026, §5).

A machine of identical boxes with one NIC at half speed has lost its box shift
σ, and the orbit-wise switch removal and packing (:mod:`.symsplit`,
:mod:`.sympack`) need σ. But the degradation is usually *local*: the cut that
bounds the optimum is the one around the degraded box. Degrading every box the
same way then costs nothing more, and gives back the symmetry:

* the **symmetrized machine** M_sym has, on every link e of the healthy machine
  H, the least capacity of the degraded machine M over e's σ-orbit
  (0: the link is gone); so c_sym ≤ c_M link by link and σ is an automorphism
  of M_sym again;
* any schedule of M_sym runs on M with every link's load within its capacity
  (c_sym ≤ c_M), so its time on M is at most its time on M_sym;
* when the certified optimum of M_sym equals the certified optimum of M (both
  computed exactly, M's by near-symmetry orbits), the optimal schedule of
  M_sym, built by orbits in seconds, is optimal on M too.

:func:`symmetrized` builds M_sym (or None when it does not apply: no box shift
of H, a compute node failed, M_sym not Eulerian or disconnected);
:func:`retarget` hands the schedule to M: the same trees and walks, the phase
times recomputed on M's capacities, M's optimum as the target. The caller
compares the optima first and falls back to the general path when they
differ (the degradation is not local). Nothing here is trusted:
``collcert.certify`` checks the schedule on M's topology, knowing nothing of
M_sym.
"""

from __future__ import annotations

from collections.abc import Iterable
from fractions import Fraction

import numpy as np

from ..model import Topology, TopologyError
from ..symmetry import orbits
from .optimum_result import Optimum
from .schedule_build import phase_time
from .schedule_result import Phase, Schedule


def symmetrized(t: Topology, healthy: Topology) -> Topology | None:
    """M_sym of the module docstring for the degraded ``t`` of ``healthy``, or None."""
    if tuple(t.compute_nodes) != tuple(healthy.compute_nodes):
        return None
    sym = orbits.box_shift(healthy)
    if sym is None or not sym.tabled:
        return None
    perms = (sym.perms[j] for j in range(1, sym.order))
    return orbit_minimum(t, healthy, perms, "symmetrized")


def orbit_minimum(t: Topology, healthy: Topology, perms: Iterable[np.ndarray],
                  label: str) -> Topology | None:
    """Every link of ``healthy`` at the least capacity ``t`` gives the links of its orbit
    under the group whose elements other than the identity are ``perms`` (node-index
    arrays of ``healthy``); None if one of them does not map ``healthy``'s links onto
    its links. The machine is named ``"<t's name> (<label>)"``."""
    n = len(healthy.nodes)
    idx = healthy.index
    links = list(healthy.capacity)
    tails = np.array([idx[a] for a, _ in links], dtype=np.int64)
    heads = np.array([idx[b] for _, b in links], dtype=np.int64)
    keys = tails * n + heads
    order = np.argsort(keys)
    sorted_keys = keys[order]
    # t's capacities (scaled to integers) on the healthy links, 0 where t has none
    big = max(t.int_capacity.values(), default=0) >= 2**62
    own = np.array([t.int_capacity.get(e, 0) for e in links], dtype=object if big else np.int64)
    least = own.copy()
    for p in perms:
        img = p[tails] * n + p[heads]
        pos = np.minimum(np.searchsorted(sorted_keys, img), len(sorted_keys) - 1)
        if not bool((sorted_keys[pos] == img).all()):
            return None  # not an automorphism of the healthy links
        least = np.minimum(least, own[order[pos]])
    kept = [(a, b, Fraction(int(c), t.scale)) for (a, b), c in zip(links, least.tolist()) if c]
    used = {v for a, b, _ in kept for v in (a, b)}
    try:
        return Topology(t.compute_nodes, kept, [v for v in t.switch_nodes if v in used],
                        name=f"{t.name or 'topology'} ({label})", unit=t.unit,
                        multicast_switches=[v for v in t.multicast_switches if v in used])
    except TopologyError:
        return None


def retarget(s: Schedule, t: Topology, opt: Optimum, target: Fraction,
             note: str) -> Schedule | None:
    """The schedule ``s`` of M_sym as a schedule of ``t`` (same trees), its phase times
    on ``t`` and ``opt`` its optimum; None when its time on ``t`` is not ``target``."""
    n = t.num_compute
    per_root = {c: Fraction(1, n) for c in t.compute_nodes}
    phases: list[Phase] = []
    for ph in s.phases:
        moved = Phase(ph.collective, ph.k, ph.U, ph.trees, ph.split, ph.transposed,
                      stats=dict(ph.stats))
        moved.time_per_unit = phase_time(t, moved, per_root)
        phases.append(moved)
    out = Schedule(s.collective, t, phases, opt, root=s.root, weights=s.weights,
                   fixed_k=s.fixed_k, timings=s.timings, multicast_saved=s.multicast_saved,
                   extra=dict(s.extra), memory=s.memory)
    out.extra["target_time_per_unit"] = target
    out.extra["symmetrized"] = note
    return out if out.time_per_unit == target else None
