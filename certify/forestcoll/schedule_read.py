"""A ``collcert-schedule/1`` document (docs/schedule-format.md) read for checker 5.

:func:`read_schedule` turns the JSON dict into :class:`Schedule` and
:class:`Phase` objects: the phases of a pipeline schedule of spanning trees
(Zhao & Krishnamurthy 2023, §2; allreduce: reduce-scatter then allgather,
App. B), each with its trees (:class:`~.trees.Tree`) and their edges' paths in
G, explicit or compact. Anything unreadable, and anything beyond the bounds ``MAX_*`` that
keep hostile input cheap to reject, is refused with
:class:`~collcert.certify.model.InputError`; :mod:`.schedule` checks what is
read here, and :mod:`.readers` uses the format constants.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from ..model import InputError, Node, Topo, content_hash, integer, is_fingerprint, number
from .schedule_expand import expand_symmetric
from .trees import Edge, Tree

FORMAT = "collcert-schedule/1"
COLLECTIVES = ("allgather", "reduce-scatter", "broadcast", "reduce", "allreduce")
PHASES = {
    "allgather": ("allgather",),
    "reduce-scatter": ("reduce-scatter",),
    "broadcast": ("broadcast",),
    "reduce": ("reduce",),
    "allreduce": ("reduce-scatter", "allgather"),
}
DIRECTION = {"allgather": "out", "broadcast": "out", "reduce-scatter": "in", "reduce": "in"}

# Bounds that keep hostile input cheap to reject (a 1024-GPU schedule is far below them).
MAX_PHASES = 16
MAX_TREES = 400_000
MAX_EDGES = 40_000_000
MAX_PATH = 64


@dataclass
class Phase:
    collective: str
    k: int
    U: Fraction | None
    trees: list[Tree]
    label: str
    certificates: Mapping[str, Any] = field(default_factory=dict)
    claimed_time: Fraction | None = None


@dataclass
class Schedule:
    collective: str
    root: Node | None
    weights: dict[Node, Fraction] | None
    phases: list[Phase]
    claimed: dict[str, Fraction] = field(default_factory=dict)
    certificates: Mapping[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    overlap: bool = False  # phases run at the same time (pipelined), loads add up per link
    stated: Mapping[str, Any] = field(default_factory=dict)  # unit, generator: schedule_stated
    symmetry: Mapping[str, Any] | None = None
    """A symmetric file's ``symmetry`` (read with ``orbits=True``): ``phases`` then hold
    the representatives' trees only (:mod:`.schedule_orbits`)."""


def read_schedule(topo: Topo, data: Any, *, orbits: bool = False) -> Schedule:
    """Read a ``collcert-schedule/1`` dict; InputError on anything unreadable. A symmetric
    file (docs/schedules.md) is written out in full first (:func:`expand_symmetric`,
    up to its size limit), unless ``orbits``: then its trees stay the representatives'
    and ``symmetry`` is kept for :mod:`.schedule_orbits` (checker 5 checks it so)."""
    if not isinstance(data, Mapping):
        raise InputError("not a schedule: a schedule file is a JSON object, this is "
                         f"a {type(data).__name__}")
    if data.get("symmetry") is not None and not orbits:
        data = expand_symmetric(data)
    fmt = data.get("format")
    if fmt is None:
        raise InputError(f"not a schedule: no 'format' field (a schedule file says "
                         f"\"format\": \"{FORMAT}\"; 'collcert schedule' writes one)")
    if fmt != FORMAT and "output" in data and "stages" in data:  # schedule --json's summary
        raise InputError(f"this is the summary 'collcert schedule --json' prints, not a "
                         f"schedule; give the file it wrote with -o ({data['output']!r})")
    if fmt != FORMAT:
        raise InputError(f"schedule format {fmt!r} is not {FORMAT!r}")
    coll = data.get("collective")
    if not isinstance(coll, str) or coll not in COLLECTIVES:
        raise InputError(f"schedule collective {coll!r} is not one of {', '.join(COLLECTIVES)}")
    notes: list[str] = []
    claimed_hash = data.get("topology")
    if claimed_hash is not None and not is_fingerprint(claimed_hash):
        notes.append(f"warning: the schedule's 'topology' field {str(claimed_hash)[:40]!r} is "
                     "not a topology fingerprint ('sha256:' and 64 hex digits); ignored")
    elif isinstance(claimed_hash, str) and claimed_hash.startswith("sha256:"):
        if claimed_hash != content_hash(topo):
            notes.append("warning: the schedule names another topology hash "
                         f"({claimed_hash[:19]}…); checking it against this topology anyway")
    root = None
    if coll in ("broadcast", "reduce"):
        if data.get("root") is None:
            raise InputError(f"a {coll} schedule needs its root: the top-level key 'root' is "
                             f"{'null' if 'root' in data else 'missing'}; set it to the "
                             "compute node the data comes from (broadcast) or goes to "
                             "(reduce)")
        root = topo.compute_node(data.get("root"), "schedule root")
    elif data.get("root") is not None:
        raise InputError(f"a {coll} schedule has no root; drop 'root' or set it to null")
    weights = _read_weights(topo, coll, data.get("weights"))
    overlap = data.get("overlap", False)
    if not isinstance(overlap, bool) or (overlap and len(PHASES[coll]) < 2):
        raise InputError("overlap must be true or false, and true only for a schedule of "
                         "several phases (allreduce)")
    phases_raw = data.get("phases")
    if not isinstance(phases_raw, list) or not phases_raw:
        raise InputError("the schedule needs a non-empty 'phases' array")
    if len(phases_raw) > MAX_PHASES:
        raise InputError(f"the schedule has {len(phases_raw)} phases; at most {MAX_PHASES} "
                         "are accepted")
    reader = _Reader(topo)
    phases = [_read_phase(reader, p, i) for i, p in enumerate(phases_raw)]
    claimed: dict[str, Fraction] = {}
    raw_claim = data.get("claimed")
    if isinstance(raw_claim, Mapping):
        for key in ("algbw", "time_per_unit"):
            if raw_claim.get(key) is not None:
                claimed[key] = number(raw_claim[key], f"claimed {key}")
    certs = data.get("certificates") or {}
    if not isinstance(certs, Mapping):
        raise InputError("'certificates' must be an object")
    cn = data.get("compute_nodes")
    if cn is not None and not isinstance(cn, list):
        raise InputError(f"compute_nodes is {str(cn)[:40]!r}: it must be an array of the "
                         "topology's compute node ids")
    if isinstance(cn, list):
        names = [str(c) for c in cn]
        if sorted(names) != sorted(str(c) for c in topo.compute):
            raise InputError(
                f"the schedule lists {len(cn)} compute nodes ({', '.join(names[:4])}…) that are "
                "not this topology's compute nodes; audit it against the topology it was made for")
    stated = {key: data[key] for key in ("unit", "generator", "routes") if key in data}
    sym = data.get("symmetry")
    return Schedule(coll, root, weights, phases, claimed, certs, notes, overlap, stated,
                    sym if orbits and sym is not None else None)


def _read_weights(topo: Topo, coll: str, raw: Any) -> dict[Node, Fraction] | None:
    """The schedule's ``weights`` (None when it has none)."""
    if raw is None:
        return None
    if coll not in ("allgather", "reduce-scatter", "allreduce") or not isinstance(raw, Mapping):
        raise InputError("weights must be an object {node: \"p/q\"}, for allgather, "
                         "reduce-scatter or allreduce only")
    weights = {topo.compute_node(k, "weights key"): number(w, f"weight of {k}")
               for k, w in raw.items()}
    for c in topo.compute:
        if weights.get(c, Fraction(-1)) < 0:
            raise InputError(f"weights: compute node {c!r} needs a weight ≥ 0 (0: it "
                             "contributes no data and roots no trees)")
    if not any(weights.values()):
        raise InputError("weights: every weight is 0; at least one must be positive")
    return weights


class _Reader:
    """What reading one schedule keeps: the topology's node look-up, cached (a schedule
    names the same few nodes millions of times), and how many more trees and edges it may
    have before it is refused as beyond what collcert audits."""

    def __init__(self, topo: Topo) -> None:
        self.topo = topo
        self.cache: dict[tuple[type, object], Node] = {}
        self.trees_left = MAX_TREES
        self.edges_left = MAX_EDGES

    def node(self, ref: object, where: str) -> Node:
        key = (type(ref), ref) if isinstance(ref, str | int) else None
        if key is not None and key in self.cache:
            return self.cache[key]
        got = self.topo.node(ref, where)
        if key is not None:
            self.cache[key] = got
        return got

    def take_trees(self, count: int) -> None:
        self.trees_left -= count
        if self.trees_left < 0:
            raise InputError(f"the schedule has more than {MAX_TREES} trees; that is beyond "
                             "what collcert audits (a 1024-GPU schedule needs far fewer)")

    def take_edges(self, count: int, what: str) -> None:
        self.edges_left -= count
        if self.edges_left < 0:
            raise InputError(f"the schedule has more than {MAX_EDGES} {what}; that is "
                             "beyond what collcert audits")


def _read_phase(reader: _Reader, raw: Any, i: int) -> Phase:
    label = f"phase {i}"
    if not isinstance(raw, Mapping):
        raise InputError(f"{label} is not an object")
    coll = raw.get("collective")
    if not isinstance(coll, str) or coll not in DIRECTION:
        raise InputError(f"{label}: collective {coll!r} is not one of {', '.join(DIRECTION)}")
    label = f"phase {i} ({coll})"
    k = integer(raw.get("k"), f"{label} k", 1, strict=True)
    u = None if raw.get("U") is None else number(raw["U"], f"{label} U")
    trees_raw = raw.get("trees")
    if not isinstance(trees_raw, list):
        raise InputError(f"{label} needs a 'trees' array")
    reader.take_trees(len(trees_raw))
    walks = _read_walks(raw.get("walks"), label, reader)
    trees = [_read_tree(reader, t, f"{label} tree {j}", DIRECTION[coll], walks)
             for j, t in enumerate(trees_raw)]
    for tree, t in zip(trees, trees_raw):  # stated figures, compared by schedule_stated
        tree.extra.update({key: integer(t[key], f"{tree.label} {key}", 0, strict=True)
                           for key in ("height", "index") if key in t})
    certs = raw.get("certificates") or {}
    if not isinstance(certs, Mapping):
        raise InputError(f"{label}: 'certificates' must be an object")
    claimed = raw.get("time_per_unit")
    claimed_time = None if claimed is None else number(claimed, f"{label} time_per_unit")
    return Phase(coll, k, u, trees, label, certs, claimed_time)


def _read_tree(reader: _Reader, t: Any, where: str, direction_of_phase: str,
               walks: list[Edge] | None) -> Tree:
    """One tree: its root (a compute node), multiplicity, direction and edges, written out
    or (a compact phase) as indices into the phase's walks."""
    if not isinstance(t, Mapping):
        raise InputError(f"{where} is not an object")
    root = reader.node(t.get("root"), f"{where} root")
    if root not in reader.topo.compute_set:
        raise InputError(f"{where} root {root!r} is a switch, not a compute node")
    where += f" (root {root!r}" + (
        f", index {t['index']})" if isinstance(t.get("index"), int) else ")")
    mult = integer(t.get("multiplicity", 1), f"{where} multiplicity", 1, strict=True)
    direction = t.get("direction", direction_of_phase)
    if direction not in ("out", "in"):
        raise InputError(f"{where}: direction {direction!r} is not 'out' or 'in'")
    edges_raw = t.get("edges")
    if not isinstance(edges_raw, list):
        raise InputError(f"{where} needs an 'edges' array")
    reader.take_edges(len(edges_raw), "tree edges")
    if walks is not None:  # compact trees: indices into the phase's walks
        return Tree(root, mult, direction, _walk_refs(walks, edges_raw, where), where)
    if reader.topo.string_ids:
        fast = _fast_edges(reader.topo.lookup, edges_raw)
        if fast is not None:
            return Tree(root, mult, direction, fast, where)
    edges: list[Edge] = []
    for m, e in enumerate(edges_raw):
        ew = f"{where} edge {m}"
        if not isinstance(e, Mapping):
            raise InputError(f"{ew} is not an object with src, dst, path")
        src = reader.node(e.get("src"), f"{ew} src")
        dst = reader.node(e.get("dst"), f"{ew} dst")
        path_raw = e.get("path", [e.get("src"), e.get("dst")])
        if not isinstance(path_raw, list) or not 1 <= len(path_raw) <= MAX_PATH:
            raise InputError(f"{ew}: path must be an array of 2 to {MAX_PATH} node ids")
        edges.append(Edge(src, dst, [reader.node(p, f"{ew} path") for p in path_raw]))
    return Tree(root, mult, direction, edges, where)


def _read_walks(raw: Any, label: str, reader: _Reader) -> list[Edge] | None:
    """A compact phase's table of walks (docs/schedule-format.md), one Edge each;
    None when the phase has none (explicit edges)."""
    if raw is None:
        return None
    if not isinstance(raw, list):
        raise InputError(f"{label}: 'walks' must be an array of {{src, dst, path}} objects")
    reader.take_edges(len(raw), "walks and tree edges")
    if reader.topo.string_ids:
        fast = _fast_walks(reader.topo.lookup, raw)
        if fast is not None:
            return fast
    out = []
    for m, e in enumerate(raw):
        where = f"{label} walk {m}"
        if not isinstance(e, Mapping):
            raise InputError(f"{where} is not an object with src, dst, path")
        path_raw = e.get("path")
        if not isinstance(path_raw, list) or not 2 <= len(path_raw) <= MAX_PATH:
            raise InputError(f"{where}: path must be an array of 2 to {MAX_PATH} node ids")
        out.append(Edge(reader.node(e.get("src"), f"{where} src"),
                        reader.node(e.get("dst"), f"{where} dst"),
                        [reader.node(p, f"{where} path") for p in path_raw]))
    return out


def _walk_refs(walks: list[Edge], refs: list[Any], where: str) -> list[Edge]:
    """The edges of a compact tree: each entry an index into the phase's walks."""
    try:
        if set(map(type, refs)) <= {int} and (not refs or 0 <= min(refs)):
            return list(map(walks.__getitem__, refs))
    except IndexError:
        pass
    bad = next((i for i in refs if type(i) is not int or not 0 <= i < len(walks)), None)
    raise InputError(f"{where}: edge {bad!r} is not an index into the phase's "
                     f"{len(walks)} walks (compact trees list walk indices)")


def _fast_edges(lookup: Mapping[object, Node], edges_raw: list[Any]) -> list[Edge] | None:
    """The edges when every reference is a known id (string ids only); else None."""
    out = []
    try:
        for e in edges_raw:
            path_raw = e["path"] if "path" in e else [e["src"], e["dst"]]
            if type(path_raw) is not list or not 2 <= len(path_raw) <= MAX_PATH:
                return None
            out.append(Edge(lookup[e["src"]], lookup[e["dst"]], [lookup[x] for x in path_raw]))
    except (KeyError, TypeError):
        return None
    return out


def _fast_walks(lookup: Mapping[object, Node], raw: list[Any]) -> list[Edge] | None:
    """A compact phase's walks when every one is an object whose src, dst and path
    entries are known ids (string ids only) and whose path has 2 to MAX_PATH nodes; else
    None (read one by one, each problem named)."""
    out = []
    get = lookup.__getitem__
    try:
        for e in raw:
            path_raw = e["path"]
            if type(path_raw) is not list or not 2 <= len(path_raw) <= MAX_PATH:
                return None
            out.append(Edge(get(e["src"]), get(e["dst"]), list(map(get, path_raw))))
    except (KeyError, TypeError):
        return None
    return out
