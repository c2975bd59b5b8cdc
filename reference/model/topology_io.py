"""The ``collcert-topology/1`` JSON format (docs/topology.md) and networkx graphs, as plain data.

Reading: :func:`document_arguments` checks a parsed document (its keys, its
size before anything is built, its node ids, its link entries) and gives the
arguments of :class:`~collcert.Topology`, which validates the rest;
:func:`networkx_arguments` does the same for a networkx graph. Writing:
:func:`topology_document` and :func:`networkx_graph` turn a topology's fields
into a document or a graph. ``Topology.from_json``, ``to_json``,
``from_networkx`` and ``to_networkx`` are built on these.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Any

from .capabilities import check_one_way
from .errors import TopologyError
from .errors import node_name as _name
from .exact import fraction_str
from .limits import Size, check_size
from .links import Link, Node

TOPOLOGY_FORMAT = "collcert-topology/1"

_KEYS = {"format", "name", "unit", "compute_nodes", "switch_nodes", "multicast_switches",
         "reducing_switches", "nvls_switches", "reduction_rates", "links", "description",
         "source"}


_OTHER_FORMATS = {
    "collcert-schedule/1": ("a schedule", "collcert audit TOPOLOGY SCHEDULE"),
    "collcert-certificate/1": ("a certificate", "collcert check TOPOLOGY CERTIFICATE"),
    "collcert-lp-certificate/1": ("an LP certificate", "collcert check TOPOLOGY CERTIFICATE"),
    "collcert-reduction/1": ("a reduction schedule", "collcert reduce-tree --check FILE"),
    "collcert-steady-broadcast/1": ("a steady-state broadcast schedule",
                                    "collcert check PLATFORM FILE"),
    "collcert-pipe-broadcast/1": ("a pipelined broadcast schedule",
                                  "collcert audit PLATFORM FILE"),
}
"""The other collcert documents, and what to do with one given as a topology."""


def document_arguments(data: Any, origin: str, where: dict[int, str], *,
                       solve: bool = False) -> dict[str, Any]:
    """The keyword arguments of :class:`~collcert.Topology` (``strict`` aside) that the
    parsed document ``data`` from ``origin`` gives; ``where`` names its links (entries
    missing from it are added). Raises :class:`TopologyError` naming ``origin`` for a
    document that is not a topology, or too big to build (with ``solve``: to solve,
    :mod:`.limits`)."""
    _check_keys(data, origin)
    num_links = sum(2 if isinstance(link, Mapping) and link.get("bidirectional") is True
                    else 1 for link in data["links"])
    num_compute = len(data["compute_nodes"])
    check_size(Size(num_compute, num_compute + len(data.get("switch_nodes", [])), num_links),
               origin, solve=solve)
    for key in ("compute_nodes", "switch_nodes", "multicast_switches", "reducing_switches",
                "nvls_switches"):
        for v in data.get(key, []):
            if not isinstance(v, str | int) or isinstance(v, bool):
                raise TopologyError(
                    f"{origin}: {key} entry {v!r} is not a string or integer node id"
                )
    try:
        check_one_way(data.get("reducing_switches", []), data.get("nvls_switches", []))
    except TopologyError as exc:
        raise TopologyError(f"{origin}: {exc}") from None
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
    return {
        "compute_nodes": data["compute_nodes"],
        "links": links,
        "switch_nodes": data.get("switch_nodes", []),
        "name": str(data.get("name", "")),
        "unit": str(data.get("unit", "GB/s")),
        "multicast_switches": data.get("multicast_switches", []),
        "reducing_switches": data.get("reducing_switches", []),
        "nvls_switches": data.get("nvls_switches", []),
        "reduction_rates": data.get("reduction_rates", {}),
        "_where": where,
    }


def _check_keys(data: Any, origin: str) -> None:
    """A JSON object of this format (not a one-port platform), with known keys only,
    the two it needs, and arrays where arrays belong."""
    if not isinstance(data, Mapping):
        raise TopologyError(f"{origin}: the top level must be a JSON object")
    fmt = data.get("format", TOPOLOGY_FORMAT)
    if fmt != TOPOLOGY_FORMAT:
        other = _OTHER_FORMATS.get(str(fmt)[:60])
        if other:
            raise TopologyError(f"{origin}: this is {other[0]} (format {fmt!r}), not a "
                                "topology: give the topology file or platform it was made for "
                                f"('{other[1]}' checks the file itself)")
        raise TopologyError(
            f"{origin}: format {str(fmt)[:60]!r} is not {TOPOLOGY_FORMAT!r}; a topology file "
            "says \"format\": \"collcert-topology/1\" or nothing (docs/topology.md)"
        )
    if "port_model" in data:  # one-port platforms (Legrand et al. 2003): reference/broadcast
        raise TopologyError(
            f"{origin}: \"port_model\": {data['port_model']!r} marks a one-port platform "
            "(links with a 'cost'), which this command does not model; use "
            "'collcert broadcast-steady' (docs/steady-broadcast.md), or drop the key and "
            "give link capacities")
    extra = set(data) - _KEYS
    if extra:
        raise TopologyError(
            f"{origin}: unknown keys {sorted(extra)}; allowed keys are {sorted(_KEYS)}"
        )
    for key in ("compute_nodes", "links"):
        if key not in data:
            raise TopologyError(f"{origin}: missing {key!r} (see docs/topology.md)")
    for key in ("compute_nodes", "switch_nodes", "multicast_switches", "reducing_switches",
                "nvls_switches", "links"):
        if key in data and not isinstance(data[key], list):
            raise TopologyError(f"{origin}: {key!r} must be a JSON array")

    if "reduction_rates" in data and not isinstance(data["reduction_rates"], Mapping):
        raise TopologyError(f"{origin}: 'reduction_rates' must be a JSON object mapping a "
                            "reducing switch to its rate, e.g. {\"sw\": \"900\"}")


def topology_document(*, name: str, unit: str, compute_nodes: Sequence[Node],
                      switch_nodes: Sequence[Node], multicast_switches: Iterable[Node],
                      capacity: Mapping[Link, Fraction],
                      alpha: Mapping[Link, Fraction],
                      reducing_switches: Iterable[Node] = (),
                      reduction_rates: Mapping[Node, Fraction] | None = None,
                      nvls_switches: Iterable[Node] = (),
                      ) -> dict[str, Any]:
    """The JSON-ready document of a topology with these fields (ids must be strings
    or integers)."""
    for v in (*compute_nodes, *switch_nodes):
        if not isinstance(v, str | int):
            raise TopologyError(
                f"node id {v!r} cannot be written to JSON: only string and integer ids can; "
                "relabel the nodes first (networkx.relabel_nodes(G, str))"
            )
    multicast = set(multicast_switches)
    out: dict[str, Any] = {"format": TOPOLOGY_FORMAT}
    if name:
        out["name"] = name
    out["unit"] = unit
    out["compute_nodes"] = list(compute_nodes)
    out["switch_nodes"] = list(switch_nodes)
    if multicast:
        out["multicast_switches"] = [w for w in switch_nodes if w in multicast]
    reducing = set(reducing_switches)
    if reducing:
        out["reducing_switches"] = [w for w in switch_nodes if w in reducing]
    nvls = set(nvls_switches)
    if nvls:
        out["nvls_switches"] = [w for w in switch_nodes if w in nvls]
    if reduction_rates:
        out["reduction_rates"] = {str(w): fraction_str(reduction_rates[w])
                                  for w in switch_nodes if w in reduction_rates}
    out["links"] = [
        {"src": u, "dst": v, "capacity": fraction_str(c)} for (u, v), c in capacity.items()
    ]
    for link in out["links"]:
        a = alpha.get((link["src"], link["dst"]))
        if a is not None:
            link["alpha"] = fraction_str(a)
    return out


def networkx_arguments(graph: Any, compute_nodes: Iterable[Node] | None = None,
                       capacity: str = "capacity", name: str = "",
                       ) -> tuple[list[Node], list[tuple[Node, Node, Any]], list[Node], str]:
    """``(compute nodes, links, switch nodes, name)`` of a networkx (Multi)DiGraph whose
    edges carry the attribute ``capacity``: an undirected graph gives both directions,
    every node not in ``compute_nodes`` (default: all) is a switch, and the name is
    ``name``, else the graph's."""
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
    return compute, links, switches, name or str(graph.graph.get("name", ""))


def networkx_capabilities(graph: Any, switches: Iterable[Node]) -> dict[str, Any]:
    """The switch capabilities a networkx graph's node attributes declare: ``multicast``,
    ``reduce`` (SHARP) and ``nvls`` (true or false), ``reduction_rate`` (a number), on
    switch nodes."""
    multicast, reducing, nvls, rates = [], [], [], {}
    for v in switches:
        attrs = graph.nodes[v]
        if attrs.get("multicast") is True:
            multicast.append(v)
        if attrs.get("reduce") is True:
            reducing.append(v)
        if attrs.get("nvls") is True:
            nvls.append(v)
        if attrs.get("reduction_rate") is not None:
            rates[v] = attrs["reduction_rate"]
    check_one_way(reducing, nvls)
    return {"multicast_switches": multicast, "reducing_switches": reducing,
            "nvls_switches": nvls, "reduction_rates": rates}


def networkx_graph(*, name: str, compute_nodes: Iterable[Node], switch_nodes: Iterable[Node],
                   multicast_switches: frozenset[Node],
                   capacity: Mapping[Link, Fraction],
                   reducing_switches: frozenset[Node] = frozenset(),
                   reduction_rates: Mapping[Node, Fraction] | None = None,
                   nvls_switches: frozenset[Node] = frozenset()) -> Any:
    """A networkx DiGraph with exact ``capacity``, node attribute ``kind``, and on switches
    ``multicast``, ``reduce`` (SHARP), ``nvls`` and (where one is set) ``reduction_rate``."""
    import networkx as nx

    rates = reduction_rates or {}
    g = nx.DiGraph(name=name)
    for v in compute_nodes:
        g.add_node(v, kind="compute")
    for v in switch_nodes:
        g.add_node(v, kind="switch", multicast=v in multicast_switches,
                   reduce=v in reducing_switches, nvls=v in nvls_switches)
        if v in rates:
            g.nodes[v]["reduction_rate"] = rates[v]
    for (u, v), c in capacity.items():
        g.add_edge(u, v, capacity=c)
    return g
