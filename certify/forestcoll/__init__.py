"""Checkers of ForestColl's results (Zhao & Krishnamurthy 2023; Zhao et al. 2026).

Modules:

``cuts``           checker 1: cut witnesses, lower bounds on the time of a collective
``optimum``        checker 2: the optimum certificate, for every collective
``splitting``      checker 3: the edge-splitting invariant (Thm 5, Thm 8, Alg 1)
``trees``          checker 4: packed trees in the switch-free graph G*
``schedule``       checker 5: schedule semantics and throughput on G
``schedule_paths`` checker 5, the paths: walks in G, switches that copy and add, self-edges
``schedule_read``  a ``collcert-schedule/1`` dict read into trees with paths for checker 5
``schedule_orbits`` checker 5 of a symmetric file, by orbits (representative trees, one
                   generator), without writing it out
``schedule_expand`` a symmetric file written out in full, for the tools that need every tree
``readers``        schedule files: JSON, and the ForestColl tree XML, as
                   ``collcert-schedule/1`` dicts
"""

from .optimum import check_optimum
from .readers import forestcoll_xml, schedule_json, split_path
from .schedule import check_schedule
from .schedule_expand import MAX_EXPANDED_EDGES, expand_symmetric
from .schedule_read import DIRECTION, MAX_EDGES, read_schedule
from .splitting import check_splitting

__all__ = [
    "DIRECTION",
    "MAX_EDGES",
    "MAX_EXPANDED_EDGES",
    "check_optimum",
    "check_schedule",
    "check_splitting",
    "expand_symmetric",
    "forestcoll_xml",
    "read_schedule",
    "schedule_json",
    "split_path",
]
