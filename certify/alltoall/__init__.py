"""Checkers of the alltoall optimum (a maximum concurrent multicommodity flow).

Modules:

``full_lp``   the LP rebuilt from the topology, with its exact certificate
``stated``    every other field the certificate states, compared with what is proven
``orbit_lp``  flows of orbit representatives and link lengths, under automorphisms
"""

from .full_lp import check_alltoall_optimum

__all__ = ["check_alltoall_optimum"]
