"""torch.special's names in lucid.special: known values, float64 finite-difference gradients,
errors, and (parity) values and gradients against torch in float32 and float64."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import lucid
import lucid.special as S
from lucid.autograd import gradcheck

# (name, input sampler) for the unary functions with gradients
UNARY_GRAD = ["i0", "i0e", "i1", "i1e", "erfcx", "log_ndtr", "entr", "expit"]
POLY = [
    "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
    "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "hermite_polynomial_h",
    "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p",
]  # fmt: skip


def _t(values: Any, dtype: Any = lucid.float64, grad: bool = False) -> lucid.Tensor:
    return lucid.tensor(np.asarray(values, dtype=np.float64), dtype=dtype, requires_grad=grad)


def test_known_values() -> None:
    close = np.testing.assert_allclose
    close(S.i0(_t([0.0, 1.0])).numpy(), [1.0, 1.2660658777520082], rtol=1e-14)
    close(S.i1(_t([0.0, 1.0])).numpy(), [0.0, 0.5651591039924851], rtol=1e-14)
    close(S.erfcx(_t([0.0, 30.0])).numpy(), [1.0, 0.018795888861416751], rtol=1e-13)
    close(S.zeta(_t([2.0, 4.0]), 1.0).numpy(), [math.pi**2 / 6, math.pi**4 / 90], rtol=1e-14)
    # Cephes' domain order: x == 1 is a pole, x < 1 nan, before q's poles (q = 0, -1, ...)
    edge = S.zeta(_t([1.0, 0.5, 2.0, 2.5]), _t([-1.0, -1.0, -1.0, -0.5])).numpy()
    np.testing.assert_array_equal(edge, [math.inf, math.nan, math.inf, math.nan])
    close(S.polygamma(1, _t([1.0])).numpy(), [math.pi**2 / 6], rtol=1e-12)
    close(S.polygamma(2, _t([1.0])).numpy(), [-2 * 1.2020569031595942], rtol=1e-13)
    close(S.log_ndtr(_t([-40.0])).numpy(), [-804.6084420137538], rtol=1e-13)
    close(S.multigammaln(_t([2.5]), 2).numpy(),
          [math.log(math.pi) / 2 + math.lgamma(2.5) + math.lgamma(2.0)], rtol=1e-13)  # fmt: skip
    theta = np.linspace(0.1, 3.0, 7)
    close(S.chebyshev_polynomial_t(_t(np.cos(theta)), 5).numpy(), np.cos(5 * theta), atol=1e-12)
    close(S.hermite_polynomial_h(_t([0.5]), 3).numpy(), [8 * 0.125 - 12 * 0.5], rtol=1e-14)
    np.testing.assert_array_equal(S.legendre_polynomial_p(_t([0.3]), -1).numpy(), [0.0])
    xl = S.xlog1py(_t([0.0, 0.0, 2.0]), _t([-1.0, math.nan, 1.0])).numpy()
    np.testing.assert_array_equal(np.isnan(xl), [False, True, False])
    close(xl[[0, 2]], [0.0, 2 * math.log(2.0)], rtol=1e-15)


def test_aliases_are_the_ops() -> None:
    assert S.gammaln is lucid.lgamma and S.psi is S.digamma and S.log1p is lucid.log1p
    x = _t([0.2, 0.7])
    np.testing.assert_allclose(
        S.logit(x).numpy(), np.log([0.25, 0.7 / 0.3]), rtol=1e-14, atol=1e-15
    )
    np.testing.assert_allclose(S.softmax(x, 0).numpy().sum(), 1.0, rtol=1e-15, atol=1e-15)


@pytest.mark.parametrize("name", UNARY_GRAD)
def test_gradients_by_finite_differences(name: str) -> None:
    rng = np.random.default_rng(0)
    values = rng.uniform(0.1, 9.0, 6) if name == "entr" else rng.uniform(-9.0, 9.0, 6)
    assert gradcheck(getattr(S, name), (_t(values, grad=True),), atol=1e-6, rtol=1e-5)


def test_polygamma_xlog1py_multigammaln_gradients() -> None:
    rng = np.random.default_rng(1)
    x = _t(rng.uniform(0.5, 5.0, 5), grad=True)
    for n in (1, 2, 3):
        assert gradcheck(lambda t, n=n: S.polygamma(n, t), (x,), atol=1e-6, rtol=1e-5)
    a, b = _t(rng.uniform(-2, 2, 5), grad=True), _t(rng.uniform(-0.5, 2, 5), grad=True)
    assert gradcheck(S.xlog1py, (a, b), atol=1e-6, rtol=1e-5)
    assert gradcheck(lambda t: S.multigammaln(t, 3), (_t([3.5, 6.0], grad=True),))


def test_errors() -> None:
    with pytest.raises(RuntimeError, match="p has to be greater than or equal to 1"):
        S.multigammaln(_t([3.0]), 0)
    with pytest.raises(RuntimeError, match=r"All elements must be greater than \(p-1\)/2"):
        S.multigammaln(_t([1.0]), 4)
    with pytest.raises(RuntimeError, match="does not support negative n"):
        S.polygamma(-1, _t([1.0]))
    with pytest.raises(TypeError, match="argument 'input' must be Tensor"):
        S.i0(1.0)  # type: ignore[arg-type]
    x = _t([2.0], grad=True)
    with pytest.raises(NotImplementedError, match="derivative for 'zeta'"):
        S.zeta(x, 1.0).sum().backward()


def test_integer_inputs_give_the_default_float() -> None:
    assert S.i0(lucid.tensor([1, 2])).dtype == lucid.float32
    assert S.entr(lucid.tensor([1, 2])).dtype == lucid.float32
    assert S.chebyshev_polynomial_t(lucid.tensor([1, 2]), 3).dtype == lucid.float32


# --- against torch ---------------------------------------------------------------------------

TOL = {np.float64: dict(rtol=1e-12, atol=1e-300), np.float32: dict(rtol=2e-6, atol=1e-30)}


def _check(ours: lucid.Tensor, theirs: Any, dt: Any, **tol: float) -> None:
    a, b = ours.numpy(), theirs.numpy()
    assert a.dtype == b.dtype
    tols = {**TOL[dt], **tol}
    np.testing.assert_allclose(a, b, rtol=tols["rtol"], atol=tols["atol"], equal_nan=True)


@pytest.mark.parity
@pytest.mark.parametrize("dt", [np.float64, np.float32])
@pytest.mark.parametrize("name", [*UNARY_GRAD, "spherical_bessel_j0"])
def test_unary_values_match_torch(name: str, dt: Any) -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    edges = [0.0, math.inf, -math.inf, math.nan, 8.0, -8.0, 5.0, -5.0]
    x = np.concatenate([rng.uniform(-30, 30, 100), rng.uniform(-3, 3, 100), edges]).astype(dt)
    tol = {"log_ndtr": dict(rtol=1e-13 if dt is np.float64 else 5e-6),
           "spherical_bessel_j0": dict(rtol=1e-13 if dt is np.float64 else 5e-6)}  # fmt: skip
    _check(getattr(S, name)(lucid.tensor(x)), getattr(torch.special, name)(torch.tensor(x)), dt,
           **tol.get(name, {}))  # fmt: skip


@pytest.mark.parity
@pytest.mark.parametrize("dt", [np.float64, np.float32])
def test_zeta_polygamma_multigammaln_xlog1py_match_torch(dt: Any) -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    x, q = rng.uniform(1.01, 10, 100).astype(dt), rng.uniform(0.1, 20, 100).astype(dt)
    zt = torch.special.zeta(torch.tensor(x), torch.tensor(q))
    _check(S.zeta(lucid.tensor(x), lucid.tensor(q)), zt, dt,
           rtol=1e-13 if dt is np.float64 else 2e-5)  # fmt: skip
    for n in (1, 2, 4):
        _check(S.polygamma(n, lucid.tensor(q)), torch.special.polygamma(n, torch.tensor(q)), dt,
               rtol=1e-9 if dt is np.float64 else 2e-6)  # fmt: skip
    m = rng.uniform(3, 20, 50).astype(dt)
    _check(S.multigammaln(lucid.tensor(m), 4), torch.special.multigammaln(torch.tensor(m), 4), dt,
           rtol=1e-13 if dt is np.float64 else 2e-6)  # fmt: skip
    a, b = rng.uniform(-2, 2, 50).astype(dt), rng.uniform(-0.9, 5, 50).astype(dt)
    a[:5] = 0
    _check(
        S.xlog1py(lucid.tensor(a), lucid.tensor(b)),
        torch.special.xlog1py(torch.tensor(a), torch.tensor(b)),
        dt,
    )


@pytest.mark.parity
@pytest.mark.parametrize("dt", [np.float64, np.float32])
@pytest.mark.parametrize("name", POLY)
def test_polynomials_match_torch(name: str, dt: Any) -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    lo, hi = (-4.0, 4.0) if name.startswith(("hermite", "laguerre")) else (-1.0, 1.0)
    if name.startswith("shifted"):
        lo, hi = 0.0, 1.0
    x = rng.uniform(lo, hi, 60).astype(dt)
    n = rng.integers(-2, 14, 60).astype(dt)
    ours = getattr(S, name)(lucid.tensor(x), lucid.tensor(n))
    theirs = getattr(torch.special, name)(torch.tensor(x), torch.tensor(n))
    scale = float(np.abs(theirs.numpy()).max())
    atol = scale * (1e-12 if dt is np.float64 else 2e-5)
    _check(ours, theirs, dt, atol=atol, rtol=1e-10 if dt is np.float64 else 1e-4)


@pytest.mark.parity
@pytest.mark.parametrize("name", UNARY_GRAD)
def test_gradients_match_torch(name: str) -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    x = rng.uniform(0.1, 12, 20) if name == "entr" else rng.uniform(-12, 12, 20)
    ours = lucid.tensor(x, requires_grad=True)
    getattr(S, name)(ours).sum().backward()
    theirs = torch.tensor(x, requires_grad=True)
    getattr(torch.special, name)(theirs).sum().backward()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-12, atol=1e-14)


def test_incomplete_gamma() -> None:
    x = _t([0.1, 1.0, 3.0, 12.0])
    p = S.gammainc(_t([1.0, 1.0, 1.0, 1.0]), x).numpy()
    np.testing.assert_allclose(p, 1 - np.exp(-x.numpy()), rtol=1e-13, atol=1e-15)
    q = S.gammaincc(_t([2.0, 2.0, 2.0, 2.0]), x).numpy()
    np.testing.assert_allclose(q, (1 + x.numpy()) * np.exp(-x.numpy()), rtol=1e-13, atol=1e-15)
    # P(50, 50) = 0.51880831547204328189... (a sum of 60-odd series terms)
    np.testing.assert_allclose(S.gammainc(_t([50.0]), 50.0).numpy(), [0.5188083154720433],
                               rtol=1e-12, atol=1e-15)  # fmt: skip
    edges = S.gammainc(_t([0.0, 0.0, 1.0, -1.0]), _t([0.0, 1.0, 0.0, 1.0])).numpy()
    np.testing.assert_array_equal(edges, [math.nan, 1.0, 0.0, math.nan])
    a = _t([0.7, 2.5, 4.0])
    xs = _t([0.3, 2.0, 9.0], grad=True)
    assert gradcheck(lambda t: S.gammainc(a, t), (xs,))
    assert gradcheck(lambda t: S.gammaincc(a, t), (xs,))
    with pytest.raises(NotImplementedError, match="derivative for 'igamma: input'"):
        S.gammainc(_t([1.0], grad=True), _t([1.0])).sum().backward()


@pytest.mark.parity
@pytest.mark.parametrize("dt", [np.float64, np.float32])
@pytest.mark.parametrize("name", ["gammainc", "gammaincc"])
def test_incomplete_gamma_matches_torch(name: str, dt: Any) -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(6)
    # a <= 20: torch's asymptotic branch (a > 20, x ~ a) is ~1e-10 off the true value
    a = np.concatenate([rng.uniform(0.01, 20, 200), [0, 0, 1, math.inf, -1]]).astype(dt)
    x = np.concatenate([rng.uniform(0.01, 30, 200), [0, 1, math.inf, 1, 1]]).astype(dt)
    ours = getattr(S, name)(lucid.tensor(a), lucid.tensor(x))
    theirs = getattr(torch.special, name)(torch.tensor(a), torch.tensor(x))
    _check(ours, theirs, dt, rtol=1e-10 if dt is np.float64 else 5e-5)


BESSEL_K = ["modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0",
            "scaled_modified_bessel_k1"]  # fmt: skip


def test_bessel_k_known_values_and_no_gradient() -> None:
    x = _t([1.0, 3.0])
    k0, k1 = S.modified_bessel_k0(x).numpy(), S.modified_bessel_k1(x).numpy()
    np.testing.assert_allclose(
        k0, [0.42102443824070834, 0.03473950438627925], rtol=1e-14, atol=1e-15
    )
    np.testing.assert_allclose(
        k1, [0.6019072301972346, 0.04015643112819418], rtol=1e-14, atol=1e-15
    )
    np.testing.assert_allclose(S.scaled_modified_bessel_k0(x).numpy(), k0 * np.exp([1.0, 3.0]),
                               rtol=1e-14, atol=1e-15)  # fmt: skip
    edges = S.modified_bessel_k0(_t([0.0, -1.0])).numpy()
    np.testing.assert_array_equal(edges, [math.inf, math.nan])
    with pytest.raises(NotImplementedError, match="modified Bessel K"):
        S.modified_bessel_k1(_t([1.0], grad=True)).sum().backward()


@pytest.mark.parity
@pytest.mark.parametrize("dt", [np.float64, np.float32])
@pytest.mark.parametrize("name", BESSEL_K)
def test_bessel_k_matches_torch(name: str, dt: Any) -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(7)
    edges = [0.0, -1.0, math.inf, math.nan, 2.0, 1e-8]
    x = np.concatenate([rng.uniform(0, 2, 100), rng.uniform(2, 60, 100), edges]).astype(dt)
    ours = getattr(S, name)(lucid.tensor(x))
    _check(ours, getattr(torch.special, name)(torch.tensor(x)), dt,
           rtol=1e-13 if dt is np.float64 else 3e-6)  # fmt: skip


BESSEL_JY = ["bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1"]


def test_bessel_jy_known_values_and_no_gradient() -> None:
    # Cephes' asymptotic branch (x > 5) is ~1e-10 (absolute) off the true value, as in PyTorch
    x = _t([1.0, 10.0])
    np.testing.assert_allclose(S.bessel_j0(x).numpy(), [0.7651976865579666, -0.2459357644513483],
                               rtol=1e-13, atol=1e-9)  # fmt: skip
    np.testing.assert_allclose(S.bessel_j1(x).numpy(), [0.4400505857449335, 0.0434727461688614],
                               rtol=1e-12, atol=1e-9)  # fmt: skip
    np.testing.assert_allclose(S.bessel_y0(x).numpy(), [0.0882569642156769, 0.0556711672835994],
                               rtol=1e-12, atol=1e-9)  # fmt: skip
    np.testing.assert_allclose(S.bessel_y1(x).numpy(), [-0.7812128213002887, 0.2490154242069539],
                               rtol=1e-12, atol=1e-9)  # fmt: skip
    np.testing.assert_array_equal(S.bessel_y0(_t([0.0, -1.0])).numpy(), [-math.inf, math.nan])
    with pytest.raises(NotImplementedError, match="Bessel J and Y"):
        S.bessel_j0(_t([1.0], grad=True)).sum().backward()


@pytest.mark.parity
@pytest.mark.parametrize("dt", [np.float64, np.float32])
@pytest.mark.parametrize("name", BESSEL_JY)
def test_bessel_jy_matches_torch(name: str, dt: Any) -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(8)
    edges = [0.0, -1.0, math.inf, -math.inf, math.nan, 5.0, -5.0, 1e-8]
    x = np.concatenate([rng.uniform(-5, 5, 100), rng.uniform(-60, 60, 100), edges]).astype(dt)
    ours = getattr(S, name)(lucid.tensor(x))
    _check(ours, getattr(torch.special, name)(torch.tensor(x)), dt,
           rtol=1e-12 if dt is np.float64 else 1e-5,
           atol=1e-14 if dt is np.float64 else 1e-6)  # fmt: skip


def test_airy_ai_known_values() -> None:
    out = S.airy_ai(_t([0.0, 1.0, -5.0, 200.0, math.inf])).numpy()
    np.testing.assert_allclose(out[:3], [0.3550280538878172, 0.1352924163128814,
                                         0.3507610090241142], rtol=1e-12, atol=1e-15)  # fmt: skip
    np.testing.assert_array_equal(out[3:], [0.0, math.nan])
    with pytest.raises(NotImplementedError, match="airy_ai"):
        S.airy_ai(_t([1.0], grad=True)).sum().backward()


@pytest.mark.parity
@pytest.mark.parametrize("dt", [np.float64, np.float32])
def test_airy_ai_matches_torch(dt: Any) -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(9)
    edges = [0.0, -2.09, 2.09, 8.3203353, 103.9, math.inf, -math.inf, math.nan]
    x = np.concatenate([rng.uniform(-3, 3, 100), rng.uniform(-60, 120, 100), edges]).astype(dt)
    _check(S.airy_ai(lucid.tensor(x)), torch.special.airy_ai(torch.tensor(x)), dt,
           rtol=1e-12 if dt is np.float64 else 1e-5,
           atol=1e-14 if dt is np.float64 else 1e-6)  # fmt: skip
