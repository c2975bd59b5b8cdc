"""Checker 2 (part): one flow, checked arc by arc in integers.

A flow record lists arcs ``[u, v, a]`` with integer amounts ``a``; the real
amount is ``a / m`` for the record's multiplier ``m``. ``u = None`` names the
super source s. The checker verifies, in one pass over the arcs:

* every amount is a non-negative integer and every arc exists;
* capacity: ``a / m ≤ num_e / den`` is tested as ``a · den ≤ num_e · m``;
* conservation at every node other than the source and the sink;
* and returns the value: the net amount leaving the source.

Max-flow/min-cut (weak duality) is all that is used afterwards: a flow of value
F from s to t proves every s-t cut has capacity ≥ F.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from ..model import InputError, Link, Node, Topo, Verdict, frac_str

SOURCE = None


def check_flow(
    verdict: Verdict,
    label: str,
    topo: Topo,
    arcs: object,
    multiplier: int,
    link_num: Mapping[Link, int],
    link_den: int,
    source: Node | None,
    sink: Node,
    source_num: Mapping[Node, int] | None = None,
    source_den: int = 1,
) -> int | None:
    """Check one flow; record failures in ``verdict``; return its value (in 1/m units).

    ``source=None`` means the super source s, whose arcs ``[null, u, a]`` must
    go to nodes in ``source_num`` with ``a / m ≤ source_num[u] / source_den``.
    Returns None when the flow is not a valid flow.
    """
    if not isinstance(arcs, list):
        raise InputError(f"{label}: 'flow' must be an array of [u, v, amount]")
    ok = True
    # node -> dense index; the super source s is index len(topo.nodes)
    index = topo.node_index
    s_idx = len(topo.nodes)
    net = [0] * (s_idx + 1)
    # First a tight pass that only accepts the plain case: arcs named by the topology's own
    # ids, integer amounts 0 ≤ a ≤ ⌊num_e·m / den⌋ (the same test as a·den ≤ num_e·m for an
    # integer a), no arc twice. Anything unusual (a name by string form, a bad amount, an
    # overload, a repeated arc) reruns the careful pass below, which names the culprit. The
    # tight pass runs only when every id is a string: True == 1 and 1.0 == 1, so with integer
    # ids a dict look-up alone would take a boolean or a float for a node.
    careful = not topo.string_ids
    if not careful:
        table, n_arcs = _limits(topo, link_num, link_den, source is None, source_num,
                                source_den, multiplier)
        used = bytearray(n_arcs)  # one byte per arc id: was it listed already?
        try:
            for ru, rv, a in arcs:
                lim, ui, vi, aid = table[ru][rv]
                if type(a) is not int or not 0 <= a <= lim or used[aid]:
                    raise _Unusual
                used[aid] = 1
                net[ui] += a
                net[vi] -= a
        except (_Unusual, KeyError, TypeError, ValueError):
            careful = True
    if careful:
        fast = _careful_table(topo, link_num, link_den, source, source_num, source_den)
        net = [0] * (s_idx + 1)
        ok = _CarefulPass(verdict, label, topo, multiplier, link_num, link_den, source,
                          source_num, source_den, fast, net).run(arcs)
    src_i = s_idx if source is None else index[source]
    sink_i = index[sink]
    value, into_sink = net[src_i], net[sink_i]
    net[src_i] = net[sink_i] = 0
    if any(net):  # conservation everywhere else (any() scans the list at C speed)
        for i, bal in enumerate(net):
            if bal != 0:
                verdict.fail(f"{label}: flow is not conserved at {_name(topo, i)}: "
                             f"{_q(abs(bal), multiplier)} more "
                             f"{'enters' if bal < 0 else 'leaves'} than "
                             f"{'leaves' if bal < 0 else 'enters'}")
                ok = False
    net[src_i], net[sink_i] = value, into_sink
    if not ok:
        return None
    return net[src_i]


Info = tuple[int, int, int, int, int]


def _limits(
    topo: Topo, link_num: Mapping[Link, int], link_den: int, super_source: bool,
    source_num: Mapping[Node, int] | None, source_den: int, multiplier: int,
) -> tuple[dict[object, dict[object, tuple[int, int, int, int]]], int]:
    """The tight pass's table u -> v -> (⌊num·m / den⌋, tail, head, arc id), u = None for
    the super source's arcs, and the number of arcs. The last table is kept on ``topo``
    and reused for the very same mappings and numbers."""
    key = (link_den, super_source, source_den, multiplier)
    hit = topo.cache.get("limits")
    if hit is not None and hit[0] is link_num and hit[1] is source_num and hit[2] == key:
        return hit[3], hit[4]
    index = topo.node_index
    table: dict[object, dict[object, tuple[int, int, int, int]]] = {}
    arcs = 0
    for (u, v), c in link_num.items():
        table.setdefault(u, {})[v] = (c * multiplier // link_den, index[u], index[v], arcs)
        arcs += 1
    if super_source and source_num is not None:
        s_idx = len(topo.nodes)
        table[None] = {}
        for u, c in source_num.items():
            table[None][u] = (c * multiplier // source_den, s_idx, index[u], arcs)
            arcs += 1
    topo.cache["limits"] = (link_num, source_num, key, table, arcs)
    return table, arcs


def _careful_table(
    topo: Topo, link_num: Mapping[Link, int], link_den: int, source: Node | None,
    source_num: Mapping[Node, int] | None, source_den: int,
) -> dict[tuple[object, object], Info]:
    """The careful pass's table: :func:`_fast_table` plus the super source's arcs."""
    fast = _fast_table(topo, link_num, link_den)
    if source is None and source_num is not None:
        key = ("source arcs", id(link_num), link_den, id(source_num), source_den)
        hit = topo.cache.get(key)
        if hit is not None and hit[0] is link_num and hit[1] is source_num:
            table: dict[tuple[object, object], Info] = hit[2]
            return table
        s_idx = len(topo.nodes)
        fast = dict(fast)
        base = len(fast)
        for j, (u, c) in enumerate(source_num.items()):
            fast[(None, u)] = (c, s_idx, topo.node_index[u], source_den, base + j)
        topo.cache[key] = (link_num, source_num, fast)
    return fast


class _Unusual(Exception):
    pass


_IDS = (str, int, type(None))  # exact types a node reference may have for a direct look-up


class _CarefulPass:
    """The arc-by-arc check with exact messages: every failure is named in ``verdict``,
    the amounts are booked in ``net`` (per node index, the super source last)."""

    def __init__(
        self, verdict: Verdict, label: str, topo: Topo, multiplier: int,
        link_num: Mapping[Link, int], link_den: int, source: Node | None,
        source_num: Mapping[Node, int] | None, source_den: int,
        fast: Mapping[tuple[object, object], Info], net: list[int],
    ) -> None:
        self.verdict, self.label, self.topo, self.multiplier = verdict, label, topo, multiplier
        self.link_num, self.link_den = link_num, link_den
        self.source, self.source_num, self.source_den = source, source_num, source_den
        self.fast = fast
        self.used = bytearray(len(fast))  # one byte per arc of the table: listed already?
        self.extra_seen: set[tuple[int, int]] = set()  # other arcs listed already
        self.net = net

    def run(self, arcs: list[Any]) -> bool:
        """Check every arc; whether all passed."""
        ok = True
        for i, arc in enumerate(arcs):
            try:
                ru, rv, a = arc
            except (TypeError, ValueError):
                raise InputError(f"{self.label}: flow[{i}] is not [u, v, amount]") from None
            info = self.fast.get((ru, rv)) if type(ru) in _IDS and type(rv) in _IDS else None
            if info is not None and type(a) is int and a >= 0:
                cap, ui, vi, den, aid = info
                if self.used[aid]:
                    self.verdict.fail(f"{self.label}: arc {_name(self.topo, ui)} -> "
                                      f"{_name(self.topo, vi)} is listed twice")
                    ok = False
                    continue
                self.used[aid] = 1
            else:  # slow path: names by string form, unknown arcs, bad amounts
                found = self.unusual(i, ru, rv, a)
                if found is None:
                    ok = False
                    continue
                ui, vi, cap, den = found
            ok = self.carry(ui, vi, a, cap, den) and ok
        return ok

    def carry(self, ui: int, vi: int, a: int, cap: int, den: int) -> bool:
        """Book ``a/multiplier`` on arc ui→vi of capacity ``cap/den``; False if over it."""
        self.net[ui] += a
        self.net[vi] -= a
        m = self.multiplier
        if a * den <= cap * m:
            return True
        self.verdict.fail(f"{self.label}: arc {_name(self.topo, ui)} -> "
                          f"{_name(self.topo, vi)} carries {_q(a, m)} over its capacity "
                          f"{_q(cap, den)}, by {_q(a * den - cap * m, m * den)}")
        return False

    def unusual(self, i: int, ru: object, rv: object, a: object,
                ) -> tuple[int, int, int, int] | None:
        """An arc the table does not name as written: its (tail, head, capacity numerator,
        denominator), marked as listed; None when it fails the verdict (not an arc, a
        negative amount, listed twice). InputError for what is not a flow at all."""
        label, topo = self.label, self.topo
        if isinstance(a, bool) or not isinstance(a, int):
            raise InputError(f"{label}: flow[{i}] amount {a!r} is not an integer")
        if rv is None:
            raise InputError(f"{label}: flow[{i}] enters a super sink this network lacks")
        v = topo.node(rv, f"{label}: flow[{i}] head")
        vi = topo.node_index[v]
        if ru is None:
            if self.source is not None or self.source_num is None:
                self.verdict.fail(f"{label}: arc s -> {v!r} leaves a super source this "
                                  "network lacks")
                return None
            limit = self.source_num.get(v)
            if limit is None:
                self.verdict.fail(f"{label}: the super source has no arc to {v!r}")
                return None
            ui, cap, den = len(topo.nodes), limit, self.source_den
            info = self.fast.get((None, v))
        else:
            u = topo.node(ru, f"{label}: flow[{i}] tail")
            ui = topo.node_index[u]
            lim = self.link_num.get((u, v))
            if lim is None:
                self.verdict.fail(f"{label}: arc {u!r} -> {v!r} is not a link of the network")
                return None
            cap, den = lim, self.link_den
            info = self.fast.get((u, v))
        if a < 0:
            self.verdict.fail(f"{label}: arc {_name(topo, ui)} -> {_name(topo, vi)} carries a "
                              f"negative amount {a}/{self.multiplier}")
            return None
        if (info is not None and self.used[info[4]]) or (ui, vi) in self.extra_seen:
            self.verdict.fail(f"{label}: arc {_name(topo, ui)} -> {_name(topo, vi)} is "
                              "listed twice")
            return None
        self.extra_seen.add((ui, vi))
        if info is not None:
            self.used[info[4]] = 1
        return ui, vi, cap, den


def _fast_table(
    topo: Topo, link_num: Mapping[Link, int], den: int
) -> dict[tuple[object, object], Info]:
    """(u, v) -> (capacity numerator, tail, head, denominator, arc id), cached on ``topo``.

    The cache entry keeps ``link_num`` itself and is used only for that very object.
    """
    key = (id(link_num), den)
    hit = topo.cache.get(key)
    if hit is not None and hit[0] is link_num:
        table: dict[tuple[object, object], Info] = hit[1]
        return table
    index = topo.node_index
    table = {(u, v): (c, index[u], index[v], den, j)
             for j, ((u, v), c) in enumerate(link_num.items())}
    topo.cache[key] = (link_num, table)
    return table


def _name(topo: Topo, i: int) -> str:
    return "s" if i == len(topo.nodes) else repr(topo.nodes[i])


def _q(num: int, den: int) -> str:
    return frac_str(Fraction(num, den))


def flow_fields(record: Any, label: str) -> tuple[object, object, int, object]:
    """(source, sink, multiplier, arcs) of a certificate FLOW record."""
    if not isinstance(record, Mapping):
        raise InputError(f"{label} is not a flow object")
    m = record.get("multiplier", 1)
    if isinstance(m, bool) or not isinstance(m, int) or m < 1:
        raise InputError(f"{label}: multiplier {m!r} is not a positive integer")
    if "flow" not in record:
        raise InputError(f"{label} has no 'flow' array")
    return record.get("source"), record.get("sink"), m, record["flow"]
