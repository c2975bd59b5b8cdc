"""Red-team tests: inputs that are wrong but that a checker once accepted (issue 4).

One test per hole, named after what it catches. Each builds the smallest input
that shows the hole, by hand, and asserts the specific reason for rejecting it;
where useful it also checks that the corresponding correct input still passes.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from collcert import platforms
from collcert.auditing import audit
from collcert.certify.execution import msccl
from collcert.certify.forestcoll import check_optimum, check_schedule
from collcert.certify.model import InputError
from collcert.reference.model import ScheduleError

sys.path.insert(0, str(Path(__file__).parent))
from test_certify_msccl import ring_allgather  # noqa: E402


def _star() -> dict[str, Any]:
    """Compute nodes r, d, a around one multicast switch w, all links of capacity 1."""
    return {"format": "collcert-topology/1", "compute_nodes": ["r", "d", "a"],
            "switch_nodes": ["w"], "multicast_switches": ["w"],
            "links": [{"src": x, "dst": "w", "capacity": 1, "bidirectional": True}
                      for x in ("r", "d", "a")]}


def _one_tree(coll: str, edges: list[tuple[str, str, list[str]]]) -> dict[str, Any]:
    tree = {"root": "r", "multiplicity": 1,
            "edges": [{"src": s, "dst": d, "path": p} for s, d, p in edges]}
    return {"format": "collcert-schedule/1", "collective": coll, "root": "r",
            "phases": [{"collective": coll, "k": 1, "trees": [tree]}]}


def test_multicast_path_fed_only_by_its_own_subtree_is_rejected() -> None:
    # Broadcast from r as the tree r -> d -> a. Edge r -> d "multicasts" from w, and w gets
    # the data only from d's own path d -> w -> a: d waits for itself, r never sends.
    bad = _one_tree("broadcast", [("r", "d", ["w", "d"]), ("d", "a", ["d", "w", "a"])])
    v = check_schedule(_star(), bad)
    assert not v.ok
    text = " ".join(v.reasons)
    assert "'d' -> 'a'" in text and "cyclic" in text
    # the same tree fed from the root is fine, and w may then multicast onwards
    good = _one_tree("broadcast", [("r", "d", ["r", "w", "d"]), ("d", "a", ["w", "a"])])
    assert check_schedule(_star(), good).ok


def test_aggregating_path_into_its_own_ancestor_chain_is_rejected() -> None:
    # The mirror for reduce (in-tree a -> d -> r): d's contribution "aggregates" at w into
    # a's path, which ends at d; nothing ever reaches the root r.
    bad = _one_tree("reduce", [("d", "r", ["d", "w"]), ("a", "d", ["a", "w", "d"])])
    v = check_schedule(_star(), bad)
    assert not v.ok and "cyclic" in " ".join(v.reasons)
    good = _one_tree("reduce", [("d", "r", ["d", "w", "r"]), ("a", "d", ["a", "w"])])
    assert check_schedule(_star(), good).ok


def _skewed_allreduce_cert() -> tuple[dict[str, Any], dict[str, Any]]:
    # Not Eulerian (a sends 2, receives 3). Allgather: 1/x* = 2/3 (cut {a, b}: 2 nodes,
    # B⁺ = 3), but reduce-scatter (allgather on the transpose) needs 1/x = 1 (S = {b, c}
    # receives only 2). So RS+AG is not 2·(2/3)/N, whatever the flows say.
    topo = {"compute_nodes": ["a", "b", "c"],
            "links": [["a", "b", 1], ["a", "c", 1], ["b", "a", 1], ["b", "c", 2],
                      ["c", "a", 2], ["c", "b", 2]]}
    # flows at x = 3/2, amounts over multiplier 2, value 9/2 into each sink
    flows = [
        {"sink": "a", "x": "3/2", "multiplier": 2,
         "flow": [[None, "a", 3], [None, "b", 3], [None, "c", 3],
                  ["b", "a", 2], ["b", "c", 1], ["c", "a", 4]]},
        {"sink": "b", "x": "3/2", "multiplier": 2,
         "flow": [[None, "a", 3], [None, "b", 3], [None, "c", 3],
                  ["a", "b", 2], ["a", "c", 1], ["c", "b", 4]]},
        {"sink": "c", "x": "3/2", "multiplier": 2,
         "flow": [[None, "a", 3], [None, "b", 3], [None, "c", 3],
                  ["a", "c", 2], ["a", "b", 1], ["b", "c", 4]]},
    ]
    return topo, {"collective": "allreduce", "inv_x": "2/3", "cut": ["a", "b"], "flows": flows}


def test_optimum_on_a_non_eulerian_topology_is_rejected() -> None:
    topo, cert = _skewed_allreduce_cert()
    v = check_optimum(topo, cert)
    assert not v.ok and "not Eulerian" in " ".join(v.reasons)
    assert "'a' receives 3 but sends 2" in " ".join(v.reasons)
    v = check_optimum(topo, dict(cert, collective="allgather"))
    assert not v.ok and "not Eulerian" in " ".join(v.reasons)


def test_allreduce_certificate_with_weights_is_rejected() -> None:
    # weights would scale inv_x but rsag = 2·inv_x/N assumes N equal shards
    topo = {"compute_nodes": ["a", "b"], "links": [["a", "b", 1], ["b", "a", 1]]}
    flows = [{"sink": s, "x": 1, "flow": [[None, "a", 2], [None, "b", 2], [o, s, 2]]}
             for s, o in (("a", "b"), ("b", "a"))]
    cert = {"collective": "allreduce", "inv_x": 2, "cut": ["a"], "flows": flows,
            "weights": {"a": 2, "b": 2}}
    v = check_optimum(topo, cert)
    assert not v.ok and "weights" in " ".join(v.reasons)
    # the unweighted certificate (inv_x = 1, flows at x = 1) passes
    flows1 = [{"sink": s, "x": 1, "flow": [[None, "a", 1], [None, "b", 1], [o, s, 1]]}
              for s, o in (("a", "b"), ("b", "a"))]
    ok = check_optimum(topo, {"collective": "allreduce", "inv_x": 1, "cut": ["a"],
                              "flows": flows1})
    assert ok.ok and ok.facts["algbw"] == 1


def _int_topo_cert(bad_tail: object) -> tuple[dict[str, Any], dict[str, Any]]:
    topo = {"compute_nodes": [0, 1], "links": [[0, 1, 1], [1, 0, 1]]}
    cert = {"collective": "allgather", "inv_x": 1, "cut": [0],
            "flows": [{"sink": 0, "x": 1, "flow": [[None, 1, 1], [None, 0, 1],
                                                    [bad_tail, 0, 1]]},
                      {"sink": 1, "x": 1, "flow": [[None, 0, 1], [None, 1, 1], [0, 1, 1]]}]}
    return topo, cert


def test_flow_arc_naming_a_node_by_a_boolean_or_float_is_rejected() -> None:
    # True == 1 and 1.0 == 1 in Python, so a dict lookup took them for node 1
    for bad in (True, 1.0):
        topo, cert = _int_topo_cert(bad)
        with pytest.raises(InputError, match="not a node"):
            check_optimum(topo, cert)
    topo, cert = _int_topo_cert(1)
    assert check_optimum(topo, cert).ok
    topo, cert = _int_topo_cert("1")  # string form of an id is documented as accepted
    assert check_optimum(topo, cert).ok


def test_msccl_chunks_not_matching_nchunksperloop_are_rejected() -> None:
    # a correct 4-rank ring allgather of 4 chunks, but declared as 16 chunks per loop:
    # each chunk would count as 1/16 of the data, understating the traffic 4 times
    text = ring_allgather(4).replace('nchunksperloop="4"', 'nchunksperloop="16"')
    res = msccl.simulate(msccl.read(text))
    assert not res.verdict.ok and "nchunksperloop" in " ".join(res.verdict.reasons)
    assert msccl.simulate(msccl.read(ring_allgather(4))).verdict.ok


def test_msccl_reduce_scatter_that_leaves_input_chunks_unreduced_is_rejected() -> None:
    # 2 ranks, 4 input chunks each, but only 1 output chunk per rank: chunks 2 and 3 are
    # never reduced anywhere, yet traffic was counted against all of M
    head = ('<algo name="rs" nchunksperloop="4" ngpus="2" coll="reduce_scatter" inplace="0">')
    gpus = []
    for g in (0, 1):
        p = 1 - g
        gpus.append(
            f'<gpu id="{g}" i_chunks="4" o_chunks="1" s_chunks="1">'
            f'<tb id="0" send="{p}" recv="{p}" chan="0">'
            f'<step s="0" type="s" srcbuf="i" srcoff="{p}" dstbuf="s" dstoff="0" cnt="1" '
            'depid="-1" deps="-1" hasdep="0"/>'
            f'<step s="1" type="r" srcbuf="i" srcoff="0" dstbuf="s" dstoff="0" cnt="1" '
            'depid="-1" deps="-1" hasdep="1"/>'
            '</tb><tb id="1" send="-1" recv="-1" chan="0">'
            f'<step s="0" type="cpy" srcbuf="i" srcoff="{g}" dstbuf="o" dstoff="0" cnt="1" '
            'depid="-1" deps="-1" hasdep="0"/>'
            '<step s="1" type="re" srcbuf="s" srcoff="0" dstbuf="o" dstoff="0" cnt="1" '
            'depid="0" deps="1" hasdep="0"/>'
            '</tb></gpu>')
    text = head + "".join(gpus) + "</algo>"
    res = msccl.simulate(msccl.read(text))
    assert not res.verdict.ok and "output chunks per rank" in " ".join(res.verdict.reasons)
    # with 2 input chunks per rank (M = 2 chunks) the same program is a correct reduce-scatter
    good = text.replace('nchunksperloop="4"', 'nchunksperloop="2"').replace(
        'i_chunks="4"', 'i_chunks="2"')
    ok = msccl.simulate(msccl.read(good))
    assert ok.verdict.ok, ok.verdict.reasons


def test_msccl_two_threadblocks_sharing_a_connection_are_rejected() -> None:
    # gpu 0 sends its two chunks from two threadblocks on the same connection (peer 1,
    # channel 0): which message gpu 1 receives first is up to the runtime, so the
    # simulation's one order proves nothing. MSCCL itself forbids this.
    def gpu(g: int, tbs: str) -> str:
        return f'<gpu id="{g}" i_chunks="2" o_chunks="4" s_chunks="0">{tbs}</gpu>'

    def st(s: int, kind: str, sb: str, so: int, db: str, do: int) -> str:
        return (f'<step s="{s}" type="{kind}" srcbuf="{sb}" srcoff="{so}" dstbuf="{db}" '
                f'dstoff="{do}" cnt="1" depid="-1" deps="-1" hasdep="0"/>')

    local = [st(0, "cpy", "i", 0, "o", 0), st(1, "cpy", "i", 1, "o", 1)]
    g0 = gpu(0, '<tb id="0" send="1" recv="-1" chan="0">' + st(0, "s", "i", 0, "o", 0)
             + '</tb><tb id="1" send="1" recv="-1" chan="0">' + st(0, "s", "i", 1, "o", 0)
             + '</tb><tb id="2" send="-1" recv="1" chan="0">' + st(0, "r", "i", 0, "o", 2)
             + st(1, "r", "i", 0, "o", 3) + '</tb><tb id="3" send="-1" recv="-1" chan="0">'
             + "".join(local) + "</tb>")
    g1 = gpu(1, '<tb id="0" send="0" recv="0" chan="0">' + st(0, "s", "i", 0, "o", 0)
             + st(1, "s", "i", 1, "o", 0) + st(2, "r", "i", 0, "o", 0)
             + st(3, "r", "i", 0, "o", 1) + '</tb><tb id="1" send="-1" recv="-1" chan="0">'
             + st(0, "cpy", "i", 0, "o", 2) + st(1, "cpy", "i", 1, "o", 3) + "</tb>")
    text = ('<algo name="x" nchunksperloop="4" ngpus="2" coll="allgather" inplace="0">'
            + g0 + g1 + "</algo>")
    with pytest.raises(InputError, match="both send to gpu 1 on channel 0"):
        msccl.read(text)
    # on separate channels the same program is well defined and correct
    fixed = text.replace('<tb id="1" send="1" recv="-1" chan="0">',
                         '<tb id="1" send="1" recv="-1" chan="1">', 1)
    fixed = fixed.replace(st(1, "r", "i", 0, "o", 3) + "</tb>", "</tb>"
                          '<tb id="4" send="-1" recv="1" chan="1">'
                          + st(0, "r", "i", 0, "o", 3) + "</tb>", 1)
    fixed = fixed.replace(st(1, "s", "i", 1, "o", 0) + st(2, "r", "i", 0, "o", 0)
                          + st(3, "r", "i", 0, "o", 1) + "</tb>",
                          st(1, "r", "i", 0, "o", 0) + "</tb>"
                          '<tb id="2" send="0" recv="0" chan="1">'
                          + st(0, "s", "i", 1, "o", 0) + st(1, "r", "i", 0, "o", 1) + "</tb>", 1)
    res = msccl.simulate(msccl.read(fixed))
    assert res.verdict.ok, res.verdict.reasons


def _race_program(gpu0_waits: bool) -> str:
    """2-rank allgather: tb 0 of each gpu swaps input chunks into scratch, tb 1 copies
    input and scratch to the output. Only a dependency (depid/deps) makes tb 1 wait for
    tb 0's receive; gpu 1 always has it, gpu 0 only if ``gpu0_waits``."""
    def st(s: int, kind: str, sb: str, so: int, db: str, do: int, depid: int = -1,
           deps: int = -1, hasdep: int = 0) -> str:
        return (f'<step s="{s}" type="{kind}" srcbuf="{sb}" srcoff="{so}" dstbuf="{db}" '
                f'dstoff="{do}" cnt="1" depid="{depid}" deps="{deps}" hasdep="{hasdep}"/>')

    def gpu(g: int, waits: bool) -> str:
        dep = (0, 1) if waits else (-1, -1)
        return (f'<gpu id="{g}" i_chunks="1" o_chunks="2" s_chunks="1">'
                f'<tb id="0" send="{1 - g}" recv="{1 - g}" chan="0">'
                + st(0, "s", "i", 0, "o", 0) + st(1, "r", "i", 0, "s", 0, hasdep=1) + "</tb>"
                '<tb id="1" send="-1" recv="-1" chan="0">'
                + st(0, "cpy", "i", 0, "o", g) + st(1, "cpy", "s", 0, "o", 1 - g, *dep)
                + "</tb></gpu>")

    # gpu 1 listed first, so the simulation happens to run gpu 0's receive before its copy
    return ('<algo name="race" nchunksperloop="2" ngpus="2" coll="allgather" inplace="0">'
            + gpu(1, True) + gpu(0, gpu0_waits) + "</algo>")


def test_msccl_read_racing_an_unordered_write_is_rejected() -> None:
    # gpu 0's tb 1 copies scratch[0] with nothing making it wait for tb 0's receive into
    # scratch[0]: threadblocks run concurrently, so it may copy before the data arrives.
    res = msccl.simulate(msccl.read(_race_program(gpu0_waits=False)))
    assert not res.verdict.ok
    text = " ".join(res.verdict.reasons)
    assert "gpu 0 tb 1 step 1" in text and "race" in text and "tb 0 step 1" in text
    res = msccl.simulate(msccl.read(_race_program(gpu0_waits=True)))
    assert res.verdict.ok, res.verdict.reasons


def test_msccl_write_racing_an_unordered_read_is_rejected() -> None:
    # gpu 0 stages its chunk in o[1]; tb 0 sends it from there while tb 2 receives the peer's
    # chunk into the same o[1]. Nothing orders the receive after the send, so the peer may
    # get its own chunk back; the simulation just happens to run the send first.
    def st(s: int, kind: str, sb: str, so: int, db: str, do: int, depid: int = -1,
           deps: int = -1, hasdep: int = 0) -> str:
        return (f'<step s="{s}" type="{kind}" srcbuf="{sb}" srcoff="{so}" dstbuf="{db}" '
                f'dstoff="{do}" cnt="1" depid="{depid}" deps="{deps}" hasdep="{hasdep}"/>')

    def program(recv_waits: bool) -> str:
        dep = (0, 0) if recv_waits else (-1, -1)
        g0 = ('<gpu id="0" i_chunks="1" o_chunks="2" s_chunks="0">'
              '<tb id="0" send="1" recv="-1" chan="0">'
              + st(0, "s", "o", 1, "o", 0, 1, 0, hasdep=1)
              + '</tb><tb id="1" send="-1" recv="-1" chan="0">'
              + st(0, "cpy", "i", 0, "o", 1, hasdep=1)
              + st(1, "cpy", "i", 0, "o", 0) + '</tb><tb id="2" send="-1" recv="1" chan="0">'
              + st(0, "r", "i", 0, "o", 1, *dep) + "</tb></gpu>")
        g1 = ('<gpu id="1" i_chunks="1" o_chunks="2" s_chunks="0">'
              '<tb id="0" send="0" recv="0" chan="0">' + st(0, "s", "i", 0, "o", 0)
              + st(1, "r", "i", 0, "o", 0) + '</tb><tb id="1" send="-1" recv="-1" chan="0">'
              + st(0, "cpy", "i", 0, "o", 1) + "</tb></gpu>")
        return ('<algo name="war" nchunksperloop="2" ngpus="2" coll="allgather" inplace="0">'
                + g0 + g1 + "</algo>")

    res = msccl.simulate(msccl.read(program(recv_waits=False)))
    assert not res.verdict.ok
    text = " ".join(res.verdict.reasons)
    assert "gpu 0 tb 2 step 0" in text and "race" in text and "tb 0 step 0" in text
    res = msccl.simulate(msccl.read(program(recv_waits=True)))
    assert res.verdict.ok, res.verdict.reasons


def test_broadcast_certificate_with_zero_algbw_is_an_input_error_not_a_crash() -> None:
    # two separate rings: the cut {a, b} has B⁺ = 0, flows of value 0 "reach" c and d, and
    # algbw 0 made time_per_unit = 1/0 raise ZeroDivisionError (a traceback in the audit)
    topo = {"compute_nodes": ["a", "b", "c", "d"],
            "links": [["a", "b", 1], ["b", "a", 1], ["c", "d", 1], ["d", "c", 1]]}
    cert = {"collective": "broadcast", "root": "a", "algbw": 0, "cut": ["a", "b"],
            "flows": [{"source": "a", "sink": x, "flow": []} for x in "bcd"]}
    with pytest.raises(InputError, match="must be positive"):
        check_optimum(topo, cert)


def test_audit_ranks_naming_a_node_by_a_boolean_is_rejected() -> None:
    # platforms.ring has integer ids; a JSON true equals 1 in a dict look-up
    t = platforms.ring(4)
    with pytest.raises(ScheduleError, match="not a compute node"):
        audit(t, ring_allgather(4), ranks=[0, True, 2, 3])
    assert audit(t, ring_allgather(4), ranks=[0, 1, 2, 3]).valid


def test_forestcoll_allreduce_with_phases_in_the_wrong_order_is_refused_clearly() -> None:
    # the reader assigned phases by position and ignored each <algo>'s own collective, so
    # allgather-then-reduce-scatter was read as out-trees called in-trees
    from collcert.certify.forestcoll import forestcoll_xml

    algo = ('<algo nchunkspernode="1" collective="{c}"><tree root="a" nchunks="1">'
            '<send src="{s}" dst="{d}"/></tree><tree root="b" nchunks="1">'
            '<send src="{t}" dst="{e}"/></tree></algo>')
    ag = algo.format(c="allgather", s="a", d="b", t="b", e="a")
    rs = algo.format(c="reduce-scatter", s="b", d="a", t="a", e="b")
    with pytest.raises(InputError, match="says collective='allgather', but a allreduce "
                                         "schedule needs reduce-scatter then allgather"):
        forestcoll_xml(f'<schedule collective="allreduce">{ag}{rs}</schedule>')
    good = forestcoll_xml(f'<schedule collective="allreduce">{rs}{ag}</schedule>')
    topo = {"compute_nodes": ["a", "b"], "links": [["a", "b", 1], ["b", "a", 1]]}
    assert check_schedule(topo, good).ok


def test_integral_float_beyond_2_to_53_is_refused() -> None:
    # json reads 12345678901234567891.0 as the float 12345678901234567168.0: an integral
    # float that is not the number written, so a claim could match only by rounding
    import json

    from collcert.certify.model import number

    rounded = json.loads("12345678901234567891.0")
    assert int(rounded) != 12345678901234567891
    with pytest.raises(InputError, match="binary float"):
        number(rounded, "claimed algbw")
    assert number(3.0, "x") == 3 and number(float(2**53), "x") == 2**53
