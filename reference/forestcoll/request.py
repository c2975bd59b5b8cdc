"""What :func:`optimum` and :func:`schedule` are asked for, checked once for both.

The collectives of Zhao & Krishnamurthy 2023: allgather and reduce-scatter
(eq. (1), §2; reduce-scatter on the transposed topology, App. A), broadcast and
reduce from / to a root (App. A), allreduce as reduce-scatter then allgather
(App. B); a fixed number k of trees per compute node (§2.4, allgather and
reduce-scatter only); non-uniform shard sizes (Zhao et al. 2026, §5.7, the
same two). :func:`check_request` refuses what does not fit, with one wording
for both entry points: :class:`~collcert.TopologyError` from ``optimum()``,
:class:`~collcert.ScheduleError` from ``schedule()``.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Literal

from ..model import ScheduleError, Topology, TopologyError, lcm_of_denominators, parse_number

Node = Hashable
COLLECTIVES = ("allgather", "reduce-scatter", "broadcast", "reduce", "allreduce")
ROOTED = ("broadcast", "reduce")
"""Collectives from or to one root (Zhao & Krishnamurthy 2023, App. A)."""
SHARDED = ("allgather", "reduce-scatter")
"""Collectives where every compute node has a shard: fixed k and weights apply to them."""


@dataclass(frozen=True)
class Request:
    """A checked request: the collective's canonical name, the root (a compute node,
    broadcast and reduce only), fixed k, and the weights as positive integers in
    compute-node order (their common denominator cleared; allgather and
    reduce-scatter only)."""

    collective: str
    root: Node | None = None
    fixed_k: int | None = None
    weights: list[int] | None = None


def check_request(topology: Topology, collective: str, *, root: Node | None,
                  fixed_k: int | None, weights: Sequence[object] | None,
                  caller: Literal["optimum", "schedule"]) -> Request:
    """The request of ``caller()`` (``"optimum"`` or ``"schedule"``), or the error
    that says what does not fit. ``optimum()`` ignores weights of a collective
    they do not apply to (an allreduce schedule file may carry them and the
    audit passes them along); ``schedule()`` refuses them."""
    error = ScheduleError if caller == "schedule" else TopologyError
    if not isinstance(topology, Topology):
        raise TypeError(f"{caller}() needs a collcert.Topology")
    coll = str(collective).lower().replace("_", "-")
    if coll not in COLLECTIVES:
        raise error(f"unknown collective {collective!r}: choose one of {', '.join(COLLECTIVES)}")
    if caller == "schedule":
        topology.require_forestcoll(f"a ForestColl {coll} schedule")
    else:
        topology.require_forestcoll("the RS+AG allreduce time and bounds (6), (7)"
                                    if coll == "allreduce" else f"the ForestColl {coll} optimum")
    if fixed_k is not None:
        _check_fixed_k(coll, fixed_k, weights, error)
    if weights is not None and coll not in SHARDED:
        if caller == "schedule":
            raise error(f"weights apply to allgather and reduce-scatter, not {coll}")
        weights = None
    if coll in ROOTED:
        root = _check_root(topology, coll, root, error)
    elif root is not None:
        raise error(f"{coll} has no root; --root (root= in Python) is for broadcast and reduce")
    return Request(coll, root, fixed_k,
                   None if weights is None else parse_weights(topology, weights, error))


def _check_fixed_k(coll: str, fixed_k: object, weights: object,
                   error: type[Exception]) -> None:
    if coll not in SHARDED:
        raise error(f"fixed k applies to allgather and reduce-scatter, not {coll}")
    if not isinstance(fixed_k, int) or isinstance(fixed_k, bool) or fixed_k < 1:
        raise error(f"fixed k must be a positive integer, got {fixed_k!r}")
    if weights is not None:
        raise error("fixed k and weights cannot be combined")


def _check_root(t: Topology, coll: str, root: Node | None, error: type[Exception]) -> Node:
    if root is None:
        raise error(f"{coll} needs a root: pass --root NODE (root= in Python), "
                    "one of the compute nodes")
    root = t.lookup(root)  # "3" names node 3 (the CLI passes text)
    if not t.is_compute(root):
        raise error(
            f"root {root!r} is not a compute node of the topology; compute nodes are "
            f"{', '.join(map(str, t.compute_nodes[:8]))}{'…' if t.num_compute > 8 else ''}"
        )
    return root


def parse_weights(t: Topology, weights: Sequence[object],
                  error: type[Exception] = TopologyError) -> list[int]:
    """The relative shard sizes of Zhao et al. 2026, §5.7, one per compute node (any
    exact numbers), as positive integers with the same ratios."""
    if len(weights) != t.num_compute:
        raise error(
            f"weights has {len(weights)} entries but the topology has {t.num_compute} compute "
            "nodes: give one shard size per compute node, in compute-node order"
        )
    vals = []
    for c, w in zip(t.compute_nodes, weights):
        try:
            f = parse_number(w)
        except ValueError as exc:
            raise error(f"weight of compute node {c!r}: {exc}") from None
        if f <= 0:
            raise error(f"weight of compute node {c!r} is {w!r}: weights must be positive")
        vals.append(f)
    den = lcm_of_denominators(vals, what="the weights")
    return [int(f * den) for f in vals]
