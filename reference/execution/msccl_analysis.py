"""What an MSCCL program compiled from a plan must respect in both buffer modes.

The MSCCL executor picks a program per call by whether the call's buffers alias
(in place) or not; collcert's programs serve both (:mod:`.msccl_export`), so
their dependencies are those of the plan as written and of its in-place view,
and a receive fuses with a send only where both allow.
"""

from __future__ import annotations

from dataclasses import replace

from .execplan import Plan, Region, dependencies


def analyse(plan: Plan) -> tuple[list[list[int]], dict[int, list[int]], dict[int, int]]:
    """What the program must respect in both buffer modes: the union of the dependencies
    of the plan as written (out of place) and of its in-place view; a receive and a send
    fuse only where they may in both (see :func:`conflicts`)."""
    deps, fusable, readers = conflicts(plan)
    deps2, fusable2, readers2 = conflicts(inplace_view(plan))
    deps = [sorted(set(a) | set(b)) for a, b in zip(deps, deps2)]
    fusable = {r: [s for s in sends if s in fusable2.get(r, [])]
               for r, sends in fusable.items()}
    readers = {r: max(n, readers2.get(r, 0)) for r, n in readers.items()}
    return deps, fusable, readers


def copies_last(plan: Plan) -> Plan:
    """The plan with every root's copy of its own input into its output moved to the end.
    Nothing reads what a copy writes, so out of place it may run at any time; in place it
    is a copy onto the memory the root's sends read, and there it must wait for them
    instead of making them (and all that follows them) wait for it: placed first, the
    copies lengthened the chain of dependent steps (allgather latency on torus:4x4 +17%)."""
    return replace(plan, ops=[op for op in plan.ops if op.kind != "copy"]
                   + [op for op in plan.ops if op.kind == "copy"])


def inplace_view(plan: Plan) -> Plan:
    """The plan with its buffers aliased as an in-place call passes them (the MSCCL
    executor's test, msccl_lifecycle.cc): allgather input = output + r·(C/N) chunks,
    reduce-scatter output = input + r·(C/N), allreduce output = input. Regions stay
    contiguous, so the ops keep their shape; only which cells they touch changes."""
    spec = plan.spec

    def alias(r: int, reg: Region | None) -> Region | None:
        if reg is None:
            return None
        base = spec.shards[r][0]
        if spec.collective == "allgather" and reg.buf == "i":
            return Region("o", base + reg.off, reg.n)
        if spec.collective == "reduce-scatter" and reg.buf == "o":
            return Region("i", base + reg.off, reg.n)
        if spec.collective in ("allreduce", "broadcast", "reduce") and reg.buf == "o":
            return Region("i", reg.off, reg.n)
        return reg

    ops = [replace(op, src=alias(op.rank, op.src), dst=alias(op.rank, op.dst),
                   red=alias(op.rank, op.red)) for op in plan.ops]
    return Plan(spec, plan.buffers, ops, plan.name)


def conflicts(plan: Plan) -> tuple[list[list[int]], dict[int, list[int]], dict[int, int]]:
    """Dependencies of every op; for each receive, the sends that forward exactly
    what it wrote (candidates for a fused step) and how many ops read it."""
    ops = plan.ops
    deps = dependencies(plan)
    writer: dict[tuple[int, str, int], int] = {}  # cell -> op that last wrote it
    fusable: dict[int, list[int]] = {}  # recv op -> sends of exactly what it wrote
    readers: dict[int, int] = {}  # recv op -> how many ops read what it wrote
    for i, op in enumerate(ops):
        for reg in op.reads():
            ws = {writer.get((op.rank, reg.buf, c)) for c in reg.cells()}
            for w in ws:
                if w is not None:
                    readers[w] = readers.get(w, 0) + 1
            w = next(iter(ws))
            if (op.kind == "send" and reg is op.src and len(ws) == 1 and w is not None
                    and ops[w].kind == "recv" and ops[w].dst == reg
                    and ops[w].group == op.group):
                fusable.setdefault(w, []).append(i)
        for reg in op.writes():
            for c in reg.cells():
                writer[(op.rank, reg.buf, c)] = i
    return deps, fusable, readers
