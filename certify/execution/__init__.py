"""MSCCL programs, read and run as the MSCCL executor reads and runs them.

Modules:

``program``    the program as the executor holds it: threadblocks, steps, transmissions
``msccl``      the algorithm XML, read with the executor's rules (and ``simulate``)
``msccl_sim``  the program run chunk by chunk, its postcondition checked
``mscclpp``    MSCCL++ execution plans (JSON), read as its executor reads them
``mscclpp_sim`` an MSCCL++ plan run op by op as its executor runs it, its postcondition checked
"""

from . import msccl, msccl_sim, mscclpp, mscclpp_sim
from .program import Program, Threadblock

__all__ = ["Program", "Threadblock", "msccl", "msccl_sim", "mscclpp", "mscclpp_sim"]
