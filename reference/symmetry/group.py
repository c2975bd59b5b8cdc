"""A finite abelian group of automorphisms acting freely on the compute nodes.

:class:`Symmetry` is H = <g_0> × <g_1> × … × <g_{k-1}>: commuting automorphisms
g_i of orders m_i whose products g_0^{a_0} ∘ … ∘ g_{k-1}^{a_{k-1}} (0 ≤ a_i < m_i)
are |H| = Π m_i distinct permutations, none of which but the identity fixes a
compute node. A box shift (:mod:`.boxes`) is the case k = 1; the product groups
of :mod:`.product` (server shift × rail shift, rack × tray × GPU) and the
translations of a torus (:mod:`.translations`) have several factors.

Element indices are mixed-radix, generator 0 the fastest digit:
j = a_0 + m_0·(a_1 + m_1·(a_2 + …)); ``perms[j]`` is that element as an index
array over ``nodes`` (compute nodes first), ``perms[0]`` the identity and, for
one generator, ``perms[1]`` = σ as before. The group is abelian, so composing
elements adds their digits modulo the orders (:meth:`Symmetry.compose`).

Nothing here is trusted: :meth:`Symmetry.verify` checks exactly, link by link,
that every generator is an automorphism of the given capacities (keeping compute
nodes, multicast switches and supplies), that the generators commute and have
the stated orders, that ``perms`` holds exactly the products, and that H acts
freely on the compute nodes with the stated representatives. Certificates list
the generators and ``collcert.certify`` verifies them again from the topology.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence

import numpy as np

Node = Hashable


MAX_TABLE_ENTRIES = 80_000_000
"""Most entries (elements × nodes) of a group's table of permutations (320 MB as int32):
a larger group is kept by its generators, which is all the optimum needs (one max-flow
per orbit); building by orbits asks it through :meth:`Symmetry.apply`, :meth:`Symmetry.image`
and :meth:`Symmetry.images_under` (the generators' cycles), never through ``perms``."""


class TableTooLarge(ValueError):
    """The group's table of elements would exceed :data:`MAX_TABLE_ENTRIES`."""


class Symmetry:
    """The group H of the module docstring and its orbits of compute nodes.

    ``perms[j]`` is element j as an index array over ``nodes`` (``perms[0]`` is the
    identity), made from the generators on first use when not given (and refused,
    :class:`TableTooLarge`, past :data:`MAX_TABLE_ENTRIES`). ``reps`` are the
    representative compute nodes (indices), one per orbit; ``element[v]`` /
    ``rep_of[v]`` give, for a compute node v, the j and the representative r with
    v = perms[j][r]. ``orders``: the generators' orders when there are several
    (empty: one generator σ = perms[1], of order ``len(perms)`` or ``size``).
    ``box_of``: optionally the box of each compute node (its NVLink domain, say),
    which the greedy of ``forestcoll.sympack`` fills before leaving; empty: the
    group element. ``gens`` and ``size``: the generators and the number of elements
    of a group given without its table."""

    def __init__(self, nodes: tuple[Node, ...], perms: np.ndarray | None, reps: list[int],
                 element: dict[int, int], rep_of: dict[int, int],
                 orders: tuple[int, ...] = (), box_of: list[int] | None = None, *,
                 gens: Sequence[np.ndarray] = (), size: int = 0) -> None:
        self.nodes = nodes
        self._table = perms
        self.reps = reps
        self.element = element
        self.rep_of = rep_of
        self.orders = orders
        self.box_of: list[int] = box_of or []
        self._gens = [np.asarray(g) for g in gens]
        self._size = size
        self.fallback: Symmetry | None = None  # a smaller group found beside it (a box shift)
        self._verified: set[tuple[object, ...]] = set()
        self._cyc: _Cycles | None = None  # the generators' cycles (table-free images)
        if perms is None and (not gens or (size < 2 and not orders)):
            raise ValueError("internal: a Symmetry needs its table or its generators")

    @property
    def perms(self) -> np.ndarray:
        """Every element as a row (made from the generators on first use)."""
        if self._table is None:
            if self.order * len(self.nodes) > MAX_TABLE_ENTRIES:
                raise TableTooLarge(
                    f"the group of {self.order} elements on {len(self.nodes)} nodes is kept "
                    f"by its generators only (a table of every element would hold "
                    f"{self.order * len(self.nodes):,} entries, more than "
                    f"{MAX_TABLE_ENTRIES:,})")
            self._table = _table(self._gens, self.factors, len(self.nodes))
        return self._table

    @property
    def tabled(self) -> bool:
        """Whether every element fits in a table (what building by orbits needs)."""
        return self._table is not None or self.order * len(self.nodes) <= MAX_TABLE_ENTRIES

    @property
    def order(self) -> int:
        if self._table is not None:
            return int(self._table.shape[0])
        return math.prod(self.orders) if self.orders else self._size

    @property
    def factors(self) -> tuple[int, ...]:
        """The orders m_i of the generators (one factor for a box shift)."""
        return self.orders or (self.order,)

    @property
    def strides(self) -> tuple[int, ...]:
        out, s = [], 1
        for m in self.factors:
            out.append(s)
            s *= m
        return tuple(out)

    def generators(self) -> list[np.ndarray]:
        """The generators g_i as index arrays."""
        if self._table is None:
            return list(self._gens)
        return [self._table[s] for s in self.strides]

    def digits(self, j: int) -> list[int]:
        out = []
        for m in self.factors:
            j, a = divmod(j, m)
            out.append(a)
        return out

    def compose(self, a: int, b: int) -> int:
        """The index of (element a) ∘ (element b): digits added modulo the orders."""
        if not self.orders:
            return (a + b) % self.order
        out, s = 0, 1
        for m in self.orders:
            a, da = divmod(a, m)
            b, db = divmod(b, m)
            out += ((da + db) % m) * s
            s *= m
        return out

    def compose_many(self, js: np.ndarray, b: int) -> np.ndarray:
        """The indices of (element j) ∘ (element b) for every j in ``js`` (vectorised)."""
        if not self.orders:
            return (js + b) % self.order
        out = np.zeros_like(js)
        rest_a, rest_b = js.copy(), b
        for m, s in zip(self.factors, self.strides):
            rest_b, db = divmod(rest_b, m)
            da = rest_a % m
            rest_a //= m
            out += ((da + db) % m) * s
        return out

    def inverse(self, a: int) -> int:
        """The index of the inverse of element a."""
        return sum(((-d) % m) * s for d, m, s in zip(self.digits(a), self.factors,
                                                     self.strides))

    def verify(self, num_compute: int, arcs: Mapping[tuple[int, int], object],
               multicast: frozenset[int] = frozenset(),
               supply: Mapping[int, int] | None = None) -> str | None:
        """None when the module docstring's claims hold for ``arcs`` (capacities on node
        indices; compute nodes are 0 .. num_compute-1), ``multicast`` and ``supply``;
        else the reason."""
        if self.order < 2:
            return "the group is trivial"
        elements = (self._table if self._table is not None
                    else np.stack(self._gens) if self._gens else np.zeros(0))
        key = (num_compute, hash(tuple(arcs.items())), hash(multicast),
               None if supply is None else hash(tuple(sorted(supply.items()))),
               hash(np.ascontiguousarray(elements).tobytes()), self.orders, self._size)
        if key in self._verified:  # the same capacities (and the rest) checked already
            return None
        problem = self._verify(num_compute, arcs, multicast, supply)
        if problem is None:
            self._verified.add(key)
        return problem

    def _verify(self, num_compute: int, arcs: Mapping[tuple[int, int], object],
                multicast: frozenset[int], supply: Mapping[int, int] | None) -> str | None:
        if math.prod(self.factors) != self.order:
            return "the orders do not multiply to the number of elements"
        gens = self.generators()
        for i, g in enumerate(gens):
            problem = _automorphism_problem(self.nodes, g.tolist(), num_compute, arcs,
                                            multicast, supply)
            if problem:
                return f"generator {i}: {problem}"
        for i, g in enumerate(gens):
            for h in gens[i + 1:]:
                if not np.array_equal(g[h], h[g]):
                    return "two generators do not commute"
        problem = (self._table_problem(gens) if self._table is not None
                   else self._orders_problem(gens))
        return problem or self._free_problem(num_compute)

    def images(self, v: int) -> np.ndarray:
        """Element j's image of node v, for every j (a column of the table)."""
        if self._table is not None:
            return self._table[:, v]
        col = np.asarray([v])
        for g, m in zip(self._gens, self.factors):
            block = [col]
            for _ in range(1, m):
                block.append(g[block[-1]])
            col = np.concatenate(block)  # the new factor is the slower digit
        return col

    def apply(self, j: int, vs: Sequence[int] | np.ndarray) -> np.ndarray:
        """Element j's images of the nodes ``vs`` (a row of the table, in part)."""
        if self._table is not None:
            return np.asarray(self._table[j][np.asarray(vs, dtype=np.int64)])
        return self._cycles().advance(np.asarray(vs, dtype=np.int64),
                                      [np.int64(a) for a in self.digits(j)])

    def image(self, j: int, v: int) -> int:
        """Element j's image of node v."""
        if self._table is not None:
            return int(self._table[j, v])
        return self._cycles().image(self.digits(j), v)

    def map_nodes(self, j: int, vs: Sequence[int]) -> tuple[int, ...]:
        """Element j's images of a few nodes (a walk), as a tuple."""
        if self._table is not None:
            row = self._table[j]
            return tuple(int(row[v]) for v in vs)
        cyc, digits = self._cycles(), self.digits(j)
        return tuple(cyc.image(digits, v) for v in vs)

    def images_under(self, v: int, js: np.ndarray) -> np.ndarray:
        """The images of node v by the elements ``js`` (a column of the table, in part)."""
        if self._table is not None:
            return np.asarray(self._table[js, v])
        js = np.asarray(js, dtype=np.int64)
        digits = []
        for m in self.factors:
            digits.append(js % m)
            js = js // m
        return self._cycles().advance(np.full(len(digits[0]), v, dtype=np.int64), digits)

    def _cycles(self) -> _Cycles:
        if self._cyc is None:
            self._cyc = _Cycles(self.generators())
        return self._cyc

    def _orders_problem(self, gens: list[np.ndarray]) -> str | None:
        """Without a table: every cycle of g_i has a length dividing m_i."""
        for g, m in zip(gens, self.factors):
            seen = np.zeros(len(g), dtype=bool)
            gl = g.tolist()
            for v in range(len(gl)):
                if seen[v]:
                    continue
                x, length = v, 0
                while not seen[x]:
                    seen[x] = True
                    x = gl[x]
                    length += 1
                if m % length:
                    return f"a generator's order is not {m}"
        return None

    def _table_problem(self, gens: list[np.ndarray]) -> str | None:
        """Whether ``perms`` holds exactly the products and g_i^{m_i} is the identity."""
        n = len(self.nodes)
        ident = np.arange(n)
        if not np.array_equal(self.perms[0], ident):
            return "perms[0] is not the identity"
        table = ident[None, :]
        for g, m in zip(gens, self.factors):
            block = [table]
            for _ in range(1, m):
                block.append(g[block[-1]])
            if not np.array_equal(g[block[-1]], table):
                return f"a generator's order is not {m}"
            table = np.stack(block, axis=0).reshape(-1, n)
        if not np.array_equal(table, self.perms):
            return "perms is not the table of products of the generators"
        return None

    def _free_problem(self, num_compute: int) -> str | None:
        """Whether the representatives' orbits partition the compute nodes, each with
        |H| distinct nodes (then no element but the identity fixes a compute node), and
        ``element``/``rep_of`` place every compute node."""
        reps = np.asarray(self.reps, dtype=np.int64)
        if len(reps) * self.order != num_compute:
            return (f"{len(self.reps)} representatives × {self.order} elements is not the "
                    f"{num_compute} compute nodes")
        images = np.concatenate([self.images(int(r)) for r in reps])
        if len(np.unique(images)) != num_compute or int(images.max()) >= num_compute:
            return "the group does not act freely on the compute nodes"
        cols = {int(r): self.images(int(r)) for r in reps}
        for v in range(num_compute):
            j, r = self.element.get(v), self.rep_of.get(v)
            if j is None or r not in cols or int(cols[r][j]) != v:
                return f"element/rep_of misplace compute node {self.nodes[v]!r}"
        return None


def _automorphism_problem(nodes: Sequence[Node], g: list[int], num_compute: int,
                          arcs: Mapping[tuple[int, int], object], multicast: frozenset[int],
                          supply: Mapping[int, int] | None) -> str | None:
    n = len(g)
    if sorted(g) != list(range(n)):
        return "not a permutation"
    for v in range(n):
        if (v < num_compute) != (g[v] < num_compute):
            return f"maps {nodes[v]!r} to a node of the other kind"
        if (v in multicast) != (g[v] in multicast):
            return f"does not keep the multicast switch {nodes[v]!r}"
    for (a, b), c in arcs.items():
        if arcs.get((g[a], g[b])) != c:
            return (f"maps link {nodes[a]!r} -> {nodes[b]!r} to a pair that is not a link of "
                    "the same capacity")
    if supply is not None:
        for v in range(num_compute):
            if supply.get(v, 0) != supply.get(g[v], 0):
                return f"changes the supply of {nodes[v]!r}"
    return None


def product_symmetry(nodes: Sequence[Node], num_compute: int, gens: Sequence[Sequence[int]],
                     orders: Sequence[int]) -> Symmetry | None:
    """The :class:`Symmetry` generated by commuting ``gens`` of ``orders`` (index
    permutations), its representatives the least compute node of each orbit; None when
    it does not act freely (not verified against links here: :meth:`Symmetry.verify`
    does that). Its table is made only when it fits :data:`MAX_TABLE_ENTRIES`."""
    n = len(nodes)
    size = math.prod(orders)
    if size < 2:
        return None
    dtype = np.int32 if n < 2**31 else np.int64
    arrays = [np.asarray(g, dtype=dtype) for g in gens]
    factors = tuple(int(m) for m in orders)
    table = _table(arrays, factors, n) if size * n <= MAX_TABLE_ENTRIES else None
    sym = Symmetry(tuple(nodes), table, [], {}, {}, factors if len(orders) > 1 else (),
                   gens=arrays, size=size)
    placed = np.full(num_compute, -1, dtype=np.int64)
    for r in range(num_compute):  # the least unplaced node is the least of its orbit
        if placed[r] >= 0:
            continue
        col = sym.images(r)
        if len(col) != size or int(col.max()) >= num_compute or (placed[col] >= 0).any() or \
                len(np.unique(col)) != size:
            return None
        placed[col] = r
        sym.reps.append(r)
        for j, v in enumerate(col.tolist()):
            sym.element[v] = j
            sym.rep_of[v] = r
    return sym


def _table(gens: Sequence[np.ndarray], factors: Sequence[int], n: int) -> np.ndarray:
    """Every product of the generators, element j in row j (mixed radix, g_0 fastest)."""
    dtype = np.int32 if n < 2**31 else np.int64
    table = np.arange(n, dtype=dtype)[None, :]
    for g, m in zip(gens, factors):
        ga = np.asarray(g, dtype=dtype)
        block = [table]
        for _ in range(1, m):
            block.append(ga[block[-1]])
        table = np.stack(block, axis=0).reshape(-1, n)
    return table


class _Cycles:
    """Each generator's cycles, so that g_i^a(v) is one lookup: node v lies at place
    ``pos[v]`` of a cycle of ``length[v]`` nodes stored from ``start[v]`` in ``flat``.
    What the group's elements do without a table of them (element j: the generators'
    powers by its digits, in any order, the group being abelian)."""

    def __init__(self, gens: Sequence[np.ndarray]) -> None:
        self.tables = [_cycle_table(np.asarray(g, dtype=np.int64)) for g in gens]
        self.lists = [tuple(a.tolist() for a in tab) for tab in self.tables]

    def image(self, digits: Sequence[int], v: int) -> int:
        """g_0^{d_0} ∘ …(v) for one node (Python lists: faster than arrays for one)."""
        for (flat, start, length, pos), d in zip(self.lists, digits):
            if d:
                v = flat[start[v] + (pos[v] + d) % length[v]]
        return v

    def advance(self, vs: np.ndarray, digits: Sequence[np.ndarray | np.int64]) -> np.ndarray:
        """The images of ``vs`` by g_0^{d_0} ∘ … (the d_i scalars or arrays like vs)."""
        for (flat, start, length, pos), d in zip(self.tables, digits):
            vs = flat[start[vs] + (pos[vs] + d) % length[vs]]
        return vs


def _cycle_table(g: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(flat, start, length, pos) of the permutation g (class :class:`_Cycles`)."""
    n = len(g)
    flat = np.empty(n, dtype=np.int64)
    start = np.empty(n, dtype=np.int64)
    length = np.empty(n, dtype=np.int64)
    pos = np.empty(n, dtype=np.int64)
    seen = np.zeros(n, dtype=bool)
    at = 0
    gl = g.tolist()
    for v in range(n):
        if seen[v]:
            continue
        cyc = [v]
        x = gl[v]
        while x != v:
            cyc.append(x)
            x = gl[x]
        k = len(cyc)
        idx = np.asarray(cyc, dtype=np.int64)
        flat[at:at + k] = idx
        seen[idx] = True
        start[idx] = at
        length[idx] = k
        pos[idx] = np.arange(k)
        at += k
    return flat, start, length, pos
