"""Platforms under the bidirectional one-port model (Legrand et al. 2003, §2).

A :class:`OnePortPlatform` is a directed graph G = (V, E, c): every node is a
processor, one of them (chosen per query) is the source P_s of a broadcast and
every other node is a destination. ``cost[(j, k)]`` = c_{j,k} > 0 is the time
to send one unit-size message from P_j to P_k; Z messages take Z·c_{j,k}. A
missing link is the paper's c = +∞. Under the one-port model a node sends to at
most one neighbour and receives from at most one neighbour at any instant
(independently): a send of one message on (j, k) started at t occupies j's
send port and k's receive port until t + c_{j,k}.

The file format is the topology format ``collcert-topology/1`` with a
top-level ``"port_model": "one-port"`` and a ``"cost"`` on every link in place
of ``"capacity"`` (docs/topology.md, docs/steady-broadcast.md). Costs are
exact rationals. Platforms need not be Eulerian.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Hashable, Iterable, Mapping
from fractions import Fraction
from typing import Any

from ..model import (
    TOPOLOGY_FORMAT,
    NumberError,
    Size,
    TopologyError,
    check_size,
    fraction_str,
    lcm_of_denominators,
    output_file,
    parse_number,
    read_json_document,
    unpack_link,
)
from ..model import node_name as _name

PORT_MODEL = "one-port"

Node = Hashable
Link = tuple[Node, Node]

_KEYS = {"format", "port_model", "name", "unit", "compute_nodes", "switch_nodes", "links",
         "description", "source"}
DEFAULT_UNIT = "time unit"


class OnePortPlatform:
    """A validated one-port platform: nodes and links with exact positive costs.

    Parameters
    ----------
    nodes:
        Node ids (strings or integers), in the order reports list them.
    links:
        ``(src, dst, cost)`` triples, or mappings with ``src``, ``dst``, ``cost``
        and optionally ``bidirectional`` (both directions, each with that cost)
        and ``startup`` (β ≥ 0, the start-up time of every packet sent on the
        link, §6: a packet of size n costs β + n·c); ``(src, dst, cost, startup)``
        quadruples also give β. A direction given twice is an error: the
        one-port model has one link per ordered pair.
    name, unit:
        Free text; ``unit`` is the time unit of the costs.
    """

    __slots__ = ("name", "unit", "nodes", "index", "cost", "startup", "out_adj", "in_adj",
                 "_hash")

    def __init__(self, nodes: Iterable[Node], links: Iterable[Any], *, name: str = "",
                 unit: str = DEFAULT_UNIT, _where: Mapping[int, str] | None = None) -> None:
        where = _where or {}
        self.name = str(name)
        self.unit = str(unit) or DEFAULT_UNIT
        node_list = list(nodes)
        by_text: dict[str, Node] = {}
        seen: set[Node] = set()
        for v in node_list:
            if v is None or isinstance(v, bool | float) or not isinstance(v, str | int):
                raise TopologyError(f"node id {v!r} is not allowed: use a string or an integer")
            if v in seen:
                raise TopologyError(f"duplicate node id {_name(v)}: give every node one id")
            if str(v) in by_text:
                raise TopologyError(
                    f"node ids {_name(by_text[str(v)])} and {_name(v)} have the same string "
                    f"form {str(v)!r}; command lines and schedule files name nodes by that "
                    "form, so rename one of them")
            seen.add(v)
            by_text[str(v)] = v
        if len(node_list) < 2:
            raise TopologyError(
                f"a one-port platform needs at least two nodes (a source and a destination), "
                f"this one has {len(node_list)}")
        self.nodes: tuple[Node, ...] = tuple(node_list)
        self.index: dict[Node, int] = {v: i for i, v in enumerate(self.nodes)}
        cost: dict[Link, Fraction] = {}
        startup: dict[Link, Fraction] = {}
        first_at: dict[Link, str] = {}
        for i, link in enumerate(links):
            loc = where.get(i, f"link #{i}")
            raw_beta: object = 0
            if isinstance(link, Mapping) and "startup" in link:
                raw_beta = link["startup"]
                link = {k: val for k, val in link.items() if k != "startup"}
            elif isinstance(link, tuple | list) and len(link) == 4:
                raw_beta, link = link[3], tuple(link[:3])
            src, dst, raw, both = _unpack_link(link, loc)
            for v in (src, dst):
                if v not in seen:
                    raise TopologyError(
                        f"{loc} ({_name(src)} -> {_name(dst)}) refers to undeclared node "
                        f"{_name(v)}: add it to compute_nodes")
            if src == dst:
                raise TopologyError(f"{loc} is a self-loop on node {_name(src)}: remove it")
            c = _parse_cost(raw, f"{loc} ({_name(src)} -> {_name(dst)})")
            beta = _parse_startup(raw_beta, f"{loc} ({_name(src)} -> {_name(dst)})")
            for e in ((src, dst), (dst, src)) if both else ((src, dst),):
                if e in cost:
                    raise TopologyError(
                        f"{loc} gives link {_name(e[0])} -> {_name(e[1])} again (first given "
                        f"by {first_at[e]}): under the one-port model a node pair has one "
                        "link per direction; keep one of them")
                cost[e] = c
                if beta:
                    startup[e] = beta
                first_at[e] = loc
        if not cost:
            raise TopologyError("the platform has no links: add links between its nodes")
        try:  # exact LPs over costs 1/p for hundreds of primes p would need huge numbers
            lcm_of_denominators(list(cost.values()), what="the link costs")
        except NumberError as exc:
            raise TopologyError(str(exc)) from None
        self.cost: dict[Link, Fraction] = dict(
            sorted(cost.items(), key=lambda it: (self.index[it[0][0]], self.index[it[0][1]])))
        self.startup: dict[Link, Fraction] = {e: startup[e] for e in self.cost if e in startup}
        """β per link (§6), only the positive ones; ``startup.get(e, 0)``."""
        self.out_adj: dict[Node, list[Node]] = {v: [] for v in self.nodes}
        self.in_adj: dict[Node, list[Node]] = {v: [] for v in self.nodes}
        for u, v in self.cost:
            self.out_adj[u].append(v)
            self.in_adj[v].append(u)
        self._hash: str | None = None

    # ---------------------------------------------------------------- queries
    @property
    def links(self) -> list[Link]:
        return list(self.cost)

    def lookup(self, ref: object) -> Node:
        """The node ``ref`` names, exactly or by its string form (``"3"`` finds ``3``)."""
        if isinstance(ref, Hashable) and ref in self.index and not isinstance(ref, bool):
            return ref
        for v in self.nodes:
            if str(v) == str(ref):
                return v
        raise TopologyError(
            f"source {_name(ref)} is not a node of the platform"
            f"{' ' + _name(self.name) if self.name else ''} (nodes: "
            f"{', '.join(map(_name, self.nodes[:12]))}{', …' if len(self.nodes) > 12 else ''}); "
            "pick one of them with --source")

    def reachable_from(self, source: Node) -> set[Node]:
        seen = {source}
        stack = [source]
        while stack:
            u = stack.pop()
            for v in self.out_adj[u]:
                if v not in seen:
                    seen.add(v)
                    stack.append(v)
        return seen

    def check_source(self, source: object) -> Node:
        """The source node, after checking that every node can be reached from it."""
        s = self.lookup(source)
        missed = [v for v in self.nodes if v not in self.reachable_from(s)]
        if missed:
            names = ", ".join(map(_name, missed[:20])) + (", …" if len(missed) > 20 else "")
            raise TopologyError(
                f"{len(missed)} node{'s' if len(missed) > 1 else ''} cannot be reached from "
                f"source {_name(s)} along the links: {names}. They never receive a message, so "
                "the broadcast throughput is 0; add links that reach them or remove them")
        return s

    def find_cycle(self) -> list[Node] | None:
        """A directed cycle [v0, v1, ..., v0], or None when the platform is a DAG."""
        colour = {v: 0 for v in self.nodes}
        parent: dict[Node, Node] = {}
        for root in self.nodes:
            if colour[root]:
                continue
            stack: list[tuple[Node, int]] = [(root, 0)]
            colour[root] = 1
            while stack:
                u, i = stack[-1]
                if i < len(self.out_adj[u]):
                    stack[-1] = (u, i + 1)
                    v = self.out_adj[u][i]
                    if colour[v] == 0:
                        colour[v] = 1
                        parent[v] = u
                        stack.append((v, 0))
                    elif colour[v] == 1:
                        cycle = [u]
                        while cycle[-1] != v:
                            cycle.append(parent[cycle[-1]])
                        cycle.reverse()
                        return cycle + [v]
                else:
                    colour[u] = 2
                    stack.pop()
        return None

    def subplatform(self, links: Iterable[Link], name: str = "") -> OnePortPlatform:
        """The same nodes with only ``links`` (each must be a link of this platform)."""
        return OnePortPlatform(self.nodes, [(u, v, self.cost[(u, v)],
                                             self.startup.get((u, v), 0)) for u, v in links],
                               name=name or self.name, unit=self.unit)

    def packet_platform(self, size: object) -> OnePortPlatform:
        """The platform on which one message is a packet of ``size`` (> 0) units: link cost
        β + size·c (Legrand et al. 2003, §6), no start-ups left."""
        q = parse_number(size)
        if q <= 0:
            raise TopologyError(f"packet size {fraction_str(q)}: it must be positive")
        return OnePortPlatform(self.nodes, [(u, v, self.startup.get((u, v), 0) + q * c)
                                            for (u, v), c in self.cost.items()],
                               name=f"{self.name or 'platform'}, packets of {fraction_str(q)}",
                               unit=self.unit)

    def __repr__(self) -> str:
        label = f" {self.name!r}" if self.name else ""
        return f"<OnePortPlatform{label}: {len(self.nodes)} nodes, {len(self.cost)} links>"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, OnePortPlatform):
            return NotImplemented
        return self.nodes == other.nodes and self.cost == other.cost

    def __hash__(self) -> int:
        return hash(self.content_hash())

    # ------------------------------------------------------------- conversion
    def to_json(self) -> dict[str, Any]:
        """The canonical ``collcert-topology/1`` dict with ``"port_model": "one-port"``."""
        out: dict[str, Any] = {"format": TOPOLOGY_FORMAT, "port_model": PORT_MODEL}
        if self.name:
            out["name"] = self.name
        out["unit"] = self.unit
        out["compute_nodes"] = list(self.nodes)
        out["links"] = [{"src": u, "dst": v, "cost": fraction_str(c)}
                        for (u, v), c in self.cost.items()]
        for link in out["links"]:
            beta = self.startup.get((link["src"], link["dst"]))
            if beta:
                link["startup"] = fraction_str(beta)
        return out

    def content_hash(self) -> str:
        """``sha256:<hex>`` of a canonical JSON of the nodes (in order) and the sorted links
        with their costs. Start-ups are left out: they play no part in the steady state of
        unit messages (§5); a PIPE result is checked against the platform's own β."""
        if self._hash is None:
            canon = {"port_model": PORT_MODEL,
                     "nodes": [[type(v).__name__, str(v)] for v in self.nodes],
                     "links": sorted([str(u), str(v), fraction_str(c)]
                                     for (u, v), c in self.cost.items())}
            blob = json.dumps(canon, sort_keys=True, separators=(",", ":")).encode()
            self._hash = "sha256:" + hashlib.sha256(blob).hexdigest()
        return self._hash

    def save(self, path: str | os.PathLike[str]) -> None:
        with output_file(path) as fh:  # all or nothing
            json.dump(self.to_json(), fh, indent=1)
            fh.write("\n")

    @classmethod
    def from_json(cls, source: str | os.PathLike[str] | Mapping[str, Any]) -> OnePortPlatform:
        """Read a one-port platform from a file path, a JSON text or a parsed dict."""
        data, origin, where = read_json_document(
            source, too_deep="JSON nested too deeply",
            too_long="a number has more than 4300 digits; costs need far fewer")
        try:
            return cls._from_dict(data, origin, where)
        except TopologyError as exc:
            if str(exc).startswith(origin):
                raise
            raise TopologyError(f"{origin}: {exc}") from None

    @classmethod
    def _from_dict(cls, data: Any, origin: str, where: dict[int, str]) -> OnePortPlatform:
        if not isinstance(data, Mapping):
            raise TopologyError("the top level must be a JSON object")
        model = data.get("port_model")
        if model is None:
            raise TopologyError(
                f"the file does not say \"port_model\": \"{PORT_MODEL}\": add it at the top "
                "level for a one-port platform (links with a 'cost'); a topology with link "
                "capacities (the bandwidth model) is for collcert optimum / schedule")
        if model != PORT_MODEL:
            raise TopologyError(
                f"'port_model' is {model!r}: a one-port platform file says "
                f"\"port_model\": \"{PORT_MODEL}\" and gives every link a 'cost'; a topology "
                "with link capacities (the bandwidth model) is for collcert optimum / schedule")
        fmt = data.get("format", TOPOLOGY_FORMAT)
        if fmt != TOPOLOGY_FORMAT:
            raise TopologyError(f"format {fmt!r} is not {TOPOLOGY_FORMAT!r}; fix or drop the key")
        extra = set(data) - _KEYS
        if extra:
            hint = (" (the one-port model has no switches: every node is a processor)"
                    if "multicast_switches" in extra else "")
            raise TopologyError(f"unknown keys {sorted(extra)}{hint}; allowed keys are "
                                f"{sorted(_KEYS)}")
        if data.get("switch_nodes"):
            raise TopologyError(
                "'switch_nodes' is not empty: under the one-port model every node is a "
                "processor that receives the broadcast; list every node in compute_nodes")
        for key in ("compute_nodes", "links"):
            if key not in data:
                raise TopologyError(f"missing {key!r} (see docs/steady-broadcast.md)")
            if not isinstance(data[key], list):
                raise TopologyError(f"{key!r} must be a JSON array")
        links = data["links"]
        n = len(data["compute_nodes"])
        check_size(Size(n, n, len(links)), origin)  # the build, before any link object
        for i, link in enumerate(links):
            where.setdefault(i, f"links[{i}]")
            if not isinstance(link, Mapping | list):
                raise TopologyError(f"{where[i]} is {link!r}: a link is an object with src, dst "
                                    "and cost")
        return cls(data["compute_nodes"], links, name=str(data.get("name", "")),
                   unit=str(data.get("unit", DEFAULT_UNIT)), _where=where)


def _unpack_link(link: Any, loc: str) -> tuple[Node, Node, Any, bool]:
    """A link entry with a ``cost`` (:func:`~collcert.reference.model.unpack_link`), after
    refusing one with a ``capacity`` (the bandwidth model's)."""
    if isinstance(link, Mapping) and "capacity" in link:
        raise TopologyError(
            f"{loc} gives a 'capacity'"
            + (" and a 'cost'" if "cost" in link else "")
            + ": this is a one-port topology (\"port_model\": \"one-port\"), whose links "
            "have a 'cost', the time to send one unit-size message (cost = message size / "
            "bandwidth); replace 'capacity' by 'cost', or drop \"port_model\" to use the "
            "bandwidth model")
    src, dst, c, both = unpack_link(link, loc, value="cost", optional=("bidirectional",),
                                    who="every link of a one-port topology")
    if not isinstance(link, Mapping):
        for v in (src, dst):
            if not isinstance(v, Hashable):
                raise TopologyError(f"{loc}: node id {v!r} is not a string or an integer")
    return src, dst, c, both


def _parse_startup(raw: object, loc: str) -> Fraction:
    """A start-up time β ≥ 0 (Legrand et al. 2003, §6), exact."""
    try:
        b = parse_number(raw)
    except ValueError as exc:
        raise TopologyError(f"{loc} has startup {raw!r}: {exc}; the start-up β is the fixed "
                            "time of every packet on the link, a finite number ≥ 0") from None
    if b < 0:
        raise TopologyError(
            f"{loc} has startup {fraction_str(b)}: a start-up time cannot be negative; give "
            "β ≥ 0 (0, or no 'startup' key, for none)")
    return b


def _parse_cost(raw: object, loc: str) -> Fraction:
    try:
        c = parse_number(raw)
    except ValueError as exc:
        text = str(raw).strip().lower().lstrip("+")
        hint = (" (the paper's c = +inf means 'no link': leave the link out instead)"
                if "inf" in text else "")
        raise TopologyError(f"{loc} has cost {raw!r}: {exc}{hint}; costs must be positive "
                            "finite numbers (time to send one message)") from None
    if c <= 0:
        raise TopologyError(
            f"{loc} has cost {fraction_str(c)}: costs must be positive (sending a message "
            "takes time); a missing link is written by leaving it out")
    return c
