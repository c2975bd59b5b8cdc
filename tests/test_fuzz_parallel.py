"""Fuzz campaigns across processes and a dask cluster (collcert fuzz --jobs / --dask).

Every parallel campaign is compared with a single-process run of the same seeds:
the same cases, statuses and reasons, the same shrunk counterexamples saved under
the same names with the same contents. A worker that dies loses no case: the case
that killed it is reported, the others are run again.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from collcert.cli import main
from collcert.fuzz import parallel
from collcert.fuzz import properties as props
from collcert.fuzz.parallel import Crashed, in_order, run_tasks
from collcert.reference.model import Topology

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import TOY  # noqa: E402  (the toy generator with injectable bugs)
from parallel_tasks import square_or_die  # noqa: E402

distributed = pytest.importorskip("distributed")


def fails_from_six_links(t: Topology) -> None:
    """A property that does not hold on topologies with 6 or more directed links."""
    if len(t.capacity) >= 6:
        raise props.PropertyFailure(f"{len(t.capacity)} links")


@pytest.fixture(scope="module")
def cluster() -> Any:
    with distributed.LocalCluster(n_workers=2, processes=False, threads_per_worker=1,
                                  dashboard_address=":0") as c:
        yield c


@pytest.fixture()
def toy(tmp_path: Path) -> str:
    script = tmp_path / "toy.py"
    script.write_text(TOY)
    return f"{json.dumps(sys.executable)} {json.dumps(str(script))} {{topology}} {{schedule}}"


def test_in_order_restores_the_order_and_counts() -> None:
    seen: list[int] = []
    got = list(in_order(iter([(2, "c"), (0, "a"), (1, "b")]), 3,
                        lambda done, _: seen.append(done)))
    assert got == [(0, "a"), (1, "b"), (2, "c")] and seen == [1, 2, 3]
    with pytest.raises(RuntimeError):
        list(in_order(iter([(1, "b")]), 2))


def test_processes_give_the_serial_results() -> None:
    tasks = [(i, -1) for i in range(9)]
    serial = list(run_tasks(square_or_die, tasks))
    assert serial == [(i, i * i) for i in range(9)]
    assert sorted(run_tasks(square_or_die, tasks, jobs=2)) == serial


def test_a_dying_worker_loses_no_case(tmp_path: Path) -> None:
    tasks = [(i, 4) for i in range(6)]
    got = dict(run_tasks(square_or_die, tasks, jobs=2))
    assert sorted(got) == list(range(6))  # every case came back
    assert isinstance(got[4], Crashed) and "died" in got[4].reason
    assert all(got[i] == i * i for i in range(6) if i != 4)
    # a worker that dies once is retried, and the case then succeeds
    marker = str(tmp_path / "died-once")
    got = dict(run_tasks(square_or_die, [(i, 4, marker) for i in range(6)], jobs=2))
    assert got == {i: i * i for i in range(6)} and os.path.exists(marker)


def test_dask_cluster_gives_the_serial_results(cluster: Any) -> None:
    tasks = [(i, -1) for i in range(7)]
    got = list(in_order(run_tasks(square_or_die, tasks, dask=cluster.scheduler_address), 7))
    assert got == [(i, i * i) for i in range(7)]


def _report(out: str, key: str) -> Any:
    data = json.loads(out)
    for case in data[key]:
        case.pop("seconds", None)
        if case.get("saved"):
            case["saved"] = Path(case["saved"]).name
            case["reproduce"] = case.get("reproduce", "").split(" --replay ")[0]
    return data


def _files(folder: Path) -> dict[str, str]:
    out = {}
    for p in sorted(folder.glob("*.json")):
        data = json.loads(p.read_text())
        data.pop("source", None)  # the reproducer names the folder
        out[p.name] = json.dumps(data, sort_keys=True)
    return out


def test_fuzz_run_with_jobs_and_dask_matches_one_process(
        toy: str, tmp_path: Path, cluster: Any, capsys: pytest.CaptureFixture[str]) -> None:
    reports, files = [], []
    for name, extra in (("one", []), ("jobs", ["--jobs", "2", "--progress"]),
                        ("dask", ["--dask", cluster.scheduler_address])):
        save = tmp_path / name
        rc = main(["fuzz", "run", "--impl", toy + " missing-node", "--count", "2", "--seed",
                   "2", "--max-nodes", "5", "--save-dir", str(save), "--json", *extra])
        out, err = capsys.readouterr()
        assert rc == 1, out + err
        reports.append(_report(out, "cases"))
        files.append(_files(save))
        if name == "jobs":  # the progress bar, as in one process
            assert "fuzz run [" in err and "2/2" in err and "1 failed" in err
    assert reports[0] == reports[1] == reports[2]
    assert files[0] == files[1] == files[2]
    bad = [c for c in reports[0]["cases"] if c["status"] == "invalid"]
    assert bad and all(c["shrunk"]["num_compute"] == 4 for c in bad)  # the bug needs N >= 4


def test_fuzz_check_on_dask_matches_one_process(
        tmp_path: Path, cluster: Any, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    # the cluster's workers are threads of this process: they see the patched registry
    monkeypatch.setitem(props.PROPERTIES, "six_links", fails_from_six_links)
    reports, files = [], []
    for name, extra in (("one", []), ("dask", ["--dask", cluster.scheduler_address])):
        save = tmp_path / name
        rc = main(["fuzz", "check", "-p", "six_links", "-p", "transpose", "--count", "5",
                   "--seed", "3", "--max-nodes", "6", "--save-dir", str(save), "--json",
                   *extra])
        out, err = capsys.readouterr()
        assert rc == 1, out + err
        reports.append(_report(out, "failures"))
        files.append(_files(save))
    assert reports[0] == reports[1]
    assert files[0] == files[1]
    found = reports[0]["failures"]
    assert found and {f["property"] for f in found} == {"six_links"}
    # shrunk to the least failing size: 6 links (a 3-cycle both ways, or the like)
    assert all(f["message"] == "6 links" for f in found)


def test_fuzz_check_with_jobs_matches_one_process(capsys: pytest.CaptureFixture[str]) -> None:
    outs = []
    for extra in ([], ["--jobs", "2"]):
        rc = main(["fuzz", "check", "-p", "transpose", "-p", "scaling", "--count", "6",
                   "--seed", "4", "--max-nodes", "6", "--switches", "--json", "--no-save",
                   *extra])
        out, err = capsys.readouterr()
        assert rc == 0, out + err
        outs.append(json.loads(out))
    assert outs[0] == outs[1] and outs[0]["cases"] == 6


def test_bad_parallel_options(toy: str, monkeypatch: pytest.MonkeyPatch,
                              capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fuzz", "check", "--count", "1", "--jobs", "2", "--dask",
                 "tcp://127.0.0.1:9"]) == 2
    assert "cannot be combined" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["fuzz", "run", "--impl", toy, "--jobs", "0"])
    assert exc.value.code == 2
    monkeypatch.setattr(parallel, "CONNECT_TIMEOUT", "0.5s")
    assert main(["fuzz", "check", "--count", "1", "-p", "transpose", "--dask",
                 "tcp://127.0.0.1:9"]) == 2
    err = capsys.readouterr().err
    assert "cannot reach a dask scheduler" in err and "Traceback" not in err
