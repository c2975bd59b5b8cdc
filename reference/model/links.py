"""The links of a topology: node and link ids, one link entry's fields, capacities, latencies.

A link entry is a ``(src, dst, value)`` triple or a mapping with ``src``,
``dst``, the value and optional keys (``bidirectional``, ...): the same form in
the Python API, in ``collcert-topology/1`` files (the value is a ``capacity``)
and in one-port platform files (a ``cost``, Legrand et al. 2003, §2), so
:func:`unpack_link` reads all three. :func:`read_links` turns the entries of a
:class:`~collcert.Topology` into exact capacities, parallel links summed, and the
latencies α some of them carry.
"""

from __future__ import annotations

from collections.abc import Container, Hashable, Iterable, Mapping
from fractions import Fraction
from typing import Any

from .errors import TopologyError
from .errors import node_name as _name
from .exact import fraction_str, parse_number

Node = Hashable
Link = tuple[Node, Node]


def unpack_link(link: Any, loc: str, *, value: str = "capacity",
                optional: tuple[str, ...] = ("bidirectional", "alpha"),
                who: str = "every link") -> tuple[Node, Node, Any, bool]:
    """``(src, dst, raw value, bidirectional)`` of one link entry named ``loc`` in
    messages: a mapping with ``src``, ``dst``, ``value`` and the ``optional`` keys
    (``bidirectional`` among them), or a ``(src, dst, value)`` triple. ``who``
    names the links that need the three keys ("every link of a one-port
    topology"). Raises :class:`TopologyError`."""
    if isinstance(link, Mapping):
        missing = [k for k in ("src", "dst", value) if k not in link]
        if missing:
            raise TopologyError(
                f"{loc} lacks {', '.join(missing)}: {who} needs src, dst and {value}"
            )
        extra = set(link) - {"src", "dst", value, *optional}
        if extra:
            raise TopologyError(
                f"{loc} has unknown keys {sorted(extra)}: a link has src, dst, {value} "
                f"and optionally {' and '.join(optional)}"
            )
        both = link.get("bidirectional", False)
        if not isinstance(both, bool):
            raise TopologyError(f"{loc}: bidirectional must be true or false")
        return link["src"], link["dst"], link[value], both
    try:
        src, dst, raw = link
    except (TypeError, ValueError):
        raise TopologyError(
            f"{loc} is {link!r}: a link is a (src, dst, {value}) triple"
        ) from None
    return src, dst, raw, False


def parse_alpha(raw: Any, where: str) -> Fraction:
    """A link latency α (microseconds): exact, finite, zero or positive."""
    try:
        a = parse_number(raw)
    except ValueError as exc:
        raise TopologyError(
            f"{where} has alpha {raw!r}: {exc}; alpha is the link's latency in microseconds, "
            "a finite number ≥ 0"
        ) from None
    if a < 0:
        raise TopologyError(
            f"{where} has alpha {fraction_str(a)}: a latency cannot be negative (microseconds)"
        )
    return a


def read_links(links: Iterable[Any], declared: Container[Node], where: Mapping[int, str],
               strict: bool) -> tuple[dict[Link, Fraction], dict[Link, Fraction]]:
    """``(capacity, latency)`` of the link entries of a topology whose nodes are
    ``declared``: parallel links summed, a bidirectional entry giving both
    directions, the largest α kept. ``where[i]`` names entry i in messages
    (default ``"link #i"``); ``strict=False`` drops links of capacity 0 (the
    all-reduce rate model: no link). Raises :class:`TopologyError`."""
    capacity: dict[Link, Fraction] = {}
    latency: dict[Link, Fraction] = {}
    for i, link in enumerate(links):
        loc = where.get(i, f"link #{i}")
        src, dst, raw, both = unpack_link(link, loc)
        raw_alpha = link.get("alpha") if isinstance(link, Mapping) else None
        for node in (src, dst):
            if node not in declared:
                raise TopologyError(
                    f"{loc} ({_name(src)} -> {_name(dst)}) refers to undeclared node "
                    f"{_name(node)}: add it to compute_nodes or switch_nodes"
                )
        if src == dst:
            raise TopologyError(
                f"{loc} is a self-loop on node {_name(src)}: a node cannot send to "
                "itself; remove the link"
            )
        cap = _capacity(raw, f"{loc} ({_name(src)} -> {_name(dst)})")
        if cap == 0 and not strict:
            continue  # the all-reduce rate model: bandwidth 0 means no link
        if cap <= 0:
            raise TopologyError(
                f"{loc} ({_name(src)} -> {_name(dst)}) has capacity {fraction_str(cap)}: "
                "capacities must be positive; drop the link instead of giving it "
                "zero capacity"
            )
        pairs = [(src, dst), (dst, src)] if both else [(src, dst)]
        for e in pairs:
            capacity[e] = capacity.get(e, Fraction(0)) + cap
        if raw_alpha is not None:
            a = parse_alpha(raw_alpha, f"{loc} ({_name(src)} -> {_name(dst)})")
            for e in pairs:
                latency[e] = max(latency.get(e, a), a)
    return capacity, latency


def _capacity(raw: Any, label: str) -> Fraction:
    """The exact capacity ``raw`` of the link ``label`` (any sign: the caller decides)."""
    try:
        return parse_number(raw)
    except ValueError as exc:
        shown = f" has capacity {raw!r}:" if len(repr(raw)) <= 40 else ": capacity"
        raise TopologyError(
            f"{label}{shown} {exc}; capacities must be positive finite numbers"
        ) from None


def with_alpha(latency: Mapping[Link, Fraction], alpha: Mapping[Link, Any] | None,
               capacity: Container[Link]) -> dict[Link, Fraction]:
    """``latency`` with the latencies ``alpha`` gives by link (each must be a link of
    ``capacity``); where both give one, the largest."""
    out = dict(latency)
    for e, raw_a in (alpha or {}).items():
        if e not in capacity:
            raise TopologyError(f"alpha is given for {e!r}, which is not a link")
        a = parse_alpha(raw_a, f"link {_name(e[0])} -> {_name(e[1])}")
        out[e] = max(out.get(e, a), a)
    return out
