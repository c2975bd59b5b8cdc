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
