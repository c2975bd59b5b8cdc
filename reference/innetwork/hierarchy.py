"""Two-level machines by their symmetry: boxes of GPUs on a reducing switch, one top switch.

The machines of NVLink SHARP: DGX H100/H200/B200 boxes and GB200 NVL72 racks
(``dgx_h100``, ``dgx_b200``, ``gb200_nvl72``). :func:`recognise` finds the shape in
any topology: *hubs* (reducing switches joined only to compute nodes), each
compute node on exactly one hub, boxes of equal size g, and, with several boxes,
each GPU's private route (directly, or through a NIC switch of its own) to one
shared top switch T; then two permutations, σ (box b → b+1) and τ (GPU i → i+1
in every box), verified exactly as automorphisms that keep every capacity,
reducing switch, multicast switch and reduction rate.

The group H they generate maps structures to structures, and the in-network LP
to itself, so an optimal schedule may be taken H-invariant: the average over H
of a few *representative* structures. A link's load under that average is
Σ_T W_T · m_P(T) / |P|, with P the link's orbit and m_P(T) the number of T's
path steps in P (orbit-stabiliser), which :mod:`collcert.certify.innetwork`
recomputes from the generators without expanding anything. The representatives
here are the reduce-broadcast patterns of a two-level machine: the root is a GPU,
a hub or T; in each box, the reduce tree adds at the hub (every GPU but one goes
up, the hub's sum comes down to the GPU that leaves the box) or sends every GPU's
data over the top switch; the broadcast tree enters each box once and copies at
the hub, or reaches every GPU over the top switch; T adds or copies where it may.
Under lengths that H keeps, a box's part of a tree costs a linear function of the
number of its GPUs that go up, which motivates the two ends (docs/in-network.md);
the LP over them is solved exactly and its value is a certified lower bound, exact
only where :mod:`.rate` finds an upper bound that meets it.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ..model import Link, Node, Topology
from ..solvers import LinearProgram, solve_lp
from .structures import Path, Structure


@dataclass
class TwoLevel:
    """The shape :func:`recognise` found."""

    boxes: list[list[Node]]      # GPUs of box b, in compute-node order
    hubs: list[Node]
    top: Node | None
    nic: dict[Node, Node]        # GPU -> its NIC switch (absent: linked to T directly)
    generators: list[dict[Node, Node]]

    def up(self, b: int, x: Node) -> Path:
        return (x, self.hubs[b])

    def down(self, b: int, x: Node) -> Path:
        return (self.hubs[b], x)

    def to_top(self, x: Node) -> Path:
        assert self.top is not None
        return (x, self.nic[x], self.top) if x in self.nic else (x, self.top)

    def from_top(self, x: Node) -> Path:
        assert self.top is not None
        return (self.top, self.nic[x], x) if x in self.nic else (self.top, x)

    def across(self, x: Node, y: Node) -> Path:
        return self.to_top(x) + self.from_top(y)[1:]


def _neighbours(t: Topology) -> dict[Node, set[Node]]:
    adj: dict[Node, set[Node]] = {v: set() for v in t.nodes}
    for u, v in t.capacity:
        adj[u].add(v)
        adj[v].add(u)
    return adj


def _boxes(t: Topology, adj: dict[Node, set[Node]]) -> tuple[list[Node], list[list[Node]]] | None:
    compute = set(t.compute_nodes)
    hubs = [w for w in t.switch_nodes if w in t.reducing_switches and adj[w]
            and adj[w] <= compute]
    owner: dict[Node, int] = {}
    for b, w in enumerate(hubs):
        for x in adj[w]:
            if x in owner or (x, w) not in t.capacity or (w, x) not in t.capacity:
                return None
            owner[x] = b
    if set(owner) != compute:
        return None
    boxes = [[x for x in t.compute_nodes if owner[x] == b] for b in range(len(hubs))]
    if len({len(b) for b in boxes}) != 1 or len(boxes[0]) < 2:
        return None
    return hubs, boxes


def _routes(t: Topology, adj: dict[Node, set[Node]], hubs: list[Node],
            ) -> tuple[Node | None, dict[Node, Node]] | None:
    """The top switch and the NICs, or None when a GPU's other links do not fit."""
    if len(hubs) == 1:
        others = [v for v in t.nodes if adj[v] and v not in hubs and not t.is_compute(v)]
        return (None, {}) if not others else None
    top: Node | None = None
    nic: dict[Node, Node] = {}
    hub_set = set(hubs)
    for x in t.compute_nodes:
        rest = adj[x] - hub_set
        if len(rest) != 1:
            return None
        (r,) = rest
        if not t.is_compute(r) and r not in t.reducing_switches and adj[r] - {x} and \
                len(adj[r]) == 2:
            nic[x] = r
            (r,) = adj[r] - {x}
        if top is None:
            top = r
        if r != top or t.is_compute(r):
            return None
    used = set(t.compute_nodes) | hub_set | set(nic.values()) | {top}
    if any(adj[v] for v in t.nodes if v not in used):
        return None
    return top, nic


def _verify(t: Topology, sigma: dict[Node, Node]) -> bool:
    """σ is an automorphism keeping compute nodes, capacities and every capability."""
    def img(v: Node) -> Node:
        return sigma.get(v, v)
    if sorted(map(str, sigma.values())) != sorted(map(str, sigma)):
        return False
    for v in sigma:
        if (t.is_compute(v) != t.is_compute(img(v))
                or (v in t.reducing_switches) != (img(v) in t.reducing_switches)
                or (v in t.nvls_switches) != (img(v) in t.nvls_switches)
                or (v in t.multicast_switches) != (img(v) in t.multicast_switches)
                or t.reduction_rates.get(v) != t.reduction_rates.get(img(v))):
            return False
    return all(t.capacity.get((img(u), img(v))) == c for (u, v), c in t.capacity.items())


def recognise(t: Topology) -> TwoLevel | None:
    """The two-level shape of ``t`` with its verified generators, or None."""
    adj = _neighbours(t)
    found = _boxes(t, adj)
    if found is None:
        return None
    hubs, boxes = found
    routes = _routes(t, adj, hubs)
    if routes is None:
        return None
    top, nic = routes
    n, g = len(boxes), len(boxes[0])
    shift: dict[Node, Node] = {}
    turn: dict[Node, Node] = {}
    for b in range(n):
        if n > 1:
            shift[hubs[b]] = hubs[(b + 1) % n]
        for i, x in enumerate(boxes[b]):
            for m, step in ((shift, (boxes[(b + 1) % n][i])), (turn, boxes[b][(i + 1) % g])):
                if m is shift and n == 1:
                    continue
                m[x] = step
                if x in nic:
                    m[nic[x]] = nic[step]
    gens = [s for s in (shift, turn) if s]
    if not all(_verify(t, s) for s in gens):
        return None
    return TwoLevel(boxes, hubs, top, nic, gens)


# --------------------------------------------------------------------------- #
# the representative structures
# --------------------------------------------------------------------------- #
def _reduce_box(h: TwoLevel, b: int, mode: str, sink: Node | None,
                exit_to: object) -> list[Path]:
    """Reduce paths of box b: ``nvs`` (all but the exit GPU up, the hub's sum down to it:
    with an NVLS hub, the exit GPU's load-reduce, its own share going up too), ``uni``
    (every other GPU through the hub to the exit GPU, which adds) or ``ib`` (every GPU
    over the top). ``sink``: the GPU of this box that merges what the box sends (the
    root's box), or None (the box sends out with ``exit_to(x)``)."""
    gpus = h.boxes[b]
    out: list[Path] = []
    if mode in ("nvs", "uni"):
        e = sink if sink is not None else gpus[0]
        if mode == "nvs":
            out += [h.up(b, x) for x in gpus if x != e]
            out.append(h.down(b, e))
        else:
            out += [h.up(b, x) + h.down(b, e)[1:] for x in gpus if x != e]
        if sink is None:
            out.append(exit_to(e))  # type: ignore[operator]
    else:
        for x in gpus:
            if x != sink:
                out.append(h.across(x, sink) if sink is not None else exit_to(x))  # type: ignore[operator]
    return out


def _broadcast_box(h: TwoLevel, b: int, mode: str, source: Node | None,
                   enter: object) -> list[Path]:
    """Broadcast paths of box b: ``nvs`` (one GPU receives, up to the hub, copies down: with
    an NVLS hub, that GPU's multicast store, which writes it too), ``uni`` (that GPU to
    each other one through the hub) or ``ib`` (each GPU over the top). ``source``: the
    box's GPU that already holds the sum."""
    gpus = h.boxes[b]
    out: list[Path] = []
    if mode in ("nvs", "uni"):
        e = source if source is not None else gpus[0]
        if source is None:
            out.append(enter(e))  # type: ignore[operator]
        if mode == "nvs":
            out.append(h.up(b, e))
            out += [h.down(b, x) for x in gpus if x != e]
        else:
            out += [h.up(b, e) + h.down(b, x)[1:] for x in gpus if x != e]
    else:
        for x in gpus:
            if x != source:
                out.append(h.across(source, x) if source is not None else enter(x))  # type: ignore[operator]
    return out


def _gpu_rooted(h: TwoLevel, t: Topology, modes: tuple[str, ...], via: tuple[bool, bool],
                ) -> Structure:
    r = h.boxes[0][0]
    in_root, in_other, out_root, out_other = modes
    red: list[Path] = _reduce_box(h, 0, in_root, r, None)
    exit_to = (lambda x: h.to_top(x)) if via[0] else (lambda x: h.across(x, r))
    for b in range(1, len(h.boxes)):
        red += _reduce_box(h, b, in_other, None, exit_to)
    if via[0] and len(h.boxes) > 1:
        red.append(h.from_top(r))
    bc: list[Path] = _broadcast_box(h, 0, out_root, r, None)
    enter = (lambda x: h.from_top(x)) if via[1] else (lambda x: h.across(r, x))
    for b in range(1, len(h.boxes)):
        bc += _broadcast_box(h, b, out_other, None, enter)
    if via[1] and len(h.boxes) > 1:
        bc.append(h.to_top(r))
    return Structure(r, tuple(red), tuple(bc))


def _hub_rooted(h: TwoLevel, modes: tuple[str, str], via: tuple[bool, bool]) -> Structure:
    """Root: hub 0. Box 0 sends every GPU up (its GPU 0 also merges what arrives over the
    top); the hub copies down to every GPU of box 0, whose GPU 0 feeds the other boxes."""
    x0 = h.boxes[0][0]
    red: list[Path] = [h.up(0, x) for x in h.boxes[0]]
    exit_to = (lambda x: h.to_top(x)) if via[0] else (lambda x: h.across(x, x0))
    for b in range(1, len(h.boxes)):
        red += _reduce_box(h, b, modes[0], None, exit_to)
    if via[0]:
        red.append(h.from_top(x0))
    bc: list[Path] = [h.down(0, x) for x in h.boxes[0]]
    enter = (lambda x: h.from_top(x)) if via[1] else (lambda x: h.across(x0, x))
    for b in range(1, len(h.boxes)):
        bc += _broadcast_box(h, b, modes[1], None, enter)
    if via[1]:
        bc.append(h.to_top(x0))
    return Structure(h.hubs[0], tuple(red), tuple(bc))


def _top_rooted(h: TwoLevel, modes: tuple[str, str]) -> Structure:
    red: list[Path] = []
    bc: list[Path] = []
    for b in range(len(h.boxes)):
        red += _reduce_box(h, b, modes[0], None, h.to_top)
        bc += _broadcast_box(h, b, modes[1], None, h.from_top)
    assert h.top is not None
    return Structure(h.top, tuple(red), tuple(bc))


def representatives(t: Topology, h: TwoLevel) -> list[Structure]:
    """Every pattern of the module docstring, once. With NVLS hubs (they never hold a sum)
    no structure is rooted at a hub, and boxes of at most 3 GPUs may also route through
    the hub (``uni``): a load-reduce costs its issuer a round trip, which 2 or 3 GPUs
    do not repay."""
    nvls = h.hubs[0] in t.nvls_switches
    g = len(h.boxes[0])
    if len(h.boxes) == 1:
        b = h.boxes[0]
        if not nvls:
            return [Structure(h.hubs[0], tuple(h.up(0, x) for x in b),
                              tuple(h.down(0, x) for x in b))]
        return [_gpu_rooted(h, t, (m, m, m, m), (False, False)) for m in ("nvs", "uni")]
    top = h.top
    adds = top in t.sharp_switches
    copies = adds or top in t.multicast_switches
    vias = [(a, c) for a in (False, True) for c in (False, True)
            if (adds or not a) and (copies or not c)]
    modes: tuple[str, ...] = ("nvs", "ib") + (("uni",) if nvls and g <= 3 else ())
    out = [_gpu_rooted(h, t, m, v) for m in itertools.product(modes, repeat=4) for v in vias]
    pairs = [(a, b) for a in modes for b in modes]
    if not nvls:
        out += [_hub_rooted(h, m, v) for m in pairs for v in vias]
    if adds:
        out += [_top_rooted(h, m) for m in pairs]
    return list(dict.fromkeys(out))


def box_parts(h: TwoLevel) -> list[list[Node]]:
    """The boxes as node sets for a box-dual bound (:mod:`.boxdual`): each box's GPUs, its
    hub and its GPUs' NIC switches."""
    return [[*gpus, h.hubs[b], *(h.nic[x] for x in gpus if x in h.nic)]
            for b, gpus in enumerate(h.boxes)]


# --------------------------------------------------------------------------- #
# the symmetric LP
# --------------------------------------------------------------------------- #
def orbit_classes(t: Topology, gens: list[dict[Node, Node]],
                  ) -> tuple[dict[Link, Link], dict[Node, Node]]:
    """(link -> its orbit's representative, node -> its orbit's representative)."""
    def classes(items: list[Any], pairs: list[tuple[Any, Any]]) -> dict[Any, Any]:
        parent: dict[Any, Any] = {}

        def root(x: object) -> object:
            while parent.get(x, x) != x:
                parent[x] = parent.get(parent[x], parent[x])
                x = parent[x]
            return x
        for a, b in pairs:
            ra, rb = root(a), root(b)
            if ra != rb:
                parent[ra] = rb
        return {x: root(x) for x in items}
    links = classes(list(t.capacity), [((u, v), (s.get(u, u), s.get(v, v)))
                                       for s in gens for (u, v) in t.capacity])
    nodes = classes(list(t.nodes), [(u, w) for s in gens for u, w in s.items()])
    return links, nodes


def symmetric_lp(t: Topology, gens: list[dict[Node, Node]], reps: list[Structure],
                 ) -> tuple[Fraction, list[tuple[Structure, Fraction]], dict[Link, Fraction]]:
    """max Σ W_T over the H-averages of ``reps`` within every link's capacity and every
    rate (see the module docstring): exact value, the positive weights, and the LP's
    dual spread over the links (y_e = y_P / |P| for e in orbit P, so that a structure's
    cost Σ uses_e·y_e is its column's, and Σ b_e·y_e the dual value without rates)."""
    link_of, node_of = orbit_classes(t, gens)
    size: dict[object, int] = {}
    for p in link_of.values():
        size[p] = size.get(p, 0) + 1
    for q in node_of.values():
        size[("node", q)] = size.get(("node", q), 0) + 1
    lp = LinearProgram("max")
    for e, p in link_of.items():
        if e == p:
            lp.add_row(("link", p), {}, "<=", t.capacity[e])
    for w, rate in t.reduction_rates.items():
        if node_of[w] == w:
            lp.add_row(("rate", w), {}, "<=", rate)
    for j, s in enumerate(reps):
        col: dict[object, Fraction] = {}
        for e, k in s.usage(t.nvls_switches).items():
            lk: object = ("link", link_of[e])
            col[lk] = col.get(lk, Fraction(0)) + Fraction(k, size[link_of[e]])
        for w in s.reductions(t.reduction_rates):
            rk: object = ("rate", node_of[w])
            col[rk] = col.get(rk, Fraction(0)) + Fraction(1, size[("node", node_of[w])])
        lp.add_variable(("T", j), 1, column=col)
    res = solve_lp(lp)
    y = {e: Fraction(res.y.get(("link", p), 0)) / size[p] for e, p in link_of.items()}
    return (res.objective, [(s, res.x[("T", j)]) for j, s in enumerate(reps)
                            if res.x[("T", j)]], y)
