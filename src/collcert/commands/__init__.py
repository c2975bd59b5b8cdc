"""Subcommands of the ``collcert`` CLI, one module each, wired by ``collcert.cli``.

:data:`COMMAND_MODULES` names them in the order ``collcert --help`` lists
them; :func:`load_command` imports one. Each provides ``register(subparsers)``,
whose parser sets ``func`` to ``run(args) -> int`` (the exit code). Importing
this package imports no subcommand, so ``collcert check`` loads only its own
module and no ``collcert.reference``.

Subcommands:

``optimum``          the certified optimum of a collective (allreduce and alltoall:
                     ``_allreduce``, ``_alltoall``)
``schedule``         an optimal tree schedule, written as JSON, ForestColl XML or MSCCL
                     XML (LP (5)'s allreduce: ``_allreduce_lp``)
``draw``             pictures of a topology, its cut, a schedule (reduction trees:
                     ``_reduction_draw``)
``audit``            check a schedule, its exact time, the ratio to the optimum
``compare``          the optimum beside NCCL's ring and tree and the classic algorithms
``measured``         nccl-tests results beside the certified optimum (``_measured_text``)
``fuzz``             random topologies, properties, a differential driver
``prove``            Z3 proofs of an optimum on a small topology
``check``            a certificate file checked by ``collcert.certify`` alone
``broadcast_steady`` steady-state broadcast under the one-port model
``reduce_tree``      optimal associative reduction trees
``smoke``            run a schedule on devices and check every element
``import_topology``  a real machine's topology file as collcert JSON
``list_platforms``   the built-in platforms
``completion``       a shell completion script

Shared by several: ``_common`` (topologies from the command line, ``--json``,
``--progress``, ``-o``, progress bars), ``_sizes`` (the α-β view of ``--sizes``),
``_reduction_file`` (reading collcert-reduction/1 files).
"""

from __future__ import annotations

import argparse
import importlib
from types import ModuleType

COMMAND_MODULES = ("optimum", "schedule", "draw", "audit", "compare", "measured", "fuzz", "prove",
                   "check", "broadcast_steady", "reduce_tree", "smoke", "import_topology",
                   "list_platforms", "completion")


def load_command(name: str) -> ModuleType:
    """The module of subcommand ``name`` (one of :data:`COMMAND_MODULES`), imported."""
    if name not in COMMAND_MODULES:
        raise ValueError(f"no collcert subcommand module {name!r}")
    return importlib.import_module(f"{__name__}.{name}")


def refuse_outputs_onto_inputs(args: argparse.Namespace) -> None:
    """Exit-2 error before any work when an output file of the command line (``-o``,
    ``--plot``, ...) is one of its input files: see ``_common.refuse_outputs_onto_inputs``."""
    try:
        from ._common import refuse_outputs_onto_inputs as refuse
    except ImportError:  # no collcert.reference: the command says so itself (cli._unavailable)
        return
    refuse(args)


__all__ = ["COMMAND_MODULES", "load_command", "refuse_outputs_onto_inputs"]
