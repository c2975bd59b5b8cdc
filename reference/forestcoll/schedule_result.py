"""A tree schedule: :class:`Schedule`, its :class:`Phase` objects, :class:`Tree` and :class:`TreeEdge`.

What :func:`~collcert.reference.forestcoll.schedule` returns. A :class:`Phase`
holds the trees of one collective (Zhao & Krishnamurthy 2023, §2: ``multiplicity``
of the k unit out-trees of a root, Thm 12, each edge with its walk in G) and
the certificates of its G* (the graph after switch removal, Thm 8: capacities,
routing, one flow per sink); a :class:`Schedule` is the phases (allreduce:
reduce-scatter then allgather, App. B) with the optimum they reach. Both write
themselves as the ``collcert-schedule/1`` JSON (docs/schedule-format.md) and as
the ForestColl tree XML (Zhao et al. 2026, §6.1); files are written by
:mod:`.schedule_io`.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Protocol
from xml.sax.saxutils import quoteattr

from ..model import Topology, fraction_str, show
from .optimum_result import Optimum
from .splitting import SplitResult

Node = Hashable
Path = tuple[Node, ...]
StageProgress = Callable[[str, int, int], None]
FORMAT = "collcert-schedule/1"
PROVEN_BY_OPTIMUM = ("target_time_per_unit", "lower_bound_time_per_unit", "rsag_proven_optimal")
"""``generator`` figures that collcert.certify compares with the embedded optimum
certificate: a file written without certificates leaves them out."""


@dataclass(slots=True)
class TreeEdge:
    src: Node
    dst: Node
    path: Path


@dataclass
class Tree:
    """``multiplicity`` of the root's k unit trees, with every edge's walk in G."""

    root: Node
    multiplicity: int
    direction: str
    edges: list[TreeEdge]
    height: int
    index: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "root": self.root,
            "multiplicity": self.multiplicity,
            "direction": self.direction,
            "edges": [{"src": e.src, "dst": e.dst, "path": list(e.path)} for e in self.edges],
            "height": self.height,
            "index": self.index,
        }


class OrbitForm(Protocol):
    """A phase built by orbits (:class:`~.schedule_sym.OrbitTrees`): the representative
    roots' trees, and the group whose images of them are every other root's trees."""

    reps: list[Tree]
    sym: Any

    @property
    def count(self) -> int: ...

    def generator(self) -> list[list[Node]]: ...

    def generators(self) -> list[list[list[Node]]]: ...

    def representatives(self) -> list[Node]: ...


@dataclass
class Phase:
    collective: str
    k: int
    U: Fraction
    trees: list[Tree]
    split: SplitResult
    transposed: bool
    time_per_unit: Fraction = Fraction(0)
    stats: dict[str, Any] = field(default_factory=dict)
    orbits: OrbitForm | None = None
    """Set when the phase was built by orbits: ``trees`` are then made from
    ``orbits.reps`` on first use, and a symmetric file holds only those."""

    @property
    def max_height(self) -> int:
        trees = self.orbits.reps if self.orbits is not None else self.trees
        return max((t.height for t in trees), default=0)

    def certificates(self, symmetric: bool = False) -> dict[str, Any]:
        """G*, its routing and flows; ``symmetric``: G*'s arcs out of the representatives
        only (one per orbit) and their routing, no flows (docs/schedules.md)."""
        sp = self.split
        caps = sp.capacity.items()
        routes = sp.paths.items()
        if symmetric:
            assert self.orbits is not None
            reps = set(self.orbits.representatives())
            caps = {e: c for e, c in caps if e[0] in reps}.items()
            routes = {e: ps for e, ps in routes if e[0] in reps}.items()
        out: dict[str, Any] = {
            "gstar": {
                "U": fraction_str(self.U),
                "k": self.k,
                "capacities": [[u, v, c] for (u, v), c in caps],
            },
            "routing": [
                {"src": u, "dst": v,
                 "paths": [[list(p), x] for p, x in sorted(ps.items(), key=lambda i: -i[1])]}
                for (u, v), ps in routes
            ],
            "flows": [
                {"sink": v, "flow": [[a, b, x] for (a, b), x in fl.items()]}
                for v, fl in sp.flows.items()
            ],
        }
        if not sp.flows or symmetric:  # too large to be worth it (symmetric splitting)
            del out["flows"]
        if any(x != self.k for x in sp.supply.values()):
            out["gstar"]["supply"] = [[u, x] for u, x in sp.supply.items()]
        if self.transposed:
            out["on"] = "transposed"
        return out

    def to_json(self, certificates: bool = False, compact: bool = False,
                symmetric: bool = False) -> dict[str, Any]:
        """The phase's object in a schedule file; ``symmetric``: the representatives'
        trees only (the phase must have been built by orbits)."""
        if symmetric and self.orbits is None:
            raise ValueError("internal: a symmetric file of a phase not built by orbits")
        source = self.orbits.reps if symmetric and self.orbits is not None else self.trees
        out: dict[str, Any] = {
            "collective": self.collective,
            "k": self.k,
            "U": fraction_str(self.U),
            "time_per_unit": fraction_str(self.time_per_unit),
        }
        if compact:
            # docs/schedule-format.md "Compact trees": each distinct edge (src, dst, path)
            # once in "walks", a tree's edges as indices into it
            ids: dict[int, int] = {}  # id(TreeEdge) -> walk index (orbit trees share edges)
            by_key: dict[tuple[Node, Node, Path], int] = {}
            walks: list[dict[str, Any]] = []
            trees = []
            for tr in source:
                refs = []
                for e in tr.edges:
                    w = ids.get(id(e))
                    if w is None:
                        key = (e.src, e.dst, e.path)
                        w = by_key.get(key)
                        if w is None:
                            w = by_key[key] = len(walks)
                            walks.append({"src": e.src, "dst": e.dst, "path": list(e.path)})
                        ids[id(e)] = w
                    refs.append(w)
                trees.append({"root": tr.root, "multiplicity": tr.multiplicity,
                              "direction": tr.direction, "height": tr.height,
                              "index": tr.index, "edges": refs})
            out["walks"] = walks
            out["trees"] = trees
        else:
            out["trees"] = [t.to_json() for t in source]
        if certificates:
            out["certificates"] = self.certificates(symmetric)
        return out

    def forestcoll_xml_lines(self, indent: str = "") -> list[str]:
        """This phase as one ``<algo>`` element of the ForestColl tree XML."""
        lines = [f"{indent}<algo nchunkspernode={quoteattr(str(self.k))} "
                 f"collective={quoteattr(self.collective)}>"]
        for tr in self.trees:
            lines.append(
                f"{indent}  <tree root={quoteattr(str(tr.root))} index={quoteattr(str(tr.index))} "
                f"nchunks={quoteattr(str(tr.multiplicity))} height={quoteattr(str(tr.height))}>"
            )
            for e in tr.edges:
                path = ",".join(str(x) for x in e.path)
                lines.append(
                    f"{indent}    <send src={quoteattr(str(e.src))} dst={quoteattr(str(e.dst))} "
                    f"path={quoteattr(path)}/>"
                )
            lines.append(f"{indent}  </tree>")
        lines.append(f"{indent}</algo>")
        return lines


@dataclass
class Schedule:
    """A complete schedule: phases of trees, the optimum it reaches, certificates."""

    collective: str
    topology: Topology
    phases: list[Phase]
    optimum: Optimum
    root: Node | None = None
    weights: dict[Node, Fraction] | None = None
    fixed_k: int | None = None
    timings: dict[str, float] = field(default_factory=dict)
    multicast_saved: Fraction = Fraction(0)
    extra: dict[str, Any] = field(default_factory=dict)
    memory: dict[str, float] = field(default_factory=dict)
    """Peak resident memory of the process (MiB) at the end of each stage."""

    @property
    def time_per_unit(self) -> Fraction:
        """Time to run the schedule on one unit of data (sum of the phases)."""
        return sum((p.time_per_unit for p in self.phases), Fraction(0))

    @property
    def algbw(self) -> Fraction:
        return 1 / self.time_per_unit

    @property
    def trees(self) -> list[Tree]:
        return [t for p in self.phases for t in p.trees]

    @property
    def max_height(self) -> int:
        return max((p.max_height for p in self.phases), default=0)

    @property
    def tree_count(self) -> int:
        """How many trees all phases hold (counted, not made, for phases built by orbits)."""
        return sum(len(p.trees) for p in self.phases)

    @property
    def symmetric(self) -> bool:
        """Whether every phase was built by orbits of one symmetry, so that the schedule
        can be written as a symmetric file (docs/schedules.md)."""
        forms = [p.orbits for p in self.phases]
        return bool(forms) and all(f is not None and f.sym is forms[0].sym  # type: ignore[union-attr]
                                   for f in forms)

    @property
    def expanded_edges(self) -> int:
        """Tree edges of the schedule written out in full (N − 1 per tree)."""
        return self.tree_count * max(self.topology.num_compute - 1, 0)

    def summary(self) -> str:
        t = self.topology
        head = self.collective
        if self.root is not None:
            head += f" {'to' if self.collective == 'reduce' else 'from'} root {self.root!r}"
        if self.fixed_k is not None:
            head += f" with fixed k = {self.fixed_k}"
        ks = ", ".join(f"{p.collective} k = {p.k}, U = {fraction_str(p.U)}" for p in self.phases)
        text = (
            f"{head} on {t.name or 'topology'} ({t.num_compute} compute nodes, "
            f"{len(t.switch_nodes)} switch{'' if len(t.switch_nodes) == 1 else 'es'}): algbw {show(self.algbw)} {t.unit}, "
            f"time per unit {show(self.time_per_unit)}; {ks}; {self.tree_count} trees, "
            f"max height {self.max_height}"
        )
        target = self.extra.get("target_time_per_unit")
        if self.collective == "allreduce":
            lb = self.optimum.extra["lower_bound_time_per_unit"]
            text += (f"; allreduce lower bound time {show(lb)} ("
                     + ("reached: optimal" if self.time_per_unit == lb else
                        f"RS+AG is {show(self.time_per_unit / lb)} × the bound")
                     + (" among routing schedules; switches here add, see collcert optimum "
                        "-c allreduce" if t.in_network else "") + ")")
        elif target is not None and self.time_per_unit == target:
            text += ("; equals the certified optimum" if self.fixed_k is None else
                     f"; equals the certified best time with k = {self.fixed_k} "
                     f"(the optimum over all k is algbw {show(self.optimum.extra['optimal_algbw'])})")
        if "symmetrized" in self.extra:
            text += "; built by orbits on the symmetrized machine (docs/whatif.md)"
        if self.multicast_saved:
            text += (f"; in-network multicast removes {show(self.multicast_saved)}·M of link traffic "
                     "(data size M times links crossed)")
        if self.timings:
            text += f"; took {sum(self.timings.values()):.2f} s (" + ", ".join(
                f"{k} {v:.2f} s" for k, v in self.timings.items()) + ")"
        return text + "."

    def to_json(self, *, certificates: bool = True, compact: bool = False,
                symmetric: bool = False) -> dict[str, Any]:
        """The ``collcert-schedule/1`` document (docs/schedule-format.md); ``compact``:
        tree edges as indices into a per-phase table of walks (what files hold);
        ``symmetric``: the representatives' trees and the generator of the symmetry
        whose images are the other trees (docs/schedules.md; :attr:`symmetric` must hold)."""
        if symmetric and not self.symmetric:
            from ..model import ScheduleError

            raise ScheduleError(self.why_not_symmetric())
        t = self.topology
        out: dict[str, Any] = {
            "format": FORMAT,
            "collective": self.collective,
            "topology": t.content_hash(),
            "topology_name": t.name,
            "unit": t.unit,
            "compute_nodes": list(t.compute_nodes),
            "root": self.root,
            "weights": None if self.weights is None else
            {str(u): fraction_str(w) for u, w in self.weights.items()},
            "phases": [p.to_json(certificates and len(self.phases) > 1, compact, symmetric)
                       for p in self.phases],
            "claimed": {"algbw": fraction_str(self.algbw),
                        "time_per_unit": fraction_str(self.time_per_unit)},
        }
        if symmetric:
            out["symmetry"] = self.symmetry_block()
        if certificates:
            certs: dict[str, Any] = {}
            if len(self.phases) == 1:
                certs.update(self.phases[0].certificates(symmetric))
            certs["optimum"] = self.optimum.certificate()
            out["certificates"] = certs
        gen: dict[str, Any] = {
            "tool": "collcert",
            "options": {"fixed_k": self.fixed_k},
            "seconds": {k: round(v, 4) for k, v in self.timings.items()},
        }
        if self.multicast_saved:
            gen["multicast_saved"] = fraction_str(self.multicast_saved)
        for key, value in self.extra.items():
            if key in PROVEN_BY_OPTIMUM and not certificates:
                continue  # a figure only the embedded optimum certificate proves
            gen[key] = fraction_str(value) if isinstance(value, Fraction | int) else value
        out["generator"] = gen
        return out

    def symmetry_block(self) -> dict[str, Any]:
        """The ``symmetry`` object of a symmetric file: the generator σ as
        ``[[u, σ(u)], …]``, the order of <σ>, one representative per orbit; with several
        generators (a product group) each of them and their ``orders``."""
        forms = [p.orbits for p in self.phases if p.orbits is not None]
        first = forms[0]
        if any(f.sym is not first.sym for f in forms[1:]):
            raise ValueError("internal: the phases were built by orbits of different symmetries")
        gens = first.generators()
        block: dict[str, Any] = {"generators": gens, "order": first.sym.order}
        if len(gens) > 1:
            block["orders"] = list(first.sym.factors)
        block["representatives"] = first.representatives()
        return block

    def why_not_symmetric(self) -> str:
        """Why this schedule cannot be written as a symmetric file."""
        notes = "; ".join(str(p.stats.get("symmetry", "none found")) for p in self.phases)
        return ("this schedule has no symmetric form: it was not built by the orbits of a "
                f"box symmetry of this machine (build: {notes}); symmetric files exist for "
                "allgather, reduce-scatter and allreduce on machines of identical boxes "
                "(without --no-symmetry, --degrade/--fail or multicast switches); write it "
                "without --symmetric")

    def to_forestcoll_xml(self) -> str:
        """The ForestColl tree format (Zhao et al. 2026, §6.1): one ``<algo>`` per phase.

        A schedule with several phases (allreduce) wraps its ``<algo>`` elements
        in ``<schedule collective="allreduce">``. Node ids are written by their
        string form.
        """
        lines = ['<?xml version="1.0" encoding="UTF-8"?>']
        if len(self.phases) == 1:
            lines += self.phases[0].forestcoll_xml_lines()
        else:
            lines.append(f"<schedule collective={quoteattr(self.collective)}>")
            for ph in self.phases:
                lines += ph.forestcoll_xml_lines("  ")
            lines.append("</schedule>")
        return "\n".join(lines) + "\n"
