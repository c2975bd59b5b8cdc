"""Measured against certified: an nccl-tests run set beside the optimum of its machine
(``collcert measured``, docs/measured.md).

:func:`measure` takes a run read by :func:`collcert.importers.read_nccl_tests` and a
topology: per message size the measured algbw and busbw, the certified optimum of the
collective on the α-β model and NCCL's algorithms (the baselines of
:mod:`collcert.reference.baselines`), the fraction of the optimum reached, the size from
which bandwidth dominates; then what the numbers say: data corrupted or a rate above the
optimum (exit 1: the model is not the machine), or the plateau's efficiency and, far
below, which single what-if change would bring the optimum down to the measurement (a
hint). Every figure of the model is certified and checked by ``collcert.certify``; the
log itself is input, read exactly (docs/architecture.md says why it has no checker).

Modules:

``resolve``   which test ran, on how many ranks, which compute node each rank is
``figures``   the certified optimum, the cut-set bound (allreduce), the baselines' curves
``hint``      the what-if families and the exact factor that meets a measured rate
``analysis``  :func:`measure`: series, per-size rows, verdicts
``result``    :class:`Measured`, :class:`Series`, :class:`SizeRow`, :class:`Verdict`
"""

from .analysis import measure
from .figures import Curve, Model, default_baselines
from .hint import Hint
from .result import FAR_BELOW, Measured, Series, SizeRow, Verdict

__all__ = ["FAR_BELOW", "Curve", "Hint", "Measured", "Model", "Series", "SizeRow", "Verdict",
           "default_baselines", "measure"]
