"""Red-team regressions for the tools around the core: topology importers, the smoke
harness and parallel fuzzing. Each test is an input that once fooled or crashed one
of them; expected values are worked out by hand from docs/importing.md and NCCL's
reading rules (src/graph/topo.cc, xml.cc), never copied from the code.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

import collcert
from collcert import TopologyError, platforms
from collcert.importers import import_text
from collcert.reference.execution import describe_cell, first_mismatch, plan_from_schedule, run_host

GEN4_X16 = Fraction(16 * 16 * 128, 130 * 8)  # 16 lanes x 16 GT/s x 128b/130b / 8
GEN3_X16 = Fraction(16 * 8 * 128, 130 * 8)


def _xml(inner: str) -> str:
    return ('<system version="1"><cpu numaid="0" arch="x86_64" vendor="AuthenticAMD">'
            '<pci busid="0000:10:00.0" class="0x060400" link_speed="16.0 GT/s PCIe" '
            f'link_width="16">{inner}</pci></cpu></system>')


def _gpu(bus: str, rank: int, links: str = "", speed: str = "16.0 GT/s PCIe") -> str:
    return (f'<pci busid="{bus}" class="0x030200" link_speed="{speed}" link_width="16">'
            f'<gpu dev="{rank}" sm="80" rank="{rank}">{links}</gpu></pci>')


def _pair(links0: str = "", links1: str = "", speed: str = "16.0 GT/s PCIe") -> str:
    return _xml(_gpu("0000:11:00.0", 0, links0, speed) + _gpu("0000:12:00.0", 1, links1))


# ------------------------------------------------------------------ NCCL XML
@pytest.mark.parametrize("speed,nominal,nccl", [
    # NCCL itself writes "16.0 GT/s" when NVML gives no PCIe generation (xml.cc); its
    # reader finds no such name in kvDictPciGen and takes the Gen3 fallback (60 x 16 / 80)
    ("16.0 GT/s", GEN4_X16, Fraction(12)),
    # Linux's sysfs shows "Unknown" (older kernels "Unknown speed") on virtual bridges
    ("Unknown", GEN3_X16, Fraction(12)),
    ("Unknown speed", GEN3_X16, Fraction(12)),
    ("16 GT/s PCIe", GEN4_X16, Fraction(24)),  # NCCL matches the prefix "16 GT/s"
])
def test_pcie_speed_strings_nccl_writes_are_read(speed: str, nominal: Fraction,
                                                 nccl: Fraction) -> None:
    for speeds, want in (("nominal", nominal), ("nccl", nccl)):
        got = import_text(_pair(speed=speed), "vm.xml", speeds=speeds)
        bridge = "pcisw:0000:10:00.0"
        assert got.topology.capacity[(bridge, "gpu0")] == want
        assert got.topology.capacity[("gpu0", bridge)] == want
    with pytest.raises(TopologyError, match="line 1: <pci> has link_speed='fast'"):
        import_text(_pair(speed="fast"), "vm.xml")


def test_nvlink_to_its_own_gpu_names_the_line() -> None:
    text = _pair('<nvlink target="0000:11:00.0" count="2" tclass="0x030200"/>')
    with pytest.raises(TopologyError, match=r"line 1: <nvlink> of gpu0 .*own bus id"):
        import_text(text, "self.xml")


@pytest.mark.parametrize("counts", [("999999999",), ("12", "12")])
def test_more_nvlinks_than_a_gpu_has_is_refused(counts: tuple[str, ...]) -> None:
    links = "".join(f'<nvlink target="0000:c{i}:00.0" count="{c}" tclass="0x068000"/>'
                    for i, c in enumerate(counts))
    with pytest.raises(TopologyError, match="NVLinks of gpu0 to (999999999|24); no GPU has"):
        import_text(_pair(links), "many.xml")
    # 18 (an H100's, B200's) is fine: 18 x 25 GB/s to the NVSwitch, both ways
    ok = _pair('<nvlink target="0000:c0:00.0" count="18" tclass="0x068000"/>',
               '<nvlink target="0000:c0:00.0" count="18" tclass="0x068000"/>')
    t = import_text(ok, "ok.xml").topology
    assert t.capacity[("gpu0", "nvswitch")] == t.capacity[("nvswitch", "gpu1")] == 450


def test_byte_order_mark_and_crlf_xml() -> None:
    text = "\ufeff" + _pair('<nvlink target="0000:12:00.0" count="4" tclass="0x030200"/>',
                            '<nvlink target="0000:11:00.0" count="4" tclass="0x030200"/>')
    t = import_text(text.replace(">", ">\r\n"), "win.xml").topology
    assert t.capacity[("gpu0", "gpu1")] == t.capacity[("gpu1", "gpu0")] == 100


# ------------------------------------------------------------------ nvidia-smi topo -m
HEADER = "\tGPU0\tGPU1\tGPU2\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n"
ROWS = ["GPU0\t X \tNV4\tNV4\t0-63\t0\t\tN/A", "GPU1\tNV4\t X \tNV4\t0-63\t0\t\tN/A",
        "GPU2\tNV4\tNV4\t X \t0-63\t0\t\tN/A"]
LEGEND = "\n\nLegend:\n\n  X    = Self\n  NV#  = Connection traversing a bonded set of # NVLinks\n"


def test_matrix_with_byte_order_mark_and_crlf() -> None:
    text = "\ufeff" + (HEADER + "\n".join(ROWS) + LEGEND).replace("\n", "\r\n")
    t = import_text(text, "topo.txt").topology
    assert t.compute_nodes == ("gpu0", "gpu1", "gpu2")
    assert t.capacity[("gpu0", "gpu2")] == t.capacity[("gpu2", "gpu0")] == 4 * 25


def test_matrix_row_the_header_does_not_name_is_refused() -> None:
    # the header lost GPU2's column: GPU2's row was taken for legend text and the
    # machine silently had 2 GPUs
    header = HEADER.replace("\tGPU2", "")
    rows = [r.replace("\tNV4\t0-63", "\t0-63", 1) if i < 2 else r for i, r in enumerate(ROWS)]
    with pytest.raises(TopologyError, match="line 4: a row for GPU2, which the header"):
        import_text(header + "\n".join(rows) + LEGEND, "topo.txt")
    extra = HEADER + "\n".join(ROWS) + "\nGPU7\tNV4\tNV4\tNV4\t X \t0-63\t0" + LEGEND
    with pytest.raises(TopologyError, match="line 5: a row for GPU7"):
        import_text(extra, "topo.txt")


@pytest.mark.parametrize("cell", ["NV0", "NV19", "NV999"])
def test_matrix_nvlink_count_out_of_range(cell: str) -> None:
    text = HEADER + "\n".join(ROWS).replace("NV4", cell) + LEGEND
    with pytest.raises(TopologyError, match=f"line 2: GPU0 / GPU1: '{cell}'"):
        import_text(text, "topo.txt")


# ------------------------------------------------------------------ collcert smoke
def _rooted(collective: str) -> dict[str, Any]:
    """A ring:4 schedule of a rooted collective, its first tree moved to rank 2."""
    doc = collcert.schedule(platforms.ring(4), collective, root=0).to_json(certificates=False)
    doc["phases"][0]["trees"][0]["root"] = doc["compute_nodes"][2]
    return doc


@pytest.mark.parametrize("collective", ["broadcast", "reduce"])
def test_smoke_tree_rooted_at_the_wrong_node_fails_naming_the_data(collective: str) -> None:
    # was bad input (exit 2, "root 2 is not the broadcast root 0") while audit calls the
    # same file INVALID (exit 1); now the tree carries nothing and the run shows what lacks
    plan = plan_from_schedule(_rooted(collective), "bad.json")
    assert any("rooted at rank 2, not at the" in p for p in plan.problems)
    outs = run_host(plan, 1)
    wrong = [m for r, o in enumerate(outs) if o is not None
             for m in [first_mismatch(plan.spec, r, o, 1)] if m]
    assert wrong and wrong[0].got == -1  # never written
    cell = wrong[0].element
    assert any("carried by no tree" in line for line in describe_cell(plan, wrong[0].rank, cell))


def test_smoke_cli_wrong_root_exit_1_with_expected_value(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    bad = tmp_path / "reduce_bad.json"
    bad.write_text(json.dumps(_rooted("reduce")))
    # 1 byte: one int64 per cell (k = 2 cells); the remaining tree takes the root's first
    # part, so cell 1 is carried by none; rank q holds 2^q (1 + e mod 61) at element e,
    # so the root's element 1 must be (1 + 2 + 4 + 8) * 2 = 30
    cmd = [sys.executable, "-m", "collcert", "smoke", str(bad), "--backend", "gloo",
           "--size", "1", "--iters", "1"]
    refused = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert refused.returncode == 2 and "not run: the schedule is INVALID" in refused.stderr
    # --run-invalid runs it anyway, to show what goes wrong on the devices
    run = subprocess.run(cmd + ["--run-invalid"], capture_output=True, text=True, timeout=300)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "Traceback" not in run.stderr
    assert "rank 0: output element 1 (global element 1, byte 8) is -1, expected 30" in run.stdout
    assert "carried by no tree" in run.stdout and "M = 16 bytes" in run.stdout


# ------------------------------------------------------------------ fuzz run --jobs
def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _poll(cond: Callable[[], bool], limit: float = 60.0) -> bool:
    end = time.monotonic() + limit
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.1)
    return False


def test_impl_is_killed_when_the_process_running_it_dies(tmp_path: Path) -> None:
    # A fuzz worker killed (or terminated by its pool because another worker died) left
    # its --impl command running in its own session: a hanging command lived on forever
    pidfile = tmp_path / "pid"
    code = (
        "import tempfile\n"
        "from collcert import platforms\n"
        "from collcert.fuzz.driver import run_impl\n"
        "with tempfile.TemporaryDirectory() as d:\n"
        f"    run_impl('echo $$ > {pidfile}; exec sleep 600 # {{topology}} {{schedule}}',\n"
        "             platforms.ring(3), d, 'json', 600, 'allgather')\n")
    worker = subprocess.Popen([sys.executable, "-c", code])
    pid = 0
    try:
        assert _poll(lambda: pidfile.exists() and pidfile.read_text().strip() != "")
        pid = int(pidfile.read_text())
        assert _alive(pid)
        worker.kill()  # SIGKILL: the worker cannot clean up
        worker.wait()
        assert _poll(lambda: not _alive(pid)), "the command outlived the process running it"
    finally:
        worker.kill()
        worker.wait()
        if pid and _alive(pid):
            os.kill(pid, signal.SIGKILL)


def test_impl_status_and_output_unchanged_by_the_watcher(tmp_path: Path) -> None:
    from collcert.fuzz.driver import run_impl

    got = run_impl("echo oops >&2; kill -SEGV $$ # {topology} {schedule}", platforms.ring(3),
                   str(tmp_path), "json", 60, "allgather")
    # the shell's own status for a signal (128 + 11); a bare sh -c reported -11
    assert got[0] == "crash" and got[1][0] in ("the command exited with status 139",
                                               "the command exited with status -11")
    assert "stderr: oops" in got[1]
    ok = run_impl("cp {topology} {schedule}", platforms.ring(3), str(tmp_path), "json", 60,
                  "allgather")
    assert ok[0] == "ok" and Path(ok[2]).stat().st_size > 0
