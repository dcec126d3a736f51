"""Big elementwise work on every core, in row blocks on the pool of ``_parallel``.

NumPy's ufuncs, casts and copies release the GIL, but each runs on one core. Over a large array
(a ResNet activation is 8M floats) an op cut into row blocks, taken in turn by the calling thread
and the pool's workers, runs on every core. Handing a block to a worker costs tens of
microseconds (far more on a loaded machine), so only arrays of ``_parallel.PARALLEL_ELEMENTS`` and
more are split: below that one core is faster (docs/performance.md).

``ThreadedUfunc`` wraps a ufunc for the backend's namespace (``xp.add(a, b)`` on big arrays runs
blocked; every other use, ``xp.add.at`` included, is the ufunc's own); ``astype`` casts so.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from lucid.backends._numpy import _parallel
from lucid.backends._numpy._parallel import blocks, map_blocks, workers_for

# Elements per block: a few blocks per worker (few GIL hand-offs), each about a millisecond.
BLOCK_ELEMENTS = 1 << 20
# The ResNet step's elementwise work left on the main thread (ReLU and residual adds of 1-2M
# elements, SGD's in-place updates of 1-2.4M-element weights, written through ``out=``): with
# this switch on, float arrays split from ``STEP_SPLIT_ELEMENTS`` (a train step's operands are
# not cache-resident, unlike the repeated calls that set ``PARALLEL_ELEMENTS``), and calls that
# name ``out=`` split too. Elementwise ops give the same bits in blocks.
# docs/performance.md, "The ResNet step's serial part". False: as before.
SPLIT_STEP_ELEMENTWISE = True
STEP_SPLIT_ELEMENTS = 1 << 20
_SPLIT_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_SMALLEST_SPLIT = min(STEP_SPLIT_ELEMENTS, _parallel.PARALLEL_ELEMENTS)


def _threshold(arr: Any) -> int:
    """The size from which an elementwise op over ``arr`` splits."""
    if SPLIT_STEP_ELEMENTWISE and arr.dtype in _SPLIT_FLOATS:
        return STEP_SPLIT_ELEMENTS
    return _parallel.PARALLEL_ELEMENTS


def _outer_axis(arr: Any) -> int:
    """The axis with the largest stride: blocks along it are contiguous runs of memory."""
    sizes = [(abs(st), ax) for ax, (st, n) in enumerate(zip(arr.strides, arr.shape)) if n > 1]
    return max(sizes)[1] if sizes else 0


def _block_of(op: Any, axis: int, ndim: int, s: int, e: int) -> Any:
    """The part of operand ``op`` that meets output rows ``s:e`` along ``axis`` (broadcast
    operands, whole)."""
    if not isinstance(op, np.ndarray):
        return op
    a = axis - (ndim - op.ndim)
    if a < 0 or op.shape[a] == 1:
        return op
    return op[(slice(None),) * a + (slice(s, e),)]


def _run_blocked(
    fill: Callable[[tuple[Any, ...], int, int], None], out: Any, axis: int,
    threshold: int | None = None,
) -> Any:  # fmt: skip
    """Fill ``out`` by ``fill(index, s, e)`` over row blocks ``s:e`` along ``axis``."""
    rows = out.shape[axis]
    per = max(1, BLOCK_ELEMENTS * rows // max(1, out.size))
    if threshold is not None:  # smaller arrays: at least a block per worker
        per = min(per, max(1, -(-rows // (2 * _parallel.workers()))))
    lead = (slice(None),) * axis

    def work(r: tuple[int, int]) -> None:
        fill(lead + (slice(r[0], r[1]),), r[0], r[1])

    map_blocks(work, blocks(rows, per), out.size, threshold)
    return out


def _corner(op: Any) -> Any:
    """A one-element piece of ``op`` with its dtype (to learn a result dtype cheaply)."""
    if isinstance(op, np.ndarray) and op.ndim and op.size:
        return op[(slice(0, 1),) * op.ndim]
    return op


def _template(args: Sequence[Any], shape: tuple[int, ...]) -> Any:
    """An operand of the result's shape, whose memory order the result takes."""
    for op in args:
        if isinstance(op, np.ndarray) and op.shape == shape:
            return op
    return None


def blocked_ufunc(ufunc: Any, args: Sequence[Any], threshold: int | None = None) -> Any:
    """``ufunc(*args)`` for one-output ufuncs, in row blocks on every core; the result has the
    dtype and memory order NumPy gives it."""
    shape = np.broadcast_shapes(*(np.shape(a) for a in args))
    template = _template(args, shape)
    if template is None or not shape or workers_for(math.prod(shape), threshold) == 1:
        return ufunc(*args)
    dtype = ufunc(*[_corner(a) for a in args]).dtype
    out = np.empty_like(template, dtype=dtype)
    axis, ndim = _outer_axis(out), len(shape)

    def fill(index: tuple[Any, ...], s: int, e: int) -> None:
        ufunc(*[_block_of(a, axis, ndim, s, e) for a in args], out=out[index])

    return _run_blocked(fill, out, axis, threshold)


def _blocks_apart(args: Sequence[Any], out: Any) -> bool:
    """Whether each array operand either is ``out``'s memory exactly (same start, shape and
    strides: an in-place update) or shares none of it, so row blocks read what the whole call
    would (NumPy copies overlapping operands first; blocks would not)."""
    ptr = out.__array_interface__["data"][0]
    for a in args:
        if not isinstance(a, np.ndarray) or not np.may_share_memory(a, out):
            continue
        same = a.__array_interface__["data"][0] == ptr and a.strides == out.strides
        if not (same and a.shape == out.shape):
            return False
    return True


def blocked_into(ufunc: Any, args: Sequence[Any], out: Any) -> Any:
    """``ufunc(*args, out=out)`` in row blocks on every core where ``out`` is a plain array of
    the broadcast shape and the operands' memory allows it; else the ufunc's own call."""
    shape = np.broadcast_shapes(*(np.shape(a) for a in args))
    threshold = _threshold(out)
    if (
        shape != out.shape
        or not shape
        or workers_for(out.size, threshold) == 1
        or not _blocks_apart(args, out)
    ):
        return ufunc(*args, out=out)
    axis, ndim = _outer_axis(out), len(shape)

    def fill(index: tuple[Any, ...], s: int, e: int) -> None:
        ufunc(*[_block_of(a, axis, ndim, s, e) for a in args], out=out[index])

    return _run_blocked(fill, out, axis, threshold)


def astype(arr: Any, dtype: Any) -> Any:
    """``arr.astype(dtype, copy=False)``; big casts in row blocks on every core."""
    if arr.dtype == dtype or not arr.ndim or workers_for(arr.size) == 1:
        return arr.astype(dtype, copy=False)
    out = np.empty_like(arr, dtype=dtype)

    def fill(index: tuple[Any, ...], s: int, e: int) -> None:
        np.copyto(out[index], arr[index], casting="unsafe")

    return _run_blocked(fill, out, _outer_axis(out))


def copy(arr: Any) -> Any:
    """``np.array(arr, copy=True)`` (its memory order kept); big float arrays in row blocks on
    every core (``SPLIT_STEP_ELEMENTWISE``: the engine's first copy of each leaf's gradient,
    ResNet-18's 1-2.4M-element weights)."""
    if (
        not SPLIT_STEP_ELEMENTWISE
        or type(arr) is not np.ndarray
        or not arr.ndim
        or arr.dtype not in _SPLIT_FLOATS
        or workers_for(arr.size, STEP_SPLIT_ELEMENTS) == 1
    ):
        return np.array(arr, copy=True)
    out = np.empty_like(arr)

    def fill(index: tuple[Any, ...], s: int, e: int) -> None:
        np.copyto(out[index], arr[index])

    return _run_blocked(fill, out, _outer_axis(out), STEP_SPLIT_ELEMENTS)


class ThreadedUfunc:
    """A ufunc whose plain calls on big arrays run in blocks on every core (``blocked_ufunc``).
    Keyword calls (``out=``, ``where=``), small arrays and every attribute (``reduce``, ``at``,
    ``accumulate``, ``nin``) are the ufunc's own."""

    __slots__ = ("ufunc",)

    def __init__(self, ufunc: Any) -> None:
        self.ufunc = ufunc

    def __getattr__(self, name: str) -> Any:
        return getattr(self.ufunc, name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not kwargs:
            for a in args:
                if type(a) is np.ndarray and a.size >= _SMALLEST_SPLIT:
                    threshold = _threshold(a)
                    if a.size >= threshold:
                        return blocked_ufunc(self.ufunc, args, threshold)
        elif SPLIT_STEP_ELEMENTWISE and len(kwargs) == 1:
            out = kwargs.get("out")
            if isinstance(out, tuple) and len(out) == 1:
                out = out[0]
            if type(out) is np.ndarray and out.size >= STEP_SPLIT_ELEMENTS and self.ufunc.nout == 1:
                return blocked_into(self.ufunc, args, out)
        return self.ufunc(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<threaded ufunc {self.ufunc.__name__!r}>"


# The ufuncs that large activations and gradients go through in a training step.
THREADED_UFUNCS = (
    "add", "subtract", "multiply", "divide", "true_divide", "maximum", "minimum", "negative",
    "greater", "greater_equal", "less", "less_equal", "equal", "not_equal", "exp", "log",
    "sqrt", "tanh", "abs", "absolute", "square",
)  # fmt: skip


def threaded_ufuncs() -> dict[str, ThreadedUfunc]:
    """``THREADED_UFUNCS`` by name, each wrapped in a ``ThreadedUfunc``."""
    return {name: ThreadedUfunc(getattr(np, name)) for name in THREADED_UFUNCS}
