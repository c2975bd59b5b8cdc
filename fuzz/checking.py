"""The campaign behind ``collcert fuzz check``: properties on many topologies, in parallel.

Each case (one topology, every requested property) runs as one task
(:func:`check_task`: check, and shrink what fails) in this process, in local
worker processes or on a dask cluster (:mod:`collcert.fuzz.parallel`); the
failures are saved and reported here, in case order, so a campaign finds, shrinks
and saves the same counterexamples however it runs.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from collcert.reference.model import Topology

from . import properties as props
from .parallel import Crashed, in_order, run_tasks

SHRINK_CALLS = 300
SHRINK_SECONDS = 120.0


@dataclass
class Failure:
    """A property that failed on a case, and (when shrunk) the smaller topology."""

    record: dict[str, Any]
    small: Topology | None = None


@dataclass
class CaseOutcome:
    index: int
    failures: list[Failure] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def check_task(index: int, seed: str, topology: Topology, names: Sequence[str],
               shrink_failures: bool) -> CaseOutcome:
    """Check every property in ``names`` on one topology; shrink each failure."""
    from .shrink import shrink

    out = CaseOutcome(index)
    for name in names:
        message = props.check(name, topology, skipped=out.skipped)
        if message is None:
            continue
        record: dict[str, Any] = {"case": index, "seed": seed, "property": name,
                                  "message": message, "topology": topology.content_hash()}
        small = None
        if shrink_failures:
            small = shrink(topology, props.fails(name), max_calls=SHRINK_CALLS,
                           time_limit=SHRINK_SECONDS)
            record["message"] = props.check(name, small) or message
        out.failures.append(Failure(record, small))
    return out


def check_campaign(
    cases: Sequence[tuple[str, Topology]],
    names: Sequence[str],
    *,
    save: bool = True,
    save_dir: str | os.PathLike[str] | None = None,
    jobs: int = 1,
    dask: str | None = None,
    progress: Callable[..., None] | None = None,
    on_failure: Callable[[dict[str, Any]], None] | None = None,
) -> tuple[list[dict[str, Any]], list[str]]:
    """(failure records, skip reasons) of checking ``names`` on every case; failures are
    shrunk and saved under ``save_dir`` (``save=False``: reported only)."""
    from .shrink import save_regression

    tasks = [(i, seed, topo, list(names), save) for i, (seed, topo) in enumerate(cases)]
    failures: list[dict[str, Any]] = []
    skipped: list[str] = []
    failed = 0

    def finished(done: int, out: Any) -> None:
        nonlocal failed
        failed += 1 if isinstance(out, Crashed) else len(out.failures)
        if progress:
            progress(done, len(tasks), f"{failed} failed")

    for i, out in in_order(run_tasks(check_task, tasks, jobs=jobs, dask=dask), len(tasks),
                           finished):
        seed, topo = cases[i]
        if isinstance(out, Crashed):
            found = [Failure({"case": i, "seed": seed, "property": "(worker)",
                              "message": f"collcert's fuzz worker: {out.reason}",
                              "topology": topo.content_hash()})]
        else:
            found = out.failures
            skipped.extend(out.skipped)
        for failure in found:
            record = failure.record
            if failure.small is not None:
                name = record["property"]
                path = save_regression(
                    failure.small, f"{name}: {record['message']}"[:300],
                    f"collcert fuzz check --property {name} --replay {{file}}",
                    directory=save_dir)
                record["saved"] = str(path)
                record["shrunk_nodes"] = len(failure.small.nodes)
            failures.append(record)
            if on_failure:
                on_failure(record)
    return failures, skipped
