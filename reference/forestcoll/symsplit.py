"""Switch removal by orbits of a symmetry group (Zhao & Krishnamurthy 2023, §2.2, Thm 7-8; Zhao et al. 2026, §5.3).

The same edge splitting as :mod:`.splitting`, done for a whole orbit of
(ingress, switch, egress) pairs at once: when the graph D is invariant under
a group H of automorphisms (:mod:`collcert.reference.symmetry`, verified: a box
shift, or a product of shifts such as server × rail), splitting γ units of
(u, w), (w, t) is done together with γ units of (h(u), h(w)), (h(w), h(t)) for
every h ∈ H, so D stays invariant. The invariant of Zhao & Krishnamurthy 2023, Thm 5,

    min_{v ∈ V_c} F(s, v; D⃗) ≥ D = Σ_u k_u,

then only needs checking for one sink per orbit of compute nodes: for an
invariant graph F(s, h(v)) = F(s, v). γ is the largest amount for which the
*orbit* split keeps it. Every cut's capacity is affine in γ, so the flow
value is a concave function of γ; starting from γ0 = min(c(u,w), c(w,t)), a
failing sink's minimum cut S gives the largest γ that S allows,
⌊(c_S(0) − D) / slope_S⌋, and the next try; a try that every representative
sink passes ends the search (a Newton iteration on a concave piecewise
linear function, exact, a few max-flows). A kept flow per representative
sink is tested first: when it survives the split (re-pairing at w as in
:mod:`.splitting`) no max-flow is run at all.

H acts freely on the compute nodes but may fix switches, and links: the server
shift of a rail-optimized fabric fixes every leaf and spine, so a spine → leaf
link is fixed by it while the rail shift moves it. The orbit of a pair is its
distinct images; images may share a link (the images of nic → leaf → spine under
the server shift all end on leaf → spine), and each link counts how many images
split it or add to it (γ times that count). The walks the units stand for are
kept equivariant, one bag per orbit of arcs (:mod:`.symbags`, which also says
how a pair fixed by part of H takes its walks). A link split in both roles by
one orbit, a link both split and added to, or walks whose symmetry does not
match: :class:`SymmetryFailed`, and the caller falls back. Switches whose
splitting would join two switches of one orbit (a core between two pods'
aggregation switches, which leaves links inside an orbit that no orbit split
removes) are split last.

The result is checked like any other: the flows of the certificate (the
representative flows mapped by H) and the trees built on G* are verified by
``collcert.certify`` without any knowledge of the symmetry.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..model import ScheduleError
from ..solvers import FlowNetwork
from ..symmetry import Symmetry
from .farspread import far_spread
from .splitting import SplitResult, ingress_order
from .symbags import GroupView, OrbitBags
from .symbags import SymmetryFailed as SymmetryFailed  # raised here too: re-exported
from .walks import ArcTable

Node = Hashable
Progress = Callable[[int, int], None]
FLOW_CERTIFICATE_LIMIT = 1_000_000  # entries of the mapped flows kept for the certificate
SPREAD_WAYS = 8
"""First pass at every egress: no G* arc u → t between compute nodes gets more than
1/SPREAD_WAYS of u's out-capacity (then a second pass without the limit), so each
compute node sends to several others and the packed trees stay shallow (fat_tree:12:
height 18 instead of 420, the number of hosts less 12). Which GPUs of other boxes come
first is :mod:`.farspread`'s (dgx_a100:128: height 6; dgx_h100:512: 10). 0: no first pass."""
FAR_BOXES = 2048
"""Up to this many boxes the far spread picks partner boxes by box distance
(:mod:`.farspread`); above, it keeps the bit-reversed order of places: on dgx_h100:16384
the box-distance order made tree packing take about 440 s instead of well under the
10 minutes the whole certified schedule took (not yet understood; dgx_h100:2048 builds
in 66 s against 63 s)."""


@dataclass
class _OrbitPair:
    """The orbit of a pair (u, w), (w, t) under H: ``pairs[j]`` its distinct images,
    ``arcs[j]`` the arcs of that image, (u, w), (w, t), (u, t) (-1 for a round trip);
    ``uses[a]``: how many images split link a (negative) or add to it (positive);
    ``base``: the capacities before the split; ``kp``: the pair's stabilizer (a mask);
    ``step``: γ is a multiple of it (the walks' block size, :mod:`.symbags`), ``avail``:
    the units of walks in such blocks on both arcs."""

    pairs: list[tuple[int, int, int]]
    arcs: list[tuple[int, int, int]]
    c_uw: int
    c_wt: int
    base: dict[int, int]
    uses: dict[int, int]
    kp: np.ndarray
    step: int
    avail: int
    shared: bool


class _OrbitSplitter(ArcTable):
    def __init__(self, nodes: Sequence[Node], nc: int, caps: Mapping[tuple[int, int], int],
                 supply: Sequence[int], sym: Symmetry, engine: str, spread: bool = False,
                 ) -> None:
        self.nodes = list(nodes)
        self.spread = spread
        self.nc = nc
        self.n = len(nodes)
        self.s = self.n
        self.sym = sym
        self.group = GroupView(sym)
        self.bags = OrbitBags(self.group)
        self.orbit_rep: list[int] = self.group.least_images()  # least node of the orbit
        self.moved = self.group.moved()
        super().__init__(self.n)
        for (a, b), c in caps.items():
            if c > 0:
                i = self.add_arc(a, b)
                self.cap[i] = int(c)
                self.bags.add_link(a, b, int(c))
        for v in range(nc):
            self.cap[self.add_arc(self.s, v)] = int(supply[v])
        self.demand = sum(int(x) for x in supply)
        self.out0 = [0] * nc  # each compute node's out-capacity in G
        for (a, _), c in caps.items():
            if a < nc and c > 0:
                self.out0[a] += int(c)
        # int64 unless the capacities could overflow it (then exact Python ints)
        self.dtype: object = object if sum(self.cap) >= 2**62 else np.int64
        self.net = FlowNetwork(self.n + 1, self.tails, self.heads, self.cap, engine=engine)
        self.flows: dict[int, np.ndarray] = {}
        self.spread_taken: dict[int, int] = {}  # units into the egress in its first pass
        self.far = True
        # each compute node's box, the number of boxes, its place in its box
        self.boxes: tuple[list[int], int, list[int]] | None = None
        self.routing: dict[tuple[Node, Node], dict[Node, int]] = {}
        self.stats = {"pairs": 0, "pairs_split": 0, "maxflows": 0, "aux_maxflows": 0,
                      "resolves": 0, "repairs": 0, "orbit_size": sym.order,
                      "representative_sinks": len(sym.reps)}

    # ---------------------------------------------------------------- arcs
    def arc_of(self, a: int, b: int) -> int:
        i = self.arc.get((a, b))
        if i is None:
            i = self.add_arc(a, b)
            self.net.add_arc(a, b, 0)
            for v, f in self.flows.items():
                if len(f) <= i:
                    grown = np.zeros(max(2 * len(f), i + 1), dtype=f.dtype)
                    grown[: len(f)] = f
                    self.flows[v] = grown
        return i

    def set_caps(self, arcs: list[int], caps: list[int]) -> None:
        for i, c in zip(arcs, caps):
            self.cap[i] = c
        self.net.update_capacities(arcs, caps)

    def live_in(self, w: int) -> list[int]:
        return sorted({self.tails[i] for i in self.inn[w] if self.cap[i] > 0})

    def live_out(self, w: int) -> list[int]:
        return sorted({self.heads[i] for i in self.out[w] if self.cap[i] > 0})

    # --------------------------------------------------------------- flows
    def solve(self, v: int) -> tuple[int, np.ndarray, frozenset[int]]:
        res = self.net.solve(self.s, v)
        self.stats["maxflows"] += 1
        flow = np.asarray(res.flow, dtype=self.dtype)  # type: ignore[call-overload]
        return res.value, flow, res.source_side

    def initial_flows(self) -> None:
        for r in self.sym.reps:
            value, flow, _ = self.solve(r)
            if value < self.demand:
                raise ScheduleError(
                    f"the capacities do not admit {self.demand} unit trees: the flow from the "
                    f"source to compute node {self.nodes[r]!r} is {value} < {self.demand} "
                    "(Zhao & Krishnamurthy 2023, Thm 5); the k and U given do not fit this topology")
            self.flows[r] = flow

    # --------------------------------------------------------------- split
    def orbit(self, u: int, w: int, t: int) -> _OrbitPair:
        """The distinct images of the pair, the links they split and add to, and how
        often (:class:`_OrbitPair`); SymmetryFailed where the orbit split is not one."""
        rows, _ = self.group.images((u, w, t))
        pairs = [(int(a), int(b), int(c)) for a, b, c in rows.tolist()]
        arcs = [(self.arc_of(a, b), self.arc_of(b, c), self.arc_of(a, c) if a != c else -1)
                for a, b, c in pairs]
        uses: dict[int, int] = {}
        split_as: dict[int, int] = {}
        for x, y, z in arcs:
            for a, role in ((x, 0), (y, 1)):
                if split_as.setdefault(a, role) != role:
                    raise SymmetryFailed("two pairs of one orbit share a link in both roles")
                uses[a] = uses.get(a, 0) - 1
            if z >= 0:
                uses[z] = uses.get(z, 0) + 1
        if any(z in split_as for _, _, z in arcs):
            raise SymmetryFailed("a link of one orbit is both split and added to")
        x0, y0, _ = arcs[0]
        c_uw, c_wt = self.cap[x0], self.cap[y0]
        base = {a: self.cap[a] for a in uses}
        for x, y, _ in arcs:
            if base[x] != c_uw or base[y] != c_wt:
                raise RuntimeError("internal: the graph is not invariant under the symmetry")
        kp = self.group.stab_of((u, w, t))
        left = self.bags.available(u, w, kp)
        right = self.bags.available(w, t, kp)
        # walks in blocks of one size on both sides (:mod:`.symbags`); the most units first
        both = sorted((min(left[x], right[x]), x) for x in left if x in right)
        avail, size = both[-1] if both else (0, 1)  # 0: nothing this pair may take
        shared = any(abs(k) > 1 for k in uses.values())
        return _OrbitPair(pairs, arcs, c_uw, c_wt, base, uses, kp, size, avail, shared)

    def split_orbit(self, u: int, w: int, t: int, spread: int = 0) -> bool:
        """Split the largest γ of (u, w), (w, t) and its whole orbit at once (module
        docstring); ``spread`` (the egress's capacity when its first pass began): at most
        what :data:`SPREAD_WAYS` leaves for u → t. Whether anything was split."""
        if min(self.pair(u, w, t)[2:]) == 0:
            return False
        room = 0  # what the first pass leaves for u → t (0: no limit)
        if spread and u < self.nc and t < self.nc:
            if u == t:
                return False
            i = self.arc.get((u, t))
            have = 0 if i is None else self.cap[i]
            room = min(-(-self.out0[u] // SPREAD_WAYS) - have,
                       -(-spread // SPREAD_WAYS) - self.spread_taken.get(u, 0))
            if room <= 0:
                return False
        self.stats["pairs"] += 1
        op = self.orbit(u, w, t)
        x0, y0, _ = op.arcs[0]
        gamma = min(op.c_uw // -op.uses[x0], op.c_wt // -op.uses[y0], op.avail)
        if room:
            gamma = min(gamma, room)
        gamma -= gamma % op.step
        if gamma <= 0:
            return False
        found = self._largest_gamma(op, gamma)
        if found is None:
            return False
        gamma, new = found
        self.stats["pairs_split"] += 1
        if op.shared:
            self.stats["shared_pairs"] = self.stats.get("shared_pairs", 0) + 1
        self.flows.update(new)
        self._move_walks(u, w, t, op, gamma)
        self.spread_taken[u] = self.spread_taken.get(u, 0) + gamma
        return True

    def _apply(self, op: _OrbitPair, g: int) -> None:
        """The capacities after splitting γ = ``g`` units of every pair of the orbit."""
        keys = list(op.uses)
        self.set_caps(keys, [op.base[a] + g * op.uses[a] for a in keys])

    def _largest_gamma(self, op: _OrbitPair, gamma: int,
                       ) -> tuple[int, dict[int, np.ndarray]] | None:
        """The largest γ ≤ ``gamma`` (a multiple of ``op.step``) that every representative
        sink passes, split, with the flows that show it; None (nothing split) when it is 0.
        A Newton iteration on the concave flow value (module docstring)."""
        while True:
            self._apply(op, gamma)
            new, cut = self._test_representatives(op, gamma)
            if cut is None:
                return gamma, new
            value, slope = cut
            if slope <= 0:
                raise RuntimeError("internal: a violated cut that the split does not shrink")
            at_zero = value + gamma * slope  # the cut's capacity before the split
            gamma = (at_zero - self.demand) // slope
            gamma -= gamma % op.step
            if gamma <= 0:
                self._apply(op, 0)
                return None

    def _repaired(self, f: np.ndarray, op: _OrbitPair, gamma: int) -> np.ndarray | None:
        """The kept flow ``f`` re-paired at w (γ units of every image of the pair joined
        where f uses both arcs), or None where it then exceeds a split link's capacity."""
        if op.shared:  # images share links: one image after the other
            g = f.copy()
            for x, y, z in op.arcs:
                d = min(g[x], g[y], gamma)
                g[x] -= d
                g[y] -= d
                if z >= 0:
                    g[z] += d
            ok = all(g[a] <= self.cap[a] for a, k in op.uses.items() if k < 0)
            return g if ok else None
        xs = [x for x, _, _ in op.arcs]
        ys = [y for _, y, _ in op.arcs]
        a, b = f[xs], f[ys]
        d = np.minimum(np.minimum(a, b), gamma)
        if not bool(np.all(a - d <= op.c_uw - gamma) and np.all(b - d <= op.c_wt - gamma)):
            return None
        g = f.copy()
        g[xs] -= d
        g[ys] -= d
        for (_, _, z), dz in zip(op.arcs, d.tolist()):
            if z >= 0:
                g[z] += dz
        return g

    def _test_representatives(self, op: _OrbitPair, gamma: int,
                              ) -> tuple[dict[int, np.ndarray], tuple[int, int] | None]:
        """A flow of value ≥ D per representative sink in the split graph (a kept flow
        re-paired at w, or a max-flow), or the (value, slope in γ) of a violated cut."""
        new: dict[int, np.ndarray] = {}
        for r in self.sym.reps:
            g = self._repaired(self.flows[r], op, gamma)
            if g is not None:
                new[r] = g
                self.stats["repairs"] += 1
                continue
            value, flow, side = self.solve(r)
            self.stats["resolves"] += 1
            if value >= self.demand:
                new[r] = flow
                continue
            slope = 0
            for a_, b_, c_ in op.pairs:
                slope += ((a_ in side and b_ not in side) + (b_ in side and c_ not in side)
                          - (a_ in side and c_ not in side))
            return new, (value, slope)
        return new, None

    def _move_walks(self, u: int, w: int, t: int, op: _OrbitPair, gamma: int) -> None:
        """γ units of walks for the representative pair, taken from the canonical bags
        of its arcs' orbits and joined into the bag of (u, t)'s orbit (:mod:`.symbags`),
        and the routing table of Alg 1 for the representative pair."""
        left = self.bags.take(u, w, op.kp, gamma, op.step)
        right = self.bags.take(w, t, op.kp, gamma, op.step)
        if u != t:
            self.bags.join_add(left, right, op.kp, u, t)
            key = (self.nodes[u], self.nodes[t])
            row = self.routing.setdefault(key, {})
            row[self.nodes[w]] = row.get(self.nodes[w], 0) + gamma

    def stabilizer_outs(self, w: int, outs: list[int]) -> list[int]:
        """One egress per orbit of the elements that fix w (the others are split with
        it, as images of its pairs)."""
        fix = self.group.stab(w)
        if fix.sum() == 1:
            return outs
        return [t for t in outs if t == self.group.least_under(fix, t)]

    def remove(self, w: int) -> None:
        ins = self.live_in(w)
        outs = self.stabilizer_outs(w, self.live_out(w))
        for t in outs:
            dist = self._dist_to(t, w)
            i_wt = self.arc[(w, t)]
            hops = {u: dist.get(u, self.n) for u in ins}
            order = ingress_order(ins, t, hops)
            if self.far and t < self.nc:  # GPUs of other boxes: spread far
                order = far_spread(order, hops, self.n, self.box_distances(ins, t),
                                   SPREAD_WAYS)
            self.spread_taken = {}
            first = self.cap[i_wt]
            for spread in (first, 0) if self.spread and SPREAD_WAYS else (0,):
                for u in order:
                    if self.cap[i_wt] == 0:
                        break
                    while self.cap[self.arc[(u, w)]] > 0 and self.cap[i_wt] > 0:
                        if not self.split_orbit(u, w, t, spread):
                            break  # (a split of walks in blocks of another size goes on)
            if self.cap[i_wt] != 0:
                raise SymmetryFailed(f"no orbit split empties {self.nodes[w]!r} -> "
                                     f"{self.nodes[t]!r}")
        for x in self.group.orbit_nodes(w):
            if self.live_in(x) or self.live_out(x):
                raise SymmetryFailed(f"switch {self.nodes[x]!r} not isolated by orbit splits")

    def box_distances(self, ins: Sequence[int], t: int,
                      ) -> tuple[dict[int, int], dict[int, int]] | None:
        """How many boxes after t's box each compute ingress lies, in the cyclic order
        of the boxes (the symmetry's ``box_of``, or the element of a box shift), and
        how many places after t's place in its box it lies (places: the compute nodes
        of a box in index order); None where every compute node is in one box (nothing
        to spread by) or above :data:`FAR_BOXES` boxes: :func:`.farspread.far_spread`."""
        if self.boxes is None:  # once: each compute node's box, the count, its place
            box = self.sym.box_of or [self.sym.element[v] for v in range(self.nc)]
            seen: dict[int, int] = {}
            place = []
            for v in range(self.nc):
                place.append(seen.get(box[v], 0))
                seen[box[v]] = place[-1] + 1
            self.boxes = (list(box), max(box) + 1, place)
        box, count, place = self.boxes
        if count < 2 or count > FAR_BOXES:
            return None
        far = {u: (box[u] - box[t]) % count for u in ins if u < self.nc}
        return far, {u: (place[u] - place[t]) % (self.nc // count) for u in far}

    def joins_an_orbit(self, w: int) -> bool:
        """Whether splitting off w would join two switches of one orbit (a core switch
        of a fat tree between the aggregation switches of two pods): a switch orbit
        with links inside it cannot be split off by orbits, so such w go last."""
        seen: dict[int, int] = {}
        for x in self.live_in(w) + self.live_out(w):
            if x >= self.nc and self.moved[x]:
                if seen.setdefault(self.orbit_rep[x], x) != x:
                    return True
        return False

    def _dist_to(self, t: int, banned: int) -> dict[int, int]:
        """Hop distances to t in the live graph without ``banned`` (BFS backwards)."""
        dist = {t: 0}
        q = deque([t])
        while q:
            x = q.popleft()
            for i in self.inn[x]:
                a = self.tails[i]
                if self.cap[i] > 0 and a != self.s and a != banned and a not in dist:
                    dist[a] = dist[x] + 1
                    q.append(a)
        return dist

    # -------------------------------------------------------------- result
    def result(self, compute: Sequence[Node], supply: Sequence[int]) -> SplitResult:
        nodes, nc = self.nodes, self.nc
        capacity: dict[tuple[Node, Node], int] = {}
        paths: dict[tuple[Node, Node], dict[tuple[Node, ...], int]] = {}
        for i in self.gstar_arcs(self.s, nc):
            a, b = self.tails[i], self.heads[i]
            key = (nodes[a], nodes[b])
            capacity[key] = self.cap[i]
            walks = self.bags.walks_of(a, b)
            if sum(walks.values()) != self.cap[i]:
                raise RuntimeError("internal: a G* arc's walks do not add up to its capacity")
            paths[key] = {tuple(nodes[x] for x in p): u for p, u in walks.items()}
        return SplitResult(tuple(compute), {c: int(x) for c, x in zip(compute, supply)},
                           self.demand, capacity, paths, self.routing,
                           self._mapped_flows(compute), dict(self.stats))

    def _mapped_flows(self, compute: Sequence[Node]) -> dict[Node, dict[tuple[Node | None, Node],
                                                                        int]]:
        """Every compute node's flow (its representative's mapped by the group element
        that takes it there), or none above :data:`FLOW_CERTIFICATE_LIMIT` entries."""
        nodes, nc = self.nodes, self.nc
        support = {r: [i for i in range(len(self.tails)) if i < len(f) and f[i]]
                   for r, f in self.flows.items()}
        if nc * max((len(x) for x in support.values()), default=0) > FLOW_CERTIFICATE_LIMIT:
            self.stats["flows_omitted"] = 1
            return {}
        flows: dict[Node, dict[tuple[Node | None, Node], int]] = {}
        for r, f in self.flows.items():
            for j in range(self.sym.order):
                p = self.group.row(j)
                fv: dict[tuple[Node | None, Node], int] = {}
                for i in support[r]:
                    a, b = self.tails[i], self.heads[i]
                    fv[(None if a == self.s else nodes[p[a]], nodes[p[b]])] = int(f[i])
                flows[nodes[p[r]]] = fv
        return {c: flows[c] for c in compute}


def remove_switches_orbits(
    compute: Sequence[Node],
    switches: Sequence[Node],
    caps: Mapping[tuple[Node, Node], int],
    supply: Mapping[Node, int],
    sym: Symmetry,
    *,
    engine: str = "auto",
    progress: Progress | None = None,
    spread: bool = True,
    far: bool = False,
) -> SplitResult:
    """Split off every switch orbit-wise (module docstring). ``sym`` acts on the
    indices of ``list(compute) + list(switches)`` and must be an automorphism of
    ``caps`` and ``supply`` (checked here again). ``spread``: a first pass at every
    egress that limits each G* arc (:data:`SPREAD_WAYS`); ``far``: that pass takes the
    GPUs of other boxes at geometric box distances first (:func:`.farspread.far_spread`). Raises
    :class:`SymmetryFailed` when an orbit split gets stuck."""
    nodes = list(compute) + list(switches)
    idx = {v: i for i, v in enumerate(nodes)}
    nc = len(compute)
    icaps = {(idx[a], idx[b]): int(c) for (a, b), c in caps.items() if c > 0}
    sup = [int(supply.get(c, 0)) for c in compute]
    problem = sym.verify(nc, icaps, supply={v: x for v, x in enumerate(sup)})
    if problem:
        raise SymmetryFailed(problem)
    sp = _OrbitSplitter(nodes, nc, icaps, sup, sym, engine, spread)
    sp.far = far
    sp.initial_flows()
    least = sp.orbit_rep
    remaining = {least[w] for w in range(nc, len(nodes))}
    size: dict[int, int] = {}
    for w in range(nc, len(nodes)):
        size[least[w]] = size.get(least[w], 0) + 1
    done = 0
    while remaining:
        w = min(remaining, key=lambda x: (sp.joins_an_orbit(x),
                                          len(sp.live_in(x)) * len(sp.live_out(x)), x))
        remaining.discard(w)
        sp.remove(w)
        done += size[w]
        if progress:
            progress(done, len(switches))
    return sp.result(compute, sup)
