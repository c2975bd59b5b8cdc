"""The network model: compute nodes, switch nodes and directed capacitated links.

A :class:`Topology` is immutable once built and always valid: every
constructor runs the same checks, and any problem raises
:class:`~collcert.TopologyError` with a message that names the culprit and
says what to do. The model follows seed 000 §1 (ForestColl, 003 §3):
G = (V = V_s ∪ V_c, E) is a directed multigraph with positive capacities and is
*Eulerian* (every node sends as much as it receives).

Capacities are exact rationals in the topology's bandwidth unit (GB/s by
default). Internally they are scaled by ``scale`` (the least common multiple
of their denominators) to integers: ``int_capacity[e] == scale * capacity[e]``.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Hashable, Iterable, Mapping, Sized
from decimal import Decimal
from fractions import Fraction
from typing import Any

from .errors import TopologyError
from .exact import NumberError, fraction_str, lcm_of_denominators, parse_number
from .limits import Size, check_json_memory, check_size, read_text

FORMAT = "collcert-topology/1"

Node = Hashable
Link = tuple[Node, Node]


def _name(node: object) -> str:
    """A node id for messages: its repr, shortened when it is absurdly long."""
    text = repr(node)
    return text if len(text) <= 60 else f"{text[:40]}…{text[-12:]} ({len(text)} characters)"


class Topology:
    """A validated Eulerian network of compute and switch nodes.

    Parameters
    ----------
    compute_nodes:
        Ids of the nodes that hold and consume data (GPUs). Order matters: it
        is the rank order used when a schedule names ranks by number.
    links:
        ``(src, dst, capacity)`` triples, or mappings with keys ``src``,
        ``dst``, ``capacity`` and optionally ``bidirectional``. Parallel links
        are summed.
    switch_nodes:
        Ids of nodes that only forward data.
    name, unit:
        Free text kept for reports; ``unit`` is the bandwidth unit of the
        capacities (``"GB/s"``).
    multicast_switches:
        Switches that can replicate data (in-network multicast, 003 §5.6).
    alpha:
        Optional latency α of links, in microseconds, ``{(src, dst): value}``
        (a link mapping may also carry an ``alpha`` key). Used only by the
        latency-bandwidth (α-β) model (``collcert.reference.alphabeta``); it
        changes neither optima nor ``content_hash()``. Parallel links keep the
        largest α.
    strict:
        ``True`` (the default): the topology must suit ForestColl's methods
        (Eulerian, at least two compute nodes, every compute node reachable
        from the first, positive capacities), else :class:`TopologyError`.
        ``False``: any directed graph is accepted, as in the all-reduce rate
        model of *On the Computation Rate of All-Reduce* (one compute node,
        no links, zero capacities meaning "no link", unbalanced or not
        strongly connected graphs); what ForestColl would have refused is
        kept in ``forestcoll_problem``, and every method that needs it calls
        :meth:`require_forestcoll`, which raises that error naming the method.
    """

    __slots__ = (
        "name",
        "unit",
        "compute_nodes",
        "switch_nodes",
        "nodes",
        "index",
        "multicast_switches",
        "capacity",
        "int_capacity",
        "scale",
        "alpha",
        "forestcoll_problem",
        "_hash",
    )

    def __init__(
        self,
        compute_nodes: Iterable[Node],
        links: Iterable[Any],
        switch_nodes: Iterable[Node] = (),
        *,
        name: str = "",
        unit: str = "GB/s",
        multicast_switches: Iterable[Node] = (),
        alpha: Mapping[Link, Any] | None = None,
        strict: bool = True,
        _where: Mapping[int, str] | None = None,
    ) -> None:
        where = _where or {}
        self.forestcoll_problem: str | None = None

        def problem(message: str) -> None:
            """Refuse (strict) or remember the first reason ForestColl cannot run."""
            if strict:
                raise TopologyError(message)
            if self.forestcoll_problem is None:
                self.forestcoll_problem = message
        self.name = str(name)
        self.unit = str(unit)
        compute = list(compute_nodes)
        switches = list(switch_nodes)
        if not isinstance(links, Sized):
            links = list(links)
        if len(compute) + len(switches) + len(links) > 10_000:  # built directly, from networkx
            check_size(Size(len(compute), len(compute) + len(switches), len(links)),
                       self.name or "the topology")
        seen: dict[Node, str] = {}
        by_text: dict[str, Node] = {}
        for kind, group in (("compute", compute), ("switch", switches)):
            for node in group:
                try:
                    hash(node)
                except TypeError:
                    raise TopologyError(
                        f"{kind} node id {node!r} is not hashable: use a string or an integer"
                    ) from None
                if node is None or isinstance(node, bool | float):
                    raise TopologyError(
                        f"{kind} node id {node!r} is not allowed: use a string or an integer"
                    )
                if node in seen:
                    raise TopologyError(
                        f"duplicate node id {_name(node)}: declared as a {seen[node]} node "
                        f"and again as a {kind} node; give every node one unique id"
                    )
                text = str(node)
                if text in by_text:
                    raise TopologyError(
                        f"node ids {_name(by_text[text])} and {_name(node)} have the same "
                        f"string form {text!r}; schedule files name nodes by that form, "
                        "so rename one of them"
                    )
                seen[node] = kind
                by_text[text] = node
        if len(compute) < (2 if strict else 1):
            raise TopologyError(
                f"a topology needs at least two compute nodes, this one has {len(compute)}"
                + (f" ({', '.join(map(_name, compute))})" if compute else "")
                + ": declare the GPUs as compute nodes"
            )
        if len(compute) < 2:
            problem(f"a topology needs at least two compute nodes, this one has one "
                    f"({_name(compute[0])})")
        self.compute_nodes: tuple[Node, ...] = tuple(compute)
        self.switch_nodes: tuple[Node, ...] = tuple(switches)
        self.nodes: tuple[Node, ...] = self.compute_nodes + self.switch_nodes
        self.index: dict[Node, int] = {v: i for i, v in enumerate(self.nodes)}

        capacity: dict[Link, Fraction] = {}
        latency: dict[Link, Fraction] = {}
        for i, link in enumerate(links):
            loc = where.get(i, f"link #{i}")
            src, dst, raw, both = self._unpack_link(link, loc)
            raw_alpha = link.get("alpha") if isinstance(link, Mapping) else None
            for node in (src, dst):
                if node not in seen:
                    raise TopologyError(
                        f"{loc} ({_name(src)} -> {_name(dst)}) refers to undeclared node "
                        f"{_name(node)}: add it to compute_nodes or switch_nodes"
                    )
            if src == dst:
                raise TopologyError(
                    f"{loc} is a self-loop on node {_name(src)}: a node cannot send to "
                    "itself; remove the link"
                )
            try:
                cap = parse_number(raw)
            except ValueError as exc:
                shown = f" has capacity {raw!r}:" if len(repr(raw)) <= 40 else ": capacity"
                raise TopologyError(
                    f"{loc} ({_name(src)} -> {_name(dst)}){shown} {exc}; "
                    "capacities must be positive finite numbers"
                ) from None
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
                a = _parse_alpha(raw_alpha, f"{loc} ({_name(src)} -> {_name(dst)})")
                for e in pairs:
                    latency[e] = max(latency.get(e, a), a)
        if not capacity:
            problem("the topology has no links: add links between its nodes")
        for e, raw_a in (alpha or {}).items():
            if e not in capacity:
                raise TopologyError(f"alpha is given for {e!r}, which is not a link")
            a = _parse_alpha(raw_a, f"link {_name(e[0])} -> {_name(e[1])}")
            latency[e] = max(latency.get(e, a), a)
        self.alpha: dict[Link, Fraction] = dict(sorted(latency.items(),
                                                       key=lambda x: self._link_key(x)))

        multicast = tuple(multicast_switches)
        for w in multicast:
            if w not in seen or seen[w] != "switch":
                raise TopologyError(
                    f"multicast switch {_name(w)} is not a declared switch node: "
                    "list it under switch_nodes too"
                )
        self.multicast_switches: frozenset[Node] = frozenset(multicast)

        # Eulerian: every node's in-total equals its out-total (seed 000 §1).
        tot_in: dict[Node, Fraction] = {v: Fraction(0) for v in self.nodes}
        tot_out: dict[Node, Fraction] = {v: Fraction(0) for v in self.nodes}
        for (u, v), c in capacity.items():
            tot_out[u] += c
            tot_in[v] += c
        bad = [v for v in self.nodes if tot_in[v] != tot_out[v]]
        if bad:
            details = "; ".join(
                f"{_name(v)} receives {fraction_str(tot_in[v])} but sends "
                f"{fraction_str(tot_out[v])}"
                for v in bad
            )
            problem(
                f"the topology is not Eulerian ({len(bad)} unbalanced node"
                f"{'s' if len(bad) > 1 else ''}): {details} ({self.unit}). Every node must "
                "send exactly as much as it receives: add or fix links so that the totals match "
                "(bidirectional links with equal capacities always balance)"
            )

        self.capacity: dict[Link, Fraction] = dict(sorted(capacity.items(), key=self._link_key))
        try:
            self.scale: int = lcm_of_denominators(list(self.capacity.values()),
                                                  what="the link capacities")
        except NumberError as exc:
            raise TopologyError(str(exc)) from None
        self.int_capacity: dict[Link, int] = {
            e: int(c * self.scale) for e, c in self.capacity.items()
        }
        if self.forestcoll_problem is None:
            try:
                self._check_connected(tot_in)
            except TopologyError as exc:
                problem(str(exc))
        self._hash: str | None = None

    # ------------------------------------------------------------------ helpers
    def _link_key(self, item: tuple[Link, Fraction]) -> tuple[int, int]:
        (u, v), _ = item
        return (self.index[u], self.index[v])

    @staticmethod
    def _unpack_link(link: Any, loc: str) -> tuple[Node, Node, Any, bool]:
        if isinstance(link, Mapping):
            missing = [k for k in ("src", "dst", "capacity") if k not in link]
            if missing:
                raise TopologyError(
                    f"{loc} lacks {', '.join(missing)}: every link needs src, dst and capacity"
                )
            extra = set(link) - {"src", "dst", "capacity", "bidirectional", "alpha"}
            if extra:
                raise TopologyError(
                    f"{loc} has unknown keys {sorted(extra)}: a link has src, dst, capacity "
                    "and optionally bidirectional and alpha"
                )
            both = link.get("bidirectional", False)
            if not isinstance(both, bool):
                raise TopologyError(f"{loc}: bidirectional must be true or false")
            return link["src"], link["dst"], link["capacity"], both
        try:
            src, dst, cap = link
        except (TypeError, ValueError):
            raise TopologyError(
                f"{loc} is {link!r}: a link is a (src, dst, capacity) triple"
            ) from None
        return src, dst, cap, False

    def _check_connected(self, tot_in: Mapping[Node, Fraction]) -> None:
        first = self.compute_nodes[0]
        for v in self.compute_nodes:
            if tot_in[v] == 0:
                raise TopologyError(
                    f"compute node {_name(v)} has no links, so it cannot receive from "
                    f"compute node {_name(first if v != first else self.compute_nodes[1])}: "
                    "connect it or remove it"
                )
        adj: dict[Node, list[Node]] = {v: [] for v in self.nodes}
        for u, v in self.capacity:
            adj[u].append(v)
        reached = {first}
        stack = [first]
        while stack:
            u = stack.pop()
            for v in adj[u]:
                if v not in reached:
                    reached.add(v)
                    stack.append(v)
        for v in self.compute_nodes:
            if v not in reached:
                raise TopologyError(
                    f"compute node {_name(v)} cannot receive from compute node {_name(first)}: "
                    "no directed path leads from one to the other; add links that join "
                    "their parts of the network"
                )

    # ---------------------------------------------------------------- queries
    def require_forestcoll(self, method: str) -> None:
        """Raise :class:`TopologyError` when ``method`` cannot run on this topology.

        Only a topology built with ``strict=False`` can fail: ``method`` names
        what needs the checks (for example "the ForestColl optimum")."""
        if self.forestcoll_problem is not None:
            raise TopologyError(
                f"{method} needs an Eulerian topology with at least two compute nodes, each "
                f"reachable from the first (seed 000 §1), and this one is not: "
                f"{self.forestcoll_problem}. The all-reduce rate bounds (collcert optimum "
                "-c allreduce) work on any directed graph."
            )

    @property
    def num_compute(self) -> int:
        """N = |V_c|."""
        return len(self.compute_nodes)

    def is_compute(self, node: Node) -> bool:
        return node in self.index and self.index[node] < len(self.compute_nodes)

    def lookup(self, node: Node) -> Node:
        """``node`` itself when it is a node, else the node written ``str(node)``
        (so a root given on the command line as ``"3"`` finds node ``3``), else
        ``node`` unchanged (the caller reports it as unknown)."""
        if node in self.index:
            return node
        for v in self.nodes:
            if str(v) == str(node):
                return v
        return node

    def out_capacity(self, nodes: Iterable[Node]) -> Fraction:
        """B⁺(S): total capacity of links leaving the node set S."""
        s = set(nodes)
        return sum((c for (u, v), c in self.capacity.items() if u in s and v not in s), Fraction(0))

    def in_capacity(self, nodes: Iterable[Node]) -> Fraction:
        """B⁻(S): total capacity of links entering the node set S."""
        s = set(nodes)
        return sum((c for (u, v), c in self.capacity.items() if v in s and u not in s), Fraction(0))

    def transpose(self) -> Topology:
        """The same network with every link reversed (used for reduce-scatter)."""
        return Topology(
            self.compute_nodes,
            [(v, u, c) for (u, v), c in self.capacity.items()],
            self.switch_nodes,
            name=f"{self.name} (transposed)" if self.name else "transposed",
            unit=self.unit,
            multicast_switches=self.multicast_switches,
            alpha={(v, u): a for (u, v), a in self.alpha.items()},
            strict=self.forestcoll_problem is None,
        )

    def scaled(self, factor: object) -> Topology:
        """Every capacity multiplied by an exact positive ``factor``."""
        f = parse_number(factor)
        return Topology(
            self.compute_nodes,
            [(u, v, c * f) for (u, v), c in self.capacity.items()],
            self.switch_nodes,
            name=self.name,
            unit=self.unit,
            multicast_switches=self.multicast_switches,
            alpha=self.alpha,
            strict=self.forestcoll_problem is None,
        )

    def __repr__(self) -> str:
        label = f" {self.name!r}" if self.name else ""
        return (
            f"<Topology{label}: {self.num_compute} compute, {len(self.switch_nodes)} switch "
            f"nodes, {len(self.capacity)} links>"
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Topology):
            return NotImplemented
        return (
            self.compute_nodes == other.compute_nodes
            and set(self.switch_nodes) == set(other.switch_nodes)
            and self.capacity == other.capacity
            and self.multicast_switches == other.multicast_switches
        )

    def __hash__(self) -> int:
        return hash(self.content_hash())

    # ------------------------------------------------------------- conversion
    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict in the ``collcert-topology/1`` format (docs/topology.md)."""
        for v in self.nodes:
            if not isinstance(v, str | int):
                raise TopologyError(
                    f"node id {v!r} cannot be written to JSON: only string and integer ids can; "
                    "relabel the nodes first (networkx.relabel_nodes(G, str))"
                )
        out: dict[str, Any] = {"format": FORMAT}
        if self.name:
            out["name"] = self.name
        out["unit"] = self.unit
        out["compute_nodes"] = list(self.compute_nodes)
        out["switch_nodes"] = list(self.switch_nodes)
        if self.multicast_switches:
            out["multicast_switches"] = [w for w in self.switch_nodes if w in self.multicast_switches]
        out["links"] = [
            {"src": u, "dst": v, "capacity": fraction_str(c)} for (u, v), c in self.capacity.items()
        ]
        for link in out["links"]:
            a = self.alpha.get((link["src"], link["dst"]))
            if a is not None:
                link["alpha"] = fraction_str(a)
        return out

    def content_hash(self) -> str:
        """``sha256:<hex>`` of the canonical topology (node order, links, capacities)."""
        if self._hash is None:
            canon = {
                "compute_nodes": [[type(v).__name__, str(v)] for v in self.compute_nodes],
                "switch_nodes": sorted([type(v).__name__, str(v)] for v in self.switch_nodes),
                "links": sorted(
                    [str(u), str(v), fraction_str(c)] for (u, v), c in self.capacity.items()
                ),
            }
            blob = json.dumps(canon, sort_keys=True, separators=(",", ":")).encode()
            self._hash = "sha256:" + hashlib.sha256(blob).hexdigest()
        return self._hash

    @classmethod
    def from_json(cls, source: str | os.PathLike[str] | Mapping[str, Any], *,
                  strict: bool = True, solve: bool = False) -> Topology:
        """Read a topology from a JSON file path, a JSON text, or an already-parsed dict.

        Errors name the file, the link (with its line in the file) and the fix.
        ``strict=False`` accepts any directed graph (see :class:`Topology`).
        Files and texts are read in bounded memory, and a topology too big to build
        (or, with ``solve=True``, too big for its optimum to fit in this machine's
        memory) is refused before it is built (:mod:`collcert.reference.limits`).
        """
        where: dict[int, str] = {}
        origin = "topology"
        if isinstance(source, Mapping):
            data: Any = source
        else:
            text, origin = _read_text(source)
            try:
                # long decimals stay exact: never let a capacity pass through a float
                data = json.loads(text, parse_float=Decimal)
            except json.JSONDecodeError as exc:
                raise TopologyError(
                    f"{origin}: not valid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
                ) from None
            except RecursionError:
                raise TopologyError(f"{origin}: JSON nested too deeply to be a topology") from None
            except ValueError as exc:  # an integer beyond Python's 4300-digit limit
                why = ("a number has more than 4300 digits" if "digits" in str(exc)
                       else str(exc))
                raise TopologyError(f"{origin}: not readable JSON: {why}") from None
            for i, line in enumerate(_array_item_lines(text, "links")):
                where[i] = f"{origin}: links[{i}] (line {line})"
        if not isinstance(data, Mapping):
            raise TopologyError(f"{origin}: the top level must be a JSON object")
        fmt = data.get("format", FORMAT)
        if fmt != FORMAT:
            raise TopologyError(
                f"{origin}: format {fmt!r} is not {FORMAT!r}; convert the file or drop the key"
            )
        if "port_model" in data:  # one-port platforms (seed 001): reference/oneport.py
            raise TopologyError(
                f"{origin}: \"port_model\": {data['port_model']!r} marks a one-port platform "
                "(links with a 'cost'), which this command does not model; use "
                "'collcert broadcast-steady' (docs/steady-broadcast.md), or drop the key and "
                "give link capacities")
        known = {"format", "name", "unit", "compute_nodes", "switch_nodes", "multicast_switches",
                 "links", "description", "source"}
        extra = set(data) - known
        if extra:
            raise TopologyError(
                f"{origin}: unknown keys {sorted(extra)}; allowed keys are {sorted(known)}"
            )
        for key in ("compute_nodes", "links"):
            if key not in data:
                raise TopologyError(f"{origin}: missing {key!r} (see docs/topology.md)")
        for key in ("compute_nodes", "switch_nodes", "multicast_switches", "links"):
            if key in data and not isinstance(data[key], list):
                raise TopologyError(f"{origin}: {key!r} must be a JSON array")
        num_links = sum(2 if isinstance(link, Mapping) and link.get("bidirectional") is True
                        else 1 for link in data["links"])
        num_compute = len(data["compute_nodes"])
        check_size(Size(num_compute, num_compute + len(data.get("switch_nodes", [])), num_links),
                   origin, solve=solve)
        for key in ("compute_nodes", "switch_nodes", "multicast_switches"):
            for v in data.get(key, []):
                if not isinstance(v, str | int) or isinstance(v, bool):
                    raise TopologyError(
                        f"{origin}: {key} entry {v!r} is not a string or integer node id"
                    )
        links = data["links"]
        for i, link in enumerate(links):
            where.setdefault(i, f"{origin}: links[{i}]")
            if isinstance(link, Mapping) and "cost" in link:
                raise TopologyError(
                    f"{where[i]} gives a 'cost' (time per message), which belongs to one-port "
                    "platforms: add \"port_model\": \"one-port\" at the top level and use "
                    "'collcert broadcast-steady', or give a 'capacity' instead")
            if not isinstance(link, Mapping | list):
                raise TopologyError(
                    f"{where[i]} is {link!r}: a link is an object with src, dst, capacity"
                )
        try:
            return cls(
                data["compute_nodes"],
                links,
                data.get("switch_nodes", []),
                name=str(data.get("name", "")),
                unit=str(data.get("unit", "GB/s")),
                multicast_switches=data.get("multicast_switches", []),
                strict=strict,
                _where=where,
            )
        except TopologyError as exc:
            if str(exc).startswith(origin):
                raise
            raise TopologyError(f"{origin}: {exc}") from None

    def save(self, path: str | os.PathLike[str]) -> None:
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(self.to_json(), fh, indent=1)
            fh.write("\n")

    @classmethod
    def from_networkx(
        cls,
        graph: Any,
        compute_nodes: Iterable[Node] | None = None,
        capacity: str = "capacity",
        *,
        name: str = "",
        unit: str = "GB/s",
    ) -> Topology:
        """Build from a networkx (Multi)DiGraph; undirected graphs give both directions.

        All nodes are compute nodes when ``compute_nodes`` is None; otherwise the
        remaining nodes are switches. Node ids are kept as given. Every edge
        needs the ``capacity`` attribute.
        """
        nodes = list(graph.nodes)
        if compute_nodes is None:
            compute = nodes
        else:
            compute = list(compute_nodes)
            missing = [v for v in compute if v not in graph]
            if missing:
                raise TopologyError(
                    f"compute node {_name(missing[0])} is not a node of the graph: "
                    "check the compute_nodes argument"
                )
        cset = set(compute)
        switches = [v for v in nodes if v not in cset]
        links = []
        directed = graph.is_directed()
        for data_edge in graph.edges(data=True):
            u, v, attrs = data_edge
            if capacity not in attrs:
                raise TopologyError(
                    f"edge {_name(u)} -> {_name(v)} has no {capacity!r} attribute: set it, "
                    "or pass capacity='<attribute name>'"
                )
            links.append((u, v, attrs[capacity]))
            if not directed:
                links.append((v, u, attrs[capacity]))
        return cls(compute, links, switches, name=name or str(graph.graph.get("name", "")),
                   unit=unit)

    def to_networkx(self) -> Any:
        """A networkx DiGraph with exact ``capacity`` and node attribute ``kind``."""
        import networkx as nx

        g = nx.DiGraph(name=self.name)
        for v in self.compute_nodes:
            g.add_node(v, kind="compute")
        for v in self.switch_nodes:
            g.add_node(v, kind="switch", multicast=v in self.multicast_switches)
        for (u, v), c in self.capacity.items():
            g.add_edge(u, v, capacity=c)
        return g


def _parse_alpha(raw: Any, where: str) -> Fraction:
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


def _read_text(source: str | os.PathLike[str]) -> tuple[str, str]:
    """The text of a path, or the string itself when it already is JSON."""
    if isinstance(source, str) and source.lstrip()[:1] in ("{", "["):
        check_json_memory(source, "the topology text")
        return source, "topology"
    path = os.fspath(source)
    text = read_text(path, str(path))  # bounded size, no binary (limits.py)
    check_json_memory(text, str(path))  # its parsed form must fit in memory too
    return text, str(path)


def _line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def _array_item_lines(text: str, key: str) -> list[int]:
    """Line numbers where the items of the top-level array ``key`` start (best effort)."""
    dec = json.JSONDecoder()
    ws = " \t\n\r"
    try:
        i = 0
        while text[i] in ws:
            i += 1
        if text[i] != "{":
            return []
        i += 1
        while True:
            while text[i] in ws + ",":
                i += 1
            if text[i] == "}":
                return []
            k, i = dec.raw_decode(text, i)
            while text[i] in ws + ":":
                i += 1
            if k != key:
                _, i = dec.raw_decode(text, i)
                continue
            if text[i] != "[":
                return []
            i += 1
            lines: list[int] = []
            line, last = _line_of(text, i), i
            while True:
                while text[i] in ws + ",":
                    i += 1
                if text[i] == "]":
                    return lines
                line += text.count("\n", last, i)
                last = i
                lines.append(line)
                _, i = dec.raw_decode(text, i)
    except (ValueError, IndexError, RecursionError):
        return []
