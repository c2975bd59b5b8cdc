"""Auditing: is a schedule correct, how fast is it on this fabric, how far from the optimum?

``audit(topology, schedule)`` reads a schedule in any format collcert knows,
checks it with the independent checkers of ``collcert.certify``, computes its
exact time and algbw, and compares it with the certified optimum.

Importing this package does not import ``collcert.reference`` (``collcert
check`` runs without it); the reference code is imported where it is used.

Modules:

``auditor``    :func:`audit`, :func:`audit_file`, :class:`AuditReport`: formats, checks,
               the report
``optimum``    the certified optimum an audit compares with, and the proof in words
``allreduce``  the allreduce optimum an audit compares with: ForestColl's LP (5)
``routing``    the exact time of MSCCL traffic on a topology (a certified routing)
``claims``     claims about a schedule's speed, and their refutation
"""

from .auditor import FORMATS, AuditReport, audit, audit_file, made_for
from .claims import judge, parse_claim
from .optimum import OptimumInfo, certified_optimum
from .routing import route

__all__ = [
    "FORMATS",
    "AuditReport",
    "OptimumInfo",
    "audit",
    "audit_file",
    "certified_optimum",
    "judge",
    "made_for",
    "parse_claim",
    "route",
]
