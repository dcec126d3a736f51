"""Shape and movement ops: reshape, permute, transpose, expand, sum_to_size, clone, to_device."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from lucid import _memory_format, dtypes
from lucid._tensor import Tensor
from lucid.autograd.function import Function, ops_watched, unrecorded, unrecorded_view
from lucid.ops._registry import OpTable, op, sample
from lucid.ops._util import index_int as index_int  # public here: lucid-nn's int-or-tuple
from lucid.ops._util import ints_of as ints_of  # arguments take torch's integers too
from lucid.ops._util import normalize_dim, shape_arg
from lucid.ops.indexing import index_select

OPS = OpTable(
    op("reshape", sample((3, 4), args=((2, 6),), gg=True), sample((3, 4), args=((4, -1),),
       tag="infer")),
    op("view", sample((3, 4), args=(-1,))),
    op("unfold", sample((2, 7), args=(1, 3, 2), gg=True), sample((5,), args=(0, 2, 1), tag="1d"),
       sample((), args=(0, 1, 1), tag="0d")),
    op("view_as", sample((3, 4), (2, 6))),
    op("reshape_as", alias="view_as"),
    op("flatten", sample((2, 3, 4), args=(1,))),
    op("unflatten", sample((3, 4), args=(1, (2, 2)))),
    op("ravel", sample((2, 3, 4))),
    op("squeeze", sample((3, 1, 2), args=(1,))),
    op("unsqueeze", sample((3, 2), args=(-1,))),
    op("permute", sample((2, 3, 4), args=((2, 0, 1),), gg=True), sample((2, 3), args=((1, 0),),
       tag="2d")),
    op("transpose", sample((2, 3, 4), args=(0, 2))),
    op("swapaxes", sample((2, 3, 4), args=(0, 2)), sample((2, 3), axis0=1, axis1=0, tag="kw")),
    op("swapdims", alias="transpose"),
    op("t", sample((2, 3))),
    op("movedim", sample((2, 3, 4), args=(0, 2))),
    op("moveaxis", alias="movedim"),
    op("expand", sample((2, 1), args=(3, 2, 4))),
    op("expand_as", sample((3, 1), (3, 4))),
    op("broadcast_to", sample((3,), args=((2, 3),))),
    op("sum_to_size", sample((3, 4), args=(1, 4))),
    op("narrow", sample((2, 4), args=(1, 1, 2))),
    op("atleast_1d", sample(()), method=False),
    op("atleast_2d", sample((4,)), method=False),
    op("clone", sample((3,)), method=False),
    op("to_device", method=False, untested="moves a tensor between backends: the MLX list"),
)  # fmt: skip

if not TYPE_CHECKING:  # mypy reads the exports from lucid/ops/__init__.pyi
    __all__ = OPS.names


class Reshape(Function):
    _node_name = "ViewBackward0"  # torch's name of this node
    is_view = True
    in_shape: tuple[int, ...]

    @staticmethod
    def forward(ctx: Any, a: Any, shape: tuple[int, ...]) -> Any:
        ctx.in_shape = a.shape
        if type(a) is np.ndarray:  # the method np.reshape calls, without its wrapper (~1 us)
            out = a.reshape(shape)
            if not (a.flags.c_contiguous or np.may_share_memory(out, a)):
                ctx.is_view = False  # a copy (a permuted view reshaped), as torch's reshape
            return out
        return ctx.xp.reshape(a, shape)

    def write_back(self, base: Any, value: Any) -> Any:
        return self.xp.reshape(value, self.in_shape)

    def rebase(self, base: Tensor, value: Tensor) -> tuple[Tensor, Tensor]:
        """After this view of ``base`` was changed in place to ``value``: the base's new value
        (``value`` in the base's shape: the view covers all of it) and the view taken again
        from it, so that the base's later uses differentiate through the change, as torch's
        CopySlices (``y.view(-1).mul_(2)`` then ``y`` used: its gradient was missing the 2)."""
        new_base = Reshape.apply(value, self.in_shape)
        return new_base, Reshape.apply(new_base, value.shape)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        return g.reshape(ctx.in_shape), None


class Permute(Function):
    is_view = True
    dims: tuple[int, ...]

    @staticmethod
    def forward(ctx: Any, a: Any, dims: tuple[int, ...]) -> Any:
        ctx.dims = dims
        if type(a) is np.ndarray:  # the method np.transpose calls, without its wrapper
            return a.transpose(dims)
        return ctx.xp.transpose(a, dims)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        return g.permute(_inverse(ctx.dims)), None

    def write_back(self, base: Any, value: Any) -> Any:
        return self.xp.transpose(value, _inverse(self.dims))

    def rebase(self, base: Tensor, value: Tensor) -> tuple[Tensor, Tensor]:
        """:meth:`Reshape.rebase` for a permuted view (it covers all of the base too)."""
        new_base = Permute.apply(value, _inverse(self.dims))
        return new_base, Permute.apply(new_base, self.dims)


def _inverse(dims: tuple[int, ...]) -> tuple[int, ...]:
    inverse = [0] * len(dims)
    for i, d in enumerate(dims):
        inverse[d] = i
    return tuple(inverse)


class Expand(Function):
    is_view = True

    @staticmethod
    def forward(ctx: Any, a: Any, shape: tuple[int, ...]) -> Any:
        ctx.in_shape = a.shape
        return ctx.xp.broadcast_to(a, shape)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        return g.sum_to_size(ctx.in_shape), None


class Clone(Function):
    @staticmethod
    def forward(ctx: Any, a: Any) -> Any:
        return ctx.backend.copy(a)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        return g


class ToDevice(Function):
    @staticmethod
    def forward(ctx: Any, a: Any, target: Any) -> Any:
        ctx.out_backend = target
        out = target.from_numpy(ctx.backend.to_numpy(a))
        dtype = ctx.backend.dtype_of(a)  # bfloat16 crosses through NumPy as float32 from MLX
        if target.dtype_of(out) is dtype:
            return out
        try:
            return target.astype(out, dtype)
        except TypeError:  # the target has no such dtype (NumPy without ml_dtypes)
            return out

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        return to_device(g, ctx.backend), None


class ExpandCopy(Function):
    """``dst.copy_(src)``'s value: ``src`` broadcast to a shape and cast to a dtype."""

    @staticmethod
    def forward(ctx: Any, a: Any, shape: tuple[int, ...], dtype: Any) -> Any:
        ctx.src = ctx.backend.dtype_of(a)
        ctx.in_shape = a.shape
        out = ctx.backend.astype(a, dtype) if ctx.src is not dtype else a
        return ctx.xp.broadcast_to(out, shape)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        return g.sum_to_size(ctx.in_shape).to(ctx.src), None, None


def reshape(input: Tensor, *shape: Any) -> Tensor:
    """The same elements in a new shape (one size may be -1)."""
    a = input  # torch's parameter names outside, short ones inside
    src = a._data.shape
    return _reshaped(a, _infer_shape(_ints(shape), math.prod(src), src))


def _ints(shape: tuple[Any, ...]) -> tuple[int, ...]:
    """``reshape``/``view``'s sizes (varargs or one tuple) as a tuple of ints (-1 kept)."""
    given = shape[0] if len(shape) == 1 and type(shape[0]) is tuple else shape
    # plain ints (the common form) need no conversion (per-call cost, docs/performance.md;
    # a loop: all() over a generator costs ~0.3 us more)
    for s in given:
        if type(s) is not int:
            return shape_arg(shape)
    return given


def _reshaped(a: Tensor, target: tuple[int, ...]) -> Tensor:
    """``a`` in the shape ``target`` (checked, -1 inferred)."""
    if target == a._data.shape:
        return a
    return _reshape_view(a, target)


def _reshape_view(a: Tensor, shape: tuple[int, ...]) -> Tensor:
    """``Reshape`` of ``a`` to a checked ``shape``; where nothing records, Reshape's own call
    without its Function call (per-op cost of generation's views, docs/performance.md)."""
    arr = a._data
    if type(arr) is np.ndarray:
        if not arr.flags.c_contiguous and a._base is None and not _memory_format._marked:
            arr = _row_major_for_views(a, arr, shape)
        if unrecorded(a):
            out = arr.reshape(shape)
            if arr.flags.c_contiguous or np.may_share_memory(out, arr):
                return unrecorded_view(a, out)
            return Tensor.from_backend_array(out, a._backend)  # a copy: no view, as torch's
    return Reshape.apply(a, shape)


def _row_major_for_views(a: Tensor, arr: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """``a``'s array, made row-major in place of the old one where NumPy could not reshape it
    as a view. ``a`` is an op's result that lucid reports contiguous, as torch's is (a
    convolution's result is a transposed view of its NHWC product; an elementwise op keeps its
    input's order): torch's ``view``/``reshape`` of it shares its storage, NumPy's ``reshape``
    of such an array copies, and writes through the "view" were lost. The values do not
    change (no version bump); NumPy's own copy becomes ``a``'s storage, so it costs nothing
    more than the copy the reshape made. Not while ops are observed (a ``lucid.compile``
    capture keeps the arrays it has seen)."""
    if ops_watched() or arr.size <= 1:
        return arr
    out = arr.reshape(shape)
    if np.may_share_memory(out, arr):
        return arr  # NumPy's reshape is a view already
    row_major = out.reshape(arr.shape)
    a._data = row_major
    return row_major


def view(a: Tensor, size: Any = None, *sizes: Any, dtype: Any = None) -> Tensor:
    """:func:`reshape`, or with a dtype, the same bytes read as that dtype (``x.view(int32)``
    of float32 gives the bit patterns; no gradient flows through that form, as in torch).
    ``x.view(2, 3)``, ``x.view((2, 3))``, ``x.view(size=(2, 3))``, ``x.view(dtype=int32)``.

    A dtype of another element size changes the last dim by the size ratio (float32 (2, 4) as
    int16 is (2, 8)); a 0-d tensor cannot change element size.
    """
    if dtype is not None or isinstance(size, dtypes.dtype):
        if sizes or (dtype is not None and size is not None):
            raise TypeError("view() takes either a size or a dtype, not both")
        return _view_as_dtype(a, size if dtype is None else dtype)
    if size is None:
        raise TypeError("view() missing 1 required positional argument: 'size'")
    shape = (size, *sizes)
    arr = a._data
    if type(arr) is np.ndarray and not _memory_format._marked:
        # the sizes read and inferred once (per-call cost of generation's views)
        src = arr.shape
        target = _infer_shape(_ints(shape), arr.size, src)
        if not arr.flags.c_contiguous:  # a dense row-major array views as any shape
            base = a._base
            if base is not None and unrecorded(a):
                bd = base._data
                if type(bd) is np.ndarray and bd.flags.c_contiguous:
                    # a view of a row-major tensor (a head split from a projection), in one
                    # step: ``layout_strides``'s strides, ``_viewable_as`` remembered, and
                    # ``_reshape_view``'s unrecorded reshape (3.6 -> 2.3 us at one thread:
                    # generation's 12 views a token, issue 30)
                    if not _viewable_known(src, arr.strides, arr.itemsize, target):
                        raise RuntimeError(_VIEW_MSG)
                    if target == src:
                        return a
                    out = arr.reshape(target)
                    if np.may_share_memory(out, arr):
                        return unrecorded_view(a, out)
                    return Tensor.from_backend_array(out, a._backend)
            strides = layout_strides(a)
            if strides is not None and not _viewable_as(src, strides, target):
                raise RuntimeError(_VIEW_MSG)
        elif target != src and unrecorded(a):  # ``_reshape_view``'s steps for a row-major one
            return unrecorded_view(a, arr.reshape(target))
        return _reshaped(a, target)
    strides = layout_strides(a)
    if strides is not None and not _viewable(a._data.shape, strides, shape_arg(shape)):
        raise RuntimeError(_VIEW_MSG)
    return reshape(a, *shape)


_VIEW_MSG = (
    "view size is not compatible with input tensor's size and stride (at least one "
    "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
)


def layout_strides(a: Tensor) -> tuple[int, ...] | None:
    """The element strides torch gives ``a``, where lucid knows them: on a backend that shows
    its layout, for a view of a contiguous tensor (transposes, slices, expands of it). A
    computed tensor is taken as contiguous, as torch's are (None), unless it is channels-last
    (``lucid._memory_format``)."""
    base = a._base
    if base is None:
        return _memory_format.marked_strides(a._data, a.shape) if _memory_format._marked else None
    bd = base._data
    if type(bd) is np.ndarray and not _memory_format._marked:
        # NumPy's C-contiguous flag is is_contiguous_layout's rule (size-1 dims take any
        # stride, an empty array is contiguous): one flag read instead of two stride walks
        # (per-call cost of generation's views, docs/performance.md)
        if not bd.flags.c_contiguous:
            return None
        arr = a._data
        size = arr.itemsize
        return tuple([s // size for s in arr.strides])
    base_strides = a.backend.strides(base._data)
    if base_strides is None:
        return None
    if not is_contiguous_layout(base.shape, base_strides):
        if _memory_format.marked_strides(base._data, base.shape) is None:
            return None
    return a.backend.strides(a._data)


def is_contiguous_layout(shape: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    """Row-major with no gaps (dims of size 1 may have any stride), as torch's is_contiguous."""
    if 0 in shape:
        return True
    expected = 1
    for size, stride in zip(reversed(shape), reversed(strides)):
        if size != 1 and stride != expected:
            return False
        expected *= size
    return True


def _viewable(shape: tuple[int, ...], strides: tuple[int, ...], target: tuple[int, ...]) -> bool:
    """Whether torch can view ``shape``/``strides`` as ``target`` (ATen's computeStride): each
    run of dims that are contiguous with each other must map onto whole target dims."""
    return _viewable_as(shape, strides, _infer_shape(target, math.prod(shape), shape))


def _viewable_as(shape: tuple[int, ...], strides: tuple[int, ...], target: tuple[int, ...]) -> bool:
    """:func:`_viewable` for a ``target`` already checked against ``shape`` (-1 inferred)."""
    numel = math.prod(shape)
    if numel == 0 or not shape:
        return True
    view_d = len(target) - 1
    chunk_stride, tensor_numel, view_numel = strides[-1], 1, 1
    for d in range(len(shape) - 1, -1, -1):
        tensor_numel *= shape[d]
        if d == 0 or (shape[d - 1] != 1 and strides[d - 1] != tensor_numel * chunk_stride):
            while view_d >= 0 and (view_numel < tensor_numel or target[view_d] == 1):
                view_numel *= target[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return False
            if d > 0:
                chunk_stride, tensor_numel, view_numel = strides[d - 1], 1, 1
    return view_d == -1


# ``_viewable_as``'s answers per (shape, strides, target): a pure function of small tuples that
# a generated token asks the same 12 times (~0.75 us each, a lookup ~0.15); a few shapes only.
_VIEWABLE: dict[tuple[Any, ...], bool] = {}
_VIEWABLE_MAX_ENTRIES = 256


def _viewable_known(
    shape: tuple[int, ...], byte_strides: tuple[int, ...], itemsize: int, target: tuple[int, ...]
) -> bool:
    """:func:`_viewable_as` of an array's ``shape`` and element strides (``layout_strides``'s:
    its byte strides over ``itemsize``), remembered."""
    key = (shape, byte_strides, itemsize, target)
    known = _VIEWABLE.get(key)
    if known is None:
        known = _viewable_as(shape, tuple([st // itemsize for st in byte_strides]), target)
        if len(_VIEWABLE) >= _VIEWABLE_MAX_ENTRIES:
            _VIEWABLE.clear()
        _VIEWABLE[key] = known
    return known


class ViewDtype(Function):
    @staticmethod
    def forward(ctx: Any, a: Any, dtype: dtypes.dtype) -> Any:
        if ctx.backend.dtype_of(a).itemsize != dtype.itemsize:
            a = ctx.xp.ascontiguousarray(a)  # a size change reads along the last dim
        out = a.view(ctx.backend.native_dtype(dtype))
        ctx.mark_non_differentiable(out)
        return out


def _view_as_dtype(a: Tensor, dtype: dtypes.dtype) -> Tensor:
    old, new = a.dtype.itemsize, dtype.itemsize
    what = f"to view {a.dtype} as {dtype} (different element sizes)"
    if old != new and a.ndim == 0:
        raise RuntimeError(f"self.dim() cannot be 0 {what}")
    if new > old and (a.shape[-1] * old) % new:
        raise RuntimeError(
            f"self.size(-1) must be divisible by {new // old} {what}, but got {a.shape[-1]}"
        )
    return ViewDtype.apply(a, dtype)


def unfold(input: Tensor, dimension: int, size: int, step: int) -> Tensor:  # noqa: A002
    """Every window of ``size`` entries along ``dimension``, ``step`` apart, as a new last dim
    (``Tensor.unfold``; a copy here, whose gradient sums over overlapping windows).

    >>> lucid.arange(5.0).unfold(0, 2, 2)
    tensor([[0., 1.],
            [2., 3.]])
    """
    d = normalize_dim(dimension, input.ndim)
    n = input.shape[d] if input.ndim else 1
    if size < 0 or size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if input.ndim == 0:
        return input.reshape(1).narrow(0, 0, size)
    count = (n - size) // step + 1
    starts = (np.arange(count)[:, None] * step + np.arange(size)).reshape(-1)
    be = input.backend
    picked = index_select(input, d, Tensor.from_backend_array(be.asarray(starts, dtypes.int64), be))
    return picked.unflatten(d, (count, size)).movedim(d + 1, -1)


def _infer_shape(shape: tuple[int, ...], numel: int, src: tuple[int, ...]) -> tuple[int, ...]:
    if -1 not in shape:  # the common form: one product in C (per-call cost of views)
        if math.prod(shape) != numel:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        return shape
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for s in shape:
        if s != -1:
            known *= s
    if -1 in shape:
        if known == 0 and numel == 0:
            raise RuntimeError(
                f"cannot reshape tensor of 0 elements into shape {list(shape)} because the "
                "unspecified dimension size -1 can be any value and is ambiguous"
            )
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape = tuple(numel // known if s == -1 else s for s in shape)
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


def permute(input: Tensor, *dims: Any) -> Tensor:
    """Reorder the dims (``x.permute(1, 0)`` or ``permute(x, (1, 0))``)."""
    a = input  # torch's parameter names outside, short ones inside
    n = len(a._data.shape)
    # The common forms, n distinct non-negative dims as varargs or a tuple, need no
    # normalizing (the per-call Python cost of generation's views, docs/performance.md)
    d = dims[0] if len(dims) == 1 and type(dims[0]) is tuple else dims
    if len(d) == n and all(type(x) is int and 0 <= x < n for x in d) and len(set(d)) == n:
        if d == tuple(range(n)):
            return a
        return _permuted(a, d)
    d = tuple(normalize_dim(x, a.ndim) for x in shape_arg(dims))
    if len(d) == a.ndim and len(set(d)) < len(d):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    if sorted(d) != list(range(a.ndim)):
        raise RuntimeError(
            f"permute(sparse_coo): number of dimensions in the tensor input does not match the "
            f"length of the desired ordering of dimensions i.e. input.dim() = {a.ndim} is not "
            f"equal to len(dims) = {len(d)}"
        )
    if d == tuple(range(a.ndim)):
        return a
    return _permuted(a, d)


def _permuted(a: Tensor, dims: tuple[int, ...], name: str | None = None) -> Tensor:
    """``Permute`` of ``a`` by a valid permutation ``dims``; where nothing records, Permute's
    own call without its Function call (per-op cost of generation's views). ``name``: torch's
    name of the node where the op is not ``permute`` (``TransposeBackward0``, ``TBackward0``)."""
    arr = a._data
    if type(arr) is np.ndarray and unrecorded(a):
        return unrecorded_view(a, arr.transpose(dims))
    out = Permute.apply(a, dims)
    if name is not None and out.grad_fn is not None:
        out.grad_fn._node_name = name
    return out


def transpose(input: Tensor, dim0: int, dim1: int) -> Tensor:
    """Swap two dims."""
    a = input  # torch's parameter names outside, short ones inside
    n = len(a._data.shape)
    # in-range non-negative ints (the common form) need no normalizing (per-call cost)
    d0 = dim0 if type(dim0) is int and 0 <= dim0 < n else normalize_dim(dim0, n)
    d1 = dim1 if type(dim1) is int and 0 <= dim1 < n else normalize_dim(dim1, n)
    if n == 0 or d0 == d1:  # dims 0 and -1 name the one (absent) dim of a 0-d tensor
        return a
    dims = list(range(n))
    dims[d0], dims[d1] = dims[d1], dims[d0]
    # a valid permutation: permute's checks not needed
    return _permuted(a, tuple(dims), "TransposeBackward0")


def swapaxes(input: Tensor, axis0: int, axis1: int) -> Tensor:  # noqa: A002
    """:func:`transpose` under NumPy's name and argument names (``torch.swapaxes``)."""
    return transpose(input, axis0, axis1)


swapdims = transpose


def t(input: Tensor) -> Tensor:
    """Transpose a tensor of at most 2 dims."""
    a = input  # torch's parameter names outside, short ones inside
    if a.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {a.ndim}D")
    return a if a.ndim < 2 else _permuted(a, (1, 0), "TBackward0")


def expand(a: Tensor, size: Any = None, *sizes: Any, implicit: bool = False) -> Tensor:
    """Broadcast size-1 dims to ``size`` (-1 keeps a size); the gradient sums back:
    ``x.expand(2, 3)``, ``x.expand((2, 3))`` or ``x.expand(size=(2, 3))``. ``implicit`` is
    torch's tracing flag and changes nothing."""
    sizes = () if size is None else (size, *sizes)  # expand() of a 0-d tensor: its own shape
    target = list(shape_arg(sizes))
    if len(target) < a.ndim:
        raise RuntimeError(
            f"expand: the number of sizes provided ({len(target)}) must be greater or equal to "
            f"the number of dimensions in the tensor ({a.ndim})"
        )
    offset = len(target) - a.ndim
    for i, s in enumerate(a.shape):
        if target[offset + i] == -1:
            target[offset + i] = s
        elif s != 1 and s != target[offset + i]:
            raise RuntimeError(
                f"The expanded size of the tensor ({target[offset + i]}) must match the existing "
                f"size ({s}) at non-singleton dimension {i}.  Target sizes: {list(sizes)}.  "
                f"Tensor sizes: {list(a.shape)}"
            )
    shape = tuple(target)
    if shape == a.shape and unrecorded(a):
        return a
    # under grad an expand to the same shape is still a view with its node, as torch's: DDP-style
    # reducers reach a parameter's AccumulateGrad as p.expand_as(p).grad_fn.next_functions[0][0]
    return Expand.apply(a, shape)


def broadcast_to(input: Tensor, size: Any) -> Tensor:  # noqa: A002
    """``input`` expanded to ``size`` (a view; see :func:`expand`)."""
    a = input  # torch's parameter names outside, short ones inside
    return expand(a, tuple(size))


def expand_as(a: Tensor, other: Tensor) -> Tensor:
    """``expand(a, other.shape)``."""
    return expand(a, other.shape)


def sum_to_size(a: Tensor, *size: Any) -> Tensor:
    """Sum ``a`` down to a shape it was broadcast from (the inverse of expand).

    As torch's ``sum_to``: a target of ``()`` is always ``a.sum()`` (so a bool or integer
    tensor becomes int64, a 0-d one included); a target equal to ``a.shape`` is ``a`` itself.
    """
    shape = shape_arg(size)
    lead = a.ndim - len(shape)
    if lead < 0 or any(
        s != 1 and s != a.shape[lead + i] for i, s in enumerate(shape)
    ):  # torch's is_expandable_to, and its wording
        raise RuntimeError(f"size {{{list(shape)}}} is not expandable to size {{{list(a.shape)}}}.")
    if not shape:
        return a.sum()
    if a.shape == shape:
        return a
    dims = list(range(lead)) + [
        lead + i for i, s in enumerate(shape) if s == 1 and a.shape[lead + i] != 1
    ]
    out = a.sum(dim=tuple(dims), keepdim=True) if dims else a
    return out.reshape(shape) if out.shape != shape else out


def clone(input: Tensor, *, memory_format: Any = None) -> Tensor:  # noqa: A002
    """A copy that owns its data; the gradient passes through. ``memory_format`` lays the copy
    out as :meth:`Tensor.clone` does."""
    if memory_format is not None:
        return input.clone(memory_format=memory_format)
    a = input  # torch's parameter names outside, short ones inside
    return Clone.apply(a)


class ToMemoryFormat(Function):
    @staticmethod
    def forward(ctx: Any, a: Any, fmt: Any) -> Any:
        if ctx.backend.strides(a) is None:  # no strides to arrange (MLX): a plain copy
            return ctx.backend.copy(a)
        out = _memory_format.to_layout(ctx.xp, a, fmt)
        return ctx.backend.copy(out) if out is a else out

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        return g, None


def to_memory_format(a: Tensor, fmt: Any) -> Tensor:
    """A copy of ``a`` laid out densely in ``fmt`` (``contiguous_format`` or a channels-last
    one); values unchanged, the gradient passes through."""
    return ToMemoryFormat.apply(a, fmt)


def to_device(a: Tensor, backend: Any) -> Tensor:
    """The tensor moved to another backend; the gradient moves back."""
    return ToDevice.apply(a, backend)


def broadcast_cast(src: Tensor, shape: tuple[int, ...], dtype: Any) -> Tensor:
    """``src`` broadcast to ``shape`` and cast to ``dtype`` (what ``Tensor.copy_`` writes)."""
    if src.shape == shape and src.dtype is dtype:
        return src
    try:
        return ExpandCopy.apply(src, shape, dtype)
    except ValueError:
        raise RuntimeError(
            f"The size of tensor a ({list(shape)}) must match the size of tensor b "
            f"({list(src.shape)})"
        ) from None


def unsqueeze(input: Tensor, dim: int) -> Tensor:
    """Insert a size-1 dim at ``dim``."""
    a = input  # torch's parameter names outside, short ones inside
    src = a._data.shape  # plain tuples (Size's slicing is Python: per-call cost)
    d = normalize_dim(dim, len(src) + 1)
    return _reshape_view(a, (*src[:d], 1, *src[d:]))


def squeeze(input: Tensor, dim: Any = None) -> Tensor:
    """Drop size-1 dims (all, or those in ``dim``)."""
    a = input  # torch's parameter names outside, short ones inside
    if dim is None:
        shape = tuple(s for s in a.shape if s != 1)
    else:
        one = index_int(dim)
        dims = (one,) if one is not None else tuple(dim)
        drop = {normalize_dim(d, a.ndim) for d in dims}
        shape = tuple(s for i, s in enumerate(a.shape) if not (i in drop and s == 1))
    if shape == a.shape:
        return a
    return _reshape_view(a, shape)


def flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:  # noqa: A002
    """Merge dims ``start_dim..end_dim`` into one."""
    if input.ndim == 0:
        return input.reshape(1)
    s, e = normalize_dim(start_dim, input.ndim), normalize_dim(end_dim, input.ndim)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    n = 1
    for k in input.shape[s : e + 1]:
        n *= k
    return input.reshape(input.shape[:s] + (n,) + input.shape[e + 1 :])


def unflatten(input: Tensor, dim: int, sizes: Any) -> Tensor:  # noqa: A002
    """Split dim ``dim`` into ``sizes`` (one entry may be -1)."""
    d = normalize_dim(dim, input.ndim)
    sizes = _infer_shape(tuple(int(s) for s in sizes), input.shape[d], (input.shape[d],))
    return input.reshape(input.shape[:d] + sizes + input.shape[d + 1 :])


def view_as(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """``reshape(input, other.shape)``."""
    return reshape(input, other.shape)


reshape_as = view_as


def ravel(input: Tensor) -> Tensor:  # noqa: A002
    """The tensor flattened to 1-D."""
    return reshape(input, -1)


def movedim(input: Tensor, source: Any, destination: Any) -> Tensor:  # noqa: A002
    """Move dims ``source`` to positions ``destination`` (ints or sequences)."""
    n = input.ndim
    given_src = list(source) if isinstance(source, (tuple, list)) else [source]
    given_dst = list(destination) if isinstance(destination, (tuple, list)) else [destination]
    if len(given_src) != len(given_dst):
        raise RuntimeError(
            f"movedim: Invalid source or destination dims: source ({given_src} dims) should "
            f"contain the same number of dims as destination ({given_dst} dims)"
        )
    src = [normalize_dim(s, n) for s in given_src]
    dst = [normalize_dim(d, n) for d in given_dst]
    for which, dims, given in (("source", src, given_src), ("destination", dst, given_dst)):
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"movedim: repeated dim in `{which}` ({given})")
    order = [i for i in range(n) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return permute(input, tuple(order))


moveaxis = movedim


def narrow(input: Tensor, dim: int, start: Any, length: int) -> Tensor:  # noqa: A002
    """The slice ``start:start+length`` along ``dim`` (a view in torch; a slice here)."""
    if input.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    if isinstance(start, Tensor) and (start.ndim != 0 or start.dtype.category != dtypes.INT):
        raise RuntimeError(
            f"start must be an 0-dim integral Tensor., got a {start.ndim}-dim {start.dtype} one"
        )
    d = normalize_dim(dim, input.ndim)
    n = input.shape[d]
    st = int(start)
    if not -n <= st <= n:
        raise IndexError(
            f"start out of range (expected to be in range of [{-n}, {n}], but got {st})"
        )
    if st < 0:
        st += n
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if st + length > n:
        raise RuntimeError(f"start ({st}) + length ({length}) exceeds dimension size ({n}).")
    index = (slice(None),) * d + (slice(st, st + int(length)),)
    return input[index]


def _at_least(ndim: int, tensors: tuple[Any, ...]) -> Any:
    """torch's ``atleast_Nd`` call forms: one tensor in, one out; several tensors, or one list
    or tuple of them, in: a tuple out. Missing dims are leading size-1 dims."""
    if len(tensors) == 1 and isinstance(tensors[0], Tensor):
        t = tensors[0]
        return t.reshape((1,) * (ndim - t.ndim) + t.shape) if t.ndim < ndim else t
    items = tensors[0] if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)) else tensors
    for i, t in enumerate(items):
        if not isinstance(t, Tensor):
            raise TypeError(
                f"atleast_{ndim}d(): expected Tensors, got {type(t).__name__} at position {i}"
            )
    return tuple(_at_least(ndim, (t,)) for t in items)


def atleast_1d(*tensors: Any) -> Any:
    """A 0-d tensor as shape (1,); others unchanged (several tensors or a list: a tuple)."""
    return _at_least(1, tensors)


def atleast_2d(*tensors: Any) -> Any:
    """Tensors with fewer than 2 dims get leading size-1 dims (several or a list: a tuple)."""
    return _at_least(2, tensors)
