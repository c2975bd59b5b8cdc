"""A machine read from a file, before it becomes a :class:`Topology`.

The importers fill a :class:`Machine` per host: GPUs (compute nodes), CPUs, PCIe
switches, NVSwitches and NICs (switch nodes), and undirected links with an exact
bandwidth each way. :func:`assemble` then replicates boxes, joins their NICs
through one network switch, drops switches that lead nowhere, and builds the
Eulerian topology: every link is modelled both ways with the same capacity.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from collcert.reference.model import Size, Topology, TopologyError, check_size

from .speeds import gb

Pair = tuple[str, str]


def _pair(u: str, v: str) -> Pair:
    return (u, v) if u <= v else (v, u)


@dataclass
class Machine:
    """One host. ``links`` are PCIe/CPU/C2C links, ``nvlinks`` NVLinks (kept apart so a
    companion file can replace them); both map an unordered pair to GB/s each way."""

    origin: str
    gpus: list[str] = field(default_factory=list)
    switches: list[str] = field(default_factory=list)
    info: dict[str, str] = field(default_factory=dict)
    links: dict[Pair, Fraction] = field(default_factory=dict)
    nvlinks: dict[Pair, Fraction] = field(default_factory=dict)
    nvlink_switches: set[str] = field(default_factory=set)
    nics: dict[str, Fraction | None] = field(default_factory=dict)
    gpu_sm: dict[str, int | None] = field(default_factory=dict)
    gpu_bus: dict[str, str] = field(default_factory=dict)

    def add_gpu(self, name: str, info: str, *, sm: int | None = None, bus: str = "") -> None:
        self._declare(name, info)
        self.gpus.append(name)
        self.gpu_sm[name] = sm
        self.gpu_bus[name] = bus

    def add_switch(self, name: str, info: str) -> None:
        self._declare(name, info)
        self.switches.append(name)

    def _declare(self, name: str, info: str) -> None:
        if name in self.info:
            raise TopologyError(f"{self.origin}: {info} and {self.info[name]} would both be "
                                f"node {name!r}; give them distinct ids (bus ids, numaid)")
        self.info[name] = info

    def link(self, u: str, v: str, bw: Fraction, *, nvlink: bool = False) -> None:
        """Add ``bw`` each way between u and v (parallel links add up)."""
        table = self.nvlinks if nvlink else self.links
        key = _pair(u, v)
        table[key] = table.get(key, Fraction(0)) + bw

    def gpus_by_bus(self) -> list[str]:
        """The GPUs in PCI bus-id order (the order nvidia-smi numbers them)."""
        return sorted(self.gpus, key=lambda g: (self.gpu_bus.get(g, ""), self.gpus.index(g)))


@dataclass
class Assembled:
    topology: Topology
    notes: list[str]
    info: dict[str, str]


def assemble(machines: list[Machine], *, name: str, boxes: int = 1,
             nic_bw: Fraction | None = None, strict: bool = True,
             solve: bool = False) -> Assembled:
    """The topology of ``machines`` (several hosts of one file) or of ``boxes`` copies of
    one machine, NICs joined by one non-blocking network switch ``net``."""
    origin = machines[0].origin
    hosts = len(machines) > 1
    if boxes > 1 and hosts:
        raise TopologyError(f"{origin} already describes {len(machines)} hosts; --boxes "
                            "replicates a file of one host")
    copies: list[tuple[str, Machine]]
    if hosts:
        copies = [(f"h{i}.", m) for i, m in enumerate(machines)]
    elif boxes > 1:
        copies = [(f"b{i}.", machines[0]) for i in range(boxes)]
    else:
        copies = [("", machines[0])]
    multi = len(copies) > 1
    parts = _Parts()
    notes: list[str] = []
    if multi:
        parts.switches.append("net")
        parts.info["net"] = "the network joining the boxes' NICs (one non-blocking switch)"
    for prefix, m in copies:
        # Hosts of one file share their NVSwitch fabric (a multi-node NVLink domain);
        # copies made by --boxes each have their own.
        parts.add_copy(prefix, m, m.nvlink_switches if hosts else set(), origin)
        shared = m.nvlink_switches if hosts else set()
        parts.reducing |= {s if s in shared else prefix + s for s in nvls_switches(m)}
        if multi:
            parts.join_nics(prefix, m, nic_bw, hosts, origin)
    if multi:
        kind = "hosts" if hosts else "copies of the box"
        speeds = sorted({nic_bw} if nic_bw is not None else
                        {bw for _, m in copies for bw in m.nics.values() if bw is not None})
        notes.append(f"{len(copies)} {kind}, every NIC joined to one non-blocking network "
                     f"switch 'net' at its speed ({', '.join(gb(s) for s in speeds)})")
    elif machines[0].nics:
        nics = machines[0].nics
        notes.append(f"{len(nics)} NIC{'s' if len(nics) > 1 else ''} left out: one box has "
                     "no network peer (--boxes N models N boxes joined by their NICs)")
        parts.drop(set(nics))
    dropped = _prune(parts.switches, parts.links)
    if dropped:
        notes.append(f"{dropped} switch node{'s that lead' if dropped > 1 else ' that leads'} to "
                     "no GPU dropped (PCIe bridges with nothing below, NVSwitches of absent GPUs)")
    notes += [nvls_note(m) for m in machines[:1] if m.nvlink_switches]
    topo = parts.topology(name, origin, strict, solve)
    return Assembled(topo, notes, {k: parts.info[k] for k in topo.nodes if k in parts.info})


NVLS_SM = 90
"""NVLink SHARP (NVLS) needs Hopper (sm 90) or later GPUs on an NVSwitch: NCCL's default
NCCL_NVLS_ENABLE=2 (src/transport/nvls.cc:159 at NCCL 5067397c) turns it on where the CUDA
device attribute CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED says so (nvls.cc:270-276), with
two GPUs or more (nvls.cc:262). NCCL's topology dump does not record that attribute; the
GPUs' ``sm`` and the NVLinks to an NVSwitch (class 0x068000) are what it shows."""


def nvls_switches(m: Machine) -> set[str]:
    """The NVSwitches of ``m`` that add (NVLS): every GPU on them is sm 90 or later, and
    there are two GPUs or more."""
    out = set()
    for s in m.nvlink_switches:
        gpus = [g for g in m.gpus if _pair(g, s) in m.nvlinks]
        if len(gpus) >= 2 and all((m.gpu_sm.get(g) or 0) >= NVLS_SM for g in gpus):
            out.add(s)
    return out


def nvls_note(m: Machine) -> str:
    """What the import says of NVLS on the NVSwitch of ``m``."""
    if nvls_switches(m):
        return ("the NVSwitch adds the NVLS way (NVLink SHARP, NCCL's NVLS: GPUs of sm 90 or "
                "later, on by default in NCCL: it reduces into a member GPU and multicasts "
                "what a member stores); its nvls_switches entry opens the in-network "
                "optimum (docs/in-network.md); collcert optimum --forward-only drops it")
    known = all(m.gpu_sm.get(g) for g in m.gpus)
    return ("the NVSwitch only forwards: " + ("its GPUs are older than sm 90 (no NVLink "
            "SHARP)" if known else "the file does not give every GPU's sm, so NVLS is not "
            "assumed; declare it with optimum --nvls nvswitch if the GPUs are H100 or "
            "later"))


@dataclass
class _Parts:
    """The nodes and links of the assembled topology, gathered copy by copy; ``links``
    map an unordered pair to GB/s each way."""

    compute: list[str] = field(default_factory=list)
    switches: list[str] = field(default_factory=list)
    info: dict[str, str] = field(default_factory=dict)
    links: dict[Pair, Fraction] = field(default_factory=dict)
    reducing: set[str] = field(default_factory=set)  # NVSwitches that add (NVLS)

    def link(self, u: str, v: str, bw: Fraction) -> None:
        key = _pair(u, v)
        self.links[key] = self.links.get(key, Fraction(0)) + bw

    def add_copy(self, prefix: str, m: Machine, shared: set[str], origin: str) -> None:
        """Machine ``m``'s nodes and links, their ids prefixed (the ``shared`` ones not)."""
        if not m.gpus:
            where = f" on host {prefix[:-1]}" if prefix else ""
            raise TopologyError(f"{origin}: no GPU found{where}; a topology needs GPUs "
                                "(compute nodes)")

        def p(node: str) -> str:
            return node if node in shared else prefix + node

        self.compute += [p(g) for g in m.gpus]
        self.switches += [p(s) for s in m.switches if p(s) not in self.switches]
        for node, text in m.info.items():
            self.info[p(node)] = text
        for table in (m.links, m.nvlinks):
            for (u, v), bw in table.items():
                self.link(p(u), p(v), bw)

    def join_nics(self, prefix: str, m: Machine, nic_bw: Fraction | None, hosts: bool,
                  origin: str) -> None:
        """Every NIC of copy ``prefix`` linked to the network switch ``net`` at its speed
        (``nic_bw`` when given)."""
        if not m.nics:
            raise TopologyError(
                f"{origin}: {'host ' + prefix[:-1] if hosts else 'the box'} has "
                "no NIC, so the boxes cannot reach each other; import a file that lists "
                "the NICs (NCCL's dump does), or use one box")
        for nic, own in m.nics.items():
            speed = nic_bw if nic_bw is not None else own
            if speed is None:
                raise TopologyError(
                    f"{origin}: {m.info[nic]} gives no speed (a hand-written file lists NICs "
                    "as bare PCI devices): pass --nic-bw GBPS, each NIC's bandwidth each "
                    "way, e.g. 25 for 200 Gb/s InfiniBand HDR, 50 for 400 Gb/s NDR")
            self.link(prefix + nic, "net", speed)

    def drop(self, gone: set[str]) -> None:
        """Remove the switches ``gone`` and their links."""
        self.links = {k: v for k, v in self.links.items() if not gone & set(k)}
        self.switches = [s for s in self.switches if s not in gone]

    def topology(self, name: str, origin: str, strict: bool, solve: bool) -> Topology:
        """The Eulerian topology: every link both ways with the same capacity."""
        check_size(Size(len(self.compute), len(self.compute) + len(self.switches),
                        2 * len(self.links)), origin, solve=solve)
        directed = []
        for (u, v), bw in sorted(self.links.items()):
            directed.append((u, v, bw))
            directed.append((v, u, bw))
        try:
            return Topology(self.compute, directed, self.switches, name=name, unit="GB/s",
                            strict=strict, nvls_switches=[
                                s for s in self.switches if s in self.reducing])
        except TopologyError as exc:
            raise TopologyError(f"{origin}: the imported machine is not a usable topology: "
                                f"{exc}") from None


def _prune(switches: list[str], links: dict[Pair, Fraction]) -> int:
    """Drop switches joined to at most one other node (they carry no traffic), again
    and again; returns how many were dropped. ``switches`` and ``links`` change."""
    dropped = 0
    while True:
        degree: dict[str, set[str]] = {s: set() for s in switches}
        for u, v in links:
            if u in degree:
                degree[u].add(v)
            if v in degree:
                degree[v].add(u)
        dead = {s for s, nbrs in degree.items() if len(nbrs) <= 1}
        if not dead:
            return dropped
        dropped += len(dead)
        switches[:] = [s for s in switches if s not in dead]
        for key in [k for k in links if dead & set(k)]:
            del links[key]
