"""Sampling functions: normal, uniform, bernoulli, multinomial, randperm (``generator=`` aware).

Uniform and normal draws come from the backend (``backend.random_uniform`` /
``random_normal``, which honour the generator); everything else is ``xp`` arithmetic, so
the same code samples on every backend. Results carry no autograd history.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lucid import dtypes
from lucid._generator import default_generator
from lucid._replay import replayable
from lucid._tensor import Tensor
from lucid.backends import get_backend
from lucid.ops._util import index_int, scalar_type_name, write_out


def _float_dtype(dtype: Any, *tensors: Any) -> dtypes.dtype:
    if dtype is not None:
        dt = dtypes.to_dtype(dtype)
    else:
        dts = [t.dtype for t in tensors if isinstance(t, Tensor) and t.dtype.is_floating_point]
        dt = dts[0] if dts else dtypes.get_default_dtype()
    if not dt.is_floating_point:
        raise RuntimeError(f"expected a floating point dtype for sampling, got {dt}")
    return dt


def _device_of(device: Any, *tensors: Any) -> Any:
    for t in tensors:
        if isinstance(t, Tensor):
            return t.backend if device is None else get_backend(device)
    return get_backend(device)


def _broadcast_shape(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    ndim = max(len(s) for s in shapes)
    out = []
    for i in range(ndim):
        dims = {s[i - ndim + len(s)] for s in shapes if i - ndim + len(s) >= 0} - {1}
        if len(dims) > 1:
            raise RuntimeError(f"shapes {[list(s) for s in shapes]} are not broadcastable")
        out.append(dims.pop() if dims else 1)
    return tuple(out)


def _size(size: Any) -> tuple[int, ...]:
    one = index_int(size)
    if one is not None:
        return (one,)
    return tuple(int(s) for s in size)


@replayable
def normal(
    mean: Any = 0.0,
    std: Any = 1.0,
    size: Any = None,
    *,
    generator: Any = None,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    pin_memory: bool = False,
    requires_grad: bool = False,
) -> Tensor:
    """Samples from N(mean, std**2); ``mean``/``std`` may be tensors (broadcast together).

    With two numbers, ``size`` is required (as ``torch.normal``). The result carries no
    autograd history (PyTorch's gradient through ``normal`` is zero anyway). ``layout``
    (strided) and ``pin_memory`` are torch's factory arguments and change nothing.
    """
    tensors = [t for t in (mean, std) if isinstance(t, Tensor)]
    if not tensors and size is None:
        raise TypeError("normal() with a float mean and a float std needs a size argument")
    _check_std(std)
    backend = _device_of(device, *tensors)
    dt = _float_dtype(dtype, *tensors)
    shape = _size(size) if size is not None else _broadcast_shape(*(t.shape for t in tensors))
    xp = backend.xp
    z = backend.random_normal(shape, dt, generator)
    arr = xp.add(xp.multiply(z, _cast_raw(std, backend, dt)), _cast_raw(mean, backend, dt))
    out = Tensor.from_backend_array(backend.astype(arr, dt), backend)
    return out.requires_grad_(True) if requires_grad else out


def _check_std(std: Any) -> None:
    if isinstance(std, Tensor):
        if bool(std.backend.xp.any(std._data < 0)):
            raise RuntimeError("normal expects all elements of std >= 0.0")
    elif std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")


def _cast_raw(x: Any, backend: Any, dt: dtypes.dtype) -> Any:
    if isinstance(x, Tensor):
        if x.backend is not backend:
            raise RuntimeError(f"expected tensors on {backend.device}, got one on {x.device}")
        return backend.astype(x._data, dt)
    return x


@replayable
def uniform(
    low: float = 0.0,
    high: float = 1.0,
    size: Any = (),
    *,
    generator: Any = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """Samples from U[low, high) of shape ``size``."""
    if not high >= low:
        raise RuntimeError(f"uniform expects low <= high, got low={low}, high={high}")
    backend = get_backend(device)
    dt = _float_dtype(dtype)
    u = backend.random_uniform(_size(size), dt, generator)
    arr = backend.xp.add(backend.xp.multiply(u, high - low), low)
    out = Tensor.from_backend_array(backend.astype(arr, dt), backend)
    return out.requires_grad_(True) if requires_grad else out


def _bernoulli(input: Tensor, p: float | None = None, *, generator: Any = None) -> Tensor:  # noqa: A002
    """0/1 samples with probability ``input`` (or the scalar ``p``), in ``input``'s dtype.

    >>> lucid.bernoulli(lucid.tensor([0.0, 1.0]))
    tensor([0., 1.])
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"bernoulli(): argument 'input' must be Tensor, not {type(input).__name__}")
    backend, xp = input.backend, input.backend.xp
    probs = input._data if p is None else p
    if p is None:
        if not input.dtype.is_floating_point:
            raise RuntimeError(f"bernoulli expects a floating point probability tensor, got "
                               f"{input.dtype}")  # fmt: skip
        bad = xp.logical_not(xp.logical_and(probs >= 0, probs <= 1))
        if bool(xp.any(bad)):
            raise RuntimeError("bernoulli expects all probabilities to be in [0, 1]")
    elif not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli expects p to be in [0, 1], but got p={p}")
    dt = input.dtype if input.dtype.is_floating_point else dtypes.get_default_dtype()
    u = backend.random_uniform(input.shape, dt, generator)  # (MLX has no float64 uniforms)
    out = backend.astype(xp.less(u, probs), dt if p is None else input.dtype)
    return Tensor.from_backend_array(out, backend)


@replayable
def bernoulli(
    input: Tensor, p: float | None = None, *, generator: Any = None, out: Any = None
) -> Tensor:  # noqa: A002
    """0/1 samples with probability ``input`` (or the scalar ``p``), in ``input``'s dtype.

    >>> lucid.bernoulli(lucid.tensor([0.0, 1.0]))
    tensor([0., 1.])

    ``out=`` writes the result into that tensor (torch's checks: the same dtype, no
    memory shared with an input, no autograd)."""
    result: Tensor = write_out("bernoulli", _bernoulli(input, p, generator=generator), out, input)
    return result


def _multinomial(
    input: Tensor,  # noqa: A002
    num_samples: int,
    replacement: bool = False,
    *,
    generator: Any = None,
) -> Tensor:
    """Indices drawn from the categories weighted by each row of ``input`` (1-D or 2-D).

    Without replacement each draw excludes the categories already drawn (exponential-race
    sampling: the ``num_samples`` smallest of ``Exp(1) / weight``), so zero weights are never
    drawn. Returns int64 of shape ``(num_samples,)`` or ``(rows, num_samples)``.
    """
    w = _check_weights(input, num_samples, replacement)
    backend, xp = input.backend, input.backend.xp
    rows, n = w.shape
    dt = input.dtype
    if dt is dtypes.float16 or dt is dtypes.bfloat16:
        # half-precision weights draw and race in float32, as torch's CPU kernel: a half
        # uniform rounds to 1.0 about once in 256 draws (an infinite key, a log1p warning)
        # and half keys tie
        dt = dtypes.float32
        w = backend.astype(w, dt)
    u = backend.random_uniform((rows, num_samples if replacement else n), dt, generator)
    if replacement:
        idx = _sample_with_replacement(xp, w, u)
    else:
        positive = w > 0
        keys = xp.where(positive, -xp.log1p(-u) / xp.where(positive, w, 1.0), float("inf"))
        if num_samples == 1 and type(keys) is np.ndarray:
            # the first smallest key: the stable sort's first index (one token a generation
            # step; ~1 us of the argsort, the same draw)
            idx = keys.argmin(axis=-1).reshape(-1, 1)  # (the method: no wrapper)
        else:
            idx = xp.argsort(keys, axis=-1)[:, :num_samples]
    idx = backend.astype(idx, dtypes.int64)
    out = Tensor.from_backend_array(idx, backend)
    return out if input.ndim == 2 else out.reshape(num_samples)


@replayable
def multinomial(
    input: Tensor,
    num_samples: int,
    replacement: bool = False,
    *,
    generator: Any = None,
    out: Any = None,
) -> Tensor:  # noqa: A002
    """Indices drawn from the categories weighted by each row of ``input`` (1-D or 2-D).

    Without replacement each draw excludes the categories already drawn (exponential-race
    sampling: the ``num_samples`` smallest of ``Exp(1) / weight``), so zero weights are never
    drawn. Returns int64 of shape ``(num_samples,)`` or ``(rows, num_samples)``.

    ``out=`` writes the result into that tensor (torch's checks: the same dtype, no
    memory shared with an input, no autograd)."""
    if (
        isinstance(out, Tensor)
        and out.dtype is not dtypes.int64
        and isinstance(input, Tensor)
        and input.ndim in (1, 2)
        and input.dtype.is_floating_point
    ):  # torch checks out's dtype before the sample count and the weights
        raise RuntimeError(
            f"multinomial expects Long tensor out, got: {scalar_type_name(out.dtype)}"
        )
    result: Tensor = write_out(
        "multinomial",
        _multinomial(input, num_samples, replacement, generator=generator),
        out,
        input,
    )
    return result


def _check_weights(input: Any, num_samples: int, replacement: bool) -> Any:  # noqa: A002
    if not isinstance(input, Tensor):
        raise RuntimeError(f"multinomial expects a 1-D or 2-D probability tensor, got "
                           f"{type(input).__name__}")  # fmt: skip
    if input.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{scalar_type_name(input.dtype)}")  # fmt: skip
    xp = input.backend.xp
    w = input._data if input.ndim == 2 else xp.reshape(input._data, (1, -1))
    n = w.shape[1]
    if num_samples <= 0:
        raise RuntimeError(f"cannot sample n_sample <= 0 samples (got {num_samples})")
    if not replacement and num_samples > n:
        raise RuntimeError(f"cannot sample n_sample > prob_dist.size(-1) samples without "
                           f"replacement (n_sample={num_samples}, categories={n})")  # fmt: skip
    if n > 2**24:  # torch's index tensor is float while it samples
        raise RuntimeError("number of categories cannot exceed 2^24")
    if type(w) is np.ndarray and w.size and _plainly_valid(w, num_samples, replacement,
                                                          input.backend.fp_quiet):  # fmt: skip
        return w
    if replacement and num_samples > 1:
        _check_rows(input.backend.to_numpy(w))
    if bool(xp.any(xp.logical_not(xp.isfinite(w)))) or bool(xp.any(w < 0)):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    with np.errstate(over="ignore"):  # a row's sum may overflow (to inf): that is valid
        sums = xp.sum(w, axis=1)
    if bool(xp.any(sums <= 0)):
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    if not replacement and bool(xp.any(xp.sum(w > 0, axis=1) < num_samples)):
        raise RuntimeError("invalid multinomial distribution (with replacement=False, not enough "
                           "non-negative category to sample)")  # fmt: skip
    return w


def _check_rows(w: Any) -> None:
    """torch's checks where it samples with replacement (more than one sample): row by row,
    each weight in turn (not ``>= 0``, so NaN too, then not finite), then the row's sum."""
    for row in w:
        bad = np.flatnonzero(~(row >= 0) | ~np.isfinite(row))
        if bad.size:
            what = "< 0" if not row[bad[0]] >= 0 else "= infinity or NaN"
            raise RuntimeError(f"invalid multinomial distribution (encountering probability "
                               f"entry {what})")  # fmt: skip
        with np.errstate(over="ignore"):
            if not np.sum(row, dtype=np.float64) > 0:
                raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")


def _plainly_valid(w: Any, num_samples: int, replacement: bool, quiet: Any = None) -> bool:
    """Whether the NumPy weights ``w`` (rows, n > 0) pass every check of ``_check_weights``,
    in four bare reductions (generation draws one token a step, docs/performance.md): no
    negative or NaN weight (the minimum), and every row's sum finite and positive (so no
    weight is infinite). False also where a check could still pass (a finite row whose sum
    overflows): the full checks then decide."""
    low = np.minimum.reduce(w, axis=None)
    if not low >= 0:  # (NaN fails too)
        return False
    # an overflowing sum goes to the full checks, quietly (NumPy's error state set as the
    # NumPy backend's ops set it: no ``np.errstate`` object, ~1.5 us; only an overflow can
    # happen in a sum of weights >= 0)
    if quiet is None:
        with np.errstate(over="ignore"):
            total = np.add.reduce(w, axis=1)
    else:
        token = quiet[0].set(quiet[1])
        try:
            total = np.add.reduce(w, axis=1)
        finally:
            quiet[0].reset(token)
    # every sum finite and positive: the sums are >= 0 and not NaN (no weight is)
    if not (
        np.minimum.reduce(total, axis=None) > 0 and np.maximum.reduce(total, axis=None) < np.inf
    ):
        return False
    if replacement or num_samples == 1:  # a positive sum has a positive weight
        return True
    return bool(np.greater_equal(np.count_nonzero(w > 0, axis=1), num_samples).all())


def _sample_with_replacement(xp: Any, w: Any, u: Any) -> Any:
    """Inverse-CDF sampling: category j is drawn when cdf[j-1] <= u * total < cdf[j]."""
    cdf = xp.cumsum(w, axis=1)
    n = w.shape[1]
    picks = []
    for r in range(w.shape[0]):
        row = cdf[r]
        v = xp.multiply(u[r], row[n - 1])
        # u < 1, but u * total can round up to total: clip to the last category.
        picks.append(xp.minimum(xp.searchsorted(row, v, side="right"), n - 1))
    return xp.stack(picks)


@replayable
def randperm(
    n: int,
    *,
    generator: Any = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """A random permutation of ``0 .. n-1`` (int64 unless ``dtype`` says otherwise)."""
    if n < 0:
        raise RuntimeError(f"n must be non-negative, got {n}")
    backend = get_backend(device)
    dt = dtypes.int64 if dtype is None else dtypes.to_dtype(dtype)
    perm = (generator or default_generator).numpy_rng.permutation(int(n))
    out = Tensor.from_backend_array(backend.asarray(perm, dt), backend)
    return out.requires_grad_(True) if requires_grad else out
