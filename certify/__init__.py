"""collcert.certify: small, exact, independent checkers (see certify/README.md).

Standard library only; never imports ``collcert.reference``. Every checker
reads plain data (dicts as written to JSON) and returns a
:class:`~collcert.certify.model.Verdict` with exact, specific reasons.

The rooms mirror ``collcert.reference``'s; each ``__init__`` is the room's
public face:

``model``       verdicts, input errors, exact numbers, the one topology reader, files, XML
``solvers``     an LP certificate, one flow arc by arc, a routing and its length bound
``symmetry``    automorphisms a certificate carries, verified; their orbits
``forestcoll``  cut witnesses, the optimum certificate, edge splitting, packed trees,
                schedules (Zhao & Krishnamurthy 2023; Zhao et al. 2026)
``allreduce``   the cut-set bound, the MAC-BC LP (Zhou & Sun 2026) and LP (5)
``broadcast``   one-port steady-state broadcast: LP, packing, event replay
                (Legrand et al. 2003)
``reduction``   an event simulator of reduction schedules (Canon & Antoniu 2012)
``alltoall``    the alltoall optimum as a maximum concurrent flow
``execution``   MSCCL programs, read and run as the MSCCL executor would
``dispatch``    which checker reads which certificate (``collcert check``)
"""

from .forestcoll import check_optimum, check_schedule, check_splitting
from .model import InputError, Topo, Verdict
from .solvers import check_lp

__all__ = ["InputError", "Topo", "Verdict", "check_lp", "check_optimum", "check_schedule",
           "check_splitting"]
