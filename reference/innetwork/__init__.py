"""In-network computing: allreduce when switches add (NVLink SHARP, InfiniBand SHARP).

The model (docs/in-network.md; :mod:`collcert.reference.model.capabilities`): a
SHARP switch adds streams that reach it on several links into a sum it holds and
copies what it holds to several links; an NVLS switch (NVLink SHARP) adds only into a
member GPU, whose own share goes up too, and copies only what a member stores, the
member included; a multicast switch only copies. An allreduce schedule is a weighted
set of *structures*, each a reduce tree that may add at those switches and a broadcast
tree from the same root that may branch at any switch that copies. :func:`in_network_rate` gives the best rate of such schedules,
exact where a schedule meets a bound, else a certified bracket; its certificate is
checked by :func:`collcert.certify.innetwork.check_in_network`.

For the other collectives the declarations change nothing (:func:`unchanged_reason`).

Entry points for other rooms and tools (MSCCL++ NVLS plans, NCCL's NVLS baselines):

* ``attach(allreduce_rate(t))``: the allreduce report with the in-network figure in it
  (its top-level ``algbw`` is then the best certified rate, in its model);
* ``in_network_rate(topology)`` -> :class:`InNetworkRate` (``lower``, ``upper``,
  ``exact``, ``model``, ``schedule``, ``certificate()``, ``summary_lines()``), or None
  when no switch adds;
* :class:`Structure` (root, reduce paths, broadcast paths; ``usage()``,
  ``reductions()``), :func:`check_structure`, :func:`loads` for a weighted set.

Modules:

``structures``  reduce-broadcast structures, their loads
``pricing``     the cheapest structure under link lengths (exact Steiner pricing)
``colgen``      the exact in-network LP of a small machine by column generation
``bounds``      upper bounds: the cut-set bound, partition bounds
``boxdual``     the box-dual bound: link lengths, every structure's cost counted box by
                box (what proves NVLS switches' figures on large machines)
``hierarchy``   two-level machines (boxes on reducing switches, one top switch) by
                their symmetry: representative structures, the symmetric LP
``rate``        :func:`in_network_rate`: the bracket, exact where it closes
"""

from .bounds import UpperBound, partition_value, upper_bounds
from .colgen import InNetworkLP, in_network_lp
from .hierarchy import TwoLevel, recognise
from .rate import InNetworkRate, attach, in_network_rate, unchanged_reason
from .structures import Structure, check_structure, copy_nodes, loads, merge_nodes

__all__ = ["InNetworkLP", "InNetworkRate", "Structure", "TwoLevel", "UpperBound", "attach",
           "check_structure", "copy_nodes", "in_network_lp", "in_network_rate", "loads",
           "merge_nodes", "partition_value", "recognise", "unchanged_reason",
           "upper_bounds"]
