"""Keep glibc from returning large freed buffers to the kernel every step.

NumPy training loops free and re-allocate the same 0.1-5 MB temporaries each step; glibc's
default thresholds unmap them and fault them back in (thousands of page faults per step).
Raising the mmap and trim thresholds keeps those buffers in the heap. It runs once, when the
first NumPy backend is created; ``lucid.backends.cpu.tune_malloc = False`` before that (or
``LUCID_MALLOPT=0`` in the environment) turns it off.
"""

from __future__ import annotations

import ctypes
import sys

from lucid.backends._numpy._settings import cpu

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3

tuned: bool | None = None  # None until the first NumPy backend asks; then tune_allocator()'s result


def tune_allocator() -> bool:
    """Raise glibc's mmap/trim thresholds; a no-op off glibc or with ``cpu.tune_malloc`` off."""
    if not sys.platform.startswith("linux") or not cpu.tune_malloc:
        return False
    try:
        libc = ctypes.CDLL("libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    ok = mallopt(_M_MMAP_THRESHOLD, 32 * 1024 * 1024)
    ok &= mallopt(_M_TRIM_THRESHOLD, 256 * 1024 * 1024)
    return bool(ok)


def tune_allocator_once() -> None:
    global tuned
    if tuned is None:
        tuned = tune_allocator()
