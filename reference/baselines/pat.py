"""NCCL's PAT (Parallel Aggregated Trees): allgather and reduce-scatter with one GPU per
node, in about log2(N) steps.

Read from NVIDIA/nccl at 5067397c (docs/baselines.md has the lines):
``src/include/collectives.h`` (``PatAGAlgorithm::getNextOp``): at distance s the rank
sends, to the rank 2^d below it (d the lowest set bit of s; ``src/device/prims_simple.h``
line 691: the allgather's send peer is ``rank - 2^d``), the data of the rank s - 2^d
above it, which it received from the rank 2^(lowest bit of s - 2^d) above it. So the
data of rank x reaches rank x - s from rank x - (s with its lowest bit cleared): a
binomial tree over the distances 1 .. N-1 on the ring of ranks, one per root, the
ranks' aggregated steps sharing each message. Reduce-scatter (``PatRSAlgorithm``) runs
the same trees the other way round, toward rank x from x + s. Where NCCL enables it:
``tuning.cc:215-223`` (``ncclPatEnable``: sm 60 or later, one GPU per node, no
network device offload), Simple protocol only, bandwidth 0.75 of the ring's
(``tuning.cc:337``) and latency log2(nodes)·netLat/3.5 + 2.8 µs·N (``tuning.cc:429-434``):
NCCL picks it at small and middle sizes, the ring at large ones.
"""

from __future__ import annotations

from collcert.reference.model import Topology

from .document import Baseline, PhaseDoc, document
from .fabric import Fabric, find_boxes
from .rings import BaselineError

WHEN = ("NCCL enables PAT with one GPU per node (tuning.cc:220), Simple protocol; its tuner "
        "gives it 0.75 of the ring's bandwidth and a latency growing with log2(nodes) "
        "(tuning.cc:337, 429-434): chosen for small and middle sizes")


def pat(topology: Topology, collective: str) -> Baseline:
    """NCCL's PAT allgather or reduce-scatter."""
    if collective not in ("allgather", "reduce-scatter"):
        raise BaselineError(f"NCCL runs PAT for allgather and reduce-scatter only, not "
                            f"{collective} (src/graph/tuning.cc:295-298)")
    boxes = find_boxes(topology)
    big = max(boxes, key=len)
    if len(big) > 1:
        raise BaselineError(f"NCCL enables PAT only with one GPU per node (tuning.cc:220: "
                            f"nNodes != nRanks); the box of {big[0]!r} has {len(big)} GPUs")
    ranks = list(topology.compute_nodes)
    n = len(ranks)
    if n < 2:
        raise BaselineError("PAT needs two GPUs or more")
    fabric = Fabric(topology)
    phase = PhaseDoc(collective, 1)
    out = collective == "allgather"
    for x in range(n):
        routes = []
        for s in range(1, n):  # parents (s with its lowest bit cleared) come first
            near = s & (s - 1)
            child = ranks[(x - s) % n] if out else ranks[(x + s) % n]
            parent = ranks[(x - near) % n] if out else ranks[(x + near) % n]
            a, b = (parent, child) if out else (child, parent)
            r = fabric.route(a, b)
            if r is None:
                raise BaselineError(f"PAT: no route through switches from {a!r} to {b!r}")
            fabric.use(r)
            routes.append(r)
        phase.tree(ranks[x], routes)
    depth = (n - 1).bit_length()
    label = f"NCCL PAT ({n} nodes, {depth} steps deep)"
    doc = document(topology, collective, [phase], name="nccl-pat", label=label,
                   options={"depth": depth})
    return Baseline("nccl-pat", label, collective, doc, [WHEN])
