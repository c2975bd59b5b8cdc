"""Checkers of the alltoall optimum (a maximum concurrent multicommodity flow).

Modules:

``full_lp``   the LP rebuilt from the topology, with its exact certificate
``orbit_lp``  flows of orbit representatives and link lengths, under automorphisms
"""

from .full_lp import check_alltoall_optimum

__all__ = ["check_alltoall_optimum"]
