"""A small, bounded, safe XML reader (stdlib expat, no DTDs, no entities).

Hostile input is rejected in bounded time and memory with :class:`InputError`:
any DOCTYPE or entity declaration (billion laughs, external entities) stops
the parse at once; the text size, the number of elements, the nesting depth
and the attributes per element are capped. Character data is ignored (the
formats read here keep everything in attributes).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import NoReturn
from xml.parsers import expat

from .base import InputError
from .files import check_fits

MAX_BYTES = 256 * 1024 * 1024
MAX_ELEMENTS = 5_000_000
MAX_DEPTH = 32
MAX_ATTRS = 64
MAX_ATTR_LEN = 1_000_000


@dataclass(slots=True)
class Element:
    tag: str
    attrs: dict[str, str]
    line: int
    children: list[Element] = field(default_factory=list)

    def where(self) -> str:
        return f"<{self.tag}> at line {self.line}"


class _Refused(Exception):
    pass


BYTES_PER_ELEMENT = 256
BYTES_PER_ATTRIBUTE = 64
"""Memory of the parsed tree (tracemalloc: a bare element 197 bytes, an MSCCL <step> with
its 10 attributes 520)."""


def _check_memory(text: str | bytes, origin: str, max_elements: int) -> None:
    """Count elements and attributes in C before parsing, and refuse a file whose tree
    would not fit in the memory budget (5 million ``<x/>`` are 20 MB of text, 1 GB parsed)
    or has more elements than ``max_elements``."""
    if len(text) < 1 << 20:
        return
    def count(sub: str) -> int:
        return text.count(sub) if isinstance(text, str) else text.count(sub.encode())

    # start tags: every "<" but those of end tags, comments, declarations and PIs
    elements = count("<") - count("</") - count("<!") - count("<?")
    if elements > max_elements:
        raise InputError(f"{origin}: about {elements} elements, more than {max_elements}; "
                         "collcert does not read files this big")
    check_fits(BYTES_PER_ELEMENT * elements + BYTES_PER_ATTRIBUTE * (count('="') + count("='")),
               f"{origin}: about {elements} XML elements")


def parse(text: str | bytes, origin: str = "XML", *, max_elements: int = MAX_ELEMENTS,
          max_depth: int = MAX_DEPTH, max_per_tag: Mapping[str, int] | None = None) -> Element:
    """The root element of ``text``; InputError naming the line for anything wrong.

    ``max_per_tag`` caps the count of particular elements (``{"tree": 400000}``);
    the parse stops as soon as a cap is passed.
    """
    size = len(text)
    if size > MAX_BYTES:
        raise InputError(f"{origin}: {size} bytes is more than the {MAX_BYTES} collcert reads")
    caps = dict(max_per_tag or {})
    if caps:  # cheap pre-count in C: refuse obviously oversized input before building it
        _check_tag_counts(text, origin, caps)
    _check_memory(text, origin, max_elements)
    parser = expat.ParserCreate()
    try:
        parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    except AttributeError:  # pragma: no cover - every CPython build has it
        pass
    tree = _Tree(parser, origin, max_elements, max_depth, caps)
    parser.StartElementHandler = tree.start
    parser.EndElementHandler = tree.end
    parser.StartDoctypeDeclHandler = tree.doctype
    parser.EntityDeclHandler = tree.entity
    parser.UnparsedEntityDeclHandler = tree.entity
    parser.ExternalEntityRefHandler = tree.external
    try:
        parser.Parse(text, True)
    except _Refused as exc:
        raise InputError(str(exc)) from None
    except expat.ExpatError as exc:
        raise InputError(f"{origin}: not well-formed XML at line {exc.lineno} column "
                         f"{exc.offset}: {expat.ErrorString(exc.code)}") from None
    except RecursionError:  # pragma: no cover - depth is capped
        raise InputError(f"{origin}: nested too deeply") from None
    if not tree.root:
        raise InputError(f"{origin}: no XML element found")
    return tree.root[0]


def _check_tag_counts(text: str | bytes, origin: str, caps: Mapping[str, int]) -> None:
    """Refuse a text with more start tags of a capped element than its cap."""
    sample = text if isinstance(text, str) else text.decode("utf-8", "replace")
    for tag, cap in caps.items():
        seen = sum(sample.count(f"<{tag}{c}") for c in " \t\r\n/>")
        if seen > cap:
            raise InputError(f"{origin}: more than {cap} <{tag}> elements ({seen}); "
                             "collcert does not audit schedules this big")


class _Tree:
    """The element tree expat's callbacks build, refusing what passes the caps as it grows,
    and any DOCTYPE or entity declaration."""

    def __init__(self, parser: expat.XMLParserType, origin: str, max_elements: int,
                 max_depth: int, caps: Mapping[str, int]) -> None:
        self.parser = parser
        self.origin = origin
        self.max_elements = max_elements
        self.max_depth = max_depth
        self.caps = caps
        self.stack: list[Element] = []
        self.root: list[Element] = []
        self.count = 0
        self.per_tag: dict[str, int] = {}

    def refuse(self, what: str) -> NoReturn:
        raise _Refused(f"{self.origin}: line {self.parser.CurrentLineNumber}: {what}")

    def start(self, tag: str, attrs: dict[str, str]) -> None:
        self.count += 1
        if self.count > self.max_elements:
            self.refuse(f"more than {self.max_elements} elements; collcert does not read "
                        "files this big")
        if tag in self.caps:
            self.per_tag[tag] = self.per_tag.get(tag, 0) + 1
            if self.per_tag[tag] > self.caps[tag]:
                self.refuse(f"more than {self.caps[tag]} <{tag}> elements; collcert does not "
                            "audit schedules this big")
        if len(self.stack) >= self.max_depth:
            self.refuse(f"elements nested deeper than {self.max_depth} levels")
        if len(attrs) > MAX_ATTRS or attrs and max(map(len, attrs.values())) > MAX_ATTR_LEN:
            self.refuse(f"<{tag}> has too many or too long attributes")
        el = Element(tag, attrs, self.parser.CurrentLineNumber)  # expat: a new dict each time
        if self.stack:
            self.stack[-1].children.append(el)
        else:
            self.root.append(el)
        self.stack.append(el)

    def end(self, tag: str) -> None:
        self.stack.pop()

    def doctype(self, *_: object) -> None:
        self.refuse("DOCTYPE declarations are not accepted (they can define entities); "
                    "remove it")

    def entity(self, *_: object) -> None:
        self.refuse("entity declarations are not accepted; remove them")

    def external(self, *_: object) -> int:
        self.refuse("external entities are not accepted")
