"""Keep freed memory mapped on glibc, so a CPU forward does not page-fault its activations back in.

glibc gives freed memory at the top of the heap back to the OS once more than M_TRIM_THRESHOLD
is free, and serves blocks above M_MMAP_THRESHOLD with fresh mmaps. Both thresholds adapt only
up to a few MB, and a transformer batch allocates and frees tens of MB of activations, so by
default every batch faults its activations in again: about 31,000 minor page faults per eval
forward of the paper-size ViT (batch 128), some 20% of its CPU time (benchmarks/LOG.md).
Raising both thresholds keeps that memory in the process. Nothing computed changes: this moves
where buffers come from, not what is computed in them.

Applied by ``autonorm-train`` and ``autonorm-evaluate`` at start; ``AUTONORM_MALLOC_TUNING=0``
turns it off. A no-op where the C library is not glibc (macOS, musl).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import platform

M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
TRIM_THRESHOLD_BYTES = 1 << 30  # keep up to 1 GiB of freed heap before returning it
MMAP_THRESHOLD_BYTES = 32 << 20  # glibc's upper limit on 64-bit: blocks up to 32 MiB come from the heap

_applied: bool | None = None


def keep_freed_memory() -> bool:
    """Raise glibc's trim and mmap thresholds once per process; True when they were set."""
    global _applied
    if _applied is not None:
        return _applied
    _applied = False
    if os.environ.get("AUTONORM_MALLOC_TUNING", "1") == "0" or platform.libc_ver()[0] != "glibc":
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        # the mmap threshold first: setting either disables glibc's dynamic adjustment of both
        ok = libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES) == 1
        ok = ok and libc.mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD_BYTES) == 1
    except (OSError, AttributeError):
        return False
    _applied = bool(ok)
    return _applied
