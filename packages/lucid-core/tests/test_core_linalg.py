"""lucid.linalg: values against NumPy, batching, errors, gradients (and the undefined cases)."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pytest

import lucid
import lucid.linalg as LA
from lucid.autograd import gradcheck, gradgradcheck

D = lucid.float64


def _r(*shape: int, seed: int = 0) -> Any:
    lucid.manual_seed(seed)
    return lucid.randn(*shape, dtype=D, requires_grad=True)


def _spd(x: Any) -> Any:
    return x @ x.mT + 3 * lucid.eye(x.shape[-1], dtype=D)


def _np(t: Any) -> np.ndarray:
    return t.detach().numpy()


def test_inverse_family_values_batched() -> None:
    a = _r(2, 3, 3)
    b = _r(2, 3, 4, seed=1)
    np.testing.assert_allclose(_np(LA.inv(a)), np.linalg.inv(_np(a)), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(_np(LA.det(a)), np.linalg.det(_np(a)), rtol=1e-12, atol=1e-12)
    sign, logabs = LA.slogdet(a)
    ref_sign, ref_log = np.linalg.slogdet(_np(a))
    np.testing.assert_array_equal(_np(sign), ref_sign)
    np.testing.assert_allclose(_np(logabs), ref_log, rtol=1e-12, atol=1e-12)
    x = LA.solve(a, b)
    np.testing.assert_allclose(_np(a @ x), _np(b), atol=1e-12, rtol=1e-10)
    v = LA.solve(a, b[..., 0])
    assert v.shape == (2, 3)
    np.testing.assert_allclose(
        _np((a @ v.unsqueeze(-1)).squeeze(-1)), _np(b[..., 0]), atol=1e-12, rtol=1e-10
    )
    xr = LA.solve(a, b.mT, left=False)
    np.testing.assert_allclose(_np(xr @ a), _np(b.mT), atol=1e-12, rtol=1e-10)
    p = LA.pinv(_r(4, 3))
    np.testing.assert_allclose(_np(p), np.linalg.pinv(_np(_r(4, 3))), rtol=1e-10, atol=1e-12)
    m = _r(3, 3)
    np.testing.assert_allclose(_np(LA.matrix_power(m, 5)), np.linalg.matrix_power(_np(m), 5),
                               rtol=1e-10, atol=1e-12)  # fmt: skip
    np.testing.assert_allclose(_np(LA.matrix_power(m, -3)), np.linalg.matrix_power(_np(m), -3),
                               rtol=1e-8, atol=1e-12)  # fmt: skip
    np.testing.assert_array_equal(_np(LA.matrix_power(m, 0)), np.eye(3))


def test_decomposition_values() -> None:
    a = _spd(_r(2, 4, 4))
    low = LA.cholesky(a)
    np.testing.assert_allclose(_np(low), np.linalg.cholesky(_np(a)), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(_np(LA.cholesky(a, upper=True)), _np(low.mT), rtol=1e-10, atol=1e-12)
    w = _r(5, 3)
    q, r = LA.qr(w)
    assert q.shape == (5, 3) and r.shape == (3, 3)
    np.testing.assert_allclose(_np(q @ r), _np(w), atol=1e-12, rtol=1e-10)
    assert LA.qr(w, mode="complete").Q.shape == (5, 5)
    assert LA.qr(w, mode="r").Q.numel() == 0
    u, s, vh = LA.svd(w)
    assert u.shape == (5, 5) and vh.shape == (3, 3)
    u, s, vh = LA.svd(w, full_matrices=False)
    np.testing.assert_allclose(_np((u * s.unsqueeze(-2)) @ vh), _np(w), atol=1e-12, rtol=1e-10)
    np.testing.assert_allclose(
        _np(LA.svdvals(w)), np.linalg.svd(_np(w), compute_uv=False), rtol=1e-10, atol=1e-12
    )
    evals, evecs = LA.eigh(a)
    np.testing.assert_allclose(_np(evals), np.linalg.eigvalsh(_np(a)), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(
        _np(evecs @ evals.diag_embed() @ evecs.mT), _np(a), atol=1e-10, rtol=1e-10
    )
    upper_only = a.triu()
    np.testing.assert_allclose(
        _np(LA.eigvalsh(upper_only, UPLO="U")), _np(evals), rtol=1e-12, atol=1e-12
    )


def test_norms() -> None:
    x = _r(3, 4)
    xn = _np(x)
    for ord in [2, 1, 3, 0.5, math.inf, -math.inf, 0]:
        ref = np.linalg.norm(xn.ravel(), ord)
        np.testing.assert_allclose(_np(LA.vector_norm(x, ord)), ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(_np(LA.vector_norm(x, 2, dim=1, keepdim=True)),
                               np.linalg.norm(xn, axis=1, keepdims=True),
                               rtol=1e-12, atol=1e-12)  # fmt: skip
    for ord in ["fro", "nuc", 2, -2, 1, -1, math.inf, -math.inf]:
        np.testing.assert_allclose(
            _np(LA.matrix_norm(x, ord)), np.linalg.norm(xn, ord), rtol=1e-12, atol=1e-12
        )
    assert LA.matrix_norm(_r(2, 3, 4), dim=(0, 2), keepdim=True).shape == (1, 3, 1)
    np.testing.assert_allclose(_np(LA.norm(x)), np.linalg.norm(xn), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(_np(LA.norm(x, 1)), np.linalg.norm(xn, 1), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(
        _np(LA.norm(x, dim=0)), np.linalg.norm(xn, axis=0), rtol=1e-12, atol=1e-12
    )
    assert LA.matrix_rank(lucid.tensor([[1.0, 2.0], [2.0, 4.0]])).item() == 1
    assert LA.matrix_rank(lucid.eye(3)).item() == 3
    with pytest.raises(RuntimeError, match="1D or 2D"):
        LA.norm(_r(2, 2, 2), 2)
    with pytest.raises(RuntimeError, match="floating point"):
        LA.vector_norm(lucid.tensor([1, 2]))


def test_errors() -> None:
    singular = lucid.tensor([[1.0, 2.0], [2.0, 4.0]])
    with pytest.raises(LA.LinAlgError, match="linalg.inv"):
        LA.inv(singular)
    with pytest.raises(LA.LinAlgError, match="linalg.cholesky"):
        LA.cholesky(lucid.tensor([[1.0, 2.0], [2.0, 1.0]]))
    with pytest.raises(RuntimeError, match="square"):
        LA.det(lucid.ones(2, 3))
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        LA.inv(lucid.ones(3))
    with pytest.raises(RuntimeError, match="Incompatible shapes"):
        LA.solve(lucid.eye(3), lucid.ones(2, 2))
    assert issubclass(LA.LinAlgError, RuntimeError)


def _svd_invariant(full: bool) -> Any:
    def fn(a: Any) -> Any:
        u, s, vh = LA.svd(a, full_matrices=full)
        k = s.shape[-1]
        return u[..., :k] @ vh[..., :k, :], s

    return fn


def _eigh_fixed_sign(a: Any) -> Any:
    w, q = LA.eigh(a + a.mT)
    return w, q * q[..., :1, :].sign()


GRAD_CASES = {
    "inv": (LA.inv, [(2, 3, 3)]),
    "det": (LA.det, [(3, 3)]),
    "slogdet": (lambda a: LA.slogdet(a).logabsdet, [(3, 3)]),
    "solve": (LA.solve, [(3, 3), (3, 2)]),
    "solve_vector": (LA.solve, [(3, 3), (3,)]),
    "cholesky": (lambda a: LA.cholesky(_spd(a)), [(3, 3)]),
    "cholesky_upper": (lambda a: LA.cholesky(_spd(a), upper=True), [(2, 3, 3)]),
    "qr_tall": (LA.qr, [(4, 3)]),
    "qr_square": (LA.qr, [(3, 3)]),
    "svd_tall": (_svd_invariant(False), [(4, 3)]),
    "svd_wide": (_svd_invariant(False), [(3, 4)]),
    "svd_full": (_svd_invariant(True), [(4, 3)]),
    "svdvals": (LA.svdvals, [(2, 4, 3)]),
    "eigh": (_eigh_fixed_sign, [(3, 3)]),
    "eigvalsh": (lambda a: LA.eigvalsh(a + a.mT), [(3, 3)]),
    "pinv_tall": (LA.pinv, [(4, 3)]),
    "pinv_wide": (LA.pinv, [(2, 4)]),
    "matrix_power": (lambda a: LA.matrix_power(a, 3), [(3, 3)]),
    "matrix_power_neg": (lambda a: LA.matrix_power(a, -2), [(3, 3)]),
    "vector_norm_2": (lambda a: LA.vector_norm(a, 2, 1), [(3, 4)]),
    "vector_norm_3": (lambda a: LA.vector_norm(a, 3), [(3, 4)]),
    "vector_norm_1": (lambda a: LA.vector_norm(a, 1, (0, 1), keepdim=True), [(3, 4)]),
    "vector_norm_inf": (lambda a: LA.vector_norm(a, math.inf, 0), [(3, 4)]),
    "matrix_norm_fro": (LA.matrix_norm, [(3, 4)]),
    "matrix_norm_nuc": (lambda a: LA.matrix_norm(a, "nuc"), [(3, 4)]),
    "matrix_norm_2": (lambda a: LA.matrix_norm(a, 2), [(3, 4)]),
    "matrix_norm_inf": (lambda a: LA.matrix_norm(a, math.inf), [(3, 4)]),
    "cross": (lambda a, b: LA.cross(a, b), [(2, 3), (2, 3)]),
    "solve_triangular": (
        lambda a, b: LA.solve_triangular(a + 3 * lucid.eye(3, dtype=D), b, upper=True),
        [(3, 3), (3, 2)],
    ),
    "solve_triangular_right": (
        lambda a, b: LA.solve_triangular(
            a + 3 * lucid.eye(3, dtype=D), b, upper=False, left=False, unitriangular=True
        ),
        [(3, 3), (2, 3)],
    ),
    "lstsq_tall": (lambda a, b: LA.lstsq(a, b).solution, [(4, 2), (4, 3)]),
    "lstsq_wide": (lambda a, b: LA.lstsq(a, b).solution, [(2, 4), (2,)]),
    "logdet": (lambda a: LA.logdet(_spd(a)), [(3, 3)]),
    "matrix_exp": (LA.matrix_exp, [(2, 3, 3)]),
    "matrix_exp_large_norm": (lambda a: LA.matrix_exp(a * 4), [(3, 3)]),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_gradients(name: str) -> None:
    fn, shapes = GRAD_CASES[name]
    xs = tuple(_r(*s, seed=i + 3) for i, s in enumerate(shapes))
    assert gradcheck(fn, xs)
    assert gradgradcheck(fn, xs)


def test_det_gradient_at_a_singular_matrix_is_the_cofactor_matrix() -> None:
    a = lucid.tensor([[1.0, 2.0], [2.0, 4.0]], dtype=D, requires_grad=True)
    LA.det(a).backward()
    np.testing.assert_allclose(_np(a.grad), [[4.0, -2.0], [-2.0, 1.0]], atol=1e-12, rtol=1e-10)


@pytest.mark.parametrize("ord", [0.5, 1.0, 2.0, 3.0])
def test_norm_gradient_at_zero_is_zero(ord: float) -> None:
    x = lucid.zeros(3, dtype=D, requires_grad=True)
    LA.vector_norm(x, ord).backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0]
    y = lucid.tensor([0.0, 1.0, -2.0], dtype=D, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        LA.vector_norm(y, ord).backward()
    assert y.grad.tolist()[0] == 0.0 and np.isfinite(_np(y.grad)).all()


def test_values_only_gradients_are_defined_at_repeated_values() -> None:
    # PyTorch defines these: the sum of singular values / eigenvalues of I has gradient I.
    x = lucid.eye(3, dtype=D, requires_grad=True)
    LA.svdvals(x).sum().backward()
    np.testing.assert_allclose(_np(x.grad), np.eye(3), rtol=1e-10, atol=1e-12)
    x.grad = None
    LA.eigvalsh(x).sum().backward()
    np.testing.assert_allclose(_np(x.grad), np.eye(3), rtol=1e-10, atol=1e-12)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_vector_gradients_are_undefined_at_repeated_values() -> None:
    # Documented as undefined (as in PyTorch): the singular vectors / eigenvectors of a matrix
    # with a repeated value are not unique, so their gradient is not finite.
    x = lucid.eye(3, dtype=D, requires_grad=True)
    u, s, vh = LA.svd(x, full_matrices=False)
    (u @ vh).sum().backward()
    assert not np.isfinite(_np(x.grad)).all()
    x.grad = None
    w, q = LA.eigh(x)
    q.sum().backward()
    assert not np.isfinite(_np(x.grad)).all()


def test_qr_gradient_of_complete_mode_needs_a_wide_or_square_input() -> None:
    q, r = LA.qr(_r(4, 2), mode="complete")
    with pytest.raises(RuntimeError, match="m <= n"):
        (q.sum() + r.sum()).backward()
    wide = _r(2, 4)
    assert gradcheck(lambda a: LA.qr(a), (wide,))  # wide reduced: torch's formula


def test_full_matrices_extra_vectors_have_no_gradient() -> None:
    u, s, vh = LA.svd(_r(4, 2))
    s.sum().backward()  # fine: only S used
    u, s, vh = LA.svd(_r(4, 2))
    with pytest.raises(RuntimeError, match="full_matrices=False"):
        u.sum().backward()


def test_triangular_least_squares_and_logdet_values() -> None:
    a = _np(_r(3, 3)) + 3 * np.eye(3)
    b = _np(_r(3, 2, seed=1))
    x = LA.solve_triangular(lucid.tensor(a), lucid.tensor(b), upper=False)
    np.testing.assert_allclose(np.tril(a) @ _np(x), b, atol=1e-12, rtol=1e-10)
    x = LA.solve_triangular(lucid.tensor(a), lucid.tensor(b), upper=True, unitriangular=True)
    unit = np.triu(a, 1) + np.eye(3)
    np.testing.assert_allclose(unit @ _np(x), b, atol=1e-12, rtol=1e-10)
    tall, rhs = _np(_r(6, 3)), _np(_r(6, 2, seed=2))
    res = LA.lstsq(lucid.tensor(tall), lucid.tensor(rhs))
    np.testing.assert_allclose(_np(res.solution), np.linalg.lstsq(tall, rhs, rcond=None)[0],
                               rtol=1e-10, atol=1e-12)  # fmt: skip
    assert res.rank.item() == 3
    assert np.isnan(LA.logdet(lucid.tensor([[0.0, 1.0], [1.0, 0.0]])).item())
    assert LA.logdet(lucid.tensor([[2.0, 0.0], [0.0, 3.0]])).item() == pytest.approx(
        math.log(6), rel=1e-6, abs=1e-12
    )


def test_matrix_exp_values() -> None:
    assert LA.matrix_exp(lucid.zeros(2, 2)).tolist() == [[1.0, 0.0], [0.0, 1.0]]
    rot = LA.matrix_exp(lucid.tensor([[0.0, -math.pi / 2], [math.pi / 2, 0.0]], dtype=D))
    np.testing.assert_allclose(_np(rot), [[0.0, -1.0], [1.0, 0.0]], atol=1e-14, rtol=1e-10)
    d = LA.matrix_exp(lucid.tensor([[1.0, 0.0], [0.0, -30.0]], dtype=D))
    np.testing.assert_allclose(_np(d), np.diag([math.e, math.exp(-30)]), rtol=1e-12, atol=0)
    big = LA.matrix_exp(
        lucid.tensor([[10.0, 1.0], [0.0, 10.0]], dtype=D)
    )  # exp(10) [[1, 1], [0, 1]]
    np.testing.assert_allclose(_np(big), math.exp(10) * np.array([[1.0, 1.0], [0.0, 1.0]]),
                               rtol=1e-12, atol=1e-12)  # fmt: skip


def test_matrix_exp_keeps_half_dtypes_and_nan() -> None:
    """float16/bfloat16 run in float32 and round back; a single matrix with a nan norm is all
    nan (torch's nan-filled result), a 1x1 one is exp."""
    x = lucid.tensor([[0.1, 0.5], [-0.3, 0.2]])
    for dt in (lucid.float16, lucid.bfloat16):
        out = LA.matrix_exp(x.to(dt))
        assert out.dtype is dt
        np.testing.assert_allclose(
            out.float().numpy(), LA.matrix_exp(x).numpy(), rtol=1e-2, atol=1e-2
        )
    nan = LA.matrix_exp(lucid.tensor([[1.0, float("nan")], [0.0, 1.0]]))
    assert np.isnan(nan.numpy()).all()
    np.testing.assert_allclose(
        LA.matrix_exp(lucid.tensor([[[0.5]], [[-2.0]]], dtype=D)).numpy(),
        np.exp([[[0.5]], [[-2.0]]]), rtol=1e-15, atol=0,
    )  # fmt: skip
