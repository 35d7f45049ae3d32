"""Loopback ports for the test and benchmark servers, drawn outside the kernel's ephemeral
range: a port from inside it can be taken as the source port of any outgoing connection (an
engine client's, a kinit's) between the probe and the bind, and a server then fails to start
with "Address already in use"."""

from __future__ import annotations

import secrets
from pathlib import Path

LOWEST = 10000
HIGHEST = 65535
DEFAULT_EPHEMERAL = (32768, 60999)   # Linux's default ip_local_port_range


def ephemeral_range() -> tuple[int, int]:
    try:
        low, high = (int(field) for field in Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
        return low, high
    except (OSError, ValueError):
        return DEFAULT_EPHEMERAL


def random_port(span: int = 0) -> int:
    """A port P in LOWEST..HIGHEST with P..P+span all outside the ephemeral range."""
    low, high = ephemeral_range()
    ranges = [(first, last - span) for first, last in ((LOWEST, low - 1), (high + 1, HIGHEST)) if last - span >= first]
    if not ranges:
        raise RuntimeError(f"no ports outside the ephemeral range {low}-{high}")
    sizes = [last - first + 1 for first, last in ranges]
    pick = secrets.randbelow(sum(sizes))
    for (first, _), size in zip(ranges, sizes):
        if pick < size:
            return first + pick
        pick -= size
    raise AssertionError("unreachable")
