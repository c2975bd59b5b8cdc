"""Tree depth of schedules built by orbits of a product group (issue 31 follow-up).

The first pass of the orbit-wise switch removal joins each GPU to a few GPUs of
other boxes; as the split is done for every box at once, box b is joined to box
b + d for every b, and the trees across boxes are as deep as the circulant graph
of those distances is wide. Distances 1, n/8 + 1, 2n/8 + 1, … (bit reversal over
the GPUs' places) made dgx_a100:16 trees 9 deep, dgx_a100:128 65 deep; the far
spread now picks distances that grow geometrically in boxes
(``farspread.box_steps``), for a depth of about log2(boxes).
"""

from __future__ import annotations

import math

import collcert
from collcert import platforms
from collcert.certify.forestcoll import check_schedule
from collcert.certify.model import Topo
from collcert.reference.forestcoll import farspread, schedule, symsplit


def _depth(root: str, edges: list[tuple[str, str]]) -> int:
    """The depth of a tree, from its edges alone (not the height the schedule states)."""
    children: dict[str, list[str]] = {}
    for a, b in edges:
        children.setdefault(a, []).append(b)
    depth, frontier = 0, [root]
    while True:
        frontier = [c for x in frontier for c in children.get(x, [])]
        if not frontier:
            return depth
        depth += 1


def test_dgx_a100_trees_are_logarithmically_deep() -> None:
    boxes = 16
    t = platforms.dgx_a100(boxes)
    s = schedule(t)
    phase = s.phases[0]
    assert "16 × 2 × 4" in str(phase.stats.get("symmetry"))  # built by the product group
    depths = [_depth(tr.root, [(e.src, e.dst) for e in tr.edges]) for tr in s.trees]
    assert len(depths) == 128
    # one NVLink hop inside a box and about log2(boxes) hops between boxes (was 9)
    assert max(depths) <= 1 + math.ceil(math.log2(boxes))
    assert max(depths) == s.max_height
    assert s.time_per_unit == collcert.optimum(t).time_per_unit
    v = check_schedule(Topo(t.to_json()), s.to_json())
    assert v.ok, v.all_reasons()[:3]


def test_box_steps_make_a_narrow_circulant() -> None:
    ways = symsplit.SPREAD_WAYS
    for most in (3, 15, 127, 511, 2047, 16383):
        steps = farspread.box_steps(most, ways)
        assert len(set(steps)) == len(steps) and all(1 <= d <= most for d in steps)
        wide = farspread.circulant_diameter(most + 1, steps[: ways - 1])
        assert wide <= 2 * math.ceil(math.log2(most + 1)), (most, steps, wide)
    # the old choice for 512 boxes, distances 1 + 64·i: a circulant 64 hops wide
    assert farspread.circulant_diameter(512, [1 + 64 * i for i in range(7)]) >= 60


def test_far_spread_takes_one_gpu_per_chosen_box_first() -> None:
    # 8 boxes of 2 GPUs after the egress's box, in cyclic order; box distance 1 … 8
    # (the n-th box joined: its GPU n places after the egress's, here 1 + n mod 2)
    order = list(range(16))
    boxes = {u: 1 + u // 2 for u in order}
    place = {u: (u + 1) % 2 for u in order}
    out = farspread.far_spread(order, {}, 0, (boxes, place), symsplit.SPREAD_WAYS)
    assert sorted(out) == order
    steps = farspread.box_steps(8, symsplit.SPREAD_WAYS)
    assert [boxes[u] for u in out[: len(steps)]] == steps
    assert [place[u] for u in out[: len(steps)]] == [n % 2 for n in range(len(steps))]
    # without boxes: the ingresses at hops ``far`` in bit-reversed order, as before
    assert farspread.far_spread([5, 6, 7, 8, 9], {5: 3, 6: 3, 7: 3, 8: 3, 9: 1}, 3) == \
        [5, 7, 6, 8, 9]
