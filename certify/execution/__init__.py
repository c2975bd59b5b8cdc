"""MSCCL programs, read and run as the MSCCL executor reads and runs them.

Modules:

``msccl``      the algorithm XML, read with the executor's rules
``msccl_sim``  the program run chunk by chunk, its postcondition checked
"""

from . import msccl, msccl_sim
from .msccl import Program, Threadblock

__all__ = ["Program", "Threadblock", "msccl", "msccl_sim"]
