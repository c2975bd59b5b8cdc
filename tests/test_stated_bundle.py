"""Issue 22 item 5 for the allreduce certificate bundle (`collcert optimum -c allreduce
--certificate`, checked by certify/dispatch.check_bundle and certify/bundle_fields.py).

Every scalar the bundle states outside its certificates is changed in turn: `collcert
check` must then fail naming the field, except the provenance fields (`topology_name`,
`seconds`, `maxflows`), the texts of `not_applicable` (reasons in words) and a
refutation's `multiplier` (the witness's own scale). An unknown field fails.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from stated_mutation import accepts, mutated

import collcert
from collcert.cli import main

NOT_CLAIMS = {"topology_name", "seconds", "maxflows", "not_applicable", "multiplier"}


def _topology(name: str) -> dict[str, Any]:
    if name == "ring:4":
        return collcert.platforms.ring(4).to_json()
    pairs = {"star": [(0, 1, 2, 2), (0, 2, 3, 3), (0, 3, 1, 1)],  # a bi-directed tree
             "not-eulerian": [(0, 1, 2, 1), (1, 2, 3, 3), (2, 0, 1, 2)]}[name]
    links = []
    for a, b, c, d in pairs:
        links += [{"src": a, "dst": b, "capacity": str(c)}, {"src": b, "dst": a,
                                                             "capacity": str(d)}]
    nodes = sorted({x for p in pairs for x in p[:2]})
    return {"format": "collcert-topology/1", "name": name, "unit": "GB/s",
            "compute_nodes": nodes, "switch_nodes": [], "links": links}


def _bundle(tj: dict[str, Any], tmp_path: Path, *more: str) -> dict[str, Any]:
    (tmp_path / "t.json").write_text(json.dumps(tj))
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["optimum", str(tmp_path / "t.json"), "-c", "allreduce",
                     "--certificate", *more]) == 0
    cert: dict[str, Any] = json.loads(buf.getvalue())
    return cert


def _leaves(d: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    if isinstance(d, dict):
        for k, v in d.items():
            if not path and k == "certificates":
                continue  # each checked by its own checker (tests/test_stated_figures.py)
            yield from _leaves(v, (*path, k))
    elif isinstance(d, list) and d:
        yield from _leaves(d[0], (*path, 0))
    else:
        yield path, d


@pytest.mark.parametrize("name", ["ring:4", "star", "not-eulerian", "star-method"])
def test_every_bundle_field_is_compared(name: str, tmp_path: Path) -> None:
    tj = _topology(name.removesuffix("-method"))
    cert = _bundle(tj, tmp_path, *(["--method", "bidirected-tree"] if name.endswith(
        "-method") else []))
    ok, why = accepts(tj, cert)
    assert ok, why
    if name == "star":
        assert cert["bidirected_tree"] is not None and cert["checked_by_certify"][
            "bidirected_tree"] is True
    if name == "not-eulerian":
        assert cert["thm19"] is None and "rsag" in cert["not_applicable"]
    missed = []
    for path, value in _leaves(cert):
        if any(str(p) in NOT_CLAIMS for p in path):
            continue
        bad = copy.deepcopy(cert)
        where: Any = bad
        for p in path[:-1]:
            where = where[p]
        where[path[-1]] = mutated(value)
        if not accepts(tj, bad)[0]:
            continue
        missed.append(".".join(map(str, path)))
    assert missed == []
    for key in NOT_CLAIMS & set(cert) - {"not_applicable"}:  # provenance passes
        bad = copy.deepcopy(cert)
        bad[key] = mutated(cert[key])
        assert accepts(tj, bad)[0], key


def test_bundle_field_errors_name_the_field(tmp_path: Path) -> None:
    tj = _topology("ring:4")
    cert = _bundle(tj, tmp_path)
    cases = {"speedup": ("speedup", "3"), "corollary_2_1": ("corollary_2_1", "2"),
             "cut_set_cut": ("cut_set_cut", [1]), "checked_by_certify": (
                 "checked_by_certify", {**cert["checked_by_certify"], "thm19": False}),
             "not_applicable": ("not_applicable", {"mac_bc_lp": "not asked for"}),
             "unit": ("unit", "Gb/s"), "num_compute": ("num_compute", 5)}
    for label, (key, value) in cases.items():
        bad = {**cert, key: value}
        ok, why = accepts(tj, bad)
        assert not ok and f"'{label}'" in why, (label, why)
    bad = copy.deepcopy(cert)
    bad["chain"][-1]["model"] = "routing"  # the cut-set bound allows coding
    ok, why = accepts(tj, bad)
    assert not ok and ".model'" in why
    bad = copy.deepcopy(cert)
    bad["thm19"]["theorem"] = "Thm 20"
    ok, why = accepts(tj, bad)
    assert not ok and "'thm19.theorem'" in why


def test_cli_refuses_a_changed_bidirected_tree_rate(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    cert = _bundle(_topology("star"), tmp_path)
    capsys.readouterr()
    cert["bidirected_tree"]["r_star"] = "2"
    (tmp_path / "c.json").write_text(json.dumps(cert))
    assert main(["check", str(tmp_path / "t.json"), str(tmp_path / "c.json")]) == 1
    out = capsys.readouterr().out
    assert "FAILED" in out and "'bidirected_tree.r_star'" in out


def test_rate_certificates_state_nothing_unchecked(tmp_path: Path) -> None:
    """The cut-set, MAC-BC and LP (5) certificates: a field their checker does not read
    fails, naming it; a cut-set flow's stated value must be what the flow carries."""
    tj = _topology("not-eulerian")  # no symmetry: no equivalent witness to mutate into
    subs = _bundle(tj, tmp_path)["certificates"]
    for name in ("cut_set_bound", "mac_bc_lp", "forestcoll_lp"):
        assert accepts(tj, subs[name])[0]
        ok, why = accepts(tj, {**subs[name], "speedup": "2"})
        assert not ok and "'speedup'" in why, name
    bad = copy.deepcopy(subs["cut_set_bound"])
    bad["flows"][0]["value"] += 1
    ok, why = accepts(tj, bad)
    assert not ok and "flows[0]" in why and "value" in why
    lp5_cuts = _bundle(_topology("ring:4"), tmp_path)["certificates"]["forestcoll_lp"]
    assert lp5_cuts["method"] == "cuts"
    ok, why = accepts(_topology("ring:4"), {**lp5_cuts, "rounds": 3})
    assert not ok and "'rounds'" in why
