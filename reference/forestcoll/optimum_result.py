"""A certified optimum: :class:`Optimum` and the max-flows that prove it, :class:`FlowWitness`.

What :func:`~collcert.reference.forestcoll.optimum` returns: the optimum of a
collective or, for allreduce, the RS+AG time with its lower bounds
(Zhao & Krishnamurthy 2023, eq. (1), Thm 1, Prop 3, §2.4, App. A-B), with the cut
that bounds it and one flow per sink (or per orbit, with the automorphism)
that proves it tight, in exact integer units. Its summary, JSON and the
``collcert-certificate/1`` document that ``collcert.certify`` checks are here.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from ..model import Topology, fraction_str

Node = Hashable
Progress = Callable[[int, int], None]


@dataclass
class FlowWitness:
    """One flow in an auxiliary network, in exact integer units.

    ``amounts[i]`` is the flow on ``arcs[i]``; the real flow is
    ``amounts[i] / multiplier`` in the topology's unit. Arcs whose tail is
    ``None`` leave the super source s; arcs whose head is ``None`` enter the
    super sink t.
    """

    source: Node | None
    sink: Node | None
    multiplier: int
    arcs: Sequence[tuple[Node | None, Node | None]]
    amounts: Sequence[int]
    value: int
    params: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        amounts = self.amounts
        if hasattr(amounts, "nonzero"):  # a numpy array from the ortools engine
            idx = amounts.nonzero()[0].tolist()
            vals = amounts[idx].tolist()
            flow = [[*self.arcs[i], a] for i, a in zip(idx, vals)]
        else:
            flow = [[u, v, int(a)] for (u, v), a in zip(self.arcs, amounts) if a]
        out: dict[str, Any] = {"source": self.source, "sink": self.sink,
                               "multiplier": self.multiplier, "value": int(self.value),
                               "flow": flow}
        for k, v in self.params.items():
            out[k] = fraction_str(v) if isinstance(v, Fraction | int) else v
        return out


@dataclass
class Optimum:
    """A certified optimum (or, for allreduce, certified bounds).

    ``algbw`` is data size divided by time (nccl-tests' algorithm bandwidth)
    in the topology's unit; ``time_per_unit = 1/algbw`` is the time to move
    one unit of data. Everything is exact.
    """

    collective: str
    topology: Topology
    algbw: Fraction
    cut: frozenset[Node] | None = None
    root: Node | None = None
    inv_x: Fraction | None = None
    k: int | None = None
    U: Fraction | None = None
    fixed_k: int | None = None
    maxflows: int = 0
    flows: list[FlowWitness] = field(default_factory=list, repr=False)
    extra: dict[str, Any] = field(default_factory=dict)
    automorphisms: list[list[list[Node]]] = field(default_factory=list, repr=False)
    """Generators σ as ``[[u, σ(u)], …]`` when the flows cover one compute node per
    orbit (:mod:`collcert.reference.symmetry.orbits`); certify/ verifies them and computes the orbits itself."""

    @property
    def time_per_unit(self) -> Fraction:
        return 1 / self.algbw

    @property
    def num_compute(self) -> int:
        return self.topology.num_compute

    def summary(self) -> str:
        from ..model import show

        t = self.topology
        unit = t.unit
        head = f"{self.collective}"
        if self.root is not None:
            head += f" {'to' if self.collective == 'reduce' else 'from'} root {self.root!r}"
        if self.fixed_k is not None:
            head += f" with fixed k = {self.fixed_k}"
        ns = len(t.switch_nodes)
        lines = [f"{head} on {t.name or 'topology'} ({t.num_compute} compute nodes, "
                 f"{ns} switch{'' if ns == 1 else 'es'}, {len(t.capacity)} links)"]
        lines.append(f"  algbw         = {show(self.algbw)} {unit}")
        lines.append(f"  time per unit = {show(self.time_per_unit)} ({unit})^-1")
        if self.inv_x is not None:
            lines.append(f"  1/x*          = {show(self.inv_x)}")
        if self.k is not None:
            lines.append(f"  k = {self.k}, U = {show(self.U or 0)}")
        if self.cut is not None:
            lines.append(f"  witness cut   = {_fmt_cut(self.cut, t)}")
        for key, value in self.extra.items():
            label = _LABELS.get(key, key.replace("_", " "))  # JSON keeps the short keys
            if isinstance(value, Fraction | int) and not isinstance(value, bool):
                lines.append(f"  {label} = {show(value)}")
            elif isinstance(value, bool):
                lines.append(f"  {label}: {'yes' if value else 'no'}")
            elif isinstance(value, str):
                lines.append(f"  {label}: {value}")
            elif value is None and key == "thm19_condition":
                lines.append(f"  {label}: neither (a) nor (b) holds")
        lines.append(f"  max-flows used: {self.maxflows}")
        return "\n".join(lines)

    def to_json(self, *, flows: bool = False) -> dict[str, Any]:
        """A JSON-ready dict; exact numbers as "p/q" strings."""
        t = self.topology
        out: dict[str, Any] = {
            "collective": self.collective,
            "topology": t.content_hash(),
            "unit": t.unit,
            "num_compute": t.num_compute,
            "algbw": fraction_str(self.algbw),
            "time_per_unit": fraction_str(self.time_per_unit),
        }
        if self.root is not None:
            out["root"] = self.root
        if self.fixed_k is not None:
            out["fixed_k"] = self.fixed_k
        if self.inv_x is not None:
            out["inv_x"] = fraction_str(self.inv_x)
        if self.k is not None:
            out["k"] = self.k
        if self.U is not None:
            out["U"] = fraction_str(self.U)
        if self.cut is not None:
            out["cut"] = _ordered(self.cut, t)
        for key, value in self.extra.items():
            out[key] = _jsonable(value, t)
        out["maxflows"] = self.maxflows
        if flows:
            out["flows"] = [f.to_json() for f in self.flows]
        return out

    def certificate(self) -> dict[str, Any]:
        """The witness data for ``collcert.certify`` (JSON-ready)."""
        out = {"format": "collcert-certificate/1", "kind": "optimum",
               **self.to_json(flows=True)}
        # a certificate states only what its checker proves (issue 22): how the reference
        # worked (max-flows, symmetry) is left out, and so is the unconstrained optimum of a
        # fixed-k certificate, whose flows prove U for k, not x*
        omit = _NOT_PROVEN + (_NOT_PROVEN_FIXED_K if self.fixed_k is not None else ())
        for key in omit:
            out.pop(key, None)
        if self.automorphisms:
            out["automorphisms"] = self.automorphisms
        return out


_NOT_PROVEN = ("maxflows", "symmetry")
_NOT_PROVEN_FIXED_K = ("inv_x", "optimal_algbw", "thm15_bound_U_over_k", "thm15_holds")


# human labels of Optimum.extra in summaries (to_json keeps the keys)
_LABELS = {
    "optimal_algbw": "optimum algbw over all k",
    "thm15_bound_U_over_k": "Thm 15 bound on U/k",
    "thm15_holds": "Thm 15 bound holds",
    "floored_eulerian": "floored graph G({⌊U·c_e⌋}) Eulerian",
    "flows_on": "flows computed on",
    "rsag_time_per_unit": "RS+AG time per unit",
    "bound6_time_per_unit": "bound (6) time per unit",
    "bound7_time_per_unit": "bound (7) time per unit",
    "bound7_node": "bound (7) attained at node",
    "lower_bound_time_per_unit": "proven lower bound, time per unit",
    "thm19_condition": "Thm 19 condition (RS+AG optimal)",
    "rsag_proven_optimal": "RS+AG proven optimal",
    "symmetry": "symmetry",
}


def _ordered(nodes: frozenset[Node], t: Topology) -> list[Node]:
    return sorted(nodes, key=lambda v: t.index[v])


def _fmt_cut(cut: frozenset[Node], t: Topology) -> str:
    """The cut S, or, when its complement is the smaller side (one GPU outside 35 nodes),
    the nodes outside it: the fact a reader wants."""
    outside = frozenset(t.nodes) - cut
    if outside and len(outside) < len(cut):
        return f"every node but {_fmt_set(outside, t)} ({len(cut)} of {len(t.nodes)} nodes)"
    return _fmt_set(cut, t)


def _fmt_set(nodes: frozenset[Node], t: Topology) -> str:
    items = _ordered(nodes, t)
    text = ", ".join(str(v) for v in items[:12])
    if len(items) > 12:
        text += f", … ({len(items)} nodes)"
    return "{" + text + "}"


def _jsonable(value: Any, t: Topology) -> Any:
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, Fraction | int):
        return fraction_str(value)
    if isinstance(value, frozenset):
        return _ordered(value, t)
    if isinstance(value, dict):
        return {str(k): _jsonable(v, t) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v, t) for v in value]
    return value
