"""What an audit measures a schedule against: the optimum, the bound, and their proofs.

:class:`OptimumInfo` is what ``collcert.auditing.optimum`` (ForestColl's optima,
alltoall) and ``collcert.auditing.allreduce`` (LP (5), the cut-set bound) find
for a collective on a topology, and what the audit report is built from: the
optimum algbw the schedule's ratio is taken to, and the *bound*, the largest
algbw any schedule of the collective can have, with the witness that proves it
(used to refute claims that beat it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from collcert.certify.model import Verdict


@dataclass
class OptimumInfo:
    algbw: Fraction | None = None  # certified optimum algbw
    lower: Fraction | None = None  # allreduce: proven lower bound on the time per unit
    notes: list[str] = field(default_factory=list)
    verdict: Verdict | None = None  # the certificate's check
    bound: Fraction | None = None  # no schedule's algbw exceeds it (None: no such proof)
    witness: str = ""  # what proves ``bound``
    # what ``algbw`` is: the certified optimum, or (allreduce, when ForestColl's
    # LP (5) cannot be solved) the RS+AG figure, which is not proven optimal
    kind: str = "certified"

    @classmethod
    def refused(cls, certificate: str, verdict: Verdict) -> OptimumInfo:
        """No optimum: ``certificate`` (named in words) did not pass ``verdict``'s check."""
        return cls(notes=[f"internal: {certificate} did not check: "
                          + "; ".join(verdict.all_reasons()[:3])], verdict=verdict)
