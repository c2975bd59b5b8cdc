"""The hostile corpus: every bad input a new user (or an attacker) can hand the CLI.

Each case runs the real ``collcert`` command line in its own subprocess, under a
10-second timeout and a 1.5 GiB address-space limit (``RLIMIT_AS``), and must end
with exit 2, a message on stderr that names the problem, and no traceback: huge
and tiny exponents, NaN and infinities, 2-million-digit decimals, deep nesting,
entity expansion, binary data, devices, absurd sizes (platforms and files), and
option values. The memory limit also fixes collcert's memory budget
(``collcert.reference.limits``), so the size refusals do not depend on the machine.

(The in-process tests of the same mechanisms are in tests/test_bad_input.py.)
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

TIMEOUT = 10
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
    "million_trees.xml": '<algo nchunkspernode="1">' + '<tree root="0"/>' * 1_000_000
                         + "</algo>",
}

SCHEDULE = {"format": "collcert-schedule/1", "collective": "allgather",
            "compute_nodes": [0, 1, 2, 3], "phases": [{"collective": "allgather", "k": 1,
                                                       "trees": []}]}
FILES["no_compute_nodes.json"] = json.dumps({k: v for k, v in SCHEDULE.items()
                                             if k != "compute_nodes"})
FILES["ring4_schedule.json"] = json.dumps(SCHEDULE)

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
    ("ring-20000-memory", ["optimum", "ring:20000"], None, ["of memory", "COLLCERT_MAX_MEMORY"]),
    ("file-200k-nodes", ["audit", "{nodes_200k.json}", "{ring4_schedule.json}"], None,
     ["200000 compute nodes", "of memory"]),
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
    ("million-trees", ["audit", "ring:4", "{million_trees.xml}"], None, ["<tree> elements"]),
    ("schedule-stdin-binary", ["audit", "ring:4", "-"], "binary.json", ["stdin", "binary"]),
    ("schedule-no-compute-nodes", ["audit", "ring:4", "{no_compute_nodes.json}"], None,
     ["compute_nodes"]),
    ("both-stdin", ["audit", "-", "-"], "/dev/null", ["cannot both be '-'"]),
    ("ranks-missing", ["audit", "ring:4", "{ring4_schedule.json}", "--ranks", "{nope.txt}"],
     None, ["--ranks", "no such file"]),
    ("ranks-binary", ["audit", "ring:4", "{ring4_schedule.json}", "--ranks", "{ranks.bin}"],
     None, ["--ranks", "binary"]),
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


def _run(argv: list[str], stdin: str | None, folder: Path) -> subprocess.CompletedProcess[str]:
    args = []
    for a in argv:
        if a.startswith("{") and a.endswith("}") and len(a) < 100:
            a = str(folder / a[1:-1])
        args.append(a)
    env = {k: v for k, v in os.environ.items() if not k.startswith("COLLCERT_")}
    env.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MALLOC_ARENA_MAX="2")
    source = None if stdin is None else (stdin if stdin.startswith("/dev/") else folder / stdin)
    with open(source if source is not None else os.devnull, "rb") as fh:
        return subprocess.run([sys.executable, "-m", "collcert", *args], stdin=fh,
                              capture_output=True, text=True, timeout=TIMEOUT,
                              preexec_fn=_limit, cwd=folder, env=env)


@pytest.mark.parametrize("argv, stdin, words", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_hostile_input_exits_2_with_a_message(corpus: Path, argv: list[str], stdin: str | None,
                                              words: list[str]) -> None:
    proc = _run(argv, stdin, corpus)  # TimeoutExpired fails the test: no hang allowed
    err = proc.stderr
    assert "Traceback" not in err + proc.stdout
    assert proc.returncode == 2, (proc.returncode, err[-2000:])
    assert "error" in err
    for word in words:
        assert word in err, (word, err[-2000:])
    assert len(err) < 5000, "the message must not echo the hostile input"


def test_fuzz_generate_creates_nothing_when_refused(corpus: Path) -> None:
    proc = _run(["fuzz", "generate", "-n", "-1", "-o", "{g2}"], None, corpus)
    assert proc.returncode == 2
    assert not (corpus / "g2").exists()
