"""NCCL's CollNet allreduce: the sum across nodes made in the InfiniBand switches (SHARP),
``collnet-direct`` (every GPU sends each head its part; the heads reduce, SHARP adds
across nodes, the heads send the sum back) and ``collnet-chain`` (a chain in each node
into the GPU on the NIC, SHARP across nodes, the chain back down).

Read from NVIDIA/nccl at 5067397c (docs/baselines.md has the lines):

* ``src/device/all_reduce.h``, ``RunWorkColl<AllReduce, COLLNET_DIRECT>``: scatter warps
  send part h of the data to head h (``direct->up``: the node's heads, one per NIC);
  the head's reduce warps add its own part and the parts received
  (``recvReduceDirectSend`` from ``direct->down``) and send the sum to the network
  (``direct->out``, the CollNet plugin: SHARP adds it across nodes and returns the total);
  its broadcast warps copy the total to the node's other GPUs
  (``directRecvCopyDirectSend``), which gather it;
* ``RunWorkColl<AllReduce, COLLNET_CHAIN>`` with ``src/graph/connect.cc:64-66``: per
  channel a chain ``intra[L-1] -> … -> intra[0] -> network`` (``collnetChain.up``; the
  network is ``nranks``), reduced up the chain, the total broadcast back down it;
* where NCCL enables them: ``comm->config.collnetEnable`` (the plugin;
  ``tuning.cc:504-506``), CollNet direct only on NVSwitch systems (``tuning.cc:509``),
  both only up to 8 GPUs per node (``enqueue.cc:2001-2003``).

As a schedule: SHARP's "add in the switch, multicast the total from it" is written with a
root GPU r in the first box (docs/schedule-format.md): the other boxes' sums end at the
switch (it adds) and one path brings the sum to r; r sends the total back up, and the
switch copies it to the other boxes. Each link then carries what it carries under SHARP
(r's NIC: one part down, one up), so the audit's algbw is SHARP's.
"""

from __future__ import annotations

from collcert.reference.model import Topology

from .document import Baseline, PhaseDoc, document, lcm
from .fabric import Node, Route
from .rings import BaselineError, ring_channels
from .switch_paths import DIRECT_ARITY, Machine, from_, heads, machine, sharp_switch, up_to
from .trees import _intra

WHEN = ("NCCL runs CollNet only with NVIDIA's SHARP plugin (NCCL_COLLNET_ENABLE=1) and "
        "switches that add; {what}; its tuner compares it by time with the ring, tree "
        "and NVLS-tree (tuning.cc:340-349, 418-423)")


def _common(topology: Topology, collective: str, what: str) -> tuple[Machine, Node]:
    if collective != "allreduce":
        why = ("needs a CollNet plugin with iallgather / ireducescatter and one GPU per NIC "
               "(tuning.cc:353-373), which collcert does not model"
               if collective in ("allgather", "reduce-scatter") else
               "is not one NCCL runs by CollNet (rings only, tuning.cc:294)")
        raise BaselineError(f"{what}: {collective} {why}")
    m = machine(topology)
    if len(m.boxes) < 2:
        raise BaselineError(f"{what} adds across nodes in the network; this topology is one "
                            "box")
    big = max(m.boxes, key=len)
    if len(big) > DIRECT_ARITY + 1:
        raise BaselineError(f"NCCL runs {what} only up to {DIRECT_ARITY + 1} GPUs per node "
                            f"(enqueue.cc:2001-2003); the box of {big[0]!r} has {len(big)}")
    return m, sharp_switch(m)


def _across(m: Machine, rs: PhaseDoc, ag: PhaseDoc, w: Node, ends: list[Node],
            ) -> tuple[list[int], list[int]]:
    """The paths between the boxes through the SHARP switch ``w``: every ``ends[b]`` (b > 0)
    to ``ends[0]`` (the root), adding at ``w``, and back, ``w`` copying."""
    red, cast = [], []
    r = ends[0]
    for b, e in enumerate(ends[1:], 1):
        up, down = _via(m, e, r, w), _via(m, r, e, w)
        if b > 1:
            up, down = up_to(up, w), from_(down, w)
        m.fabric.use(up)
        m.fabric.use(down)
        red.append(rs.walk(up, e, r))
        cast.append(ag.walk(down, r, e))
    return red, cast


def _via(m: Machine, a: Node, b: Node, w: Node) -> Route:
    r = m.fabric.route(a, b)
    if r is None or w not in r:
        raise BaselineError(f"the route from {a!r} to {b!r} does not pass the SHARP switch "
                            f"{w!r}")
    return r


def collnet_direct(topology: Topology, collective: str) -> Baseline:
    """NCCL's CollNet direct allreduce."""
    m, w = _common(topology, collective, "CollNet direct")
    if any(h is None for h in m.hubs):
        raise BaselineError("NCCL runs CollNet direct only on NVSwitch systems "
                            "(tuning.cc:509); a box has no switch joined to all its GPUs")
    pos = heads(m)
    rs, ag = PhaseDoc("reduce-scatter", 1), PhaseDoc("allgather", 1)
    for i in pos:
        head = [box[i] for box in m.boxes]
        red, cast = _across(m, rs, ag, w, head)
        for b, box in enumerate(m.boxes):
            for g in box:
                if g != head[b]:
                    red.append(rs.walk(m.route(g, head[b])))
                    cast.append(ag.walk(m.route(head[b], g)))
        rs.indexed(head[0], red)
        ag.indexed(head[0], cast)
    weights = {m.boxes[0][i]: 1 for i in pos}
    label = f"NCCL CollNet direct ({len(pos)} heads, SHARP at {w})"
    doc = document(topology, "allreduce", [rs, ag], name="nccl-collnet-direct", label=label,
                   weights=weights, overlap=True, options={"heads": len(pos), "switch": str(w)})
    return Baseline("nccl-collnet-direct", label, "allreduce", doc,
                    [WHEN.format(what="CollNet direct on NVSwitch nodes of up to 8 GPUs")])


def collnet_chain(topology: Topology, collective: str) -> Baseline:
    """NCCL's CollNet chain allreduce, one chain per ring channel in every box."""
    m, w = _common(topology, collective, "CollNet chain")
    rings = ring_channels(topology)
    chains = [_intra(rings, c) for c in range(len(rings.channels))]
    count: dict[Node, int] = {}
    for chain in chains:
        count[chain[0][0]] = count.get(chain[0][0], 0) + 1
    k = lcm(count.values())
    rs, ag = PhaseDoc("reduce-scatter", k), PhaseDoc("allgather", k)
    for chain in chains:
        red, cast = _across(m, rs, ag, w, [c[0] for c in chain])
        for box in chain:
            for a, b in zip(box, box[1:]):
                red.append(rs.walk(m.route(b, a)))
                cast.append(ag.walk(m.route(a, b)))
        root = chain[0][0]
        rs.indexed(root, red, k // count[root])
        ag.indexed(root, cast, k // count[root])
    label = f"NCCL CollNet chain ({len(chains)} channels, SHARP at {w})"
    doc = document(topology, "allreduce", [rs, ag], name="nccl-collnet-chain", label=label,
                   weights=count, overlap=True,
                   options={"channels": len(chains), "switch": str(w)})
    return Baseline("nccl-collnet-chain", label, "allreduce", doc,
                    [WHEN.format(what="CollNet chain up to 8 GPUs per node")])
