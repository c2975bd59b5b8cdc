"""Bad input, tested in-process: the bounded number parser, the size estimator
(reference/model/limits.py), bounded reading of files and stdin, and the CLI details a new
user met (stdin schedules, --ranks files, help text, fuzz run's directory, saving
without shrinking, wording). tests/test_hostile_corpus.py runs the same inputs
through the real command line in subprocesses."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import sys
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import pytest

from collcert import Topology, platforms
from collcert.cli import build_parser, main
from collcert.fuzz import driver
from collcert.reference.forestcoll import optimum
from collcert.reference.model import CollcertError, TopologyError, limits
from collcert.reference.model.exact import (
    MAX_DIGITS,
    NumberError,
    lcm_of_denominators,
    parse_number,
)


def first_primes(n: int) -> list[int]:
    found: list[int] = []
    k = 2
    while len(found) < n:
        if all(k % p for p in found if p * p <= k):
            found.append(k)
        k += 1
    return found


def run_cli(argv: list[str], stdin: bytes | None = None,
            monkeypatch: pytest.MonkeyPatch | None = None) -> tuple[int, str, str]:
    if stdin is not None:
        assert monkeypatch is not None
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse's own refusals
            code = int(exc.code or 0)
    return code, out.getvalue(), err.getvalue()


# --------------------------------------------------------------------------- numbers
@pytest.mark.parametrize("text, value", [
    ("12.5", Fraction(25, 2)), ("1e3", Fraction(1000)), ("3/4", Fraction(3, 4)),
    (" -2.50e-3 ", Fraction(-1, 400)), (".5", Fraction(1, 2)), ("5.", Fraction(5)),
    (0.1, Fraction(1, 10)), (Decimal("1.2E+5"), Fraction(120000)), ("100e-2", Fraction(1)),
    ("1" + "0" * 302 + "e-3", Fraction(10**299)),  # trailing zeros cancel the exponent
    ("0." + "0" * 298 + "1", Fraction(1, 10**299)),
    (10**(MAX_DIGITS - 1), Fraction(10**(MAX_DIGITS - 1))),
])
def test_numbers_within_the_cap_are_exact(text: object, value: Fraction) -> None:
    assert parse_number(text) == value


@pytest.mark.parametrize("value, words", [
    ("1e999999999", "too large"), ("1e-999999999", "decimal places"),
    ("1." + "3" * 2_000_000, "too long"), ("9" * 5000, "too long"),
    (Decimal("1." + "3" * 100_000), "significant digits"), (Decimal("1E+999999999"), "too large"),
    (10**400, "digits"), (Fraction(1, 10**400), "too large or too precise"),
    ("1/" + "7" * 301, "too large or too precise"), ("1e" + "9" * 500, "huge exponent"),
    ("nan", "finite"), ("-Infinity", "finite"), (float("inf"), "finite"),
    (Decimal("NaN"), "finite"), ("1/0", "divides by zero"), (True, "boolean"),
    ("abc" * 100, "not a number"),
])
def test_absurd_numbers_are_refused_by_name(value: object, words: str) -> None:
    with pytest.raises(NumberError, match=words) as exc:
        parse_number(value)
    assert len(str(exc.value)) < 400  # the message never echoes a huge input
    assert isinstance(exc.value, ValueError) and isinstance(exc.value, CollcertError)


def test_lcm_of_denominators_is_capped() -> None:
    fracs = [Fraction(1, p) for p in first_primes(3000)]
    with pytest.raises(NumberError, match="the capacities have denominators.*1024 bits"):
        lcm_of_denominators(fracs, what="the capacities")
    assert lcm_of_denominators(fracs[:10]) == 6469693230  # 2·3·5·…·29, the 10th primorial
    assert lcm_of_denominators(fracs, max_bits=None).bit_length() > 1024


def test_topology_with_3000_prime_denominators_is_a_topology_error() -> None:
    primes = first_primes(3000)
    links = [(0, 1, f"1/{p}") for p in primes] + [(1, 0, f"1/{p}") for p in primes]
    with pytest.raises(TopologyError, match="link capacities have denominators"):
        Topology([0, 1], links)


# --------------------------------------------------------------------------- sizes
@pytest.mark.parametrize("name, args", [
    ("dgx_a100", (1,)), ("dgx_a100", (3,)), ("dgx_h100", (2,)), ("mi250", (2,)),
    ("mi250", (3, 8)), ("dgx1", ()), ("two_box_example", ()), ("ring", (9,)),
    ("complete", (5,)), ("hypercube", (3,)), ("torus", ((3, 4),)), ("fat_tree", (6,)),
])
def test_platform_size_formulas_match_what_is_built(name: str, args: tuple[object, ...]) -> None:
    t = getattr(platforms, name)(*args)
    size = platforms.size_of(name, *args)
    assert size == limits.Size(t.num_compute, len(t.nodes), len(t.capacity))


def test_platform_sizes_are_upper_bounds_in_degenerate_cases() -> None:
    for name, args in (("ring", (2,)), ("torus", ((2, 3),))):
        t = getattr(platforms, name)(*args)
        size = platforms.size_of(name, *args)
        assert size is not None and size.links >= len(t.capacity)
    assert platforms.size_of("ring", "abc") is None  # the builder reports bad arguments


@pytest.mark.parametrize("builder, args", [
    (platforms.ring, (10**8,)), (platforms.fat_tree, (1000,)), (platforms.torus, ((10**5,) * 2,)),
    (platforms.hypercube, (200,)), (platforms.dgx_a100, (100_000,)), (platforms.complete, (3000,)),
])
def test_platforms_refuse_to_build_what_cannot_fit(builder, args) -> None:
    with pytest.raises(TopologyError, match="is more than collcert builds"):
        builder(*args)


def test_memory_budget_and_override(monkeypatch: pytest.MonkeyPatch) -> None:
    size = platforms.size_of("ring", 20_000)
    assert size is not None
    # 20,000 flows over 60,000 arcs: at least 8 bytes each, whatever the constants say
    assert size.solve_bytes >= 8 * 20_000 * 60_000
    monkeypatch.setenv("COLLCERT_MAX_MEMORY", "1G")
    per_node = dataclasses.replace(size, sinks=size.compute)  # no symmetry: one per node
    with pytest.raises(TopologyError, match=r"ring:20000: 20000 compute nodes, 0 switches, "
                       r"40000 links: computing its optimum \(one max-flow witness per "
                       r"compute node.*COLLCERT_MAX_MEMORY=1G"):
        limits.check_size(per_node, "ring:20000", solve=True)
    # before the symmetry is looked for, one witness must fit (one per orbit: a ring's
    # rotations make one); the optimum checks again with the orbits it finds
    limits.check_size(size, "ring:20000", solve=True)
    monkeypatch.setenv("COLLCERT_MAX_MEMORY", "30M")
    with pytest.raises(TopologyError, match=r"at least one max-flow witness, one per orbit"):
        limits.check_size(dataclasses.replace(size, links=10**6), "x", solve=True)
    monkeypatch.setenv("COLLCERT_MAX_MEMORY", "1G")
    limits.check_size(size, "ring:20000")  # building alone fits
    monkeypatch.setenv("COLLCERT_MAX_MEMORY", "100T")
    limits.check_size(per_node, "ring:20000", solve=True)
    monkeypatch.setenv("COLLCERT_MAX_MEMORY", "lots")
    with pytest.raises(TopologyError, match="COLLCERT_MAX_MEMORY"):
        limits.check_size(size, "x", solve=True)
    assert limits.parse_bytes("64G") == 64 << 30 and limits.parse_bytes("512m") == 512 << 20


def test_solve_time_with_the_exact_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    big = platforms.ring(3000, 2**70)  # beyond int64: the pure-Python engine
    with pytest.raises(TopologyError, match="exact max-flow engine.*COLLCERT_MAX_SECONDS"):
        optimum(big, symmetry=False)  # one max-flow per node (by orbits: one in all)
    monkeypatch.setenv("COLLCERT_MAX_SECONDS", str(10**9))
    limits.check_solvable(big)  # allowed now (not run here: it would take hours)
    limits.check_solvable(platforms.ring(3000))  # OR-Tools: fine


def test_a_big_file_is_refused_before_anything_is_built(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    n = 200_000
    path = tmp_path / "big.json"
    path.write_text(json.dumps({"compute_nodes": list(range(n)),
                                "links": [[i, (i + 1) % n, 1] for i in range(n)]}))

    def no_building(*args: object, **kwargs: object) -> None:
        raise AssertionError("the topology was built")

    monkeypatch.setenv("COLLCERT_MAX_MEMORY", "200M")  # less than building it takes
    monkeypatch.setattr(Topology, "__init__", no_building)
    with pytest.raises(TopologyError, match="200000 compute nodes.*of memory"):
        Topology.from_json(path, solve=True)


# --------------------------------------------------------------------------- reading
def test_reading_refuses_binary_devices_and_size(tmp_path: Path) -> None:
    with pytest.raises(TopologyError, match="NUL byte at byte 0"):
        limits.read_text("/dev/zero")
    with pytest.raises(TopologyError, match="is a directory"):
        limits.read_text(tmp_path)
    with pytest.raises(TopologyError, match="no such file"):
        limits.read_text(tmp_path / "missing.json")
    bad = tmp_path / "latin1.json"
    bad.write_bytes(b'{"a": "\xe9"}')
    with pytest.raises(TopologyError, match="not UTF-8"):
        limits.read_text(bad)
    big = tmp_path / "big.json"
    big.write_text(" " * 5000)
    with pytest.raises(TopologyError, match="more than"):
        limits.read_text(big, limit=4096)
    with pytest.raises(TopologyError, match="stdin: more than"):
        limits.read_text(io.BytesIO(b" " * 5000), limit=4096)
    assert limits.read_text(io.BytesIO("{\"é\": 1}".encode())) == "{\"é\": 1}"


@pytest.mark.parametrize("data, words", [
    (b"[" * 200_000, "nested too deeply"), (bytes(range(256)), "NUL byte"),
    (b"", "stdin is empty"), (b"ring:4", "not a JSON topology"),
    (b'{"compute_nodes": [0, 1], "links": [[0, 1, NaN], [1, 0, 1]]}', "not a finite number"),
])
def test_topology_on_stdin(monkeypatch: pytest.MonkeyPatch, data: bytes, words: str) -> None:
    code, _, err = run_cli(["optimum", "-"], data, monkeypatch)
    assert code == 2 and words in err and "Traceback" not in err


def test_topology_on_stdin_works(monkeypatch: pytest.MonkeyPatch) -> None:
    text = json.dumps(platforms.ring(4).to_json()).encode()
    code, out, _ = run_cli(["optimum", "-", "--json"], text, monkeypatch)
    assert code == 0 and json.loads(out)["algbw"] == "8/3"  # N/(N-1) × 2 links of 1


def test_platform_arguments_with_a_slash_are_platforms() -> None:
    code, out, _ = run_cli(["optimum", "ring:4,1/3", "--json"])
    assert code == 0 and json.loads(out)["algbw"] == "8/9"  # the ring's 8/3 at capacity 1/3


# --------------------------------------------------------------------------- audit
@pytest.fixture()
def ring4_schedule(tmp_path: Path) -> Path:
    path = tmp_path / "ring4.json"
    assert main(["schedule", "ring:4", "-o", str(path)]) == 0
    return path


def test_schedule_from_stdin(monkeypatch: pytest.MonkeyPatch, ring4_schedule: Path) -> None:
    code, out, err = run_cli(["audit", "ring:4", "-"], ring4_schedule.read_bytes(), monkeypatch)
    assert code == 0 and out.startswith("VALID"), err
    code, _, err = run_cli(["audit", "ring:4", "-"], b"\x00\x01", monkeypatch)
    assert code == 2 and "stdin" in err and "binary" in err
    code, _, err = run_cli(["audit", "-", "-"], b"{}", monkeypatch)
    assert code == 2 and "cannot both be '-'" in err


def test_ranks_file_problems_are_errors(tmp_path: Path, ring4_schedule: Path) -> None:
    for name, content, words in (("missing.txt", None, "no such file"),
                                 ("ranks.bin", bytes(range(256)), "binary"),
                                 ("empty.txt", b"\n\n", "names no node"),
                                 ("ranks.json", b"[1, 2", "not valid JSON")):
        path = tmp_path / name
        if content is not None:
            path.write_bytes(content)
        code, _, err = run_cli(["audit", "ring:4", str(ring4_schedule), "--ranks", str(path)])
        assert code == 2 and "--ranks" in err and words in err, err


def test_schedule_without_compute_nodes_is_refused(tmp_path: Path, ring4_schedule: Path) -> None:
    data = json.loads(ring4_schedule.read_text())
    del data["compute_nodes"]
    path = tmp_path / "nocn.json"
    path.write_text(json.dumps(data))
    code, _, err = run_cli(["audit", "ring:4", str(path)])
    assert code == 2 and "'compute_nodes' is missing" in err
    data["compute_nodes"] = 4
    path.write_text(json.dumps(data))
    code, _, err = run_cli(["audit", "ring:4", str(path)])
    assert code == 2 and "must be an array" in err


# --------------------------------------------------------------------------- help, wording
def _help(command: str) -> str:
    sub = build_parser()._subparsers._group_actions[0].choices[command]  # type: ignore[union-attr]
    return str(sub.format_help())


def test_required_topology_shows_no_default() -> None:
    for command in ("audit", "prove", "draw"):
        assert "(default: dgx_a100:2)" not in " ".join(_help(command).split()), command
    assert "(default: dgx_a100:2)" in " ".join(_help("optimum").split())


def test_wording_of_summaries() -> None:
    t = platforms.mi250(2, 8)  # one switch
    text = optimum(t, fixed_k=2).summary() + optimum(t, "allreduce").summary()
    assert "1 switch," in text and "1 switches" not in text
    for internal in ("thm15_", "thm19_condition", "floored_eulerian", "rsag_", "bound7_node"):
        assert internal not in text
    assert "neither (a) nor (b)" in text  # Thm 19 does not apply to this platform
    assert optimum(t, fixed_k=2).to_json()["thm15_holds"] is True  # JSON keys unchanged


# --------------------------------------------------------------------------- fuzz
GEN = """
import json, sys
topo = json.load(open(sys.argv[1]))
open(sys.argv[2], "w").write("written by a script found in the current directory")
"""


def test_fuzz_runs_the_command_in_the_users_directory(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "mygen.py").write_text(GEN)
    monkeypatch.chdir(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    status, reasons, path = driver.run_impl(f"{sys.executable} mygen.py {{topology}} {{schedule}}",
                                            platforms.ring(3), str(work), "json", 30, "allgather")
    assert status == "ok", reasons
    assert Path(path).read_text().startswith("written by a script")


def test_no_shrink_still_saves_the_failures(tmp_path: Path) -> None:
    save = tmp_path / "ff"
    cases = [("s:0", platforms.ring(5)), ("s:1", platforms.complete(3))]
    results = driver.campaign(f"{sys.executable} -c 'import sys; sys.exit(3)' {{topology}} "
                              "{schedule}", cases, auditor=lambda *a: None, timeout=30,
                              shrink_failures=False, save_dir=save)
    assert [r.status for r in results] == ["crash", "crash"]
    saved = sorted(save.glob("*.json"))
    assert len(saved) == 2
    assert {Topology.from_json(p) for p in saved} == {platforms.ring(5), platforms.complete(3)}
    assert all(r.shrunk is None and "not shrunk" in r.line() for r in results)
    assert "(not shrunk)" in (save / "README.md").read_text()


def test_fuzz_generate_validates_before_creating(tmp_path: Path) -> None:
    out = tmp_path / "g1"
    code, _, err = run_cli(["fuzz", "generate", "-n", "-1", "-o", str(out)])
    assert code == 2 and "--count" in err and not out.exists()
    code, _, err = run_cli(["fuzz", "run", "--impl", "x {topology} {schedule}",
                            "--timeout", "nan"])
    assert code == 2 and "--timeout" in err


@pytest.mark.parametrize("argv", [["audit", "fig1", "{nope}"], ["audit", "ring:4", "{nope}"],
                                  ["draw", "fig1", "{nope}", "-o", "{png}"]])
def test_missing_schedule_file_is_named_before_the_topology(argv: list[str], tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]
                                                            ) -> None:
    # fig1 (a one-port platform) is only known for steady-state broadcast schedules: a
    # missing schedule file used to be reported as "'fig1' is neither a topology file..."
    nope = tmp_path / "sched.json"
    argv = [a.replace("{nope}", str(nope)).replace("{png}", str(tmp_path / "x.png"))
            for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"{nope}: no such file" in err and "built-in platform" not in err


@pytest.mark.parametrize("spec,needle", [("dgx_a10:2", "did you mean dgx_a100?"),
                                         ("torrus:4x4", "did you mean torus?"),
                                         ("fig1", "collcert broadcast-steady fig1")])
def test_misspelt_or_one_port_platform_gets_a_hint(spec: str, needle: str,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["optimum", spec]) == 2
    err = capsys.readouterr().err
    assert "neither a topology file nor a built-in platform" in err and needle in err
