"""Reading and writing topologies: the ``collcert-topology/1`` JSON format and networkx.

Moved out of :mod:`collcert.reference.model.topology` (unchanged): the bodies of
``Topology.to_json``, ``from_json``, ``save``, ``from_networkx`` and
``to_networkx`` (those methods delegate here and keep their docstrings), the
parsing of one link's fields and latency, and the bounded reading of a JSON
file or text with the line of each link (``_load_json``, used by :mod:`.oneport` too).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from decimal import Decimal
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from .errors import TopologyError
from .errors import node_name as _name
from .exact import fraction_str, parse_number
from .limits import Size, check_json_memory, check_size, read_text

if TYPE_CHECKING:  # annotations only: topology.py imports this module
    from .topology import Node, Topology

FORMAT = "collcert-topology/1"


def to_json(t: Topology) -> dict[str, Any]:
    """:meth:`Topology.to_json`."""
    for v in t.nodes:
        if not isinstance(v, str | int):
            raise TopologyError(
                f"node id {v!r} cannot be written to JSON: only string and integer ids can; "
                "relabel the nodes first (networkx.relabel_nodes(G, str))"
            )
    out: dict[str, Any] = {"format": FORMAT}
    if t.name:
        out["name"] = t.name
    out["unit"] = t.unit
    out["compute_nodes"] = list(t.compute_nodes)
    out["switch_nodes"] = list(t.switch_nodes)
    if t.multicast_switches:
        out["multicast_switches"] = [w for w in t.switch_nodes if w in t.multicast_switches]
    out["links"] = [
        {"src": u, "dst": v, "capacity": fraction_str(c)} for (u, v), c in t.capacity.items()
    ]
    for link in out["links"]:
        a = t.alpha.get((link["src"], link["dst"]))
        if a is not None:
            link["alpha"] = fraction_str(a)
    return out


def from_json(cls: type[Topology], source: str | os.PathLike[str] | Mapping[str, Any], *,
              strict: bool = True, solve: bool = False) -> Topology:
    """:meth:`Topology.from_json` (``cls`` is the class to build)."""
    data, origin, where = _load_json(source)
    if not isinstance(data, Mapping):
        raise TopologyError(f"{origin}: the top level must be a JSON object")
    fmt = data.get("format", FORMAT)
    if fmt != FORMAT:
        raise TopologyError(
            f"{origin}: format {fmt!r} is not {FORMAT!r}; convert the file or drop the key"
        )
    if "port_model" in data:  # one-port platforms (Legrand et al. 2003): reference/broadcast/oneport.py
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


def save(t: Topology, path: str | os.PathLike[str]) -> None:
    """:meth:`Topology.save`."""
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(t.to_json(), fh, indent=1)
        fh.write("\n")


def from_networkx(
    cls: type[Topology],
    graph: Any,
    compute_nodes: Iterable[Node] | None = None,
    capacity: str = "capacity",
    *,
    name: str = "",
    unit: str = "GB/s",
) -> Topology:
    """:meth:`Topology.from_networkx` (``cls`` is the class to build)."""
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


def to_networkx(t: Topology) -> Any:
    """:meth:`Topology.to_networkx`."""
    import networkx as nx

    g = nx.DiGraph(name=t.name)
    for v in t.compute_nodes:
        g.add_node(v, kind="compute")
    for v in t.switch_nodes:
        g.add_node(v, kind="switch", multicast=v in t.multicast_switches)
    for (u, v), c in t.capacity.items():
        g.add_edge(u, v, capacity=c)
    return g


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


def _load_json(
    source: str | os.PathLike[str] | Mapping[str, Any], *,
    too_deep: str = "JSON nested too deeply to be a topology",
    too_long: str = "a number has more than 4300 digits",
) -> tuple[Any, str, dict[int, str]]:
    """The data of a JSON file path, a JSON text or an already-parsed dict; the origin
    that messages name; ``where[i]``, "origin: links[i] (line n)" for each link of a
    file or text. For topology and one-port platform files (``too_deep`` and
    ``too_long`` end the messages about JSON nested too deeply or a number too long)."""
    where: dict[int, str] = {}
    origin = "topology"
    if isinstance(source, Mapping):
        return source, origin, where
    text, origin = _read_text(source)
    try:
        # long decimals stay exact: never let a capacity pass through a float
        data = json.loads(text, parse_float=Decimal)
    except json.JSONDecodeError as exc:
        raise TopologyError(
            f"{origin}: not valid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from None
    except RecursionError:
        raise TopologyError(f"{origin}: {too_deep}") from None
    except ValueError as exc:  # an integer beyond Python's 4300-digit limit
        why = too_long if "digits" in str(exc) else str(exc)
        raise TopologyError(f"{origin}: not readable JSON: {why}") from None
    for i, line in enumerate(_array_item_lines(text, "links")):
        where[i] = f"{origin}: links[{i}] (line {line})"
    return data, origin, where


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
