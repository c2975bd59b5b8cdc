"""collcert.certify: small, exact, independent checkers (see certify/README.md).

Standard library only; never imports ``collcert.reference``. Every checker
reads plain data (dicts as written to JSON) and returns a
:class:`~collcert.certify.base.Verdict` with exact, specific reasons.
"""

from .base import InputError, Topo, Verdict
from .lp import check_lp
from .optimum import check_optimum
from .schedule import check_schedule
from .splitting import check_splitting

__all__ = ["InputError", "Topo", "Verdict", "check_lp", "check_optimum", "check_schedule",
           "check_splitting"]
