"""Shape and movement ops: reshape, permute, transpose, expand, sum_to_size, clone, to_device."""

from __future__ import annotations

from typing import Any

from lucid._tensor import Tensor
from lucid.autograd.function import Function
from lucid.ops._util import normalize_dim, shape_arg


class Reshape(Function):
    @staticmethod
    def forward(ctx: Any, a: Any, shape: tuple[int, ...]) -> Any:
        ctx.in_shape = a.shape
        return ctx.xp.reshape(a, shape)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        return g.reshape(ctx.in_shape), None


class Permute(Function):
    @staticmethod
    def forward(ctx: Any, a: Any, dims: tuple[int, ...]) -> Any:
        ctx.dims = dims
        return ctx.xp.transpose(a, dims)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        inverse = [0] * len(ctx.dims)
        for i, d in enumerate(ctx.dims):
            inverse[d] = i
        return g.permute(tuple(inverse)), None


class Expand(Function):
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
        return target.from_numpy(ctx.backend.to_numpy(a))

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


def reshape(a: Tensor, *shape: Any) -> Tensor:
    target = _infer_shape(shape_arg(shape), a.numel(), a.shape)
    if target == a.shape:
        return a
    return Reshape.apply(a, target)  # type: ignore[no-any-return]


view = reshape


def _infer_shape(shape: tuple[int, ...], numel: int, src: tuple[int, ...]) -> tuple[int, ...]:
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for s in shape:
        if s != -1:
            known *= s
    if -1 in shape:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape = tuple(numel // known if s == -1 else s for s in shape)
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


def permute(a: Tensor, *dims: Any) -> Tensor:
    d = tuple(normalize_dim(x, a.ndim) for x in shape_arg(dims))
    if sorted(d) != list(range(a.ndim)):
        raise RuntimeError(
            f"permute(sparse_coo): number of dimensions in the tensor input does not match the "
            f"length of the desired ordering of dimensions i.e. input.dim() = {a.ndim} is not "
            f"equal to len(dims) = {len(d)}"
        )
    if d == tuple(range(a.ndim)):
        return a
    return Permute.apply(a, d)  # type: ignore[no-any-return]


def transpose(a: Tensor, dim0: int, dim1: int) -> Tensor:
    n = a.ndim
    d0, d1 = normalize_dim(dim0, n), normalize_dim(dim1, n)
    dims = list(range(n))
    dims[d0], dims[d1] = dims[d1], dims[d0]
    return permute(a, tuple(dims))


swapaxes = transpose
swapdims = transpose


def t(a: Tensor) -> Tensor:
    if a.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {a.ndim}D")
    return a if a.ndim < 2 else transpose(a, 0, 1)


def expand(a: Tensor, *sizes: Any) -> Tensor:
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
    if shape == a.shape:
        return a
    return Expand.apply(a, shape)  # type: ignore[no-any-return]


def broadcast_to(a: Tensor, shape: Any) -> Tensor:
    return expand(a, tuple(shape))


def expand_as(a: Tensor, other: Tensor) -> Tensor:
    return expand(a, other.shape)


def sum_to_size(a: Tensor, *size: Any) -> Tensor:
    """Sum ``a`` down to a shape it was broadcast from (the inverse of expand)."""
    shape = shape_arg(size)
    if a.shape == shape:
        return a
    lead = a.ndim - len(shape)
    if lead < 0:
        raise RuntimeError(f"size {list(shape)} is not expandable to size {list(a.shape)}")
    dims = list(range(lead))
    for i, s in enumerate(shape):
        if s == 1 and a.shape[lead + i] != 1:
            dims.append(lead + i)
        elif s != a.shape[lead + i]:
            raise RuntimeError(f"size {list(shape)} is not expandable to size {list(a.shape)}")
    out = a.sum(dim=tuple(dims), keepdim=True) if dims else a
    return out.reshape(shape) if out.shape != shape else out


def clone(a: Tensor) -> Tensor:
    return Clone.apply(a)  # type: ignore[no-any-return]


def to_device(a: Tensor, backend: Any) -> Tensor:
    return ToDevice.apply(a, backend)  # type: ignore[no-any-return]


def expand_copy(src: Tensor, shape: tuple[int, ...], dtype: Any) -> Tensor:
    if src.shape == shape and src.dtype is dtype:
        return src
    try:
        return ExpandCopy.apply(src, shape, dtype)  # type: ignore[no-any-return]
    except ValueError:
        raise RuntimeError(
            f"The size of tensor a ({list(shape)}) must match the size of tensor b "
            f"({list(src.shape)})"
        ) from None


def unsqueeze(a: Tensor, dim: int) -> Tensor:
    d = normalize_dim(dim, a.ndim + 1)
    shape = a.shape[:d] + (1,) + a.shape[d:]
    return Reshape.apply(a, shape)  # type: ignore[no-any-return]


def squeeze(a: Tensor, dim: Any = None) -> Tensor:
    if dim is None:
        shape = tuple(s for s in a.shape if s != 1)
    else:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        drop = {normalize_dim(d, a.ndim) for d in dims}
        shape = tuple(s for i, s in enumerate(a.shape) if not (i in drop and s == 1))
    if shape == a.shape:
        return a
    return Reshape.apply(a, shape)  # type: ignore[no-any-return]
