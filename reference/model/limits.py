"""Size limits: refuse what cannot be read or solved on this machine, before building it.

One estimator serves every way a topology arrives (a built-in platform, a
topology file, stdin, the Python API): from the counts alone (compute nodes,
all nodes, links) it predicts the memory that building the :class:`Topology`
takes and the memory and time that computing its optimum takes, and
:func:`check_size` raises :class:`~collcert.TopologyError` (CLI exit 2) with
the size, the limit and how to raise it when the prediction does not fit.
Platforms call it before they build their link lists, topology files after
parsing the JSON and before building anything from it.

The figures behind the constants were measured with ``/usr/bin/time -v`` on
ring, torus, fat-tree and DGX platforms (docs/limits.md): building costs
0.75-0.95 KB per link; the optimum keeps one max-flow witness per compute node
over all links plus the N source arcs, about 10-18 bytes per arc entry, and
OR-Tools needs about 50 ns per arc entry; the pure-Python exact engine (used
when capacities do not fit in int64) needs about 0.1 µs per (node × arc) per
max-flow.

The limits are module constants. The memory budget is the one the checkers read
their input within (:func:`collcert.certify.model.memory_budget`): 3/4 of the least of the
machine's memory, the process's address-space limit (``ulimit -v``) and its
cgroup's limit, unless the environment variable ``COLLCERT_MAX_MEMORY``
(``"64G"``, ``"512M"``, bytes) sets it; ``COLLCERT_MAX_SECONDS`` sets the
longest predicted solve (default one hour).

The predictions are planning figures, not results: the time constants and the
seconds they give are floats, used only to decide whether to start a solve and
to word a refusal ("about 3 hours"). Memory is counted in integer bytes and
every count is printed exactly; no figure from here reaches a reported optimum.
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import BinaryIO, Protocol

from collcert.certify.model import InputError, human_bytes
from collcert.certify.model import check_json_memory as certify_check_json_memory
from collcert.certify.model import memory_budget as certify_memory_budget
from collcert.certify.model import parse_bytes as certify_parse_bytes

from .errors import TopologyError

MAX_INPUT_BYTES = 256 * 1024 * 1024
"""Largest topology file (or stdin) collcert reads: a 4-million-link file is about 250 MB."""

MAX_NODES = 2_000_000
"""Most nodes (compute + switch) of a topology collcert builds."""

MAX_LINKS = 4_000_000
"""Most directed links of a topology collcert builds (a bidirectional link counts twice)."""

BUILD_BYTES_PER_LINK = 1000
BUILD_BYTES_PER_NODE = 500
FLOW_BYTES_PER_ARC = 24
"""Memory per (compute node × arc) of the optimum's flow witnesses (measured 10-18)."""

ORTOOLS_SECONDS_PER_ARC = 6e-8
"""Time per (compute node × arc) of the optimum with OR-Tools (measured about 5e-8)."""

EXACT_SECONDS_PER_NODE_ARC = 1e-7
"""Time per (compute node × node × arc) with the pure-Python exact max-flow engine."""

MAX_SECONDS = 3600.0
"""Longest predicted solve collcert starts (override: ``COLLCERT_MAX_SECONDS``)."""

MAX_PROVE_NODES = 2_000
MAX_PROVE_LINKS = 20_000
"""Largest topology ``collcert prove`` hands to Z3: cut proofs take ~20 s at 274 nodes,
and the model alone grows with nodes × links (fuzz/z3proofs.py ``PRACTICAL``)."""

MAX_PROVE_TREE_UNITS = 50_000
"""Most N·k·|links| (0/1 variables, each with a flow variable) of a fixed-k tree proof;
6,000 already take Z3 over two minutes, and 10^9 trees would exhaust any memory."""

ENV_SECONDS = "COLLCERT_MAX_SECONDS"


class Network(Protocol):
    """What the limits read of a built topology (a :class:`~collcert.Topology` is one):
    its name for messages, and its counts of nodes, compute nodes and links."""

    @property
    def name(self) -> str: ...
    @property
    def nodes(self) -> Sequence[Hashable]: ...
    @property
    def num_compute(self) -> int: ...
    @property
    def capacity(self) -> Mapping[tuple[Hashable, Hashable], object]: ...
    @property
    def int_capacity(self) -> Mapping[tuple[Hashable, Hashable], int]: ...


@dataclass(frozen=True)
class Size:
    """The counts of a topology: compute nodes N, all nodes V, directed links E."""

    compute: int
    nodes: int
    links: int
    sinks: int | None = None
    """Max-flows the optimum solves when fewer than one per compute node (one per orbit).
    None: not known yet (before the topology is built and its symmetry looked for):
    :func:`check_size` then needs only one witness to fit, the least any symmetry allows,
    and the optimum checks again with the orbits it found (:func:`check_solvable`)."""

    @property
    def flow_sinks(self) -> int:
        return self.compute if self.sinks is None else self.sinks

    @property
    def build_bytes(self) -> int:
        return BUILD_BYTES_PER_LINK * self.links + BUILD_BYTES_PER_NODE * self.nodes

    @property
    def flow_entries(self) -> int:
        """N flows over E + N arcs: what the optimum keeps as its certificate."""
        return self.flow_sinks * (self.links + self.compute)

    @property
    def solve_bytes(self) -> int:
        return self.build_bytes + FLOW_BYTES_PER_ARC * self.flow_entries

    def solve_seconds(self, exact: bool = False) -> float:
        if exact:
            return (EXACT_SECONDS_PER_NODE_ARC * self.flow_sinks * (self.nodes + 1)
                    * (self.links + self.compute))
        return ORTOOLS_SECONDS_PER_ARC * self.flow_entries

    def describe(self) -> str:
        switches = self.nodes - self.compute
        return (f"{_count(self.compute, 'compute node')}, {_count(switches, 'switch', 'es')}, "
                f"{_count(self.links, 'link')}")


def _count(n: int, word: str, plural: str = "s") -> str:
    shown = str(n) if n < 10**12 else f"about {_scientific(n)}"
    return f"{shown} {word}" + ("" if n == 1 else plural)


def _scientific(n: int) -> str:
    """``"1.2e+12"``: a positive integer to two significant digits, as ``:.2g`` prints
    it, but in exact arithmetic (a count of 10^400 nodes is a message, not an
    OverflowError)."""
    exp = len(str(n)) - 1
    lead = round(Fraction(n, 10 ** (exp - 1)))  # two digits, 10..100
    if lead == 100:
        lead, exp = 10, exp + 1
    digits = str(lead // 10) if lead % 10 == 0 else f"{lead // 10}.{lead % 10}"
    return f"{digits}e+{exp:02d}"


def _bytes(n: int) -> str:
    """``"about 2.6 TB"``, or ``"about 1e+400 bytes"`` beyond a zettabyte (a figure of 390
    digits in petabytes says nothing more)."""
    return f"about {human_bytes(n) if n < 10**21 else _scientific(n) + ' bytes'}"


def human_seconds(s: float) -> str:
    if s < 120:
        return f"{s:.0f} s"
    if s < 7200:
        return f"{s / 60:.0f} minutes"
    if s < 2 * 86400:
        return f"{s / 3600:.0f} hours"
    if s < 2 * 365 * 86400:
        return f"{s / 86400:.0f} days"
    return f"{s / (365 * 86400):.3g} years"


def parse_bytes(text: str) -> int:
    """``"64G"`` → 68719476736; plain digits are bytes. ValueError when unreadable."""
    return certify_parse_bytes(text)


def memory_budget() -> tuple[int, str]:
    """(bytes a solve may plan to use, how that figure was chosen): one budget for the
    whole of collcert, computed by :func:`collcert.certify.model.memory_budget` (the
    checkers read their input within it too)."""
    try:
        return certify_memory_budget()
    except ValueError as exc:
        raise TopologyError(str(exc)) from None


def check_json_memory(text: str, origin: str) -> None:
    """Refuse (TopologyError) a JSON text whose parsed form would not fit in the memory
    budget (:func:`collcert.certify.model.check_json_memory`: 60 MB of ``{},{},…``
    parse to over 1 GB)."""
    try:
        certify_check_json_memory(text, origin)
    except InputError as exc:
        raise TopologyError(str(exc)) from None


def check_budget(what: str, need: int, detail: str, seconds: float | None = None,
                 action: str = "try a smaller input") -> None:
    """Refuse (TopologyError, exit 2) work named ``what`` whose estimate does not fit:
    ``need`` bytes of memory (``detail`` says what takes them) or ``seconds`` of time.
    The shared check behind the size limits of the commands (docs/limits.md)."""
    budget, how = memory_budget()
    if need > budget:
        raise TopologyError(
            f"{what}: {detail} needs {_bytes(need)} of memory, more than the "
            f"{human_bytes(budget)} collcert may use ({how}); {action} (docs/limits.md)")
    if seconds is not None:
        limit = seconds_budget()
        if seconds > limit:
            raise TopologyError(
                f"{what}: {detail} would take about {human_seconds(seconds)}, more than the "
                f"{human_seconds(limit)} collcert starts (set {ENV_SECONDS} to allow longer); "
                f"{action} (docs/limits.md)")
        for listener in list(_LISTENERS):  # the work goes ahead: say what it will take
            listener(what, detail, seconds)


Estimate = Callable[[str, str, float], None]
_LISTENERS: list[Estimate] = []


@contextlib.contextmanager
def estimates_to(listener: Estimate) -> Iterator[None]:
    """Within the ``with`` block, every :func:`check_budget` that lets timed work go ahead
    calls ``listener(what, detail, seconds)`` with its estimate (the CLI prints it on
    stderr before a long export, which was silent for minutes)."""
    _LISTENERS.append(listener)
    try:
        yield
    finally:
        _LISTENERS.remove(listener)


def seconds_budget() -> float:
    env = os.environ.get(ENV_SECONDS)
    if not env:
        return MAX_SECONDS
    try:
        value = float(env)
    except ValueError:
        raise TopologyError(f"{ENV_SECONDS}={env!r} is not a number of seconds") from None
    return value if value > 0 else float("inf")


_PER_NODE: list[bool] = []  # inside without_symmetry(): a witness per compute node


@contextlib.contextmanager
def without_symmetry() -> Iterator[None]:
    """Within the block, :func:`check_size` counts one witness per compute node before a
    topology is built, as the optimum without symmetry will (``--no-symmetry``): a
    200,000-node file was built for 15 s only to be refused for memory afterwards."""
    _PER_NODE.append(True)
    try:
        yield
    finally:
        _PER_NODE.pop()


def check_size(size: Size, what: str, *, solve: bool = False, exact: bool = False) -> None:
    """Refuse ``size`` (named ``what`` in the message) when it cannot be built, or, with
    ``solve``, when its optimum cannot be computed in the memory and time budgets.
    ``exact``: the pure-Python max-flow engine will be used (much slower)."""
    if size.nodes > MAX_NODES or size.links > MAX_LINKS:
        raise TopologyError(
            f"{what}: {size.describe()} is more than collcert builds (at most {MAX_NODES} "
            f"nodes and {MAX_LINKS} links, collcert.reference.model.limits.MAX_NODES / MAX_LINKS; "
            "see docs/limits.md)")
    budget, how = memory_budget()
    # before the symmetry search: one witness at least (one per compute node without it)
    unknown = solve and size.sinks is None and not _PER_NODE
    if unknown:
        size = replace(size, sinks=1)
    need = size.solve_bytes if solve else size.build_bytes
    if need > budget:
        detail = (f"computing its optimum ({_witnesses(size, unknown)}, over "
                  f"{size.links + size.compute} arcs each)" if solve else "building it")
        raise TopologyError(
            f"{what}: {size.describe()}: {detail} needs {_bytes(need)} of memory, "
            f"more than the {human_bytes(budget)} collcert may use ({how}); try a smaller "
            "topology (docs/limits.md)")
    if solve:
        seconds = size.solve_seconds(exact)
        limit = seconds_budget()
        if seconds > limit:
            engine = ("the exact max-flow engine (capacities beyond int64)" if exact
                      else "OR-Tools")
            raise TopologyError(
                f"{what}: {size.describe()}: its optimum ({_witnesses(size, unknown)}) "
                f"would take about {human_seconds(seconds)} with {engine}, more than the "
                f"{human_seconds(limit)} collcert starts (set {ENV_SECONDS} to allow longer; "
                "docs/limits.md)")


def _witnesses(size: Size, unknown: bool) -> str:
    """The max-flow witnesses an optimum keeps, in words."""
    if unknown:
        return ("at least one max-flow witness, one per orbit of the symmetry it may have "
                "(one per compute node without)")
    if size.flow_sinks == size.compute:
        return "one max-flow witness per compute node"
    return (f"one max-flow witness per orbit of its symmetry, "
            f"{_count(size.flow_sinks, 'witness', 'es')}")


def schedule_transfers(doc: Mapping[str, object]) -> int:
    """The transfers an execution plan of the ``collcert-schedule/1`` dict ``doc`` holds,
    from its counts alone, before the plan is built (MSCCL export): every phase's data
    is cut into lcm(k) cells per root, and a tree of multiplicity m moves m·lcm/k of them
    over each of its edges. 0 for a malformed document (its reader says why)."""
    raw = doc.get("phases")
    phases = [p for p in raw if isinstance(p, Mapping)] if isinstance(raw, list) else []
    ks = [p["k"] for p in phases if type(p.get("k")) is int and p["k"] > 0]
    if len(ks) != len(phases) or not ks:
        return 0
    lcm = math.lcm(*ks)
    total = 0
    for phase in phases:
        trees = phase.get("trees")
        for tree in trees if isinstance(trees, list) else []:
            if isinstance(tree, Mapping):
                mult = tree.get("multiplicity", 1)
                edges = tree.get("edges")
                total += ((mult if type(mult) is int else 1) * (lcm // phase["k"])
                          * (len(edges) if isinstance(edges, list) else 0))
    return total


def check_prove_size(topology: Network, fixed_k: int | None = None) -> None:
    """Refuse a Z3 proof (``collcert prove``) whose model cannot be built or answered."""
    n, e = len(topology.nodes), len(topology.capacity)
    if n > MAX_PROVE_NODES or e > MAX_PROVE_LINKS:
        raise TopologyError(
            f"{topology.name or 'the topology'}: {_count(n, 'node')} and {_count(e, 'link')} "
            f"is beyond what Z3 can prove (at most {MAX_PROVE_NODES} nodes and "
            f"{MAX_PROVE_LINKS} links, limits.MAX_PROVE_NODES / MAX_PROVE_LINKS); use "
            "'collcert optimum --certificate' and 'collcert check' for large topologies")
    if fixed_k is not None:
        units = topology.num_compute * fixed_k * e
        if units > MAX_PROVE_TREE_UNITS:
            raise TopologyError(
                f"--fixed-k {fixed_k}: a tree proof with {topology.num_compute} compute nodes "
                f"× {fixed_k} trees × {e} links = {units} 0/1 variables is beyond what Z3 can "
                f"prove (at most {MAX_PROVE_TREE_UNITS}, limits.MAX_PROVE_TREE_UNITS); choose "
                "a smaller k or topology")


def orbits_needed(topology: Network) -> str | None:
    """A note when the optimum of this built topology fits the memory budget only by the
    orbits of a symmetry (one max-flow witness per orbit; one per compute node would
    not), for the CLI to print before the symmetry is looked for; None otherwise."""
    size = Size(topology.num_compute, len(topology.nodes), len(topology.capacity),
                topology.num_compute)
    budget, how = memory_budget()
    if size.solve_bytes <= budget:
        return None
    return (f"{topology.name or 'the topology'}: {size.describe()}: its optimum fits in the "
            f"{human_bytes(budget)} collcert may use ({how}) only by the orbits of a symmetry "
            f"(one max-flow witness per orbit; one per compute node would need "
            f"{_bytes(size.solve_bytes)}); looking for one (refused with its size if none is "
            "found)")


def check_solvable(topology: Network, engine: str = "auto", sinks: int | None = None) -> None:
    """:func:`check_size` for a built topology about to be solved with ``engine``
    (``"auto"`` uses the exact engine when the scaled capacities may pass int64);
    ``sinks``: max-flows needed when fewer than one per compute node (one per orbit)."""
    size = Size(topology.num_compute, len(topology.nodes), len(topology.capacity),
                topology.num_compute if sinks is None else sinks)
    exact = engine == "exact" or (
        engine == "auto"
        and (topology.num_compute + 1) * sum(topology.int_capacity.values()) >= 1 << 61)
    check_size(size, topology.name or "the topology", solve=True, exact=exact)


def read_text(source: str | os.PathLike[str] | BinaryIO, origin: str | None = None, *,
              limit: int = MAX_INPUT_BYTES, what: str = "a JSON topology") -> str:
    """The UTF-8 text of a file path or a binary stream (stdin), read in bounded memory.

    Refuses, with :class:`TopologyError` naming ``origin``: a missing or unreadable
    file, a directory, more than ``limit`` bytes (checked before reading for regular
    files, while reading for devices and pipes such as ``/dev/zero``), NUL bytes (a
    binary file: found in the first megabyte of ``/dev/zero`` or random data) and
    text that is not UTF-8.
    """
    if isinstance(source, str | os.PathLike):
        path = os.fspath(source)
        origin = origin or str(path)
        try:
            if os.path.isdir(path):
                raise TopologyError(f"{origin}: is a directory, not {what}")
            with open(path, "rb") as fh:
                size = os.fstat(fh.fileno()).st_size
                if size > limit and os.path.isfile(path):
                    raise TopologyError(f"{origin}: {human_bytes(size)} is more than the "
                                        f"{human_bytes(limit)} collcert reads (limits.MAX_INPUT_"
                                        "BYTES)")
                return read_text(fh, origin, limit=limit, what=what)
        except TopologyError:
            raise
        except FileNotFoundError:
            raise TopologyError(f"{origin}: no such file") from None
        except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the path
            reason = getattr(exc, "strerror", None) or str(exc)
            raise TopologyError(f"{origin}: cannot read ({reason})") from None
    origin = origin or "stdin"
    chunks: list[bytes] = []
    total = 0
    while True:
        chunk = source.read(min(1 << 20, limit + 1 - total))
        if not chunk:
            break
        nul = chunk.find(b"\0")
        if nul >= 0:
            raise TopologyError(f"{origin}: contains a NUL byte at byte {total + nul}: a "
                                f"binary file, not {what}")
        chunks.append(chunk)
        total += len(chunk)
        if total > limit:
            raise TopologyError(f"{origin}: more than the {human_bytes(limit)} collcert reads "
                                "(limits.MAX_INPUT_BYTES)")
    data = b"".join(chunks)
    try:  # a byte-order mark (Windows editors write one) is not part of the text
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        raise TopologyError(f"{origin}: not UTF-8 text ({exc.reason} at byte {exc.start}): "
                            f"a binary file, not {what}") from None
