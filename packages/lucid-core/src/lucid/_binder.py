"""The binder: attaches to ``lucid.Tensor`` every method that calls an op (layer 5).

``lucid._tensor`` defines the class bare (storage, dtype/device, autograd fields); the ops
import Tensor. Here, above both, the dunders, the in-place methods and the op methods are
written as methods of ``_Methods`` (a Tensor subclass that is never instantiated, so that they
read as ordinary methods and type-check against Tensor) and copied onto Tensor by
:func:`bind`, with every op whose table row says ``method`` (as JAX's ``array_methods.py``).
``tools/gen_stubs.py`` declares them for type checkers in ``lucid/_tensor_methods.py``.
"""

from __future__ import annotations

import inspect
import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from lucid import (
    _creation,
    _legacy,
    _memory_format,
    _replay,
    autograd,
    dtypes,
    kernels,
    ops,
    special,
)
from lucid._tensor import Size, Tensor
from lucid.autograd import grad_mode
from lucid.autograd.function import ops_watched, unrecorded
from lucid.autograd.inplace import check_inplace, inplace_result
from lucid.backends import get_backend
from lucid.ops._util import scalar_type_name
from lucid.ops.shape import broadcast_cast
from lucid.utils.to_args import parse_to


def _deprecated_overload(name: str, old: str, new: str) -> None:
    warnings.warn(
        f"This overload of {name} is deprecated:\n\t{name}({old})\nConsider using one of the "
        f"following signatures instead:\n\t{name}({new})",
        UserWarning,
        stacklevel=4,
    )


def _is_number(x: Any) -> bool:
    return isinstance(x, (bool, int, float)) and not isinstance(x, Tensor)


# Elements per piece of ``_scaled_inplace``: the scaled piece stays in cache for the add.
_INPLACE_CHUNK = 1 << 16
_ALPHAS = (int, float)  # exact types: NumPy scalars, bools and tensors take the ops' rules


def _scaled_add_kernel(backend: Any, a: Any, b: Any, alpha: Any, subtract: bool) -> bool:
    """``a += b * alpha`` (``subtract``: ``-=``) by the backend's ``kernels.SCALED_ADD``;
    False where it has none or declines."""
    kernel = kernels.SCALED_ADD.find(backend)
    return kernel is not None and bool(kernel.forward(backend, a, b, alpha, subtract))


def _unrecorded_numpy(t: Tensor, other: Tensor | None) -> Any:
    """``t``'s backend where an in-place op on ``t`` (and ``other``) can be one ufunc writing into
    its NumPy array: nothing recorded or watched (grad mode off or nothing requiring grad, no
    ``lucid.compile`` capture, no observers or vmap), both floating NumPy arrays of that backend,
    ``t``'s writable, NumPy 2's weak Python scalars; else None (the ops' path runs)."""
    if _replay.listeners or ops_watched():
        return None
    if grad_mode._state.enabled and (
        t.requires_grad
        or (other is not None and other.requires_grad)
        or (t._base is not None and t._base.requires_grad)
    ):
        return None
    a, backend = t._data, t._backend
    if type(a) is not np.ndarray or a.dtype.kind not in "fc":
        return None
    if other is not None and (type(other._data) is not np.ndarray or other._backend is not backend):
        return None
    if backend.inplace_out(a) is None or not backend.weak_python_scalars:
        return None
    return backend


def _scaled_inplace(ufunc: Any, t: Tensor, other: Any, alpha: Any) -> bool:
    """``t.add_(other, alpha=)`` (``ufunc`` ``np.add``; ``np.subtract`` for ``sub_``) straight
    into ``t``'s NumPy array where nothing is recorded and no promotion or broadcasting is
    involved (an SGD step's ``p.add_(p.grad, alpha=-lr)``); False where the op's path must run.

    The op computes ``other * alpha`` into a new array, ``t + that`` into another and copies
    it into ``t``: three passes over memory and two temporaries of ``t``'s size. Here the same
    two ufuncs with the same operands run on pieces that stay in cache, the scaled piece in a
    small scratch and the sum written into ``t``: the same bits, ~3x faster on a 4.6M-element
    model (docs/performance.md, issue 30)."""
    if type(other) is not Tensor or type(alpha) not in _ALPHAS:
        return False
    backend = _unrecorded_numpy(t, other)
    if backend is None:
        return False
    a, b = t._data, other._data
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a is not b and np.may_share_memory(a, b):
        return False  # a partial overlap: the pieces would read what they already wrote
    quiet = backend.fp_quiet
    token = None if quiet is None else quiet[0].set(quiet[1])
    try:
        if alpha == 1:
            ufunc(a, b, out=a)
        elif (ufunc is np.add or ufunc is np.subtract) and _scaled_add_kernel(
            backend, a, b, alpha, ufunc is np.subtract
        ):
            pass  # one compiled pass (``kernels.SCALED_ADD``), the same bits
        elif a.size <= _INPLACE_CHUNK or not (a.flags.c_contiguous and b.flags.c_contiguous):
            ufunc(a, np.multiply(b, alpha), out=a)
        else:
            fa, fb = a.reshape(-1), b.reshape(-1)
            scratch = np.empty(_INPLACE_CHUNK, dtype=a.dtype)
            for start in range(0, fa.size, _INPLACE_CHUNK):
                pa, pb = fa[start : start + _INPLACE_CHUNK], fb[start : start + _INPLACE_CHUNK]
                s = scratch[: pa.size]
                ufunc(pa, np.multiply(pb, alpha, out=s), out=pa)
    finally:
        if quiet is not None:
            quiet[0].reset(token)
    t._counter().value += 1
    return True


def _scale_inplace(t: Tensor, value: float) -> bool:
    """``t.mul_(value)`` for a Python number as one ufunc into ``t``'s NumPy array where nothing
    is recorded (``clip_grad_norm_``'s scaling of every gradient): the op's multiply, the same
    bits, without its new array and the copy back (docs/performance.md, issue 30); False where
    the op's path must run."""
    backend = _unrecorded_numpy(t, None)
    if backend is None:
        return False
    quiet = backend.fp_quiet
    token = None if quiet is None else quiet[0].set(quiet[1])
    try:
        np.multiply(t._data, value, out=t._data)
    finally:
        if quiet is not None:
            quiet[0].reset(token)
    t._counter().value += 1
    return True


def _scalar_first(name: str, scalar: str, tensor: str, other: Any, alpha: Any) -> tuple[Any, Any]:
    """torch still takes the pre-1.5 order ``add_(Number alpha, Tensor other)`` (seen in old
    programs as ``p.data.add_(-lr, p.grad.data)``), with a deprecation warning: (other, alpha)."""
    if _is_number(other) and isinstance(alpha, Tensor):
        _deprecated_overload(
            name, f"Number {scalar}, Tensor {tensor}", f"Tensor {tensor}, *, Number {scalar} = 1"
        )
        return alpha, other
    return other, alpha


def _value_first(name: str, tensor1: Any, tensor2: Any, value: Any) -> tuple[Any, Any, Any]:
    """torch's deprecated ``addcmul_(Number value, Tensor tensor1, Tensor tensor2)`` order."""
    if _is_number(tensor1) and isinstance(value, Tensor):
        _deprecated_overload(
            name,
            "Number value, Tensor tensor1, Tensor tensor2",
            "Tensor tensor1, Tensor tensor2, *, Number value = 1",
        )
        return tensor2, value, tensor1
    return tensor1, tensor2, value


def _reflected_self(name: str, self: Any) -> None:
    """``Tensor.__radd__(2, t)`` called unbound: torch's TypeError for a non-tensor self."""
    if not isinstance(self, Tensor):
        raise TypeError(
            f"descriptor '{name}' requires a 'Tensor' object but received a '{type(self).__name__}'"
        )


class _Methods(Tensor):
    """The methods :func:`bind` copies onto Tensor (never instantiated)."""

    __slots__ = ()

    # Sparse layouts are stored dense (lucid.sparse): the conversions are the identity.
    def to_sparse(self, *args: Any, **kwargs: Any) -> Tensor:
        """``self``: lucid stores sparse tensors dense (see :mod:`lucid.sparse`)."""
        return self

    def to_sparse_coo(self) -> Tensor:
        """``self``: lucid stores sparse tensors dense (see :mod:`lucid.sparse`)."""
        return self

    def to_dense(self, dtype: Any = None, *, masked_grad: Any = None) -> Tensor:
        """``self`` (cast to ``dtype`` if given): lucid's tensors are dense already."""
        return self if dtype is None else self.to(dtype)

    def coalesce(self) -> Tensor:
        """``self``: a dense-stored sparse tensor has its duplicates summed already."""
        return self

    def is_coalesced(self) -> bool:
        """True: a dense-stored sparse tensor has its duplicates summed already."""
        return True

    def new_tensor(self, data: Any, dtype: Any = None, device: Any = None,
                   requires_grad: bool = False) -> Tensor:  # fmt: skip
        """A new tensor from ``data``, with this tensor's dtype and device unless given."""
        dtype, device = dtype or self.dtype, device or self.device
        return _creation.tensor(data, dtype=dtype, device=device, requires_grad=requires_grad)

    def new_full(self, size: Any, fill_value: Any, dtype: Any = None, device: Any = None,
                 requires_grad: bool = False) -> Tensor:  # fmt: skip
        """A tensor of ``size`` filled with ``fill_value``, with this tensor's dtype and device
        unless given."""
        dtype, device = dtype or self.dtype, device or self.device
        rg = requires_grad
        return _creation.full(size, fill_value, dtype=dtype, device=device, requires_grad=rg)

    def _real_part(self) -> Tensor:
        """``Tensor.real``'s value (the property lives on Tensor; the op is above it)."""
        return ops.real(self)

    def _imag_part(self) -> Tensor:
        """``Tensor.imag``'s value."""
        return ops.imag(self)

    def clone(self, *, memory_format: Any = None) -> Tensor:
        """A copy of the tensor with its own storage; gradients flow back to the original.
        ``memory_format`` (default ``lucid.preserve_format``) lays the copy out as torch's."""
        fmt = _memory_format.check(memory_format, "clone")
        if fmt is _memory_format.preserve_format:
            return ops.clone(self)
        _memory_format.check_rank(fmt, self.ndim)
        return ops.shape.to_memory_format(self, fmt)

    def contiguous(self, memory_format: Any = None) -> Tensor:
        """``self`` if it is contiguous in ``memory_format`` (default
        ``lucid.contiguous_format``), else a copy laid out so (a transposed or strided view, a
        channels-last tensor), so that ``view`` works on the result as in torch."""
        if memory_format is None and not _memory_format._marked:  # the common call, checked
            # once (per-call cost, docs/performance.md)
            dense = _dense(self)
            if dense is not None:
                if dense:
                    return self
                if unrecorded(self):  # no node to record: ToMemoryFormat's own calls on a
                    # NumPy array (_dense said so), without its Function call (generation)
                    be, arr = self._backend, self._data
                    out = _memory_format.to_layout(be.xp, arr, _memory_format.contiguous_format)
                    return Tensor.from_backend_array(be.copy(out) if out is arr else out, be)
                return ops.shape.to_memory_format(self, _memory_format.contiguous_format)
        fmt = _memory_format.check(memory_format, "contiguous")
        if fmt is _memory_format.preserve_format or memory_format is None:
            fmt = _memory_format.contiguous_format
        _memory_format.check_rank(fmt, self.ndim)
        if self.is_contiguous(memory_format=fmt):
            return self
        return ops.shape.to_memory_format(self, fmt)

    def to(self, *args: Any, **kwargs: Any) -> Tensor:
        """``to(device)``, ``to(dtype)``, ``to(device, dtype)``, ``to(other_tensor)``; with
        ``memory_format=`` (``lucid.channels_last`` ...) the result is laid out so."""
        device, dtype, _, copy, fmt = parse_to(*args, **kwargs)
        if fmt is not _memory_format.preserve_format:
            _memory_format.check_rank(fmt, self.ndim)
            if _memory_format.suggest(self.shape, self.stride()) is not fmt:
                return ops.shape.to_memory_format(self, fmt).to(device, dtype)
        out: Tensor = self
        if device is not None:
            backend = get_backend(str(device))
            if backend is not self._backend:
                out = ops.to_device(out, backend)
        if dtype is not None and dtype is not out.dtype:
            out = ops.cast(out, dtype)
        if copy and out is self:
            out = self.clone()
        return out

    def type(self, dtype: Any = None, non_blocking: bool = False) -> Any:
        """No argument: the legacy type's name (``'lucid.FloatTensor'``). With a dtype, a
        legacy type (``lucid.LongTensor``) or its name (``'torch.LongTensor'``): converted."""
        if dtype is None:
            return _legacy.type_name(self.dtype, self._backend.device.partition(":")[0])
        return self.to(_legacy.dtype_of_type(dtype))

    def backward(
        self,
        gradient: Tensor | None = None,
        retain_graph: bool | None = None,
        create_graph: bool = False,
        inputs: Any = None,
    ) -> None:
        """Compute the gradient of this tensor with respect to the graph's leaves, into their
        ``.grad``."""
        autograd.backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def __add__(self, other: Any) -> Tensor:
        return ops.add(self, other)

    def __radd__(self, other: Any) -> Tensor:
        _reflected_self("__radd__", self)
        return ops.add(self, other)  # torch's order: the graph lists self first (`2 + t`)

    def __sub__(self, other: Any) -> Tensor:
        return ops.sub(self, other)

    def __rsub__(self, other: Any) -> Tensor:
        _reflected_self("__rsub__", self)
        return ops.sub(other, self)

    def __mul__(self, other: Any) -> Tensor:
        return ops.mul(self, other)

    def __rmul__(self, other: Any) -> Tensor:
        _reflected_self("__rmul__", self)
        return ops.mul(self, other)  # torch's order: the graph lists self first (`2 * t`)

    def __truediv__(self, other: Any) -> Tensor:
        return ops.div(self, other)

    def __rtruediv__(self, other: Any) -> Tensor:
        _reflected_self("__rtruediv__", self)
        return ops.div(other, self)

    def __rdiv__(self, other: Any) -> Tensor:
        """``other / self`` (torch's Python 2 name of ``__rtruediv__``)."""
        _reflected_self("__rdiv__", self)
        return ops.div(other, self)

    def __floordiv__(self, other: Any) -> Tensor:
        return ops.floor_divide(self, other)

    def __rfloordiv__(self, other: Any) -> Tensor:
        _reflected_self("__rfloordiv__", self)
        return ops.floor_divide(other, self)

    def __mod__(self, other: Any) -> Tensor:
        return ops.remainder(self, other)

    def __rmod__(self, other: Any) -> Tensor:
        _reflected_self("__rmod__", self)
        return ops.remainder(other, self)

    def __pow__(self, other: Any) -> Tensor:
        return ops.pow(self, other)

    def __rpow__(self, other: Any) -> Tensor:
        _reflected_self("__rpow__", self)
        return ops.pow(other, self)

    def __matmul__(self, other: Any) -> Tensor:
        return ops.matmul(self, other)

    def __rmatmul__(self, other: Any) -> Tensor:
        _reflected_self("__rmatmul__", self)
        return ops.matmul(other, self)

    def __neg__(self) -> Tensor:
        return ops.neg(self)

    def __pos__(self) -> Tensor:
        return self

    def __abs__(self) -> Tensor:
        return ops.abs(self)

    def __invert__(self) -> Tensor:
        return ops.bitwise_not(self)

    def __and__(self, other: Any) -> Tensor:
        return ops.bitwise_and(self, other)

    def __or__(self, other: Any) -> Tensor:
        return ops.bitwise_or(self, other)

    def __xor__(self, other: Any) -> Tensor:
        return ops.bitwise_xor(self, other)

    def __rand__(self, other: Any) -> Tensor:
        _reflected_self("__rand__", self)
        return ops.bitwise_and(other, self)

    def __ror__(self, other: Any) -> Tensor:
        _reflected_self("__ror__", self)
        return ops.bitwise_or(other, self)

    def __rxor__(self, other: Any) -> Tensor:
        _reflected_self("__rxor__", self)
        return ops.bitwise_xor(other, self)

    def __lshift__(self, other: Any) -> Tensor:
        return ops.bitwise_left_shift(self, other)

    def __rshift__(self, other: Any) -> Tensor:
        return ops.bitwise_right_shift(self, other)

    def __rlshift__(self, other: Any) -> Tensor:
        _reflected_self("__rlshift__", self)
        return ops.bitwise_left_shift(other, self)

    def __rrshift__(self, other: Any) -> Tensor:
        _reflected_self("__rrshift__", self)
        return ops.bitwise_right_shift(other, self)

    def __eq__(self, other: Any) -> Tensor:  # type: ignore[override]
        return ops.eq(self, other)

    def __ne__(self, other: Any) -> Tensor:  # type: ignore[override]
        return ops.ne(self, other)

    def __lt__(self, other: Any) -> Tensor:
        return ops.lt(self, other)

    def __le__(self, other: Any) -> Tensor:
        return ops.le(self, other)

    def __gt__(self, other: Any) -> Tensor:
        return ops.gt(self, other)

    def __ge__(self, other: Any) -> Tensor:
        return ops.ge(self, other)

    def __getitem__(self, index: Any) -> Tensor:
        return ops.getitem(self, index)

    def __setitem__(self, index: Any, value: Any) -> None:
        ops.setitem(self, index, value)

    def __iadd__(self, other: Any) -> Tensor:
        return self.add_(other)

    def __isub__(self, other: Any) -> Tensor:
        return self.sub_(other)

    def __imul__(self, other: Any) -> Tensor:
        return self.mul_(other)

    def __itruediv__(self, other: Any) -> Tensor:
        return self.div_(other)

    # -- in-place ops ------------------------------------------------------------------------------
    def add_(self, other: Any, alpha: Any = 1) -> Tensor:
        """In-place ``add``: ``self += alpha * other`` (also torch's deprecated
        ``add_(Number alpha, Tensor other)``, with its warning)."""
        other, alpha = _scalar_first("add_", "alpha", "other", other, alpha)
        if _scaled_inplace(np.add, self, other, alpha):
            return self
        return inplace_result(self, ops.add(self, other, alpha=alpha))

    def sub_(self, other: Any, alpha: Any = 1) -> Tensor:
        """In-place ``sub``: ``self -= alpha * other`` (also torch's deprecated
        ``sub_(Number alpha, Tensor other)``, with its warning)."""
        other, alpha = _scalar_first("sub_", "alpha", "other", other, alpha)
        if _scaled_inplace(np.subtract, self, other, alpha):
            return self
        return inplace_result(self, ops.sub(self, other, alpha=alpha))

    def mul_(self, other: Any) -> Tensor:
        """In-place ``mul``."""
        if type(other) in _ALPHAS and _scale_inplace(self, other):
            return self
        return inplace_result(self, ops.mul(self, other))

    def div_(self, other: Any, *, rounding_mode: str | None = None) -> Tensor:
        """In-place ``div`` (with torch's ``rounding_mode``: None, "trunc" or "floor")."""
        return inplace_result(self, ops.div(self, other, rounding_mode=rounding_mode))

    def pow_(self, exponent: Any) -> Tensor:
        """In-place ``pow``."""
        return inplace_result(self, ops.pow(self, exponent))

    def addcmul_(self, tensor1: Any, tensor2: Any, value: Any = 1) -> Tensor:
        """In-place ``addcmul``: ``self += value * tensor1 * tensor2`` (also torch's deprecated
        ``addcmul_(Number value, Tensor tensor1, Tensor tensor2)``, with its warning)."""
        tensor1, tensor2, value = _value_first("addcmul_", tensor1, tensor2, value)
        return inplace_result(self, ops.addcmul(self, tensor1, tensor2, value=value))

    def addcdiv_(self, tensor1: Any, tensor2: Any, value: Any = 1) -> Tensor:
        """In-place ``addcdiv``: ``self += value * tensor1 / tensor2`` (also torch's deprecated
        ``addcdiv_(Number value, Tensor tensor1, Tensor tensor2)``, with its warning)."""
        tensor1, tensor2, value = _value_first("addcdiv_", tensor1, tensor2, value)
        return inplace_result(self, ops.addcdiv(self, tensor1, tensor2, value=value))

    def maximum_(self, other: Any) -> Tensor:
        """In-place ``maximum``."""
        return inplace_result(self, ops.maximum(self, other))

    def fmod_(self, other: Any) -> Tensor:
        """In-place ``fmod``."""
        return inplace_result(self, ops.fmod(self, other))

    def remainder_(self, other: Any) -> Tensor:
        """In-place ``remainder``."""
        return inplace_result(self, ops.remainder(self, other))

    def copy_(self, src: Any, non_blocking: bool = False) -> Tensor:
        """Copy ``src``'s values into this tensor, in place (broadcast, cast to this dtype);
        ``non_blocking`` changes nothing (every copy completes before it returns)."""
        src_t = src if isinstance(src, Tensor) else Tensor(src)
        if src_t._backend is not self._backend:
            src_t = src_t.to(self.device)
        return inplace_result(self, broadcast_cast(src_t, self.shape, self.dtype))

    def new_empty_strided(self, size: Any, stride: Any, dtype: Any = None, device: Any = None,
                          requires_grad: bool = False, layout: Any = None,
                          pin_memory: bool = False) -> Tensor:  # fmt: skip
        """An uninitialised tensor of ``size``, with this tensor's dtype and device unless given
        (``stride`` is checked, not kept: lucid's tensors are contiguous)."""
        dtype, device = dtype or self.dtype, device or self.device
        rg = requires_grad
        return _creation.empty_strided(size, stride, dtype=dtype, device=device, requires_grad=rg)

    def polygamma(self, n: int) -> Tensor:
        """``lucid.polygamma(n, self)``: the ``n``-th derivative of digamma."""
        return special.polygamma(n, self)

    def polygamma_(self, n: int) -> Tensor:
        """In-place ``polygamma(n)``."""
        return inplace_result(self, special.polygamma(n, self))

    def mvlgamma(self, p: int) -> Tensor:
        """``lucid.mvlgamma(self, p)``: the log of the multivariate gamma function."""
        return special.multigammaln(self, p)

    def mvlgamma_(self, p: int) -> Tensor:
        """In-place ``mvlgamma(p)``."""
        return inplace_result(self, special.multigammaln(self, p))

    def i0(self) -> Tensor:
        """``lucid.i0(self)``: the modified Bessel function of the first kind, order 0."""
        return special.i0(self)

    def i0_(self) -> Tensor:
        """In-place ``i0()``."""
        return inplace_result(self, special.i0(self))

    def igamma(self, other: Any) -> Tensor:
        """``lucid.igamma(self, other)``: the regularized lower incomplete gamma function."""
        return special.gammainc(self, other)

    def igamma_(self, other: Any) -> Tensor:
        """In-place ``igamma(other)``."""
        return inplace_result(self, special.gammainc(self, other))

    def igammac(self, other: Any) -> Tensor:
        """``lucid.igammac(self, other)``: the regularized upper incomplete gamma function."""
        return special.gammaincc(self, other)

    def igammac_(self, other: Any) -> Tensor:
        """In-place ``igammac(other)``."""
        return inplace_result(self, special.gammaincc(self, other))

    def zero_(self) -> Tensor:
        """Fill the tensor with zeros, in place."""
        return self.fill_(0)

    def fill_(self, value: Any) -> Tensor:
        """Fill the tensor with ``value``, in place."""
        check_inplace(self)
        xp = self._backend.xp
        v = value.item() if isinstance(value, Tensor) else value
        if dtypes.FLOAT8_NATIVE and self._data.dtype in dtypes.FLOAT8_NATIVE:
            v = self._backend.asarray(v, self.dtype)  # rounded as torch rounds into float8
        filled = xp.full(self._data.shape, v, dtype=self._data.dtype)
        return inplace_result(self, Tensor.from_backend_array(filled, self._backend))

    def uniform_(
        self, a: float = 0.0, b: float = 1.0, generator: Any = None, **bounds: float
    ) -> Tensor:
        """Fill the tensor with samples uniform on ``[a, b)``, in place. torch names the
        bounds ``from`` and ``to`` (``from`` is a Python keyword: ``uniform_(**{"from": 0})``),
        taken here through ``bounds``."""
        unknown = set(bounds) - {"from", "to"}
        if unknown:
            raise TypeError(f"uniform_() got an unexpected keyword argument {sorted(unknown)[0]!r}")
        a, b = bounds.get("from", a), bounds.get("to", b)
        if a > b:
            raise RuntimeError(
                f"uniform_ expects to return a [from, to) range, but found from={a} > to={b}"
            )
        r = _creation.rand(*self.shape, dtype=self.dtype, device=self.device, generator=generator)
        with grad_mode.no_grad():
            return self.copy_(r * (b - a) + a)

    def normal_(self, mean: float = 0.0, std: float = 1.0, generator: Any = None) -> Tensor:
        """Fill the tensor with samples from ``N(mean, std**2)``, in place."""
        if std < 0:
            raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
        r = _creation.randn(*self.shape, dtype=self.dtype, device=self.device, generator=generator)
        with grad_mode.no_grad():
            return self.copy_(r * std + mean)

    def float_power_(self, exponent: Any) -> Tensor:
        """In-place ``float_power``: ``self`` must already be float64 (complex128), as in
        torch, since the result is computed in double precision."""
        wide = dtypes.complex128 if self.dtype.is_complex else dtypes.float64
        if self.dtype is not wide:
            raise RuntimeError(
                f"the base given to float_power_ has dtype {scalar_type_name(self.dtype)} but "
                f"the operation's result requires dtype {scalar_type_name(wide)}"
            )
        return inplace_result(self, ops.float_power(self, exponent))

    def exponential_(self, lambd: float = 1.0, *, generator: Any = None) -> Tensor:
        """Fill with samples of the exponential distribution of rate ``lambd``, in place."""
        _float_fill(self, "exponential_")
        if not lambd > 0:
            raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
        u = _uniform(self, generator)
        return _fill_from(self, -(-u).log1p() / lambd)

    def cauchy_(self, median: float = 0.0, sigma: float = 1.0, *, generator: Any = None) -> Tensor:
        """Fill with samples of the Cauchy distribution (``median``, scale ``sigma``)."""
        _float_fill(self, "cauchy_")
        if not sigma > 0:
            raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma}")
        u = _uniform(self, generator)
        return _fill_from(self, (math.pi * (u - 0.5)).tan() * sigma + median)

    def log_normal_(self, mean: float = 1.0, std: float = 2.0, *, generator: Any = None) -> Tensor:
        """Fill with ``exp(N(mean, std**2))`` samples, in place."""
        _float_fill(self, "log_normal_")
        if not std > 0:
            raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std}")
        r = _creation.randn(*self.shape, dtype=self.dtype, device=self.device, generator=generator)
        return _fill_from(self, (r * std + mean).exp())

    def geometric_(self, p: float, *, generator: Any = None) -> Tensor:
        """Fill with the number of Bernoulli(``p``) trials up to the first success (1, 2, ...)."""
        if not 0 < p < 1:
            raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p}")
        u = _uniform(self, generator)
        return _fill_from(self, ((-u).log1p() / math.log1p(-p)).ceil().clamp(min=1))

    def bernoulli_(self, p: Any = 0.5, *, generator: Any = None) -> Tensor:
        """Fill with 0/1 samples that are 1 with probability ``p`` (a number or a tensor that
        broadcasts to ``self``), in place."""
        if isinstance(p, Tensor):
            probs = p
            if bool(((probs < 0) | (probs > 1)).any()):
                raise RuntimeError("bernoulli expects all probabilities to be in [0, 1]")
        elif not 0 <= p <= 1:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
        else:
            probs = p
        u = _uniform(self, generator)
        return _fill_from(self, u < probs)

    def random_(self, *args: Any, generator: Any = None, **kwargs: Any) -> Tensor:
        """Fill with integers uniform on ``[from, to)``: ``random_(to)``, ``random_(from,
        to)``; without ``to``, up to the largest integer the dtype holds exactly."""
        low, high = 0, kwargs.pop("to", None)
        low = kwargs.pop("from", low)
        if kwargs:
            raise TypeError(f"random_() got unexpected keyword arguments {sorted(kwargs)}")
        if len(args) == 1:
            high = args[0]
        elif len(args) == 2:
            low, high = args
        elif len(args) > 2:
            raise TypeError(f"random_() takes at most 2 positional arguments ({len(args)} given)")
        if high is None:
            high = _random_top(self.dtype)
        if not low < high:
            raise RuntimeError(
                f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}"
            )
        r = _creation.randint(int(low), int(high), tuple(self.shape), generator=generator,
                              device=self.device)  # fmt: skip
        return _fill_from(self, r)

    def squeeze_(self, dim: Any = None) -> Tensor:
        """In-place ``squeeze``: this tensor takes the new shape (see :func:`_reshape_inplace`)."""
        return _reshape_inplace(self, ops.squeeze(self, dim), "squeeze_")

    def unsqueeze_(self, dim: int) -> Tensor:
        """In-place ``unsqueeze``: this tensor takes the new shape."""
        return _reshape_inplace(self, ops.unsqueeze(self, dim), "unsqueeze_")

    def transpose_(self, dim0: int, dim1: int) -> Tensor:
        """In-place ``transpose``: this tensor takes the new layout."""
        return _reshape_inplace(self, ops.transpose(self, dim0, dim1), "transpose_")

    def swapaxes_(self, axis0: int, axis1: int) -> Tensor:
        """In-place ``swapaxes`` (``transpose_``)."""
        return _reshape_inplace(self, ops.transpose(self, axis0, axis1), "swapaxes_")

    def swapdims_(self, dim0: int, dim1: int) -> Tensor:
        """In-place ``swapdims`` (``transpose_``)."""
        return _reshape_inplace(self, ops.transpose(self, dim0, dim1), "swapdims_")

    def resize_(self, size: Any = None, *sizes: Any, memory_format: Any = None) -> Tensor:
        """Give this tensor the shape ``size`` in place: the elements kept in row-major
        order, new ones zero (torch leaves them uninitialised); outside autograd only."""
        if size is None:
            raise TypeError("resize_() missing 1 required positional argument: 'size'")
        shape = ops._util.shape_arg((size, *sizes))
        n = 1
        for k in shape:
            n *= k
        flat = self.reshape(-1)
        if n <= flat.numel():
            data = flat[:n].reshape(shape)
        else:
            data = ops.cat([flat, flat.new_zeros((n - flat.numel(),))]).reshape(shape)
        return _reshape_inplace(self, data.clone(), "resize_")

    def resize_as_(self, the_template: Tensor, memory_format: Any = None) -> Tensor:
        """``resize_(the_template.shape)``."""
        return self.resize_(the_template.shape)

    def as_strided_(self, size: Any, stride: Any, storage_offset: Any = None) -> Tensor:
        """In-place ``as_strided``: this tensor takes the elements ``as_strided`` addresses
        (lucid's ``as_strided`` copies; see docs/differences.md)."""
        out = ops.as_strided(self, size, stride, storage_offset)
        return _reshape_inplace(self, out, "as_strided_")

    def set_(self, source: Any = None, storage_offset: Any = 0, size: Any = None,
             stride: Any = None) -> Tensor:  # fmt: skip
        """This tensor takes ``source``'s data and shape (sharing it; with ``size`` /
        ``stride`` / ``storage_offset``, the elements ``as_strided`` addresses, copied); no
        ``source``: an empty tensor. lucid has no storage objects: ``source`` is a Tensor."""
        if source is None:
            return _reshape_inplace(self, self.new_empty((0,)), "set_")
        if not isinstance(source, Tensor):
            raise TypeError(
                f"set_(): lucid takes a Tensor source (it has no storage objects), got "
                f"{type(source).__name__}"
            )
        if source.dtype is not self.dtype:
            raise RuntimeError(
                f"Could not set tensor of type {self.dtype} to a tensor of type {source.dtype}"
            )
        if size is None and not storage_offset:
            return _reshape_inplace(self, source, "set_")
        strides = stride if stride is not None else None
        if strides is None:
            shape = tuple(size)
            strides = tuple(int(math.prod(shape[i + 1 :])) for i in range(len(shape)))
        out = ops.as_strided(source, size, strides, storage_offset)
        return _reshape_inplace(self, out, "set_")

    def is_set_to(self, tensor: Tensor) -> bool:
        """Whether both tensors hold the same array with the same shape and strides."""
        if self._data is tensor._data:
            return True
        mine = getattr(self._data, "__array_interface__", None)
        theirs = getattr(tensor._data, "__array_interface__", None)
        return bool(
            mine is not None
            and theirs is not None
            and mine["data"][0] == theirs["data"][0]
            and self.shape == tensor.shape
            and self.stride() == tensor.stride()
            and self.dtype is tensor.dtype
        )

    def map2_(self, x: Tensor, y: Tensor, callable: Callable[..., Any]) -> Tensor:  # noqa: A002
        """``self[i] = callable(self[i], x[i], y[i])`` for every element, in place (``x`` and
        ``y`` broadcast to this tensor; a Python call per element, as torch's CPU-only one)."""
        fn = np.frompyfunc(callable, 3, 1)
        host = np.asarray(fn(self.numpy(), x.detach().numpy(), y.detach().numpy()))
        values = _creation.tensor(host.astype(self.numpy().dtype), device=self.device)
        with grad_mode.no_grad():
            return self.copy_(values)

    def as_subclass(self, cls: Any) -> Tensor:
        """A ``cls`` instance (a Tensor subclass) sharing this tensor's data and, where it
        requires grad, attached to its graph (an alias); ``cls.__init__`` is not called."""
        if not (isinstance(cls, type) and issubclass(cls, Tensor)):
            raise TypeError(f"as_subclass(): expected a Tensor subclass, got {cls!r}")
        alias = ops.shape.Reshape.apply(self, self.shape) if self.requires_grad else self.detach()
        out: Tensor = object.__new__(cls)
        for name in Tensor.__slots__:
            if not name.startswith("__") and hasattr(alias, name):
                object.__setattr__(out, name, getattr(alias, name))
        return out

    def module_load(self, other: Tensor, assign: bool = False) -> Tensor:
        """How ``Module.load_state_dict`` turns ``other`` into this parameter's new value:
        ``other`` detached with ``assign``, else ``self.copy_(other)`` detached."""
        if assign:
            return other.detach()
        with grad_mode.no_grad():
            return self.copy_(other).detach()

    def t_(self) -> Tensor:
        """In-place ``t``: this tensor takes the transposed layout."""
        return _reshape_inplace(self, ops.t(self), "t_")

    def bernoulli(self, p: Any = None, *, generator: Any = None) -> Tensor:
        """0/1 samples with probability ``self`` (or ``p``) (``lucid.bernoulli``)."""
        return ops.sampling.bernoulli(self, p, generator=generator)

    def multinomial(self, num_samples: int, replacement: bool = False, *,
                    generator: Any = None) -> Tensor:  # fmt: skip
        """Indices drawn from the rows of ``self`` as weights (``lucid.multinomial``)."""
        return ops.sampling.multinomial(self, num_samples, replacement, generator=generator)

    def fill_diagonal_(self, fill_value: Any, wrap: bool = False) -> Tensor:
        """Fill the main diagonal (all dims equal, or a tall 2-D matrix; ``wrap`` restarts it
        every ``ncols + 1`` rows), in place."""
        n = self.ndim
        if n < 2:
            raise RuntimeError("dimensions must larger than 1")
        if n > 2 and len(set(self.shape)) != 1:
            raise RuntimeError("all dimensions of input must be of equal length")
        size = min(self.shape)
        if n == 2 and wrap and self.shape[0] > self.shape[1] + 1:
            step = self.shape[1] + 1
            rows = [r for r in range(self.shape[0]) if r % step < self.shape[1]]
            pos: tuple[Any, ...] = (rows, [r % step for r in rows])
        else:
            pos = tuple([list(range(size))] * n)
        index = tuple(_creation.tensor(p, dtype=dtypes.int64, device=self.device) for p in pos)
        mask = self.new_zeros(self.shape, dtype=dtypes.bool_)
        mask[index] = True
        return inplace_result(self, ops.masked_fill(self, mask, fill_value))

    def is_contiguous(self, memory_format: Any = None) -> bool:
        """Whether the layout is row-major (a transposed or strided view, a channels-last
        tensor is not), or with ``memory_format=lucid.channels_last(_3d)``, dense in that
        order (False for a tensor of another rank), as torch's."""
        if memory_format is None and not _memory_format._marked:
            dense = _dense(self)
            if dense is not None:
                return dense
        fmt = _memory_format.check(memory_format, "is_contiguous")
        strides = ops.shape.layout_strides(self)
        if fmt is _memory_format.channels_last or fmt is _memory_format.channels_last_3d:
            return _memory_format.is_channels_last_contiguous(fmt, self.shape, self.stride())
        return strides is None or ops.shape.is_contiguous_layout(self.shape, strides)

    def stride(self, dim: int | None = None) -> Any:
        """The element strides (row-major where lucid does not know the layout)."""
        strides = ops.shape.layout_strides(self)
        if strides is None:
            out, acc = [], 1
            for s in reversed(self.shape):
                out.append(acc)
                acc *= max(s, 1)
            strides = tuple(reversed(out))
        return strides if dim is None else strides[dim]

    def data_ptr(self) -> int:
        """The address of the first element (NumPy arrays); on backends that hide it, an id
        that tensors sharing one array (``detach()``, ``.data``) have in common."""
        ctypes = getattr(self._data, "ctypes", None)
        return int(ctypes.data) if ctypes is not None else id(self._data)

    def storage_offset(self) -> int:
        """Elements between the start of the base tensor's data and this view's first one (0
        for a tensor that is no view, or where the backend hides addresses)."""
        base = self._base
        if base is None or getattr(self._data, "ctypes", None) is None:
            return 0
        return (self.data_ptr() - base.data_ptr()) // max(int(self.dtype.itemsize), 1)

    def apply_(self, callable: Callable[[Any], Any]) -> Tensor:  # noqa: A002
        """Replace each element ``x`` by ``callable(x)``, in place (Python-speed; outside
        autograd, as torch)."""
        values = [callable(v) for v in self.reshape(-1).tolist()]
        new = _creation.tensor(values, dtype=self.dtype, device=self.device).reshape(self.shape)
        return _fill_from(self, new)

    def map_(self, tensor: Tensor, callable: Callable[[Any, Any], Any]) -> Tensor:  # noqa: A002
        """Replace each element ``x`` by ``callable(x, y)`` with ``y`` from ``tensor``
        (broadcast), in place."""
        other = tensor.expand(self.shape).reshape(-1).tolist()
        values = [callable(a, b) for a, b in zip(self.reshape(-1).tolist(), other)]
        new = _creation.tensor(values, dtype=self.dtype, device=self.device).reshape(self.shape)
        return _fill_from(self, new)

    def ndimension(self) -> int:
        """The number of dimensions (``dim()``)."""
        return self.ndim

    def get_device(self) -> int:
        """-1 for CPU tensors (torch's convention), else the device index (0)."""
        return -1 if self.is_cpu else 0

    def is_inference(self) -> bool:
        """False: lucid has no inference tensors (``inference_mode`` is ``no_grad``)."""
        return False

    def is_nested(self) -> bool:
        """False: lucid has no nested tensors."""
        return False

    def is_distributed(self) -> bool:
        """False: no lucid tensor is a distributed tensor."""
        return False

    def cfloat(self, memory_format: Any = None) -> Tensor:
        """This tensor as complex64 (``self.to(lucid.complex64)``)."""
        return self.to(dtypes.complex64, memory_format=memory_format)

    def cdouble(self, memory_format: Any = None) -> Tensor:
        """This tensor as complex128 (``self.to(lucid.complex128)``)."""
        return self.to(dtypes.complex128, memory_format=memory_format)

    def norm(self, p: Any = "fro", dim: Any = None, keepdim: bool = False,
             dtype: Any = None) -> Tensor:  # fmt: skip
        """The ``p``-norm over ``dim`` (``lucid.norm(self, ...)``; the method has no ``out``)."""
        return ops.norm(self, p, dim, keepdim, dtype=dtype)

    def split(self, split_size: Any, dim: int = 0) -> tuple[Tensor, ...]:
        """Pieces of ``split_size`` along ``dim`` (a list: those sizes; ``lucid.split``)."""
        return ops.split(self, split_size, dim)

    def new(self, *args: Any, device: Any = None) -> Tensor:
        """torch's legacy constructor on this tensor's dtype: ``t.new(2, 3)`` (or a
        ``lucid.Size``) is uninitialized of that size, ``t.new([1, 2])`` holds the data,
        ``t.new()`` is empty."""
        if len(args) == 1 and not isinstance(args[0], (int, Size)):  # data, not a size
            return _creation.tensor(args[0], dtype=self.dtype, device=device or self.device)
        size = args[0] if len(args) == 1 else (args or (0,))
        return self.new_empty(size, device=device)

    def is_signed(self) -> bool:
        """Whether the dtype holds negative values (every dtype but bool and uint8)."""
        return self.dtype.name not in ("bool", "uint8")

    def dim_order(self, *, ambiguity_check: Any = False) -> tuple[int, ...]:
        """The dims from outermost to innermost in memory (``torch.Tensor.dim_order``): by
        stride, largest first, ties in dim order (``(0, 2, 3, 1)`` for channels-last)."""
        strides = self.stride()
        return tuple(sorted(range(self.dim()), key=lambda d: -strides[d]))

    def const_data_ptr(self) -> int:
        """``data_ptr()``, for read-only use (``torch.Tensor.const_data_ptr``)."""
        result: int = self.data_ptr()
        return result

    def resize(self, *sizes: Any) -> Tensor:
        """torch's deprecated non-inplace resize: the same elements in shape ``sizes`` (the
        number of elements must not change), with gradient."""
        import warnings

        shape = tuple(sizes[0]) if len(sizes) == 1 and not isinstance(sizes[0], int) else sizes
        numel = math.prod(int(s) for s in shape)
        if numel != self.numel():
            have = "x".join(str(s) for s in self.shape)
            want = "x".join(str(s) for s in shape)
            raise RuntimeError(
                f"requested resize to {want} ({numel} elements in total), but the given tensor "
                f"has a size of {have} ({self.numel()} elements). autograd's resize can only "
                "change the shape of a given tensor, while preserving the number of elements. "
            )
        warnings.warn("non-inplace resize is deprecated", UserWarning, stacklevel=2)
        return self.reshape(shape)

    def resize_as(self, tensor: Tensor) -> Tensor:
        """torch's deprecated non-inplace ``resize_as``: :meth:`resize` to ``tensor``'s shape."""
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            out = self.resize(tuple(tensor.shape))
        warnings.warn("non-inplace resize_as is deprecated", UserWarning, stacklevel=2)
        return out

    def conj_physical_(self) -> Tensor:
        """In-place ``conj_physical``: the imaginary parts negated (real tensors unchanged)."""
        if self.dtype.is_complex:
            self.copy_(self.conj_physical())
        return self

    def hardshrink(self, lambd: float = 0.5) -> Tensor:
        """``nn.functional.hardshrink(self, lambd)``: 0 where ``|self| <= lambd``."""
        from lucid import _siblings

        out: Tensor = _siblings.sibling_attribute("lucid", "hardshrink")(self, lambd)
        return out

    def prelu(self, weight: Tensor) -> Tensor:
        """``nn.functional.prelu(self, weight)``: ``weight * self`` where ``self < 0``."""
        from lucid import _siblings

        out: Tensor = _siblings.sibling_attribute("lucid", "prelu")(self, weight)
        return out

    def adjoint(self) -> Tensor:
        """The conjugate transpose of the last two dims (``mH``)."""
        return self.mH

    def char(self, memory_format: Any = None) -> Tensor:
        """``self.to(int8, memory_format=memory_format)``."""
        return self.to(dtypes.int8, memory_format=memory_format)

    def split_with_sizes(self, split_sizes: Any, dim: int = 0) -> tuple[Tensor, ...]:
        """Split into pieces of ``split_sizes`` along ``dim``."""
        return ops.split(self, list(split_sizes), dim)

    def unsafe_split(self, split_size: Any, dim: int = 0) -> tuple[Tensor, ...]:
        """``split`` (lucid's pieces are views with autograd either way)."""
        return ops.split(self, split_size, dim)

    def unsafe_chunk(self, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
        """``chunk``."""
        return ops.chunk(self, chunks, dim)

    def narrow_copy(self, dim: int, start: int, length: int) -> Tensor:
        """A copy of ``narrow(dim, start, length)``."""
        return ops.narrow_copy(self, dim, start, length)

    # -- methods that call ops ---------------------------------------------------------------------
    def add(self, other: Any, alpha: Any = 1) -> Tensor:
        """``self + alpha * other`` (``lucid.add``; also torch's deprecated
        ``add(Number alpha, Tensor other)``, with its warning)."""
        other, alpha = _scalar_first("add", "alpha", "other", other, alpha)
        return ops.add(self, other, alpha=alpha)

    def sub(self, other: Any, alpha: Any = 1) -> Tensor:
        """``self - alpha * other`` (``lucid.sub``; also torch's deprecated
        ``sub(Number alpha, Tensor other)``, with its warning)."""
        other, alpha = _scalar_first("sub", "alpha", "other", other, alpha)
        return ops.sub(self, other, alpha=alpha)

    def mul(self, other: Any) -> Tensor:
        """``self * other`` (``lucid.mul``)."""
        return ops.mul(self, other)

    def div(self, other: Any, rounding_mode: str | None = None) -> Tensor:
        """``self / other``, with optional ``"trunc"`` or ``"floor"`` rounding (``lucid.div``)."""
        return ops.div(self, other, rounding_mode=rounding_mode)

    def where(self, condition: Any, other: Any) -> Tensor:
        """``self`` where ``condition`` is True, else ``other`` (``lucid.where``)."""
        out: Tensor = ops.where(condition, self, other)
        return out


def _dense(t: Tensor) -> bool | None:
    """``t.is_contiguous()`` without a channels-last tensor about, from NumPy's flags where
    ``t`` holds a NumPy array (``layout_strides``' rule: a computed tensor is contiguous, a
    view is if its base is not dense or it is row-major itself); None elsewhere."""
    base = t._base
    if base is None:
        return True
    bd = base._data
    if type(bd) is not np.ndarray:
        return None
    return not bd.flags.c_contiguous or bool(t._data.flags.c_contiguous)


def _fill_from(t: Tensor, values: Tensor) -> Tensor:
    """``t`` filled with ``values`` in place (a random fill: no graph)."""
    with grad_mode.no_grad():
        return t.copy_(values)


def _uniform(t: Tensor, generator: Any) -> Tensor:
    """U[0, 1) samples of ``t``'s shape (in the default float for a non-float ``t``)."""
    dt = t.dtype if t.dtype.is_floating_point else dtypes.get_default_dtype()
    return _creation.rand(*t.shape, dtype=dt, device=t.device, generator=generator)


def _float_fill(t: Tensor, name: str) -> None:
    if not t.dtype.is_floating_point:
        raise RuntimeError(f"{name} expects a floating point tensor, got {t.dtype}")


def _reshape_inplace(t: Tensor, result: Tensor, name: str) -> Tensor:
    """``t`` takes ``result``'s shape and layout (a view of its own data), as torch's in-place
    shape methods. Only outside autograd, and for a view only where views share memory (not
    on MLX): lucid's graph and view write-back follow a tensor's shape (docs/differences.md)."""
    copied_view = t._base is not None and not t._backend.views_share_memory
    if (grad_mode.is_grad_enabled() and t.requires_grad) or copied_view:
        raise RuntimeError(
            f"{name}(): lucid changes a shape in place only for tensors that do not require "
            f"grad (and, on MLX, are not views); use the out-of-place {name[:-1]}() instead"
        )
    check_inplace(t)
    t._data = result._data
    t._counter().value += 1
    return t


def _random_top(dtype: dtypes.dtype) -> int:
    """``random_``'s default upper bound: 2**mantissa + 1 for floats, the max for ints."""
    if dtype is dtypes.bool_:
        return 2
    mantissa: dict[str, int] = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}
    if dtype.name in mantissa:
        return int(2 ** mantissa[dtype.name]) + 1
    bits = int(dtype.itemsize) * 8
    return int(2**bits) if dtype.name == "uint8" else int(2 ** (bits - 1))


# In-place twins of ops that take the op's own arguments: ``t.exp_()`` makes ``t`` hold
# ``lucid.exp(t)``; ``gen_stubs`` declares each as an alias of its op's stub (``exp_ = exp``).
INPLACE_TWINS = (
    "abs", "absolute", "acos", "acosh", "addbmm", "addmm", "addmv", "arccos", "arccosh", "arcsin",
    "arcsinh", "arctan", "arctan2", "arctanh", "asin", "asinh", "atan", "atan2", "atanh",
    "baddbmm", "bitwise_and", "bitwise_left_shift", "bitwise_not", "bitwise_or",
    "bitwise_right_shift", "bitwise_xor", "ceil", "clamp", "clamp_max", "clamp_min", "clip",
    "copysign", "cos", "cosh", "cumprod", "cumsum", "deg2rad", "digamma", "divide", "eq", "erf",
    "erfc", "erfinv", "exp", "exp2", "expm1", "fix", "floor", "floor_divide", "frac", "ge",
    "greater", "greater_equal", "gt", "hypot", "index_add", "index_copy", "index_fill",
    "index_put", "le", "lerp", "less", "less_equal", "lgamma", "log", "log10", "log1p", "log2",
    "logical_and", "logical_not", "logical_or", "logical_xor", "logit", "lt", "masked_fill",
    "multiply", "nan_to_num", "ne", "neg", "negative", "not_equal", "rad2deg", "reciprocal",
    "relu", "round", "rsqrt", "scatter", "scatter_add", "scatter_reduce", "sgn", "sigmoid",
    "sign", "sin", "sinc", "sinh", "sqrt", "square", "subtract", "tan", "tanh", "tril", "triu",
    "true_divide", "trunc", "xlogy", "addr", "gcd", "lcm", "heaviside", "ldexp", "renorm",
    "masked_scatter", "index_reduce", "put", "nextafter",
)  # fmt: skip


def _inplace_twin(name: str) -> Callable[..., Tensor]:
    op = getattr(ops, name)

    def method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        return inplace_result(self, op(self, *args, **kwargs))

    method.__name__ = method.__qualname__ = f"{name}_"
    method.__doc__ = f"In-place ``{name}``: ``self`` takes the value of ``lucid.{name}(self)``."
    setattr(method, "__wrapped__", op)  # noqa: B010  (inspect.signature shows the op's)
    return method


TWINS: dict[str, Callable[..., Tensor]] = {f"{n}_": _inplace_twin(n) for n in INPLACE_TWINS}


def methods() -> dict[str, Callable[..., Any]]:
    """Every method the binder attaches: the op methods, then those written here (which win)."""
    table = {n: fn for n, fn in ops.methods().items() if n not in vars(Tensor)}
    # Functions only: defining __eq__ makes the class body's __hash__ None, which must not reach
    # Tensor (tensors hash by identity, as torch's).
    own = {n: v for n, v in vars(_Methods).items() if inspect.isfunction(v)}
    return {**table, **TWINS, **own}


def bind() -> None:
    """Attach :func:`methods` to Tensor (idempotent; ``lucid/__init__.py`` calls it once)."""
    for name, fn in methods().items():
        if fn.__module__ == __name__:  # written here: documented and pickled as Tensor's own
            fn.__module__, fn.__qualname__ = Tensor.__module__, f"Tensor.{name}"
        setattr(Tensor, name, fn)
