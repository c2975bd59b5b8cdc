"""Alltoall as an MSCCL program, from the maximum concurrent flow (issue 22 item 4).

:func:`collcert.reference.alltoall.alltoall_optimum` proves the best rate λ at which
every ordered pair of compute nodes can send at once (the full LP, one commodity per
source). Each source's flow is split into paths, one destination at a time (a path
exists in the flow's support while demand is left: max-flow/min-cut), and each
pair's block (M/N of the source's send buffer) into chunks in proportion to its
paths' amounts: ``nchunksperloop`` = N · the least common multiple of the
denominators of amount/λ (refused past :data:`MAX_PER_BLOCK`). A path's chunks go
from compute node to compute node along it: the source sends them from its input,
every compute node inside the path receives them into scratch and sends them on,
the destination receives them into its output block; the source copies its own
block. Segments between consecutive compute nodes pass only switches (or a direct
link), so the runtime routes them as the flow does where no linked pair is sent
through switches; :func:`.runtime_rate.export_rate` is not used here, and the
program is audited in the tests like any other. The program is for out-of-place
calls only (``inplace="0"``): in place a rank's output block would overwrite input
its sends still need.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from ..model import ScheduleError, Topology
from .execplan import Op, Plan, Region, Spec
from .msccl_export import DEFAULT_RUNTIME, plan_xml

MAX_PER_BLOCK = 64


def alltoall_plan(t: Topology) -> tuple[Plan, Fraction]:
    """The plan of the optimal alltoall on ``t`` and its algbw (N·λ)."""
    from ..alltoall import alltoall_optimum

    opt = alltoall_optimum(t, symmetry=False)
    comp = list(t.compute_nodes)
    n = len(comp)
    idx = t.index
    routes: dict[tuple[Any, Any], list[tuple[list[Any], Fraction]]] = {}
    for s in comp:
        flow = {(a, b): opt.result.x.get(f"f{idx[s]}:{idx[a]}>{idx[b]}", Fraction(0))
                for (a, b) in t.capacity}
        for d in comp:
            if d != s:
                routes[(s, d)] = _paths(flow, s, d, opt.lam)
    per = 1
    for paths in routes.values():
        for _, amount in paths:
            per = math.lcm(per, (amount / opt.lam).denominator)
    if per > MAX_PER_BLOCK:
        raise ScheduleError(f"the optimal flow splits a block into parts that need {per} "
                            f"chunks per block (at most {MAX_PER_BLOCK} are written)")
    return _build(t, comp, routes, per, opt.lam), n * opt.lam


def _paths(flow: dict[tuple[Any, Any], Fraction], s: Any, d: Any,
           need: Fraction) -> list[tuple[list[Any], Fraction]]:
    """Paths s -> d in the support of ``flow`` carrying ``need`` (taken out of it)."""
    out: list[tuple[list[Any], Fraction]] = []
    while need > 0:
        prev: dict[Any, Any] = {s: None}
        frontier = [s]
        while frontier and d not in prev:
            nxt = []
            for u in frontier:
                for (a, b), x in flow.items():
                    if a == u and x > 0 and b not in prev:
                        prev[b] = a
                        nxt.append(b)
            frontier = nxt
        if d not in prev:
            raise RuntimeError(f"internal: the alltoall flow of {s} does not reach {d}")
        path = [d]
        while path[-1] != s:
            path.append(prev[path[-1]])
        path.reverse()
        arcs = list(zip(path, path[1:]))
        amount = min([need] + [flow[e] for e in arcs])
        for e in arcs:
            flow[e] -= amount
        out.append((path, amount))
        need -= amount
    return out


def _build(t: Topology, comp: list[Any], routes: dict[tuple[Any, Any], list[tuple[
        list[Any], Fraction]]], per: int, lam: Fraction) -> Plan:
    n = len(comp)
    rank = {v: r for r, v in enumerate(comp)}
    c = n * per
    spec = Spec("alltoall", n, c * n, None, [(r * c, c) for r in range(n)])
    for r in range(n):
        spec.inputs.append(("i", 0, r * c, c))
        spec.outputs.append(("o", 0, 0, c))
    scratch = [0] * n
    ops: list[Op] = []
    msg = 0
    group = 0
    for (s, d), paths in routes.items():
        rs, rd = rank[s], rank[d]
        lo = 0
        for path, amount in paths:
            cnt = int(amount / lam * per)
            hops = [rank[v] for v in path if t.is_compute(v)]
            src = Region("i", rd * per + lo, cnt)
            for a, b in zip(hops, hops[1:]):
                if b == rd:
                    dst = Region("o", rs * per + lo, cnt)
                else:
                    dst = Region("s", scratch[b], cnt)
                    scratch[b] += cnt
                ops.append(Op("send", a, b, src=src, msg=msg, group=(0, group)))
                ops.append(Op("recv", b, a, dst=dst, msg=msg, group=(0, group)))
                msg += 1
                src = dst
            lo += cnt
            group += 1
    for r in range(n):
        ops.append(Op("copy", r, src=Region("i", r * per, per), dst=Region("o", r * per, per),
                      group=(0, group)))
    buffers = [{"i": c, "o": c, "s": scratch[r]} for r in range(n)]
    return Plan(spec, buffers, ops, name=t.name or "alltoall",
                labels=[str(v) for v in comp])


def alltoall_msccl_xml(t: Topology, channels: int | None = None, *,
                       runtime: str = DEFAULT_RUNTIME) -> tuple[str, Fraction]:
    """The MSCCL XML of the optimal alltoall on ``t`` for ``runtime`` (out-of-place calls),
    and the algbw it was built for."""
    plan, algbw = alltoall_plan(t)
    return plan_xml(plan, channels, advice="a smaller topology", runtime=runtime), algbw
