"""Every baseline by name, for any topology and collective it applies to."""

from __future__ import annotations

from typing import Any

from collcert.reference.model import Topology

from .classic import bruck, direct, hierarchical, recursive
from .collnet import collnet_chain, collnet_direct
from .document import Baseline
from .fabric import Node
from .nvls import nvls, nvls_tree
from .pat import pat
from .ring_schedules import ring_schedule
from .rings import BaselineError, Rings, ring_channels
from .trees import tree_allreduce, tree_rooted

NEWER = {"nccl-nvls": nvls, "nccl-nvls-tree": nvls_tree, "nccl-collnet-direct": collnet_direct,
         "nccl-collnet-chain": collnet_chain, "nccl-pat": pat}

BASELINES = ("nccl-ring", "nccl-tree", "direct", "recursive", "bruck", "hierarchical",
             "nccl-nvls", "nccl-nvls-tree", "nccl-collnet-direct", "nccl-collnet-chain", "nccl-pat")
IN_NETWORK = ("nccl-nvls", "nccl-nvls-tree", "nccl-collnet-direct", "nccl-collnet-chain")  # a switch adds
COLLECTIVES = ("allgather", "reduce-scatter", "allreduce", "broadcast", "reduce")


def baseline(topology: Topology, name: str, collective: str, root: Node | None = None,
             *, channels: int | None = None, rings: Rings | None = None) -> Baseline:
    """The baseline ``name`` (one of :data:`BASELINES`) of ``collective`` on ``topology``.

    ``root``: broadcast / reduce (default: the first compute node). ``channels``: NCCL's
    ring and tree channels (default: as NCCL's search would choose, docs/baselines.md);
    ``rings``: channels already found. Raises :class:`BaselineError` where the algorithm
    does not apply (the message says why)."""
    if name not in BASELINES:
        raise BaselineError(f"unknown baseline {name!r}; choose one of {', '.join(BASELINES)}")
    if collective not in COLLECTIVES:
        raise BaselineError(f"baselines exist for {', '.join(COLLECTIVES)}, not {collective!r}")
    root = _root(topology, collective, root)
    if name in ("nccl-ring", "nccl-tree"):
        rings = rings or ring_channels(topology, channels)
        if name == "nccl-ring":
            return ring_schedule(topology, rings, collective, root)
        if collective == "allreduce":
            return tree_allreduce(topology, rings)
        if collective in ("broadcast", "reduce"):
            return tree_rooted(topology, rings, collective, root)
        raise BaselineError(f"NCCL runs {collective} on rings only (its tree algorithm is "
                            "for allreduce, broadcast and reduce)")
    if name in NEWER:
        return NEWER[name](topology, collective)
    build = {"direct": direct, "recursive": recursive, "bruck": bruck,
             "hierarchical": hierarchical}[name]
    return build(topology, collective, root)


DIRECT_DEFAULT_WALKS = 2**19
"""Above this many walks per phase (N(N−1) at N GPUs: 512 GPUs have 261,632, 1024 GPUs
1,047,552) the direct baseline is built only when asked for: on dgx_h100_rails:128 it
took 12 s to build and 10 s to check of compare's 60 s, for a row at 1/8 of the optimum."""


def default_baselines(topology: Topology) -> tuple[tuple[str, ...], list[tuple[str, str]]]:
    """The baselines ``compare`` builds when none are named, and (name, why) for those it
    leaves out: every one, but direct (all pairs) only up to :data:`DIRECT_DEFAULT_WALKS`
    walks per phase."""
    n = topology.num_compute
    walks = n * (n - 1)
    if walks <= DIRECT_DEFAULT_WALKS:
        return BASELINES, []
    return (tuple(b for b in BASELINES if b != "direct"),
            [("direct", f"not built unless asked for on {n} GPUs: all pairs is {walks:,} walks "
                        f"per phase (more than {DIRECT_DEFAULT_WALKS:,}), about half the time "
                        "of the comparison; name it in --baselines to build it")])


def all_baselines(topology: Topology, collective: str, root: Node | None = None, *,
                  channels: int | None = None, names: Any = BASELINES,
                  ) -> tuple[list[Baseline], list[tuple[str, str]]]:
    """The baselines that apply, and (name, why not) for those that do not."""
    made: list[Baseline] = []
    skipped: list[tuple[str, str]] = []
    rings: Rings | None = None
    for name in names:
        try:
            if name in ("nccl-ring", "nccl-tree") and rings is None:
                rings = ring_channels(topology, channels)
            made.append(baseline(topology, name, collective, root, channels=channels,
                                 rings=rings))
        except BaselineError as exc:
            skipped.append((name, str(exc)))
    return made, skipped


def _root(topology: Topology, collective: str, root: Node | None) -> Node | None:
    if collective not in ("broadcast", "reduce"):
        if root is not None:
            raise BaselineError(f"a {collective} has no root")
        return None
    if root is None:
        return topology.compute_nodes[0]
    node = topology.lookup(root)
    if not topology.is_compute(node):
        raise BaselineError(f"the root {root!r} is not a compute node of the topology")
    return node


def msccl_program(b: Baseline, channels: int | None = None) -> str:
    """The baseline as an MSCCL program (XML), compiled by ``collcert.reference.execution``
    (the exporter of ``collcert schedule --format msccl-xml``). MSCCL runs allgather,
    reduce-scatter and allreduce; NCCL's tree allreduce, whose roots reduce unequal shares,
    is compiled from its plan directly. Raises :class:`BaselineError` for broadcast and
    reduce, which MSCCL's executor does not run."""
    from collcert.reference.execution import msccl_xml, plan_from_schedule, plan_xml

    if b.collective not in ("allgather", "reduce-scatter", "allreduce"):
        raise BaselineError(f"MSCCL's executor runs allgather, reduce-scatter and allreduce, "
                            f"not {b.collective}")
    if b.name in IN_NETWORK:
        raise BaselineError(f"{b.name} adds or copies inside switches, which an MSCCL "
                            "program cannot express (its sends go from GPU to GPU)")
    if b.document.get("weights"):
        return plan_xml(plan_from_schedule(b.document, b.name), channels, b.name)
    return msccl_xml(b.document, channels, b.name)
