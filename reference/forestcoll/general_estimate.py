"""What the general schedule path will cost, predicted before it starts (Zhao & Krishnamurthy 2023, Alg 1-2).

Where no symmetry is used, a schedule phase runs switch removal (Zhao &
Krishnamurthy 2023, Alg 1, :mod:`.splitting`) and tree packing (Alg 2,
:mod:`.packing`) on the whole graph. :func:`estimate_general` predicts, from
counts known before either starts, how big that work is and how long it takes,
and :func:`check_general` refuses it, with the limits of
:mod:`collcert.reference.model.limits` (the memory budget and
``COLLCERT_MAX_SECONDS``), when it would not fit.

The counts: N compute nodes, the arcs of G({U·c_e}) (E), the arcs leaving a
switch (E_w), and the demand
D = Σ k_u. The model:

- switch removal tries about ``PAIRS_PER_SWITCH_ARC`` · E_w (ingress, egress)
  pairs (measured 1.0-1.27 on DGX, MI250, fat-tree and random switched
  graphs); each costs time proportional to N (one kept flow per compute node)
  times (a + b·N), more where many switches have no compute neighbour (fat
  trees: the auxiliary max-flows of Thm 8 and more repairs, about 1.6 times);
- G* has at most N(N−1) arcs, about the compute-to-compute arcs plus one per pair;
- the packing places about N − 1 arcs per root when k = 1 and ``PLACED_PER_ARC_PAIR``
  · (N − 1) per root otherwise (measured 1.08-2.37, 1.6 typical), more for a single
  root (broadcast, ``BATCHES_ONE_ROOT``), with
  ``MAXFLOWS_PER_PLACED`` max-flows per placed arc (1.0-1.22 since rejected arcs
  are asked once), each costing c0 + c1·N + c2·|G*| seconds;
- memory: the interpreter and OR-Tools, switch removal's kept flows (about 12 bytes ·
  N³, more with switches of many compute neighbours; at least N × (|G*| + N) entries)
  and the trees (one entry per placed arc and tree edge).

The constants were fitted on CPU seconds measured on a shared 2-core machine
(benchmarks/bench_general_path.py prints estimate beside measurement); they
are planning figures, within about a factor 2 on the families measured, and
never reach a reported number: the schedule itself is exact and certified.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..model import check_budget

Node = Hashable

PAIRS_PER_SWITCH_ARC = 1.2
SPLIT_SECONDS_PER_PAIR_NODE = 14e-6
SPLIT_SECONDS_PER_PAIR_NODE2 = 0.12e-6
SPLIT_SECONDS_PER_PAIR_NODE_NEIGHBOUR = 0.5e-6
SPLIT_NEIGHBOURS_MEASURED = 72
"""Switch removal: seconds per pair = N · (14 µs + 0.12 µs · N + 0.5 µs · g), g the compute
neighbours of the switch with most (up to 72, the most measured). CPU seconds per pair
and compute node, measured on 2 loaded cores: degraded dgx_a100:16/32/64 (g = 8) 31, 44,
74 µs; dgx_h100:16 35; fat_tree:8 (g = 4) 40; mi250:8 (g = 128) 61; gb200_nvl72:2/4
(g = 72) 88, 105 µs (the flows of a 72-GPU NVSwitch break more often)."""
SPLIT_INNER_SWITCH_FACTOR = 0.3
"""Switch removal time × (1 + 0.3 × the share of switches with no compute neighbour): the
repairs and auxiliary max-flows of multi-tier switching (fat_tree:8, 60 % such
switches)."""
PLACED_PER_ARC_PAIR = 1.6
BATCHES_ONE_ROOT = 4.0
"""Spanning trees' worth of arcs placed per root: min(k_u, max(1.6, 4 · N^¼ / roots));
few roots (broadcast) spread their k trees over more batches (measured with one root,
k = 15: 7.9 trees' worth on dgx_a100:2, 11.2 on dgx_a100:8, both with a NIC halved)."""
MAXFLOWS_PER_PLACED = 1.2
PACK_SECONDS_PER_MAXFLOW = 30e-6
PACK_SECONDS_PER_MAXFLOW_NODE = 0.2e-6
PACK_SECONDS_PER_MAXFLOW_ARC = 0.05e-6
"""Packing: seconds per max-flow = 30 µs + 0.2 µs · N + 0.05 µs · |G*| (measured 66-100 µs
from 64 to 128 compute nodes, 115 µs at 256)."""
BASE_BYTES = 64 * 1024 * 1024
FLOW_ENTRY_BYTES = 200
TREE_ENTRY_BYTES = 800
SPLIT_BYTES_PER_NODE3 = 12
"""Switch removal's peak grows as N³ (the kept flows over a split graph that gains arcs as
switches go): 12 bytes · N³ · (1 + g/200), g as above. Measured growth while splitting:
degraded dgx_a100:16/32/64 25, 184, 1407 MB (N^2.9); gb200_nvl72:2/4 60, 448 MB;
mi250:8 43 MB; fat_tree:8 9 MB; 8 NVL72 racks 1.85 GB in all (issue 31; estimated 3.1 GB
now, 0.84 GB before). dgx_a100:128 (1024 GPUs) comes to about 13 GB; this model said 2.4
GB before."""
NOTICE_SECONDS = 10.0
"""From this many predicted seconds on, the CLI prints the estimate before it starts."""


@dataclass(frozen=True)
class GeneralEstimate:
    """The predicted size, time and memory of the general path for one phase."""

    compute: int
    switches: int
    arcs: int
    switch_arcs: int
    demand: int
    k: int
    pairs: int
    """(ingress, egress) pairs switch removal tries, about."""
    gstar_arcs: int
    """Arcs of G*, about (at most N(N−1))."""
    placed: int
    """Arcs the packing places, about."""
    maxflows: int
    """Max-flows of the packing, about."""
    split_seconds: float
    pack_seconds: float
    memory_bytes: int
    exact_engine: bool = False
    """The capacities pass int64: max-flows by the pure-Python engine (not in the
    time figures, which are OR-Tools')."""
    fallback: str = ""
    """Why the orbit-wise build was left for this path ("" where no symmetry was found or
    used); a fallback is always announced."""

    @property
    def seconds(self) -> float:
        return self.split_seconds + self.pack_seconds

    @property
    def worth_announcing(self) -> bool:
        """Long enough (``NOTICE_SECONDS``) for the CLI to print it before it starts."""
        return self.seconds >= NOTICE_SECONDS or bool(self.fallback)

    def describe(self) -> str:
        """One line: the sizes and the predicted time and memory."""
        sw = (f"switch removal of {self.switches} switches (about {self.pairs} pairs, "
              f"{_seconds(self.split_seconds)}), " if self.switches else "")
        why = (f"the build by orbits stopped {self.fallback.removeprefix('general algorithms ')}"
               "; so the " if self.fallback else "")
        return (f"{why}general path (no symmetry used): {self.compute} compute nodes, "
                f"{self.arcs} arcs, k = {self.k}: {sw}tree packing of about {self.placed} "
                f"arcs with about {self.maxflows} max-flows "
                f"({_seconds(self.pack_seconds)}); {_seconds(self.seconds)} of CPU time and "
                f"about {_megabytes(self.memory_bytes)} of memory in all (a planning "
                "estimate, within about 2x; more wall time on a loaded machine"
                + ("; capacities beyond int64 need the exact max-flow engine, which can take "
                   "far longer)" if self.exact_engine else ")"))

    def to_json(self) -> dict[str, Any]:
        return {"compute_nodes": self.compute, "switches": self.switches, "arcs": self.arcs,
                "k": self.k, "demand": self.demand, "switch_pairs": self.pairs,
                "gstar_arcs": self.gstar_arcs, "arcs_placed": self.placed,
                "packing_maxflows": self.maxflows,
                "switch_removal_seconds": round(self.split_seconds, 1),
                "packing_seconds": round(self.pack_seconds, 1),
                "seconds": round(self.seconds, 1), "memory_bytes": self.memory_bytes,
                "exact_engine": self.exact_engine, "fallback": self.fallback or None}


def estimate_general(compute: Sequence[Node], switches: Sequence[Node],
                     caps: Mapping[tuple[Node, Node], int],
                     supply: Mapping[Node, int], fallback: str = "") -> GeneralEstimate:
    """The estimate for splitting and packing ``caps`` (G({U·c_e}), unit-tree units)
    with ``supply`` trees per root (Zhao & Krishnamurthy 2023, Alg 1 then Alg 2);
    ``fallback``: why the orbit-wise build was left for it."""
    n = len(compute)
    sw = set(switches)
    arcs = [e for e, c in caps.items() if c > 0]
    from_sw = sum(1 for a, _ in arcs if a in sw)
    cc = sum(1 for a, b in arcs if a not in sw and b not in sw)
    pairs = round(PAIRS_PER_SWITCH_ARC * from_sw)
    comp = set(compute)
    g = min(SPLIT_NEIGHBOURS_MEASURED, _most_compute_neighbours(arcs, comp, sw))
    per_pair = n * (SPLIT_SECONDS_PER_PAIR_NODE + SPLIT_SECONDS_PER_PAIR_NODE2 * n
                    + SPLIT_SECONDS_PER_PAIR_NODE_NEIGHBOUR * g)
    inner = sw - {a for a, b in arcs if b in comp} - {b for a, b in arcs if a in comp}
    split_s = pairs * per_pair * (1 + SPLIT_INNER_SWITCH_FACTOR * len(inner) / max(len(sw), 1))
    gstar = min(n * (n - 1), cc + pairs)
    k = max((int(x) for x in supply.values()), default=0)
    roots = sum(1 for x in supply.values() if int(x) > 0)
    per_root = max(PLACED_PER_ARC_PAIR, BATCHES_ONE_ROOT * n ** 0.25 / max(roots, 1))
    placed = round((n - 1) * sum(min(int(x), per_root) for x in supply.values() if int(x) > 0))
    maxflows = round(MAXFLOWS_PER_PLACED * placed)
    pack_s = maxflows * (PACK_SECONDS_PER_MAXFLOW + PACK_SECONDS_PER_MAXFLOW_NODE * n
                         + PACK_SECONDS_PER_MAXFLOW_ARC * gstar)
    split_bytes = (round(SPLIT_BYTES_PER_NODE3 * n ** 3 * (1 + g / 200)) if sw else 0)
    memory = (BASE_BYTES + max(FLOW_ENTRY_BYTES * n * (gstar + n), split_bytes)
              + TREE_ENTRY_BYTES * placed)
    exact = (n + 1) * sum(int(caps[e]) for e in arcs) >= 1 << 61  # as FlowNetwork's "auto"
    return GeneralEstimate(n, len(sw), len(arcs), from_sw, sum(int(x) for x in supply.values()),
                           k, pairs, gstar, placed, maxflows, split_s, pack_s, memory, exact,
                           fallback)


def _most_compute_neighbours(arcs: Sequence[tuple[Node, Node]], compute: set[Node],
                             switches: set[Node]) -> int:
    """The most compute nodes one switch sends to."""
    count: dict[Node, int] = {}
    for a, b in arcs:
        if a in switches and b in compute:
            count[a] = count.get(a, 0) + 1
    return max(count.values(), default=0)


def check_general(est: GeneralEstimate, what: str) -> None:
    """Refuse (TopologyError, exit 2) a general path whose estimate passes the memory
    budget or ``COLLCERT_MAX_SECONDS`` (docs/limits.md)."""
    check_budget(what, est.memory_bytes,
                 f"a schedule by the general algorithms ({est.compute} compute nodes, "
                 f"{est.arcs} arcs, about {est.maxflows} packing max-flows)",
                 seconds=est.seconds,
                 action="where the machine has a box symmetry, let the schedule use it "
                 "(no --no-symmetry, no symmetry=False); or schedule fewer compute nodes")


def _seconds(s: float) -> str:
    if s < 1:
        return "under 1 s"
    if s < 120:
        return f"about {s:.0f} s"
    if s < 7200:
        return f"about {s / 60:.0f} minutes"
    return f"about {s / 3600:.1f} hours"


def _megabytes(n: int) -> str:
    return f"{n / 2**20:.0f} MB" if n < 2**30 else f"{n / 2**30:.1f} GB"
