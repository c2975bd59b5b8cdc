"""Associative reduction trees: the optimal algorithms of Canon & Antoniu 2012 (Alg 1-3).

"Scheduling Associative Reductions with Homogeneous Costs when Overlapping
Communications and Computations" (L.-C. Canon, G. Antoniu, INRIA RR-7898,
2012). n machines hold one element each at time 0; reducing two elements
costs ``c`` (``compute``), sending one element costs ``d`` (``transfer``). A
machine may receive while it computes, takes part in one transfer at a time,
reduces every element it receives into its own, and then sends its result
once, to its *receiver*. The schedule is an in-tree towards the sink
(machine 1) plus the date of every transfer; its length (makespan) is the
time the sink finishes its last reduction.

Machines are numbered 1..n in the API and the files; the arrays here are
0-based (index ``i`` is machine ``i + 1``) and ``parent[i]`` is the index of
the machine that ``i`` sends to (-1 for the sink). The paper calls that
machine the *child* c_i of i, and a sender a *parent*; this module says
*receiver* and *sender*.

Every algorithm runs on integers: the costs are scaled by the least common
denominator of d and c, so ties are exact and the heap compares plain ints.

* :func:`algorithm1` - Algorithm 1, optimal (Thm 4), Θ(n log n).
* :func:`algorithm2` - Algorithm 2, at most K concurrent transfers (Thm 7),
  with the boundary t_j = 0 for j ≤ 1 and the reversal T - t_i.
* :func:`algorithm3` - Algorithm 3, at most K reducers (Thm 9).
* :func:`non_overlapping` - transfers and reductions never overlap on a
  machine (§3.1): Algorithm 1 with d' = 0, c' = d + c.
* :func:`binomial_strategy`, :func:`fibonacci_strategy` - the trees of
  Algorithm 1 with min(d, c) = 0, resp. d = c, measured under the real costs
  (Thms 18, 19); :func:`binomial_tree`, :func:`fibonacci_tree` - Defs 12, 15.
* :func:`evaluate` - Prop 2-3: eager transfer dates of a tree, senders served
  in ascending order of readiness, and its length.
"""

from __future__ import annotations

import heapq
import math
import operator
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from ..model import CollcertError, TopologyError, check_budget, parse_number


class ReductionError(CollcertError, ValueError):
    """A reduction problem is malformed (n < 1, a negative cost, a bad limit)."""


STRATEGIES = ("optimal", "binomial", "fibonacci")

MAX_MACHINES = 20_000_000


BYTES_PER_MACHINE = 500
"""Memory per machine of building, documenting and checking a schedule (measured with
``/usr/bin/time -v collcert reduce-tree N``: about 430 bytes at N = 1-3 million)."""


def _check_memory(n: int) -> None:
    try:
        check_budget(f"n = {n}", BYTES_PER_MACHINE * n,
                     f"a reduction schedule of {n} machines (its tree, dates and independent "
                     "check)", action="try a smaller n")
    except TopologyError as exc:
        raise ReductionError(str(exc)) from None


@dataclass
class ReductionSchedule:
    """A reduction schedule: the tree, the transfer dates and their length.

    ``parent[i]`` is the 0-based index of the machine that machine ``i + 1``
    sends to (-1 for the sink, index 0); ``send_time[i]`` the date its transfer
    starts (None for the sink), in units of ``1/scale`` of the costs: the true
    date is ``Fraction(send_time[i], scale)``. ``makespan`` is exact.
    """

    n: int
    transfer: Fraction
    compute: Fraction
    parent: list[int]
    send_time: list[int | None]
    scale: int
    makespan: Fraction
    algorithm: str
    model: str = "overlap"
    max_transfers: int | None = None
    max_reducers: int | None = None
    strategy: str = "optimal"
    notes: list[str] = field(default_factory=list)

    def time(self, i: int) -> Fraction | None:
        t = self.send_time[i]
        return None if t is None else Fraction(t, self.scale)

    def receivers(self) -> int:
        """Number of machines that receive (and so reduce) at least one element."""
        return len({p for p in self.parent if p >= 0})


# ---------------------------------------------------------------------------
# input


def check_problem(n: object, transfer: object, compute: object,
                  limit: object = None, limit_name: str = "K") -> tuple[int, Fraction, Fraction]:
    """Validate (n, d, c[, K]); raise :class:`ReductionError` naming the culprit."""
    if isinstance(n, bool) or not isinstance(n, int):
        raise ReductionError(f"n = {n!r}: the number of elements must be an integer")
    if n < 1:
        raise ReductionError(f"n = {n}: there must be at least one element to reduce")
    if n > MAX_MACHINES:
        raise ReductionError(f"n = {n}: at most {MAX_MACHINES} elements are supported")
    if n > 100_000:
        _check_memory(n)
    costs = []
    for name, value in (("transfer cost d", transfer), ("compute cost c", compute)):
        try:
            x = parse_number(value)
        except ValueError as exc:
            raise ReductionError(f"{name}: {exc}") from None
        if x < 0:
            raise ReductionError(f"{name} = {value}: costs must be non-negative")
        costs.append(x)
    if limit is not None:
        if isinstance(limit, bool) or not isinstance(limit, int):
            raise ReductionError(f"{limit_name} = {limit!r}: the limit must be an integer")
        if not 1 <= limit <= n:
            raise ReductionError(f"{limit_name} = {limit}: the limit must lie between 1 and "
                                 f"n = {n}")
    return n, costs[0], costs[1]


def scaled(d: Fraction, c: Fraction) -> tuple[int, int, int]:
    """(D, C, L): integer costs D = d·L, C = c·L over the common denominator L."""
    scale = math.lcm(d.denominator, c.denominator)
    return int(d * scale), int(c * scale), scale


# ---------------------------------------------------------------------------
# Algorithms 1 and 3 (reversed time, heap keyed by (s_j, j))


def greedy_reversed(n: int, D: int, C: int, reducers: int | None = None
                    ) -> tuple[list[int], list[int], int]:
    """Algorithm 1 (``reducers`` None) or Algorithm 3 on integer costs.

    Returns ``(parent, created, T)``: ``created[i]`` is s_i when machine i is
    inserted (time reversed), and T = max s_i is the length. The argmin of
    line 6 breaks ties by the smallest index (heap key ``s·n + j``).
    """
    parent = [-1] * n
    created = [0] * n
    big, step = max(D, C), D + C
    limit = n if reducers is None else reducers
    heap = [0]  # key s * n + j, machine 0 (the sink) at s = 0
    replace, push = heapq.heapreplace, heapq.heappush
    for i in range(1, n):
        s, m = divmod(heap[0], n)
        new = s + step
        parent[i] = m
        created[i] = new
        replace(heap, (s + big) * n + m)
        if i < limit:
            push(heap, new * n + i)
    return parent, created, max(created)


def algorithm2_reversed(n: int, D: int, C: int, K: int) -> tuple[list[int], list[int], int]:
    """Algorithm 2 on integer costs, time reversed: ``(parent, t, T)``.

    ``t[i]`` is the (reversed) date the transfer between machine i and its
    receiver completes; the boundary is t_j = 0 for j ≤ 1 (1-based), and
    T = t_n. The forward transfer of machine i starts at T - t[i].
    """
    parent = [-1] * n
    t = [0] * n
    heap = [0]
    replace, push = heapq.heapreplace, heapq.heappush
    for i in range(1, n):
        s, m = divmod(heap[0], n)
        back = t[i - K] if i - K >= 1 else 0
        ti = max(s + C, back) + D
        t[i] = ti
        parent[i] = m
        replace(heap, max(s + C, ti - C) * n + m)
        push(heap, ti * n + i)
    return parent, t, max(t)


# ---------------------------------------------------------------------------
# evaluating a tree (Prop 2-3) and given dates


def children_of(parent: Sequence[int]) -> tuple[list[int], list[int]]:
    """CSR lists of senders: senders of v are ``kids[start[v]:start[v+1]]``."""
    n = len(parent)
    count = [0] * (n + 1)
    for p in parent:
        if p >= 0:
            count[p + 1] += 1
    for v in range(n):
        count[v + 1] += count[v]
    start = count[:]
    kids = [0] * max(n - 1, 0)
    fill = count[:]
    for i, p in enumerate(parent):
        if p >= 0:
            kids[fill[p]] = i
            fill[p] += 1
    return kids, start


def top_down(parent: Sequence[int]) -> list[int]:
    """Machines in breadth-first order from the sink; raises on a non-tree."""
    n = len(parent)
    sinks = [i for i, p in enumerate(parent) if p < 0]
    if len(sinks) != 1:
        raise ReductionError(f"a reduction tree has exactly one sink, found {len(sinks)}")
    kids, start = children_of(parent)
    order = sinks
    k = 0
    while k < len(order):
        v = order[k]
        order.extend(kids[start[v]:start[v + 1]])
        k += 1
    if len(order) != n:
        raise ReductionError("the tree has a cycle: some machines never reach the sink")
    return order


def bottom_up(parent: Sequence[int]) -> Sequence[int]:
    """Machines, every one after all its senders (raises on a non-tree)."""
    n = len(parent)
    if parent.count(-1) == 1 and parent[0] == -1 and all(map(operator.lt, parent, range(n))):
        return range(n - 1, -1, -1)  # trees built by the greedy algorithms: p < i
    return top_down(parent)[::-1]


def evaluate(parent: Sequence[int], D: int, C: int, overlap: bool = True
             ) -> tuple[list[int], list[int | None]]:
    """Eager dates of a tree (Prop 3) on integer costs: ``(ready, send_time)``.

    ``ready[v]`` is when machine v finishes its reductions; it sends at once,
    and a receiver takes its senders in ascending order of readiness (ties:
    the higher index first), one transfer at a time. With overlap the result
    is Prop 2's max_j (a_j + D + (m-1-j)·max(D, C) + C) over the ascending a_j;
    without, each element costs D + C in turn. The length is ``ready[sink]``.
    """
    n = len(parent)
    ready = [0] * n
    send: list[int | None] = [None] * n
    pending: dict[int, list[int]] = {}  # receiver -> keys ready·n + (n-1-sender)
    for v in bottom_up(parent):
        keys = pending.pop(v, None)
        if keys:
            keys.sort()
            port = finish = 0
            for key in keys:
                r, k = divmod(key, n)
                k = n - 1 - k
                if overlap:
                    at = r if r > port else port
                    port = at + D
                    finish = (finish if finish > port else port) + C
                else:
                    at = r if r > finish else finish
                    finish = at + D + C
                send[k] = at
            ready[v] = finish
        p = parent[v]
        if p >= 0:
            lst = pending.get(p)
            if lst is None:
                pending[p] = [ready[v] * n + n - 1 - v]
            else:
                lst.append(ready[v] * n + n - 1 - v)
    return ready, send


def sink_finish(parent: Sequence[int], send: Sequence[int | None], D: int, C: int) -> int:
    """When the sink (index 0) ends its last reduction, given the transfer dates:
    reductions in arrival order, each as early as possible (overlap model).
    Validity of the dates is certify's job."""
    f = 0
    for t in sorted(int(send[k] or 0) for k, p in enumerate(parent) if p == 0):
        f = max(t + D, f) + C
    return f


# ---------------------------------------------------------------------------
# the algorithms, as schedules


def _schedule(n: int, d: Fraction, c: Fraction, scale: int, parent: list[int],
              send: list[int | None], makespan: int, algorithm: str, **kw: object
              ) -> ReductionSchedule:
    return ReductionSchedule(n=n, transfer=d, compute=c, parent=parent, send_time=send,
                             scale=scale, makespan=Fraction(makespan, scale),
                             algorithm=algorithm, **kw)  # type: ignore[arg-type]


def reversed_dates(created: list[int], T: int) -> list[int | None]:
    """Forward dates T - s_i of the reversed schedule (Figure 1: t4 = 0, t3 = d,
    t2 = 2d). Every machine sends as late as the reversed schedule allows; the
    sink finishes at T."""
    out: list[int | None] = [T - s for s in created]
    out[0] = None
    return out


def algorithm1(n: int, transfer: object, compute: object) -> ReductionSchedule:
    """Algorithm 1 (Thm 4: optimal), with the dates of its reversed schedule."""
    n, d, c = check_problem(n, transfer, compute)
    D, C, L = scaled(d, c)
    parent, created, T = greedy_reversed(n, D, C)
    return _schedule(n, d, c, L, parent, reversed_dates(created, T), T, "Algorithm 1 (Thm 4)")


def algorithm3(n: int, transfer: object, compute: object, reducers: int) -> ReductionSchedule:
    """Algorithm 3: at most ``reducers`` machines reduce (Thm 9: optimal)."""
    n, d, c = check_problem(n, transfer, compute, reducers, "--max-reducers K")
    D, C, L = scaled(d, c)
    parent, created, T = greedy_reversed(n, D, C, reducers)
    return _schedule(n, d, c, L, parent, reversed_dates(created, T), T, "Algorithm 3 (Thm 9)",
                     max_reducers=reducers)


def algorithm2(n: int, transfer: object, compute: object, transfers: int) -> ReductionSchedule:
    """Algorithm 2: at most ``transfers`` concurrent transfers (Thm 7).

    The dates are the algorithm's own, reversed: machine i starts its transfer
    at T - t_i with T = t_n (the printed "+ c" would shift every date by c).
    """
    n, d, c = check_problem(n, transfer, compute, transfers, "--max-transfers K")
    D, C, L = scaled(d, c)
    parent, t, T = algorithm2_reversed(n, D, C, transfers)
    send: list[int | None] = [None] + [T - x for x in t[1:]]
    length = sink_finish(parent, send, D, C)
    return _schedule(n, d, c, L, parent, send, length, "Algorithm 2 (Thm 7)",
                     max_transfers=transfers)


def non_overlapping(n: int, transfer: object, compute: object) -> ReductionSchedule:
    """Transfers and reductions never overlap on one machine: k elements cost
    k(d + c). Algorithm 1 with d' = 0 and c' = d + c builds the tree."""
    n, d, c = check_problem(n, transfer, compute)
    D, C, L = scaled(d, c)
    parent, _, _ = greedy_reversed(n, 0, D + C)
    ready, send = evaluate(parent, D, C, overlap=False)
    return _schedule(n, d, c, L, parent, send, ready[0],
                     "Algorithm 1 with d' = 0, c' = d + c (non-overlapping model)",
                     model="non-overlap")


def strategy_tree(n: int, strategy: str) -> list[int]:
    """The tree a strategy builds whatever the real costs: Algorithm 1 with
    (d, c) = (1, 0) (binomial) or (1, 1) (Fibonacci)."""
    costs = {"binomial": (1, 0), "fibonacci": (1, 1)}
    if strategy not in costs:
        raise ReductionError(f"unknown strategy {strategy!r}: use one of {', '.join(STRATEGIES)}")
    return greedy_reversed(n, *costs[strategy])[0]


def _strategy(n: int, transfer: object, compute: object, strategy: str, thm: str
              ) -> ReductionSchedule:
    n, d, c = check_problem(n, transfer, compute)
    D, C, L = scaled(d, c)
    parent = strategy_tree(n, strategy)
    ready, send = evaluate(parent, D, C)
    return _schedule(n, d, c, L, parent, send, ready[0], thm, strategy=strategy)


def binomial_strategy(n: int, transfer: object, compute: object) -> ReductionSchedule:
    """Algorithm 1 with the smaller cost set to 0, measured under the real
    costs: a (1 + min(d,c)/max(d,c))-approximation (Thm 18)."""
    return _strategy(n, transfer, compute, "binomial",
                     "binomial strategy: Algorithm 1 with min(d, c) = 0 (Thm 18)")


def fibonacci_strategy(n: int, transfer: object, compute: object) -> ReductionSchedule:
    """Algorithm 1 with d = c, measured under the real costs: a
    2-approximation (Thm 19)."""
    return _strategy(n, transfer, compute, "fibonacci",
                     "Fibonacci strategy: Algorithm 1 with d = c (Thm 19)")


def solve(n: int, transfer: object, compute: object, *, strategy: str = "optimal",
          max_transfers: int | None = None, max_reducers: int | None = None,
          overlap: bool = True) -> ReductionSchedule:
    """The facade: pick the algorithm for the problem asked."""
    if max_transfers is not None and max_reducers is not None:
        raise ReductionError("give at most one of the limits: concurrent transfers or reducers")
    limited = max_transfers is not None or max_reducers is not None
    if strategy != "optimal" and (limited or not overlap):
        raise ReductionError(f"the {strategy} strategy is defined for the plain model only "
                             "(no limit, overlapping transfers and reductions)")
    if not overlap and limited:
        raise ReductionError("the non-overlapping variant takes no limit on transfers or "
                             "reducers")
    if strategy == "binomial":
        return binomial_strategy(n, transfer, compute)
    if strategy == "fibonacci":
        return fibonacci_strategy(n, transfer, compute)
    if strategy != "optimal":
        raise ReductionError(f"unknown strategy {strategy!r}: use one of {', '.join(STRATEGIES)}")
    if not overlap:
        return non_overlapping(n, transfer, compute)
    if max_transfers is not None:
        return algorithm2(n, transfer, compute, max_transfers)
    if max_reducers is not None:
        return algorithm3(n, transfer, compute, max_reducers)
    return algorithm1(n, transfer, compute)


# ---------------------------------------------------------------------------
# special trees (section 7)


def binomial_tree(k: int) -> list[int]:
    """Def 12: order k, 2^k machines; machine i sends to i without its lowest set bit."""
    if k < 0:
        raise ReductionError(f"binomial tree order {k}: must be ≥ 0")
    return [-1] + [i & (i - 1) for i in range(1, 1 << k)]


def fibonacci_tree(k: int) -> list[int]:
    """Def 15: order k ≥ -1; F_k is F_{k-1} whose sink receives from the sink of
    an F_{k-2} (orders -1 and 0 are single machines); F_{k+2} machines."""
    if k < -1:
        raise ReductionError(f"Fibonacci tree order {k}: must be ≥ -1")
    prev, cur = [-1], [-1]  # orders -1 and 0
    for _ in range(k):
        a = len(cur)
        prev, cur = cur, cur + [(p + a if p >= 0 else 0) for p in prev]
    return cur


def fibonacci(k: int) -> int:
    """F_k with F_1 = F_2 = 1."""
    a, b = 0, 1
    for _ in range(k):
        a, b = b, a + b
    return a


# ---------------------------------------------------------------------------
# the non-commutative order of the operands


def operand_order(parent: Sequence[int], send: Sequence[int | None]) -> list[int]:
    """Machines (0-based) in the order their elements appear in the result.

    Each machine appends what it receives, in arrival order (ties: the higher
    index first), on the right of its own element: a pre-order walk with
    senders in arrival order. Relabelling the elements this way keeps any
    schedule valid for a non-commutative operator (section 4.1).
    """
    n = len(parent)
    when = [-1 if t is None else t for t in send]
    ranked = sorted(range(n - 1, -1, -1), key=when.__getitem__)
    ranked.sort(key=parent.__getitem__)  # stable: by receiver, then arrival
    first: dict[int, int] = {}
    for k in range(n - 1, 0, -1):  # ranked[0] is the sink (parent -1)
        first[parent[ranked[k]]] = k
    out: list[int] = []
    stack = [ranked[0]]
    while stack:
        v = stack.pop()
        out.append(v)
        lo = first.get(v)
        if lo is not None:
            end = lo
            while end < n and parent[ranked[end]] == v:
                end += 1
            stack.extend(ranked[end - 1:lo - 1:-1])
    return out


def tree_shape(parent: Sequence[int]) -> tuple[int, int]:
    """(depth counted in machines, maximum number of senders of one machine)."""
    n = len(parent)
    depth = [1] * n
    order = bottom_up(parent)
    for v in reversed(order):  # top-down
        if parent[v] >= 0:
            depth[v] = depth[parent[v]] + 1
    counts = Counter(parent)
    counts.pop(-1, None)
    degree = max(counts.values(), default=0)
    return max(depth), degree
