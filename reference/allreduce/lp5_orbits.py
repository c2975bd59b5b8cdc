"""LP (5)'s schedule at scale: its trees packed by the orbits of the machine's symmetry (Zhao et al. 2026, App. G).

The schedule of :mod:`.lp5_schedule` packs D·x_v out-trees per root into D·c^BC and
D·x_v in-trees into D·c^RE after splitting the switches off (Zhao & Krishnamurthy
2023, Thm 8 and Thm 12). Done by the general algorithms this keeps a flow per
compute node while it splits: dgx_a100:128 (1024 GPUs) reached 10.3 GB before it
was stopped. But the cut form's solution is fixed by the verified automorphisms
of the machine (the LP is solved by their orbits), so the broadcast side is an
allgather on the capacities D·c^BC with D·x_v trees per root, and the reduce side
a reduce-scatter on D·c^RE, both invariant under the machine's box symmetry H:
the orbit-wise switch removal and packing of the ForestColl schedules
(``forestcoll.build_phase`` with H: one root per orbit, the other roots' trees
its images) build them in seconds.

Nothing here is trusted more than the general path: H is found and verified by
``symmetry.find_symmetry``, the capacities and supplies are checked to be
invariant under each of its generators before it is used (else None: the
general path), and the whole schedule is certified by ``collcert.certify`` on
the topology (``collcert schedule --check``, ``collcert audit``), which knows
nothing of H.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping
from fractions import Fraction
from typing import Any

from ..forestcoll import Stages, SymmetryFailed, build_phase
from ..model import Topology
from ..symmetry import find_symmetry
from .lp5_model import group_generators

Node = Hashable
Link = tuple[Node, Node]
Walk = tuple[Node, ...]


def orbit_trees(t: Topology, bc: Mapping[Link, int], re_rev: Mapping[Link, int],
                supply: Mapping[Node, int], scale: int, engine: str = "auto",
                progress: Callable[[str, int, int], None] | None = None,
                ) -> tuple[list[Any], list[Any], str] | None:
    """(reduce trees, broadcast trees, how) of LP (5)'s schedule built by the orbits of
    ``t``'s box symmetry: in-trees in ``re_rev`` (D·c^RE on the reversed links), out-trees
    in ``bc`` (D·c^BC), ``supply[v]`` = D·x_v trees per root; each tree a
    ``(root, multiplicity, direction, [(u, v, walk), …])`` with walks in ``t``'s
    orientation. None when there is no symmetry, when it does not keep the solution,
    or when the orbit-wise build gets stuck (the caller takes the general path)."""
    sym = find_symmetry(t)
    if (sym is None or not getattr(sym, "tabled", True)  # building by orbits needs its table
            or not _keeps(sym, t, bc, re_rev, supply)):
        return None
    stages = Stages(engine, multicast=False, progress=progress, orbits_only=True)
    k = max(supply.values())
    try:
        out_ph, _ = build_phase(t, "allgather", dict(bc), dict(supply), k, Fraction(scale),
                                False, stages, sym)
        in_ph, _ = build_phase(t.transpose(), "reduce-scatter", dict(re_rev), dict(supply),
                               k, Fraction(scale), True, stages, sym)
    except SymmetryFailed:
        return None
    how = str(out_ph.stats.get("symmetry", "by orbits"))
    return _as_tuples(in_ph.trees, "in"), _as_tuples(out_ph.trees, "out"), how


def _keeps(sym: Any, t: Topology, bc: Mapping[Link, int], re_rev: Mapping[Link, int],
           supply: Mapping[Node, int]) -> bool:
    """Whether every generator maps the capacities and supplies onto themselves (the
    solution is averaged over the LP's own group, which need not contain this one)."""
    nodes, idx = t.nodes, t.index
    for g in group_generators(sym):
        img = [nodes[int(x)] for x in g.tolist()]
        for caps in (bc, re_rev):
            for (a, b), c in caps.items():
                if caps.get((img[idx[a]], img[idx[b]])) != c:
                    return False
        if any(supply.get(img[idx[v]]) != s for v, s in supply.items()):
            return False
    return True


def _as_tuples(trees: Iterable[Any], direction: str) -> list[Any]:
    """The trees as ``(root, multiplicity, direction, edges)``; edges the trees share are
    one tuple ``(u, v, walk)`` (1024 GPUs: 6 million tree edges, 30 thousand walks)."""
    shared: dict[int, tuple[Any, tuple[Node, Node, Walk]]] = {}  # the edge kept alive
    out = []
    for tr in trees:
        edges = []
        for e in tr.edges:
            got = shared.get(id(e))
            if got is None:
                got = shared[id(e)] = (e, (e.src, e.dst, tuple(e.path)))
            edges.append(got[1])
        out.append((tr.root, tr.multiplicity, direction, edges))
    return out
