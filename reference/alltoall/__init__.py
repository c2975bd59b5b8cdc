"""Alltoall: the optimum as a maximum concurrent multicommodity flow, solved exactly.

Modules:

``full_lp``   one commodity per compute node; :func:`alltoall_optimum` picks the method
``orbit_lp``  one commodity per orbit of compute nodes, under verified automorphisms
"""

from .full_lp import AlltoallOptimum, alltoall_optimum
from .orbit_lp import SymmetricAlltoall

__all__ = ["AlltoallOptimum", "SymmetricAlltoall", "alltoall_optimum"]
