"""What the multi-tensor (foreach) updates share: which parameters they can take, and the
loop that runs an update's ufuncs on the arrays themselves, writing the results into them.

A ``_multi_tensor_<name>`` update runs, for each parameter, the ufuncs its per-tensor update's
ops run, in the same order and with the same Python-number operands, so it gives the same bits.
It only leaves out the ops' per-call work (promotion, graph checks, one Tensor per result) and
their temporaries: results land in the parameter's and the state's arrays (``out=``), and
intermediate values in a small scratch buffer. It is used on backends whose arrays can be
written in place (NumPy); elsewhere (MLX) every parameter takes the per-tensor update. Each
gives ``run`` (the loop they share: which parameters it takes, the floating-point state, the
version bumps, the positions left to the per-tensor update) its hyper-parameters, its state
tensors' names and a function that updates one parameter's arrays.

Only public lucid-core API is used: ``Tensor.array``, ``Backend.inplace_out`` (the array a
ufunc may write into), ``Backend.fp_quiet`` (the ops' floating-point error state) and
``lucid.autograd.graph.increment_version`` (the version bump of any in-place op).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from lucid import Tensor
from lucid.autograd.graph import increment_version
from lucid.ops.shape import is_contiguous_layout

__all__ = [
    "CHUNK",
    "TensorUpdate",
    "array_update",
    "backend_of",
    "numbers",
    "pieces",
    "run",
    "scaled",
    "takes",
]

# Elements per piece: the arrays of one piece stay in cache from one ufunc to the next.
CHUNK = 1 << 16

_NUMBERS = (int, float)  # exact types: numpy scalars, bools and tensors take the ops' rules


def numbers(*values: Any) -> bool:
    """Whether every hyper-parameter is a plain Python ``int`` or ``float`` (a NumPy scalar or
    a tensor changes the ops' type promotion, so those groups take the per-tensor update)."""
    return all(type(v) in _NUMBERS for v in values)


def backend_of(params: Sequence[Tensor]) -> Any:
    """The backend the array-level update runs on for this group (its first parameter's), or
    None where it cannot run: no parameter, or a backend without NumPy 2's weak Python scalars
    (where the ops promote differently)."""
    if not params:
        return None
    backend = params[0].backend
    return backend if backend.weak_python_scalars else None


def takes(
    backend: Any, p: Tensor, grad: Tensor, written: Sequence[Tensor], read: Sequence[Tensor] = ()
) -> bool:
    """Whether the array-level update can take parameter ``p``: a floating tensor of
    ``backend`` whose array can be written in place, and the gradient, the state tensors it
    ``written`` into and those it only ``read`` all of its backend, dtype and shape (so no
    promotion or broadcasting is involved)."""
    a = p.array
    if p.backend is not backend or backend.inplace_out(a) is None:
        return False
    if not p.dtype.is_floating_point:
        return False
    dtype, shape = a.dtype, a.shape
    for t in (grad, *written, *read):
        b = t.array
        if t.backend is not backend or b.dtype != dtype or b.shape != shape:
            return False
    return all(backend.inplace_out(t.array) is not None for t in written)


@contextmanager
def array_update(backend: Any, written: list[Tensor]) -> Iterator[Any]:
    """Run the block under the ops' floating-point error state (no NumPy warnings, as PyTorch
    gives none), then bump the version of every tensor the block put in ``written``; yield
    ``backend.xp``."""
    quiet = backend.fp_quiet
    token = None if quiet is None else quiet[0].set(quiet[1])
    try:
        yield backend.xp
    finally:
        if quiet is not None:
            quiet[0].reset(token)
        increment_version(written)


# update(xp, p, grad, state, own): one parameter's update on the arrays, ``own`` the state
# tensors named by ``run``'s ``keys``
TensorUpdate = Callable[[Any, Tensor, Tensor, dict[str, Any], list[Tensor]], None]


def run(
    params: list[Tensor],
    grads: list[Tensor],
    states: list[dict[str, Any]],
    hyper: Sequence[Any],
    keys: Sequence[str],
    update: TensorUpdate,
    scalars: Sequence[str] = ("step",),
) -> list[int]:
    """The loop of every ``_multi_tensor_<name>`` update: ``update`` each parameter the
    array-level update can take, under ``array_update``; return the positions of the others
    (all of them where ``backend_of`` finds no backend or a ``hyper``-parameter is not a plain
    number), left to the per-tensor update.

    A parameter is taken when its state has every tensor of ``keys`` (in that order, the
    ``own`` tensors ``update`` writes into), those and the gradient pass ``takes`` and its
    ``scalars`` state entries are plain numbers.
    """
    backend = backend_of(params)
    if backend is None or not numbers(*hyper):
        return list(range(len(params)))
    rest: list[int] = []
    written: list[Tensor] = []
    with array_update(backend, written) as xp:
        for i, (p, grad, state) in enumerate(zip(params, grads, states)):
            own = [t for k in keys if (t := state.get(k)) is not None]
            plain = len(own) == len(keys)
            for k in scalars:  # a loop, not all(<generator>): this runs once per parameter
                plain = plain and type(state[k]) in _NUMBERS
            if not (plain and takes(backend, p, grad, own)):
                rest.append(i)
                continue
            written += [p, *own]
            update(xp, p, grad, state, own)
    return rest


def pieces(
    xp: Any, tensors: Sequence[Tensor], scratch: int
) -> Iterator[tuple[list[Any], list[Any]]]:
    """The tensors' arrays in matching pieces, each with ``scratch`` buffers of its shape:
    whole arrays up to ``CHUNK`` elements (or when one is not contiguous), else flat
    ``CHUNK``-element slices. Writing into a piece writes into the tensor."""
    arrays = [t.array for t in tensors]
    first = arrays[0]
    n = first.size
    if n <= CHUNK or not all(
        _contiguous(t.backend.strides(a), a.shape) for t, a in zip(tensors, arrays)
    ):
        yield arrays, [xp.empty_like(first) for _ in range(scratch)]
        return
    flat = [xp.reshape(a, (-1,)) for a in arrays]
    buffers = [xp.empty((CHUNK,), dtype=first.dtype) for _ in range(scratch)]
    for start in range(0, n, CHUNK):
        stop = min(n, start + CHUNK)
        yield [a[start:stop] for a in flat], [b[: stop - start] for b in buffers]


def scaled(xp: Any, x: Any, value: Any, out: Any) -> Any:
    """``x * value`` as the ops scale an ``alpha``/``value`` operand: not at all for 1."""
    return x if value == 1 else xp.multiply(x, value, out=out)


def _contiguous(strides: tuple[int, ...] | None, shape: tuple[int, ...]) -> bool:
    """Whether an array of ``shape`` with ``strides`` (in elements) is in C order, so that its
    flat reshape is a view of it."""
    return strides is not None and is_contiguous_layout(shape, strides)
