"""Without torch, `collcert smoke` says how to install it and exits 2 (bad input)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from collcert.cli import main
from collcert.smoke import INSTALL_HINT, SmokeError, require_torch

DATA = Path(__file__).resolve().parent / "data" / "formats"


def test_without_torch_the_command_says_how_to_install_it(monkeypatch: Any,
                                                          capsys: Any) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch now raises ImportError
    with pytest.raises(SmokeError, match="collcert\\[smoke\\]"):
        require_torch()
    xml = DATA / "msccl-tools_allgather_ring_4gpu_inplace.xml"
    assert main(["smoke", str(xml)]) == 2
    err = capsys.readouterr().err
    assert INSTALL_HINT in err and "Traceback" not in err
