"""The matrix ``nvidia-smi topo -m`` prints.

It has one row and one column per GPU (``GPU0`` ...) and NIC (``NIC0`` ... or
``mlx5_0`` ... in older drivers), then ``CPU Affinity``, ``NUMA Affinity`` and
``GPU NUMA ID`` columns. A cell says how two devices are connected:

``NV#``  a bonded set of # NVLinks;
``PIX``  at most one PCIe bridge;  ``PXB`` several PCIe bridges, no host bridge;
``PHB``  a PCIe host bridge (the CPU);  ``NODE`` host bridges of one NUMA node;
``SYS``  the SMP interconnect between NUMA nodes (QPI/UPI, Infinity Fabric);
``X``    the device itself.

The matrix gives no speed, and where two GPUs share NVLinks it hides their PCIe
path. collcert models it (docs/importing.md): GPUs are compute nodes; NVLinks
join the GPUs directly, or, when a GPU shows more NVLinks to its peers than any
GPU has (18), through one NVSwitch; devices of one NUMA node hang from a CPU
node, devices joined by PIX/PXB from one PCIe switch below it; CPUs are joined
pairwise. Speeds are the documented assumptions of :mod:`.speeds`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from fractions import Fraction

from collcert.reference.model import TopologyError

from . import speeds as sp
from .machine import Machine

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_NV = re.compile(r"^NV(\d{1,3})$")
RELATIONS = ("X", "SYS", "NODE", "PHB", "PXB", "PIX")
_OLD = {"SOC": "SYS", "CPU": "PHB"}  # names of drivers before 2017
MAX_DEVICES = 1024


@dataclass
class Matrix:
    origin: str
    labels: list[str]
    cells: list[list[str]]
    numa: list[int | None]
    nic_names: dict[str, str] = field(default_factory=dict)

    def is_gpu(self, i: int) -> bool:
        return self.labels[i].startswith("GPU")

    @property
    def gpus(self) -> list[int]:
        return [i for i in range(len(self.labels)) if self.is_gpu(i)]

    def nvlinks(self) -> dict[tuple[int, int], int]:
        """NVLink counts between GPU positions i < j (indices into :attr:`gpus`)."""
        gpus = self.gpus
        out: dict[tuple[int, int], int] = {}
        for a, i in enumerate(gpus):
            for b, j in enumerate(gpus):
                m = _NV.match(self.cells[i][j])
                if a < b and m:
                    out[(a, b)] = int(m.group(1))
        return out


def looks_like(text: str) -> bool:
    """Whether ``text`` is probably an ``nvidia-smi topo -m`` matrix."""
    for line in _ANSI.sub("", text).splitlines()[:50]:
        tokens = line.split()
        if tokens[:1] == ["GPU0"] and len(tokens) > 1 and tokens[1] in ("X", "GPU1", "CPU"):
            return True
    return False


def parse(text: str, origin: str) -> Matrix:
    lines = _ANSI.sub("", text.removeprefix("\ufeff")).splitlines()
    header_at = next((i for i, line in enumerate(lines)
                      if line.split()[:1] == ["GPU0"] and not _is_row(line)), None)
    if header_at is None:
        raise TopologyError(f"{origin}: no header line starting with GPU0: not the output of "
                            "'nvidia-smi topo -m' (run it on the machine and save what it prints)")
    labels: list[str] = []
    for token in lines[header_at].split():
        if token in ("CPU", "NUMA", "GPU", "Affinity", "ID"):
            break
        labels.append(token)
    if len(labels) > MAX_DEVICES:
        raise TopologyError(f"{origin}: line {header_at + 1}: {len(labels)} devices; collcert "
                            f"reads matrices of at most {MAX_DEVICES}")
    if len(set(labels)) != len(labels):
        raise TopologyError(f"{origin}: line {header_at + 1}: a device appears twice in the "
                            "header")
    index = {label: i for i, label in enumerate(labels)}
    cells: list[list[str] | None] = [None] * len(labels)
    numa: list[int | None] = [None] * len(labels)
    nic_names: dict[str, str] = {}
    for no, line in enumerate(lines[header_at + 1:], start=header_at + 2):
        tokens = line.split()
        if not tokens:
            continue
        m = re.match(r"^\s*(NIC\d+)\s*:\s*(\S+)", line)
        if m:
            nic_names[m.group(1)] = m.group(2)
            continue
        if tokens[0] not in index:
            if _is_row(line) and re.match(r"^(GPU|NIC|mlx)\w*$", tokens[0]):
                raise TopologyError(f"{origin}: line {no}: a row for {tokens[0]}, which the "
                                    f"header (line {header_at + 1}) does not name; give the "
                                    "matrix as nvidia-smi prints it")
            continue  # the legend and other text
        i = index[tokens[0]]
        if cells[i] is not None:
            raise TopologyError(f"{origin}: line {no}: a second row for {tokens[0]}")
        row = tokens[1:1 + len(labels)]
        if len(row) < len(labels):
            raise TopologyError(f"{origin}: line {no}: the row of {tokens[0]} has {len(row)} "
                                f"cells, the header names {len(labels)} devices")
        for j, cell in enumerate(row):
            cell = _OLD.get(cell, cell)
            row[j] = cell
            if cell not in RELATIONS and not _NV.match(cell):
                raise TopologyError(
                    f"{origin}: line {no}: {tokens[0]} / {labels[j]}: {cell[:20]!r} is not a "
                    f"connection nvidia-smi prints ({', '.join(RELATIONS)}, NV#)")
            nv = _NV.match(cell)
            if nv and not 1 <= int(nv.group(1)) <= sp.MAX_NVLINKS_PER_GPU:
                raise TopologyError(
                    f"{origin}: line {no}: {tokens[0]} / {labels[j]}: {cell!r}: nvidia-smi "
                    f"shows 1 to {sp.MAX_NVLINKS_PER_GPU} bonded NVLinks (no GPU has more)")
            if (cell == "X") != (i == j):
                raise TopologyError(f"{origin}: line {no}: {tokens[0]} / {labels[j]}: "
                                    + ("'X' (self) off the diagonal" if cell == "X" else
                                       f"{cell!r} on the diagonal, where 'X' belongs"))
        extra = tokens[1 + len(labels):]
        if len(extra) >= 2 and re.match(r"^\d{1,4}$", extra[1]):
            numa[i] = int(extra[1])
        cells[i] = row
    missing = [labels[i] for i, row in enumerate(cells) if row is None]
    if missing:
        raise TopologyError(f"{origin}: no row for {', '.join(missing)}, which the header names")
    full = [row for row in cells if row is not None]
    for i in range(len(labels)):
        for j in range(i):
            if full[i][j] != full[j][i]:
                raise TopologyError(
                    f"{origin}: {labels[i]} / {labels[j]} is {full[i][j]!r} but {labels[j]} / "
                    f"{labels[i]} is {full[j][i]!r}; nvidia-smi prints a symmetric matrix")
    if not any(label.startswith("GPU") for label in labels):
        raise TopologyError(f"{origin}: the matrix names no GPU")
    return Matrix(origin, labels, full, numa, nic_names)


def _is_row(line: str) -> bool:
    tokens = line.split()
    return len(tokens) > 1 and (tokens[1] == "X" or tokens[1] in RELATIONS
                                or bool(_NV.match(tokens[1])))


def nvlink_plan(counts: dict[tuple[int, int], int], n: int) -> tuple[str, dict[int, int]]:
    """``("switch", {gpu: links to the NVSwitch})`` when some GPU shows more NVLinks to
    its peers than any GPU has (they must go through NVSwitches), else
    ``("direct", {})``."""
    total = [0] * n
    most = [0] * n
    for (a, b), c in counts.items():
        for g in (a, b):
            total[g] += c
            most[g] = max(most[g], c)
    if any(t > sp.MAX_NVLINKS_PER_GPU for t in total):
        return "switch", {g: most[g] for g in range(n) if most[g]}
    return "direct", {}


def add_nvlinks(machine: Machine, gpus: list[str], counts: dict[tuple[int, int], int],
                bw_of: dict[str, Fraction], notes: list[str], origin: str) -> None:
    """The NVLinks ``counts`` (between positions of ``gpus``) added to ``machine``."""
    kind, per_gpu = nvlink_plan(counts, len(gpus))
    if kind == "switch":
        machine.add_switch("nvswitch", "the NVSwitch fabric (inferred from the NV# entries)")
        machine.nvlink_switches.add("nvswitch")
        for g, c in sorted(per_gpu.items()):
            machine.link(gpus[g], "nvswitch", c * bw_of[gpus[g]], nvlink=True)
        notes.append(f"{origin}: a GPU shows more NVLinks to its peers than any GPU has "
                     f"({sp.MAX_NVLINKS_PER_GPU}): every GPU reaches one NVSwitch with the "
                     "NV# count it shows (its largest)")
    else:
        for (a, b), c in sorted(counts.items()):
            bw = min(bw_of[gpus[a]], bw_of[gpus[b]])
            machine.link(gpus[a], gpus[b], c * bw, nvlink=True)
        if counts:
            notes.append(f"{origin}: NV# entries taken as direct GPU-to-GPU NVLinks")


def to_machine(mx: Matrix, *, speeds: str, nvlink_bw: Fraction | None,
               notes: list[str]) -> Machine:
    """The machine the matrix shows: a CPU per NUMA node, the GPUs and NICs below it
    (through a PCIe switch where PIX/PXB say they share one), and the NVLinks; every
    speed assumed is appended to ``notes``."""
    m = Machine(mx.origin)
    name = {}
    k = 0
    for i, label in enumerate(mx.labels):
        if mx.is_gpu(i):
            name[i] = f"gpu{label[3:]}" if label[3:].isdigit() else f"gpu{i}"
        else:
            name[i] = f"nic{k}"
            k += 1
    cpu_of = _add_cpus(m, mx, notes)
    for i in range(len(mx.labels)):
        if mx.is_gpu(i):
            m.add_gpu(name[i], f"{mx.labels[i]} of the matrix")
        else:
            label = mx.nic_names.get(mx.labels[i], mx.labels[i])
            m.add_switch(name[i], f"NIC {label} (speed not in the matrix)")
            m.nics[name[i]] = None
    _add_pcie(m, mx, name, cpu_of, speeds, notes)
    gpus = [name[i] for i in mx.gpus]
    if nvlink_bw is not None:
        bw = nvlink_bw
        notes.append(f"NVLink: {sp.gb(bw)} per link each way (--nvlink-bw)")
    else:
        bw, text = sp.nvlink(None, speeds)
        if mx.nvlinks():
            notes.append(text)
    add_nvlinks(m, gpus, mx.nvlinks(), {g: bw for g in gpus}, notes, mx.origin)
    return m


class _Sets:
    """Disjoint sets of the matrix's devices, by position (union-find)."""

    def __init__(self, n: int) -> None:
        self.parent = list(range(n))

    def find(self, x: int) -> int:
        while self.parent[x] != x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x

    def union(self, a: int, b: int) -> None:
        self.parent[self.find(a)] = self.find(b)


def _numa_sets(mx: Matrix) -> _Sets:
    """Devices of one NUMA node: those joined by anything but SYS share one; NUMA
    Affinity merges too."""
    n = len(mx.labels)
    sets = _Sets(n)
    for i in range(n):
        for j in range(i):
            if mx.cells[i][j] in ("NODE", "PHB", "PXB", "PIX"):
                sets.union(i, j)
    for i in range(n):
        for j in range(i):
            if _NV.match(mx.cells[i][j]) and (mx.numa[i] is None or mx.numa[j] is None):
                sets.union(i, j)  # NVLink hides the PCIe relation: assume one NUMA node
    by_numa: dict[int, int] = {}
    for i, node in enumerate(mx.numa):
        if node is not None:
            if node in by_numa:
                sets.union(i, by_numa[node])
            by_numa[node] = i
    return sets


def _add_cpus(m: Machine, mx: Matrix, notes: list[str]) -> dict[int, str]:
    """A CPU node per NUMA node, the CPUs joined pairwise; returns each device's CPU."""
    n = len(mx.labels)
    sets = _numa_sets(mx)
    groups = sorted({sets.find(i) for i in range(n)})
    cpu_of: dict[int, str] = {}
    for c, root in enumerate(groups):
        numas = sorted({mx.numa[i] for i in range(n) if sets.find(i) == root
                        and mx.numa[i] is not None}, key=lambda x: x or 0)
        cpu = f"cpu{numas[0]}" if len(numas) == 1 and f"cpu{numas[0]}" not in m.info else f"cpu#{c}"
        m.add_switch(cpu, "CPU (NUMA node " + (str(numas[0]) if numas else "unknown") + ")")
        for i in range(n):
            if sets.find(i) == root:
                cpu_of[i] = cpu
    cpus = [s for s in m.switches]
    for a in range(len(cpus)):
        for b in range(a):
            m.link(cpus[b], cpus[a], sp.CPU_UNKNOWN)
    if len(cpus) > 1:
        notes.append(f"between CPUs: {sp.gb(sp.CPU_UNKNOWN)} each way (CPU kind unknown; "
                     "NCCL's figure for AMD, between Intel Skylake's 10 and Sapphire Rapids' 22)")
    return cpu_of


def _add_pcie(m: Machine, mx: Matrix, name: dict[int, str], cpu_of: dict[int, str],
              speeds: str, notes: list[str]) -> None:
    """The PCIe links: devices joined by PIX or PXB share one PCIe switch below their
    CPU, the others hang from their CPU directly."""
    n = len(mx.labels)
    sets = _Sets(n)
    for i in range(n):
        for j in range(i):
            if mx.cells[i][j] in ("PIX", "PXB"):
                sets.union(i, j)
    pcie = sp.pcie("16 GT/s", 16, speeds)
    members: dict[int, list[int]] = {}
    for i in range(n):
        members.setdefault(sets.find(i), []).append(i)
    sw = 0
    for _root, group in sorted(members.items()):
        if len(group) == 1:
            m.link(name[group[0]], cpu_of[group[0]], pcie)
            continue
        s = f"pcisw{sw}"
        sw += 1
        m.add_switch(s, "PCIe switch (inferred from PIX/PXB entries: "
                     + ", ".join(mx.labels[i] for i in group) + ")")
        m.link(s, cpu_of[group[0]], pcie)
        for i in group:
            m.link(name[i], s, pcie)
    notes.append(f"PCIe: every link {sp.gb(pcie)} each way (16 GT/s x16, PCIe Gen4, {speeds}; "
                 "the matrix gives no PCIe speed); devices joined by PIX or PXB share one "
                 "PCIe switch")
