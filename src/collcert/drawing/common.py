"""What every picture needs: matplotlib loaded on demand, the output format checked,
the figure written; and :class:`DrawError`, the one error a picture raises.

matplotlib is optional (``pip install 'collcert[draw]'``): it is imported only by
:func:`require_matplotlib`, which turns its absence into a DrawError (exit status 2).
"""

from __future__ import annotations

from typing import Any

from collcert.reference.model import CollcertError


class DrawError(CollcertError):
    """A picture cannot be made (matplotlib missing, bad output file, bad input)."""


def require_matplotlib() -> Any:
    """``matplotlib.pyplot`` on the non-interactive Agg backend, or DrawError."""
    try:
        import matplotlib
    except ImportError:
        raise DrawError("drawing needs matplotlib, which is not installed: "
                        "pip install 'collcert[draw]'") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def check_output(path: str) -> str:
    """The picture format from the file name (.png, .svg or .pdf), or DrawError."""
    import os

    ext = os.path.splitext(path)[1].lower()
    if ext not in (".png", ".svg", ".pdf"):
        raise DrawError(f"{path}: use a .png, .svg or .pdf file name (the extension picks the "
                        "format)")
    return ext[1:]


def save(fig: Any, path: str, dpi: int = 150) -> None:
    """Write ``fig`` to ``path`` and close it; an unwritable path is a DrawError."""
    import os

    from collcert.reference.model import output_file

    plt = require_matplotlib()
    fmt = os.path.splitext(path)[1].lower()[1:] or None
    try:
        with output_file(path, "wb") as fh:  # all or nothing: the old picture stays till then
            fig.savefig(fh, dpi=dpi, format=fmt)
    except OSError as exc:
        raise DrawError(f"cannot write {path}: {exc.strerror or exc}") from None
    finally:
        plt.close(fig)


def size_label(x: float, _pos: object = None) -> str:
    """A message size on an axis: ``512``, ``4K``, ``1M``, ``8G`` (powers of 2^10)."""
    for unit, div in (("G", 2**30), ("M", 2**20), ("K", 2**10)):
        if x >= div:
            return f"{x / div:g}{unit}"
    return f"{x:g}"


def size_axes(ax: Any, lo: int, hi: int) -> Any:
    """Log-log axes of a rate against message size from ``lo`` to ``hi`` bytes (the
    pictures of ``compare --plot`` and ``measured --plot``): sizes on powers of 2 (at
    most about 12 labels), rates as plain numbers; returns that number formatter for
    the minor ticks, which each picture sets as its range needs."""
    from matplotlib.ticker import FuncFormatter, LogLocator

    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    octaves = max(1, (hi // max(lo, 1)).bit_length())
    ax.xaxis.set_major_locator(LogLocator(base=2 ** max(1, -(-octaves // 12)), numticks=40))
    ax.xaxis.set_major_formatter(FuncFormatter(size_label))
    plain = FuncFormatter(lambda y, _pos: f"{y:g}")
    ax.yaxis.set_major_formatter(plain)
    return plain
