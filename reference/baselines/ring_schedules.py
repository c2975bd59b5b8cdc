"""NCCL's ring algorithms on the channels of :mod:`.rings`, as tree schedules.

NCCL's ring kernels (``runRing`` in ``src/device/all_gather.h``,
``reduce_scatter.h``, ``all_reduce.h``, ``broadcast.h``, ``reduce.h`` of
NVIDIA/nccl) move data only to the next rank of each channel's ring ("step 0:
push data to next GPU", then N-2 receive-(reduce-)copy-send steps and a final
receive), and split the data evenly over the channels. As trees
(docs/baselines.md):

- allgather: in every channel, the shard of rank u goes u → next(u) → … through
  N-1 hops, an out-chain;
- reduce-scatter: the chain that ends at u: next(u) → … → prev(u) → u, an in-chain
  (each GPU adds its contribution and passes the partial sum on);
- allreduce: reduce-scatter, then allgather (NCCL's ring allreduce is exactly
  these two loops);
- broadcast from r: the chain r → next(r) → … ; reduce to r: the chain ending at r.

Each channel is one tree per root, multiplicity 1, so every channel carries 1/C
of the data. On an 8-GPU NVSwitch box with capacity B per GPU each way, every
hop uses one uplink and one downlink: each link carries (N-1)/N of the data
of its channel, and the allgather's algbw is (N/(N-1))·B (tests/test_baselines.py).
"""

from __future__ import annotations

from collcert.reference.model import Topology

from .document import PHASES, Baseline, PhaseDoc, document
from .fabric import Node
from .rings import Channel, Rings


def _chain(ch: Channel, start: int, hops: int) -> list[tuple[int, int]]:
    """Hop indices i (order[i] → order[i+1]) of ``hops`` hops from position ``start``."""
    n = len(ch.order)
    return [((start + j) % n, (start + j + 1) % n) for j in range(hops)]


def _phase(rings: Rings, collective: str, root: Node | None) -> PhaseDoc:
    ph = PhaseDoc(collective, len(rings.channels))
    for ch in rings.channels:
        n = len(ch.order)
        pos = {v: i for i, v in enumerate(ch.order)}
        roots = [root] if collective in ("broadcast", "reduce") else ch.order
        walk: dict[int, int] = {}  # hop a -> its walk, numbered as the trees first use them
        twice: list[int] = []  # every hop's walk, twice round: a tree is a slice of it
        for u in roots:
            i = pos[u]
            out = collective in ("allgather", "broadcast")
            if twice:
                ph.indexed(u, twice[i:i + n - 1] if out else twice[i + 1:i + n][::-1])
                continue
            if out:
                hops = _chain(ch, i, n - 1)  # u → next(u) → … → prev(u)
            else:  # next(u) → … → u, listed from u's end: edges nearest the root first
                hops = _chain(ch, (i + 1) % n, n - 1)[::-1]
            for a, _ in hops:
                if a not in walk:
                    walk[a] = ph.walk(ch.routes[a])
            ph.indexed(u, [walk[a] for a, _ in hops])
            if len(walk) == n:
                twice = [walk[a] for a in range(n)] * 2
    return ph


def ring_schedule(topology: Topology, rings: Rings, collective: str,
                  root: Node | None = None) -> Baseline:
    """NCCL's ring ``collective`` on ``rings`` (broadcast / reduce: ``root``)."""
    phases = [_phase(rings, coll, root) for coll in PHASES[collective]]
    n = len(rings.channels)
    label = f"NCCL ring, {n} channel{'s' if n != 1 else ''}"
    doc = document(topology, collective, phases, name="nccl-ring", label=label, root=root,
                   options={"channels": n})
    order = rings.channels[0].order
    head = " ".join(str(v) for v in order[:10]) + (" …" if len(order) > 10 else "")
    return Baseline("nccl-ring", label, collective, doc, [f"channel 0: {head}"])
