"""MSCCL programs, read and run as the MSCCL executor reads and runs them.

Modules:

``program``    the program as the executor holds it: threadblocks, steps, transmissions
``msccl``      the algorithm XML, read with the executor's rules (and ``simulate``)
``msccl_sim``  the program run chunk by chunk, its postcondition checked
"""

from . import msccl, msccl_sim
from .program import Program, Threadblock

__all__ = ["Program", "Threadblock", "msccl", "msccl_sim"]
