"""What microsoft/msccl (2023) reads from a program: ``src/graph/topo.cc:759-1193``.

microsoft/msccl is NCCL 2.12 with MSCCL inside. It loads the files named in
``MSCCL_XML_FILES`` (colon-separated, at most ``MSCCL_MAX_NUM_ALGOS`` = 4) or in
an ``MSCCL_CONFIG`` file (``init.cc:786-789``), each on every rank with
``mscclGetAlgoFromXMLAndSetAlgo``; a file it refuses is "failed to initialize.
Will be ignored." (``topo.cc:1211``) and the others still load. Its reader
differs from the executors' (:mod:`.msccl_executor`):

* ``<algo>`` needs ``name`` (kept to 63 characters), ``ngpus`` equal to the
  communicator's size (:776), ``nchunksperloop``, ``nchannels``, ``proto``, ``coll``
  among ``allreduce``, ``allgather``, ``reduce``, ``broadcast``, ``alltoall``,
  ``reduce_scatter`` (not ``reducescatter``), ``custom`` (:826-845) and ``inplace``;
  ``minBytes`` (default 0) and ``maxBytes`` (default 2**27 = 128 MiB) are optional,
  must satisfy 0 ≤ minBytes ≤ maxBytes (:807-818); ``nthreads``, optional, a multiple
  of 32; ``outofplace`` is not read;
* a ``<gpu>``'s ``i_chunks`` and ``o_chunks``, when not 0, are the collective's own
  shares of ``nchunksperloop`` (:886: allgather input × ngpus, reduce-scatter
  output × ngpus, the others equal);
* thread blocks up to 216, steps up to 256 (``include/msccl.h:6-8``), peers below
  ``ngpus`` (:929), step type ``ra`` besides the executors' nine.

The thread block and step checks are otherwise the executors' (shared with
:mod:`.msccl_executor`, at this file's lines: :data:`LINES`).
"""

from __future__ import annotations

from .msccl_executor import MSCCL_2023, Ctx, Refuse, attr, gpus, text_attr
from .msccl_lexer import Node
from .msccl_loader import Stop, Walk, first_refusal

COLLS = ("allreduce", "allgather", "reduce", "broadcast", "alltoall", "reduce_scatter",
         "custom")
DEFAULT_MAX_BYTES = 1 << 27  # topo.cc:805
# the executors' msccl_parser.cc line -> topo.cc line of the same check (or xml.cc for the
# reader's own: the tokenizer's lines are 2 further down, msccl_lexer.source_line)
LINES = {"399": "877", "401": "879", "402": "880", "403": "881", "405": "883", "413": "895",
         "414": "896", "415": "897", "416": "898", "418": "900", "422": "904", "426": "908",
         "432": "914", "438": "920", "449": "936", "450": "937", "472": "959", "474": "961",
         "475": "962", "476": "963", "477": "964", "479": "966", "480": "967", "481": "968",
         "482": "969", "483": "970", "485": "972", "486": "973", "490": "977", "541": "1028",
         "546": "1033", "264": "719", "578": "1066", "586": "1073", "590": "1077",
         "599": "1087", "603": "1091", "273": "728", "278": "733", "283": "738",
         "571": "1059", "617": "1106", "648": "1137", "690": "1179"}
READER_LINES = {"170": "xml.cc:172", "178": "xml.cc:180", "187": "xml.cc:189",
                "195": "xml.cc:197", "212": "xml.cc:851", "226": "xml.cc:865"}


_WORDS = (("recvPeer", "recvpeer"), ("sendPeer", "sendpeer"),
          ("hasDependence", "has_dependence"), ("dependencies", "dependences"))


def _wording(stop: Stop | None) -> Stop | None:
    """The executors' message in microsoft/msccl's words (it spells some differently)."""
    if stop is None or stop.at not in LINES:
        return stop
    msg = stop.message.replace("thread block", "threadblock").replace(
        "threadblocks are requested", "thread blocks are requested").replace(
        "duplicate threadblock", "duplicate thread block")
    for a, b in _WORDS:
        msg = msg.replace(a, b)
    return Stop(stop.rule, stop.line, msg, stop.at, stop.kind)


def load(wk: Walk, rank: int) -> tuple[Stop | None, dict[str, int | str]]:
    """``rank``'s reading of the file, in a communicator of ``ngpus`` ranks: its first
    refusal or misreading (None: loaded), and the ``<algo>`` values the tuner uses."""
    stop, ub = first_refusal(wk, rank)
    if stop is not None:
        return stop, {}
    if not wk.algos:
        return Stop("no-algo", 1, "no <algo> element: the loader reads the attributes of a "
                    "null node (topo.cc:769-771)", "769", "misreads"), {}
    algo = wk.algos[0]
    try:
        values = _algo(algo.node)
        ctx = Ctx(MSCCL_2023, int(values["ngpus"]), str(values["coll"]),
                  int(values["nchunksperloop"]))
        gpus(algo, rank, ctx)
    except Refuse as r:
        return _wording(r.stop), {}
    return _wording(ub or ctx.misread), values


def _algo(top: Node) -> dict[str, int | str]:
    """The ``<algo>`` attributes in the order topo.cc reads them (:770-864)."""
    out: dict[str, int | str] = {"name": text_attr(top, "name", 771)}
    out["ngpus"] = attr(top, "ngpus", 775)
    out["nchunksperloop"] = attr(top, "nchunksperloop", 782)
    out["nchannels"] = attr(top, "nchannels", 784)
    proto = text_attr(top, "proto", 787)
    if proto not in ("Simple", "LL128", "LL"):
        raise Refuse(Stop("proto", top.line, f"MSCCL: protocol {proto} is not supported.",
                          "753"))
    lo = attr(top, "minBytes", 794, 64) if top.attr("minBytes") is not None else 0
    hi = (attr(top, "maxBytes", 803, 64) if top.attr("maxBytes") is not None
          else DEFAULT_MAX_BYTES)
    for bad, msg, at in ((lo > hi, "minBytes cannot be greater than maxBytes", "808"),
                         (lo < 0, "minBytes cannot be negative", "812"),
                         (hi < 0, "maxBytes cannot be negative", "816")):
        if bad:
            raise Refuse(Stop("bytes", top.line, f"MSCCL: {msg}.", at))
    out["minBytes"], out["maxBytes"] = lo, hi
    coll = text_attr(top, "coll", 823)
    if coll not in COLLS:
        hint = " (microsoft/msccl spells it reduce_scatter)" if coll == "reducescatter" else ""
        raise Refuse(Stop("coll", top.line, f"MSCCL: collective type {coll} is not "
                          f"supported.{hint}", "843"))
    out["coll"] = coll
    out["inplace"] = attr(top, "inplace", 848)
    if top.attr("nthreads") is not None and attr(top, "nthreads", 858) % 32:
        raise Refuse(Stop("nthreads", top.line, "MSCCL nthreads must be a multiplication of 32",
                          "860"))
    return out
