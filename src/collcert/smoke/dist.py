"""The ``gloo`` and ``nccl`` backends: one process per rank through torch.distributed.

Every rank walks the plan's global order and acts on what concerns it: at a
send, the sender posts ``isend`` of a private copy of the data and the
receiver posts the matching ``irecv`` into a fresh buffer (so both sides post
the messages of a pair of ranks in the same order, as NCCL matches them); at
the receive, the receiver waits for that message and writes (or adds) it.
A rank waits only for messages sent earlier in the global order, so the run
cannot deadlock. With NCCL (RCCL on ROCm builds of torch) the waits are
stream dependencies and the GPU runs independent transfers concurrently.

A launcher process (``python -m collcert.smoke.dist``) imports torch once and
forks one process per rank; the ranks meet on a free localhost port; the process group has a timeout and the
parent kills the ranks after its own deadline, so a hang cannot stall a test
run. A rank that fails makes the parent stop the others at once.
"""

from __future__ import annotations

import os
import pickle
import signal
import socket
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from typing import Any

from collcert.reference.execution import Plan

from .runtime import RankResult, SmokeError, allocate, check, device_name, quiet_threads


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _actions(plan: Plan, rank: int, ce: int) -> list[tuple[Any, ...]]:
    acts: list[tuple[Any, ...]] = []
    for op in plan.ops:
        if op.kind == "send":
            assert op.src is not None
            if op.rank == rank:
                acts.append(("isend", op.peer, op.src, op.msg))
            elif op.peer == rank:
                acts.append(("irecv", op.rank, op.src.n * ce, op.msg))
        elif op.rank == rank:
            acts.append((op.kind, op))
    return acts


def _once(torch: Any, dist: Any, acts: list[tuple[Any, ...]], bufs: dict[str, Any], ce: int,
          dev: Any) -> None:
    from .runtime import deliver, view

    pending: dict[int, tuple[Any, Any]] = {}
    inflight = []
    for a in acts:
        kind = a[0]
        if kind == "isend":
            data = view(bufs, a[2], ce).clone()
            inflight.append((dist.isend(data, a[1]), data))
        elif kind == "irecv":
            buf = torch.empty(a[2], dtype=torch.int64, device=dev)
            pending[a[3]] = (dist.irecv(buf, a[1]), buf)
        else:
            op = a[1]
            if kind == "recv":
                work, buf = pending.pop(op.msg)
                work.wait()
                deliver(bufs, op, buf, ce)
            elif kind == "copy":
                view(bufs, op.dst, ce).copy_(view(bufs, op.src, ce))
            else:
                dst = view(bufs, op.dst, ce)
                dst.copy_(dst + view(bufs, op.src, ce))
    for work, _ in inflight:
        work.wait()


def _worker(rank: int, nranks: int, port: int, jobs: list[tuple[Plan, int, int]],
            backend: str, timeout: float) -> list[RankResult]:
    import torch
    import torch.distributed as dist

    quiet_threads(torch)
    if backend == "nccl":
        dev = torch.device(f"cuda:{rank}")
        torch.cuda.set_device(dev)
    else:
        dev = torch.device("cpu")
    dist.init_process_group(backend, init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=nranks, timeout=timedelta(seconds=timeout))

    def sync() -> None:
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)

    def barrier() -> None:
        if dev.type == "cuda":
            dist.barrier(device_ids=[rank])
        else:
            dist.barrier()

    out = []
    for plan, ce, iters in jobs:
        res = RankResult(rank, device_name(torch, dev))
        bufs = allocate(torch, plan, rank, ce, dev)
        pristine = {b: t.clone() for b, t in bufs.items()}
        acts = _actions(plan, rank, ce)
        for it in range(iters + 1):
            for b, t in bufs.items():
                t.copy_(pristine[b])
            sync()
            barrier()
            t0 = time.perf_counter()
            _once(torch, dist, acts, bufs, ce, dev)
            sync()
            elapsed = time.perf_counter() - t0
            if it:
                res.times.append(elapsed)
            if (it == 0 or it == iters) and res.mismatch is None:
                res.mismatch = check(plan, rank, bufs, ce)
        out.append(res)
    barrier()
    dist.destroy_process_group()
    return out


def run(jobs: list[tuple[Plan, int, int]], backend: str, timeout: float = 120.0
        ) -> list[list[RankResult]]:
    """Run each (plan, cell elements, timed iterations) on one process per rank;
    all plans must have the same number of ranks. Returns per job the ranks' results.

    The ranks run in a separate launcher process, so the caller's script needs no
    ``if __name__ == "__main__"`` guard."""
    import torch

    if not jobs:
        return []
    nranks = jobs[0][0].nranks
    if any(p.nranks != nranks for p, _, _ in jobs):
        raise ValueError("every job of one run must have the same number of ranks")
    if backend == "nccl" and torch.cuda.device_count() < nranks:
        raise SmokeError(f"the nccl backend needs one GPU per rank: {nranks} ranks, "
                         f"{torch.cuda.device_count()} GPU(s); use --backend single-gpu")
    with tempfile.TemporaryDirectory(prefix="collcert-smoke-") as tmp:
        with open(os.path.join(tmp, "jobs.pkl"), "wb") as fh:
            pickle.dump((jobs, backend, timeout), fh)
        env = dict(os.environ, OMP_NUM_THREADS="1")
        with open(os.path.join(tmp, "launcher.log"), "wb") as log:
            launcher = subprocess.Popen(
                [sys.executable, "-m", "collcert.smoke.dist", tmp, str(nranks),
                 str(free_port())], stdout=log, stderr=subprocess.STDOUT, env=env,
                start_new_session=True)
        try:
            code = launcher.wait(timeout + 30)
        except subprocess.TimeoutExpired:
            code = None
        finally:
            if launcher.poll() is None:  # the launcher and the ranks it forked
                os.killpg(launcher.pid, signal.SIGKILL)
                launcher.wait()
        missing = [r for r in range(nranks)
                   if not os.path.exists(os.path.join(tmp, f"rank{r}.pkl"))]
        if missing:
            # the rank that failed first wrote why; the others were stopped after it
            r = next((r for r in missing
                      if os.path.exists(os.path.join(tmp, f"rank{r}.err"))), missing[0])
            tail = _tail(tmp, r)
            if code is None:
                raise SmokeError(f"the {backend} run did not finish within {timeout + 30:.0f} s;"
                                 " the ranks were stopped" + (f". Rank {r}: {tail}" if tail
                                                              else ""))
            raise SmokeError(f"rank {r} of the {backend} run failed"
                             + (f": {tail}" if tail else " without a message"))
        results = []
        for r in range(nranks):
            with open(os.path.join(tmp, f"rank{r}.pkl"), "rb") as fh:
                results.append(pickle.load(fh))
    return [[results[r][j] for r in range(nranks)] for j in range(len(jobs))]


def _tail(tmp: str, r: int) -> str:
    text = ""
    for name in (f"rank{r}.err", "launcher.log"):
        try:
            with open(os.path.join(tmp, name), encoding="utf-8", errors="replace") as fh:
                text = fh.read()[-600:].strip()
        except OSError:
            continue
        if text:
            break
    return text


def _main(argv: list[str]) -> int:
    """The launcher: import torch once, fork one process per rank, wait for them; if a
    rank fails, stop the others (they would wait for it until the timeout)."""
    tmp, nranks, port = argv[0], int(argv[1]), int(argv[2])
    with open(os.path.join(tmp, "jobs.pkl"), "rb") as fh:
        jobs, backend, timeout = pickle.load(fh)  # written by our parent process
    import torch  # noqa: F401  (imported once, before the fork, for every rank)
    import torch.distributed  # noqa: F401

    pids = {}
    for rank in range(nranks):
        pid = os.fork()
        if pid == 0:  # the rank
            code = 1
            try:
                fd = os.open(os.path.join(tmp, f"rank{rank}.log"),
                             os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
                os.dup2(fd, 1)
                os.dup2(fd, 2)
                out = _worker(rank, nranks, port, jobs, backend, timeout)
                part = os.path.join(tmp, f"rank{rank}.pkl.part")
                with open(part, "wb") as fh:
                    pickle.dump(out, fh)
                os.replace(part, os.path.join(tmp, f"rank{rank}.pkl"))
                code = 0
            except BaseException as exc:
                with open(os.path.join(tmp, f"rank{rank}.err"), "w", encoding="utf-8") as fh:
                    first = (str(exc).strip().splitlines() or [""])[0]  # no C++ frames
                    fh.write(f"{type(exc).__name__}: {first}"[:1000])
                if os.environ.get("COLLCERT_DEBUG"):
                    import traceback

                    traceback.print_exc()
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        pids[pid] = rank
    failed = False
    while pids:
        pid, status = os.wait()
        pids.pop(pid, None)
        if status and not failed:
            failed = True
            for other in pids:
                os.kill(other, signal.SIGKILL)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
