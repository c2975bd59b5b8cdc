"""Reading a topology-like JSON document: a file, a JSON text or a parsed dict.

Both file formats with links, ``collcert-topology/1`` topologies and one-port
platforms (``"port_model": "one-port"``), are read here: in bounded memory
(:mod:`.limits`), with long decimals kept exact (a capacity or cost never passes
through a float), and with the line on which each item of ``"links"`` starts, so
that messages can name it ("topo.json: links[3] (line 12)").
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from .errors import TopologyError
from .limits import check_json_memory, read_text


def read_json_document(
    source: str | os.PathLike[str] | Mapping[str, Any], *,
    too_deep: str = "JSON nested too deeply to be a topology",
    too_long: str = "a number has more than 4300 digits",
) -> tuple[Any, str, dict[int, str]]:
    """``(data, origin, where)``: the data of a JSON file path, a JSON text or an
    already-parsed dict; the origin that messages name (the path, else
    ``"topology"``); ``where[i]``, ``"origin: links[i] (line n)"`` for each link of a
    file or text (empty for a dict). ``too_deep`` and ``too_long`` end the messages
    about JSON nested too deeply and a number too long. Raises :class:`TopologyError`.
    """
    where: dict[int, str] = {}
    origin = "topology"
    if isinstance(source, Mapping):
        return source, origin, where
    text, origin = _read_text(source)
    try:
        # long decimals stay exact: never let a capacity pass through a float
        data = json.loads(text, parse_float=Decimal)
    except json.JSONDecodeError as exc:
        raise TopologyError(
            f"{origin}: not valid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from None
    except RecursionError:
        raise TopologyError(f"{origin}: {too_deep}") from None
    except ValueError as exc:  # an integer beyond Python's 4300-digit limit
        why = too_long if "digits" in str(exc) else str(exc)
        raise TopologyError(f"{origin}: not readable JSON: {why}") from None
    for i, line in enumerate(_array_item_lines(text, "links")):
        where[i] = f"{origin}: links[{i}] (line {line})"
    return data, origin, where


def _read_text(source: str | os.PathLike[str]) -> tuple[str, str]:
    """The text of a path, or the string itself when it already is JSON."""
    if isinstance(source, str) and source.lstrip()[:1] in ("{", "["):
        check_json_memory(source, "the topology text")
        return source, "topology"
    path = os.fspath(source)
    text = read_text(path, str(path))  # bounded size, no binary (limits.py)
    check_json_memory(text, str(path))  # its parsed form must fit in memory too
    return text, str(path)


def _line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def _array_item_lines(text: str, key: str) -> list[int]:
    """Line numbers where the items of the top-level array ``key`` start (best effort)."""
    dec = json.JSONDecoder()
    ws = " \t\n\r"
    try:
        i = 0
        while text[i] in ws:
            i += 1
        if text[i] != "{":
            return []
        i += 1
        while True:
            while text[i] in ws + ",":
                i += 1
            if text[i] == "}":
                return []
            k, i = dec.raw_decode(text, i)
            while text[i] in ws + ":":
                i += 1
            if k != key:
                _, i = dec.raw_decode(text, i)
                continue
            if text[i] != "[":
                return []
            i += 1
            lines: list[int] = []
            line, last = _line_of(text, i), i
            while True:
                while text[i] in ws + ",":
                    i += 1
                if text[i] == "]":
                    return lines
                line += text.count("\n", last, i)
                last = i
                lines.append(line)
                _, i = dec.raw_decode(text, i)
    except (ValueError, IndexError, RecursionError):
        return []
