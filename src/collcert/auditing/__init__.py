"""Auditing: is a schedule correct, how fast is it on this fabric, how far from the optimum?

``audit(topology, schedule)`` reads a schedule in any format collcert knows,
checks it with the independent checkers of ``collcert.certify``, computes its
exact time and algbw, and compares it with the certified optimum. A
steady-state broadcast schedule (Legrand et al. 2003) is audited on its
one-port platform instead of a topology.

Importing this package does not import ``collcert.reference`` (``collcert
check`` runs without it); the reference code is imported where it is used.

Modules:

``auditor``    :func:`audit`, :func:`audit_file`: formats, checks, time and algbw
``report``     :class:`AuditReport`: what an audit found, as JSON and in words
``bounds``     :class:`OptimumInfo`: the optimum and the bound a schedule is measured
               against, with their proofs
``optimum``    the certified optimum an audit compares with, and the proof in words
``allreduce``  the allreduce optimum an audit compares with: ForestColl's LP (5)
``routing``    the exact time of MSCCL traffic on a topology (a certified routing)
``steady``     steady-state broadcast schedules on a one-port platform: recognised,
               checked, reported (:class:`SteadyBroadcastReport`)
``claims``     claims about a schedule's speed, and their refutation
"""

from .auditor import (
    FORMATS,
    audit,
    audit_file,
    check_mscclpp_size,
    is_mscclpp_head,
    made_for,
    rank_nodes,
)
from .bounds import OptimumInfo
from .claims import judge, parse_claim
from .optimum import certified_optimum
from .report import AuditReport
from .routing import route
from .steady import (
    STEADY,
    STEADY_FORMAT,
    SteadyBroadcastReport,
    audit_steady,
    document_kind,
    steady_document,
)

__all__ = [
    "FORMATS",
    "STEADY",
    "STEADY_FORMAT",
    "AuditReport",
    "OptimumInfo",
    "SteadyBroadcastReport",
    "audit",
    "audit_file",
    "audit_steady",
    "certified_optimum",
    "check_mscclpp_size",
    "document_kind",
    "is_mscclpp_head",
    "judge",
    "made_for",
    "parse_claim",
    "rank_nodes",
    "route",
    "steady_document",
]
