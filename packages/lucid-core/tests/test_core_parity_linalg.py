"""PyTorch parity for lucid.linalg and lucid.autograd.functional: values and gradients."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import lucid
import lucid.linalg as LA
from lucid.autograd import functional as F

pytestmark = pytest.mark.parity
torch = pytest.importorskip("torch")
TLA = torch.linalg
TF = torch.autograd.functional


def _pair(shape: tuple[int, ...], seed: int) -> tuple[Any, Any]:
    a = np.random.default_rng(seed).standard_normal(shape)
    return lucid.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)


def _flat(res: Any) -> list[Any]:
    if isinstance(res, (tuple, list)):
        return [r for item in res for r in _flat(item)]
    return [res]


def _spd_l(x: Any) -> Any:
    return x @ x.mT + 3 * lucid.eye(x.shape[-1], dtype=lucid.float64)


def _spd_t(x: Any) -> Any:
    return x @ x.mT + 3 * torch.eye(x.shape[-1], dtype=torch.float64)


def _svd_l(x: Any) -> Any:
    u, s, vh = LA.svd(x, full_matrices=False)
    return u @ vh, s, (u * s.unsqueeze(-2)) @ vh


def _svd_t(x: Any) -> Any:
    u, s, vh = TLA.svd(x, full_matrices=False)
    return u @ vh, s, (u * s.unsqueeze(-2)) @ vh


def _eigh_l(x: Any) -> Any:
    w, q = LA.eigh(x + x.mT)
    return w, q * q[..., :1, :].sign()


def _eigh_t(x: Any) -> Any:
    w, q = TLA.eigh(x + x.mT)
    return w, q * q[..., :1, :].sign()


def _qr_l(x: Any) -> Any:
    q, r = LA.qr(x)
    sign = r.diagonal(0, -2, -1).sign()  # LAPACK sign conventions can differ: normalise
    return q * sign.unsqueeze(-2), r * sign.unsqueeze(-1)


def _qr_t(x: Any) -> Any:
    q, r = TLA.qr(x)
    sign = r.diagonal(0, -2, -1).sign()
    return q * sign.unsqueeze(-2), r * sign.unsqueeze(-1)


CASES = {
    "inv": (LA.inv, TLA.inv, [(2, 3, 3)]),
    "det": (LA.det, TLA.det, [(2, 3, 3)]),
    "slogdet": (LA.slogdet, TLA.slogdet, [(3, 3)]),
    "solve": (LA.solve, TLA.solve, [(2, 3, 3), (2, 3, 2)]),
    "solve_vec": (LA.solve, TLA.solve, [(3, 3), (3,)]),
    "cholesky": (lambda a: LA.cholesky(_spd_l(a)), lambda a: TLA.cholesky(_spd_t(a)), [(2, 3, 3)]),
    "cholesky_upper": (
        lambda a: LA.cholesky(_spd_l(a), upper=True),
        lambda a: TLA.cholesky(_spd_t(a), upper=True),
        [(3, 3)],
    ),
    "qr": (_qr_l, _qr_t, [(2, 5, 3)]),
    "svd_tall": (_svd_l, _svd_t, [(2, 5, 3)]),
    "svd_wide": (_svd_l, _svd_t, [(3, 5)]),
    "svdvals": (LA.svdvals, TLA.svdvals, [(4, 3)]),
    "eigh": (_eigh_l, _eigh_t, [(2, 4, 4)]),
    "eigvalsh": (lambda a: LA.eigvalsh(a + a.mT), lambda a: TLA.eigvalsh(a + a.mT), [(3, 3)]),
    "pinv": (LA.pinv, TLA.pinv, [(5, 3)]),
    "pinv_hermitian": (
        lambda a: LA.pinv(_spd_l(a), hermitian=True),
        lambda a: TLA.pinv(_spd_t(a), hermitian=True),
        [(3, 3)],
    ),
    "matrix_power": (
        lambda a: LA.matrix_power(a, 4),
        lambda a: TLA.matrix_power(a, 4),
        [(2, 3, 3)],
    ),
    "matrix_power_neg": (
        lambda a: LA.matrix_power(a, -2),
        lambda a: TLA.matrix_power(a, -2),
        [(3, 3)],
    ),
    "multi_dot": (
        lambda a, b, c: LA.multi_dot([a, b, c]),
        lambda a, b, c: TLA.multi_dot([a, b, c]),
        [(2, 3), (3, 4), (4,)],
    ),
}
for _ord in [2, 1, 3, 0.5, math.inf, -math.inf, 0]:
    CASES[f"vector_norm_{_ord}"] = (
        lambda a, o=_ord: LA.vector_norm(a, o, dim=1),
        lambda a, o=_ord: TLA.vector_norm(a, o, dim=1),
        [(3, 4)],
    )
for _ord in ["fro", "nuc", 2, -2, 1, -1, math.inf, -math.inf]:
    CASES[f"matrix_norm_{_ord}"] = (
        lambda a, o=_ord: LA.matrix_norm(a, o),
        lambda a, o=_ord: TLA.matrix_norm(a, o),
        [(2, 3, 4)],
    )
CASES["norm_default"] = (LA.norm, TLA.norm, [(3, 4)])
for _upper, _left, _unit in [(True, True, False), (False, False, True), (True, False, False)]:
    CASES[f"solve_triangular_{_upper}_{_left}_{_unit}"] = (
        lambda a, b, u=_upper, l=_left, t=_unit: LA.solve_triangular(
            a + 3 * lucid.eye(3, dtype=lucid.float64), b, upper=u, left=l, unitriangular=t
        ),
        lambda a, b, u=_upper, l=_left, t=_unit: TLA.solve_triangular(
            a + 3 * torch.eye(3, dtype=torch.float64), b, upper=u, left=l, unitriangular=t
        ),
        [(3, 3), (3, 3)],
    )
CASES["lstsq_tall"] = (
    lambda a, b: LA.lstsq(a, b).solution,
    lambda a, b: TLA.lstsq(a, b, driver="gelsd").solution,
    [(5, 3), (5, 2)],
)
CASES["lstsq_wide"] = (
    lambda a, b: LA.lstsq(a, b).solution,
    lambda a, b: TLA.lstsq(a, b, driver="gelsd").solution,
    [(2, 4), (2, 3)],
)
CASES["matrix_exp"] = (LA.matrix_exp, TLA.matrix_exp, [(2, 4, 4)])
CASES["matrix_exp_scaled"] = (
    lambda a: LA.matrix_exp(a * 6),
    lambda a: TLA.matrix_exp(a * 6),
    [(3, 3)],
)
CASES["logdet"] = (lambda a: LA.logdet(_spd_l(a)), lambda a: torch.logdet(_spd_t(a)), [(3, 3)])
CASES["norm_dim"] = (lambda a: LA.norm(a, 3, dim=0), lambda a: TLA.norm(a, 3, dim=0), [(3, 4)])


@pytest.mark.parametrize("name", sorted(CASES))
def test_linalg_values_and_gradients(name: str) -> None:
    lfn, tfn, shapes = CASES[name]
    pairs = [_pair(s, i) for i, s in enumerate(shapes)]
    lo, to = _flat(lfn(*(p[0] for p in pairs))), _flat(tfn(*(p[1] for p in pairs)))
    rng = np.random.default_rng(9)
    lsum: Any = 0
    tsum: Any = 0
    for a, b in zip(lo, to):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-8, atol=1e-10)
        if b.requires_grad:
            w = rng.standard_normal(tuple(b.shape))
            lsum = lsum + (a * lucid.tensor(w)).sum()
            tsum = tsum + (b * torch.tensor(w)).sum()
    lsum.backward()
    tsum.backward()
    for lx, tx in pairs:
        tg = np.zeros(tuple(tx.shape)) if tx.grad is None else tx.grad.numpy()  # None: all 0
        np.testing.assert_allclose(lx.grad.numpy(), tg, rtol=1e-7, atol=1e-9)


def test_det_gradient_at_a_singular_matrix() -> None:
    # The true derivative at a rank n-1 matrix is its cofactor matrix, which lucid returns
    # (checked by finite differences). PyTorch's value depends on its LAPACK's LU: where the last
    # pivot comes out exactly 0 it returns 0 (det(A) * A^-T with det(A) == 0, seen on AMD Zen 5),
    # where it comes out ~1e-16 it returns the cofactors (seen on Intel Xeon): either is accepted.
    a = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])
    lx = lucid.tensor(a, requires_grad=True)
    LA.det(lx).backward()
    numeric = np.zeros((3, 3))
    for i in range(3):
        for j in range(3):
            e = np.zeros((3, 3))
            e[i, j] = 1e-6
            numeric[i, j] = (np.linalg.det(a + e) - np.linalg.det(a - e)) / 2e-6
    np.testing.assert_allclose(lx.grad.numpy(), numeric, atol=1e-6, rtol=1e-7)
    tx = torch.tensor(a, requires_grad=True)
    TLA.det(tx).backward()
    tg = tx.grad.numpy()
    zero = np.allclose(tg, 0.0, atol=1e-12, rtol=1e-10)
    assert zero or np.allclose(tg, numeric, atol=1e-6, rtol=1e-7), tg


def test_matrix_rank_matches() -> None:
    a = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])
    assert LA.matrix_rank(lucid.tensor(a)).item() == TLA.matrix_rank(torch.tensor(a)).item()


def _fn_l(x: Any, y: Any) -> Any:
    return (x.exp() * y.sum()).tanh(), (x * x).sum() * y


def _fn_t(x: Any, y: Any) -> Any:
    return (x.exp() * y.sum()).tanh(), (x * x).sum() * y


def _scalar(x: Any, y: Any) -> Any:
    return (x.exp() * y.sum()).tanh().sum() + (x * x * x).sum() * (y * y).sum()


def _inputs() -> tuple[tuple[Any, Any], tuple[Any, Any]]:
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal(3), rng.standard_normal(2)
    return (lucid.tensor(x), lucid.tensor(y)), (torch.tensor(x), torch.tensor(y))


def _same(a: Any, b: Any) -> None:
    la, tb = _flat(a), _flat(b)
    assert len(la) == len(tb)
    for u, v in zip(la, tb):
        np.testing.assert_allclose(u.numpy(), v.detach().numpy(), rtol=1e-10, atol=1e-12)


def test_functional_matches_torch() -> None:
    (lx, ly), (tx, ty) = _inputs()
    _same(F.jacobian(_fn_l, (lx, ly)), TF.jacobian(_fn_t, (tx, ty)))
    _same(F.jacobian(lambda a: a.exp() * a.sum(), lx), TF.jacobian(lambda a: a.exp() * a.sum(), tx))
    _same(F.hessian(_scalar, (lx, ly)), TF.hessian(_scalar, (tx, ty)))
    _same(F.hessian(lambda a: (a**3).sum(), lx), TF.hessian(lambda a: (a**3).sum(), tx))
    lv = (lucid.tensor([1.0, -2.0, 0.5], dtype=lucid.float64), lucid.tensor([0.3, 1.0]).double())
    tv = tuple(torch.tensor(v.numpy()) for v in lv)
    _same(F.jvp(_fn_l, (lx, ly), lv), TF.jvp(_fn_t, (tx, ty), tv))
    lo = tuple(lucid.ones(*o.shape, dtype=lucid.float64) for o in _fn_l(lx, ly))
    to = tuple(torch.ones(o.shape, dtype=torch.float64) for o in _fn_t(tx, ty))
    _same(F.vjp(_fn_l, (lx, ly), lo), TF.vjp(_fn_t, (tx, ty), to))
    _same(F.hvp(_scalar, (lx, ly), lv), TF.hvp(_scalar, (tx, ty), tv))
    _same(F.vhp(_scalar, (lx, ly), lv), TF.vhp(_scalar, (tx, ty), tv))


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
@pytest.mark.parametrize("scale", [1e-7, 1e-4, 0.01, 0.2, 1.0, 2.5, 8.0])
@pytest.mark.parametrize("shape", [(4, 4), (1, 4, 4), (3, 4, 4)])
def test_matrix_exp_is_torchs_algorithm(dtype: str, scale: float, shape: tuple[int, ...]) -> None:
    """torch's degree choice by norm for one matrix (a batch takes degree 18 throughout, each
    matrix scaled and squared by its own norm): float64 agrees to rounding, float32 keeps
    torch's (larger) truncation error, so it agrees far closer than to the exact value."""
    rng = np.random.default_rng(int(scale * 1e7) % 1000 + len(shape))
    a = rng.standard_normal(shape) * scale * rng.uniform(0.2, 2.0, shape[:-2] + (1, 1))
    if dtype.startswith("complex"):
        a = a + 1j * rng.standard_normal(shape) * scale
    a = a.astype(dtype)
    want = TLA.matrix_exp(torch.tensor(a)).numpy()
    got = LA.matrix_exp(lucid.tensor(a)).numpy()
    assert got.dtype == want.dtype
    tol = 2e-6 if dtype in ("float32", "complex64") else 5e-14  # the Pade form: 8e-13
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.abs(want).max())
