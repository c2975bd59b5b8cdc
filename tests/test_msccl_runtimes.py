"""Issue 29: the runtime profiles of MSCCL XML hold each runtime's rules, with references.

Every case names the line of the runtime's source (at the commits of
docs/runtimes.md) that decides it: ``msccl_parser.cc`` of Azure/msccl-executor-nccl
(ROCm/rccl: the same lines), ``xml.cc`` / ``topo.cc`` / ``tuning.cc`` of
microsoft/msccl. The expected outcomes were also checked by running those
runtimes' own parsers, compiled with stub headers, on the same texts
(docs/runtimes.md, "What was run").
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import collcert
from collcert.certify.execution import runtimes
from collcert.cli import main
from collcert.commands._common import load_topology
from collcert.fuzz.generators import RandomSource, random_topology
from collcert.reference.execution import alltoall_msccl_xml, export_rate, msccl_xml
from collcert.reference.model import ScheduleError

AZ, RC, MS = "msccl-executor-nccl", "rccl", "microsoft-msccl"
DATA = Path(__file__).parent / "data"
TOOLS = DATA / "formats" / "msccl-tools_allgather_ring_4gpu_inplace.xml"

# two GPUs swap their shard: the smallest program every runtime reads
GOOD = """<algo name="t" proto="Simple" nchannels="1" nchunksperloop="2" ngpus="2" coll="allgather" inplace="1" outofplace="1" minBytes="0" maxBytes="{max}">
  <gpu id="0" i_chunks="1" o_chunks="2" s_chunks="0">
    <tb id="0" send="1" recv="1" chan="0">
      <step s="0" type="s" srcbuf="i" srcoff="0" dstbuf="o" dstoff="-1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="1" type="r" srcbuf="i" srcoff="-1" dstbuf="o" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
  <gpu id="1" i_chunks="1" o_chunks="2" s_chunks="0">
    <tb id="0" send="0" recv="0" chan="0">
      <step s="0" type="s" srcbuf="i" srcoff="0" dstbuf="o" dstoff="-1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
      <step s="1" type="r" srcbuf="i" srcoff="-1" dstbuf="o" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    </tb>
  </gpu>
</algo>
"""


def judge(text: str, runtime: str) -> runtimes.Loadability:
    return runtimes.get(runtime, "msccl-xml").judge(text, "test")


def test_the_registry_names_every_runtime_and_a_slot_for_mscclpp() -> None:
    assert runtimes.names("msccl-xml")[0] == AZ == runtimes.default("msccl-xml")
    assert set(runtimes.names("msccl-xml")) == {AZ, RC, MS}
    assert runtimes.SLOTS["mscclpp"] == "mscclpp-json"
    with pytest.raises(ValueError, match="no such runtime"):
        runtimes.get("nccl", "msccl-xml")


def test_the_smallest_program_loads_and_says_for_which_calls() -> None:
    text = GOOD.format(max=0)
    for rt in (AZ, RC):
        v = judge(text, rt)
        assert v.ok and "in-place and out-of-place calls of any size" in v.calls[0]
    # microsoft/msccl selects where minBytes <= size < maxBytes (tuning.cc:369): 0 is never
    v = judge(text, MS)
    assert v.status == "ignores" and v.source == "src/graph/tuning.cc:369"
    assert judge(GOOD.format(max=2**40), MS).ok


# (what, the edit, runtime -> (status, rule, source line)); checked against the compiled
# parsers: docs/runtimes.md
DECL = '<?xml version="1.0" encoding="UTF-8"?>\n'
CASES = [
    ("an XML declaration", lambda t: DECL + t,
     {AZ: ("refuses", "expected-gt", "msccl_parser.cc:153"),
      MS: ("falls-back", "expected-gt", "xml.cc:155")}),
    ("a tab before an element", lambda t: t.replace("\n  <gpu", "\n\t<gpu", 1),
     {AZ: ("refuses", "expecting-lt", "msccl_parser.cc:111"),
      MS: ("falls-back", "expecting-lt", "xml.cc:113")}),
    ("a newline between attributes", lambda t: t.replace(' proto="Simple"', '\n proto="Simple"'),
     {AZ: ("refuses", "expected-gt", "msccl_parser.cc:153")}),
    ("a single-quoted value, read to the next double quote", lambda t: t.replace(
        'name="t"', "name='t'"), {AZ: ("refuses", "expected-gt", "msccl_parser.cc:153")}),
    ("a space before />", lambda t: t.replace('hasdep="0"/>', 'hasdep="0" />'), {AZ: "loads"}),
    ("a comment first", lambda t: "<!-- written by hand -->\n" + t, {AZ: "loads", RC: "loads"}),
    ("no minBytes (msccl-tools)", lambda t: t.replace(' minBytes="0"', ""),
     {AZ: ("refuses", "attr-minBytes", "msccl_parser.cc:773"), MS: "loads"}),
    ("reduce_scatter spelled as msccl-tools does", lambda t: t.replace(
        'coll="allgather"', 'coll="reduce_scatter"'), {AZ: ("refuses", "coll", "msccl_parser.cc:768")}),
    ("neither in place nor out of place", lambda t: t.replace('inplace="1" outofplace="1"',
                                                               'inplace="0" outofplace="0"'),
     {AZ: ("ignores", "never-selected", "msccl_lifecycle.cc:334")}),
    ("cnt 72", lambda t: t.replace('cnt="1"', 'cnt="72"', 1),
     {AZ: ("refuses", "step-count", "msccl_parser.cc:578"),
      MS: ("refuses", "step-count", "topo.cc:1066")}),  # rank 0 only: see the next test
    ("step s=64", lambda t: t.replace('<step s="1"', '<step s="64"', 1),
     {AZ: ("refuses", "step-s", "msccl_parser.cc:486"), MS: "loads"}),
    ("depid past int8", lambda t: t.replace('depid="-1" deps="-1" hasdep="0"/>\n      <step s="1"',
                                            'depid="200" deps="0" hasdep="0"/>\n      <step s="1"',
                                            1),
     {AZ: ("misreads", "step-depid", "msccl_parser.cc:546")}),
    ("a 300-character value", lambda t: t.replace('name="t"', f'name="{"n" * 300}"'),
     {AZ: ("misreads", "value-too-long", "msccl_parser.cc:44")}),
    ("a child inside a step", lambda t: t.replace('hasdep="0"/>', 'hasdep="0"><x/></step>', 1),
     {AZ: ("misreads", "step-child", "msccl_parser.cc:212")}),
    ("a closing tag of another name inside a skipped element", lambda t: t.replace(
        "    </tb>\n  </gpu>\n</algo>", "    </xx>\n  </gpu>\n</algo>"),
     {AZ: ("refuses", "mismatch", "msccl_parser.cc:187")}),
]


@pytest.mark.parametrize("what,edit,expect", CASES, ids=[c[0] for c in CASES])
def test_a_rule_and_its_reference(what: str, edit: object,
                                  expect: dict[str, str | tuple[str, str, str]]) -> None:
    assert callable(edit)
    text = edit(GOOD.format(max=2**40))
    for rt, want in expect.items():
        v = judge(text, rt)
        if isinstance(want, str):
            assert v.status == want, v.describe()
            continue
        status, rule, src = want
        assert (v.status, v.rule) == (status, rule), v.describe()
        assert v.source.endswith(src) and v.line is not None, v.describe()


def test_microsoft_msccl_refusing_on_some_ranks_only_hangs_the_others() -> None:
    # topo.cc:1211 ignores a file a rank refuses; the ranks that load it select it
    text = GOOD.format(max=2**40).replace('cnt="1"', 'cnt="72"', 1)  # gpu 0's step only
    v = judge(text, MS)
    assert v.status == "refuses" and "rank(s) 0 ignore it" in v.consequence
    assert "hang" in v.consequence
    every = GOOD.format(max=2**40).replace('proto="Simple"', 'proto="LL64"')
    v = judge(every, MS)
    assert (v.status, v.rule, v.source) == ("falls-back", "proto", "src/graph/topo.cc:753")


def test_what_a_refusal_at_the_folder_scan_does_next() -> None:
    # msccl_lifecycle.cc: the scan stops (:163-165); the half-read entry then crashes a
    # communicator of its size (:254) or divides by nchunksperloop 0 (:334)
    tools = judge(TOOLS.read_text(), AZ)
    assert (tools.status, tools.rule, tools.line) == ("refuses", "attr-minBytes", 1)
    assert "Attribute minBytes of node algo not found" in tools.message
    assert "crashes in mscclInit" in tools.consequence and "stops at this file" in tools.consequence
    decl = judge(DECL + GOOD.format(max=0), AZ)
    assert "SIGFPE" in decl.consequence
    quiet = judge(GOOD.format(max=0).replace(' nchannels="1"', ""), AZ)  # before ngpus is read
    assert quiet.status == "falls-back" and "NCCL_DEBUG=WARN" in quiet.consequence


def nop_program(tbs: int, steps: int) -> str:
    """GOOD's <algo> with gpu 0 running ``tbs`` thread blocks of ``steps`` nops in all."""
    body = []
    for t in range(tbs):
        n = min(64, steps - 64 * t) if t < tbs - 1 else steps - 64 * (tbs - 1)
        body.append(f'<tb id="{t}" send="-1" recv="-1" chan="0">' + "".join(
            f'<step s="{s}" type="nop" srcbuf="i" srcoff="-1" dstbuf="o" dstoff="-1" '
            'cnt="0" depid="-1" deps="-1" hasdep="0"/>' for s in range(n)) + "</tb>")
    head = GOOD.format(max=0).split("\n")[0]
    return (head + '\n<gpu id="0" i_chunks="1" o_chunks="2" s_chunks="0">' + "\n".join(body)
            + '</gpu>\n<gpu id="1" i_chunks="1" o_chunks="2" s_chunks="0"></gpu>\n</algo>\n')


def test_the_reader_keeps_at_most_4095_elements_per_rank() -> None:
    # MAX_NODES = 4096 is checked before each token (msccl_parser.cc:169): the 4096th fails
    # (<algo>, 2 <gpu>, 63 <tb> and their steps)
    assert judge(nop_program(63, 4095 - 66), AZ).ok
    v = judge(nop_program(63, 4096 - 66), AZ)
    assert (v.status, v.rule, v.source) == ("refuses", "node-limit",
                                            "src/misc/msccl/msccl_parser.cc:170")


def test_rccl_takes_64_thread_blocks_azure_1024() -> None:
    # RCCL's msccl_struct.h:18: MSCCL_MAX_NUM_THREAD_BLOCKS 64 (Azure: 32 × MAXCHANNELS)
    text = nop_program(65, 65)
    assert judge(text, AZ).ok
    v = judge(text, RC)
    assert (v.status, v.rule, v.source) == ("refuses", "tb-id",
                                            "src/misc/msccl/msccl_parser.cc:422")


def test_microsoft_msccl_selects_in_place_or_out_of_place_exactly() -> None:
    text = TOOLS.read_text()  # inplace="1", no maxBytes: in-place calls below 128 MiB
    v = judge(text, MS)
    assert v.ok and v.calls[0].startswith("in-place calls") and "134217728" in v.calls[0]


@pytest.mark.parametrize("runtime", [AZ, RC, MS])
def test_exports_load_in_the_runtime_they_are_written_for(runtime: str) -> None:
    t = load_topology("ring:4")
    for coll in ("allgather", "reduce-scatter", "allreduce"):
        text = msccl_xml(collcert.schedule(t, coll), runtime=runtime)
        assert text.startswith("<algo ") and judge(text, runtime).ok
        assert collcert.audit(t, text, runtime=runtime).valid
    rs = msccl_xml(collcert.schedule(t, "reduce-scatter"), runtime=runtime)
    spelled = "reduce_scatter" if runtime == MS else "reducescatter"
    assert f'coll="{spelled}"' in rs


def test_audit_judges_the_file_as_its_runtime_would(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    topo = str(DATA / "formats" / "complete4_topology.json")
    assert main(["audit", topo, str(TOOLS)]) == 0  # the program's verdict, runtimes beside
    out = capsys.readouterr().out
    assert out.startswith("VALID") and f"runtime        : {AZ}: refuses" in out
    assert main(["audit", topo, str(TOOLS), "--runtime", AZ]) == 1
    out = capsys.readouterr().out
    assert out.startswith("INVALID") and "rule attr-minBytes" in out and "line 1" in out
    assert "msccl_parser.cc:773" in out
    assert main(["audit", topo, str(TOOLS), "--runtime", MS]) == 0
    capsys.readouterr()
    assert main(["audit", "ring:4", str(DATA / "formats" / "msccl-tools_allgather_ring_4gpu_"
                                          "inplace.xml"), "--runtime", "nccl"]) == 2
    assert "known: msccl-executor-nccl" in capsys.readouterr().err


def test_runtime_options_are_refused_where_they_mean_nothing(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["schedule", "ring:4", "--runtime", AZ, "-o", str(tmp_path / "a.json")]) == 2
    assert "--runtime applies to --format msccl-xml" in capsys.readouterr().err
    assert main(["schedule", "ring:4", "--format", "msccl-xml", "--in-place",
                 "-o", str(tmp_path / "a.xml")]) == 2
    assert "serves in-place and out-of-place calls both" in capsys.readouterr().err
    out = tmp_path / "ms.xml"
    assert main(["schedule", "ring:4", "--format", "msccl-xml", "--runtime", MS, "--in-place",
                 "-o", str(out)]) == 0
    assert 'inplace="1" outofplace="0"' in out.read_text()
    assert f"Runtime {MS}: loads it, for in-place calls" in capsys.readouterr().out


SWITCHED = ["switched_cycles", "switched", "boxes"]


def test_fuzz_every_export_loads_in_its_runtime_and_audits_at_its_stated_rate() -> None:
    """Property (collcert.fuzz): on random switch topologies, every collective's MSCCL
    export for every runtime passes that runtime's profile, and audits VALID at the rate
    the export states (the schedule's, or the slower rate export_rate names; alltoall: no
    faster than the flow's, and the CLI audits and names a slower one)."""
    checked = 0
    for seed in range(12):
        if checked >= 12:
            break
        t = random_topology(RandomSource(f"runtimes:{seed}"), max_nodes=5, kinds=SWITCHED,
                            capacities="small")
        for coll in ("allgather", "reduce-scatter", "allreduce", "broadcast", "reduce",
                     "alltoall"):
            runtime = (AZ, RC, MS)[(seed + len(coll)) % 3]
            try:
                if coll == "alltoall":
                    text, algbw = alltoall_msccl_xml(t, runtime=runtime)
                    stated = 1 / algbw
                else:
                    s = collcert.schedule(t, coll, root=t.compute_nodes[-1] if coll in (
                        "broadcast", "reduce") else None)
                    if max(p.k for p in s.phases) * t.num_compute > 40:
                        continue
                    text = msccl_xml(s, strict=False, runtime=runtime)
                    rate = export_rate(s, t)
                    stated = rate.export_time if rate.slower else s.time_per_unit
            except ScheduleError:
                continue  # beyond the executor's limits: said, nothing written
            assert judge(text, runtime).ok, (seed, coll, runtime)
            assert not re.match(r"\s*<\?xml", text)
            report = collcert.audit(t, text, runtime=runtime)
            assert report.valid, (seed, coll, report.reasons)
            assert report.time_per_unit is not None
            if coll == "alltoall":  # the flow's rate is the best; a slower program is what
                # `collcert schedule -c alltoall` audits and warns about before writing
                assert report.time_per_unit >= stated, (seed, coll)
            else:
                assert report.time_per_unit <= stated, (seed, coll)
            checked += 1
    assert checked >= 8
