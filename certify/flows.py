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
from typing import Any

from .base import InputError, Link, Node, Topo, Verdict

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
    net: dict[Node | None, int] = {}
    seen: dict[tuple[Node | None, Node], int] = {}
    cache: dict[object, Node] = {}

    def resolve(ref: object, where: str) -> Node:
        key = (type(ref), ref) if isinstance(ref, str | int) else None
        if key is not None:
            hit = cache.get(key)
            if hit is not None:
                return hit
        node = topo.node(ref, where)
        if key is not None:
            cache[key] = node
        return node

    for i, arc in enumerate(arcs):
        if not isinstance(arc, list) or len(arc) != 3:
            raise InputError(f"{label}: flow[{i}] is not [u, v, amount]")
        ru, rv, a = arc
        if isinstance(a, bool) or not isinstance(a, int):
            raise InputError(f"{label}: flow[{i}] amount {a!r} is not an integer")
        if rv is None:
            raise InputError(f"{label}: flow[{i}] enters the super sink, which this flow lacks")
        v = resolve(rv, f"{label}: flow[{i}] head")
        u: Node | None
        if ru is None:
            u = None
            if source is not None or source_num is None:
                verdict.fail(f"{label}: arc s -> {v!r} leaves a super source this network lacks")
                ok = False
                continue
        else:
            u = resolve(ru, f"{label}: flow[{i}] tail")
        key2 = (u, v)
        if key2 in seen:
            verdict.fail(f"{label}: arc {u!r} -> {v!r} is listed twice (flow[{seen[key2]}] "
                         f"and flow[{i}])")
            ok = False
            continue
        seen[key2] = i
        if a < 0:
            verdict.fail(f"{label}: arc {_arc(u, v)} carries a negative amount {a}/{multiplier}")
            ok = False
            continue
        if u is None:
            assert source_num is not None
            limit = source_num.get(v)
            if limit is None:
                verdict.fail(f"{label}: the super source has no arc to {v!r}")
                ok = False
                continue
            if a * source_den > limit * multiplier:
                verdict.fail(f"{label}: arc s -> {v!r} carries {_q(a, multiplier)} over its "
                             f"capacity {_q(limit, source_den)}")
                ok = False
        else:
            limit = link_num.get((u, v))
            if limit is None:
                verdict.fail(f"{label}: arc {_arc(u, v)} is not a link of the network")
                ok = False
                continue
            if a * link_den > limit * multiplier:
                verdict.fail(f"{label}: link {_arc(u, v)} carries {_q(a, multiplier)} over its "
                             f"capacity {_q(limit, link_den)}, by "
                             f"{_q(a * link_den - limit * multiplier, multiplier * link_den)}")
                ok = False
        net[u] = net.get(u, 0) + a
        net[v] = net.get(v, 0) - a
    for node, bal in net.items():
        if bal != 0 and node != source and node != sink:
            verdict.fail(f"{label}: flow is not conserved at {node!r}: "
                         f"{_q(-bal, multiplier) if bal < 0 else _q(bal, multiplier)} more "
                         f"{'enters' if bal < 0 else 'leaves'} than "
                         f"{'leaves' if bal < 0 else 'enters'}")
            ok = False
    if not ok:
        return None
    return net.get(source, 0)


def _arc(u: Node | None, v: Node) -> str:
    return f"{'s' if u is None else repr(u)} -> {v!r}"


def _q(num: int, den: int) -> str:
    from fractions import Fraction

    f = Fraction(num, den)
    return str(f.numerator) if f.denominator == 1 else f"{f.numerator}/{f.denominator}"


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
