"""The ``collcert`` command line.

Each subcommand lives in its own module under ``collcert.commands`` and
provides ``register(subparsers)``; the module's parser sets ``func`` to a
function ``run(args) -> int``. Exit codes are shared by every subcommand:

* 0 — success / valid;
* 1 — refuted or invalid (a schedule fails a check, a property fails);
* 2 — bad input (unreadable or malformed file, bad arguments), message on stderr;
* 3 — internal error (a bug in collcert: please report it).
"""

from __future__ import annotations

import argparse
import errno
import sys
from collections.abc import Sequence

from collcert.commands import COMMAND_MODULES, load_command, refuse_outputs_onto_inputs

EXIT_OK, EXIT_INVALID, EXIT_BAD_INPUT, EXIT_INTERNAL = 0, 1, 2, 3


def is_bad_input(exc: BaseException) -> bool:
    """An error collcert raises on purpose for bad input (exit 2): the reference's
    ``CollcertError`` and the checkers' ``InputError`` both carry the class attribute
    ``collcert_bad_input``, so they are caught without importing collcert.reference."""
    return getattr(exc, "collcert_bad_input", False) is True


def _unavailable(sub: argparse._SubParsersAction[_Parser], name: str,
                 exc: ImportError) -> None:
    """A placeholder for a command whose module cannot import collcert.reference."""
    p = sub.add_parser(name, help=f"(unavailable: {exc})", add_help=False)
    p.add_argument("rest", nargs=argparse.REMAINDER)

    def run(args: argparse.Namespace) -> int:
        print(f"collcert {name}: cannot run: {exc}; 'collcert check' needs only "
              "collcert.certify", file=sys.stderr)
        return EXIT_BAD_INPUT

    p.set_defaults(func=run)


def shorten(message: str, limit: int = 4000) -> str:
    """An error message as printed: a hostile value it quotes (a 100,000-character node
    id, option value or number) is cut to its ends, and the whole stays under ``limit``."""
    import re

    message = re.sub(r"\S{300,}", lambda m: f"{m.group(0)[:60]}…{m.group(0)[-20:]} "
                     f"({len(m.group(0))} characters)", message)
    return message if len(message) <= limit else message[:limit] + "… (message shortened)"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {shorten(message)}\n")


def build_parser(only: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The CLI's parser; ``only`` registers just those command modules (``collcert check``
    loads no other command, so it imports no collcert.reference module it does not use)."""
    from collcert import __version__

    parser = _Parser(
        prog="collcert",
        description="Certified bandwidth-optimal collective schedules: exact optima with "
        "proofs, optimal tree schedules, and independent auditing of schedules.",
        epilog="Exit codes: 0 valid/success, 1 refuted or invalid, 2 bad input, 3 internal error. "
        "Run 'collcert COMMAND --help' for a command's options.",
    )
    parser.add_argument("--version", action="version", version=f"collcert {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in COMMAND_MODULES if only is None else only:
        try:
            module = load_command(name)
        except ImportError as exc:
            if not (exc.name or "").startswith("collcert.reference"):
                raise
            _unavailable(sub, name, exc)
            continue
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    # the other command modules import collcert.reference; 'check' must not need it
    parser = build_parser(only=("check",) if argv[:1] == ["check"] else None)
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return EXIT_BAD_INPUT
    try:
        if args.command != "check":  # check writes no file and imports no collcert.reference
            refuse_outputs_onto_inputs(args)  # -o onto an input: exit 2 before any work
        return int(args.func(args))
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except MemoryError:  # the input was bigger than the size estimates foresaw
        print(f"collcert {args.command}: error: out of memory: this input needs more memory "
              "than this process may use. Try a smaller input, or more memory (ulimit -v, "
              "COLLCERT_MAX_MEMORY; docs/limits.md). collcert estimates sizes before it "
              "starts, so please report the command: that estimate missed this input.",
              file=sys.stderr)
        return EXIT_BAD_INPUT
    except OSError as exc:
        if exc.errno not in _FILE_ERRORS:
            return _internal(args.command, exc)
        # a file the user named (-o into a missing folder, a full disk): not a bug
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"collcert {args.command}: error: {where}{exc.strerror or exc}; check the file "
              "name, its folder and the disk", file=sys.stderr)
        return EXIT_BAD_INPUT
    except Exception as exc:  # noqa: BLE001 - last line of defence: no bare tracebacks
        if is_bad_input(exc):
            print(f"collcert {args.command}: error: {shorten(str(exc))}", file=sys.stderr)
            return EXIT_BAD_INPUT
        return _internal(args.command, exc)


_FILE_ERRORS = {errno.ENOENT, errno.ENOTDIR, errno.EISDIR, errno.EACCES, errno.EPERM,
                errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.ENAMETOOLONG, errno.EEXIST}
"""OSErrors about a file the user named or the disk, reported as bad input (exit 2)."""


def _internal(command: str, exc: BaseException) -> int:
    import traceback

    print(
        f"collcert {command}: internal error: {type(exc).__name__}: {exc}\n"
        "This is a bug in collcert; please report it with the command you ran. "
        "Set COLLCERT_DEBUG=1 to see the traceback.",
        file=sys.stderr,
    )
    import os

    if os.environ.get("COLLCERT_DEBUG"):
        traceback.print_exc()
    return EXIT_INTERNAL


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
