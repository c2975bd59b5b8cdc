"""Switch (NVLS) channels of an MSCCL++ plan, read as the executor sets them up.

microsoft/mscclpp at 1f5f065d (docs/mscclpp.md, "Switch channels"):

* a rank's ``channels`` entry ``{"channel_type": "switch", "buffer_type": "i"|"o"|"s",
  "rank_groups": [{"size", "ranks": [...]}, ...]}`` gives one switch channel per rank
  group, numbered in order over the rank's entries (``execution_plan.cc``
  ``parseChannels``, :314-330, one ``NvlsInfo`` per group);
* the executor makes one multicast object per switch channel,
  ``connectNvlsCollective(comm, ranks, size)`` (``executor.cc``:319-324), a collective
  call of every rank of the group, which throws "rank is not among allRanks" on a rank
  outside its own group (``src/core/switch_channel.cc``:284-297); each rank binds its
  own buffer of the channel's ``buffer_type`` to it (``setupNvlsChannels``,
  ``executor.cc``:419-432). The n-th channel over a rank set on one rank meets the n-th
  over the same set on every other member (the group's calls in order);
* a threadblock's ``channels`` entry of type ``switch`` picks some of the rank's switch
  channels (``threadblockNvlsChannels``, ``execution_plan.cc``:407-408), and an op's
  buffer ``{"switch_channel_id": k, "index", "size"}`` names the threadblock's k-th.

This module only reads; :mod:`.mscclpp` builds the plan with it and
:mod:`.mscclpp_switch` runs the switch ops.
"""

from __future__ import annotations

from typing import Any

from ..model import InputError

BUFFERS = ("i", "o", "s")
Info = tuple[str, tuple[int, ...]]  # (the rank's buffer bound to it, the group's ranks)
Member = tuple[int, str]  # (rank, the buffer that rank binds)


def read_channel(c: Any, r: int, n: int, where: str, origin: str) -> list[Info]:
    """The switch channels of one ``channels`` entry of rank ``r`` (one per rank group)."""
    buf = c.get("buffer_type") if isinstance(c, dict) else None
    if buf not in BUFFERS:
        raise InputError(f"{origin}: {where}: a switch channel's buffer_type is "
                         f"{str(buf)[:10]!r}, expected one of i, o, s")
    groups = c.get("rank_groups")
    if not isinstance(groups, list) or not groups:
        raise InputError(f"{origin}: {where}: a switch channel needs a list of rank_groups")
    out: list[Info] = []
    for g in groups:
        ranks = g.get("ranks") if isinstance(g, dict) else None
        if not isinstance(ranks, list) or not 1 <= len(ranks) <= n or \
                any(type(q) is not int or not 0 <= q < n for q in ranks) or \
                len(set(ranks)) != len(ranks):
            raise InputError(f"{origin}: {where}: a switch channel's rank group must list "
                             f"distinct ranks 0..{n - 1}, it has {str(ranks)[:40]}")
        out.append((str(buf), tuple(ranks)))
    return out


def match(nvls: dict[int, list[Info]]) -> tuple[dict[tuple[int, int], tuple[Member, ...]],
                                                list[str]]:
    """The multicast object behind each switch channel ``(rank, channel)``: its members and
    the buffer each binds; and the refusals (a rank outside its own group, a member that
    never makes the matching call)."""
    groups: dict[tuple[int, int], tuple[Member, ...]] = {}
    refusals: list[str] = []
    seen: dict[tuple[int, tuple[int, ...]], list[str]] = {}  # (rank, set) -> buffers, in order
    for r, infos in sorted(nvls.items()):
        for buf, ranks in infos:
            seen.setdefault((r, tuple(sorted(ranks))), []).append(buf)
    for r, infos in sorted(nvls.items()):
        count: dict[tuple[int, ...], int] = {}
        for k, (_, ranks) in enumerate(infos):
            key = tuple(sorted(ranks))
            nth = count.get(key, 0)
            count[key] = nth + 1
            if r not in ranks:
                refusals.append(f"rank {r}'s switch channel {k} joins ranks {list(ranks)}, "
                                f"without rank {r}: the executor's connectNvlsCollective "
                                "throws \"rank is not among allRanks\" "
                                "(src/core/switch_channel.cc:284-297)")
                continue
            members: list[Member] = []
            for q in key:
                bufs = seen.get((q, key), [])
                if nth >= len(bufs):
                    refusals.append(
                        f"rank {r}'s switch channel {k} is its switch channel number {nth + 1} "
                        f"over ranks {list(key)}, but rank {q} declares {len(bufs)}: the "
                        "group's connectNvlsCollective (executor.cc:319-324), a call of every "
                        f"member, would wait for rank {q} forever")
                    break
                members.append((q, bufs[nth]))
            else:
                groups[(r, k)] = tuple(members)
    return groups, refusals
