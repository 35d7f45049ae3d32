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
            for label, needle in needles.items():
                if needle in chunk:
                    found.add(label)
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
