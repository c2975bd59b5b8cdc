"""How the MSCCL runtimes walk the tokens of a file, rank by rank, and what they keep.

Every rank reads the whole file with ``mscclXmlLoadSub`` (Azure's
``msccl_parser.cc:166-254``; microsoft/msccl's ``xml.cc:168-211, 846-893``): a
handler per element name, ``algo`` at the top, ``gpu`` in it, and, only in the
``<gpu>`` whose ``id`` is the reading rank, ``tb`` and in a ``tb`` ``step``.
Handled elements are *kept*: counted against ``MAX_NODES`` (4096: the count is
checked before every token, so the 4096th kept element already fails, :169) and
listed as children of their parent (``MAX_SUBS`` = 1024, not checked: more
overrun the array). Other elements are skipped with their subtree; a
``<step>`` of the reading rank must have no child element (its handler list is
``NULL`` with a count of 1, :212: the runtime reads a null pointer). Every
``<gpu>`` must have an ``id`` (:226).

:func:`walk` does that once for all ranks and returns a :class:`Walk`: the kept
tree (every ``gpu``'s tbs and steps, as its own rank keeps them), and what
stops which rank where. :func:`first_refusal` gives a rank's first stop and the first
undefined behaviour it reads through.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .msccl_lexer import CLOSE, MAX_NODES, MAX_SUBS, SINGLE, LexError, Node, tokens

_INT = re.compile(r"[ \t\n\v\f\r]*([+-]?)(?:0[xX]([0-9a-fA-F]+)|(0[0-7]*)|([1-9][0-9]*))?")


def c_strtol(text: str, bits: int = 32) -> int:
    """C's ``strtol(text, NULL, 0)`` (hex ``0x…``, octal ``0…``, clamped to 64 bits), then
    stored in a ``bits``-bit signed integer as GCC stores it (modulo 2**bits)."""
    m = _INT.match(text)
    assert m is not None
    sign, hexa, octal, dec = m.groups()
    value = int(hexa, 16) if hexa else int(octal, 8) if octal else int(dec) if dec else 0
    value = -value if sign == "-" else value
    value = max(-(2**63), min(2**63 - 1, value))
    half = 2 ** (bits - 1)
    return int((value + half) % (2 * half) - half)


@dataclass
class Elem:
    """A kept element and its kept children."""

    node: Node
    index: int  # of its token
    children: list[Elem] = field(default_factory=list)

    @property
    def line(self) -> int:
        return self.node.line


@dataclass
class Stop:
    """Why a rank's reader stops: ``rule``, ``line``, the runtime's message, and where the
    source says it (``at``: a line number in the parser, or a note)."""

    rule: str
    line: int
    message: str
    at: str = ""
    kind: str = "refuses"  # or "misreads": undefined behaviour, not an error the runtime sees


@dataclass
class Walk:
    """The kept tree and what stops the readers (see the module docstring)."""

    algos: list[Elem]  # kept <algo> elements, in order (the loader uses the first)
    gpus: list[Elem]  # every <gpu> of those algos, its tbs and steps as its rank keeps them
    common: list[int]  # token indices of elements every rank keeps (algo, gpu)
    own: dict[int, list[int]]  # id(gpu Elem) -> token indices of the tbs and steps it keeps
    error: Stop | None  # the first stop every rank meets (lexical, structural)
    error_at: int  # its token index (len(tokens) when none)
    crash: dict[int, tuple[int, Stop]]  # id(gpu Elem) -> (token index, a step with a child)
    first: Node | None  # the first token (the folder scan's meta loader reads only it)
    first_error: LexError | None  # a lexical error before the first token was complete
    tokens: list[Node] = field(default_factory=list)
    long_value: tuple[int, Stop] | None = None  # the first value overrunning its buffer


class _Walker:
    def __init__(self, toks: list[Node], lex: LexError | None) -> None:
        self.toks, self.lex, self.i = toks, lex, 0
        self.common: list[int] = []
        self.own: dict[int, list[int]] = {}
        self.crash: dict[int, tuple[int, Stop]] = {}
        self.algos: list[Elem] = []
        self.gpus: list[Elem] = []

    def next(self) -> Node | None:
        if self.i < len(self.toks):
            self.i += 1
            return self.toks[self.i - 1]
        if self.lex is not None:
            raise _Fail(Stop(self.lex.rule, self.lex.line, self.lex.message, self.lex.at))
        return None

    def sub(self, head: Elem | None, level: str, gpu: Elem | None = None) -> None:
        """mscclXmlLoadSub under ``head``; ``level`` names the handler set ("top",
        "algo", "gpu", "tb", "step", or "skip": none). A skipped element is read into the
        slot its own children are then read into (``xml->nodes + xml->maxIndex``, :173,
        not advanced for it): any closing tag ends it, the names are compared with
        themselves (:186). Kept elements have their own slot: their closing tag must
        match; inside the reading rank's tbs and steps that holds for that rank only."""
        if head is not None and head.node.kind == SINGLE:
            return
        while True:
            tok = self.next()
            if tok is None:
                if head is not None:
                    name = head.node.name if level in ("top", "algo", "gpu") else ""
                    raise _Fail(Stop("unterminated", self.toks[-1].line if self.toks else 1,
                                     f"XML Parse : unterminated {name}", "178"))
                return
            if head is not None and tok.kind == CLOSE:
                if level != "skip" and tok.name != head.node.name:
                    stop = Stop("mismatch", tok.line, f"XML Mismatch : {head.node.name} / "
                                f"{tok.name}", "187")
                    if level not in ("tb", "step") or gpu is None:
                        raise _Fail(stop)
                    self.crash.setdefault(id(gpu), (self.i - 1, stop))
                return
            self.handle(head, tok, level, gpu)

    def handle(self, head: Elem | None, tok: Node, level: str, gpu: Elem | None) -> None:
        child = {"top": "algo", "algo": "gpu", "gpu": "tb", "tb": "step"}.get(level)
        if level == "step":  # handlers NULL, nHandlers 1: strcmp(name, NULL->name)
            if gpu is not None and id(gpu) not in self.crash:
                self.crash[id(gpu)] = (self.i - 1, Stop(
                    "step-child", tok.line, f"<{tok.name}> inside a <step>: the reader "
                    "compares its name with a null handler (msccl_parser.cc:193-194, :212), "
                    "undefined behaviour", "212", "misreads"))
            self.sub(Elem(tok, self.i - 1), "skip")
            return
        if tok.name != child:
            self.sub(Elem(tok, self.i - 1), "skip")
            return
        elem = Elem(tok, self.i - 1)
        if head is not None:
            head.children.append(elem)
        if level in ("top", "algo"):
            self.common.append(self.i - 1)
        elif gpu is not None:
            self.own.setdefault(id(gpu), []).append(self.i - 1)
        if level == "top":
            self.algos.append(elem)
            self.sub(elem, "algo")
        elif level == "algo":
            if tok.attr("id") is None:
                raise _Fail(Stop("attr-id", tok.line, "Attribute id of node gpu not found",
                                 "226"))
            self.gpus.append(elem)
            self.sub(elem, "gpu", elem)
        else:
            self.sub(elem, "tb" if level == "gpu" else "step", gpu)


class _Fail(Exception):
    def __init__(self, stop: Stop) -> None:
        super().__init__(stop.message)
        self.stop = stop


def walk(text: str) -> Walk:
    """Tokens of ``text`` walked as every rank walks them (see the module docstring)."""
    toks, lex = tokens(text)
    w = _Walker(toks, lex)
    error: Stop | None = None
    try:
        w.sub(None, "top")
    except _Fail as fail:
        error = fail.stop
    first_error = lex if lex is not None and not toks else None
    wk = Walk(w.algos, w.gpus, w.common, w.own, error, w.i, w.crash,
              toks[0] if toks else None, first_error, toks)
    at = next((i for i, t in enumerate(toks[:w.i]) if t.long_value), None)
    if at is not None:
        t = toks[at]
        wk.long_value = (at, Stop("value-too-long", t.line, f"the value of {t.long_value}= is "
                                  "longer than 255 characters: the reader copies it into 256 "
                                  "bytes without a bound (msccl_parser.cc:44-49), undefined "
                                  "behaviour", "44", "misreads"))
    return wk


def first_refusal(wk: Walk, rank: int) -> tuple[Stop | None, Stop | None]:
    """The first thing that stops ``rank``'s reader, in file order (the walk's error, a
    mismatched tag or a child of a step in its own ``<gpu>``: a crash, its 4096th kept
    element), and the first undefined behaviour it reads through (a value overrunning its
    buffer, more kept children than the array holds)."""
    mine = [g for g in wk.gpus if c_strtol(g.node.attr("id") or "") == rank]
    stops: list[tuple[int, Stop]] = []
    if wk.error is not None:
        stops.append((wk.error_at, wk.error))
    for g in mine:
        if id(g) in wk.crash:
            stops.append(wk.crash[id(g)])
    own = sum(len(wk.own.get(id(g), [])) for g in mine)
    if len(wk.common) + own >= MAX_NODES:
        kept = sorted(wk.common + [i for g in mine for i in wk.own.get(id(g), [])])
        i = kept[MAX_NODES - 1]
        stops.append((i, Stop("node-limit", wk.tokens[i].line, f"Error : XML parser is "
                              f"limited to 1024 nodes (this rank keeps {len(kept)} elements: "
                              f"<algo>, every <gpu>, its own <tb> and <step>; the limit is "
                              f"MAX_NODES = {MAX_NODES}, the 4096th already fails)", "170")))
    over = _subs_overflow(wk, mine)
    if over is not None:
        stops.append(over)
    if wk.long_value is not None:
        stops.append(wk.long_value)
    # a refusal or a step's child (the reader crashes there) stops it; the others it reads
    # through
    stopping = sorted((s for s in stops if s[1].kind == "refuses" or s[1].rule == "step-child"),
                      key=lambda s: s[0])
    others = sorted((s for s in stops if s not in stopping), key=lambda s: s[0])
    return (stopping[0][1] if stopping else None), (others[0][1] if others else None)


def _subs_overflow(wk: Walk, mine: list[Elem]) -> tuple[int, Stop] | None:
    """An element kept with more than MAX_SUBS kept children overruns its array."""
    heads = wk.algos[:1] + mine + [tb for g in mine for tb in g.children]
    for h in heads:
        if len(h.children) > MAX_SUBS:
            extra = h.children[MAX_SUBS]
            return (extra.index, Stop(
                "subs-overflow", extra.line, f"<{h.node.name}> (line {h.line}) keeps "
                f"{len(h.children)} children; the reader's array holds {MAX_SUBS} and is "
                "not bounds-checked (msccl_parser.h:21, msccl_parser.cc:195): undefined "
                "behaviour", "195", "misreads"))
    return None
