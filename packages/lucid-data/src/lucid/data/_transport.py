"""How a batch travels from a worker to the main process.

The batch is pickled in the worker (lucid tensors pickle as their numpy arrays), so a batch that
cannot be pickled is an error reported to the user rather than a message lost on the way.
Large arrays do not go through the result pipe: pushing megabytes through a 64 KiB pipe costs
a context switch per 64 KiB on each side, and blocks the worker until the main process reads.
Each is written to a file in a per-pool folder on ``/dev/shm`` (memory, not disk); the main
process reads it back and deletes it, and only the file name travels through the pipe. The
folder is removed when the pool shuts down.
"""

from __future__ import annotations

import io
import os
import pickle
import tempfile
from typing import Any

import numpy as np

# Smaller arrays go through the pipe itself: a payload that fits the pipe's 64 KiB buffer never
# blocks the worker, and a file costs more than a copy at that size.
SHARED_MIN_BYTES = 32 * 1024
_SHM_ROOT = "/dev/shm"


def make_shared_folder() -> str | None:
    """A private folder for one worker pool: in shared memory where the system has it, else in
    the temporary folder (short-lived files stay in the page cache). None if neither works."""
    shm = os.path.isdir(_SHM_ROOT) and os.access(_SHM_ROOT, os.W_OK)
    try:
        return tempfile.mkdtemp(prefix="lucid-data-", dir=_SHM_ROOT if shm else None)
    except OSError:
        return None


def read_shared(path: str, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    """Rebuild an array written by ``_SharedPickler`` and delete its file."""
    try:
        return np.fromfile(path, dtype=np.dtype(dtype)).reshape(shape)
    finally:
        os.unlink(path)


class _SharedPickler(pickle.Pickler):
    def __init__(self, file: io.BytesIO, folder: str, prefix: str) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self.folder = folder
        self.prefix = prefix
        self.count = 0

    def reducer_override(self, obj: Any) -> Any:
        if (
            type(obj) is not np.ndarray
            or obj.nbytes < SHARED_MIN_BYTES
            or obj.dtype.kind in "OV"  # object and structured arrays: ordinary pickling
        ):
            return NotImplemented
        path = os.path.join(self.folder, f"{self.prefix}-{self.count}")
        self.count += 1
        obj.tofile(path)  # C order, whatever the array's own layout
        return read_shared, (path, obj.shape, obj.dtype.str)


def dumps(obj: Any, folder: str | None = None, prefix: str = "batch") -> bytes:
    """Pickle ``obj``; with a ``folder``, its large arrays go to files there (see above)."""
    if folder is not None:
        buf = io.BytesIO()
        try:
            _SharedPickler(buf, folder, prefix).dump(obj)
            return buf.getvalue()
        except OSError:  # shared memory full or gone: the pipe still works
            pass
    return pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)


def loads(payload: bytes) -> Any:
    return pickle.loads(payload)
