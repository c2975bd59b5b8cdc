"""``box-dual`` upper bounds: link lengths, and every structure's cost counted box by box.

For lengths y ≥ 0 under which every structure costs at least L > 0, the rate is at
most Σ_e b_e·y_e / L (weak LP duality: a schedule of rate R puts at least R·L of
length-weighted load on links that hold at most Σ b·y). The certificate gives y and
*boxes*; this module checks the premises and counts L itself (docs/in-network.md,
"NVLS: the box-dual bound"):

* the boxes are disjoint and hold every compute node; each NVLS switch lies in one
  box with all its member GPUs (compute nodes linked to it both ways); no SHARP or
  multicast switch lies inside a box; no link runs from one box straight into
  another;
* cut a tree at its edges whose paths leave their tail's box: the rest falls into
  components inside boxes, m GPUs each. A component costs at least
  c(m) = min((m−1)·d, (m−1)·u + r) (d: least path inside the box between two of its
  GPUs; u: least link from a member into an NVLS switch of the box, reduce trees,
  or out of one, broadcast trees; r: least round trip y(g→w) + y(w→g) of a member,
  which an issuer pays), 0 for m = 1;
* an edge leaving a box costs at least β⁺ (least path from a GPU out of its box) and,
  where it ends at a GPU, β⁻ more (least path from outside into a box's GPU);
* so, with G(X) the least Σ (c(m) + X) over the splits of a box's GPUs, X_r = β⁺ +
  [no SHARP switch]·β⁻ and X_b = β⁻ + [no SHARP or multicast switch]·β⁺:
  L = Σ_boxes (G_reduce(X_r) + G_broadcast(X_b)) − [no SHARP switch]·2β⁻ − [no
  switch that copies outside]·2β⁺; with one box, L is at most c(N) + c'(N) too.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from ..model import InputError, Link, Node, Topo, Verdict, number
from .structures import members

INF = None


def read_lengths(topo: Topo, raw: list[Any]) -> dict[Link, Fraction]:
    """A dual's link lengths ``upper.y``: ``[src, dst, length]`` rows, each naming a link
    once (the dual and box-dual bounds)."""
    y: dict[Link, Fraction] = {}
    for i, rec in enumerate(raw):
        if not isinstance(rec, list) or len(rec) != 3:
            raise InputError(f"upper.y[{i}] must be [src, dst, length]")
        e = (topo.node(rec[0], f"upper.y[{i}]"), topo.node(rec[1], f"upper.y[{i}]"))
        if e not in topo.cap or e in y:
            raise InputError(f"upper.y[{i}] names no link, or a link twice")
        y[e] = number(rec[2], f"upper.y[{i}] length")
    return y


def _read(topo: Topo, upper: Mapping[str, Any]) -> tuple[list[set[Node]], dict[Link, int]]:
    boxes_raw, y_raw = upper.get("boxes"), upper.get("y")
    if not isinstance(boxes_raw, list) or not boxes_raw or not isinstance(y_raw, list):
        raise InputError("upper: a box-dual bound has boxes (arrays of node ids) and y")
    boxes = []
    for i, raw in enumerate(boxes_raw):
        if not isinstance(raw, list):
            raise InputError(f"upper.boxes[{i}] must be an array of node ids")
        boxes.append({topo.node(x, f"upper.boxes[{i}] entry") for x in raw})
    y = read_lengths(topo, y_raw)
    if any(c < 0 for c in y.values()):
        raise InputError("upper.y: a length is negative")
    den = math.lcm(*(c.denominator for c in y.values()), 1)
    return boxes, {e: int(y.get(e, 0) * den) for e in topo.cap}


def _premises(topo: Topo, boxes: list[set[Node]], v: Verdict) -> dict[Node, int] | None:
    where: dict[Node, int] = {}
    for i, box in enumerate(boxes):
        for x in box:
            if x in where:
                v.fail(f"upper.boxes: node {x!r} is in two boxes")
                return None
            where[x] = i
    lost = [x for x in topo.compute if x not in where]
    bad = [f"compute node {lost[0]!r} is in no box"] if lost else []
    for w, m in members(topo).items():
        if w not in where or any(where.get(x) != where[w] for x in m):
            bad.append(f"NVLS switch {w!r} is not in one box with all its member GPUs")
    bad += [f"switch {w!r} adds or copies the SHARP way inside a box"
            for w in sorted((topo.reducing - topo.nvls) | topo.multicast, key=str)
            if w in where]
    bad += [f"link {a!r} -> {b!r} runs from one box straight into another"
            for a, b in topo.cap if a in where and b in where and where[a] != where[b]]
    if bad:
        v.fail(f"upper: the box-dual count does not hold: {bad[0]}")
        return None
    return where


def _dijkstra(starts: list[tuple[int, Node, Node]], adj: dict[Node, list[tuple[Node, int]]],
              stop: frozenset[Node]) -> list[tuple[int, Node, Node]]:
    """Settle each node for its two nearest sources; (distance, source, node) as settled.
    A node in ``stop`` reached from another source is settled but not passed through."""
    heap = [(d, i, s, x) for i, (d, s, x) in enumerate(starts)]
    heapq.heapify(heap)
    order = itertools.count(len(heap))
    seen: dict[Node, list[Node]] = {}
    out = []
    while heap:
        d, _, s, x = heapq.heappop(heap)
        got = seen.setdefault(x, [])
        if len(got) == 2 or s in got:
            continue
        got.append(s)
        out.append((d, s, x))
        if x in stop and s != x:
            continue
        for b, c in adj.get(x, []):
            heapq.heappush(heap, (d + c, next(order), s, b))
    return out


def _least(xs: list[int]) -> int | None:
    return min(xs) if xs else INF


def _box(topo: Topo, box: set[Node], y: dict[Link, int], member: dict[Node, frozenset[Node]],
         ) -> tuple[list[int | None], int | None, int | None]:
    """(d, u_reduce, u_broadcast, r), β⁺ and β⁻ of one box."""
    comp = frozenset(x for x in box if x in topo.compute_set)
    fwd: dict[Node, list[tuple[Node, int]]] = {}
    back: dict[Node, list[tuple[Node, int]]] = {}
    for (a, b), c in y.items():
        if a in box and b in box:
            fwd.setdefault(a, []).append((b, c))
            back.setdefault(b, []).append((a, c))
    starts = [(0, x, x) for x in sorted(comp, key=str)]
    settled = _dijkstra(starts, fwd, comp)
    d = _least([dd for dd, s, x in settled if x in comp and s != x])
    near_out: dict[Node, int] = {}
    near_in: dict[Node, int] = {}
    for near, adj in ((near_out, fwd), (near_in, back)):
        for dd, _, x in _dijkstra(starts, adj, frozenset()):
            near.setdefault(x, dd)  # the first settling is the nearest source's
    out = _least([near_out[a] + c for (a, b), c in y.items() if a in near_out and b not in box])
    into = _least([near_in[b] + c for (a, b), c in y.items() if b in near_in and a not in box])
    pairs = [(w, x) for w in member if w in box for x in member[w]]
    u_in = _least([y[(x, w)] for w, x in pairs])
    u_out = _least([y[(w, x)] for w, x in pairs])
    r = _least([y[(x, w)] + y[(w, x)] for w, x in pairs])
    return [d, u_in, u_out, r], out, into


def _c(m: int, d: int | None, u: int | None, r: int | None) -> int | None:
    if m == 1:
        return 0
    ways = ([(m - 1) * d] if d is not None else []) + (
        [(m - 1) * u + r] if u is not None and r is not None else [])
    return _least(ways)


def _split(n: int, d: int | None, u: int | None, r: int | None, cross: int) -> int:
    best = [0]
    for k in range(1, n + 1):
        best.append(min(c + cross + best[k - m] for m in range(1, k + 1)
                        if (c := _c(m, d, u, r)) is not None))
    return best[n]


def check_box_dual(topo: Topo, upper: Mapping[str, Any], v: Verdict) -> Fraction | None:
    """The bound's value when its premises hold and its count is positive, else None."""
    boxes, y = _read(topo, upper)
    if _premises(topo, boxes, v) is None:
        return None
    member = members(topo)
    per = [_box(topo, box, y, member) for box in boxes]
    sizes = [sum(1 for x in box if x in topo.compute_set) for box in boxes]
    out = _least([o for _, o, _ in per if o is not None])
    into = _least([i for _, _, i in per if i is not None])
    single = None
    if len(boxes) == 1:
        d, u_in, u_out, r = per[0][0]
        a, b = _c(sizes[0], d, u_in, r), _c(sizes[0], d, u_out, r)
        single = a + b if a is not None and b is not None else None
    if out is None or into is None:
        low = single if len(boxes) == 1 else None
    else:
        adds = bool(topo.reducing - topo.nvls)
        copies = adds or bool(topo.multicast)
        x_r, x_b = out + (0 if adds else into), into + (0 if copies else out)
        base = sum(_split(n, d, ui, r, x_r) + _split(n, d, uo, r, x_b)
                   for n, ((d, ui, uo, r), _, _) in zip(sizes, per))
        low = base if adds else base - 2 * into - (0 if copies else 2 * out)
        low = min(low, single) if single is not None else low
    if low is None or low <= 0:
        v.fail("upper: under the box-dual's lengths some structure may cost nothing (the "
               "count gives no positive least cost)")
        return None
    return sum((topo.cap[e] * c for e, c in y.items() if c), Fraction(0)) / low  # both × den
