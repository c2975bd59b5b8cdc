"""ForestColl's LP (5) allreduce trees (Zhao et al. 2026, App. G) as an exact MSCCL program.

The schedule is :func:`collcert.reference.allreduce.lp_schedule`'s; it is compiled
as :mod:`.msccl_export` compiles every tree schedule (Zhao et al. 2026, §6.1), from
a plan built tree by tree with :mod:`.treeplan`'s builder.

MSCCL cuts the data into ``nchunksperloop`` = C equal chunks, but nothing
makes the roots own equal numbers of them: root v owns a block of
C·x_v / Σx chunks, and each of its trees carries its multiplicity's worth
of that block, in the reduce phase and again in the broadcast phase. With
the trees' multiplicities m (units of 1/D of the data, S = D·Σx units in
all), tree i carries m_i·C/S chunks, so the least exact C is
S / gcd(S, every m). Every root's shard and every tree's part is then a
whole number of chunks, and the program moves exactly what the trees move:
its algbw is LP (5)'s Σx.

Both phases run at the same time in the program as in the schedule
(``"overlap": true``): every step waits only for the chunks it reads, so the
broadcast of a chunk from its root starts as soon as the reduce into that
root has delivered it (a dependency per chunk), while other chunks are
still being reduced. The bandwidth model of ``collcert audit`` counts each
link's traffic of both phases together, which LP (5) keeps within its
capacity.

Where the exact C is too large for the MSCCL executor (chunk offsets below
32768, steps per threadblock, XML elements per rank: see
:mod:`.msccl_export`), the export is refused: fewer chunks would mean other
shares, a different and slower program.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ..model import ScheduleError
from .execplan import Plan
from .msccl_export import DEFAULT_RUNTIME, MAX_OFFSET, plan_xml
from .treeplan import Ranks, TreeBuilder, tree_plan

if TYPE_CHECKING:
    from ..allreduce import LPSchedule, LPTree


def chunks(s: LPSchedule) -> int:
    """The least nchunksperloop that gives every root's share and every tree a whole
    number of chunks: S / gcd(S, every multiplicity), S = Σ of the roots' supplies."""
    supply = _supplies(s)
    total = sum(supply.values())
    g = total
    for tr in s.trees:
        g = math.gcd(g, tr.multiplicity)
    return total // g


def _supplies(s: LPSchedule) -> dict[object, int]:
    out = {}
    for v, x in s.lp.x.items():
        n = x * s.scale
        if n.denominator != 1:
            raise RuntimeError("internal: the LP schedule's scale misses a share's denominator")
        out[v] = int(n)
    return out


def lp_plan(s: LPSchedule) -> Plan:
    """The execution plan of the LP schedule with :func:`chunks` cells: root v's shard
    is cells [off_v, off_v + C·supply_v/S), its trees take consecutive parts of it in
    each phase (reduce into v first, then broadcast from v)."""
    t = s.topology
    nodes = list(t.compute_nodes)
    rank = Ranks(nodes)
    supply = _supplies(s)
    total = sum(supply.values())
    cells = chunks(s)
    shards: list[tuple[int, int]] = []
    off = 0
    for v in nodes:
        n = supply[v] * cells
        if n % total:
            raise RuntimeError("internal: a share is not a whole number of chunks")
        shards.append((off, n // total))
        off += n // total
    assert off == cells
    plan = tree_plan("allreduce", shards, None, str(t.name or "lp"), rank.names)
    builder = TreeBuilder(plan)
    phases: list[tuple[str, list[LPTree]]] = [("reduce-scatter", s.reduce_trees),
                                              ("allgather", s.broadcast_trees)]
    for ph, (coll, trees) in enumerate(phases):
        used = [0] * len(nodes)
        for i, tr in enumerate(trees):
            r = rank(tr.root, "LP schedule")
            n = tr.multiplicity * cells
            if n % total:
                raise RuntimeError("internal: a tree's part is not a whole number of chunks")
            n //= total
            lo = shards[r][0] + used[r]
            used[r] += n
            pairs = [(rank(u, "LP schedule"), rank(v, "LP schedule")) for u, v, _ in tr.edges]
            label = f"tree #{i} (multiplicity {tr.multiplicity} of {supply[tr.root]})"
            builder.tree(ph, coll, i, r, label, pairs, lo, n)
        if used != [n for _, n in shards]:
            raise RuntimeError("internal: the trees of a root do not cover its shard")
    plan.validate()
    return plan


def lp_msccl_xml(s: LPSchedule, channels: int | None = None, name: str | None = None, *,
                 runtime: str = DEFAULT_RUNTIME, inplace: bool = False) -> str:
    """The MSCCL allreduce program of an LP (5) schedule, with exact chunk counts, for
    ``runtime`` (:func:`.msccl_export.msccl_xml`).

    Raises ScheduleError (the caller's exit 2) when the exact chunk count, or the
    program it gives, exceeds what the MSCCL executor loads."""
    cells = chunks(s)
    why = (f"the exact shares need nchunksperloop = {cells} (the least common denominator "
           "of every root's share and every tree's part of the data)")
    if cells > MAX_OFFSET + 1:
        raise ScheduleError(f"{why}, but the MSCCL executor addresses chunk offsets below "
                            f"{MAX_OFFSET + 1}")
    return plan_xml(lp_plan(s), channels, name, advice=f"or a smaller topology ({why})",
                    runtime=runtime, inplace=inplace)
