"""Ready-made topologies: the evaluation platforms of Zhao et al. 2026 and generic shapes.

Bandwidths are in GB/s per direction unless a builder says otherwise; the
hardware facts are those of ForestColl's evaluation (Zhao et al. 2026, §6.2-6.3, Fig. 9), the
DGX-1's NVLink cube-mesh follows NVIDIA's DGX-1 V100 white paper (Zhao et al. 2026, ref. [51]), the
2-box example from Zhao & Krishnamurthy 2023, Fig. 1. DGX B200 and GB200 NVL72 follow
NVIDIA's public specifications (each builder says which figure comes from where). Node ids
are readable strings: ``"b0.gpu3"``, ``"b0.nvswitch"``, ``"b1.nic5"``, ``"ib0"``,
``"r1.gpu70"``.

Switches that add (:mod:`collcert.reference.model.capabilities`): the NVSwitches of
``dgx_h100``, ``dgx_b200`` and ``gb200_nvl72`` are NVLS switches (NVLink SHARP, which NCCL
uses as its NVLS algorithm: they reduce into a member GPU and multicast what a member
stores) unless ``in_network="none"``; the InfiniBand switch ``ib`` between boxes forwards
only, unless ``in_network="sharp"``: then it is a SHARP switch (SHARP on Quantum
InfiniBand switches, NCCL's CollNet, which needs NVIDIA's SHARP plugin: off by default;
the aggregation tree's root switch holds the sum and multicasts it).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence

from collcert.fabrics import (
    dgx_b200_rails,
    dgx_h100_rails,
    mi300x,
    mi300x_size,
    mixed_cluster,
    mixed_size,
    rails_size,
)
from collcert.reference.model import Size, Topology, TopologyError, check_size

__all__ = [
    "MI250_LINKS",
    "DGX1_LINKS",
    "dgx_a100",
    "dgx_h100",
    "dgx_b200",
    "gb200_nvl72",
    "mi250",
    "dgx1",
    "two_box_example",
    "ring",
    "complete",
    "hypercube",
    "torus",
    "fat_tree",
    "dgx_h100_rails",
    "dgx_b200_rails",
    "mi300x",
    "mixed_cluster",
]

# Number of Infinity Fabric links between GPU i and GPU j of one MI250 box
# (Zhao et al. 2026, Fig. 9; 50 GB/s each way per link).
MI250_LINKS: tuple[tuple[int, ...], ...] = (
    (0, 4, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0),
    (4, 0, 0, 0, 0, 1, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0),
    (0, 0, 0, 4, 0, 0, 1, 0, 0, 1, 1, 0, 0, 0, 0, 0),
    (0, 0, 4, 0, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0),
    (2, 0, 0, 0, 0, 4, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0),
    (0, 1, 0, 0, 4, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0),
    (0, 0, 1, 0, 1, 1, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0),
    (0, 0, 0, 2, 0, 1, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0),
    (1, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 2, 0, 0, 0),
    (0, 1, 1, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 1, 0, 0),
    (0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 1, 0),
    (0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 2),
    (0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 4, 1, 0),
    (0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 4, 0, 1, 1),
    (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 1, 0, 4),
    (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 1, 4, 0),
)

# NVLink count between GPU i and GPU j of a DGX-1 (V100).
DGX1_LINKS: tuple[tuple[int, ...], ...] = (
    (0, 2, 1, 1, 2, 0, 0, 0),
    (2, 0, 1, 2, 0, 1, 0, 0),
    (1, 1, 0, 2, 0, 0, 2, 0),
    (1, 2, 2, 0, 0, 0, 0, 1),
    (2, 0, 0, 0, 0, 2, 1, 1),
    (0, 1, 0, 0, 2, 0, 1, 2),
    (0, 0, 2, 0, 1, 1, 0, 2),
    (0, 0, 0, 1, 1, 2, 2, 0),
)


def _both(links: list[tuple[object, object, object]], u: object, v: object, c: object) -> None:
    links.append((u, v, c))
    links.append((v, u, c))


def _check_count(name: str, value: int, least: int = 1) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < least:
        shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:40] + "…"
        raise TopologyError(f"{name} must be an integer ≥ {least}, got {shown}")


def _boxes_size(gpus: int, ib_switches: int, default: int = 2) -> Callable[..., Size]:
    def size(boxes: int = default, *rest: object) -> Size:
        if boxes == 1:
            return Size(gpus, gpus + 1, 2 * gpus)
        return Size(gpus * boxes, (2 * gpus + 1) * boxes + ib_switches, 6 * gpus * boxes)
    return size


def _mi250_size(boxes: int = 2, gpus_per_box: int = 16) -> Size:
    pairs = sum(1 for i, j in itertools.combinations(range(gpus_per_box), 2)
                if MI250_LINKS[i][j])
    multi = boxes > 1
    return Size(boxes * gpus_per_box, boxes * gpus_per_box + multi,
                boxes * (2 * pairs + 2 * gpus_per_box * multi))


def _torus_size(dims: Sequence[int], capacity: object = 1) -> Size:
    n = math.prod(dims)
    return Size(n, n, 2 * len(dims) * n)


def _fat_tree_size(k: int = 4, capacity: object = 1) -> Size:
    return Size(k**3 // 4, k**3 // 4 + k * k + k * k // 4, 3 * k**3 // 2)


_SIZES: dict[str, Callable[..., Size]] = {
    "dgx_a100": _boxes_size(8, 2),
    "dgx_h100": _boxes_size(8, 1),
    "dgx_b200": _boxes_size(8, 1),
    "gb200_nvl72": _boxes_size(72, 1, default=1),
    "mi250": _mi250_size,
    "dgx1": lambda *a: Size(8, 8, 2 * sum(1 for r in DGX1_LINKS for c in r if c) // 2),
    "two_box_example": lambda *a: Size(8, 11, 32),
    "ring": lambda n, *a, **k: Size(n, n, 2 * n),
    "complete": lambda n, *a: Size(n, n, n * (n - 1)),
    "hypercube": lambda dim, *a: Size(2**dim, 2**dim, dim * 2**dim),
    "torus": _torus_size,
    "fat_tree": _fat_tree_size,
    "dgx_h100_rails": rails_size,
    "dgx_b200_rails": rails_size,
    "mi300x": mi300x_size,
    "mixed_cluster": mixed_size,
}


def size_of(name: str, *args: object, **kwargs: object) -> Size | None:
    """The counts (compute nodes, nodes, links) that ``name(*args)`` would build, from
    the arguments alone, or None when the arguments are not valid (the builder then
    says why). Used to refuse a platform too big to build or solve before building it."""
    fn = _SIZES.get(name)
    if fn is None:
        return None
    if any(type(a) is not int and not isinstance(a, tuple) for a in args[:1]):
        return None  # the size-giving argument is not an integer: the builder says so
    try:
        size = fn(*args, **kwargs)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    counts = (size.compute, size.nodes, size.links)
    if any(type(c) is not int or c < 0 for c in counts):
        return None
    return size


def _guard(name: str, *args: object, **kwargs: object) -> None:
    size = size_of(name, *args, **kwargs)
    if size is not None:
        check_size(size, f"{name}({', '.join(map(repr, args))})")


IN_NETWORK = ("nvls", "sharp", "none")
"""What the switches of ``dgx_h100``, ``dgx_b200`` and ``gb200_nvl72`` may add: ``"nvls"``
(the default) the NVSwitches, ``"sharp"`` also the InfiniBand switch, ``"none"`` nothing
(ForestColl's model, every switch forwards)."""


def _in_network(platform: str, value: object) -> str:
    if value not in IN_NETWORK:
        shown = repr(value) if len(repr(value)) <= 30 else repr(value)[:30] + "…"
        raise TopologyError(f"{platform}: in_network must be one of {', '.join(IN_NETWORK)} "
                            f"(nvls: the NVSwitches add the NVLS way, NVLink SHARP; sharp: "
                            f"the InfiniBand switch adds the SHARP way too; none: switches "
                            f"forward only), got {shown}")
    return str(value)


def _nvswitch_boxes(
    name: str, boxes: int, nvswitch_bw: int, nic_bw: int, ib_switch_of: Sequence[str], *,
    platform: str = "", in_network: str = "none", gpus: int = 8, box: str = "b",
    label: str = "box",
) -> Topology:
    _check_count(f"{label}es" if label == "box" else f"{label}s", boxes)
    _guard(platform or ("dgx_h100" if nvswitch_bw == 450 else "dgx_a100"), boxes)
    compute: list[str] = []
    switches: list[str] = []
    links: list[tuple[object, object, object]] = []
    ib_switches = sorted(set(ib_switch_of)) if boxes > 1 else []
    for b in range(boxes):
        nvs = f"{box}{b}.nvswitch"
        switches.append(nvs)
        for g in range(gpus):
            gpu = f"{box}{b}.gpu{g}"
            compute.append(gpu)
            _both(links, gpu, nvs, nvswitch_bw)
            if boxes > 1:
                nic = f"{box}{b}.nic{g}"
                switches.append(nic)
                _both(links, gpu, nic, nic_bw)
                _both(links, nic, ib_switch_of[g], nic_bw)
    switches += ib_switches
    nvls = [w for w in switches if w.endswith(".nvswitch")] if in_network != "none" else []
    sharp = ib_switches if in_network == "sharp" else []
    suffix = {"none": "", "nvls": "", "sharp": ", SHARP"}[in_network] if boxes > 1 else ""
    return Topology(compute, links, switches, name=f"{boxes}-{label} {name}{suffix}",
                    unit="GB/s", reducing_switches=sharp, nvls_switches=nvls)


def dgx_a100(boxes: int = 2) -> Topology:
    """DGX A100 boxes (Zhao et al. 2026, §6.2.2): 8 GPUs on an NVSwitch at 300 GB/s each way;
    each GPU has its own 25 GB/s NIC, NICs of even GPUs on IB switch ``ib0``,
    odd ones on ``ib1``. One box has no NICs."""
    return _nvswitch_boxes("DGX A100", boxes, 300, 25, ["ib0", "ib1"] * 4)


def dgx_h100(boxes: int = 2, in_network: str = "nvls") -> Topology:
    """DGX H100 boxes (Zhao et al. 2026, §6.3): NVSwitch at 450 GB/s each way per GPU, one
    50 GB/s NIC per GPU, all NICs on one IB fabric switch ``ib``.

    The four NVSwitch 3 chips of a box are one node ``b{i}.nvswitch`` (each GPU's 18
    NVLink 4 links, 25 GB/s each way, 450 in all: NVIDIA DGX H100 datasheet, "900 GB/s
    GPU-to-GPU bidirectional"); NVSwitch 3 adds and multicasts in the switch (NVLink SHARP:
    NVIDIA, "Upgrading Multi-GPU Interconnectivity with the Third-Generation NVIDIA
    NVSwitch", 2022), so it is an NVLS switch unless ``in_network="none"``. NICs:
    ConnectX-7 at 400 Gb/s = 50 GB/s each way. ``in_network="sharp"``: the IB switch
    (Quantum-2, SHARPv3) adds too, the SHARP way; off by default, as NCCL's CollNet needs
    the SHARP plugin. An H200 box has the same NVLink and NICs (the same topology)."""
    return _nvswitch_boxes("DGX H100", boxes, 450, 50, ["ib"] * 8, platform="dgx_h100",
                           in_network=_in_network("dgx_h100", in_network))


def dgx_b200(boxes: int = 2, in_network: str = "nvls") -> Topology:
    """DGX B200 boxes: 8 B200 GPUs on NVLink 5 switches at 900 GB/s each way per GPU, one
    50 GB/s NIC per GPU, all NICs on one IB fabric switch ``ib``.

    Figures from NVIDIA's DGX B200 datasheet and user guide: 18 NVLink 5 links per GPU,
    1.8 TB/s bidirectional (900 GB/s each way), two NVLink switch chips (here one node
    ``b{i}.nvswitch``, 14.4 TB/s aggregate = 8 × 1.8 TB/s), which add and multicast (NVLink
    SHARP) unless ``in_network="none"``; 8 single-port ConnectX-7 at 400 Gb/s = 50 GB/s
    each way, one per GPU. ``in_network="sharp"``: the IB switch adds too (off by
    default, as for dgx_h100)."""
    return _nvswitch_boxes("DGX B200", boxes, 900, 50, ["ib"] * 8, platform="dgx_b200",
                           in_network=_in_network("dgx_b200", in_network))


def gb200_nvl72(racks: int = 1, in_network: str = "nvls") -> Topology:
    """GB200 NVL72 racks: 72 Blackwell GPUs per rack on one NVLink 5 domain at 900 GB/s
    each way per GPU; with several racks, one 50 GB/s NIC per GPU, all NICs on one IB
    fabric switch ``ib`` (a non-blocking fabric; rail-optimized fabrics are other builders).

    Figures from NVIDIA's GB200 NVL72 specifications: 72 GPUs, 18 NVLink 5 links per GPU,
    1.8 TB/s bidirectional per GPU (900 GB/s each way), 130 TB/s in the rack (72 × 1.8);
    nine NVLink switch trays of two NVLink switch chips, each GPU linked once to each of the
    18 chips: here one node ``r{i}.nvswitch`` (per GPU the same 900 GB/s), which adds and
    multicasts (NVLink SHARP) unless ``in_network="none"``. Each compute tray (2 Grace
    CPUs, 4 GPUs) has 4 ConnectX-7 NICs at 400 Gb/s: one per GPU, 50 GB/s each way. One
    rack has no NICs (as one DGX box). GPUs ``r{i}.gpu{0..71}``, NICs ``r{i}.nic{g}``.
    ``in_network="sharp"``: the IB switch adds too (off by default)."""
    return _nvswitch_boxes("GB200 NVL72", racks, 900, 50, ["ib"] * 72, platform="gb200_nvl72",
                           in_network=_in_network("gb200_nvl72", in_network), gpus=72,
                           box="r", label="rack")


def mi250(boxes: int = 2, gpus_per_box: int = 16) -> Topology:
    """AMD MI250 boxes (Zhao et al. 2026, §6.2.1, Fig. 9): direct Infinity Fabric links of
    50 GB/s each (:data:`MI250_LINKS` gives the counts); each GPU ↔ one shared
    IB switch ``ib`` at 16 GB/s each way. ``gpus_per_box=8`` uses GPUs 0-7 of
    each box (the paper's "8+8" setting)."""
    _check_count("boxes", boxes)
    if gpus_per_box not in (8, 16):
        raise TopologyError(f"gpus_per_box must be 8 or 16, got {gpus_per_box!r}")
    _guard("mi250", boxes, gpus_per_box)
    compute: list[str] = []
    links: list[tuple[object, object, object]] = []
    for b in range(boxes):
        for i in range(gpus_per_box):
            compute.append(f"b{b}.gpu{i}")
        for i, j in itertools.combinations(range(gpus_per_box), 2):
            if MI250_LINKS[i][j]:
                _both(links, f"b{b}.gpu{i}", f"b{b}.gpu{j}", 50 * MI250_LINKS[i][j])
        if boxes > 1:
            for i in range(gpus_per_box):
                _both(links, f"b{b}.gpu{i}", "ib", 16)
    switches = ["ib"] if boxes > 1 else []
    label = f"{boxes}-box MI250" + ("" if gpus_per_box == 16 else f" ({gpus_per_box} GPUs/box)")
    return Topology(compute, links, switches, name=label, unit="GB/s")


def dgx1(link_bandwidth: object = 1) -> Topology:
    """DGX-1 (V100): 8 GPUs, direct NVLinks (:data:`DGX1_LINKS`), each link
    ``link_bandwidth`` each way (1 = one NVLink unit; 25 for GB/s)."""
    links: list[tuple[object, object, object]] = []
    for i, j in itertools.combinations(range(8), 2):
        if DGX1_LINKS[i][j]:
            from collcert.reference.model import parse_number

            _both(links, f"gpu{i}", f"gpu{j}", DGX1_LINKS[i][j] * parse_number(link_bandwidth))
    unit = "NVLink" if link_bandwidth == 1 else "GB/s"
    return Topology([f"gpu{i}" for i in range(8)], links, name="DGX-1", unit=unit)


def two_box_example(b: object = 1) -> Topology:
    """Zhao & Krishnamurthy 2023, Fig. 1: two boxes of 4 compute nodes ``c{i}.{j}``; box switch
    ``w{i}`` at 10b each way per node, global switch ``w0`` at b each way per
    node. Bottleneck: box 1 with its switch, 1/x* = 1/b."""
    from collcert.reference.model import parse_number

    bw = parse_number(b)
    compute: list[str] = []
    links: list[tuple[object, object, object]] = []
    for i in (1, 2):
        for j in range(1, 5):
            c = f"c{i}.{j}"
            compute.append(c)
            _both(links, c, f"w{i}", 10 * bw)
            _both(links, c, "w0", bw)
    return Topology(compute, links, ["w0", "w1", "w2"],
                    name="2-box example (Zhao & Krishnamurthy 2023, Fig. 1)",
                    unit="b" if b == 1 else "GB/s")


def ring(n: int, capacity: object = 1, *, bidirectional: bool = True) -> Topology:
    """n compute nodes ``0 .. n-1`` in a ring (one direction or both)."""
    _check_count("n", n, 2)
    _guard("ring", n)
    links: list[tuple[object, object, object]] = []
    for i in range(n):
        j = (i + 1) % n
        links.append((i, j, capacity))
        if bidirectional:
            links.append((j, i, capacity))
    return Topology(range(n), links, name=f"ring({n})", unit="GB/s")


def complete(n: int, capacity: object = 1) -> Topology:
    """n compute nodes with a link of ``capacity`` between every ordered pair."""
    _check_count("n", n, 2)
    _guard("complete", n)
    links = [(i, j, capacity) for i in range(n) for j in range(n) if i != j]
    return Topology(range(n), links, name=f"complete({n})", unit="GB/s")


def hypercube(dim: int, capacity: object = 1) -> Topology:
    """2**dim compute nodes; nodes differing in one bit are linked both ways."""
    _check_count("dim", dim)
    _guard("hypercube", dim)
    n = 2**dim
    links = [(i, i ^ (1 << d), capacity) for i in range(n) for d in range(dim)]
    return Topology(range(n), links, name=f"hypercube({dim})", unit="GB/s")


def torus(dims: Sequence[int], capacity: object = 1) -> Topology:
    """A torus with wrap-around links both ways in every dimension, e.g. ``torus((4, 4))``.
    Node ids are strings ``"x.y"``."""
    dims = tuple(dims)
    if not dims:
        raise TopologyError("torus needs at least one dimension")
    for d in dims:
        _check_count("each torus dimension", d, 2)
    _guard("torus", dims)
    nodes = list(itertools.product(*(range(d) for d in dims)))

    def nid(p: tuple[int, ...]) -> str:
        return ".".join(map(str, p))

    pairs: dict[tuple[str, str], int] = {}
    for p in nodes:
        for axis, d in enumerate(dims):
            q = list(p)
            q[axis] = (p[axis] + 1) % d
            for a, b in ((nid(p), nid(tuple(q))), (nid(tuple(q)), nid(p))):
                if d == 2 and (a, b) in pairs:
                    continue  # a dimension of 2 has one neighbour, not two
                pairs[(a, b)] = 1
    links = [(a, b, capacity) for a, b in pairs]
    return Topology([nid(p) for p in nodes], links, name=f"torus{dims}", unit="GB/s")


def fat_tree(k: int = 4, capacity: object = 1) -> Topology:
    """The k-ary fat tree of Al-Fares et al. (Zhao & Krishnamurthy 2023 ref. [1]): k pods of k/2
    edge and k/2 aggregation switches, (k/2)² core switches, k³/4 hosts; every
    link ``capacity`` both ways. Hosts are ``"h{pod}.{edge}.{i}"``."""
    _check_count("k", k, 2)
    if k % 2:
        raise TopologyError(f"fat_tree needs an even k, got {k}")
    _guard("fat_tree", k)
    half = k // 2
    hosts: list[str] = []
    switches: list[str] = []
    links: list[tuple[object, object, object]] = []
    cores = [f"core{i}.{j}" for i in range(half) for j in range(half)]
    for pod in range(k):
        for e in range(half):
            edge = f"edge{pod}.{e}"
            switches.append(edge)
            for h in range(half):
                host = f"h{pod}.{e}.{h}"
                hosts.append(host)
                _both(links, host, edge, capacity)
            for a in range(half):
                _both(links, edge, f"agg{pod}.{a}", capacity)
        for a in range(half):
            agg = f"agg{pod}.{a}"
            switches.append(agg)
            for j in range(half):
                _both(links, agg, f"core{a}.{j}", capacity)
    return Topology(hosts, links, switches + cores, name=f"fat_tree({k})", unit="GB/s")
