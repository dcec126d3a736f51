"""matrix_exp: torch's algorithm, Taylor polynomials of degree 1, 2, 4, 8, 12 or 18 evaluated
with few products (Bader, Blanes & Casas 2019, "Computing the Matrix Exponential with an
Optimized Taylor Polynomial Approximation"), picked per matrix by its 1-norm, with scaling and
squaring above the degree-18 bound. The bounds are float32's for float32/complex64 input and
float64's otherwise, as in torch: float32 results then carry torch's own truncation and
rounding, not those of another (more accurate) method."""

from __future__ import annotations

import math
from typing import Any

from lucid import dtypes
from lucid._tensor import Tensor
from lucid.autograd.function import Function
from lucid.linalg._common import check_matrix
from lucid.ops.join import cat

# the 1-norm bounds of degrees 1, 2, 4, 8, 12, 18
_THETAS_FLOAT = (1.192092800768788e-07, 5.978858893805233e-04, 5.116619363445086e-02,
                 5.800524627688768e-01, 1.461661507209034e00, 3.010066362817634e00)  # fmt: skip
_THETAS_DOUBLE = (2.220446049250313e-16, 2.580956802971767e-08, 3.397168839976962e-04,
                  4.991228871115323e-02, 2.996158913811580e-01, 1.090863719290036e00)  # fmt: skip

_SQRT_177 = 0.1330413469565007072504e2
_X3 = 2.0 / 3.0
_T8 = (  # x1, x2, x4, x5, x6, x7, y2 of the degree-8 scheme
    _X3 * ((1.0 + _SQRT_177) / 88.0),
    _X3 * ((1.0 + _SQRT_177) / 352.0),
    (-271.0 + 29.0 * _SQRT_177) / (315.0 * _X3),
    (-11.0 + 11.0 * _SQRT_177) / (1260.0 * _X3),
    (-99.0 + 11.0 * _SQRT_177) / (5040.0 * _X3),
    (89.0 - _SQRT_177) / (5040.0 * _X3),
    (857.0 - 58.0 * _SQRT_177) / 630.0,
)
# row i: the coefficients of B_i over (I, A, A^2, A^3[, A^6])
_B12 = ((9.0198e-16, 0.46932117595418237389, -0.20099424927047284052, -0.04623946134063071740),
        (5.31597895759871264183, 1.19926790417132231573, 0.01179296240992997031,
         0.01108844528519167989),
        (0.18188869982170434744, 0.05502798439925399070, 0.09351590770535414968,
         0.00610700528898058230),
        (-2.0861320e-13, -0.13181061013830184015, -0.02027855540589259079,
         -0.00675951846863086359))  # fmt: skip
_B18 = ((0.0, -1.00365581030144618291e-01, -8.02924648241156932449e-03,
         -8.92138498045729985177e-04, 0.0),
        (0.0, 3.97849749499645077844e-01, 1.36783778460411720168e00,
         4.98289622525382669416e-01, -6.37898194594723280150e-04),
        (-1.09676396052962061844e01, 1.68015813878906206114e00, 5.71779846478865511061e-02,
         -6.98210122488052056106e-03, 3.34975017086070470649e-05),
        (-9.04316832390810593223e-02, -6.76404519071381882256e-02, 6.75961301770459654925e-02,
         2.95552570429315521194e-02, -1.39180257516060693404e-05),
        (0.0, 0.0, -9.23364619367118555360e-02, -1.69364939002081722752e-02,
         -1.40086798182036094347e-05))  # fmt: skip


class _Taylor:
    """The polynomials of one batch of matrices (xp arrays of one dtype, shape (b, n, n)),
    each sum and product in the order torch's kernels take them."""

    def __init__(self, xp: Any, real: Any) -> None:
        self.xp, self.real = xp, real  # real: the native real dtype the coefficients round to

    def _c(self, value: float) -> Any:
        return self.xp.asarray(value, dtype=self.real)

    def combine(self, mats: list[Any], coefficients: tuple[float, ...]) -> Any:
        """``sum_j c_j * M_j``, summed left to right (torch's _compute_linear_combination)."""
        out = mats[0] * self._c(coefficients[0])
        for m, c in zip(mats[1:], coefficients[1:], strict=True):
            out = out + m * self._c(c)
        return out

    def powers(self, a: Any, count: int) -> list[Any]:
        """The first ``count`` of I, A, A^2, A^3, A^6."""
        xp = self.xp
        eye = xp.broadcast_to(xp.eye(a.shape[-1], dtype=a.dtype), a.shape)
        out = [eye, a]
        if count > 2:
            out.append(xp.matmul(a, a))
        if count > 3:
            out.append(xp.matmul(a, out[2]))
        if count > 4:
            out.append(xp.matmul(out[3], out[3]))
        return out

    def t1(self, a: Any) -> Any:
        i, a1 = self.powers(a, 2)
        return i + a1

    def t2(self, a: Any) -> Any:
        i, a1, a2 = self.powers(a, 3)
        return i + a1 + a2 / self._c(2.0)

    def t4(self, a: Any) -> Any:
        p = self.powers(a, 3)
        p.append(self.xp.matmul(p[2], self.combine(p, (1 / 2.0, 1 / 6.0, 1 / 24.0))))
        return self.combine(p, (1.0, 1.0, 0.0, 1.0))

    def t8(self, a: Any) -> Any:
        x1, x2, x4, x5, x6, x7, y2 = _T8
        xp, p = self.xp, self.powers(a, 3)
        p.append(xp.matmul(p[2], self.combine(p[1:3], (x1, x2))))  # A4
        p.append(
            xp.matmul(self.combine(p[2:4], (_X3, 1.0)), self.combine(p, (x4, x5, x6, x7)))
        )  # A8
        return self.combine(p, (1.0, 1.0, y2, 0.0, 1.0))

    def t12(self, a: Any) -> Any:
        xp, p = self.xp, self.powers(a, 4)
        b = [self.combine(p, row) for row in _B12]
        b[2] = b[2] + xp.matmul(b[3], b[3])
        return b[0] + xp.matmul(b[1] + b[2], b[2])

    def t18(self, a: Any) -> Any:
        xp, p = self.xp, self.powers(a, 5)
        b = [self.combine(p, row) for row in _B18]
        b[3] = b[3] + xp.matmul(b[0], b[4])
        return b[1] + xp.matmul(b[2] + b[3], b[3])


def _expm(backend: Any, a: Any) -> Any:
    """``exp`` of each matrix of ``a`` (shape (*, n, n)), as torch's mexp."""
    xp = backend.xp
    shape, n = a.shape, a.shape[-1]
    if n == 1:
        return xp.exp(a)
    dtype = backend.dtype_of(a)
    if a.size == 0:
        return backend.copy(a)
    if dtype.itemsize < 4 and not dtype.is_complex:
        # float16/bfloat16: in float32, rounded back (torch's half kernels read the float64
        # coefficients as half values and return garbage)
        wide = backend.astype(a, dtypes.float32)
        return backend.astype(_expm(backend, wide), dtype)
    single = dtype in (dtypes.float32, dtypes.complex64)
    thetas = _THETAS_FLOAT if single else _THETAS_DOUBLE
    real = backend.native_dtype(dtypes.float32 if single else dtypes.float64)
    a = xp.reshape(a, (-1, n, n))
    norm = xp.max(xp.sum(xp.abs(a), axis=-2), axis=-1)
    norms = backend.to_numpy(norm).tolist()
    # torch's ceil(log2(norm / theta)), in the norm's dtype (the forward runs warning-free)
    logs = backend.to_numpy(xp.ceil(xp.log2(norm / xp.asarray(thetas[5], dtype=real))))
    bounds = [float(backend.to_numpy(xp.asarray(t, dtype=real))) for t in thetas]
    taylor = _Taylor(xp, real)
    squarings = [max(0, int(v)) if math.isfinite(v) else 0 for v in logs.tolist()]
    if len(norms) == 1:
        # one matrix: the lowest degree whose bound holds its norm; from the degree-12 bound
        # on (inclusive, as torch's), degree 18 on A / 2**s, squared s times; a nan norm
        # leaves torch's nan-filled result
        value = norms[0]
        degrees = (taylor.t1, taylor.t2, taylor.t4, taylor.t8, taylor.t12)
        for k, fn in enumerate(degrees):
            if (bounds[k - 1] if k else -1.0) < value <= bounds[k] and value < bounds[4]:
                return xp.reshape(fn(a), shape)
        if math.isnan(value):
            return xp.full(shape, math.nan, dtype=a.dtype)
        return xp.reshape(_scale_square(xp, taylor, a, squarings[0], real), shape)
    # a batch: degree 18 for every matrix (torch skips the choice to spare its host syncs),
    # each scaled and squared by its own s
    groups: dict[int, list[int]] = {}
    for i, s in enumerate(squarings):
        groups.setdefault(s, []).append(i)
    pieces: list[Any] = []
    order: list[int] = []
    for s, idx in groups.items():
        sub = a if len(groups) == 1 else xp.take(a, xp.asarray(idx), axis=0)
        pieces.append(_scale_square(xp, taylor, sub, s, real))
        order.extend(idx)
    out = pieces[0] if len(pieces) == 1 else xp.concatenate(pieces, axis=0)
    if order != sorted(order):
        inverse = [0] * len(order)
        for pos, i in enumerate(order):
            inverse[i] = pos
        out = xp.take(out, xp.asarray(inverse), axis=0)
    return xp.reshape(out, shape)


def _scale_square(xp: Any, taylor: _Taylor, a: Any, s: int, real: Any) -> Any:
    """The degree-18 polynomial of ``a / 2**s``, squared ``s`` times."""
    r = taylor.t18(a * xp.asarray(2.0**-s, dtype=real) if s else a)
    for _ in range(s):
        r = xp.matmul(r, r)
    return r


class MatrixExp(Function):
    _node_name = "LinalgMatrixExpBackward0"  # torch's name of this node

    @staticmethod
    def forward(ctx: Any, a: Any) -> Any:
        ctx.save_for_backward(a)
        return _expm(ctx.backend, a)

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        # The adjoint of the Frechet derivative: the top-right block of
        # exp([[A^T, G], [0, A^T]]) (as PyTorch); differentiable again through matrix_exp.
        (a,) = ctx.saved_tensors
        n = a.shape[-1]
        at = a.mT
        top = cat([at, g], -1)
        bottom = cat([at.new_zeros(at.shape), at], -1)
        big: Tensor = MatrixExp.apply(cat([top, bottom], -2))
        return big[..., :n, n:]


def matrix_exp(input: Tensor) -> Tensor:  # noqa: N803
    """The matrix exponential ``sum_k A^k / k!`` of each square matrix."""
    return MatrixExp.apply(check_matrix("matrix_exp", input))
