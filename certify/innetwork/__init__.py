"""Checkers of the in-network model of allreduce (switches that add: NVLS, SHARP).

Modules:

``check``       :func:`check_in_network`: an ``in-network-allreduce`` certificate (model,
                schedule, bound)
``structures``  a schedule of reduce-broadcast structures, explicit or averaged over a
                verified group of automorphisms, and its loads
``bounds``      the cut, partition and dual upper bounds
``boxdual``     the box-dual upper bound: lengths, and the structures' least cost counted
                box by box
``pricing``     the cheapest structure under a dual, by subsets of switches
"""

from .check import check_in_network

__all__ = ["check_in_network"]
