"""The hostile corpus: every bad input a new user (or an attacker) can hand the CLI.

Each case is one command line run through ``collcert.cli.main`` and must end with
exit 2, a message on stderr that names the problem, and no traceback, within 10
seconds: huge and tiny exponents, NaN and infinities, 2-million-digit decimals, deep
nesting, entity expansion, binary data, devices, absurd sizes (platforms, files,
N, --size, LPs), option values, and files of the wrong kind, for every command
(optimum, schedule, audit, check, draw, prove, fuzz, reduce-tree, broadcast-steady,
smoke). The cases run in a few subprocesses (tests/hostile_driver.py: one fresh
``main(argv)`` per case, its own stdin and a 10-second alarm), each under a 1.5 GiB
address-space limit (``RLIMIT_AS``), which also fixes collcert's memory budget
(``collcert.certify.model.files.memory_budget``), so the size refusals do not depend on the
machine; starting Python once per group, not once per case, keeps the file fast on a
busy machine.

(The in-process tests of the same mechanisms are in tests/test_bad_input.py.)
"""

from __future__ import annotations

import importlib.util
import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

# one worker runs the whole module under pytest-xdist (its fixture runs every case once)
pytestmark = pytest.mark.xdist_group("hostile_corpus")

TIMEOUT = 10
DRIVER = Path(__file__).with_name("hostile_driver.py")
MEMORY = 3 << 29  # 1.5 GiB of address space: a refusal must come before any big allocation

PRIMES: list[int] = []
_n = 2
while len(PRIMES) < 3000:  # the first 3,000 primes, by trial division (independent of sympy)
    if all(_n % p for p in PRIMES if p * p <= _n):
        PRIMES.append(_n)
    _n += 1

LAUGHS = ('<?xml version="1.0"?>\n<!DOCTYPE lolz [\n <!ENTITY lol "lol">\n'
          + "".join(f' <!ENTITY lol{i} "{("&lol" + str(i - 1) + ";") * 10}">\n'
                    for i in range(1, 10)).replace("&lol0;", "&lol;")
          + ']>\n<algo nchunkspernode="1"><tree root="&lol9;"/></algo>\n')
EXTERNAL = ('<?xml version="1.0"?><!DOCTYPE a [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
            '<algo nchunkspernode="1"><tree root="&x;"/></algo>')


def _two_nodes(capacity: str) -> str:
    return ('{"compute_nodes": [0, 1], "links": [{"src": 0, "dst": 1, "capacity": '
            + capacity + ', "bidirectional": true}]}')


# name -> file content (str or bytes); written once per session into a folder
FILES: dict[str, str | bytes] = {
    "huge_exp.json": _two_nodes('"1e999999999"'),
    "tiny_exp.json": _two_nodes('"1e-999999999"'),
    "huge_exp_number.json": _two_nodes("1e999999999"),
    "nan.json": _two_nodes("NaN"),
    "infinity.json": _two_nodes("-Infinity"),
    "nan_string.json": _two_nodes('"nan"'),
    "digits_2m.json": _two_nodes('"1.' + "3" * 2_000_000 + '"'),
    "digits_2m_number.json": _two_nodes("1." + "3" * 2_000_000),
    "int_5000.json": _two_nodes("9" * 5000),
    "ratio_huge.json": _two_nodes('"1/' + "7" * 400 + '"'),
    "primes_3000.json": json.dumps({"compute_nodes": [0, 1], "links": [
        {"src": 0, "dst": 1, "capacity": f"1/{p}", "bidirectional": True} for p in PRIMES]}),
    "nested.json": "[" * 200_000,
    "nested_objects.json": '{"a": ' * 100_000 + "1" + "}" * 100_000,
    "binary.json": bytes(range(256)) * 40,
    "not_utf8.json": b'{"compute_nodes": ["\xff\xfe"], "links": []}',
    "empty.json": "",
    "nodes_200k.json": json.dumps({"compute_nodes": list(range(200_000)), "links": [
        [i, (i + 1) % 200_000, 1] for i in range(200_000)]}, separators=(",", ":")),
    "ranks.bin": bytes(range(256)) * 4,
    "words.txt": "ring:4 is a platform name, not a file's content\n",
    "laughs.xml": LAUGHS,
    "external.xml": EXTERNAL,
    "deep.xml": "<x>" * 100_000 + "</x>" * 100_000,
    "xml_bloat.xml": "<algo>" + "<x/>" * 4_900_000 + "</algo>",  # 20 MB; 1.2 GB as a tree
    "million_trees.xml": '<algo nchunkspernode="1">' + '<tree root="0"/>' * 1_000_000
                         + "</algo>",
}

def _one_port(links: list[tuple[str, str, object]], nodes: str = "sabc") -> str:
    return json.dumps({"format": "collcert-topology/1", "port_model": "one-port",
                       "compute_nodes": list(nodes),
                       "links": [{"src": a, "dst": b, "cost": c} for a, b, c in links]})


FILES.update({
    # 10 million empty objects: 30 MB of text that would parse to about 700 MB
    "bloat.json": '{"x": [' + "{}," * 10_000_000 + "{}]}",
    "topo4.json": json.dumps({"compute_nodes": [0, 1, 2, 3], "links": [
        {"src": i, "dst": (i + 1) % 4, "capacity": 1, "bidirectional": True}
        for i in range(4)]}),
    "reduction300.json": json.dumps({"format": "collcert-reduction/1", "n": 300}),
    "reduction_nan.json": json.dumps({"format": "collcert-reduction/1", "n": 2,
                                      "transfer": "1", "compute": "1", "parent": [None, 1],
                                      "send_time": [None, "nan"]}),
    "reduction_cut.json": '{"format": "collcert-reduction/1", "n": 8, "parent": [null, 1',
    "lp_free.json": json.dumps({"lp": {"objective": {}, "rows": [], "free": 5},
                                "primal": {}, "dual": {}}),
    "fig1.json": _one_port([("s", "a", 1), ("s", "b", 1), ("a", "b", 1), ("b", "a", 1),
                            ("a", "c", "1/2")]),
    "steady_t0.json": json.dumps({"format": "collcert-steady-broadcast/1", "source": "s",
                                  "lp": {"T_star": "0"}}),
    "oneport_nan.json": _one_port([("s", "a", "NaN"), ("a", "b", 1), ("b", "c", 1)]),
    "oneport_zero.json": _one_port([("s", "a", 0), ("a", "b", 1), ("b", "c", 1)]),
    "oneport_huge.json": _one_port([("s", "a", "1e999999999"), ("a", "b", 1), ("b", "c", 1)]),
    "oneport_cycle.json": _one_port([("s", "a", 1), ("a", "b", 1), ("b", "a", 1),
                                     ("b", "c", 1)]),
    "oneport_unreached.json": _one_port([("s", "a", 1), ("b", "c", 1)]),
})
# costs 1/p for 400 primes p: exact LPs over them would need numbers of thousands of digits
FILES["oneport_primes.json"] = json.dumps({
    "port_model": "one-port", "compute_nodes": ["s"] + [f"n{i}" for i in range(400)],
    "links": [{"src": "s", "dst": f"n{i}", "cost": f"1/{p}"} for i, p in enumerate(PRIMES[:400])]
    + [{"src": f"n{i}", "dst": "s", "cost": 1} for i in range(400)]})

RING4 = {"format": "collcert-schedule/1", "collective": "allgather",
         "compute_nodes": [0, 1, 2, 3],
         "phases": [{"collective": "allgather", "k": 1, "trees": [
             {"root": r, "multiplicity": 1,
              "edges": [{"src": (r + i) % 4, "dst": (r + i + 1) % 4,
                         "path": [(r + i) % 4, (r + i + 1) % 4]} for i in range(3)]}
             for r in range(4)]}]}
FILES["ring4_chains.json"] = json.dumps(RING4)  # a valid (not optimal) ring:4 allgather
FILES["nccl-ring.json"] = FILES["topo4.json"]  # issue 33 row 3: compare DIR/nccl-ring.json
FILES["sym_order_string.json"] = json.dumps({  # issue 33 row 11: the schema says integer
    **RING4, "symmetry": {"generators": [[[0, 1], [1, 2], [2, 3], [3, 0]]], "order": "4",
                          "representatives": [0]},
    "phases": [{**RING4["phases"][0], "trees": RING4["phases"][0]["trees"][:1]}]})
FILES["reduction_n_string.json"] = json.dumps({"format": "collcert-reduction/1", "n": "2",
                                               "transfer": "1", "compute": "1",
                                               "parent": [None, 0]})
FILES["chain100.json"] = json.dumps({  # a broadcast down a chain of 100 ranks
    "format": "collcert-schedule/1", "collective": "broadcast", "root": 0,
    "compute_nodes": list(range(100)),
    "phases": [{"collective": "broadcast", "k": 1, "trees": [{"root": 0, "multiplicity": 1,
                "edges": [{"src": i, "dst": i + 1, "path": [i, i + 1]} for i in range(99)]}]}]})
_bundle: dict[str, object] = {"kind": "lp", "lp": {"objective": {}, "rows": []},
                              "primal": {}, "dual": {}}
for _ in range(300):  # bundles inside bundles: the checker would recurse 900 frames deep
    _bundle = {"certificates": {"a": _bundle}}
FILES["nested_bundles.json"] = json.dumps(_bundle)
# issue 24 rows 3, 4: a k of 401 digits; a tree that sends one edge twice (100,000 times)
FILES["k400.json"] = json.dumps({**RING4, "phases": [{**RING4["phases"][0], "k": 10**400}]})
_dup = json.loads(json.dumps(RING4))
_dup["phases"][0]["trees"][0]["edges"] += [_dup["phases"][0]["trees"][0]["edges"][0]] * 100_000
FILES["dup_edges.json"] = json.dumps(_dup)

SCHEDULE = {"format": "collcert-schedule/1", "collective": "allgather",
            "compute_nodes": [0, 1, 2, 3], "phases": [{"collective": "allgather", "k": 1,
                                                       "trees": []}]}
FILES["no_compute_nodes.json"] = json.dumps({k: v for k, v in SCHEDULE.items()
                                             if k != "compute_nodes"})
FILES["ring4_schedule.json"] = json.dumps(SCHEDULE)
FILES["issue22.json"] = (Path(__file__).parent / "data" / "topologies" / "issue22.json").read_text()


def _ring_of(ids: list[str]) -> str:
    return json.dumps({"compute_nodes": ids, "links": [
        {"src": ids[i], "dst": ids[(i + 1) % len(ids)], "capacity": 1, "bidirectional": True}
        for i in range(len(ids))]})


# issue 24 row 5: node ids the ForestColl XML cannot carry; row 6: a non-Eulerian graph
FILES["ids_pq.json"] = _ring_of(["p", "q", "p,q"])
FILES["ids_nul.json"] = _ring_of(["a\u0000b", "c", "d"])
FILES["arabic_digits.json"] = _two_nodes('"\u0663"')  # '٣': int() reads it as 3
FILES["pipe.json"] = json.dumps({"format": "collcert-pipe-broadcast/1", "source": "s"})
FILES["not_eulerian.json"] = json.dumps({"compute_nodes": [0, 1, 2], "links": [
    [0, 1, 1], [1, 2, 1], [2, 0, 1], [0, 2, 1]]})

# issue 32: nccl-tests logs (collcert measured), broken as logs break; row on line 3
_NCCL_HEAD = ("#       size         count      type   redop    root     time   algbw   busbw "
              "#wrong     time   algbw   busbw #wrong\n#        (B)    (elements)\n")
_NCCL_ROW = ("     1048576        262144     float     sum      -1    {t}    {a}    1.57      0"
             "    10.00  104.86  157.29      0\n")
FILES.update({
    "nccl_cut.log": _NCCL_HEAD + _NCCL_ROW.format(t="10.00", a="104.86")[:60] + "\n",
    "nccl_nan.log": _NCCL_HEAD + _NCCL_ROW.format(t="10.00", a="nan"),
    "nccl_negative.log": _NCCL_HEAD + _NCCL_ROW.format(t="-10.00", a="104.86"),
    "nccl_huge.log": _NCCL_HEAD + _NCCL_ROW.format(t="10.00", a="104.86").replace(
        "     1048576", "1" + "0" * 400, 1),
    "nccl_binary.log": _NCCL_HEAD.encode() + bytes(range(256)) * 8,
    # red team R1: a row of 0 bytes, or of 0 µs, with a rate; more rows than are read
    "nccl_zero_bytes.log": _NCCL_HEAD + _NCCL_ROW.format(t="10.00", a="104.86").replace(
        "     1048576", "           0", 1),
    "nccl_zero_time.log": _NCCL_HEAD + _NCCL_ROW.format(t=" 0.00", a="104.86"),
    "nccl_rows_10001.log": _NCCL_HEAD + _NCCL_ROW.format(t="10.00", a="104.86") * 10_001,
})

# issue 30: switches that add, declared wrongly (a compute node; rates 0, NaN, 10^400; a
# rate on a switch that does not add)
def _star(**extra: object) -> str:
    return json.dumps({"compute_nodes": ["a", "b"], "switch_nodes": ["w"], **extra,
                       "links": [{"src": v, "dst": "w", "capacity": 1, "bidirectional": True}
                                 for v in "ab"]})


FILES.update({
    "reducing_compute.json": _star(reducing_switches=["a"]),
    "reduction_rate_zero.json": _star(reducing_switches=["w"], reduction_rates={"w": "0"}),
    "reduction_rate_nan.json": _star(reducing_switches=["w"], reduction_rates={"w": "NaN"}),
    "reduction_rate_huge.json": _star(reducing_switches=["w"], reduction_rates={"w": "1e400"}),
    "reduction_rate_forward.json": _star(reduction_rates={"w": "1"}),
    "nvls_compute.json": _star(nvls_switches=["b"]),
    "nvls_and_sharp.json": _star(reducing_switches=["w"], nvls_switches=["w"]),
})

# (id, argv, stdin: None | file name in FILES | a device path, words stderr must contain)
CASES = [
    # numbers in topology files
    ("huge-exponent", ["optimum", "{huge_exp.json}"], None, ["capacity", "too large"]),
    ("tiny-exponent", ["optimum", "{tiny_exp.json}"], None, ["capacity", "decimal places"]),
    ("huge-exponent-number", ["optimum", "{huge_exp_number.json}"], None, ["too large"]),
    ("nan", ["optimum", "{nan.json}"], None, ["not a finite number"]),
    ("infinity", ["optimum", "{infinity.json}"], None, ["not a finite number"]),
    ("nan-string", ["optimum", "{nan_string.json}"], None, ["not a finite number"]),
    ("2m-digit-decimal", ["optimum", "{digits_2m.json}"], None, ["too long"]),
    ("2m-digit-number", ["optimum", "{digits_2m_number.json}"], None, ["significant digits"]),
    ("5000-digit-integer", ["optimum", "{int_5000.json}"], None, ["4300 digits"]),
    ("400-digit-denominator", ["optimum", "{ratio_huge.json}"], None, ["too large"]),
    ("3000-prime-denominators", ["optimum", "{primes_3000.json}"], None,
     ["least common multiple", "1024 bits"]),
    # structure and bytes
    ("nested-200k", ["optimum", "{nested.json}"], None, ["nested too deeply"]),
    ("nested-objects", ["schedule", "{nested_objects.json}"], None, ["nested too deeply"]),
    ("binary-file", ["optimum", "{binary.json}"], None, ["NUL byte", "binary"]),
    ("not-utf8", ["optimum", "{not_utf8.json}"], None, ["UTF-8"]),
    ("empty-file", ["optimum", "{empty.json}"], None, ["not valid JSON"]),
    ("dev-zero", ["optimum", "/dev/zero"], None, ["NUL byte"]),
    ("directory", ["optimum", "{.}"], None, ["directory"]),
    ("stdin-nested", ["optimum", "-"], "nested.json", ["nested too deeply"]),
    ("stdin-binary", ["optimum", "-"], "binary.json", ["stdin", "binary"]),
    ("stdin-dev-zero", ["optimum", "-"], "/dev/zero", ["stdin", "NUL byte"]),
    ("stdin-empty", ["optimum", "-"], "/dev/null", ["stdin is empty"]),
    ("stdin-words", ["prove", "-"], "words.txt", ["stdin", "not a JSON topology"]),
    ("stdin-topology-laughs", ["optimum", "-"], "laughs.xml", ["stdin", "DOCTYPE"]),
    # sizes
    ("ring-1e8", ["optimum", "ring:100000000"], None, ["100000000 compute nodes", "at most"]),
    ("fat-tree-1000", ["optimum", "fat_tree:1000"], None, ["250000000 compute nodes"]),
    ("dgx-a100-100000", ["schedule", "dgx_a100:100000"], None, ["800000 compute nodes"]),
    ("torus-1e10", ["optimum", "torus:100000x100000"], None, ["10000000000 compute nodes"]),
    ("hypercube-200", ["optimum", "hypercube:200"], None, ["about 1.6e+60 compute nodes"]),
    ("ring-20000-memory", ["optimum", "ring:20000", "--no-symmetry"], None,
     ["one max-flow witness per compute node", "of memory", "COLLCERT_MAX_MEMORY"]),
    # 200,000 nodes fit by the orbits of a symmetry; without one, refused before the build
    ("file-200k-nodes", ["optimum", "{nodes_200k.json}", "--no-symmetry"], None,
     ["200000 compute nodes", "one max-flow witness per compute node", "of memory"]),
    ("platform-5000-digits", ["optimum", "ring:" + "9" * 5000], None, ["5000 digits"]),
    ("prove-fixed-k-1e9", ["prove", "ring:4", "--fixed-k", "1000000000"], None,
     ["MAX_PROVE_TREE_UNITS"]),
    ("prove-big", ["prove", "ring:2500"], None, ["beyond what Z3 can prove"]),
    # options
    ("timeout-nan", ["prove", "ring:4", "--timeout", "nan"], None, ["--timeout", "finite"]),
    ("claim-huge", ["prove", "ring:4", "--claim", "1e999999999"], None, ["--claim", "too large"]),
    ("weights-huge", ["schedule", "ring:4", "--weights", "1,1e99999999,1,1"], None,
     ["weight", "too large"]),
    ("claim-algbw-huge", ["audit", "ring:4", "{ring4_schedule.json}", "--claim-algbw",
                          "1e999999999"], None, ["--claim-algbw", "exponent"]),
    ("fuzz-count", ["fuzz", "generate", "-n", "-1", "-o", "{g1}"], None, ["--count"]),
    ("fuzz-max-nodes", ["fuzz", "check", "--max-nodes", "1000000000"], None, ["--max-nodes"]),
    # schedules and their side files
    ("laughs", ["audit", "ring:4", "{laughs.xml}"], None, ["DOCTYPE"]),
    ("external-entity", ["audit", "ring:4", "{external.xml}"], None, ["DOCTYPE"]),
    ("stdin-laughs", ["audit", "ring:4", "-"], "laughs.xml", ["stdin", "DOCTYPE"]),
    ("deep-xml", ["audit", "ring:4", "{deep.xml}", "--format", "forestcoll-xml"], None,
     ["nested deeper"]),
    ("xml-bloat", ["audit", "ring:4", "{xml_bloat.xml}"], None,
     ["xml_bloat.xml", "XML elements would take about"]),
    ("million-trees", ["audit", "ring:4", "{million_trees.xml}"], None, ["<tree> elements"]),
    ("schedule-stdin-binary", ["audit", "ring:4", "-"], "binary.json", ["stdin", "binary"]),
    ("schedule-no-compute-nodes", ["audit", "ring:4", "{no_compute_nodes.json}"], None,
     ["compute_nodes"]),
    ("both-stdin", ["audit", "-", "-"], "/dev/null", ["cannot both be '-'"]),
    ("ranks-missing", ["audit", "ring:4", "{ring4_schedule.json}", "--ranks", "{nope.txt}"],
     None, ["--ranks", "no such file"]),
    ("ranks-binary", ["audit", "ring:4", "{ring4_schedule.json}", "--ranks", "{ranks.bin}"],
     None, ["--ranks", "binary"]),
    # JSON whose parsed form cannot fit (10 million {}), given to every reader
    ("bloat-topology", ["optimum", "{bloat.json}"], None, ["bloat.json", "JSON with about"]),
    ("bloat-schedule", ["audit", "ring:4", "{bloat.json}"], None,
     ["bloat.json", "JSON with about"]),
    ("bloat-certificate", ["check", "{topo4.json}", "{bloat.json}"], None,
     ["bloat.json", "JSON with about"]),
    ("bloat-reduction", ["reduce-tree", "--check", "{bloat.json}"], None,
     ["bloat.json", "JSON with about"]),
    ("bloat-stdin-platform", ["broadcast-steady", "-"], "bloat.json", ["JSON with about"]),
    # collcert check
    ("check-dev-zero", ["check", "{topo4.json}", "/dev/zero"], None, ["NUL byte"]),
    ("check-stdin-random", ["check", "{topo4.json}", "-"], "/dev/urandom",
     ["certificate on stdin", "binary"]),
    ("check-stdin-twice", ["check", "-", "-"], "topo4.json", ["cannot both be '-'"]),
    ("check-topology-as-certificate", ["check", "{topo4.json}", "{topo4.json}"], None,
     ["topo4.json", "this is a topology"]),
    ("check-truncated", ["check", "{topo4.json}", "{reduction_cut.json}"], None,
     ["not valid JSON"]),
    ("check-lp-free", ["check", "{topo4.json}", "{lp_free.json}"], None, ["'free'"]),
    ("check-nested-bundles", ["check", "{topo4.json}", "{nested_bundles.json}"], None,
     ["itself a bundle"]),
    ("check-steady-zero-period", ["check", "{fig1.json}", "{steady_t0.json}"], None,
     ["T_star", "positive"]),
    # reduce-tree
    ("reduce-n-memory", ["reduce-tree", "10000000", "-d", "1", "-c", "1"], None,
     ["10000000 machines", "of memory"]),
    ("reduce-n-100000-digits", ["reduce-tree", "1" + "0" * 100_000, "-d", "1", "-c", "1"],
     None, ["argument N", "too long"]),
    ("reduce-cost-nan", ["reduce-tree", "8", "-d", "nan", "-c", "1"], None,
     ["--transfer", "not a finite number"]),
    ("reduce-cost-exponent", ["reduce-tree", "8", "-d", "1", "-c", "1e-999999999"], None,
     ["--compute", "decimal places"]),
    ("reduce-k-range", ["reduce-tree", "8", "-d", "1", "-c", "1", "--max-transfers", "0"],
     None, ["--max-transfers", "between 1 and"]),
    ("reduce-check-dev-zero", ["reduce-tree", "--check", "/dev/zero"], None, ["NUL byte"]),
    ("reduce-check-nan-date", ["reduce-tree", "--check", "{reduction_nan.json}"], None,
     ["send_time of machine 2 is 'nan'"]),
    ("check-reduction-nan-date", ["check", "{topo4.json}", "{reduction_nan.json}"], None,
     ["send_time of machine 2 is 'nan'"]),
    ("reduce-check-truncated", ["reduce-tree", "--check", "{reduction_cut.json}"], None,
     ["not valid JSON"]),
    ("draw-reduction-too-big", ["draw", "{reduction300.json}", "-o", "{r.png}"], None,
     ["300 machines", "too many to draw"]),
    # broadcast-steady
    ("steady-stdin-random", ["broadcast-steady", "-"], "/dev/urandom", ["stdin", "binary"]),
    ("steady-stdin-words", ["broadcast-steady", "-"], "words.txt",
     ["stdin", "not a one-port platform"]),
    ("steady-cost-nan", ["broadcast-steady", "{oneport_nan.json}"], None,
     ["links[0] (line 1)", "not a finite number"]),
    ("steady-cost-zero", ["broadcast-steady", "{oneport_zero.json}"], None,
     ["links[0]", "must be positive"]),
    ("steady-cost-exponent", ["broadcast-steady", "{oneport_huge.json}"], None,
     ["links[0]", "too large"]),
    ("steady-400-prime-costs", ["broadcast-steady", "{oneport_primes.json}"], None,
     ["link costs", "least common multiple"]),
    ("steady-unknown-source", ["broadcast-steady", "{fig1.json}", "-s", "x" * 100_000], None,
     ["is not a node", "100002 characters"]),
    ("steady-unreached", ["broadcast-steady", "{oneport_unreached.json}", "-s", "s"], None,
     ["cannot be reached"]),
    ("steady-dag-cycle", ["broadcast-steady", "{oneport_cycle.json}", "--dag"], None,
     ["cycle 'a' -> 'b' -> 'a'"]),
    ("steady-random-too-big", ["broadcast-steady", "random:2000"], None,
     ["2000 nodes", "of memory"]),
    ("steady-random-absurd", ["broadcast-steady", "random:1000000000000"], None,
     ["at most 2000 nodes"]),
    ("steady-random-dense", ["broadcast-steady", "random:2000,0,99999999999999999999"], None,
     ["2000 nodes and 3998000 links"]),
    # optimum -c alltoall: LP size and time
    ("alltoall-too-many-columns", ["optimum", "torus:20x20", "-c", "alltoall",
                                   "--no-symmetry"], None,
     ["640000 flow variables"]),
    ("alltoall-too-long", ["optimum", "torus:16x16", "-c", "alltoall",
                            "--no-symmetry"], None,
     ["262144 flow variables", "COLLCERT_MAX_SECONDS"], {"COLLCERT_MAX_SECONDS": "60"}),
    # --sizes, --alpha, --stepfactor, claims
    ("alpha-nan-alone", ["optimum", "ring:4", "--alpha", "nan"], None,
     ["--alpha", "not a finite number"]),
    ("stepfactor-one", ["audit", "ring:4", "{ring4_chains.json}", "--stepfactor", "1"], None,
     ["--stepfactor"]),
    ("sizes-exabyte", ["audit", "ring:4", "{ring4_chains.json}", "--sizes", "1:1E"], None,
     ["--sizes", "'1E'", "at most 1P"]),
    ("sizes-thousands", ["optimum", "ring:4", "--sizes", ",".join(["1M"] * 2000)], None,
     ["2000 sizes", "at most 1000"]),
    ("claim-unit-unknown", ["audit", "ring:4", "{ring4_chains.json}", "--claim-time",
                            "1years", "--size", "1GB"], None, ["--claim-time", "units"]),
    ("root-100k-characters", ["optimum", "ring:4", "-c", "broadcast", "--root", "x" * 100_000],
     None, ["root", "100002 characters"]),
    ("choice-100k-characters", ["audit", "ring:4", "{ring4_chains.json}", "--from",
                                "x" * 100_000], None, ["--from", "100002 characters"]),
    # wrong kinds of files
    ("audit-reduction-file", ["audit", "ring:4", "{reduction300.json}"], None,
     ["not a schedule", "reduce-tree --check"]),
    ("draw-dev-zero-schedule", ["draw", "ring:4", "/dev/zero", "-o", "{d.png}"], None,
     ["NUL byte"]),
    ("reduce-output-missing-folder",
     ["reduce-tree", "8", "-d", "1", "-c", "1", "-o", "{nope/tree.json}"], None,
     ["nope/tree.json", "cannot write"]),
    ("import-output-missing-folder", ["import", "{topo4.json}", "-o", "{nope/t.json}"], None,
     ["nope/t.json", "No such file"]),
    ("msccl-channels-zero", ["schedule", "ring:4", "--format", "msccl-xml",
                             "--msccl-channels", "0", "-o", "{c.xml}"], None,
     ["--msccl-channels 0", "1 to 32"]),
    # issue 24: ForestColl XML ids refused at write time, naming the node (row 5); options
    # never silently ignored (row 6)
    ("xml-ids-ambiguous", ["schedule", "{ids_pq.json}", "--format", "forestcoll-xml", "-o",
                           "{pq.xml}"], None, ["node 'p,q'", "also reads as 'p' -> 'q'"]),
    ("xml-ids-nul", ["schedule", "{ids_nul.json}", "--format", "forestcoll-xml", "-o",
                     "{nul.xml}"], None, ["node 'a\\x00b'", "U+0000"]),
    ("allreduce-sizes-not-eulerian", ["optimum", "{not_eulerian.json}", "-c", "allreduce",
                                      "--sizes", "1K:1M", "--plot", "{ar.png}"], None,
     ["--sizes/--plot", "Eulerian"]),
    ("missing-xml-topology", ["optimum", "{nope.xml}"], None, ["nope.xml", "no such file"]),
    ("schedule-as-topology", ["optimum", "{ring4_chains.json}"], None,
     ["this is a schedule", "collcert audit TOPOLOGY SCHEDULE"]),
    # issue 24 row 2: refused from the counts before any plan (the MSCCL runtime's 32768
    # chunk offsets per buffer), naming the estimate and the limit
    ("msccl-fixed-k-1e5", ["schedule", "ring:4", "--fixed-k", "100000", "--format",
                           "msccl-xml", "-o", "{rk.xml}"], None,
     ["400,000 chunks in one buffer", "32,768 chunk offsets", "at most 8,192",
      "nothing was compiled"]),
    ("msccl-fixed-k-1e7", ["schedule", "ring:4", "--fixed-k", "10000000", "--format",
                           "msccl-xml", "-o", "{rk.xml}"], None,
     ["40,000,000 chunks", "32,768 chunk offsets", "at most 8,192"]),
    ("msccl-fixed-k-1e20", ["schedule", "ring:4", "--fixed-k", "1" + "0" * 20, "--format",
                            "msccl-xml", "-o", "{rk.xml}"], None,
     ["400,000,000,000,000,000,000 chunks", "32,768 chunk offsets"]),
    ("msccl-fixed-k-1e400", ["schedule", "ring:4", "--fixed-k", "1" + "0" * 400, "--format",
                             "msccl-xml", "-o", "{rk.xml}"], None,
     ["about 10^400 chunks", "32,768 chunk offsets"]),
    ("reduce-n-time", ["reduce-tree", "20000000", "-d", "1", "-c", "1"], None,
     ["20000000 machines", "would take about 10 minutes", "COLLCERT_MAX_SECONDS"],
     {"COLLCERT_MAX_SECONDS": "100", "COLLCERT_MAX_MEMORY": "64G"}),
    # issue 24 row 12: small ones
    ("fuzz-count-zero", ["fuzz", "check", "--count", "0"], None, ["--count", "between 1"]),
    ("arabic-indic-capacity", ["optimum", "{arabic_digits.json}"], None,
     ["capacity", "digits 0-9"]),
    ("arabic-indic-platform", ["optimum", "ring:\u0663"], None, ["digits 0-9"]),
    ("draw-pipe-broadcast", ["draw", "fig1", "{pipe.json}", "-o", "{p.png}"], None,
     ["pipelined broadcast schedule", "collcert audit PLATFORM FILE"]),
    ("draw-one-port-alone", ["draw", "fig1", "-o", "{f.png}"], None,
     ["one-port platform", "broadcast-steady fig1"]),
    # issue 20 item 3: --degrade/--fail of optimum -c allreduce|alltoall and compare
    ("whatif-allreduce-unknown-node", ["optimum", "-c", "allreduce", "ring:4", "--degrade",
                                       "0<>9=1"], None, ["--degrade", "'9' is not a node"]),
    ("whatif-alltoall-zero", ["optimum", "-c", "alltoall", "ring:4", "--degrade", "0<>1=0"],
     None, ["--degrade", "--fail"]),
    ("whatif-alltoall-nan", ["optimum", "-c", "alltoall", "ring:4", "--degrade", "0<>1=nan"],
     None, ["--degrade", "not a finite number"]),
    ("whatif-allreduce-missing-link", ["optimum", "-c", "allreduce", "ring:4", "--fail",
                                       "0<>2"], None, ["--fail", "no link 0 → 2"]),
    ("whatif-allreduce-method", ["optimum", "-c", "allreduce", "ring:4", "--degrade", "0<>1=1",
                                 "--method", "rsag-weighted"], None, ["--method", "what-if"]),
    ("whatif-optimum-sizes", ["optimum", "ring:4", "--fail", "0<>1", "--sizes", "1K:1M"],
     None, ["--sizes", "what-if"]),
    ("whatif-alltoall-plot", ["optimum", "-c", "alltoall", "ring:4", "--fail", "0",
                              "--plot", "{w.png}"], None, ["--plot", "what-if"]),
    ("whatif-compare-unknown", ["compare", "ring:4", "--fail", "nope"], None,
     ["--fail", "'nope' is not a node"]),
    ("whatif-compare-too-few", ["compare", "ring:4", "--fail", "0", "--fail", "1", "--fail",
                                "2"], None, ["1 compute node(s) would be left"]),
    ("whatif-compare-disconnected", ["compare", "ring:4", "--fail", "0<>1", "--fail", "2<>3"],
     None, ["disconnected", "cut off", "collcert optimum"]),
    ("whatif-schedule-disconnected", ["schedule", "ring:4", "--fail", "0<>1", "--fail",
                                      "2<>3"], None,
     ["the machine is disconnected (link 0 ↔ 1: failed; link 2 ↔ 3: failed): 2 compute "
      "nodes are cut off (0, 3), so the rate is 0"]),
    ("whatif-check-disconnected", ["check", "ring:4", "{pipe.json}", "--fail", "0<>1",
                                   "--fail", "2<>3"], None,
     ["the machine is disconnected (link 0 ↔ 1: failed; link 2 ↔ 3: failed): 2 compute "
      "nodes are cut off (0, 3), so every rate is 0"]),
    ("whatif-compare-one-way", ["compare", "ring:4", "--degrade", "0>1=1/2"], None,
     ["different amount", "SRC<>DST"]),
    ("whatif-compare-huge", ["compare", "ring:4", "--degrade", "0<>1=1e999999"], None,
     ["--degrade", "too large"]),
    # red team (issue 24's pass): what-if never ignored, compare's outputs before any work
    ("schedule-whatif-method-lp", ["schedule", "ring:4", "-c", "allreduce", "--method", "lp",
                                   "--degrade", "0<>1=1/2", "-o", "{lp.json}"], None,
     ["--method lp", "--degrade/--fail"]),
    ("schedule-whatif-rsag-weighted", ["schedule", "ring:4", "-c", "allreduce", "--method",
                                       "rsag-weighted", "--fail", "0", "-o", "{rw.json}"],
     None, ["--method rsag-weighted", "--degrade/--fail"]),
    ("whatif-degrade-twice", ["optimum", "ring:4", "--degrade", "0<>1=1/3", "--degrade",
                              "0<>1=1/5"], None, ["already set to 1/3", "one capacity"]),
    ("whatif-fail-twice", ["compare", "ring:4", "--fail", "0", "--fail", "0"], None,
     ["node 0 is given to --fail twice"]),
    ("compare-baselines-empty", ["compare", "ring:4", "--baselines", ""], None,
     ["--baselines ''", "choose from"]),
    ("compare-save-onto-a-file", ["compare", "ring:4", "--save-schedules", "{topo4.json}"],
     None, ["--save-schedules", "this is a file"]),
    ("compare-plot-missing-folder", ["compare", "ring:4", "--plot", "{nope/x.png}"], None,
     ["--plot", "does not exist"]),
    # red team, second round (helper P): --routes runtime, schedule options, MSCCL++ plans
    # ring:2000's ForestColl schedule is on the runtime's routes now (9 s, no LP); issue 22's
    # machine needs the LP, refused here by a small time budget with its size
    ("routes-runtime-lp-refused", ["schedule", "{issue22.json}", "--routes", "runtime", "-o",
                                   "{rr.json}"], None,
     ["ForestColl's own schedule is not built", "runtime-routes LP of issue-22 (5 GPUs)",
      "columns"], {"COLLCERT_MAX_SECONDS": "0.001"}),
    ("schedule-in-place-json", ["schedule", "ring:4", "--in-place", "-o", "{ip.json}"], None,
     ["--in-place applies to --format mscclpp-json only, not json"]),
    ("schedule-mscclpp-channel-json", ["schedule", "ring:4", "--mscclpp-channel", "port", "-o",
                                       "{mc.json}"], None,
     ["--mscclpp-channel applies to --format mscclpp-json only"]),
    ("schedule-msccl-channels-json", ["schedule", "ring:4", "--msccl-channels", "2", "-o",
                                      "{mch.json}"], None,
     ["--msccl-channels applies to --format msccl-xml only"]),
    # issue 32: collcert measured on hostile nccl-tests logs: exit 2 naming the line
    ("measured-cut-row", ["measured", "ring:4", "{nccl_cut.log}"], None,
     ["nccl_cut.log: line 3", "cut short"]),
    ("measured-nan", ["measured", "ring:4", "{nccl_nan.log}"], None,
     ["nccl_nan.log: line 3", "'nan'"]),
    ("measured-negative-time", ["measured", "ring:4", "{nccl_negative.log}"], None,
     ["line 3", "negative"]),
    ("measured-10e400-bytes", ["measured", "ring:4", "{nccl_huge.log}"], None,
     ["line 3", "401 digits"]),
    ("measured-binary", ["measured", "ring:4", "{nccl_binary.log}"], None,
     ["line 3", "NUL byte", "binary"]),
    ("measured-dev-zero", ["measured", "ring:4", "/dev/zero"], None, ["/dev/zero"]),
    ("measured-zero-bytes-with-a-rate", ["measured", "ring:4", "{nccl_zero_bytes.log}"], None,
     ["line 3", "algbw 104.86 GB/s is not size / time = 0 B"]),
    ("measured-zero-time", ["measured", "ring:4", "{nccl_zero_time.log}"], None,
     ["line 3", "0.00 µs = infinite GB/s"]),
    ("measured-10001-rows", ["measured", "ring:4", "{nccl_rows_10001.log}"], None,
     ["more than 10000 table rows (from line 3 on)", "split the file"]),
    # smoke (torch is imported once, in the last group)
    ("smoke-size-memory", ["smoke", "{ring4_chains.json}", "--size", "100G"], None,
     ["--size", "of memory"]),
    ("smoke-size-digits", ["smoke", "{ring4_chains.json}", "--size", "9" * 100_000], None,
     ["--size", "at most 20 digits"]),
    ("smoke-iters", ["smoke", "{ring4_chains.json}", "--iters", "1000000000"], None,
     ["--iters", "between 1 and 10000"]),
    ("smoke-timeout-nan", ["smoke", "{ring4_chains.json}", "--timeout", "nan"], None,
     ["--timeout", "not a finite number"]),
    ("smoke-device", ["smoke", "{ring4_chains.json}", "--backend", "single-gpu", "--device",
                      "zz"], None, ["--device", "not a device"]),
    ("smoke-dev-zero", ["smoke", "/dev/zero"], None, ["NUL byte"]),
    ("smoke-reduction-file", ["smoke", "{reduction300.json}"], None, ["not a schedule"]),
    ("smoke-k-401-digits", ["smoke", "{k400.json}"], None, ["phase 0", "401 digits"]),
    ("smoke-duplicated-edge", ["smoke", "{dup_edges.json}"], None,
     ["not run", "INVALID", "lists the edge 0 -> 1 twice", "--run-invalid"]),
    ("smoke-gloo-100-ranks", ["smoke", "{chain100.json}", "--backend", "gloo"], None,
     ["100 ranks", "--backend single-gpu"]),
    # issue 33 row 3: --save-schedules would write its own input (nothing written first)
    ("compare-save-onto-its-input", ["compare", "{nccl-ring.json}", "--save-schedules", "{.}"],
     None, ["--save-schedules", "nccl-ring.json", "the command's input TOPOLOGY"]),
    # issue 33 row 7: draw, audit and smoke take --degrade/--fail
    ("audit-degrade-unknown-node", ["audit", "ring:4", "{ring4_chains.json}", "--degrade",
                                    "x9=1"], None, ["--degrade 'x9'", "is not a node"]),
    ("draw-fail-disconnects", ["draw", "ring:4", "--fail", "0", "--fail", "2", "-o",
                               "{dis.png}"], None, ["disconnected", "no machine left"]),
    ("smoke-fail-without-topology", ["smoke", "{ring4_chains.json}", "--fail", "0"], None,
     ["--degrade/--fail", "--topology"]),
    # issue 33 row 11: integers written as strings, refused as the schemas say
    ("audit-symmetric-order-string", ["audit", "ring:4", "{sym_order_string.json}"], None,
     ["symmetry.order is '4', a string", "JSON integer"]),
    ("check-symmetric-order-string", ["check", "ring:4", "{sym_order_string.json}"], None,
     ["symmetry.order is '4', a string"]),
    ("reduce-tree-n-string", ["reduce-tree", "--check", "{reduction_n_string.json}"], None,
     ["n is '2', a string"]),
    # issue 30: switches that add
    ("reducing-compute-node", ["optimum", "-c", "allreduce", "{reducing_compute.json}"], None,
     ["'a'", "compute node"]),
    ("reduction-rate-zero", ["optimum", "-c", "allreduce", "{reduction_rate_zero.json}"], None,
     ["'w'", "must be positive"]),
    ("reduction-rate-nan", ["optimum", "{reduction_rate_nan.json}"], None,
     ["'w'", "not a finite number"]),
    ("reduction-rate-10e400", ["schedule", "{reduction_rate_huge.json}"], None,
     ["'w'", "too large"]),
    ("reduction-rate-forwarding-switch", ["optimum", "{reduction_rate_forward.json}"], None,
     ["'w'", "not declared to add"]),
    ("reducing-in-allgather", ["optimum", "dgx_h100:2", "--reducing", "b0.nvswitch"], None,
     ["--reducing 'b0.nvswitch'", "allgather adds no data"]),
    ("reducing-in-broadcast", ["optimum", "dgx_h100:2", "-c", "broadcast", "--root",
                               "b0.gpu0", "--reducing", "ib"], None,
     ["--reducing 'ib'", "broadcast adds no data"]),
    ("reducing-a-gpu", ["optimum", "dgx_h100:2", "-c", "allreduce", "--reducing", "b1.gpu3"],
     None, ["'b1.gpu3'", "compute node"]),
    ("nvls-compute-node", ["optimum", "-c", "allreduce", "{nvls_compute.json}"], None,
     ["NVLS switch 'b'", "compute node"]),
    ("nvls-and-sharp-one-switch", ["optimum", "-c", "allreduce", "{nvls_and_sharp.json}"],
     None, ["'w'", "both a SHARP switch", "one way"]),
    ("nvls-a-gpu", ["optimum", "dgx_h100:2", "-c", "allreduce", "--nvls", "b1.gpu3"], None,
     ["NVLS switch 'b1.gpu3'", "compute node"]),
    ("nvls-in-allgather", ["optimum", "dgx_h100:2", "--nvls", "ib"], None,
     ["--nvls 'ib'", "allgather adds no data"]),
    ("nvls-and-sharp-options", ["optimum", "dgx_h100:2", "-c", "allreduce", "--nvls", "ib",
                                "--reducing", "ib"], None, ["'ib'", "declared both"]),
    ("reduction-rate-option-nan", ["optimum", "dgx_h100:1", "-c", "allreduce",
                                   "--reduction-rate", "b0.nvswitch=nan"], None,
     ["'b0.nvswitch'", "not a finite number"]),
    ("reduction-rate-option-10e400", ["optimum", "dgx_h100:1", "-c", "reduce", "--root",
                                      "b0.gpu0", "--reduction-rate", "b0.nvswitch=1e400"],
     None, ["'b0.nvswitch'", "too large"]),
]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("hostile")
    for name, content in FILES.items():
        path = folder / name
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return folder


def _limit() -> None:  # runs in the child before exec
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("COLLCERT_")}
    env.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MALLOC_ARENA_MAX="2")
    return env


def _run(argv: list[str], stdin: str | None, folder: Path) -> subprocess.CompletedProcess[str]:
    """One command line in its own ``python -m collcert`` process."""
    args = [str(folder / a[1:-1]) if a.startswith("{") and a.endswith("}") else a
            for a in argv]
    source = None if stdin is None else (stdin if stdin.startswith("/dev/") else folder / stdin)
    with open(source if source is not None else os.devnull, "rb") as fh:
        return subprocess.run([sys.executable, "-m", "collcert", *args], stdin=fh,
                              capture_output=True, text=True, timeout=TIMEOUT,
                              preexec_fn=_limit, cwd=folder, env=_env())


# The README's test command installs '.[test]', without torch: smoke's cases then expect
# exit 2 with the install hint, except those argparse refuses first. CI installs torch and
# sets COLLCERT_REQUIRE_TORCH=1, so there every case is checked as written.
HAVE_TORCH = (importlib.util.find_spec("torch") is not None
              or os.environ.get("COLLCERT_REQUIRE_TORCH") == "1")
NO_TORCH_NEEDED = (["--iters", "1000000000"], ["--timeout", "nan"])

GROUPS = 4  # subprocesses for the cases before smoke's; smoke's cases share one more


@pytest.fixture(scope="module")
def results(corpus: Path) -> dict[str, dict[str, object]]:
    """Every case's outcome, from a few driver processes (tests/hostile_driver.py)."""
    plain = [c for c in CASES if c[1][0] != "smoke"]
    size = -(-len(plain) // GROUPS)
    groups = [plain[i:i + size] for i in range(0, len(plain), size)]
    groups.append([c for c in CASES if c[1][0] == "smoke"])
    out: dict[str, dict[str, object]] = {}
    for n, group in enumerate(groups):
        pending = [[c[0], c[1], c[2], c[4] if len(c) > 4 else {}] for c in group]
        while pending:
            cases, got = corpus / f"cases{n}.json", corpus / f"results{n}.jsonl"
            cases.write_text(json.dumps(pending), encoding="utf-8")
            got.write_text("", encoding="utf-8")
            try:
                proc = subprocess.run([sys.executable, str(DRIVER), str(corpus), str(cases),
                                       str(got)], capture_output=True, text=True,
                                      timeout=TIMEOUT * len(pending) + 60, preexec_fn=_limit,
                                      cwd=corpus, env=_env())
                died = f"the driver process ended with {proc.returncode}: {proc.stderr[-500:]}"
            except subprocess.TimeoutExpired:
                died = "the driver process was stopped: a case did not answer its alarm"
            for line in got.read_text(encoding="utf-8").splitlines():
                r = json.loads(line)
                out[str(r["id"])] = r
            done = [c for c in pending if c[0] in out]
            if len(done) == len(pending):
                break
            first = pending[len(done)]  # the case in flight when the process died
            out[first[0]] = {"code": died, "stderr": "", "stderr_chars": 0, "traceback": False}
            pending = pending[len(done) + 1:]
    return out


@pytest.mark.parametrize("case", [c[0] for c in CASES])
def test_hostile_input_exits_2_with_a_message(results: dict[str, dict[str, object]],
                                              case: str) -> None:
    argv, words = next((c[1], c[3]) for c in CASES if c[0] == case)
    if argv[0] == "smoke" and not HAVE_TORCH and argv[-2:] not in NO_TORCH_NEEDED:
        # without torch (the optional extra), smoke first says how to install it
        words = ["torch, which is not installed", "pip install 'collcert[smoke]'"]
    r = results[case]
    err = str(r["stderr"])
    assert not r["traceback"]
    assert r["code"] == 2, (r["code"], err[-2000:])
    assert "error" in err
    for word in words:
        assert word in err, (word, err[-2000:])
    assert int(str(r["stderr_chars"])) < 5000, "the message must not echo the hostile input"


def test_fuzz_generate_creates_nothing_when_refused(corpus: Path) -> None:
    proc = _run(["fuzz", "generate", "-n", "-1", "-o", "{g2}"], None, corpus)
    assert proc.returncode == 2
    assert not (corpus / "g2").exists()


# Issue 24 row 1: an output file that is one of the command's inputs (the same path, a
# symbolic link or a hard link) is refused before any work, for every command that writes
# a file; the input is left byte for byte as it was.
ONTO_INPUT = [  # (argv, the input file that the output names; files made by _onto_folder)
    (["optimum", "{t.png}", "--plot", "{t.png}"], "t.png"),
    (["optimum", "{t.png}", "--plot", "{t-symlink.png}"], "t.png"),
    (["optimum", "{t.png}", "--plot", "{t-hardlink.png}"], "t.png"),
    (["schedule", "{t.json}", "-o", "{t.json}"], "t.json"),
    (["schedule", "{t.json}", "-o", "{t-symlink.json}", "--check"], "t.json"),
    (["schedule", "{t-hardlink.json}", "-o", "{t.json}", "--format", "msccl-xml"], "t.json"),
    (["draw", "{t.png}", "-o", "{t.png}"], "t.png"),
    (["draw", "ring:4", "{s.png}", "-o", "{s.png}"], "s.png"),
    (["audit", "ring:4", "{s.png}", "--plot", "{s.png}"], "s.png"),
    (["audit", "ring:4", "{s.json}", "--ranks", "{r.png}", "--plot", "{r-symlink.png}"],
     "r.png"),
    (["broadcast-steady", "{fig1.json}", "-o", "{fig1.json}"], "fig1.json"),
    (["reduce-tree", "--check", "{red.json}", "-o", "{red.json}"], "red.json"),
    (["reduce-tree", "--check", "{red.png}", "--figure2", "{red.png}"], "red.png"),
    (["import", "{t.json}", "-o", "{t-hardlink.json}"], "t.json"),
    (["import", "{t.json}", "--nvidia-smi", "{s.json}", "-o", "{s.json}"], "s.json"),
    (["compare", "{t.png}", "--plot", "{t-symlink.png}"], "t.png"),
    (["optimum", "{t.json}", "--certificate", "-o", "{t-symlink.json}"], "t.json"),
    (["measured", "ring:4", "{t.png}", "--plot", "{t-hardlink.png}"], "t.png"),
]


def _onto_folder(folder: Path) -> None:
    topo = FILES["topo4.json"]
    for name, text in (("t.json", topo), ("t.png", topo), ("s.json", FILES["ring4_chains.json"]),
                       ("s.png", FILES["ring4_chains.json"]), ("r.png", "0\n1\n2\n3\n"),
                       ("fig1.json", FILES["fig1.json"]),
                       ("red.json", FILES["reduction300.json"]),
                       ("red.png", FILES["reduction300.json"])):
        (folder / name).write_text(str(text), encoding="utf-8")
    for name in ("t.json", "t.png", "r.png"):
        stem, ext = os.path.splitext(name)
        (folder / f"{stem}-symlink{ext}").symlink_to(folder / name)
        os.link(folder / name, folder / f"{stem}-hardlink{ext}")


def test_every_output_option_is_known_to_the_check() -> None:
    """Each option of each command that writes a file is one the check looks at."""
    import argparse

    from collcert.cli import build_parser
    from collcert.commands._common import OUTPUT_OPTIONS

    found = set()

    def walk(parser: argparse.ArgumentParser, path: str) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(sub, f"{path} {name}".strip())
            elif {"-o", "--output", "--plot"} & set(action.option_strings):
                found.add((path, action.dest))

    walk(build_parser(), "")
    assert found, "no command has an output option?"
    for path, dest in found:
        assert dest in OUTPUT_OPTIONS, (path, dest)
    tested = {(argv[0], a) for argv, _ in ONTO_INPUT for a in argv if a.startswith("-")}
    for path, dest in found:
        if path.startswith("fuzz"):  # fuzz generate -o DIR: it reads no file
            continue
        assert (path, OUTPUT_OPTIONS[dest]) in tested, f"add a case of {path} to ONTO_INPUT"


@pytest.mark.parametrize("argv,victim", ONTO_INPUT, ids=[" ".join(c[0][:1] + c[0][-2:])
                                                         for c in ONTO_INPUT])
def test_an_output_onto_an_input_is_refused(tmp_path: Path, argv: list[str], victim: str,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    from collcert.cli import main

    _onto_folder(tmp_path)
    before = (tmp_path / victim).read_bytes()
    code = main([str(tmp_path / a[1:-1]) if a.startswith("{") else a for a in argv])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "would overwrite it" in err and "Traceback" not in err
    assert (tmp_path / victim).read_bytes() == before
    assert not (tmp_path / victim).is_symlink()


def test_an_empty_output_name_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    from collcert.cli import main

    assert main(["schedule", "ring:4", "-o", ""]) == 2
    assert "an empty file name" in capsys.readouterr().err


def test_xml_refusal_leaves_no_file(corpus: Path, results: dict[str, dict[str, object]]) -> None:
    assert results["xml-ids-ambiguous"]["code"] == 2
    assert not (corpus / "pq.xml").exists() and not (corpus / "nul.xml").exists()


def test_alltoall_sizes_print_the_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                        ) -> None:
    """Issue 24 row 6: --sizes and --plot of -c alltoall give the table and the plot."""
    from collcert.cli import main

    plot = tmp_path / "a.svg"
    assert main(["optimum", "ring:4", "-c", "alltoall", "--sizes", "1K:4K", "--plot",
                 str(plot)]) == 0
    out = capsys.readouterr().out
    rows = [line.split() for line in out.splitlines() if line.strip().startswith("1024")]
    assert rows and rows[0][3] == "none"  # an alltoall row: no reduction
    assert "<svg" in plot.read_text()


def test_check_takes_one_port_platform_names(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 24 row 7: 'check fig1 bs.json' checks what 'broadcast-steady fig1 -o' wrote."""
    from collcert.cli import main

    out = tmp_path / "bs.json"
    assert main(["broadcast-steady", "fig1", "-o", str(out)]) == 0
    capsys.readouterr()
    assert main(["check", "fig1", str(out)]) == 0
    assert capsys.readouterr().out.startswith("OK")


def test_a_garbage_topology_fingerprint(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 24 row 12: check refuses a certificate whose 'topology' is not a fingerprint;
    audit (which checks on the topology given) says so in a warning."""
    from collcert.cli import main

    cert, sched = tmp_path / "c.json", tmp_path / "s.json"
    main(["optimum", "ring:4", "--certificate"])
    doc = json.loads(capsys.readouterr().out)
    cert.write_text(json.dumps({**doc, "topology": "garbage"}))
    assert main(["check", "ring:4", str(cert)]) == 1
    assert "'garbage' is not a topology fingerprint" in capsys.readouterr().out
    sched.write_text(json.dumps({**RING4, "topology": "garbage"}))
    assert main(["audit", "ring:4", str(sched)]) == 0
    assert "warning: the schedule's 'topology' field 'garbage'" in capsys.readouterr().out
