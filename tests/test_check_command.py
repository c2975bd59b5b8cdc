"""``collcert check``: certificates checked by collcert.certify alone.

The subprocess tests make ``collcert.reference`` unimportable (a meta-path finder
installed by a ``sitecustomize`` on PYTHONPATH), so a passing check shows that only
the independent checkers ran.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import collcert
from collcert import optimum, platforms
from collcert.cli import main

BLOCK = '''
import sys

class _NoReference:
    def find_spec(self, name, path=None, target=None):
        if name == "collcert.reference" or name.startswith("collcert.reference."):
            raise ModuleNotFoundError(f"collcert.reference is blocked for this test: {name}",
                                      name=name)
        return None

sys.meta_path.insert(0, _NoReference())
'''


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("check")
    (d / "block").mkdir()
    (d / "block" / "sitecustomize.py").write_text(BLOCK)
    t = platforms.two_box_example()
    (d / "topo.json").write_text(json.dumps(t.to_json()))
    (d / "opt.json").write_text(json.dumps(optimum(t, "allgather").certificate()))
    sched = collcert.schedule(t, "allgather").to_json()
    (d / "sched.json").write_text(json.dumps(sched))
    (d / "split.json").write_text(json.dumps(sched["certificates"]))
    # min x + 2y s.t. x + y >= 3: x = 3, y = 0; the dual y_r = 1 (<= both costs) gives 3
    lp = {"objective": {"x": 1, "y": 2},
          "rows": [{"name": "r", "coefs": {"x": 1, "y": 1}, "sense": ">=", "rhs": 3}]}
    (d / "lp.json").write_text(json.dumps({"lp": lp, "primal": {"x": 3, "y": 0},
                                           "dual": {"r": 1}}))
    from collcert.reference.alltoall import alltoall_optimum

    (d / "a2a.json").write_text(json.dumps(alltoall_optimum(t).certificate()))
    # by symmetry: generators, representative flows and link lengths (certify/alltoall_sym)
    (d / "a2a_sym.json").write_text(json.dumps(alltoall_optimum(t, symmetry=True).certificate()))
    # the all-reduce chain writes several certificates in one file
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["optimum", str(d / "topo.json"), "-c", "allreduce", "--certificate"]) == 0
    (d / "ar.json").write_text(buf.getvalue())
    return {p.stem: p for p in d.iterdir()}


def _run_blocked(files: dict[str, Path], *args: str) -> tuple[int, dict[str, Any], str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(files["block"])] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep)
                                 if p]))
    proc = subprocess.run([sys.executable, "-m", "collcert", "check", *args, "--json"],
                          capture_output=True, text=True, env=env, timeout=120)
    out = json.loads(proc.stdout) if proc.stdout.strip().startswith("{") else {}
    return proc.returncode, out, proc.stderr


@pytest.mark.parametrize("name, kind", [("opt", "optimum"), ("sched", "schedule"),
                                        ("split", "splitting"), ("lp", "lp"),
                                        ("a2a", "alltoall-optimum"),
                                        ("a2a_sym", "alltoall-optimum"), ("ar", "bundle")])
def test_check_runs_without_the_reference(files: dict[str, Path], name: str, kind: str) -> None:
    code, out, err = _run_blocked(files, str(files["topo"]), str(files[name]))
    assert code == 0, err
    assert out["ok"] and out["kind"] == kind
    assert out["reference_modules_imported"] == []
    assert out["checker"].startswith("collcert.certify.")


def test_the_block_really_blocks(files: dict[str, Path]) -> None:
    # the same environment cannot run a command that needs the reference
    env = dict(os.environ, PYTHONPATH=str(files["block"]))
    proc = subprocess.run([sys.executable, "-m", "collcert", "optimum", str(files["topo"])],
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 2 and "blocked" in proc.stderr


def test_a_tampered_certificate_fails_without_the_reference(files: dict[str, Path],
                                                            tmp_path: Path) -> None:
    cert = json.loads(files["opt"].read_text())
    cert["algbw"] = "1000"  # more than the cut allows
    (tmp_path / "bad.json").write_text(json.dumps(cert))
    code, out, _ = _run_blocked(files, str(files["topo"]), str(tmp_path / "bad.json"))
    assert code == 1 and not out["ok"] and out["reasons"]
    assert out["reference_modules_imported"] == []


def test_check_in_process(files: dict[str, Path], capsys: pytest.CaptureFixture[str],
                          tmp_path: Path) -> None:
    assert main(["check", str(files["topo"]), str(files["opt"])]) == 0
    out = capsys.readouterr().out
    assert out.startswith("OK: allgather optimum certificate") and "algbw" in out
    # an LP certificate whose dual is not optimal
    cert = json.loads(files["lp"].read_text())
    cert["dual"] = {k: "0" for k in cert["dual"]}
    (tmp_path / "lp.json").write_text(json.dumps(cert))
    assert main(["check", str(files["topo"]), str(tmp_path / "lp.json")]) == 1
    assert "objectives differ" in capsys.readouterr().out


@pytest.mark.parametrize("content, needle", [
    ("{}", "cannot tell what this certificate is"),
    ('{"kind": "telepathy"}', "certificate kind 'telepathy'"),
    ("<algo/>", "XML file is a schedule"),
    ("[1, 2", "not valid JSON"),
])
def test_unreadable_certificates_exit_2(files: dict[str, Path], tmp_path: Path, content: str,
                                        needle: str, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "c.json").write_text(content)
    assert main(["check", str(files["topo"]), str(tmp_path / "c.json")]) == 2
    assert needle in capsys.readouterr().err


def test_package_import_does_not_load_the_reference() -> None:
    # the package, the CLI module, the audit module and the checkers import no reference
    # code (the command modules, imported by build_parser, do)
    code = ("import sys, collcert, collcert.cli, collcert.auditing, collcert.certify.dispatch; "
            "print(sorted(m for m in sys.modules if m.startswith('collcert.reference')))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"
    # ... and the names that come from the reference still resolve, lazily
    assert callable(collcert.audit) and collcert.Topology.__name__ == "Topology"
    assert collcert.ScheduleError.collcert_bad_input is True


def test_a_bundle_fails_when_one_certificate_does(files: dict[str, Path], tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    cert = json.loads(files["ar"].read_text())
    name, sub = next((k, c) for k, c in cert["certificates"].items() if c.get("kind") == "optimum")
    sub["algbw"] = "1000"
    (tmp_path / "ar.json").write_text(json.dumps(cert))
    assert main(["check", str(files["topo"]), str(tmp_path / "ar.json")]) == 1
    assert f"{name} (optimum): " in capsys.readouterr().out


def test_check_imports_no_reference_even_where_it_is_installed(files: dict[str, Path]) -> None:
    # the report's list is what the check itself imported: a JSON topology needs no
    # reference module, even where collcert.reference is importable (the other command
    # modules, which do import it, are not loaded for 'collcert check')
    proc = subprocess.run([sys.executable, "-m", "collcert", "check", str(files["topo"]),
                           str(files["sched"]), "--json"], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["reference_modules_imported"] == []
    # a built-in platform is built by the reference, and the list says so
    proc = subprocess.run([sys.executable, "-m", "collcert", "check", "two_box_example",
                           str(files["opt"]), "--json"], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "collcert.reference.model.topology" in json.loads(proc.stdout)["reference_modules_imported"]


def test_a_machine_file_as_topology_is_sent_to_collcert_import(
        files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    xml = Path(__file__).parent / "data" / "importers" / "dgx_a100_dump.xml"
    assert main(["check", str(xml), str(files["opt"])]) == 2
    assert f"collcert import {xml} -o topo.json" in capsys.readouterr().err


def test_detect_by_format_without_kind(files: dict[str, Path]) -> None:
    """A certificate whose "kind" was dropped is still sent to the right checker: an
    alltoall optimum (not the allgather optimum checker, which would misread it) and an
    LP certificate by its format name."""
    from collcert.certify.dispatch import detect

    a2a = json.loads(files["a2a"].read_text())
    del a2a["kind"]
    assert detect(a2a) == "alltoall-optimum"
    opt = json.loads(files["opt"].read_text())
    opt.pop("kind", None)
    assert detect(opt) == "optimum"
    lp = json.loads(files["lp"].read_text())
    assert detect({"format": "collcert-lp-certificate/1", **lp}) == "lp"


@pytest.mark.parametrize("name", ["lp", "a2a"])
def test_check_refutes_a_false_objective(files: dict[str, Path], name: str,
                                         capsys: pytest.CaptureFixture[str],
                                         tmp_path: Path) -> None:
    """The 'objective' an LP certificate states (reference/solvers/lp.py writes it) must be the
    value its primal and dual prove; it was passed unread (exit 0 with objective 7)."""
    cert = json.loads(files[name].read_text())
    cert["objective"] = "7"
    (tmp_path / "c.json").write_text(json.dumps(cert))
    assert main(["check", str(files["topo"]), str(tmp_path / "c.json")]) == 1
    assert "claims objective 7" in capsys.readouterr().out
