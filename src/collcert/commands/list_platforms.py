"""``collcert platforms``: the built-in topologies, their parameters and a one-line description."""

from __future__ import annotations

import argparse
import inspect
import re
import textwrap
from typing import Any

from collcert.reference.model import TopologyError

from ._common import add_json_option, load_topology, platform_names, print_json

# One line each, and an example spec (also what the sizes are shown for).
ABOUT: dict[str, tuple[str, str]] = {
    "dgx_a100": ("DGX A100 boxes: 8 GPUs on an NVSwitch at 300 GB/s each, one 25 GB/s NIC per "
                 "GPU on two InfiniBand rails (one box: no NICs)", "dgx_a100:2"),
    "dgx_h100": ("DGX H100 boxes: 8 GPUs on an NVSwitch at 450 GB/s each, one 50 GB/s NIC per "
                 "GPU on one InfiniBand switch; the NVSwitch adds (NVLS; in_network=sharp: the "
                 "IB switch too, none: neither)", "dgx_h100:2"),
    "dgx_b200": ("DGX B200 boxes: 8 GPUs on NVLink 5 switches at 900 GB/s each, one 50 GB/s "
                 "NIC per GPU on one InfiniBand switch; the NVSwitch adds (NVLS)", "dgx_b200:2"),
    "gb200_nvl72": ("GB200 NVL72 racks: 72 GPUs on one NVLink 5 domain at 900 GB/s each; "
                    "several racks: one 50 GB/s NIC per GPU on one InfiniBand switch; the "
                    "NVLink switches add (NVLS)", "gb200_nvl72:2"),
    "mi250": ("AMD MI250 boxes: 16 (or 8) GPUs joined by direct Infinity Fabric links of 50 GB/s, "
              "16 GB/s per GPU to one InfiniBand switch", "mi250:2"),
    "dgx1": ("DGX-1 (V100): 8 GPUs with direct NVLinks in a hybrid cube-mesh; capacities in "
             "NVLinks (1) or GB/s (25)", "dgx1"),
    "two_box_example": ("the two-box example of 'Bandwidth Optimal Pipeline Schedule for "
                        "Collective Communication' (Fig. 1): 8 nodes, box switches at 10b, "
                        "a global switch at b", "two_box_example"),
    "ring": ("n nodes in a bidirectional ring", "ring:8"),
    "complete": ("n nodes, a link between every ordered pair", "complete:4"),
    "hypercube": ("2^dim nodes, nodes differing in one bit linked both ways", "hypercube:3"),
    "torus": ("a torus with wrap-around links in every dimension, e.g. 4x4", "torus:4x4"),
    "fat_tree": ("the k-ary fat tree (Al-Fares et al.): k^3/4 hosts, (5/4)k^2 switches",
                 "fat_tree:4"),
    "dgx_h100_rails": ("DGX H100 servers on a rail-optimized leaf/spine fabric (DGX SuperPOD): "
                       "NIC g of each server on its unit's rail-g leaf (32 servers a leaf), "
                       "every leaf on every spine; oversubscription r divides the uplinks",
                       "dgx_h100_rails:32"),
    "dgx_b200_rails": ("DGX B200 servers (900 GB/s NVLink 5) on the rail-optimized fabric of "
                       "dgx_h100_rails", "dgx_b200_rails:32"),
    "mi300x": ("AMD MI300X boxes: 8 GPUs in an Infinity Fabric full mesh at 64 GB/s a link "
               "each way, one 50 GB/s NIC per GPU on one switch", "mi300x:2"),
    "mixed_cluster": ("DGX H100 and DGX A100 boxes on one InfiniBand switch (NIC per GPU): "
                      "only boxes of a kind are interchangeable", "mixed_cluster:2,2"),
}


ONE_PORT: dict[str, tuple[str, str, str]] = {
    "fig1": ("fig1", "Legrand et al. 2003, Fig. 1: a source and four nodes, link costs 1 and "
             "1/2", "fig1"),
    "fig5": ("fig5", "Legrand et al. 2003, Fig. 5: Fig. 1 without the link 2 -> 1 (a DAG)",
             "fig5"),
    "random": ("random:P,seed=0,degree=3", "P nodes (at most 2000): a random arborescence "
               "from p0 plus random links, about DEGREE out-links per node, costs from "
               "{1/2, 1, 3/2, 2, 3, 4, 5}", "random:20"),
}
"""The one-port platforms of steady-state broadcast (broadcast-steady, check, draw):
(signature, one line, example)."""


def one_port_entries() -> list[dict[str, Any]]:
    """What ``collcert platforms`` shows of the one-port platforms."""
    from .broadcast_steady import load_platform

    out = []
    for name, (signature, line, example) in ONE_PORT.items():
        plat = load_platform(example)
        out.append({"name": name, "signature": signature, "description": line,
                    "example": example, "example_size": {"nodes": len(plat.nodes),
                                                         "links": len(plat.cost)},
                    "model": "one-port (collcert broadcast-steady)"})
    return out


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "platforms",
        help="list the built-in topologies with their parameters",
        description="List the built-in topologies (what TOPOLOGY may name instead of a file): "
        "each with its parameters, a one-line description and an example with its size. "
        "Give a NAME for its full description. Parameters are given after a colon, "
        "comma-separated: dgx_a100:4, mi250:2,8, torus:4x4.",
    )
    p.add_argument("name", nargs="?", metavar="NAME", help="one platform, described in full")
    add_json_option(p)
    p.set_defaults(func=run)


def describe(name: str) -> dict[str, Any]:
    """What ``collcert platforms`` shows of platform ``name``."""
    from collcert import platforms

    builder = getattr(platforms, name)
    params = []
    for prm in inspect.signature(builder).parameters.values():
        if prm.kind in (prm.POSITIONAL_ONLY, prm.POSITIONAL_OR_KEYWORD):
            entry: dict[str, Any] = {"name": prm.name}
            if prm.default is not prm.empty:
                entry["default"] = prm.default
            params.append(entry)
    doc = _plain(inspect.getdoc(builder) or "")
    line, example = ABOUT.get(name, (doc.split(". ")[0].replace("\n", " "), name))
    topo = load_topology(example, solve=False)
    return {"name": name, "parameters": params, "description": line, "example": example,
            "example_size": {"compute_nodes": topo.num_compute, "nodes": len(topo.nodes),
                             "links": len(topo.capacity)},
            "unit": topo.unit, "doc": doc}


def _plain(doc: str) -> str:
    """A builder's docstring for a terminal: reST roles and literals as plain text."""
    doc = re.sub(r":[a-z]+:`~?([^`]+)`", r"\1", doc)
    return doc.replace("``", "")


def _signature(entry: dict[str, Any]) -> str:
    parts = [p["name"] + (f"={p['default']}" if "default" in p else "")
             for p in entry["parameters"]]
    return str(entry["name"]) + (":" + ",".join(parts) if parts else "")


def run(args: argparse.Namespace) -> int:
    names = platform_names()
    if args.name is not None and args.name in ONE_PORT:
        e = next(x for x in one_port_entries() if x["name"] == args.name)
        if args.json:
            print_json(e)
        else:
            print(f"{e['signature']}\n\n{e['description']}\n\na one-port platform of "
                  f"steady-state broadcast: collcert broadcast-steady {e['example']} "
                  f"({e['example_size']['nodes']} nodes, {e['example_size']['links']} links; "
                  "docs/steady-broadcast.md)")
        return 0
    if args.name is not None:
        if args.name not in names:
            raise TopologyError(f"no built-in platform {args.name[:40]!r}; they are "
                                f"{', '.join([*names, *ONE_PORT])}")
        names = [args.name]
    entries = [describe(n) for n in names]
    if args.json:
        for e in entries:
            if args.name is None:
                del e["doc"]
        print_json({"platforms": entries, "one_port": one_port_entries()}
                   if args.name is None else entries[0])
        return 0
    if args.name is not None:
        e = entries[0]
        size = e["example_size"]
        print(f"{_signature(e)}\n\n{e['doc']}\n\nexample: {e['example']} ({size['compute_nodes']} "
              f"compute nodes, {size['nodes']} nodes, {size['links']} links; capacities in "
              f"{e['unit']})")
        return 0
    for e in entries:
        size = e["example_size"]
        print(_signature(e))
        print(textwrap.fill(e["description"], 96, initial_indent="    ",
                            subsequent_indent="    "))
        print(f"    e.g. {e['example']}: {size['compute_nodes']} compute nodes, "
              f"{size['nodes']} nodes, {size['links']} links ({e['unit']})")
    print("\nOne-port platforms of steady-state broadcast (collcert broadcast-steady, check, "
          "draw; docs/steady-broadcast.md):")
    for e in one_port_entries():
        size = e["example_size"]
        print(e["signature"])
        print(textwrap.fill(e["description"], 96, initial_indent="    ",
                            subsequent_indent="    "))
        print(f"    e.g. {e['example']}: {size['nodes']} nodes, {size['links']} links (costs)")
    print("\nA spec gives the parameters after a colon, comma-separated (dgx_a100:4, mi250:2,8, "
          "torus:4x4); 'collcert platforms NAME' describes one. A real machine: "
          "docs/importing.md.")
    return 0
