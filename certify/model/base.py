"""Plain data for the checkers: verdicts, input errors, exact numbers, the topology.

Standard library only; never imports ``collcert.reference``. A checker reads
JSON-ready dicts (the ``collcert-topology/1`` topology, the certificates of
docs/certificates.md, the schedules of docs/schedule-format.md) and returns a
:class:`Verdict`: ``ok`` plus exact, specific reasons.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

Node = str | int
Link = tuple[Node, Node]

MAX_REASONS = 40


class InputError(ValueError):
    """Input a checker cannot read at all (wrong type, unknown node, bad number).

    The message names the culprit and says what is expected.
    """

    collcert_bad_input = True  # the CLI turns it into exit 2 (as reference's CollcertError)


def frac_str(value: Fraction | int) -> str:
    """``"65/3"``, or ``"7"`` for an integer."""
    value = Fraction(value)
    if value.denominator == 1:
        return str(value.numerator)
    return f"{value.numerator}/{value.denominator}"


_DECIMAL = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d{1,4})?$")
_RATIO = re.compile(r"^[+-]?\d+\s*/\s*[+-]?\d+$")
MAX_DIGITS = 4000
MAX_SCALE_BITS = 4096  # the capacities' common denominator (collcert.reference allows 1024)


def number(value: object, what: str) -> Fraction:
    """An exact rational from an int, a ``"p/q"`` string or a decimal string.

    Binary floats are refused: a JSON number with a fraction part could have
    been rounded on its way here, so exact data must be written as a string.
    """
    if isinstance(value, bool):
        raise InputError(f"{what} is {value!r}, a boolean, not a number")
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, Fraction):
        return value
    if isinstance(value, float):
        # an integral float is exact only up to 2**53: beyond, "1e20"-style JSON may
        # already have been rounded to a different integer
        if math.isfinite(value) and value == int(value) and abs(value) <= 2**53:
            return Fraction(int(value))
        raise InputError(
            f"{what} is the binary float {value!r}: write exact numbers as strings "
            '("3/4", "12.5")'
        )
    if isinstance(value, str):
        text = value.strip()
        if len(text) > MAX_DIGITS:
            raise InputError(f"{what} is a number of {len(text)} characters: too long")
        if _RATIO.match(text):
            num, den = (int(p) for p in text.split("/"))
            if den == 0:
                raise InputError(f"{what} is {value!r}, which divides by zero")
            return Fraction(num, den)
        if _DECIMAL.match(text):
            mant, _, exp = text.lower().partition("e")
            result = Fraction(mant if mant not in ("+", "-") else "0")
            if exp:
                result *= Fraction(10) ** int(exp)
            # keep every number far below Python's 4300-digit int-to-text limit
            if max(abs(result.numerator), result.denominator).bit_length() > MAX_DIGITS * 10 // 3:
                raise InputError(f"{what} is {text[:30]!r}…: more than {MAX_DIGITS} digits")
            return result
        if re.match(r"^[+-]?(\d+(\.\d*)?|\.\d+)[eE][+-]?\d+$", text):
            raise InputError(f"{what} is {text[:30]!r}: its exponent is too large (at most "
                             "4 digits); write an integer, a ratio such as \"3/4\" or a decimal "
                             "such as \"12.5\"")
    raise InputError(
        f"{what} is {value!r}: write an integer, a ratio such as \"3/4\" or a decimal "
        'such as "12.5"'
    )


def integer(value: object, what: str, least: int | None = None) -> int:
    """A JSON integer (or an integral exact number) ≥ ``least``."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise InputError(f"{what} is {value!r}: expected an integer")
    f = number(value, what)
    if f.denominator != 1:
        raise InputError(f"{what} is {frac_str(f)}: expected an integer")
    if least is not None and f < least:
        raise InputError(f"{what} is {frac_str(f)}: must be at least {least}")
    return int(f)


def show_node(v: object) -> str:
    return repr(v)


@dataclass
class Verdict:
    """The result of one checker: ``ok`` and the reasons why not.

    ``facts`` holds the exact numbers the checker established (for example
    ``{"ratio": Fraction(3, 65)}``); they are only meaningful when ``ok``.
    """

    check: str
    ok: bool = True
    reasons: list[str] = field(default_factory=list)
    facts: dict[str, Any] = field(default_factory=dict)
    dropped: int = 0

    def fail(self, reason: str) -> None:
        self.ok = False
        if len(self.reasons) < MAX_REASONS:
            self.reasons.append(reason)
        else:
            self.dropped += 1

    def absorb(self, other: Verdict, prefix: str = "", facts: bool = False) -> Verdict:
        """Take over ``other``'s failures (prefixed), and its facts if asked; returns self."""
        if not other.ok:
            self.ok = False
        for r in other.all_reasons():
            if len(self.reasons) < MAX_REASONS:
                self.reasons.append(prefix + r)
            else:
                self.dropped += 1
        if facts:
            self.facts.update(other.facts)
        return self

    def all_reasons(self) -> list[str]:
        if self.dropped:
            return self.reasons + [f"… and {self.dropped} more problems"]
        return list(self.reasons)

    def __bool__(self) -> bool:
        return self.ok

    def to_json(self) -> dict[str, Any]:
        facts = {
            k: frac_str(v) if isinstance(v, Fraction | int) and not isinstance(v, bool) else v
            for k, v in self.facts.items()
        }
        return {"check": self.check, "ok": self.ok, "reasons": self.all_reasons(), "facts": facts}


class Topo:
    """A ``collcert-topology/1`` dict read into plain exact data.

    ``cap[(u, v)]`` is the exact capacity (parallel links summed);
    ``icap[(u, v)] == scale * cap[(u, v)]`` are integers. Node references in
    certificates and schedules are matched first exactly, then by string form.
    """

    def __init__(self, data: Mapping[str, Any]) -> None:
        if not isinstance(data, Mapping):
            raise InputError("the topology must be a JSON object (collcert-topology/1)")
        fmt = data.get("format", "collcert-topology/1")
        if fmt != "collcert-topology/1":
            raise InputError(f"topology format {fmt!r} is not 'collcert-topology/1'")
        self.name = str(data.get("name", ""))
        self.unit = str(data.get("unit", ""))
        compute = self._node_list(data, "compute_nodes")
        switches = self._node_list(data, "switch_nodes")
        self.compute: list[Node] = compute
        self.switches: list[Node] = switches
        self.nodes: list[Node] = compute + switches
        self.compute_set: frozenset[Node] = frozenset(compute)
        self.switch_set: frozenset[Node] = frozenset(switches)
        if len(self.compute_set) + len(self.switch_set) != len(self.nodes) or (
            self.compute_set & self.switch_set
        ):
            raise InputError("the topology declares a node id twice")
        if len(compute) < 2:
            raise InputError("the topology needs at least two compute nodes")
        self._by_text: dict[str, Node] = {}
        for v in self.nodes:
            if str(v) in self._by_text:
                raise InputError(f"nodes {self._by_text[str(v)]!r} and {v!r} print the same")
            self._by_text[str(v)] = v
        self.multicast: frozenset[Node] = frozenset(
            self.node(v, "multicast_switches entry") for v in data.get("multicast_switches", [])
        )
        for w in self.multicast:
            if w not in self.switch_set:
                raise InputError(f"multicast switch {w!r} is not a switch node")
        links = data.get("links")
        if not isinstance(links, list) or not links:
            raise InputError("the topology needs a non-empty 'links' array")
        cap: dict[Link, Fraction] = {}
        for i, link in enumerate(links):
            where = f"topology links[{i}]"
            both = False
            if isinstance(link, Mapping):
                try:
                    su, sv, raw = link["src"], link["dst"], link["capacity"]
                except KeyError as exc:
                    raise InputError(f"{where} lacks {exc.args[0]!r}") from None
                both = link.get("bidirectional", False) is True
            elif isinstance(link, list) and len(link) == 3:
                su, sv, raw = link
            else:
                raise InputError(f"{where} is not a link object with src, dst, capacity")
            u, v = self.node(su, f"{where} src"), self.node(sv, f"{where} dst")
            c = number(raw, f"{where} capacity")
            if c <= 0 or u == v:
                raise InputError(f"{where}: capacity must be positive and src ≠ dst")
            for e in ((u, v), (v, u)) if both else ((u, v),):
                cap[e] = cap.get(e, Fraction(0)) + c
        self.cap: dict[Link, Fraction] = cap
        scale = 1
        for c in cap.values():
            scale = scale * c.denominator // math.gcd(scale, c.denominator)
            if scale.bit_length() > MAX_SCALE_BITS:
                raise InputError(f"the capacities' common denominator passes {MAX_SCALE_BITS} "
                                 f"bits (at a capacity with a {c.denominator.bit_length()}-bit "
                                 "denominator): collcert reads topologies "
                                 "whose capacities share a common unit; round them to one")
        self.scale = scale
        self.icap: dict[Link, int] = {e: int(c * scale) for e, c in cap.items()}
        self.node_index: dict[Node, int] = {v: i for i, v in enumerate(self.nodes)}
        # fast exact lookup by id or string form; safe against true/1.0 only when every id
        # is a string (a bool or float never equals a str key)
        self.lookup: dict[object, Node] = {str(v): v for v in self.nodes}
        self.lookup.update({v: v for v in self.nodes})
        self.string_ids = all(isinstance(v, str) for v in self.nodes)
        self.cache: dict[Any, Any] = {}  # checkers' lookup tables, built once per topology
        self.out_links: dict[Node, list[Node]] = {v: [] for v in self.nodes}
        for u, v in cap:
            self.out_links[u].append(v)

    @staticmethod
    def _node_list(data: Mapping[str, Any], key: str) -> list[Node]:
        raw = data.get(key, [])
        if not isinstance(raw, list):
            raise InputError(f"topology {key!r} must be an array")
        for v in raw:
            if isinstance(v, bool) or not isinstance(v, str | int):
                raise InputError(f"topology {key} entry {v!r} is not a string or integer id")
        return list(raw)

    @property
    def n(self) -> int:
        return len(self.compute)

    def node(self, ref: object, where: str) -> Node:
        """The topology node ``ref`` names (exactly or by string form)."""
        if isinstance(ref, str | int) and not isinstance(ref, bool):
            if ref in self.compute_set or ref in self.switch_set:
                return ref
            hit = self._by_text.get(str(ref))
            if hit is not None:
                return hit
        sample = ", ".join(str(v) for v in self.nodes[:6])
        more = ", …" if len(self.nodes) > 6 else ""
        text = repr(ref) if len(repr(ref)) < 80 else repr(ref)[:77] + "..."
        raise InputError(
            f"{where} names {text}, which is not a node of the topology "
            f"(nodes: {sample}{more}); use the topology's node ids"
        )

    def compute_node(self, ref: object, where: str) -> Node:
        v = self.node(ref, where)
        if v not in self.compute_set:
            raise InputError(f"{where} names {v!r}, a switch, where a compute node is required")
        return v

    def node_set(self, refs: object, where: str) -> frozenset[Node]:
        if not isinstance(refs, list):
            raise InputError(f"{where} must be an array of node ids")
        return frozenset(self.node(r, f"{where} entry") for r in refs)

    def out_capacity(self, s: Iterable[Node]) -> Fraction:
        """B⁺(S): total capacity of the links leaving S."""
        inside = set(s)
        return sum((c for (u, v), c in self.cap.items() if u in inside and v not in inside),
                   Fraction(0))

    def unbalanced(self) -> list[tuple[Node, Fraction, Fraction]]:
        """(node, in-capacity, out-capacity) for every node with B⁻(v) ≠ B⁺(v)."""
        into = {v: Fraction(0) for v in self.nodes}
        out = {v: Fraction(0) for v in self.nodes}
        for (u, v), c in self.cap.items():
            out[u] += c
            into[v] += c
        return [(v, into[v], out[v]) for v in self.nodes if into[v] != out[v]]

    def transposed(self) -> Topo:
        """The same network with every link reversed."""
        data = {
            "compute_nodes": self.compute,
            "switch_nodes": self.switches,
            "multicast_switches": sorted(self.multicast, key=str),
            "links": [[v, u, frac_str(c)] for (u, v), c in self.cap.items()],
        }
        return Topo(data)


def content_hash(topo: Topo) -> str:
    """``sha256:<hex>`` of the canonical topology, as collcert writes it in certificates."""
    import hashlib
    import json

    canon = {
        "compute_nodes": [[type(v).__name__, str(v)] for v in topo.compute],
        "switch_nodes": sorted([type(v).__name__, str(v)] for v in topo.switches),
        "links": sorted([str(u), str(v), frac_str(c)] for (u, v), c in topo.cap.items()),
    }
    blob = json.dumps(canon, sort_keys=True, separators=(",", ":")).encode()
    return "sha256:" + hashlib.sha256(blob).hexdigest()
