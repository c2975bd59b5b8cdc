"""Baselines as ``collcert-schedule/1`` documents (docs/schedule-format.md).

A baseline is an ordinary schedule: trees of compute nodes whose edges carry the
walk through switches they take, written in the compact form (every distinct
walk once per phase, trees as indices), so that ``collcert audit``, ``smoke``,
``draw``, the α-β model and the MSCCL exporter read it like any other.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from collcert.reference.model import Topology

from .fabric import Node, Route

FORMAT = "collcert-schedule/1"
DIRECTION = {"allgather": "out", "broadcast": "out", "reduce-scatter": "in", "reduce": "in"}
PHASES = {"allgather": ("allgather",), "reduce-scatter": ("reduce-scatter",),
          "broadcast": ("broadcast",), "reduce": ("reduce",),
          "allreduce": ("reduce-scatter", "allgather")}


class PhaseDoc:
    """One phase being written: its walks (deduplicated) and trees."""

    def __init__(self, collective: str, k: int) -> None:
        self.collective = collective
        self.k = k
        self.walks: list[dict[str, Any]] = []
        self.index: dict[tuple[Node, Node, Route], int] = {}
        self.trees: list[dict[str, Any]] = []

    def walk(self, route: Route, src: Node = None, dst: Node = None) -> int:
        """The index of the walk ``route`` of the tree edge ``src`` -> ``dst`` (default:
        its first and last node; a path that starts at a switch that copies, or ends at
        one that adds, names the edge it carries: docs/schedule-format.md)."""
        src = route[0] if src is None else src
        dst = route[-1] if dst is None else dst
        key = (src, dst, route)
        i = self.index.get(key)
        if i is None:
            i = self.index[key] = len(self.walks)
            self.walks.append({"src": src, "dst": dst, "path": list(route)})
        return i

    def tree(self, root: Node, routes: Iterable[Route], multiplicity: int = 1) -> None:
        """A tree of ``root`` made of these walks (in the phase's direction)."""
        self.indexed(root, [self.walk(r) for r in routes], multiplicity)

    def indexed(self, root: Node, walks: list[int], multiplicity: int = 1) -> None:
        """A tree of ``root`` made of the walks of these indices (:meth:`walk`)."""
        self.trees.append({"root": root, "multiplicity": multiplicity,
                           "direction": DIRECTION[self.collective], "index": len(self.trees),
                           "edges": walks})

    def to_json(self) -> dict[str, Any]:
        return {"collective": self.collective, "k": self.k, "walks": self.walks,
                "trees": self.trees}


@dataclass
class Baseline:
    """A baseline schedule: ``document`` is its ``collcert-schedule/1`` JSON."""

    name: str
    label: str
    collective: str
    document: dict[str, Any]
    notes: list[str] = field(default_factory=list)

    @property
    def trees(self) -> int:
        return sum(len(p["trees"]) for p in self.document["phases"])


def document(topology: Topology, collective: str, phases: Sequence[PhaseDoc], *,
             name: str, label: str, root: Node | None = None,
             weights: Mapping[Node, int] | None = None, overlap: bool = False,
             options: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The schedule document (``weights``: integer shares by root, the others 0)."""
    doc: dict[str, Any] = {
        "format": FORMAT, "collective": collective, "topology": topology.content_hash(),
        "topology_name": topology.name, "unit": topology.unit,
        "compute_nodes": list(topology.compute_nodes)}
    if collective in ("broadcast", "reduce"):
        doc["root"] = root
    if weights is not None:
        doc["weights"] = {str(v): str(weights.get(v, 0)) for v in topology.compute_nodes}
    if overlap:
        doc["overlap"] = True
    doc["phases"] = [p.to_json() for p in phases]
    doc["generator"] = {"tool": "collcert baselines", "baseline": name, "label": label,
                        "options": dict(options or {})}
    return doc


def lcm(values: Iterable[int]) -> int:
    out = 1
    for v in values:
        out = out * v // math.gcd(out, v)
    return out
