"""Fuzz property ``mscclpp_export`` (opt-in): MSCCL++ exports that the executor would
run as audited (issue 29; docs/mscclpp.md).

On the topology, for every collective collcert exports (allgather, reduce-scatter,
allreduce, broadcast and reduce from the first compute node), in place and out of
place, over memory and port channels, the plan collcert writes

* passes the MSCCL++ runtime profile (``collcert.certify.execution.runtimes``,
  ``mscclpp``) when that profile is registered;
* keeps the executor's limits (64 ops per threadblock, the reader refuses more) and a
  ``nop`` right before and after every synchronising op (the executor's threads:
  ``signal``/``wait``/semaphore ops run on one thread per channel, data ops on all);
* audits VALID (``collcert.auditing.audit``: the independent simulator, with its
  thread model) at the rate the export states: the schedule's, or, where the runtime
  sends a linked pair's traffic over its direct link, exactly
  :func:`collcert.reference.execution.export_rate`'s slower one.

``collcert fuzz check --property mscclpp_export`` runs it on seeded random topologies;
``tests/test_mscclpp_barriers.py`` holds a small fixed campaign.
"""

from __future__ import annotations

import json
from typing import Any

from collcert.reference.model import ScheduleError, Topology, fraction_str

from .outcomes import PropertyFailure, Skipped

MAX_CELLS = 40
"""Topologies whose schedule has more than this many cells per collective (k times the
compute nodes) are skipped: their plans take seconds each to simulate."""
CASES = (("allgather", False), ("reduce-scatter", False), ("allreduce", False),
         ("broadcast", True), ("reduce", True))
SYNC = frozenset({"signal", "wait", "rlxsignal", "rlxwait", "flush", "sem_acquire",
                  "sem_release"})


def _expect(cond: bool, message: str) -> None:
    if not cond:
        raise PropertyFailure(message)


def prop_mscclpp_export(t: Topology) -> None:
    import collcert

    tried = 0
    for coll, rooted in CASES:
        root = t.compute_nodes[0] if rooted else None
        try:
            sched = collcert.schedule(t, coll, root=root)
        except ScheduleError:
            continue  # not exportable here (the schedule says why): not this property's
        if max(p.k for p in sched.phases) * t.num_compute > MAX_CELLS:
            continue
        for inplace in (False, True):
            for channel in ("memory", "port"):
                _check_one(t, sched, coll, inplace, channel)
                tried += 1
    if not tried:
        raise Skipped(f"no collective of {t.name} exports within {MAX_CELLS} cells")


def _check_one(t: Topology, sched: Any, coll: str, inplace: bool, channel: str) -> None:
    from collcert.auditing import audit
    from collcert.reference.execution import export_rate, mscclpp_json

    what = f"{coll} {'in place' if inplace else 'out of place'} over {channel} channels"
    rate = export_rate(sched, t)
    text = mscclpp_json(sched, inplace=inplace, channel=channel, strict=False)
    _profile(text, what)
    _thread_rules(json.loads(text), what)
    report = audit(t, text)
    _expect(bool(report.valid), f"{what}: the export audits INVALID: "
            f"{'; '.join(map(str, report.reasons[:3]))}")
    got = report.time_per_unit
    if got is None:
        raise PropertyFailure(f"{what}: the audit gives no time")
    if rate.slower:
        _expect(got == rate.export_time, f"{what}: audited time per unit {fraction_str(got)}, "
                f"the export says {fraction_str(rate.export_time)}")
    elif not rate.multicast:
        _expect(got <= sched.time_per_unit,
                f"{what}: audited time per unit {fraction_str(got)}, slower than the "
                f"schedule's {fraction_str(sched.time_per_unit)}, which the export states")


def _profile(text: str, what: str) -> None:
    from collcert.certify.execution import runtimes

    if "mscclpp" not in runtimes.names("mscclpp-json"):
        return  # the profile is not registered in this build
    verdict = runtimes.get("mscclpp", "mscclpp-json").judge(text, what)
    _expect(verdict.ok, f"{what}: {verdict.describe()}")


def _thread_rules(doc: dict[str, Any], what: str) -> None:
    for g in doc["gpus"]:
        for tb in g["threadblocks"]:
            ops = tb["ops"]
            where = f"{what}: rank {g['id']} threadblock {tb['id']}"
            _expect(len(ops) <= 64, f"{where} has {len(ops)} ops; the executor runs 64")
            for i, o in enumerate(ops):
                if o["name"] in SYNC:
                    _expect(0 < i < len(ops) - 1 and ops[i - 1]["name"] == "nop"
                            and ops[i + 1]["name"] == "nop",
                            f"{where} op {i} ({o['name']}) is not between two nops")
