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

The constructor reads the links with :mod:`.links` and checks nodes and graph
with :mod:`.topology_checks`; the JSON format and networkx graphs are in
:mod:`.topology_io`, files and texts are read by :mod:`.json_document`.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping, Sized
from fractions import Fraction
from typing import Any

from .capabilities import check_reducing, in_network_text
from .errors import TopologyError
from .exact import fraction_str, parse_number
from .json_document import read_json_document
from .limits import Size, check_size
from .links import Link, Node, read_links, with_alpha
from .output_files import output_file
from .topology_checks import (
    capacity_scale,
    check_multicast,
    check_node_ids,
    compute_count_problem,
    connectivity_problem,
    eulerian_problem,
    link_totals,
)
from .topology_io import (
    document_arguments,
    networkx_arguments,
    networkx_capabilities,
    networkx_graph,
    topology_document,
)

__all__ = ["Topology"]


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
    reducing_switches, nvls_switches, reduction_rates:
        Switches that add streams in the network: ``reducing_switches`` the SHARP way
        (InfiniBand SHARP: the switch holds the sum and multicasts it), ``nvls_switches``
        the NVLS way (NVLink SHARP: the sum goes into a member GPU, which stores it back
        by multicast); a switch listed in both adds the NVLS way. The attribute
        ``reducing_switches`` holds every switch that adds, ``nvls_switches`` those
        adding the NVLS way, ``sharp_switches`` the others. ``reduction_rates``: the most
        reduced data each may output per unit of time (``{switch: rate}``, optional):
        :mod:`collcert.reference.model.capabilities`. They open the in-network model
        (:mod:`collcert.reference.innetwork`) and change nothing else.
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
        "reducing_switches",
        "nvls_switches",
        "reduction_rates",
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
        reducing_switches: Iterable[Node] = (),
        reduction_rates: Mapping[Any, Any] | None = None,
        alpha: Mapping[Link, Any] | None = None,
        strict: bool = True,
        nvls_switches: Iterable[Node] = (),
        _where: Mapping[int, str] | None = None,
    ) -> None:
        self.forestcoll_problem: str | None = None
        self.name = str(name)
        self.unit = str(unit)
        compute = list(compute_nodes)
        switches = list(switch_nodes)
        if not isinstance(links, Sized):
            links = list(links)
        if len(compute) + len(switches) + len(links) > 10_000:  # built directly, from networkx
            check_size(Size(len(compute), len(compute) + len(switches), len(links)),
                       self.name or "the topology")
        kinds = check_node_ids(compute, switches)
        self._forestcoll_needs(compute_count_problem(compute, strict), strict)
        self.compute_nodes: tuple[Node, ...] = tuple(compute)
        self.switch_nodes: tuple[Node, ...] = tuple(switches)
        self.nodes: tuple[Node, ...] = self.compute_nodes + self.switch_nodes
        self.index: dict[Node, int] = {v: i for i, v in enumerate(self.nodes)}

        capacity, latency = read_links(links, kinds, _where or {}, strict)
        if not capacity:
            self._forestcoll_needs("the topology has no links: add links between its nodes",
                                   strict)
        latency = with_alpha(latency, alpha, capacity)
        self.alpha: dict[Link, Fraction] = dict(sorted(latency.items(), key=self._link_key))
        self.multicast_switches: frozenset[Node] = check_multicast(multicast_switches, kinds)
        reducing, nvls, rates = check_reducing(reducing_switches, reduction_rates, kinds,
                                               nvls_switches, self.multicast_switches)
        self.reducing_switches: frozenset[Node] = reducing
        self.nvls_switches: frozenset[Node] = nvls
        self.reduction_rates: dict[Node, Fraction] = rates

        tot_in, tot_out = link_totals(self.nodes, capacity)
        self._forestcoll_needs(eulerian_problem(self.nodes, tot_in, tot_out, self.unit), strict)
        self.capacity: dict[Link, Fraction] = dict(sorted(capacity.items(), key=self._link_key))
        self.scale: int = capacity_scale(self.capacity.values())
        self.int_capacity: dict[Link, int] = {
            e: int(c * self.scale) for e, c in self.capacity.items()
        }
        if self.forestcoll_problem is None:
            self._forestcoll_needs(connectivity_problem(self.compute_nodes, self.nodes,
                                                        self.capacity, tot_in), strict)
        self._hash: str | None = None

    # ------------------------------------------------------------------ helpers
    def _forestcoll_needs(self, problem: str | None, strict: bool) -> None:
        """Refuse (strict) or remember the first reason ForestColl cannot run."""
        if problem is None:
            return
        if strict:
            raise TopologyError(problem)
        if self.forestcoll_problem is None:
            self.forestcoll_problem = problem

    def _link_key(self, item: tuple[Link, Fraction]) -> tuple[int, int]:
        (u, v), _ = item
        return (self.index[u], self.index[v])

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
    def in_network(self) -> bool:
        """Whether some switch adds (SHARP or NVLS): the in-network model differs from
        ForestColl's for allreduce."""
        return bool(self.reducing_switches)

    @property
    def sharp_switches(self) -> frozenset[Node]:
        """The switches that add the SHARP way (they hold their sums and multicast them)."""
        return self.reducing_switches - self.nvls_switches

    def in_network_model(self) -> str:
        """The switches' capabilities in words (``"NVLS: b0.nvswitch reduces to a member
        GPU and multicasts from one"``)."""
        return in_network_text(self.reducing_switches, self.multicast_switches,
                               self.reduction_rates, self.nvls_switches)

    def _capabilities(self) -> dict[str, Any]:
        return {"multicast_switches": self.multicast_switches,
                "reducing_switches": self.reducing_switches,
                "nvls_switches": self.nvls_switches,
                "reduction_rates": self.reduction_rates}

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
            **self._capabilities(),
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
            reducing_switches=self.reducing_switches,
            nvls_switches=self.nvls_switches,
            reduction_rates={w: r * f for w, r in self.reduction_rates.items()},
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
            and self.reducing_switches == other.reducing_switches
            and self.nvls_switches == other.nvls_switches
            and self.reduction_rates == other.reduction_rates
        )

    def __hash__(self) -> int:
        return hash(self.content_hash())

    # ------------------------------------------------------------- conversion
    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict in the ``collcert-topology/1`` format (docs/topology.md)."""
        return topology_document(name=self.name, unit=self.unit,
                                 compute_nodes=self.compute_nodes,
                                 switch_nodes=self.switch_nodes,
                                 multicast_switches=self.multicast_switches,
                                 capacity=self.capacity, alpha=self.alpha,
                                 reducing_switches=self.sharp_switches,
                                 nvls_switches=self.nvls_switches,
                                 reduction_rates=self.reduction_rates)

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
        data, origin, where = read_json_document(source)
        arguments = document_arguments(data, origin, where, solve=solve)
        try:
            return cls(**arguments, strict=strict)
        except TopologyError as exc:
            if str(exc).startswith(origin):
                raise
            raise TopologyError(f"{origin}: {exc}") from None

    def save(self, path: str | os.PathLike[str]) -> None:
        with output_file(path) as fh:  # all or nothing
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
        needs the ``capacity`` attribute. A switch node with the attribute
        ``multicast=True`` copies, one with ``reduce=True`` adds the SHARP way (and
        copies), one with ``nvls=True`` the NVLS way, and ``reduction_rate`` limits it
        (as :meth:`to_networkx` writes them).
        """
        compute, links, switches, name = networkx_arguments(graph, compute_nodes, capacity,
                                                            name)
        return cls(compute, links, switches, name=name, unit=unit,
                   **networkx_capabilities(graph, switches))

    def to_networkx(self) -> Any:
        """A networkx DiGraph with exact ``capacity`` and node attribute ``kind``."""
        return networkx_graph(name=self.name, compute_nodes=self.compute_nodes,
                              switch_nodes=self.switch_nodes,
                              multicast_switches=self.multicast_switches,
                              capacity=self.capacity,
                              reducing_switches=self.sharp_switches,
                              nvls_switches=self.nvls_switches,
                              reduction_rates=self.reduction_rates)
