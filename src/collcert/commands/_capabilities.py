"""``--reducing``, ``--nvls``, ``--reduction-rate``, ``--forward-only``: what the switches may
do, for one run.

A topology file declares its switches that add (``reducing_switches``: SHARP,
``nvls_switches``: NVLS) and their rates (docs/topology.md); these options change
that for one command, as ``--degrade`` changes a link: ``--reducing SW[,SW]``
declares switches that add the SHARP way (they hold their sums and multicast
them), ``--nvls SW[,SW]`` the NVLS way (into a member GPU, multicast from one),
each replacing the switch's earlier way; ``--reduction-rate SW=RATE`` limits one,
``--forward-only`` drops every capability (ForestColl's model). Only the
collectives that add can use a switch that adds: ``--reducing``/``--nvls`` with
allgather or broadcast is refused (exit 2) naming the switch, as are a compute
node, an unknown node, one switch given to both, and a rate of 0, NaN or 10^400.
"""

from __future__ import annotations

import argparse
from typing import Any

from collcert.reference.model import Topology, TopologyError, check_one_way

ADDS = ("allreduce", "reduce-scatter", "reduce")


def add_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("switches that add (docs/in-network.md)")
    g.add_argument("--reducing", action="append", default=[], metavar="SW[,SW]",
                   help="declare switches that add streams and multicast their own sums "
                   "(InfiniBand SHARP) for this run; allreduce, reduce-scatter, reduce")
    g.add_argument("--nvls", action="append", default=[], metavar="SW[,SW]",
                   help="declare switches that add the NVLS way (NVLink SHARP: the sum goes "
                   "into a member GPU, which multicasts it back) for this run; allreduce, "
                   "reduce-scatter, reduce")
    g.add_argument("--reduction-rate", action="append", default=[], metavar="SW=RATE",
                   help="the most reduced data switch SW outputs per unit of time (exact, "
                   "positive, in the topology's unit); SW must add")
    g.add_argument("--forward-only", action="store_true",
                   help="every switch only forwards (ForestColl's model): drop the "
                   "topology's reducing and multicast declarations")


def wanted(args: argparse.Namespace) -> bool:
    return bool(getattr(args, "reducing", None) or getattr(args, "nvls", None)
                or getattr(args, "reduction_rate", None)
                or getattr(args, "forward_only", False))


def _names(args: argparse.Namespace, option: str) -> list[str]:
    return [x for item in getattr(args, option, None) or [] for x in item.split(",")
            if x.strip()]


def refuse_for(args: argparse.Namespace, collective: str) -> None:
    """Refuse, before any work, the options for a collective where they mean nothing."""
    for option in ("reducing", "nvls"):
        names = _names(args, option)
        if names and collective not in ADDS:
            raise TopologyError(
                f"--{option} {names[0].strip()[:60]!r}: {collective} adds no data, so a "
                "switch that adds means nothing for it (its optimum is the same in every "
                f"model, docs/in-network.md); drop --{option}, or use -c allreduce, "
                "reduce-scatter or reduce")
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
    names, nv_names = _names(args, "reducing"), _names(args, "nvls")
    if args.forward_only and (names or nv_names or args.reduction_rate):
        raise TopologyError("--forward-only drops every switch capability: it cannot be "
                            "given with --reducing, --nvls or --reduction-rate")
    nvls: set[Any] = set()
    if args.forward_only:
        reducing: set[Any] = set()
        rates: dict[Any, Any] = {}
        multicast: Any = ()
    else:
        sharp = {_node(topo, x, "--reducing") for x in names}
        new_nvls = {_node(topo, x, "--nvls") for x in nv_names}
        check_one_way(sharp, new_nvls)
        reducing = (set(topo.sharp_switches) - new_nvls) | sharp
        nvls = (set(topo.nvls_switches) - sharp) | new_nvls
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
                    nvls_switches=nvls, reduction_rates=rates, alpha=topo.alpha,
                    strict=topo.forestcoll_problem is None)
