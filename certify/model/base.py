"""Plain data for the checkers: verdicts, input errors, exact numbers, the topology.

Standard library only; never imports ``collcert.reference``. A checker reads
JSON-ready dicts (the ``collcert-topology/1`` topology, the certificates of
docs/certificates.md, the schedules of docs/schedule-format.md) and returns a
:class:`Verdict`: ``ok`` plus exact, specific reasons.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Container, Iterable, Mapping
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
        if not text.isascii():  # int() would read '٣' (Arabic-Indic) as 3
            raise InputError(f"{what} is {value[:40]!r}: write numbers with the digits 0-9")
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
        f"{what} is {_short(value)}: write an integer, a ratio such as \"3/4\" or a decimal "
        'such as "12.5"'
    )


def _short(value: object) -> str:
    """A value as a message shows it: its repr, cut to 40 characters."""
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:30]}… ({len(text)} characters)"


def integer(value: object, what: str, least: int | None = None, *,
            strict: bool = False) -> int:
    """A JSON integer (or an integral exact number) ≥ ``least``; ``strict``: a JSON
    integer only, as a schema's ``"type": "integer"`` says (a string "4" is refused)."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise InputError(f"{what} is {_short(value)}: expected an integer")
    if strict and isinstance(value, str):
        raise InputError(f"{what} is {_short(value)}, a string: expected a JSON integer, without "
                         "quotes (the file's schema says integer)")
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


def topology_nodes(data: Mapping[str, Any]) -> tuple[list[Node], list[Node]]:
    """The ``compute_nodes`` and ``switch_nodes`` of a ``collcert-topology/1`` dict.

    Ids are strings or integers, none declared twice (not even as both a compute
    node and a switch).
    """
    compute = _node_ids(data, "compute_nodes")
    switches = _node_ids(data, "switch_nodes")
    if len(set(compute) | set(switches)) != len(compute) + len(switches):
        raise InputError("the topology declares a node id twice")
    return compute, switches


def _node_ids(data: Mapping[str, Any], key: str) -> list[Node]:
    raw = data.get(key, [])
    if not isinstance(raw, list):
        raise InputError(f"topology {key!r} must be an array")
    for v in raw:
        if isinstance(v, bool) or not isinstance(v, str | int):
            raise InputError(f"topology {key} entry {v!r} is not a string or integer id")
    return list(raw)


def find_node(ref: object, nodes: Container[object], by_text: Mapping[str, Node]) -> Node | None:
    """The node ``ref`` names: the id itself, else the id that prints as ``ref``; None
    for anything else (a boolean or a float never names a node)."""
    if isinstance(ref, str | int) and not isinstance(ref, bool):
        if ref in nodes:
            return ref
        return by_text.get(str(ref))
    return None


@dataclass(frozen=True)
class LinkFormat:
    """How one kind of input writes its links, and what its checker accepts.

    Three checkers read a link list: :class:`Topo` (capacities, ForestColl's
    checkers), the one-port platform of the broadcast checker (costs) and the
    all-reduce rate's directed graph (capacities, 0 meaning no link).
    :func:`read_links` reads all three; this record holds where they differ,
    the wording of their messages included (``{where}`` is ``"topology links[i]"``,
    ``{field}`` the first key a link object lacks).
    """

    noun: str  # what the input is called: "topology", "platform"
    key: str  # the key of each link's number: "capacity", "cost"
    missing: str  # a link object without src, dst or the number
    not_a_link: str  # neither a link object nor [src, dst, number]
    bad: str  # a number out of range, or src = dst
    zero: bool = False  # 0 is allowed (and means no link); else numbers must be positive
    once: bool = False  # a link given twice is refused; else the numbers add up
    optional: bool = False  # the input may have no links
    ends: bool = True  # name the end (" src", " dst") where a link names an unknown node


TOPOLOGY = LinkFormat("topology", "capacity", missing="{where} lacks {field!r}",
                      not_a_link="{where} is not a link object with src, dst, capacity",
                      bad="{where}: capacity must be positive and src ≠ dst")


def read_links(data: Mapping[str, Any], fmt: LinkFormat,
               node: Callable[[object, str], Node]) -> dict[Link, Fraction]:
    """``data["links"]`` as ``{(src, dst): number}``, a bidirectional link both ways.

    InputError, in ``fmt``'s words, for a link that is malformed, loops on one
    node, has a number out of range or (``fmt.once``) is given twice; ``node``
    resolves each end and refuses an unknown node.
    """
    links = data.get("links", [] if fmt.optional else None)
    if fmt.optional and not isinstance(links, list):
        raise InputError(f"{fmt.noun} 'links' must be an array")
    if not isinstance(links, list) or not (links or fmt.optional):
        raise InputError(f"the {fmt.noun} needs a non-empty 'links' array")
    out: dict[Link, Fraction] = {}
    for i, link in enumerate(links):
        where = f"{fmt.noun} links[{i}]"
        su, sv, raw, both = _link_fields(link, where, fmt)
        u = node(su, f"{where} src" if fmt.ends else where)
        v = node(sv, f"{where} dst" if fmt.ends else where)
        c = number(raw, f"{where} {fmt.key}")
        if c < 0 or (c == 0 and not fmt.zero) or u == v:
            raise InputError(fmt.bad.format(where=where))
        for e in ((u, v), (v, u)) if both else ((u, v),):
            if fmt.once and e in out:
                raise InputError(f"{where} gives the link {e[0]!r} -> {e[1]!r} twice")
            if c:
                out[e] = out.get(e, Fraction(0)) + c
    return out


def _link_fields(link: object, where: str, fmt: LinkFormat) -> tuple[object, object, object, bool]:
    """(src, dst, number, bidirectional) of a link object or a ``[src, dst, number]`` list."""
    if isinstance(link, Mapping):
        lacking = [k for k in ("src", "dst", fmt.key) if k not in link]
        if lacking:
            raise InputError(fmt.missing.format(where=where, field=lacking[0]))
        return link["src"], link["dst"], link[fmt.key], link.get("bidirectional", False) is True
    if isinstance(link, list) and len(link) == 3:
        return link[0], link[1], link[2], False
    raise InputError(fmt.not_a_link.format(where=where))


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
        compute, switches = topology_nodes(data)
        self.compute: list[Node] = compute
        self.switches: list[Node] = switches
        self.nodes: list[Node] = compute + switches
        self.compute_set: frozenset[Node] = frozenset(compute)
        self.switch_set: frozenset[Node] = frozenset(switches)
        self.node_index: dict[Node, int] = {v: i for i, v in enumerate(self.nodes)}
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
        self.reducing, self.nvls, self.reduction_rate = self._reducing(data)
        cap = read_links(data, TOPOLOGY, self.node)
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
        # fast exact lookup by id or string form; safe against true/1.0 only when every id
        # is a string (a bool or float never equals a str key)
        self.lookup: dict[object, Node] = {str(v): v for v in self.nodes}
        self.lookup.update({v: v for v in self.nodes})
        self.string_ids = all(isinstance(v, str) for v in self.nodes)
        self.cache: dict[Any, Any] = {}  # checkers' lookup tables, built once per topology
        self.out_links: dict[Node, list[Node]] = {v: [] for v in self.nodes}
        for u, v in cap:
            self.out_links[u].append(v)

    def _reducing(self, data: Mapping[str, Any],
                  ) -> tuple[frozenset[Node], frozenset[Node], dict[Node, Fraction]]:
        """The switches that add, either way (``reducing_switches``: SHARP, ``nvls_switches``:
        NVLS), those adding the NVLS way, and their reduction rates (docs/topology.md)."""
        entries = data.get("reducing_switches", [])
        nv = data.get("nvls_switches", [])
        rates = data.get("reduction_rates", {})
        if not isinstance(entries, list) or not isinstance(nv, list) \
                or not isinstance(rates, Mapping):
            raise InputError("reducing_switches and nvls_switches must be arrays and "
                             "reduction_rates an object")
        sharp = frozenset(self.node(v, "reducing_switches entry") for v in entries)
        nvls = frozenset(self.node(v, "nvls_switches entry") for v in nv)
        for w in sorted(sharp & nvls, key=str):
            raise InputError(f"switch {w!r} is both in reducing_switches (SHARP) and in "
                             "nvls_switches (NVLS): a switch adds one way")
        for w in sorted(nvls & self.multicast, key=str):
            raise InputError(f"switch {w!r} is both in nvls_switches and in "
                             "multicast_switches: an NVLS switch copies only what a member "
                             "stores")
        reducing = sharp | nvls
        for w in reducing:
            if w not in self.switch_set:
                raise InputError(f"reducing switch {w!r} is not a switch node")
        out: dict[Node, Fraction] = {}
        for key, value in rates.items():
            w = self.node(key, "reduction_rates key")
            if w not in reducing:
                raise InputError(f"{w!r} has a reduction rate but is not a reducing switch")
            out[w] = number(value, f"the reduction rate of {w!r}")
            if out[w] <= 0:
                raise InputError(f"the reduction rate of {w!r} is not positive")
        return reducing, nvls, out

    @property
    def n(self) -> int:
        return len(self.compute)

    def node(self, ref: object, where: str) -> Node:
        """The topology node ``ref`` names (exactly or by string form)."""
        hit = find_node(ref, self.node_index, self._by_text)
        if hit is not None:
            return hit
        if ref is None:
            raise InputError(f"{where} is missing (null): name a node of the topology")
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
            "reducing_switches": sorted(self.reducing - self.nvls, key=str),
            "nvls_switches": sorted(self.nvls, key=str),
            "reduction_rates": {str(w): frac_str(r) for w, r in self.reduction_rate.items()},
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


def is_fingerprint(value: object) -> bool:
    """Whether ``value`` is a topology fingerprint as :func:`content_hash` writes it."""
    return (isinstance(value, str) and len(value) == 71 and value.startswith("sha256:")
            and all(c in "0123456789abcdef" for c in value[7:]))


def other_topology(topo: Topo, cert: Mapping[str, Any]) -> str | None:
    """Why ``cert`` cannot be checked against ``topo``: it names another topology by its
    hash (``"topology": "sha256:…"``); None when it names this one, or none."""
    claimed = cert.get("topology")
    if claimed is None:
        return None
    if not is_fingerprint(claimed):
        return (f"its 'topology' field {str(claimed)[:40]!r} is not a topology fingerprint "
                "('sha256:' and 64 hex digits, as collcert writes it); drop it or fix it")
    mine = content_hash(topo)
    if claimed == mine:
        return None
    return f"the certificate is for topology {claimed[:19]}…, not this one ({mine[:19]}…)"
