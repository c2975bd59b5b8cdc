"""The optimum, LP (5) and the baselines side by side: ``collcert compare``.

Every row is a schedule checked by ``collcert.certify`` (the checker behind
``collcert audit``): its exact algbw, busbw (nccl-tests' factor), its ratio to
the optimum, and per message size its time in the α-β model
(docs/alpha-beta.md) and which schedule is fastest there. The optimum is the
audited ForestColl schedule's certified optimum (allreduce: ForestColl's LP (5)
where it is solved, the best schedule of reduce and broadcast trees, which
every baseline here is; else RS+AG, not proven optimal, and the proven lower
bound on the time). A baseline above the certified optimum or the proven bound
would mean a checker or the optimum is wrong: :func:`compare` then refuses
(:class:`ComparisonRefused`) instead of ranking it.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from fractions import Fraction

from collcert.reference.model import Topology

from .checks import alpha_beta, audit_optimum, check_rows, checked_row, lp5_row
from .document import Baseline
from .fabric import Node
from .registry import all_baselines, default_baselines
from .results import Comparison, Row

Progress = Callable[[str], None]


def compare(topology: Topology, collective: str, root: Node | None = None, *,
            sizes: Sequence[int] = (), alpha: Fraction | int = 0,
            channels: int | None = None, names: Sequence[str] | None = None,
            progress: Progress | None = None) -> Comparison:
    """Compare the optimum's schedule, LP (5) (allreduce) and the baselines ``names``
    (None: :func:`~.registry.default_baselines`, every one but direct on a large machine).

    ``sizes`` (bytes) and ``alpha`` (µs per link where the topology gives none): the
    α-β times; the topology's unit must then be a data rate. Raises
    :class:`ComparisonRefused` if a baseline checks faster than the certified optimum."""
    say = progress or (lambda _text: None)
    if collective in ("broadcast", "reduce") and root is None:
        root = topology.compute_nodes[0]
    say("optimum: schedule and audit")
    cmp, opt_row = audit_optimum(topology, collective, root)
    rows = [opt_row]
    if collective == "allreduce":
        say("allreduce: ForestColl's LP (5)")
        lp = lp5_row(topology, cmp)
        if lp is not None:
            rows.append(lp)
    with _collector_paused():
        say("baselines: building")
        left_out: list[tuple[str, str]] = []
        if names is None:
            names, left_out = default_baselines(topology)
        made, skipped = all_baselines(topology, collective, cmp.root, channels=channels,
                                      names=names)
        cmp.skipped = skipped + left_out
        for b in made:
            say(f"baselines: checking {b.name}")
            rows.append(_baseline_row(topology, cmp, b))
    cmp.rows = rows
    check_rows(cmp)
    if sizes:
        say("α-β model")
        alpha_beta(topology, cmp, list(sizes), Fraction(alpha))
    return cmp


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cycle collector off while the baselines are built and checked: they make
    millions of lists and small objects that stay alive (N² walks at N GPUs, few
    cycles), and each full collection walked all of them again (compare
    dgx_h100_rails:128: the direct baseline's document read in 4.4 s with the collector,
    1.4 s without). Back on (if it was) when the comparison is done."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _baseline_row(topology: Topology, cmp: Comparison, b: Baseline) -> Row:
    row = checked_row(topology, cmp, b.name, b.label, "baseline", b.document)
    row.notes += b.notes
    return row
