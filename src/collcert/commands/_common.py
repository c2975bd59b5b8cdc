"""Helpers shared by the CLI subcommands: loading topologies, the options and output
every command has the same way (``--json``, ``--progress``, ``-o``), progress bars."""

from __future__ import annotations

import argparse
import inspect
import json
import os
import re
import sys
import time
from fractions import Fraction
from typing import Any, TextIO

from collcert.reference.model import (
    CollcertError,
    NumberError,
    ScheduleError,
    Topology,
    TopologyError,
    check_size,
    orbits_needed,
    output_file,
    parse_number,
    read_text,
)

DEFAULT_TOPOLOGY = "dgx_a100:2"

_SPEC = re.compile(r"^([a-z_0-9]+)(?::(.*))?$")
_FILE_NAME = re.compile(r"/|\\|\.[A-Za-z][A-Za-z0-9]{0,4}$")
"""What names a file rather than a platform: a folder, or an extension (.json, .xml, .gz)."""


def platform_names() -> list[str]:
    from collcert import platforms

    return [n for n in platforms.__all__ if callable(getattr(platforms, n))]


def read_stdin(what: str = "a JSON topology") -> str:
    """Standard input as text, in bounded memory; refuses binary data and endless
    streams with a clear error (see :func:`collcert.reference.model.limits.read_text`)."""
    return read_text(sys.stdin.buffer, "stdin", what=what)


MAX_RANKS_BYTES = 16 * 1024 * 1024


def read_ranks(path: str) -> list[Any]:
    """The entries of a ``--ranks`` file: a JSON array of node ids, or one id per line.

    A missing, unreadable, binary or oversized file is an error (exit 2), never ignored."""
    text = read_text(path, f"--ranks {path}", limit=MAX_RANKS_BYTES,
                     what="a ranks file (one node id per line, or a JSON array)")
    if text.lstrip().startswith("["):
        try:
            items = json.loads(text)
        except json.JSONDecodeError as exc:
            raise TopologyError(f"--ranks {path}: not valid JSON at line {exc.lineno} column "
                                f"{exc.colno}: {exc.msg}") from None
        except (ValueError, RecursionError):
            raise TopologyError(f"--ranks {path}: not readable JSON") from None
        if not isinstance(items, list):
            raise TopologyError(f"--ranks {path}: expected a JSON array of node ids")
    else:
        items = [line.strip() for line in text.splitlines() if line.strip()]
    if not items:
        raise TopologyError(f"--ranks {path}: the file names no node; write one compute node "
                            "id per line, rank 0 first")
    return items


def load_topology(spec: str | None, *, solve: bool = True, strict: bool = True) -> Topology:
    """A topology from a JSON file, stdin (``-``), or a built-in platform spec.

    Platform specs: ``NAME`` or ``NAME:ARG[,ARG...]`` with a builder of
    ``collcert.platforms``, e.g. ``dgx_a100:2``, ``mi250:2,8``, ``ring:8``,
    ``torus:4x4``. ``None`` gives the default, the 2-box DGX A100.

    With ``solve`` (commands that compute an optimum), a topology whose optimum
    cannot fit in this machine's memory is refused before it is built
    (:func:`collcert.reference.model.limits.check_size`). ``strict=False`` reads any
    directed graph from a file (the allreduce rate; see ``Topology``).
    """
    topo = _load_topology(spec, solve=solve, strict=strict)
    note = orbits_needed(topo) if solve else None
    if note is not None:  # said before the symmetry search, which can take a while
        print(f"note: {note}", file=sys.stderr, flush=True)
    return topo


def _load_topology(spec: str | None, *, solve: bool, strict: bool) -> Topology:
    fmt = getattr(spec, "fmt", None)  # --from FORMAT (add_topology_argument)
    spec = DEFAULT_TOPOLOGY if spec is None else str(spec)
    if spec == "-":
        return _from_stdin(fmt, solve=solve, strict=strict)
    m = _SPEC.match(spec)
    names = platform_names()
    is_platform = bool(m) and m.group(1) in names if m else False
    if os.path.exists(spec) or (not is_platform and _FILE_NAME.search(spec)):
        imported = _import(spec, fmt, solve=solve, strict=strict)
        if imported is not None:
            return imported
        return Topology.from_json(spec, solve=solve, strict=strict)
    if fmt is not None:
        raise TopologyError(f"--from {fmt}: {spec[:60]!r} is not a file")
    if not m or not is_platform:
        raise _not_a_topology(spec, names)
    return _build_platform(spec, m.group(1), m.group(2), solve=solve)


ONE_PORT_NAMES = ("fig1", "fig5", "random")
"""The built-in one-port platforms of steady-state broadcast (``collcert broadcast-steady``)."""


def _from_stdin(fmt: str | None, *, solve: bool, strict: bool) -> Topology:
    """The topology piped into the command: JSON, or a format the importers read."""
    text = read_stdin()
    if not text.strip():
        raise TopologyError("stdin is empty: pipe a topology JSON into the command "
                            "(docs/topology.md)")
    imported = _import("-", fmt, text=text, solve=solve, strict=strict)
    if imported is not None:
        return imported
    if text.lstrip()[:1] not in ("{", "["):
        raise TopologyError(f"stdin: not a JSON topology (it starts with "
                            f"{text.lstrip()[:20]!r}); see docs/topology.md")
    return Topology.from_json(text, solve=solve, strict=strict)


def _not_a_topology(spec: str, names: list[str]) -> TopologyError:
    """The error for a TOPOLOGY that is neither a file nor a platform, with a hint."""
    shown = spec if len(spec) <= 60 else spec[:60] + "…"
    hint = ""
    name = spec.split(":", 1)[0]
    if name in ONE_PORT_NAMES:
        hint = (f"; {name} is a one-port platform of steady-state broadcast: "
                f"collcert broadcast-steady {shown} (docs/steady-broadcast.md)")
    else:
        import difflib

        close = difflib.get_close_matches(name[:60], names, n=1)
        if close:
            hint = f"; did you mean {close[0]}?"
    return TopologyError(
        f"{shown!r} is neither a topology file nor a built-in platform; platforms are "
        f"{', '.join(names)} (e.g. dgx_a100:2, mi250:2,8, torus:4x4){hint}"
    )


def _platform_args(name: str, text: str | None) -> list[Any]:
    """The arguments of ``NAME:ARG[,ARG...]``: integers, shapes such as 4x4, or words."""
    args: list[Any] = []
    for part in text.split(",") if text else []:
        if not part.isascii():
            raise TopologyError(f"platform {name}: {part[:40]!r} is not a number written "
                                "with the digits 0-9")
        if "x" in part:
            try:
                args.append(tuple(int(p) for p in part.split("x")))
            except ValueError:
                raise TopologyError(
                    f"platform {name}: {part[:40]!r} is not a shape such as 4x4"
                ) from None
        elif part.lstrip("+-").isdigit() and len(part) > 18:
            raise TopologyError(f"platform {name}: the argument {part[:12]}… "
                                f"({len(part)} digits) is too large")
        else:
            try:
                args.append(int(part))
            except ValueError:
                args.append(part)
    return args


def _build_platform(spec: str, name: str, text: str | None, *, solve: bool) -> Topology:
    """The built-in platform ``name`` of ``collcert.platforms``, its size checked first."""
    from collcert import platforms

    builder = getattr(platforms, name)
    args = _platform_args(name, text)
    try:
        inspect.signature(builder).bind(*args)
    except TypeError as exc:
        raise TopologyError(f"platform {name}: {exc}") from None
    size = platforms.size_of(name, *args)
    if size is not None:  # None: invalid arguments, which the builder reports
        check_size(size, spec, solve=solve)
    try:
        result: Topology = builder(*args)
    except (TopologyError, NumberError) as exc:
        raise TopologyError(f"{spec}: {exc}") from None
    return result


def _import(spec: str, fmt: str | None, *, text: str | None = None, solve: bool,
            strict: bool) -> Topology | None:
    """A topology read by :mod:`collcert.importers` (NCCL XML, nvidia-smi topo -m), or
    None when the file is JSON (read as before). Only regular files are sniffed (a
    pipe is read once); what the file lacks is said on stderr."""
    from collcert import importers

    if fmt is None or fmt == "json":
        if fmt == "json":
            return None
        if text is None:
            if not os.path.isfile(spec):
                return None
            try:
                with open(spec, "rb") as fh:
                    head = fh.read(65536).decode("utf-8", "replace")
            except OSError:
                return None
        else:
            head = text
        if importers.detect_format(head) in (None, "json"):
            return None
    if text is None:
        got = importers.import_topology(spec, fmt, solve=solve, strict=strict)
    else:
        got = importers.import_text(text, "stdin", fmt, solve=solve, strict=strict)
    for line in got.lacks:
        print(f"note: {line}", file=sys.stderr)
    return got.topology


class TopologySpec(str):
    """A TOPOLOGY argument with the format ``--from`` forces (``fmt``)."""

    fmt: str | None = None


class _SpecAction(argparse.Action):
    """Stores TOPOLOGY or --from, and joins them into a :class:`TopologySpec`."""

    def __call__(self, parser: Any, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        setattr(namespace, self.dest, values)
        spec, fmt = getattr(namespace, "topology", None), getattr(namespace, "topology_from",
                                                                 None)
        if spec is not None and fmt is not None:
            joined = TopologySpec(spec)
            joined.fmt = fmt
            namespace.topology = joined


def add_topology_argument(parser: Any, *, optional: bool = True) -> None:
    from collcert.importers import FORMATS

    action = parser.add_argument(
        "topology",
        nargs="?" if optional else None,
        default=None,
        metavar="TOPOLOGY",
        action=_SpecAction,
        help="topology file: collcert JSON (docs/topology.md), NCCL's topology XML or the "
        "output of 'nvidia-smi topo -m' (docs/importing.md); '-' for stdin; or a built-in "
        "platform such as dgx_a100:2, dgx_h100:4, mi250:2, mi250:2,8, dgx1, two_box_example, "
        "ring:8, torus:4x4, fat_tree:4 ('collcert platforms' lists them)"
        + (f" (default: {DEFAULT_TOPOLOGY})" if optional else ""),
    )
    import shtab

    action.complete = shtab.FILE  # shell completion (collcert completion) offers file names
    parser.add_argument("--from", dest="topology_from", choices=FORMATS, action=_SpecAction,
                        metavar="FORMAT",
                        help=f"the topology file's format ({', '.join(FORMATS)}); detected "
                        "from its content when not given. 'collcert import' converts with "
                        "more options (NVLink, NIC speeds, boxes)")


def is_eulerian(topo: Topology) -> bool:
    """Whether every node of ``topo`` sends exactly what it receives (RS+AG, the trees
    and their α-β view need it; the allreduce rates do not)."""
    balance: dict[Any, Fraction] = {}
    for (u, v), c in topo.capacity.items():
        balance[u] = balance.get(u, Fraction(0)) + c
        balance[v] = balance.get(v, Fraction(0)) - c
    return not any(balance.values())


def exact_number(text: str) -> Fraction:
    """argparse ``type=``: an exact number read by the same bounded parser as topology
    capacities (:func:`collcert.reference.model.exact.parse_number`): NaN, infinities and
    absurd sizes are refused at once, with the CLI's exit 2."""
    try:
        return parse_number(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def positive_number(text: str) -> Fraction:
    """argparse ``type=``: an exact number > 0 (see :func:`exact_number`)."""
    value = exact_number(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not positive")
    return value


def seconds(text: str) -> float:
    """argparse ``type=``: a time limit in seconds, finite and positive (at most a year)."""
    value = positive_number(text)
    if value > 365 * 86400:
        raise argparse.ArgumentTypeError(f"{text} seconds is more than a year")
    return float(value)


def bounded_int(least: int, most: int) -> Any:
    """argparse ``type=``: an integer in [least, most]; the message names both bounds."""
    def parse(text: str) -> int:
        t = text.strip()
        if not t.lstrip("+-").isdigit() or not t.isascii() or len(t) > 30:
            raise argparse.ArgumentTypeError(f"{t[:30]!r} is not an integer between {least} "
                                             f"and {most}")
        value = int(t)
        if not least <= value <= most:
            raise argparse.ArgumentTypeError(f"{value} is not between {least} and {most}")
        return value

    parse.__name__ = "integer"
    return parse


def count(n: int, word: str, plural: str | None = None) -> str:
    """``"1 switch"``, ``"3 switches"``: a number with its noun in the right form."""
    return f"{n} {word if n == 1 else plural or word + 's'}"


def print_json(obj: Any, stream: TextIO | None = None) -> None:
    json.dump(obj, stream or sys.stdout, indent=2)
    (stream or sys.stdout).write("\n")


def print_result(args: argparse.Namespace, result: Any) -> None:
    """A result with ``to_json()`` and ``summary()``: one JSON object with ``--json``,
    else its summary."""
    if args.json:
        print_json(result.to_json())
    else:
        print(result.summary())


def add_json_option(parser: Any, detail: str = "") -> None:
    """``--json``: print one JSON object instead of text (``detail`` ends its help)."""
    parser.add_argument("--json", action="store_true", help="print one JSON object" + detail)


def add_progress_option(parser: Any, what: str = "show a progress bar") -> None:
    """``--progress``: show :class:`Progress` bars when stderr is not a terminal too."""
    parser.add_argument("--progress", action="store_true",
                        help=f"{what} even when stderr is not a terminal")


OUTPUT_OPTIONS = {"output": "-o", "plot": "--plot", "figure2": "--figure2"}
"""The options (namespace attribute: option) of any command that name a file it writes."""

_INPUTS: dict[tuple[int, int], tuple[str, str]] = {}
"""(st_dev, st_ino) of every file the current command reads: :func:`write_output`
refuses to write onto one (filled by :func:`refuse_outputs_onto_inputs`)."""


def _file_names(value: Any) -> list[str]:
    if isinstance(value, str | os.PathLike):
        return [os.fspath(value)]
    if isinstance(value, list | tuple):
        return [os.fspath(v) for v in value if isinstance(v, str | os.PathLike)]
    return []


def _identity(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)  # follows symbolic links: a link is its target
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino)


def refuse_outputs_onto_inputs(args: argparse.Namespace) -> None:
    """Refuse (exit 2), before any work, a command line whose output file (``-o``,
    ``--plot``, ``--figure2``) is one of its input files (the topology, the schedule,
    ``--ranks``, ``--check FILE``, ...), also through a symbolic or hard link (same
    device and inode), an output named twice, or an empty output name. Every
    argument that names an existing file counts as an input. ``collcert.cli`` calls
    this for every command before it runs."""
    outputs: list[tuple[str, str, str | os.PathLike[str]]] = [
        (dest, opt, v) for dest, opt in OUTPUT_OPTIONS.items()
        if isinstance(v := getattr(args, dest, None), str | os.PathLike)]
    for _, opt, value in outputs:
        if not os.fspath(value).strip():
            raise CollcertError(f"{opt} {os.fspath(value)!r}: an empty file name; name the "
                                "file to write")
    _INPUTS.clear()
    for dest, value in vars(args).items():
        if dest in OUTPUT_OPTIONS or dest == "func":
            continue
        for name in _file_names(value):
            if name != "-" and os.path.isfile(name):
                ident = _identity(name)
                if ident is not None:
                    _INPUTS.setdefault(ident, (name, _input_label(dest)))
    seen: dict[tuple[int, int] | str, str] = {}
    for _, opt, value in outputs:
        path = os.fspath(value)
        if path == "-":
            continue
        _refuse_input(path, opt)
        key = _identity(path) or os.path.abspath(path)
        if key in seen:
            raise CollcertError(f"{opt} {path}: the same file as {seen[key]}; name two "
                                "different files")
        seen[key] = f"{opt} {path}"


def _refuse_input(path: str, opt: str) -> None:
    """CollcertError when ``path`` is (or links to) a file the command reads."""
    ident = _identity(path)
    if ident is None or ident not in _INPUTS:
        return
    source, label = _INPUTS[ident]
    same = ("" if os.path.abspath(source) == os.path.abspath(path)
            else f" {source}, the same file through a link")
    raise CollcertError(f"{opt} {path}: this file is the command's input {label}{same}; "
                        "writing the output there would overwrite it. Name another output "
                        "file")


_POSITIONAL = ("topology", "schedule", "certificate", "file")


def _input_label(dest: str) -> str:
    """How the command line names the argument ``dest``: TOPOLOGY, --ranks."""
    return dest.upper() if dest in _POSITIONAL else "--" + dest.replace("_", "-")


def write_output(path: str, text: str, *, dash_is_stdout: bool = False,
                 option: str = "-o") -> None:
    """Write a command's output file (``-o``); one that cannot be written is bad input,
    and so is one of the command's input files (checked again here, at write time).
    ``dash_is_stdout``: the command documents ``-o -`` as standard output."""
    if dash_is_stdout and path == "-":
        sys.stdout.write(text)
        return
    if not path.strip():
        raise CollcertError(f"{option} {path!r}: an empty file name; name the file to write")
    _refuse_input(path, option)
    try:
        with output_file(path) as fh:  # all or nothing: the old file stays until then
            fh.write(text)
    except OSError as exc:
        raise ScheduleError(f"cannot write {path}: {exc.strerror}") from None


ESTIMATE_SHOWN_FROM = 5.0
"""Seconds of estimated work from which :func:`announce_estimates` prints the estimate."""


def announce_estimates(command: str, force: bool = False) -> Any:
    """A context in which every estimate a size check lets go ahead
    (:func:`collcert.reference.model.check_budget` with ``seconds``) of at least
    :data:`ESTIMATE_SHOWN_FROM` (any, with ``force``: --progress) is printed on stderr
    before the work starts, once per kind of work (issue 33 row 5: an MSCCL++ export
    estimated at 72 s ran 3.5 min without a word)."""
    from collcert.reference.model import estimates_to

    said: set[str] = set()

    def say(what: str, detail: str, seconds: float) -> None:
        if what in said or (seconds < ESTIMATE_SHOWN_FROM and not force):
            return
        said.add(what)
        print(f"collcert {command}: {what}: {detail}, estimated "
              f"{duration_text(seconds)} from its size (docs/limits.md)", file=sys.stderr,
              flush=True)

    return estimates_to(say)


def stage_lines(args: argparse.Namespace) -> Any:
    """``say(text)``: a stage line ``[  12.3s] text`` on stderr, from the command's start,
    with ``--progress`` or when stderr is a terminal; None otherwise (compare, measured)."""
    import time

    if not (args.progress or sys.stderr.isatty()):
        return None
    t0 = time.perf_counter()

    def say(text: str) -> None:
        print(f"[{time.perf_counter() - t0:6.1f}s] {text}", file=sys.stderr, flush=True)

    return say


def duration_text(seconds: float) -> str:
    """``"about 20 s"``, ``"about 4 min"``, ``"about 1.5 h"``: an estimate in words."""
    if seconds < 90:
        return f"about {max(1, round(seconds))} s"
    if seconds < 5400:
        return f"about {round(seconds / 60)} min"
    return f"about {seconds / 3600:.1f} h"


class Progress:
    """A small progress bar on stderr (shown only when stderr is a terminal,
    or always with ``force=True``). Call it as ``progress(done, total)``."""

    def __init__(self, label: str, *, force: bool = False, stream: TextIO | None = None) -> None:
        self.label = label
        self.stream = stream or sys.stderr
        self.enabled = force or self.stream.isatty()
        self.start = time.monotonic()
        self._last = 0.0

    def __call__(self, done: int, total: int, note: str = "") -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if done < total and now - self._last < 0.1:
            return
        self._last = now
        width = 30
        filled = int(width * done / total) if total else width
        elapsed = now - self.start
        eta = elapsed / done * (total - done) if done else 0.0
        bar = "#" * filled + "-" * (width - filled)
        self.stream.write(
            f"\r{self.label} [{bar}] {done}/{total} {elapsed:5.1f}s"
            + (f" (~{eta:.0f}s left)" if done < total else "")
            + (f" {note}" if note else "")
            + "\033[K"
        )
        if done >= total:
            self.stream.write("\n")
        self.stream.flush()
