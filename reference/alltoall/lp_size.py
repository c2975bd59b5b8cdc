"""How big an alltoall LP collcert solves exactly, and the time and memory it predicts.

Both LPs of this room, the full one (a commodity per compute node,
:mod:`.full_lp`) and the restricted one (a commodity per orbit, :mod:`.orbit_lp`),
have one flow variable per commodity and link; :func:`check_columns` refuses one
whose columns pass :data:`MAX_LP_COLUMNS`, or whose predicted memory or time pass
the budgets of :mod:`collcert.reference.model.limits` (docs/limits.md).
"""

from __future__ import annotations

from collections.abc import Callable

from ..model import Topology, TopologyError, check_budget

Notice = Callable[[str, float], None]
"""Told, once the budgets pass and before the solve, what LP is solved and its
predicted seconds (a planning figure: the CLI prints it before a long solve)."""

MAX_LP_COLUMNS = 400_000  # N·|E|: beyond this the exact solve is not attempted
BYTES_PER_COLUMN = 4000
"""Memory per flow variable (``/usr/bin/time -v``: dgx_a100:16, 98,304 columns, 378 MB;
torus:12x12, 82,944 columns, 297 MB)."""


def solve_seconds(columns: int) -> float:
    """Predicted CPU time of the solve, fitted on the hardest family measured (tori:
    torus:8x8, 16,384 columns, 4.4 s; torus:12x12, 82,944 columns, 200 s); DGX boxes
    and rings solve much faster (dgx_a100:16, 98,304 columns, 22 s)."""
    return float(4.4 * (columns / 16384) ** 2.35)


def check_columns(topology: Topology, commodities: int, links: int,
                  kind: str = "compute nodes", short: str = "compute nodes",
                  notice: Notice | None = None) -> None:
    """Refuse (:class:`TopologyError`) an alltoall LP with ``commodities`` × ``links``
    flow variables that collcert does not solve; ``kind`` names the commodities in the
    refusal of the column count, ``short`` in that of the budgets. ``notice`` is then
    told the LP's size and predicted time."""
    cols = commodities * links
    if cols > MAX_LP_COLUMNS:
        raise TopologyError(f"the alltoall LP would have {cols} flow variables "
                            f"({commodities} {kind} × {links} links); collcert solves it "
                            f"exactly up to {MAX_LP_COLUMNS}")
    check_budget(topology.name or "the topology", BYTES_PER_COLUMN * cols,
                 f"the alltoall LP with {cols} flow variables ({commodities} {short} × "
                 f"{links} links)", seconds=solve_seconds(cols),
                 action="try a smaller topology")
    if notice is not None:
        notice(f"the alltoall LP with {cols} flow variables ({commodities} {kind} × "
               f"{links} links)", solve_seconds(cols))
