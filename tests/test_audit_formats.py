"""Schedules written by public tools (tests/data/formats, copied unchanged): each audits as
the folder's expected.json says, and mutants of them are refused for the right reason."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest

from collcert.auditing import audit
from collcert.certify.forestcoll import split_path
from collcert.certify.model import InputError
from collcert.cli import main
from collcert.commands._common import load_topology

DATA = Path(__file__).parent / "data" / "formats"
EXPECTED = json.loads((DATA / "expected.json").read_text())


def test_the_copies_are_unchanged() -> None:
    listed = re.findall(r"^([0-9a-f]{64})  (\S+)$", (DATA / "ORIGIN.md").read_text(), re.M)
    assert len(listed) == len(list(DATA.iterdir())) - 1  # every file but ORIGIN.md
    for digest, name in listed:
        assert hashlib.sha256((DATA / name).read_bytes()).hexdigest() == digest, name


@pytest.mark.parametrize("case", EXPECTED, ids=lambda e: f"{e['schedule']}@{e['topology']}")
def test_public_schedules_audit_as_expected(case: dict[str, Any],
                                            capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["audit", str(DATA / case["topology"]), str(DATA / case["schedule"]),
                 "--format", case["format"], "--json"])
    out = json.loads(capsys.readouterr().out)
    assert (("VALID" if code == 0 else f"exit {code}"), out["algbw"]) == (
        case["verdict"], case["algbw"])
    assert out["verdict"] == case["verdict"]
    if case["schedule"].startswith("forestcoll"):  # README: "VALID, algbw 2400/7, ratio 1"
        assert out["ratio"] == "1" and out["optimum_algbw"] == "2400/7"


def _audit(topology: str, text: str, fmt: str) -> Any:
    return audit(load_topology(str(DATA / topology)), text, fmt)


AG = (DATA / "msccl-tools_allgather_ring_4gpu_inplace.xml").read_text()
AR = (DATA / "msccl-tools_allreduce_ring_4gpu_inplace.xml").read_text()
FC = (DATA / "forestcoll_a100_1box_allgather.xml").read_text()


@pytest.mark.parametrize("text, needle", [
    # run as out-of-place, the in-place allgather reads an output that holds nothing yet
    (AG.replace('inplace="1"', 'inplace="0"'), "reads o[0] on gpu 0 before it holds any data"),
    # gpu 1 forwards the wrong chunk at its second step
    (AG.replace('<step s="1" type="rcs" srcbuf="o" srcoff="0" dstbuf="o" dstoff="0"',
                '<step s="1" type="rcs" srcbuf="o" srcoff="0" dstbuf="o" dstoff="2"', 1),
     "should hold rank"),
    # gpu 0 stops one step early: its last receive is never posted
    (re.sub(r'\s*<step s="3" type="r" srcbuf="o" srcoff="1"[^>]*/>', "", AG, count=1),
     "never received"),
    # a receive-reduce-send that only copies: gpu 1's contribution is lost
    (AR.replace('<step s="1" type="rrs" srcbuf="i" srcoff="0"',
                '<step s="1" type="rcs" srcbuf="i" srcoff="0"', 1), "lacks rank"),
    # twice the chunks per loop: the in-place input is 8 chunks, the program fills 4
    (AR.replace('nchunksperloop="4"', 'nchunksperloop="8"'), "nchunksperloop = 8"),
    # hasdep on a step nobody waits for is harmless; a wait on a silent step is not
    (AR.replace('depid="-1" deps="-1" hasdep="0"/>', 'depid="0" deps="6" hasdep="0"/>', 1),
     "which is never signalled"),
])
def test_mutants_of_msccl_tools_programs_are_invalid(text: str, needle: str) -> None:
    r = _audit("complete4_topology.json", text, "msccl-xml")
    assert not r.valid
    assert needle in " ".join(r.reasons)


def test_forestcoll_mutants() -> None:
    # drop one send: the tree no longer spans the GPUs
    cut = re.sub(r'\s*<send src="\(0, \'GPU\', 6\)" dst="\(0, \'GPU\', 7\)"[^>]*/>', "", FC,
                 count=1)
    r = _audit("forestcoll_a100_1box_topology.json", cut, "forestcoll-xml")
    assert not r.valid and "(0, 'GPU', 7)" in " ".join(r.reasons)
    # a path through a switch the topology does not have
    bad = FC.replace("(0, 'NVSwitch', 0),(0, 'GPU', 1)\"", "(0, 'NVSwitch', 9),(0, 'GPU', 1)\"", 1)
    with pytest.raises(Exception, match="not a comma-separated list of the topology's node ids"):
        _audit("forestcoll_a100_1box_topology.json", bad, "forestcoll-xml")


def test_paths_are_read_by_matching_node_ids() -> None:
    ids = ["(0, 'GPU', 0)", "(0, 'NVSwitch', 0)", "(0, 'GPU', 1)"]
    text = "(0, 'GPU', 0),(0, 'NVSwitch', 0),(0, 'GPU', 1)"
    assert split_path(text, ids, "here") == ids
    assert split_path("a, b ,c", ["a", "b", "c"], "here") == ["a", "b", "c"]


def test_a_path_that_reads_two_ways_is_ambiguous() -> None:
    with pytest.raises(InputError, match="here: path 'a,b,c' is ambiguous") as exc:
        split_path("a,b,c", ["a", "b", "c", "b,c"], "here")
    assert "['a', 'b', 'c']" in str(exc.value) and "['a', 'b,c']" in str(exc.value)


def test_ambiguous_path_in_an_audit_exits_2(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    # nodes "g,0" and "g" + "0" (two GPUs) read the path "g,0,w,g,1" two ways
    topo = {"format": "collcert-topology/1", "compute_nodes": ["g", "0", "g,0", "1", "g,1"],
            "switch_nodes": ["w"],
            "links": [{"src": x, "dst": "w", "capacity": 1, "bidirectional": True}
                      for x in ("g", "0", "g,0", "1", "g,1")]}
    (tmp_path / "t.json").write_text(json.dumps(topo))
    (tmp_path / "s.xml").write_text(
        '<algo nchunkspernode="1"><tree root="g,0" index="0" nchunks="1">'
        '<send src="g,0" dst="g,1" path="g,0,w,g,1"/></tree></algo>')
    code = main(["audit", str(tmp_path / "t.json"), str(tmp_path / "s.xml")])
    err = capsys.readouterr().err
    assert code == 2 and "ambiguous" in err and "g,0,w,g,1" in err and "line 1" in err
