"""The memory scan the key-absence tests rely on: its one-pass search finds exactly what a
plain search for each needle finds, at every offset, across slice and zero-block boundaries,
for needles that begin or end with zeros; and it finds what a live process holds."""

from __future__ import annotations

import random

import pytest

from mpctest import memory_scan


def plain_search(data: bytes, needles: dict[str, bytes]) -> set[str]:
    return {label for label, needle in needles.items() if needle in data}


def mostly_zeros(rnd: random.Random, size: int) -> bytearray:
    data = bytearray(size)
    for _ in range(rnd.randint(0, 4)):
        if size > 8:
            start = rnd.randrange(size)
            end = min(size, start + rnd.randint(1, 3000))
            data[start:end] = rnd.randbytes(end - start)
    return data


@pytest.mark.parametrize("slice_bytes,zero_block_bytes", [(2, 8), (64, 64), (4096, 65536), (1 << 25, 1 << 16)])
def test_the_one_pass_search_finds_what_a_plain_search_finds(monkeypatch, slice_bytes, zero_block_bytes):
    monkeypatch.setattr(memory_scan, "SLICE_BYTES", slice_bytes)
    monkeypatch.setattr(memory_scan, "ZERO_BLOCK_BYTES", zero_block_bytes)
    rnd = random.Random(slice_bytes * 31 + zero_block_bytes)
    placed = 0
    for _ in range(150):
        data = mostly_zeros(rnd, rnd.choice([0, 3, 5, 100, 5000, 70000, 140000]))
        needles = {}
        for k in range(rnd.randint(1, 10)):
            length = rnd.choice([1, 4, 5, 6, 16, 32])
            half = length // 2
            needle = rnd.choice([rnd.randbytes(length), bytes(half) + rnd.randbytes(length - half),
                                 rnd.randbytes(length - half) + bytes(half)])
            if data and length <= len(data) and rnd.random() < 0.7:
                # At either end, anywhere, and across a 64 KiB boundary.
                at = rnd.choice([0, len(data) - length, rnd.randrange(len(data) - length + 1),
                                 max(0, min(len(data) - length, 65536 - half))])
                data[at:at + length] = needle
                placed += 1
            needles[f"needle {k}"] = needle
        assert memory_scan.needles_in(bytes(data), needles) == plain_search(bytes(data), needles)
    assert placed > 100


def test_the_scan_finds_needles_a_process_holds_and_not_others():
    rnd = random.Random(7)
    held = {f"held {k}": rnd.randbytes(32) for k in range(20)}
    absent = {f"absent {k}": rnd.randbytes(32) for k in range(20)}
    with memory_scan.holder_process(held) as pid:
        assert memory_scan.memory_contains(pid, held | absent) == sorted(held)
