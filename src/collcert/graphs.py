"""``collcert.optimum`` and ``collcert.schedule`` for networkx graphs as well as topologies.

``collcert.optimum(G, "allgather", compute_nodes=[...])`` reads a networkx
(Multi)DiGraph (an undirected graph gives both directions) as a topology:
every edge needs a capacity, the attribute ``"capacity"`` unless ``capacity=``
names another; ``compute_nodes`` are the GPUs, in rank order (default: the
nodes whose ``kind`` attribute is ``"compute"``, as ``Topology.to_networkx``
writes them, else every node). Capacities are read exactly (a float as the
decimal it prints as). A :class:`~collcert.Topology` is used as it is.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import Any

from collcert.reference.forestcoll import Optimum, Schedule
from collcert.reference.forestcoll import optimum as _optimum
from collcert.reference.forestcoll import schedule as _schedule
from collcert.reference.model import Topology, TopologyError

__all__ = ["as_topology", "optimum", "schedule"]


def as_topology(graph: Any, compute_nodes: Iterable[Hashable] | None = None,
                capacity: str = "capacity") -> Topology:
    """``graph`` itself when it is a Topology, else the topology of a networkx graph."""
    if isinstance(graph, Topology):
        if compute_nodes is not None or capacity != "capacity":
            raise TopologyError("compute_nodes= and capacity= apply to a networkx graph; a "
                                "Topology already has its compute nodes and capacities")
        return graph
    if not (hasattr(graph, "is_directed") and hasattr(graph, "edges")):
        raise TypeError(f"expected a collcert.Topology or a networkx graph, got "
                        f"{type(graph).__name__}")
    if not isinstance(capacity, str):
        raise TypeError("capacity= names the edge attribute that holds capacities (a string)")
    if compute_nodes is None:
        kinds = dict(graph.nodes(data="kind"))
        marked = [v for v, k in kinds.items() if k == "compute"]
        compute_nodes = marked or None
    return Topology.from_networkx(graph, compute_nodes, capacity)


def optimum(topology: Any, collective: str = "allgather", *,
            compute_nodes: Iterable[Hashable] | None = None, capacity: str = "capacity",
            **options: Any) -> Optimum:
    topo = as_topology(topology, compute_nodes, capacity)
    return _optimum(topo, collective, **options)


def schedule(topology: Any, collective: str = "allgather", *,
             compute_nodes: Iterable[Hashable] | None = None, capacity: str = "capacity",
             **options: Any) -> Schedule:
    topo = as_topology(topology, compute_nodes, capacity)
    return _schedule(topo, collective, **options)


_GRAPH_DOC = """

    ``topology`` may also be a networkx graph: ``compute_nodes`` (the GPUs, in rank
    order) and ``capacity`` (the edge attribute holding capacities, default
    ``"capacity"``) then say how to read it (:func:`collcert.graphs.as_topology`).
"""
optimum.__doc__ = (_optimum.__doc__ or "").rstrip() + _GRAPH_DOC
schedule.__doc__ = (_schedule.__doc__ or "").rstrip() + _GRAPH_DOC
