"""Batching rules, keyed by the op's Function class (``module.QualName``).

Each rule runs the op once on the physical Tensors (batch at dim 0) of the arguments batched
at ``level`` and returns the result wrapped at that level, or ``NotImplemented`` for a case it
does not cover (the op then runs once per batch element). The families, after the op tables:

- elementwise and broadcasting ops (unary, binary, ``where``, ``clamp``, casts, activations):
  each batched argument gets size-1 dims after the batch so that it lines up with the others;
- reductions, scans, softmax, flips, splits, FFTs: the dim arguments shift by one;
- shape ops (reshape, permute, expand, pad, cat, getitem): the batch is prepended to the shape
  or index;
- matmul, linear, convolution, pooling, layer/batch norm, cross entropy: the batch is folded
  into a dimension the op already maps over (rows, N, channel groups).

Rules for lucid-nn's Functions are written here by name: lucid-core does not import lucid-nn,
and a name that no longer exists is caught by the tests (``registered()`` against the classes).
"""

from __future__ import annotations

import inspect
from typing import Any

from lucid._tensor import Tensor
from lucid.autograd.function import Function
from lucid.func._batched import (
    BatchedTensor,
    LogicalArray,
    level_of,
    register,
    wrap,
    wrap_result,
)
from lucid.ops.join import Cat
from lucid.ops.matmul import Matmul
from lucid.ops.shape import Permute, Reshape

_ELEMENTWISE_OPS = (
    "ops.elementwise.Add", "ops.elementwise.Sub", "ops.elementwise.Mul", "ops.elementwise.Div",
    "ops.elementwise.Pow", "ops.elementwise.PowScalar", "ops.elementwise.Maximum",
    "ops.elementwise.Minimum", "ops.elementwise.Where", "ops.elementwise.Clamp",
    "ops.elementwise.LogAddExp", "ops.elementwise.Copysign", "ops.elementwise.Remainder",
    "ops.elementwise.NonDiff", "ops._util.Cast", "ops._util.OfInput", "ops.unary._Unary",
    "ops.unary._Unsaved", "ops.unary.Exp2", "ops.unary.Rsqrt", "ops.unary.Sigmoid",
    "ops.unary.Relu", "ops.unary._PositiveMask", "ops.unary.Logit", "ops.unary.Frac",
    "ops.unary.NanToNum", "ops.unary.Round", "ops.unary.Atan2", "ops.gamma.Trigamma",
    "ops.special.Erfinv", "ops.special.Gelu", "ops.complex._Aware", "ops.shape.Clone",
    "ops.movement.Triangle", "special._AiryAi", "special._BesselI", "special._BesselJY",
    "special._BesselK", "special._Erfcx", "special._Igamma", "special._LogNdtr",
    "special._Polygamma", "special._Xlog1py", "special._Zeta",
    "nn.functional.activation._ELU", "nn.functional.activation._LogSigmoid",
    "nn.functional.activation._MaskedLinear", "nn.functional.activation._Softplus",
    "nn.functional.activation._PReLU",  # its weight comes shaped to broadcast
    "nn.functional.loss._BCE",
    # matrix functions of the last two dims (they broadcast over the leading ones)
    "linalg._inverse.Inv", "linalg._inverse.Det", "linalg._inverse.Slogdet",
    "linalg._decomp.Cholesky", "ops.movement.Diagonal",
)  # fmt: skip

# Ops whose argument at each listed position is a dim (an int) or dims (a tuple of ints).
_DIM_OPS = {
    "ops.reduction.Sum": (1,), "ops.reduction.Prod": (1,), "ops.reduction.Extreme": (1,),
    "ops.reduction.ExtremeAlong": (1,), "ops.reduction.BoolReduce": (2,),
    "ops.reduction.NormP2": (1,), "ops.reduction.Scan": (1,), "ops.reduction.CumExtreme": (1,),
    "ops.reduction.LogCumSumExp": (1,), "ops.softmax._Normalize": (1,),
    "ops.movement.Flip": (1,), "ops.movement.Roll": (2,), "ops.join.Unbind": (1,),
    "ops.join.Split": (1,), "ops.indexing.Gather": (1,), "fft.FftC2C": (1,), "fft.FftC2R": (1,),
    "fft.FftR2C": (1,), "fft.Resize": (1,), "linalg._norms.VectorNorm": (2,),
}  # fmt: skip


def _full(name: str) -> str:
    return "lucid." + name


# -- helpers ---------------------------------------------------------------------------------
def _phys(a: Any, level: int) -> Tensor | None:
    """The physical Tensor of ``a`` if it is batched at ``level`` (a BatchedTensor or the
    LogicalArray of one), else None."""
    t = type(a)
    if t is BatchedTensor and a._level == level:
        return a._phys  # type: ignore[no-any-return]
    if t is LogicalArray and a.owner._level == level:
        return a.owner._phys  # type: ignore[no-any-return]
    return None


def _back(t: Tensor, like: Any) -> Any:
    """``t`` as the kind of argument ``like`` was: an array for a LogicalArray."""
    return t.array if type(like) is LogicalArray else t


def _ndim(a: Any) -> int:
    shape = getattr(a, "shape", None) if isinstance(a, (Tensor, LogicalArray)) else None
    if shape is None and hasattr(a, "ndim") and hasattr(a, "shape") and not isinstance(a, type):
        shape = a.shape
    return len(shape) if isinstance(shape, tuple) else 0


def _materialize(a: Any, level: int, size: int) -> Tensor:
    """A Tensor argument with the batch at dim 0: its physical Tensor, or ``a`` broadcast."""
    p = _phys(a, level)
    if p is not None:
        return p
    return a.unsqueeze(0).expand(size, *a.shape)  # type: ignore[no-any-return]


def _only_first(args: tuple[Any, ...], level: int) -> bool:
    return _phys(args[0], level) is not None and all(level_of(a) < level for a in args[1:])


def _shift(d: Any) -> Any:
    if isinstance(d, bool) or d is None:
        return d
    if isinstance(d, int):
        return d + 1 if d >= 0 else d
    if isinstance(d, (tuple, list)):
        return type(d)(_shift(x) for x in d)
    return d


# -- elementwise -----------------------------------------------------------------------------
def elementwise(
    cls: type[Function], args: tuple[Any, ...], kwargs: dict[str, Any], level: int, size: int
) -> Any:
    """Broadcasting ops: batched arguments get size-1 dims after the batch, up to the rank of
    the widest argument, so the logical broadcast happens behind the batch dim."""
    rank = max(_ndim(a) for a in args)
    new = []
    for a in args:
        p = _phys(a, level)
        if p is not None:
            nd = p.ndim - 1
            if nd < rank:
                p = p.reshape((size,) + (1,) * (rank - nd) + tuple(p.shape[1:]))
            new.append(_back(p, a))
        elif isinstance(a, tuple) and level_of(a) == level:
            return NotImplemented
        else:
            new.append(a)
    return wrap_result(cls.apply(*new, **kwargs), level)


register(*[_full(n) for n in _ELEMENTWISE_OPS])(elementwise)


# -- dims ------------------------------------------------------------------------------------
def _dims_rule(positions: tuple[int, ...]) -> Any:
    def rule(
        cls: type[Function], args: tuple[Any, ...], kwargs: dict[str, Any], level: int, size: int
    ) -> Any:
        if not _only_first(args, level) and cls.__name__ != "Gather":
            return NotImplemented
        new = list(args)
        for k in positions:
            new[k] = _shift(new[k])
        if cls.__name__ == "Gather":  # (a, dim, index): both get the batch
            backend = (args[0] if isinstance(args[0], Tensor) else args[2].owner)._backend
            new[0] = _materialize(args[0], level, size)
            p = _phys(args[2], level)
            idx = args[2]
            new[2] = p.array if p is not None else backend.xp.broadcast_to(
                idx, (size, *idx.shape))  # fmt: skip
        else:
            new[0] = _back(_phys(args[0], level), args[0])  # type: ignore[arg-type]
        return wrap_result(cls.apply(*new, **kwargs), level)

    return rule


for _name, _pos in _DIM_OPS.items():
    register(_full(_name))(_dims_rule(_pos))


# -- shape ops -------------------------------------------------------------------------------
@register("lucid.ops.shape.Reshape")
def _reshape(
    cls: type[Function], args: tuple[Any, ...], kwargs: dict[str, Any], level: int, size: int
) -> Any:
    if not _only_first(args, level):
        return NotImplemented
    p = _phys(args[0], level)
    assert p is not None
    return wrap(Reshape.apply(p, (size, *args[1])), level)


@register("lucid.ops.shape.Permute")
def _permute(
    cls: type[Function], args: tuple[Any, ...], kwargs: dict[str, Any], level: int, size: int
) -> Any:
    p = _phys(args[0], level)
    if p is None or not _only_first(args, level):
        return NotImplemented
    nd = p.ndim - 1
    dims = (0, *[d % nd + 1 for d in args[1]]) if nd else (0,)
    return wrap(Permute.apply(p, dims), level)


@register("lucid.ops.shape.Expand", "lucid.ops.shape.ExpandCopy")
def _expand(
    cls: type[Function], args: tuple[Any, ...], kwargs: dict[str, Any], level: int, size: int
) -> Any:
    p = _phys(args[0], level)
    if p is None or not _only_first(args, level):
        return NotImplemented
    target = tuple(args[1])
    nd = p.ndim - 1
    if nd < len(target):
        p = p.reshape((size,) + (1,) * (len(target) - nd) + tuple(p.shape[1:]))
    return wrap(cls.apply(p, (size, *target), *args[2:], **kwargs), level)


@register("lucid.ops.join.ConstantPad")
def _pad(
    cls: type[Function], args: tuple[Any, ...], kwargs: dict[str, Any], level: int, size: int
) -> Any:
    p = _phys(args[0], level)
    if p is None or not _only_first(args, level):
        return NotImplemented
    widths = tuple(args[1])
    if len(widths) == p.ndim - 1:
        widths = ((0, 0), *widths)
    return wrap(cls.apply(p, widths, *args[2:], **kwargs), level)


@register("lucid.ops.join.Cat")
def _cat(
    cls: type[Function], args: tuple[Any, ...], kwargs: dict[str, Any], level: int, size: int
) -> Any:
    d = args[0]
    parts = [_materialize(a, level, size) for a in args[1:]]
    return wrap(Cat.apply(_shift(d), *parts), level)


_PLAIN_INDEX = (slice, type(None), type(Ellipsis))


@register("lucid.ops.indexing.GetItem")
def _getitem(
    cls: type[Function], args: tuple[Any, ...], kwargs: dict[str, Any], level: int, size: int
) -> Any:
    a, index, advanced = args
    p = _phys(a, level)
    if p is None or level_of(index) >= level:
        return NotImplemented
    items = index if isinstance(index, tuple) else (index,)
    if advanced:  # numpy moves separated advanced indices to the front: keep them together
        at = [i for i, x in enumerate(items) if not isinstance(x, _PLAIN_INDEX)]
        if at and at[-1] - at[0] + 1 != len(at):
            return NotImplemented
    return wrap(cls.apply(p, (slice(None), *items), advanced), level)


# -- matrix products -------------------------------------------------------------------------
def _matmul(a: Any, b: Any, level: int, size: int) -> Tensor:
    """The physical ``a @ b`` (NumPy's matmul rules per batch element); a or b is batched."""
    pa, pb = _phys(a, level), _phys(b, level)
    ra, rb = a.ndim, b.ndim
    xa = pa if pa is not None else a
    xb = pb if pb is not None else b
    if ra == 1:  # a vector on the left is a row, dropped after
        xa = xa.unsqueeze(-2)
    if rb == 1:
        xb = xb.unsqueeze(-1)
    ra2, rb2 = max(ra, 2), max(rb, 2)
    rank = max(ra2, rb2)
    if pa is not None and ra2 < rank:
        xa = xa.reshape((size,) + (1,) * (rank - ra2) + tuple(xa.shape[1:]))
    if pb is not None and rb2 < rank:
        xb = xb.reshape((size,) + (1,) * (rank - rb2) + tuple(xb.shape[1:]))
    if pa is None:  # leading dims of an unbatched left operand: line them up behind the batch
        xa = xa.reshape((1,) * (rank + 1 - xa.ndim) + tuple(xa.shape))
    out: Tensor = Matmul.apply(xa, xb)
    if rb == 1:
        out = out.squeeze(-1)
    if ra == 1:
        out = out.squeeze(-1 if rb == 1 else -2)
    return out


@register("lucid.ops.matmul.Matmul")
def _matmul_rule(
    cls: type[Function], args: tuple[Any, ...], kwargs: dict[str, Any], level: int, size: int
) -> Any:
    return wrap(_matmul(args[0], args[1], level, size), level)


@register("lucid.nn.functional.linear._Linear")
def _linear(
    cls: type[Function], args: tuple[Any, ...], kwargs: dict[str, Any], level: int, size: int
) -> Any:
    x, w, b = args
    if _only_first(args, level):  # shared weights: the batch is more rows
        return wrap(cls.apply(_phys(x, level), w, b), level)
    out = x @ w.mT  # per-element weights (vmap over stacked states, per-sample grads)
    return out if b is None else out + b


@register("lucid.ops.matmul.Einsum")
def _einsum(
    cls: type[Function], args: tuple[Any, ...], kwargs: dict[str, Any], level: int, size: int
) -> Any:
    (ins, out), arrays = args[0], args[1:]
    used = set("".join(ins) + out)
    free = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" if c not in used]
    if not free:
        return NotImplemented
    z = free[0]
    new_ins, new_arrays = [], []
    for s, a in zip(ins, arrays):
        p = _phys(a, level)
        new_ins.append(z + s if p is not None else s)
        new_arrays.append(_back(p, a) if p is not None else a)
    return wrap(cls.apply((new_ins, z + out), *new_arrays, **kwargs), level)


# -- nn layers -------------------------------------------------------------------------------
def _fold(x: Tensor, size: int) -> Tensor:
    """(B, N, ...) -> (B * N, ...)."""
    return x.reshape((size * x.shape[1], *x.shape[2:]))


def _unfold_result(out: Any, size: int) -> Any:
    def one(t: Tensor) -> Tensor:
        return t.reshape((size, t.shape[0] // size, *t.shape[1:])) if size else t

    return tuple(one(t) for t in out) if type(out) is tuple else one(out)


def _spatial_rule(nd_of: Any) -> Any:
    """Ops over the trailing ``nd`` spatial dims of (N, C, *spatial) (pooling): fold the batch
    into N (or use it as N for an input without one)."""

    def rule(
        cls: type[Function], args: tuple[Any, ...], kwargs: dict[str, Any], level: int, size: int
    ) -> Any:
        if not _only_first(args, level):
            return NotImplemented
        p = _phys(args[0], level)
        assert p is not None
        nd = nd_of(args)
        if p.ndim - 1 == nd + 1:  # (C, *spatial): the batch is N
            return wrap_result(cls.apply(p, *args[1:], **kwargs), level)
        out = cls.apply(_fold(p, size), *args[1:], **kwargs)
        return wrap_result(_unfold_result(out, size), level)

    return rule


register("lucid.nn.functional.pooling.MaxPool", "lucid.nn.functional.pooling.AvgPool")(
    _spatial_rule(lambda args: len(args[1]))
)
register("lucid.nn.functional.pooling._AdaptiveMax")(_spatial_rule(lambda args: len(args[1])))


@register("lucid.nn.functional.conv.Convolution")
def _conv(
    cls: type[Function], args: tuple[Any, ...], kwargs: dict[str, Any], level: int, size: int
) -> Any:
    x, w, bias, stride, padding, dilation, groups = args
    if x.ndim != w.ndim or level_of(stride) or level_of(padding):
        return NotImplemented
    if _only_first(args, level):  # shared weights: the batch is more images
        p = _phys(x, level)
        assert p is not None
        out = cls.apply(_fold(p, size), w, bias, stride, padding, dilation, groups)
        return wrap(_unfold_result(out, size), level)
    # per-element weights: the batch becomes channel groups (B * groups of them)
    xp = _materialize(x, level, size)
    wp = _materialize(w, level, size)
    n, c = xp.shape[1], xp.shape[2]
    xg = xp.transpose(0, 1).reshape((n, size * c, *xp.shape[3:]))
    wg = wp.reshape((size * wp.shape[1], *wp.shape[2:]))
    bg = None if bias is None else _materialize(bias, level, size).reshape(-1)
    out = cls.apply(xg, wg, bg, stride, padding, dilation, groups * size)
    out = out.reshape((n, size, out.shape[1] // size, *out.shape[2:])).transpose(0, 1)
    return wrap(out, level)


@register("lucid.ops.blas.Cdist")
def _cdist(cls: type[Function], args: tuple[Any, ...], kwargs: dict[str, Any], level: int,
           size: int) -> Any:  # fmt: skip
    """(..., P, M) and (..., R, M) with the same leading dims (cdist expands them first)."""
    x1, x2, *rest = args
    if x1.ndim != x2.ndim or level_of(rest) >= level:
        return NotImplemented
    both = (_materialize(x1, level, size), _materialize(x2, level, size))
    return wrap(cls.apply(*both, *rest, **kwargs), level)


@register("lucid.nn.functional.conv.ConvolutionTranspose", "lucid.nn.functional.fold._Unfold")
def _fold_n(cls: type[Function], args: tuple[Any, ...], kwargs: dict[str, Any], level: int,
            size: int) -> Any:  # fmt: skip
    """Ops over (N, C, *spatial) with shared weights: the batch is more images."""
    p = _phys(args[0], level)
    if p is None or not _only_first(args, level) or p.ndim < 4:
        return NotImplemented
    if len(args) > 1 and isinstance(args[1], Tensor) and args[1].ndim != p.ndim - 1:
        return NotImplemented  # an input without its N dim: the loop handles it
    out = cls.apply(_fold(p, size), *args[1:], **kwargs)
    return wrap_result(_unfold_result(out, size), level)


@register("lucid.ops.indexing.IndexAddInto")
def _index_add_into(cls: type[Function], args: tuple[Any, ...], kwargs: dict[str, Any],
                    level: int, size: int) -> Any:  # fmt: skip
    """Zeros of ``shape`` with ``values`` put at ``index``: the batch leads shape and index."""
    values, shape, index, advanced = args
    p = _phys(values, level)
    if p is None or level_of(index) >= level or level_of(shape):
        return NotImplemented
    items = index if isinstance(index, tuple) else (index,)
    at = [i for i, x in enumerate(items) if not isinstance(x, _PLAIN_INDEX)]
    if advanced and at and at[-1] - at[0] + 1 != len(at):
        return NotImplemented
    nd = p.ndim - 1  # values broadcast into the indexed region: line the batch up in front
    sel_rank = len(_selected_shape(p._backend, tuple(shape), items))
    if nd < sel_rank:
        p = p.reshape((size,) + (1,) * (sel_rank - nd) + tuple(p.shape[1:]))
    return wrap(cls.apply(p, (size, *shape), (slice(None), *items), advanced), level)


def _selected_shape(backend: Any, shape: tuple[int, ...], items: tuple[Any, ...]) -> Any:
    """The shape ``zeros(shape)[items]`` has, from a broadcast stand-in (no allocation)."""
    xp = backend.xp
    return backend.getitem(xp.broadcast_to(xp.zeros(()), shape), items).shape


@register("lucid.nn.functional.normalization._LayerNorm")
def _layer_norm(
    cls: type[Function], args: tuple[Any, ...], kwargs: dict[str, Any], level: int, size: int
) -> Any:
    if not _only_first(args, level):
        return NotImplemented
    return wrap_result(cls.apply(_phys(args[0], level), *args[1:], **kwargs), level)


@register("lucid.nn.functional.normalization._BatchNorm")
def _batch_norm(
    cls: type[Function], args: tuple[Any, ...], kwargs: dict[str, Any], level: int, size: int
) -> Any:
    """Statistics per batch element and channel: the batch joins the channels."""
    x, weight, bias, eps = args
    xp = _materialize(x, level, size)
    n, c = xp.shape[1], xp.shape[2]
    xg = xp.transpose(0, 1).reshape((n, size * c, *xp.shape[3:]))

    def per(t: Any) -> Any:
        return None if t is None else _materialize(t, level, size).reshape(-1)

    y, mean, var = cls.apply(xg, per(weight), per(bias), eps)
    y = y.reshape((n, size, c, *y.shape[2:])).transpose(0, 1)
    return wrap(y, level), wrap(mean.reshape(size, c), level), wrap(var.reshape(size, c), level)


@register("lucid.nn.functional.loss._CrossEntropy")
def _cross_entropy(
    cls: type[Function], args: tuple[Any, ...], kwargs: dict[str, Any], level: int, size: int
) -> Any:
    """(M, C) logits, (M,) targets: the batch is more rows; reduced per batch element."""
    x, t, w, ignore_index, smoothing, reduction = args
    if level_of(w) >= level:
        return NotImplemented
    xp = _materialize(x, level, size)
    m, c = xp.shape[1], xp.shape[2]
    backend = xp._backend
    pt = _phys(t, level)
    tt = pt if pt is not None else Tensor.from_backend_array(
        backend.xp.broadcast_to(t, (size, *t.shape)), backend)  # fmt: skip
    rows = size * m
    loss = cls.apply(xp.reshape(rows, c), tt.reshape(rows).array, w, ignore_index, smoothing,
                     "none").reshape(size, m)  # fmt: skip
    if reduction == "none":
        return wrap(loss, level)
    total = loss.sum(1)
    if reduction == "sum":
        return wrap(total, level)
    valid = tt != ignore_index
    if w is None:
        wt = valid.to(loss.dtype)
    else:
        weights = Tensor.from_backend_array(w, backend)
        wt = weights[(tt * valid).reshape(-1)].reshape(size, m) * valid.to(loss.dtype)
    return wrap(total / wt.sum(1), level)


# -- composite ops (``lucid.autograd.function.composite``): sorting, quantiles, scatters ----
def _bind(cls: type[Function], args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    """The call's arguments by parameter name, defaults filled in."""
    sig = _signatures.get(cls)
    if sig is None:
        sig = _signatures[cls] = inspect.signature(cls.fn)  # type: ignore[attr-defined]
    bound = sig.bind(*args, **kwargs)
    bound.apply_defaults()
    return dict(bound.arguments)


_signatures: dict[type, inspect.Signature] = {}


def _wrap_any(out: Any, level: int) -> Any:
    if isinstance(out, tuple):
        return wrap_result(out, level)
    return wrap(out, level)


def _along_rule(dim_names: tuple[str, ...], all_dims: bool) -> Any:
    """An op along a dim of its first argument (``sort``, ``topk``, ``median``, ``quantile``):
    the dims shift past the batch; ``dim=None`` (all elements, where ``all_dims``) reduces the
    flattened element instead."""

    def rule(
        cls: type[Function], args: tuple[Any, ...], kwargs: dict[str, Any], level: int, size: int
    ) -> Any:
        named = _bind(cls, args, kwargs)
        names = list(named)
        x = named[names[0]]
        p = _phys(x, level)
        if p is None or any(level_of(named[n]) >= level for n in names[1:]):
            return NotImplemented
        nd = p.ndim - 1
        flat = False
        for n in dim_names:
            d = named[n]
            if d is None and all_dims and not named.get("keepdim", False):
                p, named[n], flat = p.reshape(size, -1), 1, True
            elif d is None or nd == 0:
                return NotImplemented  # a 0-d element: the loop
            else:
                named[n] = (d % nd if -nd <= d < nd else d) + 1  # out of range: the op's error
        del named[names[0]]  # tensors go positionally: an outer vmap's dispatch sees them
        out: Any = cls.apply(p, **named)
        if flat and isinstance(out, tuple):  # median(): the values only, as without a dim
            out = out[0]
        q = named.get("q")
        if isinstance(q, Tensor) and q.ndim == 1:  # quantile's leading q dim: batch goes first
            out = out.movedim(1, 0)
        return _wrap_any(out, level)

    return rule


register("lucid.ops.sorting.sort", "lucid.ops.sorting.topk", "lucid.ops.sorting.kthvalue")(
    _along_rule(("dim",), all_dims=False)
)
register(
    "lucid.ops.sorting.median",
    "lucid.ops.sorting.nanmedian",
    "lucid.ops.stats.quantile",
    "lucid.ops.stats.nanquantile",
)(_along_rule(("dim",), all_dims=True))
register("lucid.ops.compose.gcd")(elementwise)


def _scatter_rule(dim_names: tuple[str, ...]) -> Any:
    """``select_scatter``/``slice_scatter``/``diagonal_scatter``: ``input`` and ``src`` get the
    batch, the dims shift past it."""

    def rule(
        cls: type[Function], args: tuple[Any, ...], kwargs: dict[str, Any], level: int, size: int
    ) -> Any:
        named = _bind(cls, args, kwargs)
        x, src = named["input"], named["src"]
        if not (isinstance(x, Tensor) and isinstance(src, Tensor)):
            return NotImplemented
        nd = x.ndim
        for n in dim_names:
            d = named[n]
            if not isinstance(d, int) or not -nd <= d < nd:
                return NotImplemented  # the loop raises the op's own error
            named[n] = d % nd + 1
        del named["input"], named["src"]  # positionally: an outer vmap's dispatch sees them
        out = cls.apply(_materialize(x, level, size), _materialize(src, level, size), **named)
        return wrap(out, level)

    return rule


register("lucid.ops.compose.select_scatter", "lucid.ops.compose.slice_scatter")(
    _scatter_rule(("dim",))
)
register("lucid.ops.compose.diagonal_scatter")(_scatter_rule(("dim1", "dim2")))


def _dynamic_shape(
    cls: type[Function], args: tuple[Any, ...], kwargs: dict[str, Any], level: int, size: int
) -> Any:
    """Ops whose result's shape depends on the values: refused, as torch.vmap does."""
    raise RuntimeError(
        "vmap: We do not support batching operators that can output dynamic shape. Attempted "
        f"to vmap over aten::{cls.__name__}. Please voice your support in "
        "https://github.com/pytorch/functorch/issues/256"
    )


register("lucid.ops.sorting.unique", "lucid.ops.sorting.nonzero")(_dynamic_shape)
