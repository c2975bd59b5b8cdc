"""Runs hostile-corpus cases through ``collcert.cli.main``, one after another, in one process.

Used by tests/test_hostile_corpus.py, which starts this script in a subprocess under an
address-space limit (so the size estimates see a small machine) and reads its results:
``python hostile_driver.py FOLDER CASES.json RESULTS.jsonl``. Each case is
``[id, argv, stdin, env]``: argv as the command line would give it (``{name}`` stands
for a file of FOLDER), stdin a file of FOLDER, a device such as ``/dev/zero``, or None,
env extra environment variables. Each case gets a fresh ``main(argv)`` call, its own
stdin, captured stdout/stderr, and a 10-second alarm; one JSON line per case is written
(and flushed) to RESULTS before the next starts, so a case that kills the process is
known. Starting Python and importing collcert once for many cases keeps the corpus
fast on a busy machine.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import sys
import time

TIMEOUT = 10


class Hang(BaseException):
    """Raised by the alarm; a BaseException, so collcert's own handlers cannot swallow it."""


def _alarm(signum: int, frame: object) -> None:
    raise Hang()


def _arg(a: str, folder: str) -> str:
    if a.startswith("{") and a.endswith("}") and len(a) < 100:
        return os.path.join(folder, a[1:-1])
    return a


def run_case(argv: list[str], stdin: str | None, env: dict[str, str], folder: str,
             ) -> dict[str, object]:
    from collcert.cli import main

    source = os.devnull if stdin is None else (stdin if stdin.startswith("/dev/")
                                               else os.path.join(folder, stdin))
    saved_env, saved_stdin = dict(os.environ), sys.stdin
    os.environ.update(env)
    out, err = io.StringIO(), io.StringIO()
    code: object
    with open(source, "rb") as fh:
        sys.stdin = io.TextIOWrapper(fh, encoding="utf-8")
        signal.signal(signal.SIGALRM, _alarm)
        signal.setitimer(signal.ITIMER_REAL, TIMEOUT)
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                try:
                    code = main([_arg(a, folder) for a in argv])
                except SystemExit as exc:  # argparse's own errors
                    code = exc.code if isinstance(exc.code, int) else 2
        except Hang:
            code = f"no answer within {TIMEOUT} s"
        except BaseException as exc:  # noqa: BLE001 - reported, not raised
            code = f"escaped {type(exc).__name__}: {exc}"[:500]
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            sys.stdin = saved_stdin
            os.environ.clear()
            os.environ.update(saved_env)
    text = err.getvalue()
    return {"code": code, "stderr": text[-3000:], "stderr_chars": len(text),
            "traceback": "Traceback" in text or "Traceback" in out.getvalue()}


def main(argv: list[str]) -> int:
    folder, cases_path, results_path = argv
    with open(cases_path, encoding="utf-8") as fh:
        cases = json.load(fh)
    os.chdir(folder)
    if any(args[:1] == ["smoke"] for _, args, _, _ in cases):
        try:  # torch takes seconds to import on a busy machine: not a case's own time
            import torch  # noqa: F401
        except ImportError:
            pass
    with open(results_path, "a", encoding="utf-8") as out:
        for case_id, args, stdin, env in cases:
            t0 = time.monotonic()
            result = run_case(args, stdin, env, folder)
            result.update(id=case_id, seconds=round(time.monotonic() - t0, 2))
            out.write(json.dumps(result) + "\n")
            out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
