"""Alltoall: the optimum as a maximum concurrent multicommodity flow, solved exactly.

Modules:

``optimum``   :func:`alltoall_optimum`: picks the method, finds a cut witness, certificate
``full_lp``   the LP with one commodity per compute node
``orbit_lp``  one commodity per orbit of compute nodes, under verified automorphisms
``lp_size``   how big an LP is solved, and its predicted time and memory
"""

from .optimum import AlltoallOptimum, alltoall_optimum
from .orbit_lp import SymmetricAlltoall

__all__ = ["AlltoallOptimum", "SymmetricAlltoall", "alltoall_optimum"]
