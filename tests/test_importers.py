"""Topologies from real machines: NCCL's topology XML, `nvidia-smi topo -m`, cloud files.

The files in tests/data/importers/ were written for these tests from the formats'
public definitions (NCCL's src/graph/xml.cc writes the XML, topo.cc reads it; the
matrix and its legend are what `nvidia-smi topo -m` prints). Expected values are
derived by hand from the model in docs/importing.md, never copied from the code.
"""

from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest

import collcert
from collcert import TopologyError, platforms
from collcert.certify.forestcoll import check_optimum
from collcert.importers import detect_format, import_text, import_topology
from collcert.importers import speeds as sp

DATA = Path(__file__).parent / "data" / "importers"
DUMP = DATA / "dgx_a100_dump.xml"
CLOUD = DATA / "cloud_pcie_only.xml"
SMI_DGX1 = DATA / "nvidia_smi_dgx1.txt"
SMI_A100 = DATA / "nvidia_smi_dgx_a100.txt"
SMI_CLOUD = DATA / "nvidia_smi_cloud.txt"
GEN4_X16 = Fraction(16 * 16 * 128, 130 * 8)  # 16 lanes x 16 GT/s x 128b/130b / 8 bits
GEN3_X16 = Fraction(16 * 8 * 128, 130 * 8)


def cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "collcert", *args], capture_output=True,
                          text=True, input=stdin, timeout=120)


# ----------------------------------------------------------------- speeds: NCCL's figures
def test_speed_tables_match_nccl_constants() -> None:
    # NCCL src/graph/topo.h: PCI_BW 12.0 "PCI Gen3 x16"; SM90_NVLINK_BW 20.6; SM86 12.0
    assert sp.pcie("8.0 GT/s PCIe", 16, "nccl") == 12
    assert sp.nvlink(90, "nccl")[0] == Fraction("20.6")
    assert sp.nvlink(86, "nccl")[0] == 12
    assert sp.nvlink(100, "nccl")[0] == Fraction("40.1")
    assert sp.net_speed(100000) == Fraction(25, 2)  # NET_BW 12 "100Gbit" is 12.5 raw
    # nominal: A100/H100 NVLink 25 GB/s per link per direction, B200 50, Gen4 x16 31.5
    assert sp.nvlink(80, "nominal")[0] == sp.nvlink(90, "nominal")[0] == 25
    assert sp.nvlink(100, "nominal")[0] == 50
    assert sp.pcie("16 GT/s", 16, "nominal") == GEN4_X16
    assert sp.pcie("2.5 GT/s", 1, "nominal") == Fraction(1, 4)  # 8b/10b


# ------------------------------------------------------------------------ NCCL's dump
def test_dump_links_have_the_documented_capacities() -> None:
    got = import_topology(DUMP)
    t = got.topology
    assert t.compute_nodes == tuple(f"gpu{i}" for i in range(8))
    # 6 NVSwitches x 2 NVLinks x 25 GB/s (A100, sm 80), each way
    for g in t.compute_nodes:
        assert t.capacity[(g, "nvswitch")] == t.capacity[("nvswitch", g)] == 300
    assert t.capacity[("gpu0", "pcisw:0000:10:00.0")] == GEN4_X16
    assert t.capacity[("pcisw:0000:10:00.0", "cpu0")] == GEN4_X16
    assert t.capacity[("cpu0", "cpu1")] == 16  # NCCL's AMD inter-CPU figure
    # one box: NICs, the NVSwitches' PCI functions and the disk have no node
    assert not [v for v in t.nodes if str(v).startswith("nic") or "c3" in str(v)]
    assert any("NICs left out" in n for n in got.notes) and not got.lacks


def test_dump_optimum_from_the_cut_around_one_gpu() -> None:
    # Every S with 7 of the 8 GPUs sends at least what one GPU receives: its NVSwitch
    # links plus its PCIe link, so algbw = N x* = 8/7 (300 + PCIe).
    opt = collcert.optimum(import_topology(DUMP).topology, "allgather")
    assert opt.algbw == Fraction(8, 7) * (300 + GEN4_X16)
    assert len(opt.cut) == len(opt.topology.nodes) - 1
    nccl = collcert.optimum(import_topology(DUMP, speeds="nccl").topology)
    assert nccl.algbw == Fraction(8, 7) * (12 * 20 + 16 * 120 / Fraction(80))


def test_boxes_join_the_nics_and_the_certificate_checks() -> None:
    got = import_topology(DUMP, boxes=2)
    t = got.topology
    assert t.num_compute == 16 and "b1.gpu7" in t.compute_nodes
    assert t.capacity[("b0.nic0", "net")] == t.capacity[("net", "b1.nic7")] == 25  # 200 Gb/s
    assert t.capacity[("b1.gpu3", "b1.nvswitch")] == 300
    opt = collcert.optimum(t)
    assert check_optimum(t.to_json(), opt.certificate()).ok
    with pytest.raises(TopologyError, match="--nic-bw"):
        import_topology(CLOUD, boxes=2)
    faster = import_topology(CLOUD, boxes=3, nic_bw=50, nvswitch=300).topology
    assert faster.capacity[("b2.nic3", "net")] == 50


def test_json_output_is_a_valid_collcert_topology() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    got = import_topology(DUMP, boxes=2)
    doc = got.to_json()
    schema = json.loads((Path(__file__).parent.parent / "docs" / "schema" /
                         "topology.schema.json").read_text())
    jsonschema.validate(doc, schema)
    assert "dgx_a100_dump.xml" in doc["source"] and "b0.gpu0 = GPU at PCI" in doc["description"]
    assert collcert.Topology.from_json(json.dumps(doc)) == got.topology


# ------------------------------------------------------------------ cloud files
def test_cloud_file_says_what_it_lacks_and_pcie_only_optimum() -> None:
    got = import_topology(CLOUD)
    assert got.lacks and "no NVLink" in got.lacks[0]
    assert "--nvidia-smi" in got.lacks[0] and "--nvswitch" in got.lacks[0]
    # GPUs only on PCIe: the cut around one GPU gives 4/3 x (Gen4 x16)
    assert collcert.optimum(got.topology).algbw == Fraction(4, 3) * GEN4_X16
    assert got.topology.capacity[("cpu0", "cpu1")] == 22  # Sapphire Rapids (model 143)


def test_cloud_file_with_an_nvswitch_speed_or_a_companion_matrix() -> None:
    sw = import_topology(CLOUD, nvswitch=450)
    assert not sw.lacks and sw.topology.capacity[("gpu2", "nvswitch")] == 450
    both = import_topology(CLOUD, nvidia_smi_file=SMI_CLOUD)
    assert not both.lacks
    # NV12 to every peer: 36 links > 18, so an NVSwitch; 12 links x 25 GB/s
    assert both.topology.capacity[("gpu0", "nvswitch")] == 300
    assert ("gpu0", "gpu1") not in both.topology.capacity
    # two boxes of 4 GPUs with 4 NICs of 25 GB/s: S = one box sends 100, 4 GPUs' shards
    two = import_topology(CLOUD, nvidia_smi_file=SMI_CLOUD, boxes=2, nic_bw=25).topology
    assert collcert.optimum(two).algbw == 8 * Fraction(100, 4)
    slow = import_topology(CLOUD, nvidia_smi_file=SMI_CLOUD, nvlink_bw=20)
    assert slow.topology.capacity[("nvswitch", "gpu3")] == 240
    with pytest.raises(TopologyError, match="shows 8 GPUs but the XML file has 4"):
        import_topology(CLOUD, nvidia_smi_file=SMI_A100)
    with pytest.raises(TopologyError, match="has NVLink entries; drop --nvswitch"):
        import_topology(DUMP, nvswitch=300)


# --------------------------------------------------------------- nvidia-smi topo -m
def test_matrix_dgx1_nvlinks_are_those_of_the_platform() -> None:
    t = import_topology(SMI_DGX1).topology
    ref = platforms.dgx1(25)  # DGX-1 NVLink counts x 25 GB/s (V100)
    for i in range(8):
        for j in range(8):
            if i != j:
                assert t.capacity.get((f"gpu{i}", f"gpu{j}")) == ref.capacity.get(
                    (f"gpu{i}", f"gpu{j}")), (i, j)
    # PIX groups (a GPU pair and its NIC) share a PCIe switch under their NUMA node's CPU
    assert {"cpu0", "cpu1", "pcisw0", "pcisw3"} <= set(t.switch_nodes)
    assert t.capacity[("gpu0", "pcisw0")] == GEN4_X16
    assert t.capacity[("cpu0", "cpu1")] == sp.CPU_UNKNOWN


def test_matrix_nvswitch_inferred_and_numa_nodes() -> None:
    t = import_topology(SMI_A100).topology
    assert all(t.capacity[(g, "nvswitch")] == 300 for g in t.compute_nodes)
    assert {"cpu1", "cpu3", "cpu5", "cpu7"} <= set(t.switch_nodes)


def test_detection_and_from() -> None:
    assert detect_format(DUMP.read_text()) == "nccl-xml"
    assert detect_format(SMI_DGX1.read_text()) == "nvidia-smi"
    assert detect_format('{"compute_nodes": []}') == "json"
    assert detect_format("hello") is None
    with pytest.raises(TopologyError, match="--from json"):
        import_text("hello", "x.txt")
    with pytest.raises(TopologyError, match="no header line starting with GPU0"):
        import_topology(DUMP, "nvidia-smi")
    with pytest.raises(TopologyError, match="apply to NCCL XML"):
        import_text('{"compute_nodes": [0, 1], "links": []}', "t.json", boxes=2)


# ------------------------------------------------------------------ NVLink details
def _xml(gpus: str, cpu: str = 'numaid="0" arch="x86_64" vendor="AuthenticAMD"') -> str:
    return f'<system version="1"><cpu {cpu}>{gpus}</cpu></system>'


def _gpu(bus: str, rank: int, links: str = "", sm: int = 90) -> str:
    return (f'<pci busid="{bus}" class="0x030200" link_speed="32.0 GT/s PCIe" link_width="16">'
            f'<gpu dev="{rank}" sm="{sm}" rank="{rank}" gdr="1">{links}</gpu></pci>')


def test_nvlinks_one_sided_and_unequal_counts() -> None:
    one = _xml(_gpu("0000:01:00.0", 0, '<nvlink target="0000:02:00.0" count="4" '
                    'tclass="0x030200"/>') + _gpu("0000:02:00.0", 1))
    got = import_text(one, "one.xml")
    assert got.topology.capacity[("gpu1", "gpu0")] == 4 * 25  # H100: 25 GB/s per link
    assert any("one side only" in n for n in got.notes)
    two = _xml(_gpu("0000:01:00.0", 0, '<nvlink target="0000:02:00.0" count="4" '
                    'tclass="0x030200"/>')
               + _gpu("0000:02:00.0", 1, '<nvlink target="0000:01:00.0" count="2" '
                      'tclass="0x030200"/>'))
    got = import_text(two, "two.xml")
    assert got.topology.capacity[("gpu0", "gpu1")] == 2 * 25
    assert any("differ by direction" in n for n in got.notes)


def test_c2c_and_missing_tclass_and_absent_peer() -> None:
    gpu = _gpu("0000:01:00.0", 0, '<c2c count="10" bw="45000"/>'
               '<nvlink target="fffffff:ffff:ff" count="18"/>'
               '<nvlink target="0000:99:00.0" count="2" tclass="0x030200"/>')
    got = import_text(_xml(gpu + _gpu("0000:02:00.0", 1, '<nvlink target="0000:77:00.0" '
                                      'count="18" tclass="0x068000"/>')), "gh.xml")
    t = got.topology
    assert t.capacity[("gpu0", "cpu0")] == 450 + Fraction(32 * 16 * 128, 130 * 8)  # C2C+PCIe
    assert t.capacity[("gpu0", "nvswitch")] == t.capacity[("gpu1", "nvswitch")] == 18 * 25
    assert any("not in the file ignored" in n for n in got.notes)


def test_multi_host_file_shares_the_nvswitch_and_joins_nics() -> None:
    nic = ('<pci busid="0000:{b}:00.0" class="0x020000" link_speed="32.0 GT/s PCIe" '
           'link_width="16"><nic><net name="ib{b}" dev="0" speed="400000"/></nic></pci>')
    host = ('<cpu host_hash="{h}" numaid="0" arch="arm64">'
            + _gpu("0000:01:00.0", 0, '<nvlink target="0000:c0:00.0" count="18" '
                   'tclass="0x068000"/>', sm=100).replace('rank="0"', 'rank="{r}"')
            + nic + "</cpu>")
    text = ('<system version="1">' + host.format(h="0xaa", r=0, b="0a")
            + host.format(h="0xbb", r=1, b="0b") + "</system>")
    t = import_text(text, "nvl.xml").topology
    assert set(t.compute_nodes) == {"h0.gpu0", "h1.gpu1"}
    assert t.capacity[("h0.gpu0", "nvswitch")] == t.capacity[("h1.gpu1", "nvswitch")] == 900
    assert t.capacity[("h1.nic0", "net")] == 50
    with pytest.raises(TopologyError, match="already describes 2 hosts"):
        import_text(text, "nvl.xml", boxes=2)


# ------------------------------------------------------------------ bad input
BAD_XML = [
    ('<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaa"><!ENTITY b "&a;&a;">]>'
     '<system>&b;</system>', "DOCTYPE"),
    ('<system><cpu numaid="0"></system>', "not well-formed XML at line 1"),
    ('<graphs version="1"><graph id="0"/></graphs>', "NCCL graph file"),
    ('<algo name="x"/>', "not <system>"),
    ('<system version="1"/>', "holds no <cpu>"),
    (_xml("", cpu='arch="x86_64"'), "has no numaid="),
    (_xml(_gpu("zz:01:00.0", 0)), "not a PCI bus id"),
    (_xml(_gpu("0000:01:00.0", 0).replace("32.0 GT/s PCIe", "fast")), "NCCL does not know"),
    (_xml(_gpu("0000:01:00.0", 0).replace('link_width="16"', 'link_width="x16"')),
     "not an integer"),
    (_xml(_gpu("0000:01:00.0", 0, '<nvlink target="0000:02:00.0" count="0" '
               'tclass="0x030200"/>') + _gpu("0000:02:00.0", 1)), "count=0; it must be at least 1"),
    (_xml(_gpu("0000:01:00.0", 0, '<nvlink target="0000:02:00.0" tclass="0x030200"/>')
          + _gpu("0000:02:00.0", 1)), "has no count="),
    (_xml('<nic><net name="eth0" dev="0" speed="100000"/></nic>'), "no GPU found"),
    (_xml(_gpu("0000:01:00.0", 0) + _gpu("0000:01:00.0", 1)), "repeats the GPU"),
    ("<system>" + "<cpu numaid='0'>" * 40 + "</cpu>" * 40 + "</system>", "nested deeper"),
    ("<system>" + "<x/>" * 100_001 + "</system>", "more than 100000 elements"),
]


@pytest.mark.parametrize("text,expected", BAD_XML, ids=[e for _, e in BAD_XML])
def test_bad_xml_is_refused_with_its_reason(text: str, expected: str) -> None:
    with pytest.raises(TopologyError) as err:
        import_text(text, "bad.xml", "nccl-xml")
    assert expected in str(err.value) and "bad.xml" in str(err.value)


def _matrix(rows: list[str], header: str = "\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity") -> str:
    return header + "\n" + "\n".join(rows) + "\n"


BAD_SMI = [
    (_matrix(["GPU0\t X \tNV4\t0-7\t0", "GPU1\tNV2\t X \t0-7\t0"]), "symmetric"),
    (_matrix(["GPU0\t X \tFAST\t0-7\t0", "GPU1\tFAST\t X \t0-7\t0"]), "'FAST' is not a conn"),
    (_matrix(["GPU0\t X \tNV4\t0-7\t0"]), "no row for GPU1"),
    (_matrix(["GPU0\tPIX\tNV4\t0-7\t0", "GPU1\tNV4\t X \t0-7\t0"]), "on the diagonal"),
    (_matrix(["GPU0\t X \tNV4", "GPU1\tNV4"]), "has 1 cells"),
    ("GPU1\tGPU2\nGPU1 X\n", "no header line starting with GPU0"),
]


@pytest.mark.parametrize("text,expected", BAD_SMI, ids=[e for _, e in BAD_SMI])
def test_bad_matrix_is_refused_with_its_reason(text: str, expected: str) -> None:
    with pytest.raises(TopologyError) as err:
        import_text(text, "topo.txt", "nvidia-smi")
    assert expected in str(err.value) and "topo.txt" in str(err.value)


def test_bad_options() -> None:
    with pytest.raises(TopologyError, match="must be positive"):
        import_topology(CLOUD, nvswitch=0)
    with pytest.raises(TopologyError, match="unknown speeds"):
        import_topology(CLOUD, speeds="fast")
    with pytest.raises(TopologyError, match="boxes must be"):
        import_topology(CLOUD, boxes=0)


# ------------------------------------------------------------------ the CLI
def test_cli_reads_the_files_directly_and_through_import(tmp_path: Path) -> None:
    direct = cli("optimum", str(DUMP), "--json")
    assert direct.returncode == 0, direct.stderr
    out = tmp_path / "box.json"
    conv = cli("import", str(DUMP), "-o", str(out))
    assert conv.returncode == 0 and "wrote" in conv.stdout and "assumed:" in conv.stdout
    again = cli("optimum", str(out), "--json")
    assert json.loads(again.stdout)["algbw"] == json.loads(direct.stdout)["algbw"]
    rep = cli("import", str(CLOUD), "--json", "--nvswitch", "300")
    data = json.loads(rep.stdout)
    assert data["format"] == "nccl-xml" and data["lacks"] == [] and data["compute_nodes"] == 4
    note = cli("optimum", str(CLOUD))
    assert note.returncode == 0 and "note:" in note.stderr and "no NVLink" in note.stderr
    piped = cli("optimum", "-", "--json", stdin=SMI_DGX1.read_text())
    assert piped.returncode == 0, piped.stderr


def test_cli_errors_exit_2_with_a_message() -> None:
    wrong = cli("optimum", str(DUMP), "--from", "nvidia-smi")
    assert wrong.returncode == 2 and "GPU0" in wrong.stderr and "Traceback" not in wrong.stderr
    choice = cli("optimum", str(DUMP), "--from", "yaml")
    assert choice.returncode == 2 and "invalid choice" in choice.stderr
    plat = cli("optimum", "dgx1", "--from", "nccl-xml")
    assert plat.returncode == 2 and "is not a file" in plat.stderr
    boxes = cli("import", str(CLOUD), "--boxes", "2")
    assert boxes.returncode == 2 and "--nic-bw" in boxes.stderr


def test_a_dump_without_nvlinks_lacks_nothing() -> None:
    # NCCL's own dump lists <gpu> elements: no <nvlink> means the machine has none
    got = import_text(_xml(_gpu("0000:01:00.0", 0) + _gpu("0000:02:00.0", 1)), "pcie.xml")
    assert not got.lacks and any("NCCL found no NVLink" in n for n in got.notes)
    assert got.topology.capacity[("gpu0", "cpu0")] == Fraction(16 * 32 * 128, 130 * 8)
    smi = import_text(_matrix(["GPU0\t X \tSYS\t0-7\t0", "GPU1\tSYS\t X \t8-15\t1"]), "m.txt")
    assert not smi.lacks and set(smi.topology.switch_nodes) == {"cpu0", "cpu1"}
