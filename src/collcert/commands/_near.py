"""Near-symmetry from the file alone for ``collcert schedule`` (docs/whatif.md).

A topology file of a machine of identical boxes with a few links changed (an
imported NCCL topology of a cluster with a slow NIC) has no box shift, so the
schedule would take the general path (minutes to hours at 1024 GPUs). Here
the symmetric machine it is a copy of is looked for
(:func:`collcert.reference.symmetry.restore`), named after the built-in whose
boxes match, and handed to ``schedule(healthy=...)``: the path ``--degrade``
takes. What was found is said on stderr before the work starts.
"""

from __future__ import annotations

import argparse
import sys

from collcert.reference.forestcoll import ORBIT_COLLECTIVES
from collcert.reference.model import ScheduleError, Topology
from collcert.reference.symmetry import Restored, Symmetry, find_symmetry, like_builtin, orbits
from collcert.reference.symmetry import restore as restore_healthy

BUILTIN_BOXES = (("dgx_a100", "DGX A100"), ("dgx_h100", "DGX H100"), ("mi250", "MI250"))
"""Built-ins of identical boxes a restored machine is compared with (3 boxes each)."""

def wanted(args: argparse.Namespace, topo: Topology) -> bool:
    """Whether to look: the default method, a collective built by orbits, no weights,
    symmetry not turned off, and as many compute nodes as symmetry is looked for at."""
    return (getattr(args, "collective", "allgather") in ORBIT_COLLECTIVES
            and not getattr(args, "weights", None) and not getattr(args, "no_symmetry", False)
            and orbits.wanted(topo, None))


def refuse_symmetric_early(args: argparse.Namespace, topo: Topology) -> None:
    """``--symmetric`` refused before any work where the symmetric form cannot hold: a
    collective not built by orbits, weights, or multicast switches kept (in-network
    multicast trims paths tree by tree, so those phases are not built by orbits)."""
    if not getattr(args, "symmetric", False):
        return
    why = None
    if args.collective not in ORBIT_COLLECTIVES:
        why = f"{args.collective} has a root, which a box symmetry moves"
    elif getattr(args, "weights", None):
        why = "weights (--weights) are not built by orbits"
    elif topo.multicast_switches and not getattr(args, "no_multicast", False):
        why = ("the machine has multicast switches, and in-network multicast trims paths tree "
               "by tree (add --no-multicast to build by orbits)")
    if why:
        raise ScheduleError(f"--symmetric writes the trees of one root per orbit of the "
                            f"machine's symmetry, for allgather, reduce-scatter and allreduce; "
                            f"here {why}, so the schedule is written in full: drop --symmetric")


def stuck_message(exc: Exception, seconds: float) -> str:
    """The refusal of ``--symmetric`` when the orbit-wise build cannot be done."""
    return (f"--symmetric: this schedule cannot be built by the orbits of a box symmetry "
            f"({exc}; after {seconds:.1f} s), so it has no symmetric form; the general "
            "algorithms were not started (drop --symmetric to build it in full, with their "
            "estimate first)")


def _builtins() -> dict[str, Topology]:
    from collcert import platforms

    return {label: getattr(platforms, name)(3) for name, label in BUILTIN_BOXES}


def restore(topo: Topology) -> tuple[Symmetry | None, Restored | None]:
    """The topology's own box shift, or else the near-symmetric machine found (its
    ``like`` named after a matching built-in) or why there is none."""
    sym = find_symmetry(topo)
    if sym is not None:
        return sym, None
    found = restore_healthy(topo)
    if found.found:
        found.like = like_builtin(found, _builtins())
    return None, found


def healthy_for(args: argparse.Namespace, topo: Topology,
                command: str = "collcert schedule") -> tuple[Symmetry | None, Topology | None]:
    """(the box shift of ``topo``, None) when it has one; else (None, the symmetric
    machine ``topo`` is a changed copy of, or None), what was found said on stderr.
    ``--symmetric`` is refused here, before any build, when the schedule cannot have
    the symmetric form."""
    sym, found = restore(topo)
    if found is None:
        return sym, None
    if found.found:
        print(f"{command}: {found.describe(topo.unit)}; building by the orbits of the "
              "symmetric machine, with every link at most this machine's capacity, when "
              "their certified optima agree (as --degrade does; docs/whatif.md)",
              file=sys.stderr, flush=True)
    elif getattr(args, "progress", False):
        print(f"{command}: {found.describe()}", file=sys.stderr, flush=True)
    if getattr(args, "symmetric", False):
        raise ScheduleError(
            "--symmetric writes the trees of one root per orbit of the machine's own box "
            "symmetry, and this machine has none ("
            + (found.describe(topo.unit) + "; its schedule is borrowed from a symmetrized "
               "machine" if found.found else found.describe())
            + "), so the schedule is written in full: drop --symmetric")
    return None, found.healthy
