"""The machine as NCCL's in-network algorithms see it: boxes, their NVSwitch, NVLS heads,
the SHARP switch between boxes, and the tree paths that add or copy at a switch.

NCCL (NVIDIA/nccl at 5067397c, read for docs/baselines.md):

* **NVLS** needs NVLink SHARP (``comm->nvlsSupport``: an NVSwitch with multicast,
  sm 90 or later, ``src/transport/nvls.cc:262-279``; ``src/graph/search.cc:1124``:
  no NVS node or compute capability below 90, no NVLS graph). collcert reads it from the
  topology: a switch that adds (``nvls_switches``, or ``reducing_switches``) joined both
  ways to every GPU of
  the box. Its *heads* are the GPUs that each reduce one part of the data: on one node
  every GPU up to ``NCCL_MAX_NVLS_ARITY`` = 32 (``search.cc:1127``, ``1136``: "pull
  evenly from all GPUs"), across nodes one per NIC (``search.cc:754-770``);
* **CollNet** (SHARP) needs NVIDIA's CollNet plugin and a switch that adds between the
  nodes (``comm->config.collnetEnable``, ``src/graph/tuning.cc:504-506``): collcert
  reads it as a SHARP switch (``reducing_switches``) outside the boxes that every head
  reaches.

The tree paths (docs/schedule-format.md): a path of an in-tree may end at a switch that
adds (the switch adds it into the stream of another path through it), a path of an
out-tree may start at a switch that copies, and a GPU's own data may go through the
switch and back (a *self-edge*, ``src`` = ``dst``): NCCL's ``multimem.ld_reduce``
reads every GPU's share through the switch, the reducing GPU's own included, and
``multimem.st`` writes the sum to every GPU, the writer included.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from collcert.reference.model import Topology

from .document import PhaseDoc
from .fabric import Fabric, Node, Route, box_switches, find_boxes
from .rings import BaselineError

NVLS_ARITY = 32  # NCCL_MAX_NVLS_ARITY, src/include/device.h:213
DIRECT_ARITY = 7  # NCCL_MAX_DIRECT_ARITY, src/include/device.h:199


@dataclass
class Machine:
    """Boxes, each box's switch joining its GPUs (None: none), and the routes."""

    topology: Topology
    boxes: list[list[Node]]
    inside: list[set[Node]]
    hubs: list[Node | None]
    fabric: Fabric

    def route(self, a: Node, b: Node) -> Route:
        """The least used route from ``a`` to ``b`` (inside their box when they share
        one), counted as used."""
        within = next((sw for box, sw in zip(self.boxes, self.inside) if a in box and b in box),
                      None)
        r = self.fabric.route(a, b, within)
        if r is None:
            raise BaselineError(f"no route through switches from {a!r} to {b!r}")
        self.fabric.use(r)
        return r


def machine(topology: Topology) -> Machine:
    boxes = find_boxes(topology)
    inside = box_switches(topology, boxes)
    hubs = [_hub(topology, box, sw) for box, sw in zip(boxes, inside)]
    return Machine(topology, boxes, inside, hubs, Fabric(topology))


def _hub(topology: Topology, box: Sequence[Node], switches: set[Node]) -> Node | None:
    """A switch of the box joined both ways to every GPU of the box (NCCL's NVS node);
    one that adds first."""
    cap = topology.capacity
    found = [w for w in topology.switch_nodes if w in switches
             and all((g, w) in cap and (w, g) in cap for g in box)]
    found.sort(key=lambda w: w not in topology.reducing_switches)
    return found[0] if found else None


def nvls_hubs(m: Machine, what: str) -> list[Node]:
    """Every box's NVSwitch that adds, or BaselineError naming the box without one."""
    out = []
    for box, hub in zip(m.boxes, m.hubs):
        if hub is None or hub not in m.topology.reducing_switches:
            had = "" if hub is None else f" ({hub!r} forwards only)"
            raise BaselineError(
                f"{what} needs a switch that adds joined to every GPU of the box (NVLink "
                f"SHARP: NCCL's nvlsSupport, NVSwitch 3 and sm 90 or later); the box of "
                f"{box[0]!r} has none{had}: declare it in nvls_switches if it adds")
        out.append(hub)
    return out


def heads(m: Machine) -> list[int]:
    """The positions of the GPUs that reach the same position in every other box
    through switches outside the boxes (one per NIC rail: NCCL's NVLS and CollNet
    heads across nodes); BaselineError when there are none."""
    sizes = {len(b) for b in m.boxes}
    if len(sizes) != 1:
        raise BaselineError("the boxes have different numbers of GPUs ("
                            f"{', '.join(str(len(b)) for b in m.boxes)}); NCCL's NVLS and "
                            "CollNet heads are one per rail, alike in every node")
    out = []
    for i in range(len(m.boxes[0])):
        ends = [b[i] for b in m.boxes]
        if all(m.fabric.route(ends[0], v) is not None for v in ends[1:]):
            out.append(i)
    if not out:
        raise BaselineError("no GPU reaches the GPU of the same position in the other "
                            "boxes through the network (NCCL's heads are GPUs with a NIC)")
    return out[:NVLS_ARITY]


def sharp_switch(m: Machine) -> Node:
    """The switch outside the boxes that adds (InfiniBand SHARP) and that the routes
    between the boxes' first GPUs pass; BaselineError when there is none."""
    inside = set().union(*m.inside)
    adders = [w for w in m.topology.switch_nodes  # SHARP: an NVLS switch holds no sum
              if w in m.topology.sharp_switches and w not in inside]
    first = [b[0] for b in m.boxes]
    for w in adders:
        if all(w in (m.fabric.route(first[0], v) or ()) for v in first[1:]):
            return w
    raise BaselineError("CollNet (SHARP) needs a switch between the boxes that adds "
                        "(reducing_switches; the built-ins with ',sharp', e.g. "
                        "dgx_h100:2,sharp) and NCCL's CollNet plugin (NCCL_COLLNET_ENABLE=1"
                        "); this topology has none"
                        + (f" on the routes between the boxes ({', '.join(map(str, adders))}"
                           " add but are not on them)" if adders else ""))


def up_to(route: Route, w: Node) -> Route:
    """The route cut where it first reaches ``w``."""
    return route[:route.index(w) + 1]


def from_(route: Route, w: Node) -> Route:
    """The route from where it last leaves ``w``."""
    i = len(route) - 1 - route[::-1].index(w)
    return route[i:]


def reduce_through(phase: PhaseDoc, m: Machine, hub: Node, members: Sequence[Node],
                   to: Node, own: bool) -> list[int]:
    """Walks of an in-tree: every GPU of ``members`` but ``to`` sends its share to ``hub``,
    which adds them and sends the sum to ``to`` (one path ends at ``to``, the others at
    ``hub``); ``own``: ``to``'s own share goes through the switch too (a self-edge)."""
    others = [g for g in members if g != to]
    walks = []
    for i, g in enumerate(others):
        path = (g, hub, to) if i == 0 else (g, hub)
        walks.append(phase.walk(path, g, to))
    if own:
        walks.append(phase.walk((to, hub), to, to))
    for path in [(g, hub) for g in others] + [(hub, to)] + ([(to, hub)] if own else []):
        m.fabric.use(path)
    return walks


def copy_through(phase: PhaseDoc, m: Machine, hub: Node, members: Sequence[Node],
                 frm: Node, own: bool) -> list[int]:
    """Walks of an out-tree: ``frm`` sends to ``hub``, which copies to every GPU of
    ``members`` but ``frm`` (one path starts at ``frm``, the others at ``hub``); ``own``:
    the copy reaches ``frm`` too (a self-edge)."""
    others = [g for g in members if g != frm]
    walks = []
    for i, g in enumerate(others):
        path = (frm, hub, g) if i == 0 else (hub, g)
        walks.append(phase.walk(path, frm, g))
    if own:
        walks.append(phase.walk((hub, frm), frm, frm))
    for path in [(frm, hub)] + [(hub, g) for g in others] + ([(hub, frm)] if own else []):
        m.fabric.use(path)
    return walks
