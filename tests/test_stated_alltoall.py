"""Issue 22 item 5 for alltoall optimum certificates: every stated field is compared.

Each scalar of a certificate written by ``collcert optimum -c alltoall --certificate``
(full LP and symmetric flows) is changed in turn; the checker must then fail naming
the field (or refuse the file), except the provenance fields ``topology_name`` and
``seconds``. An unknown field fails naming it.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
from pathlib import Path
from typing import Any

import pytest
from stated_mutation import accepts, mutated

import collcert
from collcert.cli import main
from collcert.reference.alltoall import alltoall_optimum

PROVENANCE = {"topology_name", "seconds"}
# fields whose mutation the LP / flow checks catch (their names are in the LP, not here)
WITNESS_DATA = {"lp", "primal", "dual", "flows", "lengths", "automorphisms", "cut"}


def _cert(topo: collcert.Topology, symmetry: bool, tmp_path: Path) -> dict[str, Any]:
    """What `collcert optimum -c alltoall --certificate` writes (witness, name, seconds);
    with symmetry the same fields on the API's certificate (the CLI uses symmetry only
    from orbits.AUTO_MIN_COMPUTE compute nodes on)."""
    if symmetry:
        opt = alltoall_optimum(topo, symmetry=True)
        return {**opt.certificate(), "topology_name": topo.name, "witness": opt.witness(),
                "seconds": 0.1}
    (tmp_path / "t.json").write_text(json.dumps(topo.to_json()))
    out = tmp_path / "c.json"
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["optimum", str(tmp_path / "t.json"), "-c", "alltoall",
                     "--certificate", "--no-symmetry"]) == 0
    out.write_text(buf.getvalue())
    cert: dict[str, Any] = json.loads(buf.getvalue())
    assert "method" not in cert
    return cert


@pytest.mark.parametrize("symmetry", [False, True])
def test_every_alltoall_field_is_compared(symmetry: bool, tmp_path: Path) -> None:
    t = collcert.platforms.ring(4)
    cert = _cert(t, symmetry, tmp_path)
    tj = t.to_json()
    ok, why = accepts(tj, cert)
    assert ok, why
    assert {"witness", "unit", "num_compute", "format", "collective", "kind"} <= set(cert)
    missed = []
    for key, value in cert.items():
        if key in PROVENANCE or key in WITNESS_DATA:
            continue
        bad = copy.deepcopy(cert)
        bad[key] = mutated(value)
        ok, why = accepts(tj, bad)
        if ok:
            missed.append(key)
        elif key not in ("topology", "format", "kind") and not (symmetry and key == "lambda"):
            # (the first three are refused before; symmetric flows are checked against λ)
            assert f"'{key}'" in why or key in why, (key, why)
    assert missed == []
    for key in PROVENANCE & set(cert):  # provenance: a label and a wall time
        bad = copy.deepcopy(cert)
        bad[key] = mutated(cert[key])
        assert accepts(tj, bad)[0], key


def test_witness_figure_changed_fails() -> None:
    t = collcert.platforms.dgx1()
    opt = alltoall_optimum(t, symmetry=False)
    cert = opt.certificate()
    cert["witness"] = opt.witness()
    assert accepts(t.to_json(), cert)[0]
    cert["witness"] = cert["witness"].replace("B⁺(S) = ", "B⁺(S) = 1")
    ok, why = accepts(t.to_json(), cert)
    assert not ok and "'witness'" in why


@pytest.mark.parametrize("key", ["speedup", "method"])
def test_unknown_alltoall_field_fails_naming_it(key: str) -> None:
    t = collcert.platforms.ring(4)
    cert = alltoall_optimum(t, symmetry=False).certificate()
    cert[key] = "3"
    ok, why = accepts(t.to_json(), cert)
    assert not ok and f"'{key}'" in why


def test_cli_refuses_wrong_num_compute(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    t = collcert.platforms.ring(4)
    cert = _cert(t, False, tmp_path)
    capsys.readouterr()
    cert["num_compute"] = 5
    (tmp_path / "c.json").write_text(json.dumps(cert))
    assert main(["check", str(tmp_path / "t.json"), str(tmp_path / "c.json")]) == 1
    out = capsys.readouterr().out
    assert "FAILED" in out and "'num_compute'" in out


@pytest.mark.parametrize("symmetry", [False, True])
def test_witness_without_a_cut_is_the_duality_sentence(symmetry: bool) -> None:
    t = collcert.platforms.ring(4)
    opt = alltoall_optimum(t, symmetry=symmetry)
    opt.cut = None  # no cut meets λ: the witness is the LP duality (or lengths) sentence
    cert = {**opt.certificate(), "witness": opt.witness()}
    assert "cut" not in cert and accepts(t.to_json(), cert)[0]
    cert["witness"] = "the cut S with compute nodes {0} has egress B⁺(S) = 9"
    ok, why = accepts(t.to_json(), cert)
    assert not ok and "'witness'" in why
