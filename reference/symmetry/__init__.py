"""Symmetry: automorphisms of a topology, found fast and verified exactly.

Symmetry is a means, never a premise: what is found here only makes big
machines fast; every certificate built with it carries the automorphisms, and
``collcert.certify`` verifies them on the topology it is given.

Modules:

``boxes``   interchangeable boxes as a verified cyclic group (colour refinement)
``search``  generators of a larger group by individualisation-refinement
``orbits``  when to look for symmetry, and its form in certificates
"""

from . import orbits
from .boxes import Symmetry, box_symmetry, refine
from .search import UnionFind, find_generators, is_automorphism, map_node

__all__ = [
    "Symmetry",
    "UnionFind",
    "box_symmetry",
    "find_generators",
    "is_automorphism",
    "map_node",
    "orbits",
    "refine",
]
