"""Looks for secrets in another process's memory: every readable mapping of /proc/PID/maps
read through /proc/PID/mem (as root). A scan that cannot read a mapping it should be able to
read fails, rather than report nothing found; and the controls run the very same scan on a
separate process that holds the needles, so a scan that could never find anything fails its
control.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from typing import Iterator

import numpy

# Kernel pages that /proc/PID/mem does not read even for root.
UNREADABLE_BY_DESIGN = ("[vvar]", "[vvar_vclock]", "[vsyscall]")


class ScanError(AssertionError):
    pass


def past_file_end(name: str, offset: int, chunk: bytes) -> bool:
    """Whether a short read of a file mapping stopped where the file ends: a mapping larger
    than its file (LMDB maps its whole map size) has no pages past the end to read."""
    if not name.startswith("/"):
        return False
    try:
        size = os.stat(name).st_size
    except OSError:
        return False
    page = os.sysconf("SC_PAGE_SIZE")
    return offset + len(chunk) >= (size + page - 1) // page * page


# Bytes searched at a time by needles_in (its arrays take a few times this), the shortest
# needle it indexes (shorter ones are searched for one by one), and the blocks it skips when
# they hold only zeros (most of a server's mapped memory was never written).
SLICE_BYTES = 1 << 25
INDEXED_LENGTH = 5
ZERO_BLOCK_BYTES = 1 << 16


def written_ranges(data: bytes, margin: int) -> list[tuple[int, int]]:
    """[start, end) ranges that cover every block of data holding a nonzero byte, each widened by
    margin on both sides (a needle may begin or end with zeros) and merged where they meet."""
    whole = len(data) // ZERO_BLOCK_BYTES
    blocks = numpy.frombuffer(data, dtype=numpy.uint64, count=whole * ZERO_BLOCK_BYTES // 8)
    written = blocks.reshape(whole, ZERO_BLOCK_BYTES // 8).any(axis=1) if whole else numpy.zeros(0, dtype=bool)
    ranges: list[tuple[int, int]] = []
    candidates = [(int(i) * ZERO_BLOCK_BYTES, (int(i) + 1) * ZERO_BLOCK_BYTES) for i in numpy.flatnonzero(written)]
    if whole * ZERO_BLOCK_BYTES < len(data):
        candidates.append((whole * ZERO_BLOCK_BYTES, len(data)))
    for start, end in candidates:
        start, end = max(0, start - margin), min(len(data), end + margin)
        if ranges and start <= ranges[-1][1]:
            ranges[-1] = (ranges[-1][0], end)
        else:
            ranges.append((start, end))
    return ranges


def needles_in(data: bytes, needles: dict[str, bytes]) -> set[str]:
    """Names of the needles that occur in data, at any byte offset, in one pass for all of them.

    Every occurrence of a needle n at offset p covers two whole 16-bit words at even offsets,
    the first starting at p or p + 1: n[q:q+2] and n[q+2:q+4] with q = p % 2. A table of those
    word pairs (two per needle) marks the few even offsets where some needle may start; each is
    then compared in full. One lookup per two bytes replaces one pass per needle, and blocks of
    zeros are not looked at."""
    found = {label for label, needle in needles.items() if len(needle) < INDEXED_LENGTH and needle in data}
    indexed = {label: needle for label, needle in needles.items() if len(needle) >= INDEXED_LENGTH}
    if not indexed or len(data) < INDEXED_LENGTH:
        return found
    # Bit 0: a word some needle's pair begins with; bit 1: a word some pair ends with.
    table = numpy.zeros(1 << 16, dtype=numpy.uint8)
    starts: dict[tuple[int, int], list[tuple[str, bytes, int]]] = {}
    for label, needle in indexed.items():
        for q in (0, 1):
            pair = (int.from_bytes(needle[q:q + 2], "little"), int.from_bytes(needle[q + 2:q + 4], "little"))
            table[pair[0]] |= 1
            table[pair[1]] |= 2
            starts.setdefault(pair, []).append((label, needle, q))
    longest = max(len(needle) for needle in indexed.values())
    for low, high in written_ranges(data, longest):
        for base in range(low, high, SLICE_BYTES):
            end = min(high, base + SLICE_BYTES + longest)
            words = numpy.frombuffer(data, dtype="<u2", count=(end - base) // 2, offset=base)
            marks = table[words]
            for index in numpy.flatnonzero(marks[:-1] & (marks[1:] >> 1)).tolist():
                for label, needle, q in starts.get((int(words[index]), int(words[index + 1])), ()):
                    at = base + 2 * index - q
                    if at >= 0 and data[at:at + len(needle)] == needle:
                        found.add(label)
    return found


def still_readable(pid: int, start: int, end: int) -> bool:
    """Whether [start, end) lies whole in one readable mapping of the process now."""
    with open(f"/proc/{pid}/maps") as maps:
        for line in maps:
            fields = line.split(maxsplit=5)
            low, high = (int(x, 16) for x in fields[0].split("-"))
            if low <= start and end <= high:
                return "r" in fields[1]
    return False


def memory_contains(pid: int, needles: dict[str, bytes]) -> list[str]:
    """Names of the needles found in the process's readable mappings. Raises ScanError when a
    readable mapping cannot be read in full (up to its file's end, for a file mapping), or when
    nothing at all was read."""
    if not needles or any(not needle for needle in needles.values()):
        raise ScanError("empty needle list or an empty needle")
    found, unreadable, scanned = set(), [], 0
    with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb", 0) as mem:
        for line in maps:
            fields = line.split(maxsplit=5)
            name = fields[5].strip() if len(fields) > 5 else ""
            if "r" not in fields[1] or name in UNREADABLE_BY_DESIGN:
                continue
            start, end = (int(x, 16) for x in fields[0].split("-"))
            try:
                mem.seek(start)
                chunk = mem.read(end - start)
            except (OSError, ValueError, OverflowError) as error:
                # A heap the process shrank (or unmapped) since the maps were read is no longer
                # there to read: only a range still mapped readable must be.
                if still_readable(pid, start, end):
                    unreadable.append(f"{fields[0]} {name or '(anonymous)'}: {error}")
                continue
            chunk = chunk or b""
            if len(chunk) != end - start and not past_file_end(name, int(fields[2], 16), chunk):
                # A heap that shrank since the maps were read (glibc makes an arena's tail
                # inaccessible) reads short: only a tail still mapped readable must be read.
                if still_readable(pid, start + len(chunk), end):
                    unreadable.append(f"{fields[0]} {name or '(anonymous)'}: read {len(chunk)} bytes")
                    continue
            scanned += len(chunk)
            found |= needles_in(chunk, needles)
    if unreadable:
        raise ScanError(f"pid {pid}: readable mappings not read: " + "; ".join(unreadable[:5]))
    if scanned == 0:
        raise ScanError(f"pid {pid}: nothing was read")
    return sorted(found)


@contextlib.contextmanager
def holder_process(needles: dict[str, bytes]) -> Iterator[int]:
    """The pid of a separate process that holds every needle in its heap until the block
    ends: the control that shows memory_contains finds what a process holds."""
    code = ("import sys\n"
            "held = [bytearray.fromhex(h) for h in sys.stdin.readline().split()]\n"
            "print('holding', len(held), flush=True)\n"
            "sys.stdin.read()\n")
    holder = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True)
    try:
        holder.stdin.write(" ".join(needle.hex() for needle in needles.values()) + "\n")
        holder.stdin.flush()
        assert holder.stdout.readline().split() == ["holding", str(len(needles))]
        yield holder.pid
    finally:
        holder.kill()
        holder.wait(timeout=10)


def assert_scan_finds(needles: dict[str, bytes]) -> None:
    """Control: the scan finds every needle in a separate process that holds them."""
    with holder_process(needles) as pid:
        found = memory_contains(pid, needles)
    missing = sorted(set(needles) - set(found))
    assert not missing, f"the memory scan missed needles a process holds: {missing[:5]}"
