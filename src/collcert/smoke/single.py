"""The ``single-gpu`` backend: every rank's buffers on one device.

Each link (ordered pair of ranks) gets its own CUDA stream (a HIP stream on
ROCm builds of torch) and each rank one more for its local copies; an
operation waits, through events, for the operations it depends on
(:func:`collcert.reference.execution.execplan.dependencies`: the send of its message and
every earlier access to the same cells). Transfers are device-to-device copies
within one GPU: this checks the data flow of the schedule on device memory
with real concurrency, not the interconnect.

On the CPU device there are no streams: they are emulated, each stream a
queue, operations run in a random order (seeded) that keeps the stream order
and the dependencies. That checks that the dependencies are enough, and runs
in CI, but it measures nothing about a GPU.
"""

from __future__ import annotations

import random
import time
from typing import Any

from collcert.reference.execution import Plan, dependencies

from .runtime import RankResult, allocate, apply, check, device_name, resolve_device

MAX_STREAMS = 128


def _streams(plan: Plan) -> list[tuple[Any, ...]]:
    keys: list[tuple[Any, ...]] = []
    for op in plan.ops:
        if op.kind == "send":
            keys.append(("link", op.rank, op.peer))
        elif op.kind == "recv":
            keys.append(("link", op.peer, op.rank))
        else:
            keys.append(("rank", op.rank))
    return keys


def emulated_order(plan: Plan, deps: list[list[int]], keys: list[tuple[Any, ...]],
                   seed: int) -> list[int]:
    """A random order of the ops that keeps every stream's order and every dependency."""
    rng = random.Random(seed)
    queues: dict[tuple[Any, ...], list[int]] = {}
    for i, k in enumerate(keys):
        queues.setdefault(k, []).append(i)
    heads = {k: 0 for k in queues}
    remaining = [len(d) for d in deps]
    dependents: list[list[int]] = [[] for _ in deps]
    for i, ds in enumerate(deps):
        for d in ds:
            dependents[d].append(i)
    ready = [k for k, q in queues.items() if remaining[q[0]] == 0]
    listed = set(ready)
    order: list[int] = []
    while ready:
        k = ready.pop(rng.randrange(len(ready)))
        listed.discard(k)
        i = queues[k][heads[k]]
        heads[k] += 1
        order.append(i)
        for j in dependents[i]:
            remaining[j] -= 1
        for c in dict.fromkeys([k] + [keys[j] for j in dependents[i]]):
            if c not in listed and heads[c] < len(queues[c]) \
                    and remaining[queues[c][heads[c]]] == 0:
                ready.append(c)
                listed.add(c)
    if len(order) < len(plan.ops):
        raise RuntimeError("emulated streams are stuck: the plan's dependencies form a cycle "
                           "(a bug in collcert)")
    return order


def run(plan: Plan, ce: int, iters: int, device: str | None = None, seed: int = 0
        ) -> list[RankResult]:
    import torch

    dev = resolve_device(torch, device)
    deps = dependencies(plan)
    keys = _streams(plan)
    bufs = [allocate(torch, plan, r, ce, dev) for r in range(plan.nranks)]
    pristine = [{b: t.clone() for b, t in mine.items()} for mine in bufs]
    results = [RankResult(r, device_name(torch, dev)) for r in range(plan.nranks)]
    ops = plan.ops
    cuda: Any = torch.cuda
    if dev.type == "cuda":
        # one stream per link, up to MAX_STREAMS (then links share them round-robin:
        # sharing only adds order, and every event waited for was recorded before)
        pool: list[Any] = []
        streams = {}
        for n, k in enumerate(dict.fromkeys(keys)):
            if n < MAX_STREAMS:
                pool.append(cuda.Stream(dev))
            streams[k] = pool[n % MAX_STREAMS]
        needed = {d for i, ds in enumerate(deps) for d in ds
                  if streams[keys[d]] is not streams[keys[i]]}
    for it in range(iters + 1):
        for mine, orig in zip(bufs, pristine):
            for b, t in mine.items():
                t.copy_(orig[b])
        stage: dict[int, Any] = {}
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)
            start, end = (cuda.Event(enable_timing=True) for _ in range(2))
            start.record()
            for s in pool:
                s.wait_event(start)
            events: dict[int, Any] = {}
            for i, op in enumerate(ops):
                s = streams[keys[i]]
                for d in deps[i]:
                    if streams[keys[d]] is not s:
                        s.wait_event(events[d])
                with torch.cuda.stream(s):
                    apply(op, bufs[op.rank], stage, ce)
                if i in needed:
                    ev = cuda.Event()
                    ev.record(s)
                    events[i] = ev
            main = torch.cuda.current_stream(dev)
            for s in pool:
                main.wait_stream(s)
            end.record()
            end.synchronize()
            elapsed = start.elapsed_time(end) / 1000.0
        else:
            order = emulated_order(plan, deps, keys, seed + it)
            t0 = time.perf_counter()
            for i in order:
                op = ops[i]
                apply(op, bufs[op.rank], stage, ce)
            elapsed = time.perf_counter() - t0
        if it:
            for res in results:
                res.times.append(elapsed)
        if it == 0 or it == iters:
            for r, res in enumerate(results):
                if res.mismatch is None:
                    res.mismatch = check(plan, r, bufs[r], ce)
    return results
