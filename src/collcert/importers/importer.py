"""Reading a topology file of any format: the format detected, the options checked, the
machines read (:mod:`.nccl_xml`, :mod:`.nvidia_smi`), completed (a companion matrix,
``--nvswitch``) and assembled (:mod:`.machine`) into an :class:`Imported` that says
what was assumed and what the file lacks.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from collcert.reference.model import Topology, TopologyError, read_text

from . import nccl_xml, nvidia_smi
from . import speeds as sp
from .machine import Machine, assemble

FORMATS = ("json", "nccl-xml", "nvidia-smi")
MAX_BOXES = 4096


@dataclass
class Imported:
    """An imported topology with its provenance.

    ``notes``: every speed or structure that was assumed; ``lacks``: what the
    file does not say and how to supply it (empty when nothing is missing);
    ``nodes``: what each node is (bus id, line of the file)."""

    topology: Topology
    format: str
    origin: str
    notes: list[str] = field(default_factory=list)
    lacks: list[str] = field(default_factory=list)
    nodes: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The ``collcert-topology/1`` document, with ``source`` and ``description``
        saying where it comes from and what was assumed."""
        out = self.topology.to_json()
        doc: dict[str, Any] = {"format": out.pop("format")}
        if "name" in out:
            doc["name"] = out.pop("name")
        doc["source"] = f"collcert import of {self.origin} ({self.format})"
        text = "; ".join(self.notes + self.lacks)
        if self.nodes:
            text += (" | nodes: " if text else "nodes: ") + "; ".join(
                f"{k} = {v}" for k, v in self.nodes.items())
        if text:
            doc["description"] = text
        doc.update(out)
        return doc

    def report(self) -> str:
        t = self.topology
        lines = [f"{self.origin}: {self.format} -> {t.num_compute} GPUs, "
                 f"{len(t.switch_nodes)} switch nodes, {len(t.capacity)} directed links (GB/s)"]
        lines += [f"  assumed: {n}" for n in self.notes]
        lines += [f"  LACKS: {n}" for n in self.lacks]
        return "\n".join(lines)


def detect_format(text: str) -> str | None:
    """``"json"``, ``"nccl-xml"``, ``"nvidia-smi"`` from the content, or None."""
    head = text.lstrip("\ufeff \t\r\n")
    if head[:1] in ("{", "["):
        return "json"
    if head[:1] == "<":
        return "nccl-xml"
    if nvidia_smi.looks_like(text):
        return "nvidia-smi"
    return None


def _positive(value: object, what: str) -> Fraction | None:
    if value is None:
        return None
    from collcert.reference.model import parse_number

    try:
        x = parse_number(value)
    except ValueError as exc:
        raise TopologyError(f"{what}: {exc}") from None
    if x <= 0:
        raise TopologyError(f"{what} must be positive (GB/s each way), got {value}")
    return x


def import_topology(source: str | os.PathLike[str], fmt: str | None = None, *,
                    speeds: str = "nominal", nvlink_bw: object = None, nvswitch: object = None,
                    nvidia_smi_file: str | os.PathLike[str] | None = None,
                    nic_bw: object = None, boxes: int = 1, strict: bool = True,
                    solve: bool = False) -> Imported:
    """Read the topology file ``source`` (see :func:`import_text` for the options)."""
    path = os.fspath(source)
    text = read_text(path, path, what="a topology (JSON, NCCL XML or nvidia-smi topo -m)")
    return import_text(text, path, fmt, speeds=speeds, nvlink_bw=nvlink_bw, nvswitch=nvswitch,
                       nvidia_smi_file=nvidia_smi_file, nic_bw=nic_bw, boxes=boxes,
                       strict=strict, solve=solve)


def import_text(text: str, origin: str, fmt: str | None = None, *, speeds: str = "nominal",
                nvlink_bw: object = None, nvswitch: object = None,
                nvidia_smi_file: str | os.PathLike[str] | None = None, nic_bw: object = None,
                boxes: int = 1, strict: bool = True, solve: bool = False) -> Imported:
    """The topology in ``text`` (read from ``origin``).

    ``fmt``: one of :data:`FORMATS`, else detected. ``speeds``: ``"nominal"`` or
    ``"nccl"`` (:mod:`.speeds`). ``nvlink_bw``: GB/s per NVLink each way, instead of
    the figure of the GPU's generation. ``nvswitch``: GB/s each way between every
    GPU and one NVSwitch, for files without NVLink entries. ``nvidia_smi_file``: a
    companion ``nvidia-smi topo -m`` matrix whose NV# entries give the NVLinks of an
    XML file (GPUs matched in PCI bus-id order). ``nic_bw``: GB/s each way of every
    NIC. ``boxes``: that many copies of the machine, NICs joined by one network
    switch. ``strict``/``solve``: as :meth:`Topology.from_json`.
    """
    _check_choices(fmt, speeds, boxes)
    text = text.removeprefix("\ufeff")  # a byte-order mark (files saved by Windows editors)
    found = detect_format(text)
    fmt = fmt or found
    if fmt is None:
        start = text.lstrip()[:30]
        raise TopologyError(
            f"{origin}: not a topology collcert reads (it starts with {start!r}): give a "
            "collcert-topology/1 JSON file (docs/topology.md), NCCL's topology XML "
            "(NCCL_TOPO_DUMP_FILE) or the output of 'nvidia-smi topo -m', or say which with "
            "--from " + "|".join(FORMATS))
    if fmt == "json":
        options = {"nvlink_bw": nvlink_bw, "nvswitch": nvswitch,
                   "nvidia_smi_file": nvidia_smi_file, "nic_bw": nic_bw,
                   "speeds": speeds if speeds != "nominal" else None,
                   "boxes": boxes if boxes != 1 else None}
        given = [k for k, v in options.items() if v is not None]
        if given:
            raise TopologyError(f"{origin}: {', '.join(given)} apply to NCCL XML and "
                                "nvidia-smi files, not to a collcert-topology/1 JSON file")
        topo = Topology.from_json(text, solve=solve, strict=strict)
        return Imported(topo, "json", origin)
    link_bw = _positive(nvlink_bw, "--nvlink-bw")
    switch_bw = _positive(nvswitch, "--nvswitch")
    notes: list[str] = []
    read = _read_machines(text, origin, fmt, found, speeds, link_bw,
                          nvidia_smi_file is not None, notes)
    if nvidia_smi_file is not None:
        _companion(read.machines, os.fspath(nvidia_smi_file), speeds, link_bw, notes)
        read.had_nvlinks = True
    if switch_bw is not None:
        _add_nvswitch(read, switch_bw, origin, notes)
    lacks = _missing_nvlinks(read, fmt, origin, notes)
    name = os.path.basename(origin) if origin not in ("stdin", "topology") else origin
    built = assemble(read.machines, name=f"{read.label} {name}", boxes=boxes,
                     nic_bw=_positive(nic_bw, "--nic-bw"), strict=strict, solve=solve)
    return Imported(built.topology, fmt, origin, notes + built.notes, lacks, built.info)


def _check_choices(fmt: str | None, speeds: str, boxes: int) -> None:
    """Refuse an unknown format or speed table, and a number of boxes out of range."""
    if fmt is not None and fmt not in FORMATS:
        raise TopologyError(f"unknown topology format {fmt!r}: choose one of "
                            f"{', '.join(FORMATS)}")
    if speeds not in sp.SPEEDS:
        raise TopologyError(f"unknown speeds {speeds!r}: choose one of {', '.join(sp.SPEEDS)}")
    if not isinstance(boxes, int) or isinstance(boxes, bool) or not 1 <= boxes <= MAX_BOXES:
        raise TopologyError(f"boxes must be an integer from 1 to {MAX_BOXES}, got {boxes!r}")


@dataclass
class _Read:
    """The machines of an NCCL XML file or an nvidia-smi matrix, before assembly.

    ``had_nvlinks``: the file (or what was added to it) has NVLinks; ``bare``: the
    GPUs an NCCL file lists as bare PCI devices (a hand-written file); ``label``: the
    format, for the topology's name."""

    machines: list[Machine]
    had_nvlinks: bool
    bare: int
    label: str


def _read_machines(text: str, origin: str, fmt: str, found: str | None, speeds: str,
                   link_bw: Fraction | None, companion: bool, notes: list[str]) -> _Read:
    """The machines of ``text`` in format ``fmt`` (``found``: the format detected), its
    assumptions appended to ``notes``."""
    if fmt == "nccl-xml":
        if found not in (None, "nccl-xml"):
            raise TopologyError(f"{origin}: --from nccl-xml, but the file is not XML "
                                f"(it looks like {found})")
        machines, xml_notes, had_nvlinks, bare = nccl_xml.read(
            text, origin, nccl_xml.Options(speeds=speeds, nvlink_bw=link_bw))
        notes += xml_notes
        return _Read(machines, had_nvlinks, bare, "NCCL topology")
    if companion:
        raise TopologyError("--nvidia-smi gives a companion matrix to an NCCL XML file; "
                            f"{origin} already is a matrix")
    mx = nvidia_smi.parse(text, origin)
    machine = nvidia_smi.to_machine(mx, speeds=speeds, nvlink_bw=link_bw, notes=notes)
    # the matrix shows NV# wherever the GPUs have NVLinks: no bare GPUs
    return _Read([machine], bool(mx.nvlinks()), 0, "nvidia-smi topo -m")


def _add_nvswitch(read: _Read, switch_bw: Fraction, origin: str, notes: list[str]) -> None:
    """--nvswitch: every GPU of a file without NVLinks reaches one NVSwitch."""
    if read.had_nvlinks:
        raise TopologyError(f"{origin}: --nvswitch adds the NVLinks of a file that has "
                            "none, and this one has NVLink entries; drop --nvswitch")
    for m in read.machines:
        m.add_switch("nvswitch", "the NVSwitch fabric (--nvswitch)")
        m.nvlink_switches.add("nvswitch")
        for g in m.gpus:
            m.link(g, "nvswitch", switch_bw, nvlink=True)
    notes.append(f"every GPU reaches one NVSwitch at {sp.gb(switch_bw)} each way "
                 "(--nvswitch)")
    read.had_nvlinks = True


def _missing_nvlinks(read: _Read, fmt: str, origin: str, notes: list[str]) -> list[str]:
    """GPUs joined by PCIe alone: a note when the file says so, else what it lacks (a
    hand-written file that lists GPUs as bare PCI devices) and how to supply it."""
    gpus = sum(len(m.gpus) for m in read.machines)
    if read.had_nvlinks or gpus <= 1:
        return []
    if not read.bare:
        notes.append("no NVLink entries: the GPUs are joined by PCIe alone (NCCL found no "
                     "NVLink on this machine)" if fmt == "nccl-xml" else
                     "no NV# entries: the GPUs are joined by PCIe alone")
        return []
    return [f"{origin} has no NVLink entries (a cloud provider's hand-written NCCL file lists "
            "GPUs as bare PCI devices), so its GPUs are joined by PCIe alone. If they have "
            "NVLink, supply it: --nvidia-smi FILE (what 'nvidia-smi topo -m' prints on the "
            "machine) or --nvswitch GBPS (each GPU's NVSwitch bandwidth each way, e.g. 300 "
            "for A100 SXM, 450 for H100 SXM); see docs/importing.md"]


def _companion(machines: list[Machine], path: str, speeds: str, link_bw: Fraction | None,
               notes: list[str]) -> None:
    """Replace the NVLinks of the (single) machine by those of the matrix at ``path``."""
    if len(machines) != 1:
        raise TopologyError("--nvidia-smi describes one machine; the XML file has "
                            f"{len(machines)} hosts")
    m = machines[0]
    text = read_text(path, path, what="the output of 'nvidia-smi topo -m'")
    mx = nvidia_smi.parse(text, path)
    gpus = m.gpus_by_bus()
    if len(mx.gpus) != len(gpus):
        raise TopologyError(f"{path} shows {len(mx.gpus)} GPUs but the XML file has "
                            f"{len(gpus)}; give the matrix of the same machine")
    if m.nvlinks:
        notes.append(f"the XML file's NVLink entries replaced by those of {path}")
    m.nvlinks.clear()
    for s in m.nvlink_switches:
        m.switches.remove(s)
        del m.info[s]
    m.nvlink_switches.clear()
    bw_of: dict[str, Fraction] = {}
    for g in gpus:
        if link_bw is not None:
            bw_of[g] = link_bw
        else:
            bw_of[g], text = sp.nvlink(m.gpu_sm.get(g), speeds)
            notes.append(text)
    if link_bw is not None:
        notes.append(f"NVLink: {sp.gb(link_bw)} per link each way (--nvlink-bw)")
    notes.append(f"NVLinks from {path}: its GPU i is the XML file's i-th GPU in PCI bus-id "
                 "order (the order nvidia-smi numbers GPUs)")
    nvidia_smi.add_nvlinks(m, gpus, mx.nvlinks(), bw_of, notes, path)
    seen: set[str] = set()
    notes[:] = [n for n in notes if not (n in seen or seen.add(n))]  # type: ignore[func-returns-value]
