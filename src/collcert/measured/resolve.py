"""Which collective a run measured, on how many ranks, and which compute node each rank is.

A run names its test when nccl-tests printed its name (``# Collective test starting:``,
since 2.17) or the log kept the command line; otherwise the rows decide: the columns
and redop/root values narrow it down, and busbw = algbw × nccl-tests' factor for the
run's rank count leaves, on real logs, one test (all_reduce's 2(n−1)/n is no other's).
The rank count comes from the ``#  Rank`` lines, else from that factor, else from the
topology; whichever is used, every row must satisfy the factor for it, so a log of 8
ranks given a 16-GPU topology is refused with both counts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from collcert.importers import NCCL_TESTS as TESTS
from collcert.importers import LogError, NcclTestsRun
from collcert.reference.model import Topology, TopologyError

ALIASES = {"allreduce": "all_reduce", "allgather": "all_gather", "reduce-scatter":
           "reduce_scatter", "broadcast": "broadcast", "reduce": "reduce",
           "alltoall": "alltoall", "sendrecv": "sendrecv"}


@dataclass
class Resolved:
    """A run's test, collective (collcert's name, None where collcert has no optimum),
    rank count, the compute node of each rank, and the machine it ran on."""

    test: str
    collective: str | None
    ranks: int
    nodes: list[Any]
    topology: Topology
    evidence: list[str] = field(default_factory=list)


def resolve(run: NcclTestsRun, topology: Topology, collective: str | None = None,
            ranks: Sequence[Any] | None = None) -> Resolved:
    """The run's test and ranks on ``topology`` (``ranks``: the compute node of each rank,
    rank 0 first, for a run on part of the machine or in another order)."""
    where = run.where(run.first_line)
    tests = _tests(run, collective, where)
    listed, complete = run.listed_ranks()
    evidence: list[str] = []
    n_topo = len(ranks) if ranks is not None else topology.num_compute
    if listed is not None:
        n = listed
        evidence.append(f"{'the' if complete else 'rank numbers up to those of the'} "
                        f"'#  Rank' lines: {n} ranks"
                        + ("" if complete else f" ({len(run.ranks)} listed)"))
    else:
        n = _from_factor(run, tests, n_topo, evidence)
    fitting = [t for t in tests if not run.fits(t, n)]
    if not fitting:
        raise _mismatch(run, tests, n, n_topo, where, listed is not None)
    if len(fitting) > 1:
        names = ", ".join(f"{t}_perf" for t in fitting)
        raise LogError(f"{where}: the log does not say which test ran ({names} all fit its "
                       "rows); give it with -c COLLECTIVE")
    test = fitting[0]
    if n != n_topo:
        what = "--ranks names" if ranks is not None else "the topology has"
        raise LogError(f"{where}: the log has {n} ranks ({evidence[-1]}) and {what} "
                       f"{n_topo} compute nodes; give --ranks FILE naming the compute node "
                       "of each rank (rank 0 first), or the topology the run used")
    nodes, machine = _nodes(topology, ranks)
    return Resolved(test, TESTS[test][0], n, nodes, machine, evidence)


def _tests(run: NcclTestsRun, collective: str | None, where: str) -> list[str]:
    found = run.candidates()
    if collective is None:
        return found
    want = ALIASES.get(collective, collective.replace("-", "_"))
    if want not in TESTS:
        raise LogError(f"-c {collective}: nccl-tests has no such test; choose "
                       f"{', '.join(ALIASES)}")
    if want not in found:
        said = f"names {run.test}_perf" if run.test else \
            f"has the rows of {', '.join(t + '_perf' for t in found)}"
        raise LogError(f"{where}: -c {collective} ({want}_perf), but the log {said}")
    return [want]


def _from_factor(run: NcclTestsRun, tests: list[str], n_topo: int,
                 evidence: list[str]) -> int:
    """The rank count from busbw / algbw where the factor tells it, else the topology's."""
    counts = sorted({n for t in tests for n in run.factor_ranks(t)})
    if len(counts) == 1:
        evidence.append(f"busbw / algbw of the log's rows (nccl-tests' factor): {counts[0]} "
                        "ranks (the log has no '#  Rank' lines)")
        return counts[0]
    if n_topo in counts or not counts:
        evidence.append(f"the topology: {n_topo} ranks (the log lists no ranks, and busbw / "
                        "algbw does not tell the count)")
        return n_topo
    evidence.append(f"busbw / algbw of the log's rows: one of {counts[:6]} ranks")
    return counts[0]


def _mismatch(run: NcclTestsRun, tests: list[str], n: int, n_topo: int, where: str,
              listed: bool) -> LogError:
    """No test's busbw factor fits the rows with ``n`` ranks: say what would."""
    other = sorted({m for t in tests for m in run.factor_ranks(t)})
    bad = run.fits(tests[0], n)[0]
    hint = f" (it fits {other[0]} ranks)" if other else ""
    source = "the '#  Rank' lines" if listed else f"the topology ({n_topo} compute nodes)"
    return LogError(f"{run.where(bad.line)}: busbw is not algbw × nccl-tests' factor of "
                    f"{' or '.join(t + '_perf' for t in tests)} for {n} ranks, the count "
                    f"{source} gives{hint}: the log and the topology do not match "
                    f"({n} ranks in the log's reckoning, {n_topo} compute nodes)")


def _nodes(topology: Topology, ranks: Sequence[Any] | None) -> tuple[list[Any], Topology]:
    """The compute node of each rank, and the machine: with ``--ranks`` naming fewer compute
    nodes than the topology has, the others are removed (what-if --fail): an idle GPU
    forwards nothing for NCCL."""
    if ranks is None:
        return list(topology.compute_nodes), topology
    nodes = []
    for i, name in enumerate(ranks):
        node = topology.lookup(name)
        if node not in topology.index:
            raise TopologyError(f"--ranks: entry {i} ({str(name)[:40]!r}) is not a node of "
                                "the topology")
        if not topology.is_compute(node):
            raise TopologyError(f"--ranks: entry {i} ({node}) is not a compute node")
        nodes.append(node)
    if len(set(nodes)) != len(nodes):
        twice = next(v for v in nodes if nodes.count(v) > 1)
        raise TopologyError(f"--ranks names {twice} twice; one compute node per rank")
    idle = [v for v in topology.compute_nodes if v not in set(nodes)]
    if not idle:
        return nodes, topology
    from collcert.reference.model import what_if

    w = what_if(topology, fail=[str(v) for v in idle])
    if w.topology is None:
        raise TopologyError(w.disconnected_text("the ranks of the log cannot all reach each "
                                                "other without the idle GPUs"))
    return [w.topology.lookup(str(v)) for v in nodes], w.topology
