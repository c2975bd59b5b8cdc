"""Run fuzz cases in parallel: local worker processes or a dask.distributed cluster.

:func:`run_tasks` calls ``fn(*args)`` for every entry of a task list and yields
``(index, value)`` as the calls finish, in whichever order; :func:`in_order`
turns that back into the order of the list, which is how ``collcert fuzz``
prints and saves its results, so that a campaign reports the same cases, the
same shrunk counterexamples and the same files whether it ran in one process,
in ``--jobs N`` processes or on a cluster (``--dask ADDRESS``).

Three executors, one contract:

``jobs=1``
    in this process, in order (exceptions propagate as they are raised);
``jobs=N``
    ``N`` local worker processes (``concurrent.futures.ProcessPoolExecutor``,
    started by a fork server, or spawned where there is none);
``dask=ADDRESS``
    an existing dask.distributed cluster, given by its scheduler address as
    Dask prints it (``tcp://10.0.0.5:8786``); the optional extra
    ``collcert[dask]``. Every worker needs collcert installed.

No case is lost when a worker dies. Locally, the death of one process breaks
the whole pool: the cases that were running are run again, one at a time in a
fresh pool, so the case that kills its worker is found; it is tried
``attempts`` times in all and then reported as :class:`Crashed` (its value in
the results) instead of a result. On dask the scheduler itself moves the tasks
of a dead worker to another one and gives up on a task that killed several
workers (``distributed.scheduler.allowed-failures``), which may blame a case
that was only queued on the same worker; each such case is run again alone,
``attempts`` times at most, and reported as :class:`Crashed` if it kills its
worker every time. An exception raised by ``fn`` is not a crash: it is
raised again here, as in a single process.
"""

from __future__ import annotations

import multiprocessing
import os
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any

from collcert.reference.model import CollcertError

MAX_JOBS = 512
CONNECT_TIMEOUT = "15s"
"""How long ``--dask ADDRESS`` waits for the scheduler to answer."""


@dataclass(frozen=True)
class Crashed:
    """The value of a case whose worker died every time it ran (no result)."""

    reason: str


def describe(jobs: int, dask: str | None) -> str:
    """How a campaign runs, for messages: "1 process", "4 processes", "dask at ..."."""
    if dask:
        return f"the dask cluster at {dask}"
    return "1 process" if jobs <= 1 else f"{jobs} processes"


def check_options(jobs: int, dask: str | None) -> None:
    """Refuse a bad combination of ``--jobs`` and ``--dask`` (exit 2 in the CLI)."""
    if isinstance(jobs, bool) or not isinstance(jobs, int) or not 1 <= jobs <= MAX_JOBS:
        raise CollcertError(f"--jobs must be an integer from 1 to {MAX_JOBS}, got {jobs!r}")
    if dask is not None and jobs != 1:
        raise CollcertError("--jobs and --dask cannot be combined: with --dask the cluster's "
                            "workers run the cases (start it with as many as you want)")
    if dask is not None and not str(dask).strip():
        raise CollcertError("--dask needs the scheduler address as Dask prints it, e.g. "
                            "tcp://10.0.0.5:8786")


def run_tasks(
    fn: Callable[..., Any],
    tasks: Sequence[tuple[Any, ...]],
    *,
    jobs: int = 1,
    dask: str | None = None,
    attempts: int = 2,
) -> Iterator[tuple[int, Any]]:
    """``(i, fn(*tasks[i]))`` for every task, as they finish (module docstring)."""
    check_options(jobs, dask)
    if dask is not None:
        return _on_dask(fn, tasks, dask, attempts)
    if jobs == 1:
        return ((i, fn(*args)) for i, args in enumerate(tasks))
    return _on_processes(fn, tasks, jobs, attempts)


def in_order(results: Iterable[tuple[int, Any]], total: int,
             on_finish: Callable[[int, Any], None] | None = None) -> Iterator[tuple[int, Any]]:
    """``results`` (any order) in index order 0 .. total-1; ``on_finish(done, value)`` is
    called as each one finishes (for a progress bar), before it is released in order."""
    held: dict[int, Any] = {}
    nxt = 0
    done = 0
    for i, value in results:
        done += 1
        if on_finish:
            on_finish(done, value)
        held[i] = value
        while nxt in held:
            yield nxt, held.pop(nxt)
            nxt += 1
    if nxt != total:
        raise RuntimeError(f"internal: {total - nxt} fuzz cases never finished")


# --------------------------------------------------------------------------- #
# local processes
# --------------------------------------------------------------------------- #
def _context() -> Any:
    methods = multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
    if "forkserver" in methods:
        # imported once in the fork server, not once per worker
        ctx.set_forkserver_preload(["collcert.fuzz.parallel", "collcert.fuzz.properties",
                                    "collcert.fuzz.driver"])
    return ctx


def _on_processes(fn: Callable[..., Any], tasks: Sequence[tuple[Any, ...]], jobs: int,
                  attempts: int) -> Iterator[tuple[int, Any]]:
    ctx = _context()
    pending = deque(range(len(tasks)))
    suspects: deque[int] = deque()  # cases that were running when a worker died
    deaths = dict.fromkeys(range(len(tasks)), 0)
    pool = ProcessPoolExecutor(max_workers=jobs, mp_context=ctx)
    running: dict[Future[Any], int] = {}
    finished = False
    try:
        while pending or suspects or running:
            queue = suspects if suspects else pending  # suspects one at a time: a death
            try:                                       # is then this case's own
                while queue and len(running) < (1 if queue is suspects else 2 * jobs):
                    i = queue.popleft()
                    running[pool.submit(fn, *tasks[i])] = i
            except BrokenProcessPool:  # a running case's worker died since the last wait
                queue.appendleft(i)
                if not running:  # nothing left to report the death: start a new pool
                    pool.shutdown(wait=False, cancel_futures=True)
                    pool = ProcessPoolExecutor(max_workers=jobs, mp_context=ctx)
                    continue
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            lost: list[int] = []
            for fut in done:
                i = running.pop(fut)
                if isinstance(fut.exception(), BrokenProcessPool):
                    lost.append(i)
                else:
                    yield i, fut.result()
            if not lost:
                continue
            # the pool is broken: every other running case fails too (or has just finished)
            wait(running)
            for fut, i in running.items():
                if isinstance(fut.exception(), BrokenProcessPool):
                    lost.append(i)
                else:
                    yield i, fut.result()
            running.clear()
            pool.shutdown(wait=False, cancel_futures=True)
            pool = ProcessPoolExecutor(max_workers=jobs, mp_context=ctx)
            if len(lost) == 1:
                i = lost[0]
                deaths[i] += 1
                if deaths[i] >= attempts:
                    yield i, Crashed(f"the worker process running this case died each of "
                                     f"the {deaths[i]} times it ran")
                else:
                    suspects.appendleft(i)
            else:
                suspects.extend(sorted(lost))
        finished = True
    finally:
        # every case done: wait for the pool's threads and processes to end, or at exit
        # concurrent.futures may wake a manager thread through a closed pipe and print
        # "OSError: [Errno 9] Bad file descriptor" (seen after 'fuzz check --count 1000
        # --jobs 2' had printed 'all hold'); interrupted: do not wait for running cases
        pool.shutdown(wait=finished, cancel_futures=True)


# --------------------------------------------------------------------------- #
# dask.distributed
# --------------------------------------------------------------------------- #
def connect(address: str) -> Any:
    """A ``distributed.Client`` for the scheduler at ``address`` (CollcertError if none)."""
    dist = _distributed()
    try:
        return dist.Client(address, timeout=CONNECT_TIMEOUT, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as exc:
        raise CollcertError(f"--dask {address}: cannot reach a dask scheduler there ({exc}); "
                            "give the address the scheduler printed, e.g. tcp://host:8786") \
            from None


def _distributed() -> Any:
    """The dask.distributed module (untyped: Any), or CollcertError naming the extra."""
    import importlib

    try:
        return importlib.import_module("distributed")
    except ImportError:
        raise CollcertError("--dask needs dask.distributed: pip install 'collcert[dask]'") \
            from None


def _on_dask(fn: Callable[..., Any], tasks: Sequence[tuple[Any, ...]],
             address: str, attempts: int) -> Iterator[tuple[int, Any]]:
    dist = _distributed()
    KilledWorker = dist.KilledWorker  # noqa: N806 - the exception class
    client = connect(address)
    tag = uuid.uuid4().hex[:12]
    futures: dict[Any, int] = {}
    try:
        for i, args in enumerate(tasks):
            fut = client.submit(fn, *args, pure=False, key=f"collcert-fuzz-{tag}-{i}")
            futures[fut] = i
        killed: list[int] = []
        for fut in dist.as_completed(list(futures), loop=client.loop):
            i = futures[fut]
            try:
                value = fut.result()
            except KilledWorker:
                killed.append(i)  # or a case that merely shared the worker: run it alone
                continue
            yield i, value
        for i in sorted(killed):
            value = Crashed(f"the dask worker running this case died each of the {attempts} "
                            "times it ran alone (and before, beside other cases)")
            for attempt in range(attempts):
                fut = client.submit(fn, *tasks[i], pure=False,
                                    key=f"collcert-fuzz-{tag}-{i}-alone{attempt}")
                futures[fut] = i
                try:
                    value = fut.result()
                except KilledWorker:
                    continue
                break
            yield i, value
    finally:
        try:
            client.cancel(list(futures))
        finally:
            client.close()


def worker_cwd(cwd: str | None) -> str | None:
    """``cwd`` where it exists on this machine (a dask worker may be elsewhere), else None."""
    return cwd if cwd and os.path.isdir(cwd) else None
