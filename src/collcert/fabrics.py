"""Machines as they are built: rail-optimized leaf/spine fabrics, MI300X boxes, a mixed cluster.

Registered by :mod:`collcert.platforms` (``collcert platforms`` lists them). Bandwidths in
GB/s per direction; every figure comes from a public specification, named where it is
used:

* **DGX H100 / DGX B200 server**: 8 GPUs on NVSwitch at 450 GB/s (H100: 18 NVLink 4
  links × 25 GB/s; NVIDIA DGX H100 datasheet, "900 GB/s GPU-to-GPU bidirectional") or
  900 GB/s (B200: 18 NVLink 5 links, "1.8 TB/s"; NVIDIA DGX B200 datasheet) each way per
  GPU, one node ``s{i}.nvswitch`` for the NVSwitch chips (as :func:`~collcert.platforms.dgx_h100`);
  eight ConnectX-7 NICs at 400 Gb/s = 50 GB/s each way, one per GPU (both datasheets).
* **Rail-optimized fabric** (NVIDIA DGX SuperPOD reference architectures for DGX H100
  and DGX B200, "Compute fabric"): a scalable unit (SU) of 32 servers; NIC g of every
  server of an SU goes to the SU's leaf switch of *rail* g ("each group of 32 nodes is
  rail-aligned: traffic per rail is always one hop away from the other 31 nodes of the
  SU; traffic between nodes or between rails traverses the spine layer"); 64-port
  Quantum-2 switches (QM9700, NDR 400 Gb/s), so a leaf has 32 ports down and 32 up;
  4 SUs = 128 servers = 1024 GPUs use 32 leaves and 16 spines with 1024 leaf-spine cables
  (the RAs' tables), every leaf cabled to every spine. Here: 4 spines per SU (the
  tables' 4, 8, 16 for 1, 2, 4 SUs give 4 per SU at 1, 2 and 4 SUs), every leaf linked
  to every spine with its uplink capacity split evenly; ``oversubscription`` r divides
  the uplinks: a leaf's uplinks carry 32 × 50 / r GB/s (r = 1: non-blocking, as built).
* **MI300X box** (AMD Instinct MI300X data sheet and platform brief): 8 GPUs, every pair
  joined by one Infinity Fabric link of 128 GB/s bidirectional (64 GB/s each way; 7 links,
  896 GB/s per GPU); one 400 Gb/s NIC per GPU (50 GB/s each way) on one fabric switch.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

from collcert.reference.model import Size, Topology, TopologyError, check_size, parse_number

SERVERS_PER_SU = 32
"""Servers of one scalable unit (one leaf per rail): DGX SuperPOD H100 and B200 RAs."""
SPINES_PER_SU = 4
NIC_GBPS = 50
"""ConnectX-7 at 400 Gb/s, each way."""
MI300X_LINK = 64
"""One Infinity Fabric link of an MI300X, each way (128 GB/s bidirectional)."""

_Links = list[tuple[object, object, object]]


def _both(links: _Links, u: object, v: object, c: object) -> None:
    links.append((u, v, c))
    links.append((v, u, c))


def _nvswitch_box(compute: list[str], switches: list[str], links: _Links, box: str,
                  nvlink: object, nic_bw: object, uplink: str) -> None:
    """An 8-GPU NVSwitch box (DGX H100, B200, A100 of the mixed cluster): ``box``.gpu0-7
    on ``box``.nvswitch at ``nvlink`` each way, GPU g's own NIC at ``nic_bw`` to the
    switch ``uplink`` (``{g}`` in it: the GPU's rail, ``"leaf{g}.3"``)."""
    nvs = f"{box}.nvswitch"
    switches.append(nvs)
    for g in range(8):
        gpu, nic = f"{box}.gpu{g}", f"{box}.nic{g}"
        compute.append(gpu)
        switches.append(nic)
        _both(links, gpu, nvs, nvlink)
        _both(links, gpu, nic, nic_bw)
        _both(links, nic, uplink.format(g=g), nic_bw)


def _count(name: str, value: object, least: int = 1) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < least:
        shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:40] + "…"
        raise TopologyError(f"{name} must be an integer ≥ {least}, got {shown}")
    return value


def _ratio(value: object) -> Fraction:
    r = Fraction(parse_number(value))
    if r < 1 or r > 64:
        raise TopologyError(f"oversubscription must be a ratio from 1 (non-blocking) to 64, "
                            f"got {value!r}")
    return r


def rails_size(servers: int = 128, servers_per_leaf: int = SERVERS_PER_SU,
               oversubscription: object = 1) -> Size:
    sus = -(-servers // max(servers_per_leaf, 1))
    spines = SPINES_PER_SU * sus
    nodes = servers * 17 + 8 * sus + spines
    return Size(8 * servers, nodes, 2 * (16 * servers + 8 * servers + 8 * sus * spines))


def _rails(model: str, nvlink: int, servers: int, servers_per_leaf: int,
           oversubscription: object) -> Topology:
    _count("servers", servers)
    _count("servers_per_leaf", servers_per_leaf)
    if servers % servers_per_leaf:
        raise TopologyError(f"{servers} servers do not fill scalable units of "
                            f"{servers_per_leaf} (one leaf per rail each); give a multiple")
    ratio = _ratio(oversubscription)
    check_size(rails_size(servers, servers_per_leaf), f"{model} rails({servers})")
    sus = servers // servers_per_leaf
    spines = [f"spine{p}" for p in range(SPINES_PER_SU * sus)]
    up = Fraction(servers_per_leaf * NIC_GBPS) / ratio / len(spines)
    compute: list[str] = []
    switches: list[str] = []
    links: _Links = []
    for s in range(servers):
        _nvswitch_box(compute, switches, links, f"s{s}", nvlink, NIC_GBPS,
                      "leaf{g}." + str(s // servers_per_leaf))
    for g in range(8):
        for u in range(sus):
            leaf = f"leaf{g}.{u}"
            switches.append(leaf)
            for sp in spines:
                _both(links, leaf, sp, up if up.denominator > 1 else int(up))
    switches += spines
    over = "" if ratio == 1 else f", {ratio}:1 oversubscribed"
    return Topology(compute, links, switches, unit="GB/s",
                    name=f"{servers}-server {model} rail-optimized fabric ({sus} SU{over})")


def dgx_h100_rails(servers: int = 128, servers_per_leaf: int = SERVERS_PER_SU,
                   oversubscription: object = 1) -> Topology:
    """DGX H100 servers on a rail-optimized leaf/spine InfiniBand fabric (module
    docstring): ``s{i}.gpu{g}`` on ``s{i}.nvswitch`` at 450 GB/s, NIC ``s{i}.nic{g}`` at
    50 GB/s on leaf ``leaf{g}.{SU}``, every leaf on every spine ``spine{p}``;
    ``servers_per_leaf`` (32 in the SuperPOD) and ``oversubscription`` (1: non-blocking)."""
    return _rails("DGX H100", 450, servers, servers_per_leaf, oversubscription)


def dgx_b200_rails(servers: int = 128, servers_per_leaf: int = SERVERS_PER_SU,
                   oversubscription: object = 1) -> Topology:
    """DGX B200 servers (900 GB/s NVLink 5 per GPU, 50 GB/s NIC per GPU) on the same
    rail-optimized fabric as :func:`dgx_h100_rails` (DGX SuperPOD B200 RA: 4 SUs = 128
    servers, 32 leaves, 16 spines, 1024 leaf-spine cables)."""
    return _rails("DGX B200", 900, servers, servers_per_leaf, oversubscription)


def mi300x_size(boxes: int = 2) -> Size:
    if boxes == 1:
        return Size(8, 8, 56)
    return Size(8 * boxes, 16 * boxes + 1, 56 * boxes + 32 * boxes)


def mi300x(boxes: int = 2) -> Topology:
    """AMD MI300X boxes (module docstring): GPUs ``b{i}.gpu{g}``, every pair of a box
    linked both ways at 64 GB/s (Infinity Fabric full mesh); with several boxes a 50 GB/s
    NIC ``b{i}.nic{g}`` per GPU, all on one fabric switch ``net``."""
    _count("boxes", boxes)
    check_size(mi300x_size(boxes), f"mi300x({boxes})")
    compute: list[str] = []
    switches: list[str] = []
    links: _Links = []
    for b in range(boxes):
        gpus = [f"b{b}.gpu{g}" for g in range(8)]
        compute += gpus
        for x, y in itertools.combinations(gpus, 2):
            _both(links, x, y, MI300X_LINK)
        if boxes > 1:
            for g, gpu in enumerate(gpus):
                nic = f"b{b}.nic{g}"
                switches.append(nic)
                _both(links, gpu, nic, NIC_GBPS)
                _both(links, nic, "net", NIC_GBPS)
    if boxes > 1:
        switches.append("net")
    return Topology(compute, links, switches, name=f"{boxes}-box MI300X", unit="GB/s")


def mixed_size(h100: int = 2, a100: int = 2) -> Size:
    boxes = h100 + a100
    return Size(8 * boxes, 17 * boxes + 1, 48 * boxes)


def mixed_cluster(h100: int = 2, a100: int = 2) -> Topology:
    """A cluster of two generations on one fabric switch ``ib``: ``h100`` DGX H100 boxes
    (``h{i}.…``: 450 GB/s NVSwitch, 50 GB/s NICs) and ``a100`` DGX A100 boxes (``a{i}.…``:
    300 GB/s NVSwitch, 25 GB/s NICs; Zhao et al. 2026, §6.2.2); every GPU has its own
    NIC. Only boxes of one kind are interchangeable: no box shift, a near-symmetry."""
    _count("h100", h100, 0)
    _count("a100", a100, 0)
    if h100 + a100 < 2:
        raise TopologyError("a mixed cluster needs at least two boxes")
    check_size(mixed_size(h100, a100), f"mixed_cluster({h100}, {a100})")
    compute: list[str] = []
    switches: list[str] = []
    links: _Links = []
    kinds = [("h", 450, NIC_GBPS)] * h100 + [("a", 300, 25)] * a100
    counts = {"h": 0, "a": 0}
    for kind, nvlink, nic_bw in kinds:
        box = f"{kind}{counts[kind]}"
        counts[kind] += 1
        _nvswitch_box(compute, switches, links, box, nvlink, nic_bw, "ib")
    switches.append("ib")
    return Topology(compute, links, switches, unit="GB/s",
                    name=f"mixed cluster ({h100} DGX H100 + {a100} DGX A100)")
