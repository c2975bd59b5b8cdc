"""Barriers and fusion in an MSCCL++ threadblock, as MSCCL++'s own DSL places them
(docs/mscclpp.md, "Checked against the DSL").

The executor (microsoft/mscclpp ``src/core/include/execution_kernel.hpp``, commit
1f5f065d) runs a threadblock's ops in order on all its threads: a ``signal`` or ``wait``
is done by threads 0..n-1, one per channel (``handleSignal``, ``handleWait``), a
``sem_acquire``/``sem_release`` by one thread per semaphore (``handleSemAcquire``,
``handleSemRelease``), a port ``put``/``pwsf`` by one thread per channel, while the data
ops (``copy``, memory ``put``, ``re``, ``res``, …) spread their elements over every
thread; ``nop`` is ``__syncthreads()`` (``handleNop``). Without a ``nop`` the threads that
do not wait run ahead of the wait, and a signal can be seen before the other threads'
stores. The DSL (``python/mscclpp/language/program.py`` ``post_process_operations``)
therefore runs three passes over every threadblock, which this module follows:

1. **fusion** (``internal/optimizer.py`` ``fuse_operations``, each op's ``__add__`` in
   ``internal/operations.py``): consecutive ``signal``\\ s (``wait``\\ s) of one channel
   type on disjoint channels become one op, consecutive ``sem_acquire``\\ s
   (``sem_release``\\ s) one op, consecutive port ``pwsf``\\ s of one size one op, two
   ``re`` accumulating into one place one ``re`` (the DSL fuses them whenever their
   first source and destination match; collcert only when that source is the
   destination, where the fused op computes what the two did), and a ``re`` followed
   by a memory ``put`` of its result becomes ``res`` (reduce and send);
2. **data sync** (``add_data_sync``): a synchronising op (signal, wait, their relaxed
   forms, flush, the semaphore ops) gets a ``nop`` before and after (``SyncType.both``,
   the default of ``channel.py``'s ``signal``/``wait``/``flush`` and ``rank.py``'s
   ``Semaphore``); between two consecutive synchronising ops one ``nop`` serves both
   (the fusion pass drops the first one's "after");
3. **data dependency** (``internal/buffer_access.py`` ``BuffersAccess``): a data op
   whose local accesses (reads of local sources, writes of local destinations) overlap
   an access of an earlier op since the last ``nop`` or ``barrier``, one of them a
   write, gets a ``nop`` before it.

Two limits of the executor bound the fusion, where the DSL does not check them:
``MAX_CHANNEL_PER_OPERATION`` (8 channels per op) and ``MAX_DEVICE_SEMAPHORES`` (16
per op), ``src/core/include/execution_common.hpp``; buffers per op stay within the 10
the parser fills (``MAX_LOCAL_BUFFER_PER_OPERATION`` + ``MAX_CHANNEL_PER_OPERATION``).

Where collcert is stricter than the DSL: it fuses ``pwsf``\\ s only on disjoint channels
(the DSL's ``PutOperation.__add__`` does not check: two threads would then push onto one
channel's FIFO in either order, and a receiver that counts that channel's signals could
take the second message's signal for the first's); in pass 3 the DSL forgets the accesses an op
made before the one that conflicts (``compute_data_access`` clears its map, then records
only the conflicting access), so a later write of an earlier source of that op gets no
``nop``; collcert keeps every access of the op after the ``nop``; and it puts a ``nop``
between two port pushes onto one channel from different threads (pass 4,
:func:`fifo_barriers`), which the DSL leaves unordered.
"""

from __future__ import annotations

from typing import Any

Op = dict[str, Any]

SYNC_OPS = frozenset({"signal", "wait", "rlxsignal", "rlxwait", "flush", "sem_acquire",
                      "sem_release"})
BARRIERS = frozenset({"nop", "barrier"})
MAX_CHANNEL_PER_OPERATION = 8
MAX_DEVICE_SEMAPHORES = 16
MAX_BUFFERS_PER_OPERATION = 10  # MAX_LOCAL_BUFFER_PER_OPERATION + MAX_CHANNEL_PER_OPERATION
NOP: Op = {"name": "nop"}


def dsl_passes(ops: list[Op]) -> list[Op]:
    """The threadblock's ops after the DSL's three passes: fused, with a ``nop`` around
    every synchronising op and before every data op that depends on an earlier one, and
    (where collcert is stricter) before a port push that another thread made on its
    channel since the last ``nop`` (:func:`fifo_barriers`)."""
    return fifo_barriers(dependency_barriers(sync_barriers(fuse(ops))))


def fuse(ops: list[Op]) -> list[Op]:
    """Pass 1: each op fused with the ops after it while they fuse (``fuse_operations``)."""
    out: list[Op] = []
    i = 0
    while i < len(ops):
        cur, j = ops[i], i + 1
        while j < len(ops):
            fused = _fused(cur, ops[j])
            if fused is None:
                break
            cur, j = fused, j + 1
        out.append(cur)
        i = j
    return out


def _fused(a: Op, b: Op) -> Op | None:
    name = a["name"]
    if name in ("signal", "wait", "rlxsignal", "rlxwait") and b["name"] == name and \
            a["channel_type"] == b["channel_type"] and \
            not set(a["channel_ids"]) & set(b["channel_ids"]) and \
            len(a["channel_ids"]) + len(b["channel_ids"]) <= MAX_CHANNEL_PER_OPERATION:
        return {**a, "channel_ids": a["channel_ids"] + b["channel_ids"]}
    if name in ("sem_acquire", "sem_release") and b["name"] == name and \
            len(a["semaphore_ids"]) + len(b["semaphore_ids"]) <= MAX_DEVICE_SEMAPHORES:
        return {**a, "semaphore_ids": a["semaphore_ids"] + b["semaphore_ids"]}
    if name == "pwsf" and b["name"] == name and b["channel_type"] == a["channel_type"] and \
            b["src_buff"][0]["size"] == a["src_buff"][0]["size"] and \
            not set(a["channel_ids"]) & set(b["channel_ids"]) and \
            len(a["dst_buff"]) + len(b["dst_buff"]) <= MAX_CHANNEL_PER_OPERATION and \
            "tbg_info" not in a and "tbg_info" not in b:
        return {**a, "src_buff": a["src_buff"] + b["src_buff"],
                "dst_buff": a["dst_buff"] + b["dst_buff"],
                "channel_ids": a["channel_ids"] + b["channel_ids"]}
    if name == "re" and b["name"] == name and a["src_buff"][0] == b["src_buff"][0] == \
            a["dst_buff"][0] and a["dst_buff"] == b["dst_buff"] and \
            a.get("reduce_op") == b.get("reduce_op") and \
            len(a["src_buff"]) + len(b["src_buff"]) - 1 <= MAX_BUFFERS_PER_OPERATION and \
            "tbg_info" not in a and "tbg_info" not in b:
        return {**a, "src_buff": a["src_buff"] + b["src_buff"][1:]}  # dst += each source
    if name in ("re", "res") and b["name"] == "put" and b.get("channel_type") == "memory" and \
            b["src_buff"][0] == a["dst_buff"][0] and \
            len(a["dst_buff"]) + len(b["dst_buff"]) <= MAX_BUFFERS_PER_OPERATION and \
            "tbg_info" not in a and "tbg_info" not in b:
        return {"name": "res", "src_buff": a["src_buff"],
                "dst_buff": a["dst_buff"] + b["dst_buff"], "channel_type": "memory",
                "reduce_op": a.get("reduce_op", "sum")}
    return None


def sync_barriers(ops: list[Op]) -> list[Op]:
    """Pass 2: a ``nop`` before and after every synchronising op, one between two."""
    out: list[Op] = []
    for k, op in enumerate(ops):
        sync = op["name"] in SYNC_OPS
        if sync:
            out.append(dict(NOP))
        out.append(op)
        if sync and (k + 1 == len(ops) or ops[k + 1]["name"] not in SYNC_OPS):
            out.append(dict(NOP))
    return out


def local_accesses(op: Op) -> list[tuple[str, int, int, bool]]:
    """(buffer, first chunk, last chunk, writes) of the op's local sources and destinations:
    the entries with a ``type`` (remote ones have a ``buffer_id``), as ``local_data_access``."""
    out = [(b["type"], b["index"], b["index"] + b["size"] - 1, False)
           for b in op.get("src_buff", ()) if "type" in b]
    if op["name"] not in ("put", "pws", "pwsf"):  # a put's destination is remote
        out += [(b["type"], b["index"], b["index"] + b["size"] - 1, True)
                for b in op.get("dst_buff", ()) if "type" in b]
    return out


def dependency_barriers(ops: list[Op]) -> list[Op]:
    """Pass 3: a ``nop`` before a data op whose local accesses conflict with an earlier
    op's since the last ``nop`` or ``barrier`` (overlapping, one of them a write)."""
    out: list[Op] = []
    seen: list[tuple[str, int, int, bool]] = []
    for op in ops:
        if op["name"] in BARRIERS:
            seen = []
            out.append(op)
            continue
        mine = local_accesses(op)
        if any(_conflict(a, b) for a in mine for b in seen):
            out.append(dict(NOP))
            seen = []
        seen += mine
        out.append(op)
    return out


def _conflict(a: tuple[str, int, int, bool], b: tuple[str, int, int, bool]) -> bool:
    return a[0] == b[0] and a[1] <= b[2] and b[1] <= a[2] and (a[3] or b[3])


PUSHES = frozenset({"put", "pws", "pwsf"})


def fifo_barriers(ops: list[Op]) -> list[Op]:
    """Pass 4 (collcert's, not the DSL's): a ``nop`` before a port ``put``/``pws``/``pwsf``
    whose thread (the channel's place in the op's ``channel_ids``) pushes onto a channel
    that another thread pushed onto since the last ``nop`` or ``barrier``. Two threads'
    pushes onto one FIFO are otherwise in either order (the audit's rule 5): ring:4's
    out-of-place allgather pushed channel 1 from thread 0 (``pwsf [1]``), then from
    thread 1 (the fused ``pwsf [0, 1]``), with nothing between."""
    out: list[Op] = []
    pushed: dict[int, int] = {}  # channel -> the thread that pushed on it since the nop
    for op in ops:
        if op["name"] in BARRIERS:
            pushed = {}
        elif op["name"] in PUSHES and op.get("channel_type") == "port":
            mine = {c: t for t, c in enumerate(op["channel_ids"])}
            if any(pushed.get(c, t) != t for c, t in mine.items()):
                out.append(dict(NOP))
                pushed = {}
            pushed.update(mine)
        out.append(op)
    return out
