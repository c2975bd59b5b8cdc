"""The runtime profiles of MSCCL algorithm XML: who loads a file, and for which calls.

Three runtimes read the files collcert writes (``--format msccl-xml``), each
judged here as its own source says (docs/runtimes.md gives the commits and what
was run of their code):

``msccl-executor-nccl``  Azure/msccl-executor-nccl @ c6f6b36 (the default);
``rccl``                 ROCm/rccl's MSCCL executor @ 0cbce2a (the same reader;
                         at most 64 thread blocks, up to 128 channels; on MSCCL
                         only where the topology enables it or RCCL_MSCCL_FORCE_ENABLE=1);
``microsoft-msccl``      microsoft/msccl @ b23e9cd (2023; NCCL 2.12 with MSCCL).

What happens to a file, as :class:`~.runtimes.Loadability`:

* the executors scan their algorithm folder (``MSCCL_ALGO_DIR``) in name order
  (Azure; RCCL in directory order) and read each file's first element
  (:func:`.msccl_executor.meta`). A file refused there stops the scan
  (``msccl_lifecycle.cc:163-165``; the error is dropped, ``graph/connect.cc:486``):
  later files are never read, and the half-read entry left behind is used
  anyway: with a communicator of its ``ngpus`` ranks ``mscclInit`` indexes a table
  that was never sized (``:174`` not reached, ``:254``: a crash), and with
  ``nchunksperloop`` unread every collective MSCCL intercepts divides by 0 (``:334``).
  Only where neither happens does NCCL quietly run the collective instead
  (*falls-back*: the WARN shows with ``NCCL_DEBUG=WARN`` only, ``debug.cc:35-36``);
* each rank then loads the file (:func:`.msccl_executor.load`); a refusal there
  fails ``ncclCommInitRank`` on that rank (``init.cc:1327``);
* microsoft/msccl loads the files of ``MSCCL_XML_FILES`` on every rank and ignores
  (with a WARN) those it refuses (:mod:`.msccl_2023`): NCCL runs instead, unless
  some ranks load a file that others refuse (then they disagree: a hang);
* a loaded program is selected per call (executors ``msccl_lifecycle.cc:330-345``,
  microsoft/msccl ``tuning.cc:344-376``): reduction sum/prod/max/min, the
  communicator's size, the element count times ``ngpus`` (allgather,
  reduce-scatter, alltoall) a multiple of ``nchunksperloop``, the size in
  ``[minBytes, maxBytes]`` (executors: ``maxBytes="0"`` = no limit) or
  ``[minBytes, maxBytes)`` (microsoft/msccl: ``maxBytes="0"`` selects nothing;
  absent = 128 MiB), in place per ``inplace`` and out of place per
  ``outofplace`` (microsoft/msccl: ``inplace`` alone, exactly). A program no call
  selects is *ignored*.
"""

from __future__ import annotations

from . import msccl_2023, msccl_executor
from .msccl_executor import AZURE, RCCL, SIZED, Limits, Meta
from .msccl_lexer import source_line
from .msccl_loader import Stop, Walk, c_strtol, walk
from .runtimes import (
    FALLS_BACK,
    IGNORES,
    LOADS,
    REFUSES,
    Loadability,
    RuntimeProfile,
    register,
)

SOURCES = {"msccl-executor-nccl": "Azure/msccl-executor-nccl@c6f6b36d1a4c7ae44916fcc5c8e32c95cce2ae54",
           "rccl": "ROCm/rccl@0cbce2a7571c907554199fad7e905f16ec0a565c",
           "microsoft-msccl": "microsoft/msccl@b23e9cd5dd63f82ee1c5aae7e0a2042079be903a"}
_LIFE = {"msccl-executor-nccl": {"scan": "163-165", "resize": "174", "index": "254",
                                 "modulo": "334", "connect": "486", "init": "1327"},
         "rccl": {"scan": "177-185", "resize": "201", "index": "263", "modulo": "333",
                  "connect": "693", "init": "1846"}}
MAX_RANKS_JUDGED = 100_000


def _where(runtime: str, stop: Stop) -> str:
    """The file:line of a rule in ``runtime``'s source."""
    if stop.rule in ("eof", "quote", "value-in-name", "name-too-long", "unterminated-comment",
                     "expecting-lt", "closing-tag", "expected-gt"):
        legacy = runtime == "microsoft-msccl"
        return (f"src/graph/xml.cc:{source_line(stop.rule, True)}" if legacy
                else f"src/misc/msccl/msccl_parser.cc:{source_line(stop.rule, False)}")
    if runtime == "microsoft-msccl":
        if stop.at in msccl_2023.READER_LINES:
            return "src/graph/" + msccl_2023.READER_LINES[stop.at]
        return f"src/graph/topo.cc:{msccl_2023.LINES.get(stop.at, stop.at)}"
    return f"src/misc/msccl/msccl_parser.cc:{stop.at}"


def _stopped(runtime: str, stop: Stop, status: str, consequence: str) -> Loadability:
    return Loadability(runtime, stop.kind if stop.kind != "refuses" else status, stop.rule,
                       stop.line, stop.message, _where(runtime, stop), consequence)


def judge_executor(text: str, runtime: str, lim: Limits) -> Loadability:
    """Azure's (or RCCL's) folder scan, every rank's loader, then the selection."""
    wk = walk(text)
    m = msccl_executor.meta(wk)
    if m.stop is not None:
        status, why = _scan_consequence(runtime, m)
        return _stopped(runtime, m.stop, status, why)
    misread: tuple[int, Stop] | None = None
    for rank in _ranks(wk, int(m.values["ngpus"])):
        stop = msccl_executor.load(wk, rank, lim)
        if stop is not None and stop.kind == "refuses":
            return _stopped(runtime, stop, REFUSES, f"ncclCommInitRank fails on rank {rank} "
                            "(mscclInit returns the loader's error, init.cc:"
                            f"{_LIFE[runtime]['init']})")
        misread = misread or (None if stop is None else (rank, stop))
    if misread is not None:
        return _stopped(runtime, misread[1], REFUSES, f"rank {misread[0]} loads it, but not "
                        "as written")
    return _select(runtime, m.values, exact_inplace=False)


def _scan_consequence(runtime: str, m: Meta) -> tuple[str, str]:
    """What a refusal at the folder scan does next, the file alone in the folder and a
    communicator of its ``ngpus`` ranks (see the module docstring)."""
    life = _LIFE[runtime]
    order = "name" if runtime == "msccl-executor-nccl" else "directory"
    scan = (f"the scan of MSCCL_ALGO_DIR stops at this file (msccl_lifecycle.cc:{life['scan']}, "
            f"its error dropped at graph/connect.cc:{life['connect']}): files after it in "
            f"{order} order are never read")
    if "ngpus" in m.values:
        return REFUSES, (f"a communicator of {m.values['ngpus']} ranks crashes in mscclInit, "
                         "which reads a table the failed scan never sized (msccl_lifecycle.cc:"
                         f"{life['index']}, :{life['resize']}; other sizes run NCCL, "
                         f"silently); {scan}")
    if not m.values.get("nchunksperloop"):
        return REFUSES, ("the first collective MSCCL intercepts divides by its nchunksperloop, "
                         f"left at 0 (msccl_lifecycle.cc:{life['modulo']}: SIGFPE); {scan}")
    return FALLS_BACK, (f"NCCL runs every collective instead, its WARN shown only with "
                        f"NCCL_DEBUG=WARN (debug.cc:35-36); {scan}")


def _ranks(wk: Walk, ngpus: int) -> list[int]:
    """The ranks worth reading: those a <gpu> names, and one that none names."""
    named = sorted({r for g in wk.gpus if 0 <= (r := c_strtol(g.node.attr("id") or ""))
                    < ngpus})
    spare = next((r for r in range(min(ngpus, len(named) + 1)) if r not in set(named)), None)
    return named + ([spare] if spare is not None else [])


def _select(runtime: str, v: dict[str, int | str], exact_inplace: bool) -> Loadability:
    """Which calls select a loaded program (see the module docstring)."""
    chunks, ngpus, coll = int(v["nchunksperloop"]), int(v["ngpus"]), str(v["coll"])
    lo, hi = int(v["minBytes"]), int(v["maxBytes"])
    legacy = runtime == "microsoft-msccl"
    src = "src/graph/tuning.cc:369" if legacy else \
        f"src/misc/msccl/msccl_lifecycle.cc:{_LIFE[runtime]['modulo']}"
    if exact_inplace:
        modes = ["in-place" if v["inplace"] else "out-of-place"]
        empty = hi <= lo
    else:
        modes = [m for m, k in (("in-place", "inplace"), ("out-of-place", "outofplace"))
                 if v[k]]
        lo, hi = lo % 2**64, hi % 2**64  # compared with a size_t (unsigned)
        empty = hi != 0 and lo > hi
    if chunks == 0:
        return Loadability(runtime, REFUSES, "nchunksperloop", 1, "nchunksperloop=0: every "
                           "call MSCCL intercepts computes count % 0", src, "SIGFPE at the "
                           "first collective")
    if not modes or empty or chunks < 0 or ngpus < 1:
        why = ("inplace=\"0\" and outofplace=\"0\"" if not modes else
               f"no size has minBytes={lo} <= size {'<' if legacy else '<='} maxBytes={hi}"
               if empty else f"nchunksperloop={chunks} or ngpus={ngpus} fits no call")
        return Loadability(runtime, IGNORES, "never-selected", 1, why, src,
                           "it loads, but every call runs on NCCL")
    mult = f" × {ngpus}" if coll in SIZED or coll == "reduce_scatter" else ""
    size = ("of any size" if lo == 0 and (hi == 0 or hi >= 2**62) else
            f"of {lo} bytes to below {hi}" if legacy else
            f"of {lo} to {hi} bytes" if hi else f"of {lo} bytes and more")
    calls = [f"{' and '.join(modes)} calls {size}"]
    if chunks > 1:
        calls.append(f"whose element count{mult} is a multiple of {chunks}")
    if coll in ("allreduce", "reducescatter", "reduce_scatter", "reduce"):
        calls.append("reducing with sum, prod, max or min")
    return Loadability(runtime, LOADS, calls=calls,
                       consequence="other calls run on NCCL" + (
                           " (maxBytes absent: 128 MiB)" if legacy and hi == 1 << 27 else ""))


def judge_2023(text: str) -> Loadability:
    """microsoft/msccl: every rank loads the file; the tuner then selects it."""
    runtime = "microsoft-msccl"
    wk = walk(text)
    head = wk.algos[0].node if wk.algos else wk.first
    ngpus = c_strtol(head.attr("ngpus") or "0") if head is not None else 0
    refused: list[int] = []
    values: dict[str, int | str] = {}
    first = misread = None
    for rank in _ranks(wk, max(ngpus, 1)):
        stop, got = msccl_2023.load(wk, rank)
        if stop is None or stop.kind != "refuses":
            values = got
            misread = misread or stop
        else:
            refused.append(rank)
            first = first or stop
    if first is None and misread is not None:
        return _stopped(runtime, misread, REFUSES, "it loads, but not as written")
    if first is None:
        return _select(runtime, values, exact_inplace=True)
    if not values:
        return _stopped(runtime, first, FALLS_BACK, "every rank ignores it (\"failed to "
                        "initialize. Will be ignored.\", topo.cc:1211) and NCCL runs the "
                        "collective; the WARNs show only with NCCL_DEBUG=WARN")
    return _stopped(runtime, first, REFUSES, f"rank(s) {', '.join(map(str, refused[:8]))} "
                    "ignore it and the others load it: ranks that select it wait for steps "
                    "the others never run (a hang)")


EXPORT_EXECUTOR = {"coll": {"reduce-scatter": "reducescatter"}, "min_bytes": "0",
                   "max_bytes": "0", "both_modes": True, "max_dep_tb": 127,
                   "max_offset": 32767, "max_channels": 32}
register(RuntimeProfile(
    "msccl-executor-nccl", "msccl-xml", "the MSCCL executor (Azure/msccl-executor-nccl)",
    SOURCES["msccl-executor-nccl"], lambda text, origin: judge_executor(
        text, "msccl-executor-nccl", AZURE),
    {**EXPORT_EXECUTOR, "max_tbs": AZURE.tbs, "max_steps": AZURE.steps}))
register(RuntimeProfile(
    "rccl", "msccl-xml", "RCCL's MSCCL executor (ROCm/rccl)", SOURCES["rccl"],
    lambda text, origin: judge_executor(text, "rccl", RCCL),
    {**EXPORT_EXECUTOR, "max_tbs": RCCL.tbs, "max_steps": RCCL.steps}))
register(RuntimeProfile(
    "microsoft-msccl", "msccl-xml", "microsoft/msccl (2023, NCCL 2.12 with MSCCL)",
    SOURCES["microsoft-msccl"], lambda text, origin: judge_2023(text),
    {"coll": {"reduce-scatter": "reduce_scatter"}, "min_bytes": "0",
     "max_bytes": str(2**63 - 1), "both_modes": False, "max_dep_tb": 127,
     "max_offset": 32767, "max_channels": 32, "max_tbs": 216, "max_steps": 256}))
