"""Plain data for every checker: verdicts, input errors, exact numbers, the topology, files.

Modules:

``base``     :class:`Verdict`, :class:`InputError`, exact numbers, :class:`Topo`
             (the ``collcert-topology/1`` topology as the checkers read it) and the
             one reader of node and link lists that every checker's topology uses
``files``    input, plain or gzip-compressed, size-capped, in bounded memory; JSON
``xmlsafe``  a small, bounded, safe XML reader (no DTDs, no entities)
"""

from .base import (
    InputError,
    Link,
    LinkFormat,
    Node,
    Topo,
    Verdict,
    content_hash,
    find_node,
    frac_str,
    integer,
    is_fingerprint,
    number,
    other_topology,
    read_links,
    show_node,
    topology_nodes,
)
from .files import (
    check_fits,
    check_json_memory,
    decode,
    human_bytes,
    load_json,
    memory_budget,
    parse_bytes,
    read_bytes,
    read_stream,
    read_text,
)
from .xmlsafe import Element, parse

__all__ = [
    "Element",
    "InputError",
    "Link",
    "LinkFormat",
    "Node",
    "Topo",
    "Verdict",
    "check_fits",
    "check_json_memory",
    "content_hash",
    "decode",
    "find_node",
    "frac_str",
    "human_bytes",
    "integer",
    "load_json",
    "memory_budget",
    "number",
    "is_fingerprint",
    "other_topology",
    "parse",
    "parse_bytes",
    "read_bytes",
    "read_links",
    "read_stream",
    "read_text",
    "show_node",
    "topology_nodes",
]
