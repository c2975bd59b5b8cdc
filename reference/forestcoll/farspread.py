"""The far spread of the orbit-wise switch removal (:mod:`.symsplit`): in which order
the first pass at a switch's egress takes the GPUs of other boxes.

The first pass limits each new arc u → t to 1/``ways`` of the egress's capacity, so
the egress t gets about ``ways`` partners, the first ingresses of the order. The split
is done for a whole orbit at once: when the partner lies d boxes after t's box, every
box b is joined to box b + d, and the boxes form a circulant graph with those
distances as steps. The trees packed on G* cross it, so they are about as deep as it
is wide. Bit reversal over the GPUs' places (the order before) gives distances
1, n/8, 2n/8, … boxes plus an offset on n boxes of 8 GPUs: a graph n/8 hops wide
(dgx_h100:512 trees 65 deep, dgx_a100:128 65). Distances that grow geometrically in
boxes (1, 2, 5, 10, 23, … on 512 boxes) give a graph about log(n) wide; on few boxes,
bit reversal over the box distances (every other distance) is as narrow or narrower,
and the narrower of the two is taken. Any order is sound (Zhao & Krishnamurthy 2023,
Alg 1 leaves it free): only the trees' depth depends on it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def far_spread(order: list[int], hops: Mapping[int, int], far: int,
               boxes: tuple[Mapping[int, int], Mapping[int, int]] | None = None, ways: int = 8,
               ) -> list[int]:
    """``order`` with the ingresses of other boxes (``boxes``: how many boxes after
    the egress's box each ingress lies, and how many places after the egress's place in
    its box; without it, the ingresses that cannot reach the egress but through the
    switch, hops ``far``) reordered among their places: first one ingress at each of
    the box distances :func:`box_steps` names (1, 2, 4, … boxes away; for the n-th
    distance the GPU n places after the egress's, so that under a box shift alone the
    GPUs of a box join different boxes and the in-box links mix them), then
    the others in bit-reversed order of their place. The first pass joins the egress to
    those few boxes, and as the split is done for every box at once (box b with box
    b + d) the boxes form a circulant graph whose steps grow geometrically: trees
    across boxes stay about log(boxes) deep, where steps 1, n/8, 2n/8, … (bit reversal
    over the places alone) need n/8 hops."""
    dist, place = boxes if boxes is not None else ({}, {})
    if boxes is None:
        idx = [i for i, u in enumerate(order) if hops[u] == far]
    else:
        idx = [i for i, u in enumerate(order) if dist.get(u, 0) > 0]
    if len(idx) < 3:
        return order
    first: list[int] = []
    if boxes is not None:
        at: dict[int, list[int]] = {}
        for p, i in enumerate(idx):
            at.setdefault(dist[order[i]], []).append(p)
        size = max(place.values(), default=0) + 1
        for n, d in enumerate(box_steps(max(at), ways)):
            if d in at:  # the n-th step: the GPU n places after the egress's, or next
                first.append(min(at[d], key=lambda p: (place[order[idx[p]]] - n) % size))
    taken = set(first)
    rest = [p for p in range(len(idx)) if p not in taken]
    bits = (len(rest) - 1).bit_length()
    ranked = first + [rest[r] for r in sorted(
        range(len(rest)), key=lambda r: (int(f"{r:0{bits}b}"[::-1], 2), r))]
    out = list(order)
    for slot, p in zip(idx, ranked):
        out[slot] = order[idx[p]]
    return out


def box_steps(most: int, ways: int = 8) -> list[int]:
    """The box distances (1 … ``most``) the far spread joins first: of two choices,
    geometric steps (1, 2, 4, … up to ``most``, ``ways`` of them) and the
    bit-reversed ones (1, most/2, most/4, 3·most/4, …: every other distance on few
    boxes), the one whose circulant graph of boxes has the smaller diameter with its
    first ``ways`` − 1 steps (the last partner takes what the others leave)."""
    ways = max(ways, 2)
    geo: list[int] = []
    for i in range(ways):
        d = max(round(most ** (i / ways)), geo[-1] + 1 if geo else 1)
        if d > most:
            break
        geo.append(d)
    bits = (most - 1).bit_length()
    rev = [1 + p for p in sorted(range(most), key=lambda p: int(f"{p:0{bits}b}"[::-1], 2)
                                 if bits else 0)][:ways]
    return min((rev, geo), key=lambda steps: circulant_diameter(most + 1, steps[:ways - 1]))


def circulant_diameter(n: int, steps: Sequence[int]) -> int:
    """The diameter of the directed circulant graph on Z_n with these steps (n: none
    reaches everything)."""
    dist = [-1] * n
    dist[0] = 0
    frontier = [0]
    while frontier:
        nxt = []
        for x in frontier:
            for s in steps:
                y = (x + s) % n
                if dist[y] < 0:
                    dist[y] = dist[x] + 1
                    nxt.append(y)
        frontier = nxt
    return n if min(dist) < 0 else max(dist)
