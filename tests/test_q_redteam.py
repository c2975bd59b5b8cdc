"""Red-team holes of the second round (helper Q; /work/notes/O.md section 5): long solves
say their size and estimate before the work, and files handed to the wrong command or
platform say what they are and what they want."""

from __future__ import annotations

from typing import Any

import pytest

from collcert import platforms
from collcert.cli import main
from collcert.commands import _alltoall
from collcert.reference.alltoall import alltoall_optimum
from collcert.reference.alltoall.lp_size import solve_seconds


def test_alltoall_notice_comes_before_the_solve_with_the_lp_size() -> None:
    heard: list[tuple[str, float]] = []
    t = platforms.ring(6)
    opt = alltoall_optimum(t, symmetry=False, notice=lambda w, s: heard.append((w, s)))
    cols = 6 * len(t.capacity)
    assert heard == [(f"the alltoall LP with {cols} flow variables (6 compute nodes × "
                      f"{len(t.capacity)} links)", solve_seconds(cols))]
    assert opt.result.stats["columns"] == cols + 1  # the flows and λ: the size it said
    heard.clear()
    alltoall_optimum(t, symmetry=True, notice=lambda w, s: heard.append((w, s)))
    assert len(heard) == 1 and "orbits of compute nodes" in heard[0][0]


def test_alltoall_long_estimate_is_printed_before_the_solve(
        capsys: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_alltoall, "ESTIMATE_SHOWN_FROM", 0.0)  # ring:6 counts as long
    assert main(["optimum", "-c", "alltoall", "ring:6"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert "estimated about" in err[0] and "flow variables" in err[0]
    assert "LP solved in" in err[1] and "certificate checked in" in err[2]
    monkeypatch.setattr(_alltoall, "ESTIMATE_SHOWN_FROM", 10.0**9)
    assert main(["optimum", "-c", "alltoall", "ring:6"]) == 0
    assert capsys.readouterr().err == ""  # a short solve stays quiet without --progress
    assert main(["optimum", "-c", "alltoall", "ring:6", "--progress"]) == 0
    assert "estimated about" in capsys.readouterr().err


@pytest.fixture(scope="module")
def fig1_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """What 'broadcast-steady fig1 -o' writes: steady, PIPE (--size) and series (--messages)."""
    import contextlib
    import io

    folder = tmp_path_factory.mktemp("fig1")
    out = {}
    for kind, extra in (("steady", []), ("pipe", ["--size", "10"]),
                        ("series", ["--messages", "5"])):
        out[kind] = str(folder / f"{kind}.json")
        with contextlib.redirect_stdout(io.StringIO()):
            assert main(["broadcast-steady", "fig1", *extra, "-o", out[kind]]) == 0
    return out


@pytest.mark.parametrize("kind", ["steady", "pipe", "series"])
@pytest.mark.parametrize("command", ["audit", "check"])
def test_a_schedule_of_another_platform_says_so_first(
        fig1_files: dict[str, str], kind: str, command: str, capsys: Any) -> None:
    """O.5.4: audited on fig5, a fig1 schedule is refused for its platform hash, not for a
    link fig5 lacks ('lp n[4]: '2' -> '1' is not a link')."""
    assert main([command, "fig5", fig1_files[kind]]) == 1
    out = capsys.readouterr().out
    assert "made for another platform ('Legrand et al. 2003, Fig. 1')" in out
    assert "is not a link" not in out
    assert main([command, "fig1", fig1_files[kind]]) == 0


@pytest.mark.parametrize("kind,words", [("steady", "a steady-state broadcast schedule"),
                                        ("pipe", "a pipelined-broadcast (PIPE) schedule"),
                                        ("series", "a series of broadcasts")])
def test_a_one_port_schedule_given_as_a_platform_says_what_it_is(
        fig1_files: dict[str, str], kind: str, words: str, capsys: Any) -> None:
    """O.5.5: 'audit ring:4 pipe.json' and 'broadcast-steady pipe.json' say what the file
    is and which platform argument it wants."""
    path = fig1_files[kind]
    assert main(["audit", "ring:4", path]) == 2
    err = capsys.readouterr().err
    assert "'ring:4' is neither a platform" in err and words in err
    assert f"run 'collcert audit fig1 {path}'" in err
    assert main(["broadcast-steady", path]) == 2
    err = capsys.readouterr().err
    assert words in err and "not a platform" in err and f"collcert audit fig1 {path}" in err
    assert main(["audit", path, path]) == 2
    assert capsys.readouterr().err.count("not a platform") == 1  # said once


def test_the_platform_wanted_is_found_by_its_hash(tmp_path: Any, capsys: Any) -> None:
    """A random platform's schedule names its built-in argument; a file platform's, its
    name (no built-in has its hash)."""
    import json

    path = tmp_path / "r.json"
    assert main(["broadcast-steady", "random:30,4", "-o", str(path)]) == 0
    capsys.readouterr()
    assert main(["broadcast-steady", str(path)]) == 2
    assert f"run 'collcert audit random:30,4 {path}'" in capsys.readouterr().err
    doc = json.loads(path.read_text())
    doc["topology_name"] = "my machine"
    path.write_text(json.dumps(doc))
    assert main(["broadcast-steady", str(path)]) == 2
    err = capsys.readouterr().err
    assert "made for 'my machine' (a platform file" in err and "collcert audit" not in err


@pytest.mark.parametrize("extra", [[], ["--size", "10"], ["--messages", "3"]])
def test_broadcast_steady_long_estimate_comes_first(
        extra: list[str], capsys: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """O.5.6: random:2000 ran minutes silently; a solve predicted long says its estimate
    before the work and shows the rounds of cuts (here fig1 counts as long)."""
    from collcert.commands import _pipe

    monkeypatch.setattr(_pipe, "ESTIMATE_SHOWN_FROM", 0.0)
    assert main(["broadcast-steady", "fig1", *extra]) == 0
    err = capsys.readouterr().err
    assert err.startswith("note: SSB by cut generation (Legrand et al. 2003, §5.2) on 5 nodes "
                          "and 6 links: estimated about")
    assert "broadcast-steady LP (rounds of cuts)" in err and "T* ≥ 1" in err
    monkeypatch.setattr(_pipe, "ESTIMATE_SHOWN_FROM", 10.0**9)
    assert main(["broadcast-steady", "fig1", *extra]) == 0
    assert capsys.readouterr().err == ""  # a short solve stays quiet


def test_broadcast_steady_refusal_comes_before_the_estimate(
        capsys: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from collcert.commands import _pipe

    monkeypatch.setattr(_pipe, "ESTIMATE_SHOWN_FROM", 0.0)
    monkeypatch.setenv("COLLCERT_MAX_MEMORY", "1000")
    assert main(["broadcast-steady", "fig1"]) == 2
    err = capsys.readouterr().err
    assert "SSB by cut generation on 5 nodes and 6 links" in err and "estimated" not in err


def test_an_allreduce_bundle_of_another_topology_says_so_first(tmp_path: Any,
                                                              capsys: Any) -> None:
    """O.5.10: a bundle of a changed ring:12, checked on ring:12, failed with 'the cut has
    B⁺(S) = 2, not the claimed 3/2' and a dozen more; now one reason: the hash."""
    import json

    path = tmp_path / "c.json"
    assert main(["optimum", "-c", "allreduce", "ring:6", "--degrade", "0<>1=1/2",
                 "--certificate"]) == 0
    path.write_text(capsys.readouterr().out)
    assert main(["check", "ring:6", str(path)]) == 1
    out = capsys.readouterr().out
    reasons = [line for line in out.splitlines() if line.startswith("  - ")]
    assert len(reasons) == 1 and "the certificate is for topology sha256:" in reasons[0]
    assert "give the same options to collcert check" in reasons[0]
    assert main(["check", "ring:6", str(path), "--degrade", "0<>1=1/2"]) == 0
    capsys.readouterr()
    doc = json.loads(path.read_text())
    path.write_text(json.dumps({**doc, "topology": "garbage"}))
    assert main(["check", "ring:6", str(path), "--degrade", "0<>1=1/2"]) == 1
    assert "'garbage' is not a topology fingerprint" in capsys.readouterr().out


def test_one_disconnected_sentence_for_every_command(capsys: Any) -> None:
    """The lead's 09:30 item: 'after link h0.0.0 ↔ edge0.0: failed the machine is
    disconnected' was written three times; now one WhatIf method words it."""
    from collcert.reference.model import what_if

    w = what_if(platforms.ring(4), [], ["0<>1", "2<>3"], strict=False)
    assert w.disconnected_text("X") == ("the machine is disconnected (link 0 ↔ 1: failed; "
                                        "link 2 ↔ 3: failed): 2 compute nodes are cut off "
                                        "(0, 3), so X")
    fail = ["--fail", "0<>1", "--fail", "2<>3"]
    for argv in (["schedule", "ring:4", *fail], ["compare", "ring:4", *fail],
                 ["optimum", "ring:4", *fail, "--certificate"],
                 ["optimum", "-c", "alltoall", "ring:4", *fail, "--certificate"]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert "the machine is disconnected (link 0 ↔ 1: failed; link 2 ↔ 3: failed): 2 " \
               "compute nodes are cut off (0, 3), so " in err, argv
    assert main(["schedule", "fat_tree:4", "--fail", "h0.0.0<>edge0.0"]) == 2
    assert "(link h0.0.0 ↔ edge0.0: failed): 1 compute node is cut off (h0.0.0), so the " \
           "rate is 0" in capsys.readouterr().err
