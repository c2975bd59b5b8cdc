"""The differential driver: run another implementation on random topologies and audit it.

For each case the driver writes the topology to ``topology.json`` in a fresh
temporary folder, runs the user's command in the current directory (so that
``python mygen.py ...`` finds ``mygen.py``) with ``{topology}`` and
``{schedule}`` replaced by the (shell-quoted, absolute) paths in that temporary
folder, and audits the schedule
the command wrote with ``collcert.auditing.auditor.audit_file(topology, path, fmt)``.
A case fails when the command crashes (non-zero exit, no schedule written,
timeout) or the audit finds the schedule invalid. Failing topologies are
shrunk (:func:`collcert.fuzz.shrink.shrink`) and saved with a command that
reproduces the failure (with ``shrink_failures=False``, saved as found).

``campaign(..., jobs=N)`` runs the cases (and their shrinking) in N worker
processes, ``dask=ADDRESS`` on a dask.distributed cluster
(:mod:`collcert.fuzz.parallel`); results are reported and failures saved here,
in case order, so the outcome is that of a single process.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from collcert.reference.forestcoll import optimum
from collcert.reference.model import (
    CollcertError,
    ScheduleError,
    Topology,
    TopologyError,
    fraction_str,
)

from .shrink import save_regression, shrink

FORMATS = {"json": ".json", "forestcoll-xml": ".xml", "msccl-xml": ".xml"}
FAILING = ("invalid", "crash", "timeout")

Auditor = Callable[[Topology, str, str], Any]
"""``audit(topology, schedule_path, fmt)`` returning an object with ``.valid``,
``.reasons`` and ``.algbw`` (``collcert.auditing.AuditReport``)."""


def default_auditor() -> Auditor:
    """``collcert.auditing.auditor.audit_file``; a clear error when that module is missing."""
    try:
        from collcert.auditing import audit_file
    except ImportError as exc:
        raise CollcertError(
            f"the schedule auditor collcert.audit is not available ({exc}); "
            "update collcert, or call collcert.fuzz.driver.run_case with your own auditor"
        ) from None
    return audit_file


@dataclass
class CaseResult:
    """The outcome of one case."""

    index: int
    seed: str
    topology: Topology
    status: str  # "valid", "invalid", "crash", "timeout"
    reasons: list[str] = field(default_factory=list)
    algbw: Fraction | None = None
    optimum: Fraction | None = None
    seconds: float = 0.0
    shrunk: Topology | None = None
    saved: Path | None = None
    reproduce: str = ""

    @property
    def failed(self) -> bool:
        return self.status in FAILING

    @property
    def ratio(self) -> Fraction | None:
        if self.algbw is None or not self.optimum:
            return None
        return self.algbw / self.optimum

    def to_json(self) -> dict[str, Any]:
        t = self.topology
        out: dict[str, Any] = {
            "index": self.index, "seed": self.seed, "topology_name": t.name,
            "topology": t.content_hash(), "num_compute": t.num_compute,
            "num_switches": len(t.switch_nodes), "status": self.status,
            "reasons": self.reasons,
            "algbw": None if self.algbw is None else fraction_str(self.algbw),
            "optimum": None if self.optimum is None else fraction_str(self.optimum),
            "ratio": None if self.ratio is None else fraction_str(self.ratio),
            "seconds": round(self.seconds, 3),
        }
        if self.shrunk is not None:
            out["shrunk"] = {"num_compute": self.shrunk.num_compute,
                             "num_switches": len(self.shrunk.switch_nodes),
                             "links": len(self.shrunk.capacity)}
        if self.saved is not None:
            out["saved"] = str(self.saved)
            out["reproduce"] = self.reproduce
        return out

    def line(self) -> str:
        t = self.topology
        switches = len(t.switch_nodes)
        head = (f"case {self.index} (seed {self.seed}, {t.name or 'topology'}: "
                f"{t.num_compute} compute, {switches} switch{'' if switches == 1 else 'es'}): "
                f"{self.status.upper()}")
        if self.algbw is not None:
            head += f", algbw {fraction_str(self.algbw)}"
        if self.optimum is not None:
            head += f", optimum {fraction_str(self.optimum)}"
        if self.ratio is not None:
            head += f", ratio {fraction_str(self.ratio)}"
        lines = [head] + [f"    - {r}" for r in self.reasons[:8]]
        if len(self.reasons) > 8:
            lines.append(f"    - … and {len(self.reasons) - 8} more")
        if self.saved is not None:
            how = f"shrunk to {self.shrunk!r}" if self.shrunk is not None else "not shrunk"
            lines.append(f"    {how}, saved as {self.saved}")
            lines.append(f"    reproduce: {self.reproduce}")
        return "\n".join(lines)


def substitute(template: str, **paths: str) -> str:
    """``template`` with ``{name}`` replaced by the shell-quoted value of each path."""
    for key, value in paths.items():
        template = template.replace("{" + key + "}", shlex.quote(value))
    return template


def check_template(template: str) -> None:
    if "{topology}" not in template or "{schedule}" not in template:
        raise TopologyError(
            f"--impl {template!r} must contain {{topology}} and {{schedule}}: they are replaced "
            "by the path of the topology JSON to read and of the schedule file to write, "
            "e.g. --impl 'python mygen.py {topology} -o {schedule}'"
        )


_WATCHED = (
    'exec 3<&0\n'
    'sh -c "$1" </dev/null 3<&- & pid=$!\n'
    '(read -r _ <&3; kill -9 0) </dev/null >/dev/null 2>&1 &\n'
    'wait "$pid"')
"""sh script: run $1 (the user's command) and, beside it, wait for end of file on its
standard input (a pipe), then kill the whole process group; exits with the command's
status."""


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)  # the process group run_impl started
    except ProcessLookupError:
        pass


def run_impl(template: str, topology: Topology, workdir: str, fmt: str, timeout: float,
             collective: str, cwd: str | None = None) -> tuple[str, list[str], str]:
    """Run the command once: (status, reasons, schedule path); status "ok" if it wrote one.

    The files live in ``workdir``; the command runs in ``cwd`` (default: the current
    directory, where the user's own scripts are)."""
    workdir = os.path.abspath(workdir)
    topo_path = os.path.join(workdir, "topology.json")
    sched_path = os.path.join(workdir, "schedule" + FORMATS.get(fmt, ".out"))
    topology.save(topo_path)
    cmd = substitute(template, topology=topo_path, schedule=sched_path, collective=collective)
    # The command runs in its own process group beside a watcher that kills the group
    # when the pipe from this process closes: when this call is done, and also when this
    # process dies without cleaning up (a fuzz worker killed, or terminated by its pool
    # because another worker died), so that a hanging command is never left behind.
    alive_r, alive_w = os.pipe()
    try:
        proc = subprocess.Popen(["/bin/sh", "-c", _WATCHED, "sh", cmd], cwd=cwd, stdin=alive_r,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
    finally:
        os.close(alive_r)
    try:
        _, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc.pid)
        proc.communicate()
        return "timeout", [f"the command ran longer than {timeout:g} s and was killed"], sched_path
    finally:
        os.close(alive_w)  # the watcher ends the group: what the command left running
    if proc.returncode != 0:
        tail = (err or "").strip().splitlines()[-3:]
        if (proc.returncode in (126, 127) and tail and tail[-1].split(":")[0].endswith("sh")
                and any(word in tail[-1] for word in ("not found", "Permission denied"))):
            # the shell could not start the command: every case would fail the same way
            raise CollcertError(
                f"--impl {template!r}: the shell could not run it ({tail[-1]}); check the "
                "program's name, that it is on PATH (or give its path) and executable, e.g. "
                "--impl 'python mygen.py {topology} -o {schedule}'")
        return "crash", [f"the command exited with status {proc.returncode}"] + [
            f"stderr: {line}" for line in tail], sched_path
    if not os.path.exists(sched_path) or os.path.getsize(sched_path) == 0:
        return "crash", [f"the command exited 0 but wrote no schedule to {{schedule}} "
                         f"({os.path.basename(sched_path)})"], sched_path
    return "ok", [], sched_path


def run_case(
    template: str,
    topology: Topology,
    *,
    fmt: str = "json",
    collective: str = "allgather",
    timeout: float = 60.0,
    auditor: Auditor | None = None,
    index: int = 0,
    seed: str = "",
    best: Fraction | None = None,
    cwd: str | None = None,
) -> CaseResult:
    """Run and audit one topology (no shrinking); the command runs in ``cwd`` (default:
    the current directory)."""
    audit = auditor or default_auditor()
    started = time.monotonic()
    result = CaseResult(index, seed, topology, "valid")
    if best is None:
        root: Hashable | None = (topology.compute_nodes[0]
                                 if collective in ("broadcast", "reduce") else None)
        best = optimum(topology, collective, root=root).algbw
    result.optimum = best
    with tempfile.TemporaryDirectory(prefix="collcert-fuzz-") as tmp:
        status, reasons, path = run_impl(template, topology, tmp, fmt, timeout, collective,
                                         cwd=cwd)
        if status != "ok":
            result.status, result.reasons = status, reasons
        else:
            try:
                report = audit(topology, path, fmt)
            except (ScheduleError, TopologyError, CollcertError, ValueError) as exc:
                result.status, result.reasons = "invalid", [f"unreadable schedule: {exc}"]
            else:
                result.status = "valid" if bool(report.valid) else "invalid"
                result.reasons = [str(r) for r in getattr(report, "reasons", [])]
                algbw = getattr(report, "algbw", None)
                if algbw is not None:
                    result.algbw = Fraction(algbw)
                got = getattr(report, "collective", None)
                if got and got != collective and result.status == "valid":
                    result.status = "invalid"
                    result.reasons.append(f"the schedule is for {got}, not {collective}")
    result.seconds = time.monotonic() - started
    return result


def reproducer(template: str, fmt: str, collective: str, timeout: float) -> str:
    """The command that replays a saved case (``{file}`` is the saved topology)."""
    return (f"collcert fuzz run --impl {shlex.quote(template)} --impl-format {fmt} "
            f"--collective {collective} --timeout {timeout:g} --replay {{file}}")


def shrink_and_save(
    result: CaseResult,
    template: str,
    *,
    fmt: str,
    collective: str,
    timeout: float,
    auditor: Auditor | None,
    save_dir: str | os.PathLike[str] | None,
    max_calls: int = 60,
    time_limit: float = 120.0,
    shrink_it: bool = True,
) -> None:
    """Shrink a failing case (same failure kind or any failure) and save it
    (``shrink_it=False``: save it as found)."""
    if shrink_it:
        shrink_result(result, template, fmt=fmt, collective=collective, timeout=timeout,
                      auditor=auditor, max_calls=max_calls, time_limit=time_limit)
    save_result(result, template, fmt=fmt, collective=collective, timeout=timeout,
                save_dir=save_dir, shrunk=shrink_it)


def shrink_result(
    result: CaseResult,
    template: str,
    *,
    fmt: str,
    collective: str,
    timeout: float,
    auditor: Auditor | None,
    max_calls: int = 60,
    time_limit: float = 120.0,
    cwd: str | None = None,
) -> None:
    """Shrink a failing case to ``result.shrunk`` (any failure counts)."""

    def still_fails(t: Topology) -> bool:
        try:
            again = run_case(template, t, fmt=fmt, collective=collective, timeout=timeout,
                             auditor=auditor, cwd=cwd)
        except CollcertError:
            return False
        return again.failed

    result.shrunk = shrink(result.topology, still_fails, max_calls=max_calls,
                           time_limit=time_limit)


def save_result(
    result: CaseResult,
    template: str,
    *,
    fmt: str,
    collective: str,
    timeout: float,
    save_dir: str | os.PathLike[str] | None,
    shrunk: bool = True,
) -> None:
    """Save a failing case (``result.shrunk`` if set, else as found) with its reproducer."""
    small = result.shrunk if result.shrunk is not None else result.topology
    shrink_it = shrunk and result.shrunk is not None
    command = reproducer(template, fmt, collective, timeout)
    what = f"impl-{result.status}"
    reason = result.reasons[0] if result.reasons else result.status
    if not shrink_it:
        reason = f"(not shrunk) {reason}"
    path = save_regression(small, f"{what}: {reason}"[:200], command, directory=save_dir)
    result.saved = path
    result.reproduce = command.replace("{file}", str(path))


def campaign(
    template: str,
    topologies: Sequence[tuple[str, Topology]],
    *,
    fmt: str = "json",
    collective: str = "allgather",
    timeout: float = 60.0,
    auditor: Auditor | None = None,
    shrink_failures: bool = True,
    save_dir: str | os.PathLike[str] | None = None,
    progress: Callable[..., None] | None = None,
    on_result: Callable[[CaseResult], None] | None = None,
    jobs: int = 1,
    dask: str | None = None,
) -> list[CaseResult]:
    """Run every (seed, topology) case; save the failing ones in ``save_dir``, shrunk
    first unless ``shrink_failures`` is False. ``jobs``/``dask``: run the cases and
    their shrinking in parallel (module docstring); the auditor must then be picklable
    (a module-level function; None, the default, is collcert.audit in each worker)."""
    from .parallel import Crashed, in_order, run_tasks

    check_template(template)
    audit = auditor or default_auditor()
    cwd = os.getcwd()
    tasks = [(template, topo, i, seed, fmt, collective, timeout,
              audit if jobs == 1 and dask is None else auditor, shrink_failures, cwd)
             for i, (seed, topo) in enumerate(topologies)]
    results = []
    failures = 0

    def finished(done: int, res: Any) -> None:
        nonlocal failures
        failures += isinstance(res, Crashed) or res.failed
        if progress:
            progress(done, len(tasks), f"{failures} failed")

    for i, res in in_order(run_tasks(_case_task, tasks, jobs=jobs, dask=dask), len(tasks),
                           finished):
        if isinstance(res, Crashed):  # the worker died on this case every time it ran
            seed, topo = topologies[i]
            res = CaseResult(i, seed, topo, "crash", [f"collcert's fuzz worker: {res.reason}"])
        elif res.failed:
            save_result(res, template, fmt=fmt, collective=collective, timeout=timeout,
                        save_dir=save_dir, shrunk=shrink_failures)
        results.append(res)
        if on_result:
            on_result(res)
    return results


def _case_task(template: str, topology: Topology, index: int, seed: str, fmt: str,
               collective: str, timeout: float, auditor: Auditor | None, shrink_it: bool,
               cwd: str | None) -> CaseResult:
    """One case of :func:`campaign`, shrunk if it fails: what a worker runs."""
    from .parallel import worker_cwd

    cwd = worker_cwd(cwd)
    res = run_case(template, topology, fmt=fmt, collective=collective, timeout=timeout,
                   auditor=auditor, index=index, seed=seed, cwd=cwd)
    if res.failed and shrink_it:
        shrink_result(res, template, fmt=fmt, collective=collective, timeout=timeout,
                      auditor=auditor, cwd=cwd)
    return res
