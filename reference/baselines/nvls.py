"""NCCL's NVLS (one node: add in the NVSwitch, multicast back) and NVLS-tree (NVLS inside
each node, NCCL's double binary tree between them), as ``collcert-schedule/1`` trees.

Read from NVIDIA/nccl at 5067397c (docs/baselines.md has the lines):

* ``src/device/all_reduce.h`` (``RunWorkColl<AllReduce, NVLS>``, one node): the data is
  cut into one part per *head* (every GPU up to 32); each GPU copies its input into its
  own NVLS buffer (local: no NVLink), the head's reduce warps ``multimem.ld_reduce`` the
  part from the multicast address (the NVSwitch reads the part from **every** GPU, the
  head's own included, adds, and returns the sum to the head) and ``multimem.st`` it to
  the multicast address (the switch writes it to every GPU, the head included); the
  scatter, reduce and gather warps run at once on successive chunks. So each GPU's
  NVLink carries M·(1 + 1/H) each way, H heads;
* ``all_gather.h`` / ``reduce_scatter.h`` (NVLS, one node): every GPU ``multimem.st``
  its own data (all GPUs, itself included, receive it), or ``ld_reduce``-s its own part;
* ``RunWorkColl<AllReduce, NVLS_TREE>`` with ``src/graph/connect.cc`` (``connectNvls``):
  inside each node as above; the head of part h reduces its node's sum with its two
  tree children's (``treeDown``) and sends it to its parent (``treeUp``), heads of part h
  of all nodes forming NCCL's double binary tree over the nodes (``ncclGetDtree``,
  channel c on tree c mod 2); the root's head broadcasts down, each head ``multimem.st``
  -ing into its node.

As a schedule (docs/schedule-format.md): per part, a reduce-scatter in-tree whose paths
end at the NVSwitch (it adds) and an allgather out-tree whose paths start there (it
copies), the head's own share and its own copy as self-edges; ``overlap`` (the phases
run at once). The audit then gives the exact algbw: 8 H100 on one NVSwitch, 400 GB/s
(450·8/9), against 450 for the in-network optimum (docs/in-network-measurements.md).
"""

from __future__ import annotations

from collcert.reference.model import Topology

from .document import Baseline, PhaseDoc, document
from .rings import BaselineError
from .switch_paths import NVLS_ARITY, copy_through, heads, machine, nvls_hubs, reduce_through
from .trees import dtree

WHEN_NVLS = ("NCCL runs NVLS on one node of NVLink SHARP GPUs (H100 and later with NVSwitch; "
             "NCCL_NVLS_ENABLE), Simple protocol only, and picks it by its tuner's time: "
             "busbw 2·0.85·bwIntra per channel (tuning.cc:311-316), latency 25 µs "
             "(tuning.cc:161) against the ring's few µs: from a few MB up")
WHEN_TREE = ("NCCL runs NVLS-tree for allreduce on several nodes with NVLink SHARP (no "
             "CollNet needed), Simple protocol only; its tuner caps it at "
             "perChMaxNVLSTreeBw (tuning.cc:205-211, 320-322) and picks it by time against "
             "the ring and tree: at large sizes")


def nvls(topology: Topology, collective: str) -> Baseline:
    """NCCL's NVLS on one box: allreduce, allgather or reduce-scatter."""
    if collective not in ("allreduce", "allgather", "reduce-scatter"):
        raise BaselineError(f"NCCL runs {collective} on rings only (src/graph/tuning.cc:294)")
    m = machine(topology)
    if len(m.boxes) > 1:
        raise BaselineError(
            f"NCCL's NVLS across {len(m.boxes)} nodes adds between them with CollNet "
            "(NVLS+SHARP; enqueue.cc:2008 refuses it without CollNet), which collcert does "
            "not model; across nodes NCCL runs nccl-nvls-tree (allreduce)")
    hub = nvls_hubs(m, "NVLS")[0]
    gpus = m.boxes[0]
    if len(gpus) < 2:
        raise BaselineError("NVLS needs two GPUs or more (two NVLS channels, tuning.cc:309)")
    if collective != "allreduce" and len(gpus) > NVLS_ARITY:
        raise BaselineError(f"NCCL runs {collective} by NVLS on at most {NVLS_ARITY} GPUs "
                            f"of a node (enqueue.cc:2005), this box has {len(gpus)}")
    parts = gpus[:NVLS_ARITY]
    if collective == "allreduce":
        rs, ag = PhaseDoc("reduce-scatter", 1), PhaseDoc("allgather", 1)
        for h in parts:
            rs.indexed(h, reduce_through(rs, m, hub, gpus, h, own=True))
            ag.indexed(h, copy_through(ag, m, hub, gpus, h, own=True))
        phases = [rs, ag]
    else:
        ph = PhaseDoc(collective, 1)
        build = copy_through if collective == "allgather" else reduce_through
        for g in gpus:
            ph.indexed(g, build(ph, m, hub, gpus, g, own=True))
        phases = [ph]
    weights = {h: 1 for h in parts} if len(parts) < len(gpus) else None
    label = f"NCCL NVLS ({len(parts)} heads, {hub})"
    doc = document(topology, collective, phases, name="nccl-nvls", label=label, weights=weights,
                   overlap=collective == "allreduce",
                   options={"heads": len(parts), "switch": str(hub)})
    return Baseline("nccl-nvls", label, collective, doc, [WHEN_NVLS])


def nvls_tree(topology: Topology, collective: str) -> Baseline:
    """NCCL's NVLS-tree allreduce over several boxes."""
    if collective != "allreduce":
        raise BaselineError(f"NCCL runs NVLS-tree for allreduce only, not {collective} "
                            "(src/graph/tuning.cc:294-297)")
    m = machine(topology)
    n = len(m.boxes)
    if n < 2:
        raise BaselineError("NVLS-tree runs across nodes; on one node NCCL disables it "
                            "(tuning.cc:502) and runs nccl-nvls")
    hubs = nvls_hubs(m, "NVLS-tree")
    pos = heads(m)
    if len(pos) < 2:
        raise BaselineError("NVLS-tree needs two heads or more (two NVLS channels, "
                            "tuning.cc:309); only one GPU of a box reaches the network")
    rs, ag = PhaseDoc("reduce-scatter", 1), PhaseDoc("allgather", 1)
    weights: dict[object, int] = {}
    for which in (0, 1):
        for i in pos:
            head = [box[i] for box in m.boxes]
            top = next(b for b in range(n) if dtree(n, b, which)[0] == -1)
            red: list[int] = []
            cast: list[int] = []
            for b in range(n):
                red += reduce_through(rs, m, hubs[b], m.boxes[b], head[b], own=True)
                cast += copy_through(ag, m, hubs[b], m.boxes[b], head[b], own=True)
                up = dtree(n, b, which)[0]
                if up != -1:
                    red.append(rs.walk(m.route(head[b], head[up])))
                    cast.append(ag.walk(m.route(head[up], head[b])))
            rs.indexed(head[top], red)
            ag.indexed(head[top], cast)
            weights[head[top]] = weights.get(head[top], 0) + 1
    k = max(weights.values())
    if k > 1:  # a root of both trees: its trees carry its share together
        raise BaselineError("internal: an NVLS-tree root roots both trees")
    label = f"NCCL NVLS-tree ({len(pos)} heads × 2 trees over {n} boxes)"
    doc = document(topology, "allreduce", [rs, ag], name="nccl-nvls-tree", label=label,
                   weights=weights, overlap=True, options={"heads": len(pos)})
    return Baseline("nccl-nvls-tree", label, "allreduce", doc, [WHEN_TREE])
