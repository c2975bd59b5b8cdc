"""The network model: compute nodes, switch nodes and directed capacitated links.

A :class:`Topology` is immutable once built and always valid: every
constructor runs the same checks, and any problem raises
:class:`~collcert.TopologyError` with a message that names the culprit and
says what to do. The model follows Zhao & Krishnamurthy 2023, §1 (ForestColl, Zhao et al. 2026, §3):
G = (V = V_s ∪ V_c, E) is a directed multigraph with positive capacities and is
*Eulerian* (every node sends as much as it receives).

Capacities are exact rationals in the topology's bandwidth unit (GB/s by
default). Internally they are scaled by ``scale`` (the least common multiple
of their denominators) to integers: ``int_capacity[e] == scale * capacity[e]``.

Reading and writing (JSON, networkx) is in :mod:`.topology_io`, to which
``Topology.from_json``, ``to_json``, ``save``, ``from_networkx`` and
``to_networkx`` delegate; ``FORMAT`` is importable from here as before.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Hashable, Iterable, Mapping, Sized
from fractions import Fraction
from typing import Any

from . import topology_io
from .errors import TopologyError
from .errors import node_name as _name
from .exact import NumberError, fraction_str, lcm_of_denominators, parse_number
from .limits import Size, check_size
from .topology_io import FORMAT, _parse_alpha, _unpack_link

__all__ = ["FORMAT", "Link", "Node", "Topology"]

Node = Hashable
Link = tuple[Node, Node]


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
        Switches that can replicate data (in-network multicast, Zhao et al. 2026, §5.6).
    alpha:
        Optional latency α of links, in microseconds, ``{(src, dst): value}``
        (a link mapping may also carry an ``alpha`` key). Used only by the
        latency-bandwidth (α-β) model (``collcert.reference.execution.alphabeta``); it
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
            src, dst, raw, both = _unpack_link(link, loc)
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

        # Eulerian: every node's in-total equals its out-total (Zhao & Krishnamurthy 2023, §1).
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
                f"reachable from the first (Zhao & Krishnamurthy 2023, §1), and this one is not: "
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
        return topology_io.to_json(self)

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
        memory) is refused before it is built (:mod:`collcert.reference.model.limits`).
        """
        return topology_io.from_json(cls, source, strict=strict, solve=solve)

    def save(self, path: str | os.PathLike[str]) -> None:
        topology_io.save(self, path)

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
        return topology_io.from_networkx(cls, graph, compute_nodes, capacity, name=name,
                                         unit=unit)

    def to_networkx(self) -> Any:
        """A networkx DiGraph with exact ``capacity`` and node attribute ``kind``."""
        return topology_io.to_networkx(self)
