"""What-if: a topology with some links degraded and some links or nodes failed.

An operator's question after a hardware fault is "what is my machine now?":
``--degrade LINK=CAP`` sets a link's capacity (exact: ``25/2``, ``12.5``;
``NODE=CAP`` sets every link of the node, in and out: a NIC at half speed),
``--fail LINK`` removes a link and ``--fail NODE`` a node with all its links.
A link is ``src>dst`` (one direction) or ``src<>dst`` (both). :func:`what_if`
returns the changed :class:`~collcert.reference.model.Topology` (or, when the
failures cut compute nodes off, the node set that proves the rate is 0) and a
line per change; the optimum and the loss are computed by the callers
(``collcert optimum|schedule --degrade/--fail``, docs/whatif.md).

Every problem is a :class:`TopologyError` naming the option, the node or link
and what to do: an unknown node (with the closest names), a missing link (with
the links the node has), a capacity ≤ 0, a one-direction change that leaves a
node sending more than it receives, fewer than two compute nodes left.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from .errors import TopologyError, node_name
from .exact import NumberError, fraction_str, parse_number
from .links import Link, Node
from .topology import Topology

__all__ = ["WhatIf", "what_if"]


@dataclass(frozen=True)
class WhatIf:
    """The outcome of :func:`what_if`.

    ``topology`` is the changed machine, or None when the failures disconnect it;
    then ``cut`` is a node set S (compute nodes on both sides) that no link leaves
    in the changed machine, so every collective that needs data to cross it has
    rate 0, and ``cut_off`` lists the compute nodes on the smaller side.
    ``changed`` maps every changed link to its new capacity (0 when failed).
    """

    healthy: Topology
    topology: Topology | None
    changes: tuple[str, ...]
    changed: dict[Link, Fraction] = field(default_factory=dict)
    removed_nodes: tuple[Node, ...] = ()
    cut: frozenset[Node] | None = None
    cut_off: tuple[Node, ...] = ()

    @property
    def disconnected(self) -> bool:
        return self.topology is None

    def disconnected_text(self, consequence: str) -> str:
        """Why a disconnected machine has nothing to compute, one sentence for every
        command: ``the machine is disconnected (link 0 ↔ 1: failed): 2 compute nodes are
        cut off (0, 3), so <consequence>``; at most 16 nodes are named."""
        n = len(self.cut_off)
        names = ", ".join(str(v) for v in self.cut_off[:16]) + (", …" if n > 16 else "")
        return (f"the machine is disconnected ({'; '.join(self.changes)}): {n} compute "
                f"node{'s are' if n != 1 else ' is'} cut off ({names}), so {consequence}")


def _node(t: Topology, text: str, option: str) -> Node:
    node = t.lookup(text.strip())
    if node in t.index:
        return node
    names = [str(v) for v in t.nodes]
    close = difflib.get_close_matches(text.strip()[:80], names, n=3)
    hint = f"; did you mean {', '.join(close)}?" if close else (
        f"; its nodes are named like {', '.join(names[:3])}")
    raise TopologyError(f"{option} {text[:80]!r}: {node_name(text.strip())} is not a node of "
                        f"{t.name or 'the topology'}{hint}")


def _links(t: Topology, text: str, option: str) -> list[Link]:
    """The links ``src>dst`` (one) or ``src<>dst`` (both directions) names."""
    both = "<>" in text
    parts = text.split("<>" if both else ">")
    arrow = "->" in text or "<-" in text  # '0->1' would read as the node '0-'
    if arrow or len(parts) != 2 or not parts[0].strip() or not parts[1].strip():
        raise TopologyError(f"{option} {text[:80]!r}: write a link as SRC>DST (one direction) "
                            "or SRC<>DST (both directions), e.g. b3.gpu2<>b3.nic2")
    u, v = _node(t, parts[0], option), _node(t, parts[1], option)
    wanted = [(u, v), (v, u)] if both else [(u, v)]
    for link in wanted:
        if link not in t.capacity:
            a, b = link
            heads = [str(y) for (x, y) in t.capacity if x == a][:8]
            raise TopologyError(
                f"{option} {text[:80]!r}: there is no link {node_name(a)} → {node_name(b)}; "
                f"links from {node_name(a)} go to {', '.join(heads) or 'no node'}")
    return wanted


def _capacity(text: str, option: str) -> Fraction:
    try:
        cap = parse_number(text.strip())
    except NumberError as exc:  # says why: not a number, too large, a division by zero
        raise TopologyError(f"{option}: {text[:40]!r} is not a capacity: {exc}") from None
    except (ValueError, TypeError):
        raise TopologyError(f"{option}: {text[:40]!r} is not a capacity; write an exact "
                            "number such as 25/2 or 12.5") from None
    if cap <= 0:
        raise TopologyError(f"{option}: capacity {text[:40]} must be > 0; to take the link "
                            "out, use --fail LINK instead")
    return cap


def _balance_problem(nodes: Iterable[Node], capacity: dict[Link, Fraction]) -> Node | None:
    net: dict[Node, Fraction] = {v: Fraction(0) for v in nodes}
    for (u, v), c in capacity.items():
        net[u] += c
        net[v] -= c
    return next((v for v, d in net.items() if d), None)


def _reach(start: Node, capacity: Iterable[Link], reverse: bool = False) -> set[Node]:
    adj: dict[Node, list[Node]] = {}
    for u, v in capacity:
        a, b = (v, u) if reverse else (u, v)
        adj.setdefault(a, []).append(b)
    seen, stack = {start}, [start]
    while stack:
        for y in adj.get(stack.pop(), ()):
            if y not in seen:
                seen.add(y)
                stack.append(y)
    return seen


def _disconnection(compute: Sequence[Node], capacity: dict[Link, Fraction],
                   ) -> frozenset[Node] | None:
    """A node set S with compute nodes on both sides and no link leaving it, or None."""
    first = compute[0]
    ahead = _reach(first, capacity)
    if any(v not in ahead for v in compute):
        return frozenset(ahead)
    behind = _reach(first, capacity, reverse=True)
    lost = next((v for v in compute if v not in behind), None)
    return None if lost is None else frozenset(_reach(lost, capacity))


def _describe(t: Topology, link: Link, new: Fraction, both: bool) -> str:
    u, v = link
    old = fraction_str(t.capacity[link])
    arrow = "↔" if both else "→"
    what = "failed" if new == 0 else f"{old} → {fraction_str(new)} {t.unit}"
    return f"link {u} {arrow} {v}: {what}"


def what_if(topology: Topology, degrade: Sequence[str] = (), fail: Sequence[str] = (),
            *, strict: bool = True) -> WhatIf:
    """``topology`` with ``degrade`` (``"LINK=CAP"``) and ``fail`` (``"LINK"`` or
    ``"NODE"``) applied, in exact capacities (module docstring). ``strict=False``: any
    directed graph is kept (allreduce, alltoall), as ``Topology(..., strict=False)``
    does; by default every node must still send what it receives (ForestColl)."""
    t = topology
    capacity = dict(t.capacity)
    changed: dict[Link, Fraction] = {}
    lines: list[str] = []
    removed: list[Node] = []
    for item in fail:
        text = str(item)
        if ">" not in text:
            node = _node(t, text, "--fail")
            if node in removed:
                raise TopologyError(f"--fail {text[:80]!r}: node {node} is given to --fail "
                                    "twice; give each failure once")
            gone = [e for e in capacity if node in e]
            changed.update((e, Fraction(0)) for e in gone)
            for e in gone:
                del capacity[e]
            removed.append(node)
            kind = "compute node" if t.is_compute(node) else "switch"
            lines.append(f"{kind} {node} failed ({len(gone)} links)")
            continue
        links = _links(t, text, "--fail")
        for e in links:
            if e not in capacity:
                raise TopologyError(f"--fail {text[:80]!r}: link {e[0]} → {e[1]} has already "
                                    "failed (an earlier --fail); give each failure once")
            capacity.pop(e)
            changed[e] = Fraction(0)
        lines.append(_describe(t, links[0], Fraction(0), len(links) == 2))
    for item in degrade:
        text = str(item)
        if "=" not in text:
            raise TopologyError(f"--degrade {text[:80]!r}: write LINK=CAPACITY, e.g. "
                                "b3.gpu2<>b3.nic2=25/2")
        spec, _, cap_text = text.rpartition("=")
        cap = _capacity(cap_text, f"--degrade {text[:80]!r}")
        if ">" in spec:
            links = _links(t, spec, "--degrade")
            lines.append(_describe(t, links[0], cap, len(links) == 2))
        else:  # a node: every link it has, in and out (a NIC at half speed)
            node = _node(t, spec, "--degrade")
            links = [e for e in t.capacity if node in e]
            lines.append(f"every link of {node} ({len(links)}): {fraction_str(cap)} {t.unit}")
        for e in links:
            if e not in capacity:
                raise TopologyError(f"--degrade {text[:80]!r}: link {e[0]} → {e[1]} is also "
                                    "given to --fail; give it to one of the two")
            if e in changed:
                raise TopologyError(f"--degrade {text[:80]!r}: link {e[0]} → {e[1]} is already "
                                    f"set to {fraction_str(changed[e])} by an earlier "
                                    "--degrade; give each link one capacity")
            capacity[e] = cap
            changed[e] = cap
    return _result(t, capacity, changed, tuple(lines), removed, strict)


def _result(t: Topology, capacity: dict[Link, Fraction], changed: dict[Link, Fraction],
            lines: tuple[str, ...], removed: list[Node], strict: bool = True) -> WhatIf:
    gone = set(removed)
    compute = [v for v in t.compute_nodes if v not in gone]
    switches = [v for v in t.switch_nodes if v not in gone]
    if len(compute) < 2:
        raise TopologyError(f"--fail: {len(compute)} compute node(s) would be left; "
                            "a collective needs at least two")
    unbalanced = _balance_problem(compute + switches, capacity) if strict else None
    if unbalanced is not None:
        raise TopologyError(
            f"after {'; '.join(lines)}: node {node_name(unbalanced)} would send a different "
            "amount than it receives, which a ForestColl topology must not (Zhao & "
            "Krishnamurthy 2023, §1); change both directions of a link (SRC<>DST)")
    cut = _disconnection(compute, capacity)
    if cut is not None:
        inside = [v for v in compute if v in cut]
        outside = [v for v in compute if v not in cut]
        small = inside if len(inside) <= len(outside) else outside
        return WhatIf(t, None, lines, changed, tuple(removed), cut, tuple(small))
    links = [(u, v, c) for (u, v), c in capacity.items()]
    new = Topology(compute, links, switches, name=f"{t.name or 'topology'} (what-if)",
                   unit=t.unit,
                   multicast_switches=[v for v in t.multicast_switches if v not in gone],
                   reducing_switches=[v for v in t.reducing_switches if v not in gone],
                   nvls_switches=[v for v in t.nvls_switches if v not in gone],
                   reduction_rates={v: r for v, r in t.reduction_rates.items() if v not in gone},
                   alpha={e: a for e, a in t.alpha.items() if e in capacity}, strict=strict)
    return WhatIf(t, new, lines, changed, tuple(removed))
