"""The MSCCL runtimes' own XML reader, rule for rule: what it accepts, where it stops.

The MSCCL executors do not use an XML library. Azure/msccl-executor-nccl and
ROCm/rccl (``src/misc/msccl/msccl_parser.cc``) and microsoft/msccl
(``src/graph/xml.cc``) share one hand-written tokenizer, ported from NCCL's
topology reader. Read at the commits docs/runtimes.md names, its rules are
(Azure's line numbers; microsoft/msccl's are 2 further down):

* between elements only ``' '``, ``'\\n'`` and ``'\\r'`` are skipped; anything
  else, a tab included, is "expecting '<', got …" (:111);
* after ``<`` a name is read up to ``' '``, ``'>'``, ``'/'``, ``'\\n'`` or
  ``'\\r'``; a name of 254 characters or more is "name too long" (:71); ``=`` in a
  name is "Unexpected value with name" (:63). ``<?xml …?>`` is therefore an
  element named ``?xml`` whose attributes end at ``?``: "expected >, got '?'"
  (:153);
* ``<!--`` starts a comment that runs to ``-->`` (:83-101);
* attributes follow while the character after the previous one is a single
  ``' '``: a newline or tab between attributes, or around ``=``, stops the element
  with "expected >, got …"; two spaces give an attribute with an empty name;
* a value starts with ``"`` or ``'`` (else "Expected (double) quote.", :40) and
  runs to the next ``"``, whatever opened it (:44-49); it is copied into 256 bytes
  with no bound (longer values overrun the buffer: undefined behaviour);
* at most 16 attributes are kept per element (``MAX_ATTR_COUNT``); later ones
  overwrite the 17th slot and are never looked up (:141-146);
* ``/>`` closes an element (``/`` then ``>`` with nothing between); ``</name>``
  must match the open element ("XML Mismatch", :187) and end right after the
  name ("unexpected trailing", :129); text ends early: "Unexpected EOF" (:20)
  or "unterminated" (:178).

:func:`tokens` reads the whole text into :class:`Node` tokens with their line,
and stops at the first lexical error (:class:`LexError`). Nothing here is
MSCCL-specific beyond that; :mod:`.msccl_loader` walks the tokens as each
runtime's loader does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

OPEN, CLOSE, SINGLE = 1, 2, 3
MAX_STR_LEN = 255  # msccl_parser.h:19 / xml.h:16
MAX_ATTR_COUNT = 16  # msccl_parser.h:20
MAX_SUBS = 1024  # msccl_parser.h:21: children kept per element, not bounds-checked
MAX_NODES = 4096  # msccl_parser.h:22 (xml.h: 1<<12)

_NAME = re.compile(r"[^ >/\n\r=]*")
_SPACE = re.compile(r"[ \n\r]*")
# the common case, an element written the way every tool writes it
_FAST = re.compile(r'<([^ >/\n\r="!][^ >/\n\r="]{0,252})((?: [^ >/\n\r="]{1,253}="[^"]{0,255}")*)(/?)>')
_FAST_ATTR = re.compile(r' ([^ >/\n\r="]+)="([^"]*)"')
_FAST_CLOSE = re.compile(r"</([^ >/\n\r=]{1,253})>")


@dataclass
class Node:
    """One token: an element's start (OPEN or SINGLE, with its attributes) or end (CLOSE)."""

    name: str
    kind: int
    line: int
    attrs: list[tuple[str, str]] = field(default_factory=list)  # the first 16, in order
    dropped: int = 0  # attributes past the 16th: read, never looked up
    long_value: str = ""  # the name of an attribute whose value overruns 256 bytes

    def attr(self, key: str) -> str | None:
        """The value the runtime finds for ``key``: the first attribute so named."""
        return next((v for k, v in self.attrs if k == key), None)


@dataclass
class LexError:
    """Where and why the tokenizer stops: ``rule``, the 1-based ``line``, the runtime's
    message, and ``at``, the line of the tokenizer's source that says it (Azure's
    numbering, see :data:`SOURCE_LINES`)."""

    rule: str
    line: int
    message: str

    @property
    def at(self) -> str:
        return SOURCE_LINES[self.rule]


# rule -> line of src/misc/msccl/msccl_parser.cc (Azure, RCCL); microsoft/msccl's
# src/graph/xml.cc has each 2 lines further down (msccl_lexer.source_line)
SOURCE_LINES = {"eof": "20", "quote": "40", "value-in-name": "63", "name-too-long": "71",
                "unterminated-comment": "96", "expecting-lt": "111", "closing-tag": "129",
                "expected-gt": "153", "unterminated": "178", "mismatch": "187"}


def source_line(rule: str, xml_cc: bool) -> str:
    """The line of ``rule`` in msccl_parser.cc, or in microsoft/msccl's xml.cc."""
    line = int(SOURCE_LINES[rule])
    return str(line + 2 if xml_cc else line)


class _Stop(Exception):
    def __init__(self, rule: str, pos: int, message: str) -> None:
        super().__init__(message)
        self.rule, self.pos, self.message = rule, pos, message


def tokens(text: str) -> tuple[list[Node], LexError | None]:
    """Every token of ``text`` as the runtimes' tokenizer reads it, and the error it stops
    at (None: it reached the end of the text)."""
    starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def line(pos: int) -> int:
        lo, hi = 0, len(starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if starts[mid] <= pos:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1

    out: list[Node] = []
    pos, n = 0, len(text)
    try:
        while True:
            pos = _SPACE.match(text, pos).end()  # type: ignore[union-attr]
            if pos >= n:
                return out, None
            node, pos = _fast(text, pos, line) or _slow(text, pos, line)
            if node is not None:
                out.append(node)
    except _Stop as stop:
        return out, LexError(stop.rule, line(min(stop.pos, n)), stop.message)


def _fast(text: str, pos: int, line: object) -> tuple[Node | None, int] | None:
    """A well-formed element in one regular expression; None: read it character by
    character instead (:func:`_slow` decides every case the pattern leaves out)."""
    assert callable(line)
    m = _FAST_CLOSE.match(text, pos)
    if m:
        return Node(m.group(1), CLOSE, line(pos)), m.end()
    m = _FAST.match(text, pos)
    if not m:
        return None
    attrs = _FAST_ATTR.findall(m.group(2))
    if len(attrs) > MAX_ATTR_COUNT:
        return None
    return Node(m.group(1), SINGLE if m.group(3) else OPEN, line(pos), attrs), m.end()


def _char(text: str, pos: int) -> str:
    if pos >= len(text):
        raise _Stop("eof", pos, "XML Parse : Unexpected EOF")
    return text[pos]


def _token(text: str, pos: int, want_value: bool) -> tuple[str, str | None, str, int]:
    """mscclXmlGetToken: (name, value or None, the character after, next position)."""
    m = _NAME.match(text, pos)
    end = m.end() if m else pos
    run = end - pos
    if run >= MAX_STR_LEN:  # the 255th character is stored at index 254: too long
        raise _Stop("name-too-long", pos, f"Error : name {text[pos:pos + 254]} too long "
                    f"(max {MAX_STR_LEN})")
    c = _char(text, end)
    name = text[pos:end]
    if c == "=":
        if not want_value:
            raise _Stop("value-in-name", end, f"XML Parse : Unexpected value with name {name}")
        value, last, nxt = _value(text, end + 1)
        return name, value, last, nxt
    if run == MAX_STR_LEN - 1:  # the terminator itself lands on index 254
        raise _Stop("name-too-long", pos, f"Error : name {name} too long (max {MAX_STR_LEN})")
    return name, None, c, end + 1


def _value(text: str, pos: int) -> tuple[str, str, int]:
    """mscclXmlGetValue: a quote, then everything up to the next double quote."""
    q = _char(text, pos)
    if q not in "\"'":
        raise _Stop("quote", pos, "XML Parse : Expected (double) quote.")
    end = text.find('"', pos + 1)
    if end < 0:
        raise _Stop("eof", len(text), "XML Parse : Unexpected EOF")
    return text[pos + 1:end], _char(text, end + 1), end + 2


def _slow(text: str, pos: int, line: object) -> tuple[Node | None, int]:
    """mscclXmlGetNode, character by character, from the ``<`` at ``pos``."""
    assert callable(line)
    if text[pos] != "<":
        shown = {"\t": "\\t"}.get(text[pos], text[pos])
        raise _Stop("expecting-lt", pos, f"XML Parse error : expecting '<', got '{shown}'")
    here = line(pos)
    name, _, c, nxt = _token(text, pos + 1, False)
    if name.startswith("!--"):
        return None, _skip_comment(text, name[3:] + c, nxt)
    if name == "" and c == "/":
        name, _, c, nxt = _token(text, nxt, False)
        if c != ">":
            raise _Stop("closing-tag", nxt - 1, f"XML Parse error : unexpected trailing {c} "
                        f"in closing tag {name}")
        return Node(name, CLOSE, here), nxt
    node = Node(name, OPEN, here)
    while c == " ":
        key, value, c, nxt = _token(text, nxt, True)
        if value is not None and len(value) > MAX_STR_LEN and not node.long_value:
            node.long_value = key
        if len(node.attrs) < MAX_ATTR_COUNT:
            node.attrs.append((key, value or ""))
        else:
            node.dropped += 1
    if c == "/":
        node.kind = SINGLE
        _, _, c, nxt = _token(text, nxt, False)
    if c != ">":
        shown = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(c, c)
        raise _Stop("expected-gt", nxt - 1, f"XML Parse : expected >, got '{shown}'")
    return node, nxt


def _skip_comment(text: str, seen: str, pos: int) -> int:
    """mscclXmlSkipComment: the last three characters read, until they are ``-->``."""
    end = ("..." + seen)[-3:]
    while end != "-->":
        if pos >= len(text):
            raise _Stop("unterminated-comment", pos, "XML Parse error : unterminated comment")
        end = end[1:] + text[pos]
        pos += 1
    return pos
