"""Hostile and broken input: a clear ScheduleError (CLI exit 2), never a traceback."""

from __future__ import annotations

import contextlib
import io
import pathlib

import pytest
from test_certify_schedule import ring_allgather as ring_trees

from collcert import ScheduleError, platforms
from collcert.auditing import audit, audit_file
from collcert.cli import main

LAUGHS = ('<?xml version="1.0"?>\n<!DOCTYPE lolz [\n <!ENTITY lol "lol">\n'
          + "".join(f' <!ENTITY lol{i} "{("&lol" + str(i - 1) + ";") * 10}">\n'
                    for i in range(1, 10)).replace("&lol0;", "&lol;")
          + ']>\n<algo nchunkspernode="1"><tree root="&lol9;"/></algo>\n')

EXTERNAL = ('<?xml version="1.0"?><!DOCTYPE a [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
            '<algo nchunkspernode="1"><tree root="&x;"/></algo>')


@pytest.mark.parametrize("text, fmt, needle", [
    (LAUGHS, None, "DOCTYPE"),
    (LAUGHS, "msccl-xml", "DOCTYPE"),
    (EXTERNAL, "forestcoll-xml", "DOCTYPE"),
    ('<algo nchunkspernode="1"><tree root="0">', None, "not well-formed"),
    ("<x>" * 100 + "</x>" * 100, "forestcoll-xml", "nested deeper"),
    ('{"format": "collcert-schedule/1", "phases": [', None, "not valid JSON"),
    ("[" * 200_000 + "]" * 200_000, "json", "JSON"),
    ("just words", None, "neither JSON nor XML"),
    ("[1, 2, 3]", "json", "a schedule file is a JSON object"),
    ('<algo nchunkspernode="-3"/>', None, "out of range"),
    ('<algo nchunkspernode="1"><tree root="9"><send src="9" dst="0"/></tree></algo>', None,
     "'9', which is not a node"),
    ('<algo nchunkspernode="1"><bogus/></algo>', None, "expected <tree>"),
    ('<algo nchunkspernode="1" collective="alltoall"/>', None, "not one of"),
], ids=lambda x: x[:30] if isinstance(x, str) else str(x))
def test_unreadable_schedules(text: str, fmt: str | None, needle: str) -> None:
    with pytest.raises(ScheduleError, match=needle):
        audit(platforms.ring(4), text, fmt)


def test_unknown_node_in_json() -> None:
    s = ring_trees(4)
    s["phases"][0]["trees"][2]["edges"][0]["path"] = [2, "nvswitch9", 3]
    with pytest.raises(ScheduleError, match="'nvswitch9', which is not a node of the topology"):
        audit(platforms.ring(4), s)


def test_a_million_trees_is_refused_quickly() -> None:
    body = '<tree root="0" nchunks="1"/>' * 1_000_000
    with pytest.raises(ScheduleError, match="more than 400000 <tree> elements"):
        audit(platforms.ring(4), f'<algo nchunkspernode="1">{body}</algo>')
    trees = ",".join(['{"root": 0, "edges": []}'] * 1_000_000)
    doc = ('{"format": "collcert-schedule/1", "collective": "allgather", "phases": '
           f'[{{"collective": "allgather", "k": 1, "trees": [{trees}]}}]}}')
    with pytest.raises(ScheduleError, match="more than 400000 trees"):
        audit(platforms.ring(4), doc)


def test_absurd_numbers() -> None:
    s = ring_trees(4)
    s["phases"][0]["k"] = "9" * 5000  # a string (the schema says integer): refused, shortly
    with pytest.raises(ScheduleError, match="expected a JSON integer") as info:
        audit(platforms.ring(4), s)
    assert len(str(info.value)) < 300
    s = ring_trees(4)
    s["phases"][0]["k"] = 10**4000
    with pytest.raises(ScheduleError, match="only up to 4000 bits"):
        audit(platforms.ring(4), s)
    s = ring_trees(4)
    s["phases"][0]["trees"][0]["multiplicity"] = 1.5
    with pytest.raises(ScheduleError, match="expected an integer"):
        audit(platforms.ring(4), s)


def test_files(tmp_path: pathlib.Path) -> None:
    binary = tmp_path / "x.json"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(ScheduleError, match="not UTF-8"):
        audit_file(platforms.ring(4), binary)
    with pytest.raises(ScheduleError, match="is a directory"):
        audit_file(platforms.ring(4), tmp_path)
    empty = tmp_path / "empty.xml"
    empty.write_text("")
    with pytest.raises(ScheduleError):
        audit_file(platforms.ring(4), empty)


@pytest.mark.parametrize("text", [LAUGHS, "{", "<algo", '{"format": 3}'],
                         ids=["laughs", "brace", "open-tag", "format"])
def test_cli_exit_2_without_traceback(tmp_path: pathlib.Path, text: str) -> None:
    f = tmp_path / "s.txt"
    f.write_text(text)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["audit", "ring:4", str(f)])
    assert code == 2
    assert "Traceback" not in err.getvalue() and "error:" in err.getvalue()


@pytest.mark.parametrize("drop", [True, False], ids=["missing", "null"])
def test_broadcast_without_root_says_the_key_is_missing(drop: bool) -> None:
    # a broadcast on the 4-ring from node 0: two paths, 0 -> 1 -> 2 and 0 -> 3
    s = {"format": "collcert-schedule/1", "collective": "broadcast", "compute_nodes": [0, 1, 2, 3],
         "root": 0, "phases": [{"collective": "broadcast", "k": 1, "trees": [
             {"root": 0, "multiplicity": 1, "direction": "out", "edges": [
                 {"src": 0, "dst": 1, "path": [0, 1]}, {"src": 1, "dst": 2, "path": [1, 2]},
                 {"src": 0, "dst": 3, "path": [0, 3]}]}]}]}
    assert audit(platforms.ring(4), s).valid
    if drop:
        del s["root"]
    else:
        s["root"] = None
    with pytest.raises(ScheduleError, match=f"'root' is {'missing' if drop else 'null'}"):
        audit(platforms.ring(4), s)
