"""Symmetry: automorphisms of a topology, found fast and verified exactly.

Symmetry is a means, never a premise: what is found here only makes big
machines fast; every certificate built with it carries the automorphisms, and
``collcert.certify`` verifies them on the topology it is given.

Modules:

``boxes``   interchangeable boxes as a verified cyclic group (colour refinement)
``search``  generators of a larger group by individualisation-refinement
``near``    near-symmetry: the box permutations (and moves inside boxes) a degraded
            machine still has, verified
``healthy`` near-symmetry from the file alone: the symmetric machine a topology is a
            changed copy of, and the links that differ
``orbits``  the search for a topology's box symmetry (:func:`find_symmetry`, run once
            per schedule), when to look for it, and its form in certificates
"""

from . import orbits
from .boxes import Symmetry, box_symmetry, refine
from .healthy import Restored, like_builtin, restore
from .near import NearSymmetry, certificate_generators, near_symmetry
from .orbits import find_symmetry
from .search import UnionFind, find_generators, is_automorphism, map_node, refiner

__all__ = [
    "NearSymmetry",
    "Restored",
    "Symmetry",
    "UnionFind",
    "box_symmetry",
    "certificate_generators",
    "find_generators",
    "find_symmetry",
    "is_automorphism",
    "like_builtin",
    "map_node",
    "near_symmetry",
    "orbits",
    "refine",
    "refiner",
    "restore",
]
