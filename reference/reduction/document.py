"""The ``collcert-reduction/1`` document of a reduction schedule (docs/reduction-trees.md).

One JSON object describes the problem of Canon & Antoniu 2012 (n, the costs,
the model, a limit), the schedule (``parent`` and ``send_time`` per machine,
1-based, machine 1 the sink; Alg 1-3 or a strategy) and the claims
(``makespan``, ``lower_bound``, ``upper_bound``: the bounds of Lemma 5, Prop 6
and the derived ones of :mod:`.length_bounds`), all exact numbers as ``"p/q"``
strings. ``collcert.certify.reduction.check_reduction`` reads it back and
recomputes the makespan from the tree and dates alone.
"""

from __future__ import annotations

import math
from typing import Any

from ..model import fraction_str
from .length_bounds import Bound, best, bounds
from .trees import ReductionSchedule, operand_order, tree_shape

FORMAT = "collcert-reduction/1"


def dates_text(values: list[int | None], scale: int) -> list[str | None]:
    """Integer dates over ``scale`` as exact strings (fast for millions)."""
    if scale == 1:
        return [None if t is None else str(t) for t in values]
    out: list[str | None] = []
    gcd = math.gcd
    for t in values:
        if t is None:
            out.append(None)
            continue
        g = gcd(t, scale)
        out.append(str(t // g) if g == scale else f"{t // g}/{scale // g}")
    return out


def problem_bounds(s: ReductionSchedule) -> list[Bound]:
    """The bounds that apply to the problem the schedule solves."""
    return bounds(s.n, s.transfer, s.compute, max_transfers=s.max_transfers,
                  max_reducers=s.max_reducers, overlap=s.model == "overlap")


def schedule_document(s: ReductionSchedule, *, with_order: bool = True) -> dict[str, Any]:
    """The JSON-ready ``collcert-reduction/1`` dict of a schedule."""
    found = problem_bounds(s)
    low, high = best(found)
    depth, degree = tree_shape(s.parent)
    doc: dict[str, Any] = {
        "format": FORMAT,
        "n": s.n,
        "transfer": fraction_str(s.transfer),
        "compute": fraction_str(s.compute),
        "model": s.model,
        "max_transfers": s.max_transfers,
        "max_reducers": s.max_reducers,
        "strategy": s.strategy,
        "algorithm": s.algorithm,
        "makespan": fraction_str(s.makespan),
        "lower_bound": fraction_str(low),
        "upper_bound": fraction_str(high),
        "bounds": [{"kind": b.kind, "value": fraction_str(b.value), "name": b.name,
                    "formula": b.source} for b in found],
        "tree": {"depth": depth, "max_in_degree": degree, "reducers": s.receivers()},
        "sink": 1,
        "parent": [None if p < 0 else p + 1 for p in s.parent],
        "send_time": dates_text(s.send_time, s.scale),
    }
    if with_order:
        doc["operand_order"] = [v + 1 for v in operand_order(s.parent, s.send_time)]
    if s.notes:
        doc["notes"] = list(s.notes)
    return doc

