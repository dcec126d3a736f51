"""Inverses and determinants: inv, solve, det, slogdet, pinv, matrix_power."""

from __future__ import annotations

from typing import Any, NamedTuple

from lucid._creation import zeros
from lucid._tensor import Tensor
from lucid.autograd.function import Function
from lucid.dtypes import int64
from lucid.linalg._common import LinAlgError, Solve, check_matrix, eye_like, lapack, lapack_saved
from lucid.linalg._decomp import svd, svdvals
from lucid.linalg._norms import matrix_rank
from lucid.ops._util import index_int, piecewise_constant
from lucid.ops.join import cat


class Inv(Function):
    _node_name = "LinalgInvExBackward0"  # torch's name of this node

    @staticmethod
    def forward(ctx: Any, a: Any) -> Any:
        return lapack_saved(ctx, "inv", ctx.xp.linalg.inv, a)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        (y,) = ctx.saved_tensors
        return -(y.mT @ g @ y.mT)


def inv(A: Tensor) -> Tensor:  # noqa: N803
    """The inverse of each square matrix; a singular one raises :class:`LinAlgError`."""
    return Inv.apply(check_matrix("inv", A))


def solve(A: Tensor, B: Tensor, *, left: bool = True) -> Tensor:  # noqa: N803
    """The solution ``X`` of ``A @ X = B`` (``X @ A = B`` with ``left=False``).

    ``B`` may be a batch of vectors (shape ``A.shape[:-1]``) or of matrices.
    """
    a = check_matrix("solve", A)
    if not left:
        return solve(a.mT, B.mT).mT
    vector = B.ndim == 1 or (B.ndim == a.ndim - 1 and B.shape == a.shape[:-1])
    b = B.unsqueeze(-1) if vector else B
    if b.shape[-2] != a.shape[-1]:
        raise RuntimeError(
            f"linalg.solve: Incompatible shapes of A and B for the equation AX = B "
            f"({a.shape[-2]}x{a.shape[-1]} and {b.shape[-2]}x{b.shape[-1]})"
        )
    if b.dtype is not a.dtype:
        b = b.to(a.dtype)
    lead = _broadcast(a.shape[:-2], b.shape[:-2])
    a = a.expand(lead + a.shape[-2:])
    b = b.expand(lead + b.shape[-2:])
    x: Tensor = Solve.apply(a, b)
    return x.squeeze(-1) if vector else x


def _broadcast(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
    if any(x != y and 1 not in (x, y) for x, y in zip(a, b)):
        raise RuntimeError(f"linalg: batch shapes {list(a)} and {list(b)} are not broadcastable")
    return tuple(max(x, y) for x, y in zip(a, b))


class Det(Function):
    _node_name = "LinalgDetBackward0"  # torch's name of this node

    @staticmethod
    def forward(ctx: Any, a: Any) -> Any:
        out = ctx.xp.linalg.det(a)
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        # d det(A) = det(A) tr(A^-1 dA). At a singular A the cofactor matrix is still the
        # gradient: it is computed from the SVD there (rank n-1; lower ranks give zero).
        a, d = ctx.saved_tensors
        if not bool((d == 0).any()):
            try:
                return (g * d).unsqueeze(-1).unsqueeze(-1) * inv(a).mT
            except LinAlgError:  # singular to working precision although det != 0
                pass
        return g.unsqueeze(-1).unsqueeze(-1) * _cofactor(a)


def _cofactor(a: Tensor) -> Tensor:
    """``adj(A)^T`` through the SVD: det(U V^T) * U diag(prod_{j != i} s_j) V^T."""
    u, s, vh = svd(a, full_matrices=False)
    xp = a.backend.xp
    sign = Tensor.from_backend_array(xp.linalg.det(u._data) * xp.linalg.det(vh._data), a.backend)
    n = s.shape[-1]
    prods = []
    for i in range(n):
        others = [s.narrow(-1, j, 1) for j in range(n) if j != i]
        p = others[0] if others else s.narrow(-1, i, 1) * 0 + 1
        for o in others[1:]:
            p = p * o
        prods.append(p)
    prod_except: Tensor = cat(prods, -1)
    scaled = u * prod_except.unsqueeze(-2)
    out: Tensor = sign.unsqueeze(-1).unsqueeze(-1) * (scaled @ vh)
    return out


def det(A: Tensor) -> Tensor:  # noqa: N803
    """The determinant of each square matrix (differentiable also where A is singular)."""
    return Det.apply(check_matrix("det", A))


class SlogdetResult(NamedTuple):
    sign: Tensor
    logabsdet: Tensor


class Slogdet(Function):
    _node_name = "LinalgSlogdetBackward0"  # torch's name of this node

    @staticmethod
    def forward(ctx: Any, a: Any) -> Any:
        sign, logabs = ctx.xp.linalg.slogdet(a)
        ctx.save_for_backward(a)  # the sign is recorded too, with a zero gradient (as torch)
        return sign, logabs

    @staticmethod
    def backward(ctx: Any, g_sign: Tensor | None, g: Tensor | None) -> Any:
        (a,) = ctx.saved_tensors
        if g is None:
            return a.new_zeros(a.shape)
        return g.unsqueeze(-1).unsqueeze(-1) * inv(a).mT


def slogdet(A: Tensor) -> SlogdetResult:  # noqa: N803
    """``(sign, log|det|)``: the determinant without overflow; ``log|det|`` is differentiable.

    At a singular matrix log|det| is -inf and its gradient is undefined (as in PyTorch).
    """
    sign, logabs = Slogdet.apply(check_matrix("slogdet", A))
    return SlogdetResult(sign, logabs)


class Pinv(Function):
    _node_name = "LinalgPinvBackward0"  # torch's name of this node

    @staticmethod
    def forward(ctx: Any, a: Any, atol: float | None, rtol: float | None, hermitian: bool) -> Any:
        xp = ctx.xp
        m, n = a.shape[-2], a.shape[-1]
        if rtol is None:
            eps = _eps(ctx.backend.dtype_of(a))
            rtol = 0.0 if atol is not None and atol > 0 else max(m, n) * eps
        if hermitian:
            w, q = lapack("pinv", xp.linalg.eigh, a)
            s, u, vh = xp.abs(w), q * xp.sign(w)[..., None, :], xp.swapaxes(q, -1, -2)
        else:
            u, s, vh = lapack("pinv", xp.linalg.svd, a, full_matrices=False)
        smax = xp.max(s, axis=-1, keepdims=True) if s.shape[-1] else s
        cutoff = xp.maximum(atol or 0.0, rtol * smax)
        s_inv = xp.where(s > cutoff, 1.0 / xp.where(s > cutoff, s, 1.0), 0.0)
        out = xp.matmul(xp.swapaxes(vh, -1, -2) * s_inv[..., None, :], xp.swapaxes(u, -1, -2))
        out = out.astype(a.dtype)
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        # Golub & Pereyra: valid where the rank is locally constant (as PyTorch's formula).
        a, p = ctx.saved_tensors
        pt = p.mT
        proj_rows = eye_like(a @ p) - a @ p
        proj_cols = eye_like(p @ a) - p @ a
        ga = -(pt @ g @ pt) + proj_rows @ g.mT @ (p @ pt) + (pt @ p) @ g.mT @ proj_cols
        return ga, None, None, None


def _eps(dt: Any) -> float:
    return 2.220446049250313e-16 if dt.itemsize >= 8 else 1.1920928955078125e-07


def pinv(
    input: Tensor,  # noqa: A002
    rcond: float | None = None,
    hermitian: bool = False,
    *,
    atol: float | None = None,
    rtol: float | None = None,
) -> Tensor:
    """The Moore-Penrose pseudo-inverse; singular values below ``max(atol, rtol * s_max)`` are
    treated as zero (``rtol`` defaults to ``max(m, n) * eps``, as PyTorch). ``rcond`` is
    torch's older positional form: ``rtol=rcond`` with ``atol=0``."""
    if rcond is not None:
        if atol is not None or rtol is not None:
            raise RuntimeError("linalg.pinv: rcond cannot be given with atol or rtol")
        atol, rtol = 0.0, rcond
    a = check_matrix("pinv", input, square=hermitian)
    return Pinv.apply(a, atol, rtol, hermitian)


def matrix_power(input: Tensor, n: int) -> Tensor:  # noqa: N803
    """``A`` multiplied by itself ``n`` times (``n < 0`` uses the inverse; ``n == 0`` gives I)."""
    a = check_matrix("matrix_power", input)
    one = None if isinstance(n, bool) else index_int(n)
    if one is not None:
        n = one  # a NumPy integer (or 0-d integer tensor) is an int, as in torch
    if not isinstance(n, int):
        raise TypeError(f"linalg.matrix_power: n must be an int, got {type(n).__name__}")
    if n == 0:
        out: Tensor = eye_like(a).expand(a.shape)
        return piecewise_constant(out, a)
    if n < 0:
        a, n = inv(a), -n
    result: Tensor | None = None
    base = a
    while n:  # square-and-multiply: O(log n) products
        if n & 1:
            result = base if result is None else result @ base
        n >>= 1
        if n:
            base = base @ base
    assert result is not None
    return result


def solve_triangular(
    input: Tensor,  # noqa: N803
    B: Tensor,  # noqa: N803
    *,
    upper: bool,
    left: bool = True,
    unitriangular: bool = False,
) -> Tensor:
    """``X`` with ``A @ X = B`` (``X @ A = B`` when ``left=False``) for triangular ``A``.

    Only the triangle named by ``upper`` is read (its diagonal taken as ones with
    ``unitriangular``), so the gradient with respect to ``A`` is triangular too.
    """
    a = check_matrix("solve_triangular", input)
    if not left:
        return solve_triangular(a.mT, B.mT, upper=not upper, unitriangular=unitriangular).mT
    tri = a.triu() if upper else a.tril()
    if unitriangular:
        eye = eye_like(tri)
        tri = tri * (1 - eye) + eye
    if B.ndim < 2:
        raise RuntimeError(
            f"linalg.solve_triangular: B must have at least 2 dimensions, got {B.ndim}"
        )
    return solve(tri, B)


def logdet(input: Tensor) -> Tensor:  # noqa: N803
    """``log(det(A))``: NaN where the determinant is negative, -inf where it is 0 (as PyTorch)."""
    sign, logabs = slogdet(input)
    out: Tensor = logabs.where(sign >= 0, float("nan"))
    return out


class LstsqResult(NamedTuple):
    solution: Tensor
    residuals: Tensor
    rank: Tensor
    singular_values: Tensor


def lstsq(
    input: Tensor,  # noqa: A002
    b: Tensor,
    rcond: float | None = None,
    *,
    driver: str | None = None,
) -> LstsqResult:
    """The least-squares solution of ``A @ X = B`` (minimum norm where A is rank deficient).

    Computed as ``pinv(A) @ B`` (differentiable in A and B). The other results follow torch's
    CPU ``driver`` (default "gelsy"): ``residuals`` (the squared residual of each column of B)
    where A has more rows than columns and the driver is not "gelsy", else empty; ``rank``
    except for "gels" (empty); ``singular_values`` of A for "gelsd" and "gelss", else empty.
    """
    drv = "gelsy" if driver is None else driver
    if drv not in _LSTSQ_DRIVERS:
        raise RuntimeError(
            f"torch.linalg.lstsq: parameter `driver` should be one of "
            f"({', '.join(_LSTSQ_DRIVERS)}), got {driver!r}"
        )
    a = check_matrix("lstsq", input, square=False)
    vector = b.ndim == a.ndim - 1
    rhs = b.unsqueeze(-1) if vector else b
    if rhs.shape[-2] != a.shape[-2]:
        raise RuntimeError(
            f"torch.linalg.lstsq: input.size(-2) should match other.size(-2), got {a.shape[-2]} "
            f"and {rhs.shape[-2]}"
        )
    x = pinv(a, rtol=rcond) @ rhs
    empty = zeros(0, dtype=a.dtype, device=a.device)
    residuals = empty
    if a.shape[-2] > a.shape[-1] and drv != "gelsy":
        residuals = ((a @ x - rhs) ** 2).sum(-2)
        residuals = residuals.squeeze(-1) if vector else residuals
    rank = zeros(0, dtype=int64, device=a.device) if drv == "gels" else matrix_rank(a, rtol=rcond)
    values = svdvals(a) if drv in ("gelsd", "gelss") else empty
    return LstsqResult(x.squeeze(-1) if vector else x, residuals, rank, values)


_LSTSQ_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")
