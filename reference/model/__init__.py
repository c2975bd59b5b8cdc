"""The network model: topologies and their files, exact numbers, size limits, errors.

A :class:`Topology` is the directed, capacitated network of compute nodes and
switch nodes of Zhao & Krishnamurthy 2023, §1 (Zhao et al. 2026, §3); every
other room of ``collcert.reference`` takes one.

Modules:

``topology``         :class:`Topology`: validated nodes and links, exact capacities
``links``            node and link ids; reading link entries (shared with one-port
                     platforms), capacities and latencies
``topology_checks``  node ids, multicast switches, ForestColl's conditions (Eulerian,
                     connected)
``capabilities``     switches that add (SHARP switches, NVLS switches) and their
                     reduction rates, checked; the in-network model in words
``topology_io``      the ``collcert-topology/1`` JSON format and networkx graphs
``json_document``    reading a topology-like JSON file or text in bounded memory
``exact``            exact numbers: parsing capacities, printing fractions ("65/3")
``limits``           refuse what this machine cannot read or solve, before building it
``errors``           the exception types, and how their messages name a node
``whatif``           a topology with links degraded and links or nodes failed
``output_files``     writing an output file all or nothing (temporary file, then rename)
"""

from .capabilities import check_one_way
from .errors import CollcertError, ScheduleError, TopologyError, node_name
from .exact import (
    NumberError,
    decimal_str,
    fraction_str,
    lcm_of_denominators,
    parse_number,
    show,
)
from .json_document import read_json_document
from .limits import (
    Size,
    check_budget,
    check_json_memory,
    check_prove_size,
    check_size,
    check_solvable,
    estimates_to,
    orbits_needed,
    read_text,
    schedule_transfers,
    without_symmetry,
)
from .links import Link, Node, unpack_link
from .output_files import output_file, write_files
from .topology import Topology
from .topology_io import TOPOLOGY_FORMAT
from .whatif import WhatIf, what_if

__all__ = [
    "CollcertError",
    "Link",
    "Node",
    "NumberError",
    "ScheduleError",
    "Size",
    "TOPOLOGY_FORMAT",
    "Topology",
    "TopologyError",
    "WhatIf",
    "check_budget",
    "check_one_way",
    "schedule_transfers",
    "check_json_memory",
    "check_prove_size",
    "check_size",
    "check_solvable",
    "decimal_str",
    "estimates_to",
    "fraction_str",
    "lcm_of_denominators",
    "node_name",
    "orbits_needed",
    "output_file",
    "parse_number",
    "read_json_document",
    "read_text",
    "show",
    "unpack_link",
    "what_if",
    "write_files",
    "without_symmetry",
]
