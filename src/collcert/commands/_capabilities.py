"""``--reducing``, ``--reduction-rate``, ``--forward-only``: what the switches may do, for one run.

A topology file declares its switches that add (``reducing_switches``) and their
rates (docs/topology.md); these options change that for one command, as
``--degrade`` changes a link: ``--reducing SW[,SW]`` declares switches that add
(and copy), ``--reduction-rate SW=RATE`` limits one, ``--forward-only`` drops
every capability (ForestColl's model). Only the collectives that add can use a
switch that adds: ``--reducing`` with allgather or broadcast is refused (exit 2)
naming the switch, as are a compute node, an unknown node and a rate of 0, NaN
or 10^400.
"""

from __future__ import annotations

import argparse
from typing import Any

from collcert.reference.model import Topology, TopologyError

ADDS = ("allreduce", "reduce-scatter", "reduce")


def add_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("switches that add (docs/in-network.md)")
    g.add_argument("--reducing", action="append", default=[], metavar="SW[,SW]",
                   help="declare switches that add streams and copy their sums (NVLink "
                   "SHARP, InfiniBand SHARP) for this run; allreduce, reduce-scatter, reduce")
    g.add_argument("--reduction-rate", action="append", default=[], metavar="SW=RATE",
                   help="the most reduced data switch SW outputs per unit of time (exact, "
                   "positive, in the topology's unit); SW must add")
    g.add_argument("--forward-only", action="store_true",
                   help="every switch only forwards (ForestColl's model): drop the "
                   "topology's reducing and multicast declarations")


def wanted(args: argparse.Namespace) -> bool:
    return bool(getattr(args, "reducing", None) or getattr(args, "reduction_rate", None)
                or getattr(args, "forward_only", False))


def refuse_for(args: argparse.Namespace, collective: str) -> None:
    """Refuse, before any work, the options for a collective where they mean nothing."""
    names = [x for item in getattr(args, "reducing", []) for x in item.split(",") if x.strip()]
    if names and collective not in ADDS:
        raise TopologyError(
            f"--reducing {names[0].strip()[:60]!r}: {collective} adds no data, so a switch "
            "that adds means nothing for it (its optimum is the same in every model, "
            "docs/in-network.md); drop --reducing, or use -c allreduce, reduce-scatter or "
            "reduce")
    if wanted(args) and collective == "alltoall":
        raise TopologyError("--reduction-rate/--forward-only: alltoall adds nothing and its "
                            "optimum is a flow of distinct data: drop them")


def model_line(topo: Topology, collective: str) -> str | None:
    """For a collective other than allreduce on a machine whose switches add or copy: the
    model its optimum holds in, in words (None when every switch only forwards)."""
    from collcert.reference.innetwork import unchanged_reason

    why = unchanged_reason(collective)
    if why is None or not (topo.reducing_switches or topo.multicast_switches):
        return None
    return (f"model: any schedule, so also the in-network model ({topo.in_network_model()}): "
            f"{why}")


def _node(topo: Topology, name: str, option: str) -> Any:
    node = topo.lookup(name.strip())
    if node not in topo.index:
        raise TopologyError(f"{option} {name.strip()[:60]!r}: not a node of the topology")
    return node


def apply(args: argparse.Namespace, topo: Topology, collective: str) -> Topology:
    """``topo`` with the switch capabilities the options give (the same topology when
    none is given)."""
    if not wanted(args):
        return topo
    refuse_for(args, collective)
    names = [x for item in args.reducing for x in item.split(",") if x.strip()]
    if args.forward_only and (names or args.reduction_rate):
        raise TopologyError("--forward-only drops every switch capability: it cannot be "
                            "given with --reducing or --reduction-rate")
    if args.forward_only:
        reducing: set[Any] = set()
        rates: dict[Any, Any] = {}
        multicast: Any = ()
    else:
        reducing = set(topo.reducing_switches) | {_node(topo, x, "--reducing") for x in names}
        rates = dict(topo.reduction_rates)
        multicast = topo.multicast_switches
    for item in args.reduction_rate:
        if "=" not in item:
            raise TopologyError(f"--reduction-rate {item[:60]!r}: write SW=RATE, e.g. "
                                "b0.nvswitch=900")
        name, _, value = item.partition("=")
        rates[_node(topo, name, "--reduction-rate")] = value
    return Topology(topo.compute_nodes, [(u, v, c) for (u, v), c in topo.capacity.items()],
                    topo.switch_nodes, name=topo.name, unit=topo.unit,
                    multicast_switches=multicast, reducing_switches=reducing,
                    reduction_rates=rates, alpha=topo.alpha,
                    strict=topo.forestcoll_problem is None)
