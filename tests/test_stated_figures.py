"""Issue 22 item 5: a certificate states nothing the checker does not compare.

Every scalar a certificate or schedule file states is changed in turn; ``collcert
check`` must then fail (or refuse the file), naming the field, except for the few
fields listed in NOT_CLAIMS with the reason they are not figures.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from stated_mutation import accepts, mutated

import collcert
from collcert.certify.dispatch import check_certificate
from collcert.certify.model import InputError
from collcert.cli import main

# (field name, why it is not a figure the checker could prove)
NOT_CLAIMS = {
    "topology": "the topology's hash: a mismatch is reported as a warning, the schedule is "
    "checked against the topology given",
    "topology_name": "a label",
    "index": "a tree's label (equivalent rewrites reorder trees)",
    "tool": "provenance",
    "options": "provenance: the options the file was built with",
    "seconds": "provenance: how long the build took",
}


def _leaves(d: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    if isinstance(d, dict):
        for k, v in d.items():
            if k == "flow" or (path and path[-1] == "seconds"):
                continue
            yield from _leaves(v, (*path, k))
    elif isinstance(d, list):
        if d and isinstance(d[0], dict):
            yield from _leaves(d[0], (*path, 0))
    else:
        yield path, d


def _ignored(topo: collcert.Topology, cert: dict[str, Any]) -> list[str]:
    tj = topo.to_json()
    ok, why = accepts(tj, cert)
    assert ok, why
    missed = []
    for path, value in _leaves(cert):
        if any(str(p) in NOT_CLAIMS for p in path) or path[-1] == "bound7_node":
            continue
        if path == ("certificates", "gstar", "k") and cert.get("root") is not None:
            continue  # a rooted G* is checked with the root's supply, the phase's k
        bad = copy.deepcopy(cert)
        where: Any = bad
        for p in path[:-1]:
            where = where[p]
        where[path[-1]] = mutated(value)
        ok, why = accepts(tj, bad)
        if ok:
            missed.append(".".join(map(str, path)))
        elif not isinstance(path[-1], int) and path[0] not in ("format", "collective"):
            assert str(path[-1]) in why or "format" in why or "kind" in why or why, path
    return missed


CASES = [("allgather", {}), ("reduce-scatter", {}), ("broadcast", {"root": 0}),
         ("reduce", {"root": 0}), ("allreduce", {}), ("allgather", {"weights": [1, 2, 1, 1]})]


@pytest.mark.parametrize(("coll", "kw"), CASES)
def test_every_optimum_figure_is_compared(coll: str, kw: dict[str, Any]) -> None:
    t = collcert.platforms.ring(4)
    assert _ignored(t, collcert.optimum(t, coll, **kw).certificate()) == []


def test_fixed_k_certificate_states_only_what_it_proves() -> None:
    t = collcert.platforms.dgx_a100(2)
    cert = collcert.optimum(t, "allgather", fixed_k=1).certificate()
    assert "inv_x" not in cert and "optimal_algbw" not in cert  # its flows prove U, not x*
    assert _ignored(t, cert) == []


@pytest.mark.parametrize(("coll", "kw"), [("allgather", {}), ("allreduce", {}),
                                          ("broadcast", {"root": 0})])
def test_every_schedule_figure_is_compared(coll: str, kw: dict[str, Any]) -> None:
    t = collcert.platforms.ring(4)
    assert _ignored(t, collcert.schedule(t, coll, **kw).to_json()) == []


def test_bound7_node_must_be_a_largest_cut() -> None:
    t = collcert.platforms.ring(4, bidirectional=False)
    cert = collcert.optimum(t, "allreduce").certificate()
    cert["bound7_node"] = "nowhere"
    ok, why = accepts(t.to_json(), cert)
    assert not ok and "bound7_node" in why


def test_unknown_field_fails_naming_it() -> None:
    t = collcert.platforms.ring(4)
    cert = collcert.optimum(t).certificate()
    cert["speedup"] = "3"
    ok, why = accepts(t.to_json(), cert)
    assert not ok and "'speedup'" in why


def test_cli_refuses_time_per_unit_one(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                       ) -> None:
    """The issue's case: an optimum certificate whose time_per_unit 3/8 became 1."""
    t = collcert.platforms.ring(4)
    cert = collcert.optimum(t).certificate()
    assert cert["time_per_unit"] != "1"
    cert["time_per_unit"] = "1"
    (tmp_path / "t.json").write_text(json.dumps(t.to_json()))
    (tmp_path / "c.json").write_text(json.dumps(cert))
    assert main(["check", str(tmp_path / "t.json"), str(tmp_path / "c.json")]) == 1
    out = capsys.readouterr().out
    assert "FAILED" in out and "'time_per_unit'" in out


def test_schedule_with_unknown_format_is_not_a_bundle() -> None:
    t = collcert.platforms.ring(4)
    doc = collcert.schedule(t, "allreduce").to_json()
    doc["format"] = "collcert-schedule/9"
    with pytest.raises(InputError, match="collcert-schedule/9"):
        check_certificate(t.to_json(), doc)
