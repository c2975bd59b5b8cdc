"""torch helpers shared by the smoke backends: import, devices, buffers, one operation.

torch is imported lazily (it is the optional extra ``collcert[smoke]``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from collcert.reference.execution import Op, Plan, Region, first_mismatch, input_values
from collcert.reference.model import CollcertError

INSTALL_HINT = "pip install 'collcert[smoke]'"


class SmokeError(CollcertError):
    """The smoke harness cannot run as asked (no torch, no device, bad options)."""


def require_torch() -> Any:
    try:
        import torch
    except ImportError:
        raise SmokeError("collcert smoke runs schedules through torch, which is not installed: "
                         f"{INSTALL_HINT} (or pip install torch)") from None
    return torch


def gpu_kind(torch: Any) -> str:
    """'CUDA', 'ROCm' or '' (no GPU)."""
    if not torch.cuda.is_available():
        return ""
    return "ROCm" if getattr(torch.version, "hip", None) else "CUDA"


def resolve_device(torch: Any, device: str | None) -> Any:
    """The torch device of the single-gpu backend: ``device`` checked (SmokeError naming
    it when it is not a device, or not one this machine has), else cuda:0 or the CPU."""
    if device is None:
        return torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    try:
        dev = torch.device(device)
    except (RuntimeError, ValueError, TypeError):
        raise SmokeError(f"--device {device[:40]!r} is not a device: write cpu, or cuda:N for "
                         "GPU N") from None
    if dev.type == "cuda":
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if not count:
            raise SmokeError(f"--device {device}: torch sees no GPU here; use --device cpu")
        if (dev.index or 0) >= count:
            raise SmokeError(f"--device {device}: this machine has {count} GPU(s), cuda:0 to "
                             f"cuda:{count - 1}")
    elif dev.type != "cpu":
        raise SmokeError(f"--device {device}: the single-gpu backend runs on cpu or cuda:N")
    return dev


def device_name(torch: Any, dev: Any) -> str:
    if dev.type == "cuda":
        return f"{dev} ({torch.cuda.get_device_name(dev)})"
    return "cpu"


@dataclass
class RankResult:
    rank: int
    device: str = ""
    times: list[float] = field(default_factory=list)
    mismatch: dict[str, int] | None = None
    error: str = ""


def allocate(torch: Any, plan: Plan, rank: int, ce: int, dev: Any) -> dict[str, Any]:
    bufs = {b: torch.full((n * ce,), -1, dtype=torch.int64, device=dev)
            for b, n in plan.buffers[rank].items() if n}
    b, off, _, n = plan.spec.inputs[rank]
    if n:
        data = torch.from_numpy(input_values(plan.spec, rank, ce))
        bufs[b][off * ce:(off + n) * ce].copy_(data)
    return bufs


def view(bufs: dict[str, Any], reg: Region | None, ce: int) -> Any:
    assert reg is not None
    return bufs[reg.buf][reg.off * ce:(reg.off + reg.n) * ce]


def apply(op: Op, bufs: dict[str, Any], stage: dict[int, Any], ce: int) -> None:
    """Run one plan operation on one rank's buffers (single-device backend)."""
    if op.kind == "send":
        stage[op.msg] = view(bufs, op.src, ce).clone()
    elif op.kind == "recv":
        deliver(bufs, op, stage.pop(op.msg), ce)
    elif op.kind == "copy":
        view(bufs, op.dst, ce).copy_(view(bufs, op.src, ce))
    elif op.kind == "reduce":
        dst = view(bufs, op.dst, ce)
        dst.copy_(dst + view(bufs, op.src, ce))


def deliver(bufs: dict[str, Any], op: Op, data: Any, ce: int) -> None:
    dst = view(bufs, op.dst, ce)
    if op.red is None:
        dst.copy_(data)
    elif op.red == op.dst:
        dst.add_(data)
    else:
        dst.copy_(view(bufs, op.red, ce) + data)


def check(plan: Plan, rank: int, bufs: dict[str, Any], ce: int) -> dict[str, int] | None:
    b, off, _, n = plan.spec.outputs[rank]
    if not n:
        return None
    got = bufs[b][off * ce:(off + n) * ce].cpu().numpy()
    m = first_mismatch(plan.spec, rank, got, ce)
    if m is None:
        return None
    return {"rank": m.rank, "offset": m.offset, "element": m.element, "expected": m.expected,
            "got": m.got, "count": m.count}


def quiet_threads(torch: Any) -> None:
    """One compute thread per rank process: the ranks share the machine's cores."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    torch.set_num_threads(1)
