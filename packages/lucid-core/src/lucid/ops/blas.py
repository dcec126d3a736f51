"""BLAS-style products and distances: bmm, addmm, addmv, baddbmm, addbmm, cross, cdist."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lucid._tensor import Tensor
from lucid.amp.autocast_mode import float32_inputs, lower_precision_inputs
from lucid.autograd.function import Function
from lucid.ops._registry import OpTable, op, sample
from lucid.ops._util import normalize_dim, scaled_sum
from lucid.ops.join import cat
from lucid.ops.matmul import mv

OPS = OpTable(
    op("bmm", sample((2, 3, 4), (2, 4, 2))),
    op("addmm", sample((3, 5), (3, 4), (4, 5), beta=0.5, alpha=2.0)),
    op("addmv", sample((3,), (3, 4), (4,))),
    op("addbmm", sample((3, 5), (2, 3, 4), (2, 4, 5))),
    op("baddbmm", sample((2, 3, 5), (2, 3, 4), (2, 4, 5))),
    op("cross", sample((4, 3), (4, 3), dim=1)),
    op("cdist", sample((3, 4), (5, 4)), method=False),
)

if not TYPE_CHECKING:  # mypy reads the exports from lucid/ops/__init__.pyi
    __all__ = OPS.names


def _check_ndim(name: str, arg: str, t: Any, ndim: int) -> None:
    if not isinstance(t, Tensor):
        raise TypeError(f"{name}(): argument '{arg}' must be Tensor, not {type(t).__name__}")
    if t.ndim != ndim:
        raise RuntimeError(f"{name}(): {arg} must be a {ndim}D tensor, got {t.ndim}D")


def _out_dtype(out_dtype: Any, *tensors: Tensor) -> tuple[Tensor, ...]:
    """torch's ``out_dtype=``: the product computed and returned in that dtype."""
    if out_dtype is None:
        return tensors
    return tuple(t.to(out_dtype) for t in tensors)


def bmm(input: Tensor, mat2: Tensor, out_dtype: Any = None) -> Tensor:  # noqa: A002
    """Batched matrix product of ``(b, n, m)`` and ``(b, m, p)`` tensors (computed in
    ``out_dtype`` when given)."""
    input, mat2 = _out_dtype(out_dtype, input, mat2)
    _check_ndim("bmm", "batch1", input, 3)
    _check_ndim("bmm", "batch2", mat2, 3)
    if input.shape[0] != mat2.shape[0] or input.shape[2] != mat2.shape[1]:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: "
            f"[{input.shape[0]}, {input.shape[2]}] but got: [{mat2.shape[0]}, {mat2.shape[1]}]."
        )
    return input @ mat2


def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, out_dtype: Any = None, *,  # noqa: A002
          beta: Any = 1, alpha: Any = 1) -> Tensor:  # fmt: skip
    """``beta * input + alpha * (mat1 @ mat2)`` (``input`` broadcasts to the product;
    computed in ``out_dtype`` when given)."""
    input, mat1, mat2 = _out_dtype(out_dtype, input, mat1, mat2)
    input, mat1, mat2 = lower_precision_inputs(input, mat1, mat2)
    _check_ndim("addmm", "mat1", mat1, 2)
    _check_ndim("addmm", "mat2", mat2, 2)
    return scaled_sum(input, mat1 @ mat2, beta, alpha)


def addmv(input: Tensor, mat: Tensor, vec: Tensor, *, beta: Any = 1,  # noqa: A002
          alpha: Any = 1) -> Tensor:  # fmt: skip
    """``beta * input + alpha * (mat @ vec)``."""
    _check_ndim("addmv", "mat", mat, 2)
    _check_ndim("addmv", "vec", vec, 1)
    return scaled_sum(input, mv(mat, vec), beta, alpha)


def baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, out_dtype: Any = None, *,  # noqa: A002
            beta: Any = 1, alpha: Any = 1) -> Tensor:  # fmt: skip
    """``beta * input + alpha * bmm(batch1, batch2)`` (in ``out_dtype`` when given)."""
    input, batch1, batch2 = _out_dtype(out_dtype, input, batch1, batch2)
    input, batch1, batch2 = lower_precision_inputs(input, batch1, batch2)
    return scaled_sum(input, bmm(batch1, batch2), beta, alpha)


def addbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1,  # noqa: A002
           alpha: Any = 1) -> Tensor:  # fmt: skip
    """``beta * input + alpha * sum_b(batch1[b] @ batch2[b])``."""
    input, batch1, batch2 = lower_precision_inputs(input, batch1, batch2)
    return scaled_sum(input, bmm(batch1, batch2).sum(0), beta, alpha)


def cross(input: Tensor, other: Tensor, dim: int | None = None) -> Tensor:  # noqa: A002
    """The 3-vector cross product along ``dim`` (default: the first dim of size 3)."""
    a, b = input, other
    if a.shape != b.shape:
        shape = _broadcast(a.shape, b.shape)
        a, b = a.expand(shape), b.expand(shape)
    if dim is None:
        dims = [i for i, s in enumerate(a.shape) if s == 3]
        if not dims:
            raise RuntimeError(f"no dimension of size 3 in input (shape {list(a.shape)})")
        d = dims[0]
    else:
        d = normalize_dim(dim, a.ndim)
    if a.shape[d] != 3:
        raise RuntimeError(
            f"linalg.cross: inputs dimension {d} must have length 3. Got {a.shape[d]} and "
            f"{b.shape[d]}"
        )
    a0, a1, a2 = (a.narrow(d, i, 1) for i in range(3))
    b0, b1, b2 = (b.narrow(d, i, 1) for i in range(3))
    return cat([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], d)


def _broadcast(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
    out = []
    for x, y in zip(a, b):
        if x != y and 1 not in (x, y):
            raise RuntimeError(f"shapes {list(a)} and {list(b)} are not broadcastable")
        out.append(y if x == 1 else x)  # a size 1 broadcasts to 0 too
    return tuple(out)


class Cdist(Function):
    """Pairwise p-norm distances between the rows of ``x1`` (.., P, M) and ``x2`` (.., R, M)."""

    @staticmethod
    def forward(ctx: Any, x1: Any, x2: Any, p: float, use_mm: bool) -> Any:
        xp = ctx.xp
        ctx.p = p
        if p == 2 and use_mm:  # |a|^2 + |b|^2 - 2 a.b: one GEMM, no (P, R, M) temporary
            sq1 = xp.sum(x1 * x1, axis=-1)[..., :, None]
            sq2 = xp.sum(x2 * x2, axis=-1)[..., None, :]
            d2 = sq1 + sq2 - 2 * xp.matmul(x1, xp.swapaxes(x2, -1, -2))
            out = xp.sqrt(xp.maximum(d2, 0))
        else:
            diff = xp.abs(x1[..., :, None, :] - x2[..., None, :, :])
            if p == 0:
                out = xp.sum(diff != 0, axis=-1).astype(x1.dtype)
            elif p == float("inf"):
                out = xp.max(diff, axis=-1) if diff.shape[-1] else xp.sum(diff, axis=-1)
            elif p == 1:
                out = xp.sum(diff, axis=-1)
            else:
                out = xp.sum(diff**p, axis=-1) ** (1.0 / p)
        ctx.save_for_backward(x1, x2, out)
        return out

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        # NOTE: where two rows coincide the distance has no gradient (a kink for every p);
        # like PyTorch we return 0 there.
        x1, x2, dist = ctx.saved_tensors
        p = ctx.p
        if p == 0:
            return None, None, None, None
        if p == 2:
            w = (g / dist.where(dist > 0, 1.0)).where(dist > 0, 0.0)
            g1 = w.sum(-1, keepdim=True) * x1 - w @ x2
            g2 = w.sum(-2).unsqueeze(-1) * x2 - w.mT @ x1
            return g1, g2, None, None
        diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)
        if p == 1:
            coef = diff.sign()
        elif p == float("inf"):
            coef = diff.sign() * (diff.abs() == dist.unsqueeze(-1)).to(diff.dtype)
        else:
            safe = dist.where(dist > 0, 1.0).unsqueeze(-1)
            mag = diff.abs().where(diff != 0, 1.0)  # 0^(p-1) is inf for p < 1; sign(0) zeroes it
            coef = diff.sign() * (mag / safe) ** (p - 1)
        coef = g.unsqueeze(-1) * coef
        return coef.sum(-2), -coef.sum(-3), None, None


def cdist(
    x1: Tensor,
    x2: Tensor,
    p: float = 2.0,
    compute_mode: str = "use_mm_for_euclid_dist_if_necessary",
) -> Tensor:
    """Pairwise distances: ``out[..., i, j] = ||x1[..., i, :] - x2[..., j, :]||_p``.

    For p=2 the matrix-product form is used when either side has more than 25 rows (as
    PyTorch's default ``compute_mode``); it is faster but loses precision for nearly equal
    rows.
    """
    if x1.ndim < 2 or x2.ndim < 2:
        raise RuntimeError(
            f"cdist only supports at least 2D tensors, X1 got: {x1.ndim}D, X2 got: {x2.ndim}D"
        )
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(
            f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}"
        )
    if p < 0:
        raise RuntimeError(f"cdist only supports non-negative p values, got {p}")
    x1, x2 = float32_inputs(x1, x2)
    if not x1.dtype.is_floating_point or x1.dtype is not x2.dtype:
        raise RuntimeError(
            f"cdist only supports floating-point dtypes of one kind, X1 got: {x1.dtype}, X2 got: "
            f"{x2.dtype}"
        )
    lead = _broadcast(x1.shape[:-2], x2.shape[:-2])
    x1 = x1.expand(lead + x1.shape[-2:])
    x2 = x2.expand(lead + x2.shape[-2:])
    if compute_mode == "use_mm_for_euclid_dist":
        use_mm = True
    elif compute_mode == "donot_use_mm_for_euclid_dist":
        use_mm = False
    else:
        use_mm = x1.shape[-2] > 25 or x2.shape[-2] > 25
    return Cdist.apply(x1, x2, float(p), use_mm)
