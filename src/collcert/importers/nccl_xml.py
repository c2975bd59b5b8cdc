"""NCCL's topology XML: the file ``NCCL_TOPO_DUMP_FILE`` writes and ``NCCL_TOPO_FILE`` reads.

The format is NCCL's own (``src/graph/xml.cc`` writes it, ``src/graph/topo.cc``
reads it): ``<system>`` holds one ``<cpu>`` per NUMA node (``numaid``, ``arch``,
``vendor``, ``familyid``, ``modelid``, ``host_hash`` when several hosts are
merged); under a CPU, ``<pci>`` elements form the PCIe tree (``busid``,
``class``, ``link_speed``, ``link_width``); a PCI device holding a ``<gpu>``
(``dev``, ``sm``, ``rank``) is a GPU, one holding a ``<nic>`` (with ``<net>``
ports: ``speed`` in Mb/s) is a NIC; a GPU's ``<nvlink target= count= tclass=>``
children are its NVLinks (to another GPU, class 0x03..., to an NVSwitch,
0x068000, or to the CPU, 0x068001), ``<c2c count= bw=>`` its chip-to-chip link
to the CPU (bw in MB/s per link); ``<pcilink target=>`` joins two halves of a
PCIe switch. Cloud providers' hand-written files use the same elements but list
GPUs and NICs as bare PCI devices (class 0x03... and 0x02...), without NVLinks.

The model follows NCCL's: GPUs are compute nodes; CPUs, PCIe switches, NICs and
the NVSwitch fabric are switch nodes; a link's bandwidth comes from the file or,
where the file gives none, from :mod:`.speeds` (every assumption is reported).
Parsing goes through the auditor's bounded XML reader (``collcert.certify.model.xmlsafe``:
no DTDs or entities, capped size, elements, depth and attributes).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

from collcert.certify.model import Element, InputError, parse
from collcert.reference.model import TopologyError

from . import speeds as sp
from .machine import Machine

MAX_ELEMENTS = 100_000  # NCCL itself keeps at most a few thousand (NCCL_TOPO_XML_MAX_NODES)
NVSWITCH_CLASS = "0x068000"
CPU_CLASS = "0x068001"
BRIDGE_CLASSES = ("0x060400", "0x080100")
SENTINEL_BUS = "fffffff:ffff:ff"  # NCCL's NVLink target when the peer is invisible
_INT = re.compile(r"^[+-]?\d{1,9}$")


@dataclass
class Options:
    speeds: str = "nominal"
    nvlink_bw: Fraction | None = None


@dataclass
class _Gpu:
    el: Element
    host: int
    bus: int
    bus_text: str
    rank: int | None
    dev: int | None
    sm: int | None


class _Reader:
    def __init__(self, origin: str, opts: Options) -> None:
        self.origin = origin
        self.opts = opts
        self.notes: list[str] = []
        self._seen_notes: set[str] = set()

    def note(self, text: str) -> None:
        if text not in self._seen_notes:
            self._seen_notes.add(text)
            self.notes.append(text)

    def fail(self, el: Element, what: str) -> TopologyError:
        return TopologyError(f"{self.origin}: line {el.line}: <{el.tag}> {what}")

    def int_attr(self, el: Element, key: str, *, least: int | None = None,
                 required: bool = False) -> int | None:
        raw = el.attrs.get(key)
        if raw is None or raw.strip() == "":
            if required:
                raise self.fail(el, f"has no {key}=; NCCL's files give it (an integer)")
            return None
        text = raw.strip()
        try:
            value = int(text, 16) if text.lower().startswith("0x") and len(text) <= 18 else None
        except ValueError:
            value = None
        if value is None:
            if not _INT.match(text):
                raise self.fail(el, f"has {key}={raw[:30]!r}, which is not an integer")
            value = int(text)
        if least is not None and value < least:
            raise self.fail(el, f"has {key}={value}; it must be at least {least}")
        return value

    def bus(self, el: Element, text: str | None, key: str = "busid") -> int:
        """A PCI bus id as NCCL compares them (busIdToInt64: its hex digits as a number)."""
        if not text:
            raise self.fail(el, f"has no {key}=; give the PCI bus id, e.g. 0000:07:00.0")
        digits = text.strip().lower().replace(":", "").replace(".", "")
        if not digits or len(digits) > 16 or any(c not in "0123456789abcdef" for c in digits):
            raise self.fail(el, f"has {key}={text[:40]!r}, which is not a PCI bus id such as "
                            "0000:07:00.0")
        return int(digits, 16)

    def pci_bw(self, el: Element) -> Fraction:
        width = self.int_attr(el, "link_width", least=0)
        if not width:
            self.note("PCIe links with no link_width (or 0): 16 lanes, as NCCL assumes")
            width = 16
        if width > 64:
            raise self.fail(el, f"has link_width={width}; a PCIe link has at most 32 lanes")
        speed = (el.attrs.get("link_speed") or "").strip()
        if not speed:
            self.note(f"PCIe links with no link_speed: {sp.PCI_FALLBACK} (PCIe Gen3), as NCCL "
                      "assumes")
            speed = sp.PCI_FALLBACK
        elif not sp.pci_known(speed):
            raise self.fail(el, f"has link_speed={speed[:30]!r}, which NCCL does not know; "
                            f"use one of {', '.join(repr(s) for s in sp.PCI_SPEED_NAMES)}")
        elif not sp.pci_exact(speed):
            self.note(f"PCIe link_speed {speed!r} (line {el.line}) is not a name in NCCL's "
                      f"table, so NCCL (and --speeds nccl) takes its fallback {sp.PCI_FALLBACK}; "
                      "nominal speeds take " + (sp.PCI_FALLBACK if speed.lower() in
                                                sp.PCI_UNKNOWN else "the rate it gives"))
        bw = sp.pcie(speed, width, self.opts.speeds)
        self.note(f"PCIe {speed} x{width}: {sp.gb(bw)} each way ({self.opts.speeds})")
        return bw


def read(text: str, origin: str, opts: Options) -> tuple[list[Machine], list[str], bool, int]:
    """The hosts of an NCCL topology file, the notes on what was assumed, whether the
    file had any NVLink entry, and how many GPUs it lists as bare PCI devices (a
    hand-written file, whose NVLinks NCCL would detect at run time)."""
    try:
        root = parse(text, origin, max_elements=MAX_ELEMENTS)
    except InputError as exc:
        raise TopologyError(str(exc)) from None
    r = _Reader(origin, opts)
    if root.tag == "graphs":
        raise TopologyError(f"{origin}: this is an NCCL graph file (<graphs>: the rings and "
                            "trees NCCL chose, NCCL_GRAPH_DUMP_FILE), not a topology; give the "
                            "file NCCL_TOPO_DUMP_FILE writes (<system>)")
    if root.tag != "system":
        raise TopologyError(f"{origin}: line {root.line}: the root element is <{root.tag}>, "
                            "not <system>: not an NCCL topology file (NCCL_TOPO_DUMP_FILE)")
    cpus = [el for el in root.children if el.tag == "cpu"]
    if not cpus:
        raise r.fail(root, "holds no <cpu>: an NCCL topology lists its CPUs (NUMA nodes), "
                     "with the PCI devices under them")
    hosts: dict[str, int] = {}
    for el in cpus:
        hosts.setdefault(el.attrs.get("host_hash", "").strip().lower(), len(hosts))
    gpus = _find_gpus(r, cpus, hosts)
    names = _gpu_names(r, gpus)
    machines = [Machine(origin) for _ in hosts]
    builder = _Builder(r, machines, names)
    for el in cpus:
        builder.cpu(el, hosts[el.attrs.get("host_hash", "").strip().lower()])
    builder.nvlinks(multi_host=len(hosts) > 1)
    builder.pcilinks()
    if builder.virtual_gpus:
        r.note(f"{builder.virtual_gpus} GPUs listed as bare PCI devices (class 0x03..., no "
               "<gpu>): named in PCI bus-id order, generation unknown")
    return machines, r.notes, builder.nvlink_count > 0, builder.virtual_gpus


def _find_gpus(r: _Reader, cpus: list[Element], hosts: dict[str, int]) -> list[_Gpu]:
    found: list[_Gpu] = []

    def walk(el: Element, host: int) -> None:
        for child in el.children:
            if child.tag != "pci":
                continue
            gpu = next((g for g in child.children if g.tag == "gpu"), None)
            cls = (child.attrs.get("class") or "").strip().lower()
            if gpu is not None or (cls.startswith("0x03") and not
                                   any(c.tag == "pci" for c in child.children)):
                bus_text = (child.attrs.get("busid") or "").strip().lower()
                g = gpu if gpu is not None else child
                found.append(_Gpu(child, host, r.bus(child, bus_text), bus_text,
                                  r.int_attr(g, "rank", least=0) if gpu is not None else None,
                                  r.int_attr(g, "dev", least=0) if gpu is not None else None,
                                  r.int_attr(g, "sm", least=1) if gpu is not None else None))
            else:
                walk(child, host)

    for el in cpus:
        walk(el, hosts[el.attrs.get("host_hash", "").strip().lower()])
    seen: dict[tuple[int, int], _Gpu] = {}
    for g in found:
        if (g.host, g.bus) in seen:
            raise r.fail(g.el, f"repeats the GPU at PCI {g.bus_text} (line "
                         f"{seen[(g.host, g.bus)].el.line}); each device appears once")
        seen[(g.host, g.bus)] = g
    return found


def _gpu_names(r: _Reader, gpus: list[_Gpu]) -> dict[tuple[int, int], str]:
    """gpu{rank} when every GPU has a distinct rank (NCCL's dumps), else gpu{i} in
    (host, PCI bus id) order, the order nvidia-smi numbers GPUs."""
    ranks = [g.rank for g in gpus]
    if gpus and all(x is not None for x in ranks) and len(set(ranks)) == len(ranks):
        ordered = sorted(gpus, key=lambda g: g.rank or 0)
        return {(g.host, g.bus): f"gpu{g.rank}" for g in ordered}
    if any(x is not None for x in ranks):
        r.note("GPU ranks missing or repeated: GPUs numbered in PCI bus-id order")
    ordered = sorted(gpus, key=lambda g: (g.host, g.bus))
    return {(g.host, g.bus): f"gpu{i}" for i, g in enumerate(ordered)}


class _Builder:
    def __init__(self, r: _Reader, machines: list[Machine],
                 names: dict[tuple[int, int], str]) -> None:
        self.r = r
        self.machines = machines
        self.names = names
        self.gpu_cpu: dict[tuple[int, str], str] = {}
        self.gpu_sm: dict[tuple[int, str], int | None] = {}
        self.gpu_els: list[tuple[int, str, Element]] = []
        self.bridges: dict[tuple[int, int], str] = {}
        self.pcilink_els: list[tuple[int, str, Element]] = []
        self.nic_count = [0] * len(machines)
        self.virtual_gpus = 0
        self.nvlink_count = 0
        self.skipped = 0

    def cpu(self, el: Element, host: int) -> None:
        r, m = self.r, self.machines[host]
        numa = r.int_attr(el, "numaid", least=-1)
        if numa is None:
            raise r.fail(el, "has no numaid=; NCCL numbers its CPUs (NUMA nodes) 0, 1, ...")
        name = f"cpu{numa}" if numa >= 0 else f"cpu{len([s for s in m.switches if s.startswith('cpu')])}"
        fam = r.int_attr(el, "familyid")
        model = r.int_attr(el, "modelid")
        kind = sp.cpu_kind(el.attrs.get("arch"), el.attrs.get("vendor"), fam, model)
        m.add_switch(name, f"CPU (NUMA node {numa}, line {el.line})")
        bw = sp.CPU_BW[kind] if kind else sp.CPU_UNKNOWN
        if kind is None:
            r.note(f"CPUs of unknown kind (arch={el.attrs.get('arch')!r}, vendor="
                   f"{el.attrs.get('vendor')!r}): {sp.gb(bw)} each way between CPUs")
        else:
            r.note(f"between {kind} CPUs: {sp.gb(bw)} each way (NCCL's figure)")
        for other in [s for s in m.switches if s.startswith("cpu") and s != name]:
            if (other, name) not in m.links and (name, other) not in m.links:
                m.link(other, name, bw)
        for child in el.children:
            if child.tag == "pci":
                self.pci(child, host, name, name)
            elif child.tag == "nic":
                self.nic(child, host, name, sp.LOCAL, child.line)

    def nic(self, el: Element | None, host: int, parent: str, bw: Fraction, line: int,
            bus: str = "") -> None:
        m = self.machines[host]
        name = f"nic{self.nic_count[host]}"
        self.nic_count[host] += 1
        speed: Fraction | None = None
        ports: list[str] = []
        if el is not None:
            speed = Fraction(0)
            for net in (n for n in el.children if n.tag == "net"):
                mbps = self.r.int_attr(net, "speed")
                if mbps is None or mbps <= 0:
                    self.r.note("NIC ports with no speed (or -1): 10000 Mb/s = 5/4 GB/s, as "
                                "NCCL assumes")
                    mbps = 10000
                speed += sp.net_speed(mbps)
                self.r.note(f"NIC ports of {mbps} Mb/s: {sp.gb(sp.net_speed(mbps))} each way "
                            "(the file's speed)")
                ports.append(net.attrs.get("name", "?"))
            if not ports:
                speed = None
        where = f" at PCI {bus}" if bus else ""
        m.add_switch(name, f"NIC {', '.join(ports) or '(no port listed)'}{where} (line {line})"
                     if ports else f"NIC{where} (line {line}; no <nic>/<net>: speed unknown)")
        m.nics[name] = speed
        m.link(name, parent, bw)

    def pci(self, el: Element, host: int, parent: str, cpu: str) -> None:
        r, m = self.r, self.machines[host]
        cls = (el.attrs.get("class") or "").strip().lower()
        bus_text = (el.attrs.get("busid") or "").strip().lower()
        sub = {c.tag for c in el.children}
        if "gpu" in sub or (cls.startswith("0x03") and "pci" not in sub):
            bus = r.bus(el, bus_text)
            name = self.names[(host, bus)]
            gpu = next((g for g in el.children if g.tag == "gpu"), None)
            sm = r.int_attr(gpu, "sm", least=1) if gpu is not None else None
            if gpu is None:
                self.virtual_gpus += 1
            what = f"GPU at PCI {bus_text} (line {el.line}" + (f", sm {sm})" if sm else ")")
            m.add_gpu(name, what, sm=sm, bus=bus_text)
            m.link(name, parent, r.pci_bw(el))
            self.gpu_cpu[(host, name)] = cpu
            if gpu is not None:
                self.gpu_els.append((host, name, gpu))
        elif "nic" in sub or cls.startswith("0x02"):
            r.bus(el, bus_text)
            nic = next((c for c in el.children if c.tag == "nic"), None)
            self.nic(nic, host, parent, r.pci_bw(el), el.line, bus_text)
        elif cls in BRIDGE_CLASSES or (not cls and "pci" in sub):
            bus = r.bus(el, bus_text)
            if (host, bus) in self.bridges:
                raise r.fail(el, f"repeats the PCI switch {bus_text}; each device appears once")
            name = f"pcisw:{bus_text}"
            m.add_switch(name, f"PCIe switch {bus_text} (line {el.line})")
            self.bridges[(host, bus)] = name
            m.link(name, parent, r.pci_bw(el))
            for child in el.children:
                if child.tag == "pci":
                    self.pci(child, host, name, cpu)
                elif child.tag == "pcilink":
                    self.pcilink_els.append((host, name, child))
        else:
            self.skipped += 1  # storage, the NVSwitches' management function, ...

    def nvlinks(self, *, multi_host: bool) -> None:
        r = self.r
        by_bus = {(h, bus): name for (h, bus), name in self.names.items()}
        counts: dict[tuple[int, str, str], tuple[int, int]] = {}
        total: dict[tuple[int, str], int] = {}
        for host, gpu, el in self.gpu_els:
            m = self.machines[host]
            for link in el.children:
                if link.tag == "c2c":
                    n = r.int_attr(link, "count", least=1, required=True) or 0
                    mbs = r.int_attr(link, "bw", least=1, required=True) or 0
                    m.link(gpu, self.gpu_cpu[(host, gpu)], Fraction(n * mbs, 1000))
                    r.note("C2C links: count x bw (MB/s per link) from the file")
                    continue
                if link.tag != "nvlink":
                    continue
                self.nvlink_count += 1
                count = r.int_attr(link, "count", least=1, required=True) or 0
                target = (link.attrs.get("target") or "").strip().lower()
                tclass = (link.attrs.get("tclass") or "").strip().lower()
                peer = None
                if target and target != SENTINEL_BUS:
                    peer = by_bus.get((host, r.bus(link, target, "target")))
                if not tclass:
                    tclass = "0x0302" if peer else NVSWITCH_CLASS
                    r.note("NVLinks without tclass: a GPU target if the file has that GPU, "
                           "else an NVSwitch (as NCCL assumes)")
                if tclass.startswith("0x03"):
                    if peer == gpu:
                        raise r.fail(link, f"of {gpu} has target={target!r}, the GPU's own bus "
                                     "id; an NVLink joins two devices")
                    if peer is None:
                        r.note(f"NVLinks to GPUs not in the file ignored (e.g. {target} at "
                               f"line {link.line})")
                        continue
                    self._tally(total, host, gpu, link, count)
                    key = (host, gpu, peer)
                    old = counts.get(key, (0, link.line))
                    counts[key] = (old[0] + count, old[1])
                    continue
                self._tally(total, host, gpu, link, count)
                bw = self._nvlink_bw(m, gpu)
                if tclass == CPU_CLASS:
                    m.link(gpu, self.gpu_cpu[(host, gpu)], count * bw, nvlink=True)
                    continue
                if tclass != NVSWITCH_CLASS:
                    r.note(f"NVLink targets of class {tclass} taken as the NVSwitch (as NCCL "
                           "does)")
                if "nvswitch" not in m.info:
                    what = "the NVSwitch fabric (every NVLink to an NVSwitch)"
                    if multi_host:
                        what += ", shared by all hosts (a multi-node NVLink domain)"
                    m.add_switch("nvswitch", what)
                    m.nvlink_switches.add("nvswitch")
                m.link(gpu, "nvswitch", count * bw, nvlink=True)
        for (host, a, b), (n, line) in sorted(counts.items()):
            if a > b and (host, b, a) in counts:
                continue
            back = counts.get((host, b, a))
            if back is None:
                r.note(f"NVLinks listed on one side only (e.g. {a} -> {b}, line {line}): "
                       "modelled both ways")
            elif back[0] != n:
                r.note(f"NVLink counts that differ by direction ({a} -> {b}: {n}, line {line}; "
                       f"{b} -> {a}: {back[0]}, line {back[1]}): the smaller, both ways")
                n = min(n, back[0])
            m = self.machines[host]
            bw = min(self._nvlink_bw(m, a), self._nvlink_bw(m, b))
            m.link(a, b, n * bw, nvlink=True)

    def _tally(self, total: dict[tuple[int, str], int], host: int, gpu: str, link: Element,
               count: int) -> None:
        """Count the GPU's modelled NVLinks; more than any GPU has is a wrong count=."""
        total[(host, gpu)] = total.get((host, gpu), 0) + count
        if total[(host, gpu)] > sp.MAX_NVLINKS_PER_GPU:
            raise self.r.fail(link, f"brings the NVLinks of {gpu} to {total[(host, gpu)]}; no "
                              f"GPU has more than {sp.MAX_NVLINKS_PER_GPU} (NCCL's dump lists "
                              "at most that many): check the count= values")

    def _nvlink_bw(self, m: Machine, gpu: str) -> Fraction:
        if self.r.opts.nvlink_bw is not None:
            self.r.note(f"NVLink: {sp.gb(self.r.opts.nvlink_bw)} per link each way "
                        "(--nvlink-bw)")
            return self.r.opts.nvlink_bw
        bw, text = sp.nvlink(m.gpu_sm.get(gpu), self.r.opts.speeds)
        self.r.note(text)
        return bw

    def pcilinks(self) -> None:
        done: set[tuple[int, str, str]] = set()
        for host, name, el in self.pcilink_els:
            target = self.bridges.get((host, self.r.bus(el, el.attrs.get("target"), "target")))
            if target is None:
                self.r.note(f"<pcilink> to a device that is no PCI switch of the file ignored "
                            f"(line {el.line})")
                continue
            key = (host, *sorted((name, target)))
            if key not in done and target != name:
                done.add(key)  # type: ignore[arg-type]
                self.machines[host].link(name, target, sp.LOCAL)
                self.r.note(f"<pcilink> between the halves of a PCIe switch: {sp.gb(sp.LOCAL)} "
                            "(NCCL's LOC_BW)")
