"""Link speeds the importers assume where a file gives none (docs/importing.md).

Every figure is GB/s per direction, exact. Two tables:

* ``nominal`` (the default): the hardware's published signalling rates, the
  figures collcert's built-in platforms use (a DGX A100 GPU reaches its NVSwitch
  at 12 links x 25 = 300 GB/s, ``collcert.platforms.dgx_a100``);
* ``nccl``: the figures NCCL itself assigns when it reads the same file (its
  source, ``src/graph/topo.h`` and ``topo.cc``), lower than nominal because they
  estimate what a transfer achieves.

Only NVLink and PCIe differ between the two; NIC speeds are read from the file
(``speed`` in Mb/s), and for inter-CPU links and device-internal links both
tables use NCCL's figures, for which no other public figure exists.
"""

from __future__ import annotations

import re
from fractions import Fraction

SPEEDS = ("nominal", "nccl")

# NVLink, GB/s per link per direction, by CUDA compute capability (sm).
# nominal: NVLink 1 (P100) 20, NVLink 2 (V100) 25, NVLink 3 (A100) 25, the
# NVLink 3 bridge of GA10x cards (sm 86: 4 links, 56.25 GB/s each way) 14.0625,
# NVLink 4 (H100/H200) 25, NVLink 5 (B200/B300) 50.
# nccl: SM60_NVLINK_BW 18, SM70 20, SM80 20, SM86 12, SM90 20.6, SM100 40.1.
_NVLINK = {
    "nominal": ((100, Fraction(50)), (90, Fraction(25)), (86, Fraction(225, 16)),
                (80, Fraction(25)), (70, Fraction(25)), (60, Fraction(20))),
    "nccl": ((100, Fraction("40.1")), (90, Fraction("20.6")), (86, Fraction(12)),
             (80, Fraction(20)), (70, Fraction(20)), (60, Fraction(18))),
}
# A GPU whose generation is unknown (a hand-written file without <gpu sm=...>,
# an nvidia-smi matrix): the figure shared by NVLink 2, 3 and 4.
NVLINK_UNKNOWN = {"nominal": Fraction(25), "nccl": Fraction(20)}

# Most NVLinks any GPU has (H100, B200: 18): a GPU shown with more NVLinks to its
# peers than this reaches them through NVSwitches.
MAX_NVLINKS_PER_GPU = 18


def nvlink(sm: int | None, speeds: str) -> tuple[Fraction, str]:
    """Per-link per-direction NVLink bandwidth and the sentence saying so."""
    if sm is None:
        bw = NVLINK_UNKNOWN[speeds]
        return bw, (f"NVLink: {_gb(bw)} per link each way (GPU generation unknown; "
                    "--nvlink-bw to change)")
    table = dict(_NVLINK[speeds])
    gen = (100 if sm >= 100 else 90 if sm >= 90 else 86 if sm == 86 else 80 if sm >= 80
           else 70 if sm >= 70 else 60 if sm >= 60 else None)
    if gen is None:  # no NVLink before sm 60; NCCL then uses its sm 80 figure
        bw = table[80]
        return bw, (f"NVLink of sm {sm} GPUs: {_gb(bw)} per link each way ({speeds}; "
                    "NCCL's fallback for GPUs older than sm 60)")
    bw = table[gen]
    return bw, f"NVLink of sm {sm} GPUs: {_gb(bw)} per link each way ({speeds})"


# PCIe link_speed strings as NCCL writes and reads them (kvDictPciGen), with
# nominal GT/s and NCCL's per-lane figure in units of 100 Mb/s.
_PCI_GEN = {
    "2.5 GT/s": (Fraction(5, 2), 15), "5 GT/s": (Fraction(5), 30), "8 GT/s": (Fraction(8), 60),
    "16 GT/s": (Fraction(16), 120), "32 GT/s": (Fraction(32), 240),
    "2.5 GT/s PCIe": (Fraction(5, 2), 15), "5.0 GT/s PCIe": (Fraction(5), 30),
    "8.0 GT/s PCIe": (Fraction(8), 60), "16.0 GT/s PCIe": (Fraction(16), 120),
    "32.0 GT/s PCIe": (Fraction(32), 240), "64.0 GT/s PCIe": (Fraction(64), 480),
}
PCI_SPEED_NAMES = tuple(_PCI_GEN)
# NCCL's fallback for an empty or unknown link_speed: Gen3 (8 GT/s).
PCI_FALLBACK = "8 GT/s"


def _encoding(gts: Fraction) -> Fraction:
    """Line-code efficiency: 8b/10b up to 5 GT/s, 128b/130b for 8-32 GT/s, FLIT
    mode (242 payload bytes of 256) at 64 GT/s."""
    if gts <= 5:
        return Fraction(8, 10)
    if gts <= 32:
        return Fraction(128, 130)
    return Fraction(242, 256)


# What Linux's sysfs shows for a link of unknown speed (a VM's virtual bridge), and NCCL
# copies into its dump: NCCL then takes its fallback, as collcert does.
PCI_UNKNOWN = ("unknown", "unknown speed")
_GTS = re.compile(r"^(\d{1,2}(?:\.\d{1,2})?) GT/s(?: PCIe)?$")


def _nominal_gts(speed: str) -> Fraction | None:
    """The GT/s of a link_speed string: one of NCCL's names, another spelling of the same
    rate ('16.0 GT/s', which NCCL itself writes when NVML gives no generation), or the
    fallback for an unknown speed; None for anything else."""
    text = speed.strip()
    if text in _PCI_GEN:
        return _PCI_GEN[text][0]
    if text.lower() in PCI_UNKNOWN:
        return _PCI_GEN[PCI_FALLBACK][0]
    m = _GTS.match(text)
    if m and Fraction(m.group(1)) in {gts for gts, _ in _PCI_GEN.values()}:
        return Fraction(m.group(1))
    return None


def _nccl_lane(speed: str) -> int:
    """NCCL's per-lane figure (100 Mb/s units): kvConvertToInt takes the first name of
    kvDictPciGen that the string starts with, else the fallback 60 (Gen3)."""
    for name, (_, lane) in _PCI_GEN.items():
        if speed.startswith(name):
            return lane
    return _PCI_GEN[PCI_FALLBACK][1]


def pci_known(speed: str) -> bool:
    return _nominal_gts(speed) is not None


def pci_exact(speed: str) -> bool:
    """Whether NCCL's table names ``speed`` (else NCCL takes its Gen3 fallback)."""
    return any(speed.strip().startswith(name) for name in _PCI_GEN)


def pcie(speed: str, width: int, speeds: str) -> Fraction:
    """GB/s per direction of a PCIe link: ``width`` lanes at ``speed`` (a link_speed
    string, :func:`pci_known`). nominal: lanes x GT/s x encoding / 8; nccl: NCCL's
    ``width * speed / 80`` (topo.cc, ncclTopoAddPci), with NCCL's own reading of the
    string (an unknown one, even '16.0 GT/s', is Gen3 to NCCL)."""
    if speeds == "nccl":
        return Fraction(width * _nccl_lane(speed.strip()), 80)
    gts = _nominal_gts(speed)
    if gts is None:
        raise ValueError(f"unknown PCIe link_speed {speed!r}")
    return width * gts * _encoding(gts) / 8


# NCCL's inter-CPU ("SYS") bandwidths, GB/s (topo.h, ncclTopoGetInterCpuBw).
CPU_BW = {"power": Fraction(32), "arm": Fraction(6), "amd": Fraction(16),
          "intel-erp": Fraction(40), "intel-srp": Fraction(22), "intel-skl": Fraction(10),
          "intel-bdw": Fraction(6), "zhaoxin-yongfeng": Fraction(9), "zhaoxin": Fraction(6)}
# A CPU whose kind is unknown (an nvidia-smi matrix; a file without arch/vendor).
CPU_UNKNOWN = Fraction(16)

# NCCL's LOC_BW: links inside a device (a NIC attached to its CPU with no PCI
# path, the links between the halves of a two-level PCIe switch).
LOCAL = Fraction(5000)


def cpu_kind(arch: str | None, vendor: str | None, family: int | None,
             model: int | None) -> str | None:
    """NCCL's classification of a CPU (topo.cc, ncclTopoAddCpu), or None if unknown."""
    if arch == "ppc64":
        return "power"
    if arch == "arm64":
        return "arm"
    if arch != "x86_64":
        return None
    if vendor == "AuthenticAMD":
        return "amd"
    if vendor == "GenuineIntel":
        if family != 6 or model is None:
            return "intel-bdw"
        return ("intel-erp" if model >= 0xCF else "intel-srp" if model >= 0x8F
                else "intel-skl" if model >= 0x55 else "intel-bdw")
    if vendor in ("CentaurHauls", "  Shanghai  "):
        return "zhaoxin-yongfeng" if (family, model) == (7, 0x5B) else "zhaoxin"
    return None


def net_speed(mbps: int) -> Fraction:
    """A NIC port's ``speed`` attribute (Mb/s) in GB/s."""
    return Fraction(mbps, 8000)


def _gb(x: Fraction) -> str:
    from collcert.reference.model import fraction_str

    text = fraction_str(x)
    if x.denominator != 1:
        text += f" (≈ {float(x):.4g})"
    return f"{text} GB/s"


gb = _gb
