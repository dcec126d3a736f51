"""erf, erfc and GELU kernels of the NumPy backend (``backends/_numpy/kernels/special``): float32
values and gradients against a float64 oracle (``math.erf``/``math.erfc``) over the whole
range, tails, +-inf, NaN and signed zeros, with the compiled passes (``lucid-core[numba]``) and
without them (the float32 rational in ufunc passes); what they decline goes to the op's code.

Tolerances (relative to the float64 oracle, float32 results): erf, erfc 2e-7 compiled
(evaluated in float64: within 1 ulp), 6e-7 in ufunc passes (float32 arithmetic); erfc kept to
them down to float32's smallest normal number. GELU: atol 2e-6, rtol 2e-6 (1 + erf loses digits
below -3, as in every float32 GELU); its gradient atol 5e-6 (for |g| up to ~4; the tanh form's
``1 - t^2`` in float32 without numba).
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np
import pytest

import lucid
from lucid.backends import cpu
from lucid.backends._numpy.kernels import special
from lucid.kernels import ERF, ERFC, GELU, GELU_GRAD

_CPU = lucid.backends.get_backend("cpu")
_HAS_NUMBA = (
    _CPU.kernels is not None and __import__("importlib").util.find_spec("numba") is not None
)
PATHS = ["compiled", "ufuncs"] if _HAS_NUMBA else ["ufuncs"]
_TOL = {"compiled": 2e-7, "ufuncs": 6e-7}


@pytest.fixture(params=PATHS)
def path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setattr(cpu, "numba_enabled", request.param == "compiled")
    yield request.param


def _grid() -> np.ndarray:
    """Every region: dense near 0 and the branch points, the tails to underflow, specials."""
    rng = np.random.default_rng(0)
    parts = [
        np.linspace(-12.0, 12.0, 48_001),
        rng.standard_normal(20_000) * 3,
        np.geomspace(1e-30, 1e-2, 2_000) * rng.choice([-1.0, 1.0], 2_000),
        np.array([0.0, -0.0, 0.5, -0.5, 0.84375, 1.25, 3.92, 4.0, 10.05, 10.1, 26.0, -26.0]),
        np.array([np.inf, -np.inf, np.nan, 3e38, -3e38]),
    ]
    return np.concatenate(parts).astype(np.float32)


def _oracle(fn: object, x: np.ndarray) -> np.ndarray:
    return np.array([np.nan if math.isnan(v) else fn(float(v)) for v in x])  # type: ignore[operator]


@pytest.mark.parametrize("name", ["erf", "erfc"])
def test_erf_erfc_float32_against_a_float64_oracle(path: str, name: str) -> None:
    x = _grid()
    got = getattr(lucid.special, name)(lucid.from_numpy(x)).numpy()
    assert got.dtype == np.float32
    ref = _oracle(getattr(math, name), x)
    nan = np.isnan(ref)
    assert np.array_equal(np.isnan(got), nan)
    normal = ~nan & (np.abs(ref) >= np.finfo(np.float32).tiny)
    np.testing.assert_allclose(got[normal], ref[normal], rtol=_TOL[path], atol=0)
    # underflow: denormals and zeros within a few of float32's smallest step
    np.testing.assert_allclose(got[~nan & ~normal], ref[~nan & ~normal], rtol=0, atol=1e-44)
    if name == "erf":
        assert got[x == np.inf].tolist() == [1.0] and got[x == -np.inf].tolist() == [-1.0]
        zeros = got[x == 0]
        assert np.array_equal(np.signbit(zeros), np.signbit(x[x == 0]))  # erf(-0.0) is -0.0
    else:
        assert got[x == np.inf].tolist() == [0.0] and got[x == -np.inf].tolist() == [2.0]


def _gelu64(x: np.ndarray, tanh: bool) -> tuple[np.ndarray, np.ndarray]:
    """GELU and its derivative in float64 (math.erf; tanh's formula)."""
    v = x.astype(np.float64)
    if tanh:
        k, a = math.sqrt(2 / math.pi), 0.044715
        t = np.tanh(k * (v + a * v**3))
        dt = (1 - t * t) * k * (1 + 3 * a * v * v)
        return 0.5 * v * (1 + t), 0.5 * (1 + t) + 0.5 * v * dt
    cdf = 0.5 * (1 + _oracle(math.erf, v / math.sqrt(2)))
    pdf = np.exp(-0.5 * v * v) / math.sqrt(2 * math.pi)
    return v * cdf, cdf + v * pdf


@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("n", [7, 30_000, 300_000])  # below the compiled cutoff, serial, split
def test_gelu_and_its_gradient_float32_against_float64(path: str, approximate: str, n: int) -> None:
    rng = np.random.default_rng(n)
    x = (rng.standard_normal(n) * 4).astype(np.float32)
    x[:4] = [0.0, -30.0, 30.0, -5.5][: min(4, n)]
    g = rng.standard_normal(n).astype(np.float32)
    t = lucid.from_numpy(x).requires_grad_()
    y = lucid.special.gelu(t, approximate=approximate)
    y.backward(lucid.from_numpy(g))
    want_y, want_d = _gelu64(x, approximate == "tanh")
    assert y.dtype == lucid.float32 and t.grad is not None and t.grad.dtype == lucid.float32
    np.testing.assert_allclose(y.detach().numpy(), want_y, rtol=2e-6, atol=2e-6)
    np.testing.assert_allclose(t.grad.numpy(), g * want_d, rtol=2e-6, atol=5e-6)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_specials_and_the_kernels_against_the_op_reference(
    path: str, approximate: str
) -> None:
    x = np.array([np.nan, np.inf, -np.inf, 0.0] + [0.25] * 400, np.float32)
    with np.errstate(invalid="ignore"):  # the ops run their kernels under the same state
        fwd = GELU.find(_CPU).forward(_CPU, x, approximate)  # type: ignore[union-attr]
        grad = GELU_GRAD.find(_CPU).forward(_CPU, np.ones_like(x), x, approximate)  # type: ignore[union-attr]
    if fwd is None:  # the tanh form without numba: the op's own expression (one tanh ufunc)
        assert path == "ufuncs" and approximate == "tanh"
        fwd = lucid.special.gelu(lucid.from_numpy(x), approximate).numpy()
    assert np.isnan(fwd[0]) and fwd[1] == np.inf and fwd[3] == 0.0
    assert fwd[2] == 0.0 or np.isnan(fwd[2])  # -inf * Phi(-inf): torch gives nan too
    assert np.isnan(grad[0]) and grad[3] == 0.5  # at +-inf: inf * pdf = inf * 0, as in torch
    # the op's own code (the kernels unregistered) agrees on ordinary values
    xs = np.random.default_rng(3).standard_normal(5_000).astype(np.float32) * 3
    saved = dict(_CPU.kernels)
    try:
        for c in (GELU, GELU_GRAD, ERF, ERFC):
            _CPU.kernels.pop(c)
        t = lucid.from_numpy(xs).requires_grad_()
        lucid.special.gelu(t, approximate=approximate).sum().backward()
        ref_y = lucid.special.gelu(lucid.from_numpy(xs), approximate).numpy()
        ref_g = t.grad
    finally:
        _CPU.kernels.clear()
        _CPU.kernels.update(saved)
    assert ref_g is not None
    got_y = lucid.special.gelu(lucid.from_numpy(xs), approximate).numpy()
    np.testing.assert_allclose(got_y, ref_y, rtol=2e-6, atol=2e-6)
    got_g = GELU_GRAD.find(_CPU).forward(_CPU, np.ones_like(xs), xs, approximate)  # type: ignore[union-attr]
    np.testing.assert_allclose(got_g, ref_g.numpy(), rtol=2e-6, atol=2e-6)


def test_the_kernels_decline_what_they_do_not_take() -> None:
    x64 = np.linspace(-3, 3, 1000)
    for c in (ERF, ERFC):
        assert c.find(_CPU).forward(_CPU, x64) is None  # type: ignore[union-attr]
    assert GELU.find(_CPU).forward(_CPU, x64, "none") is None  # type: ignore[union-attr]
    assert GELU_GRAD.find(_CPU).forward(_CPU, x64, x64, "none") is None  # type: ignore[union-attr]
    x32 = x64.astype(np.float32)
    assert GELU_GRAD.find(_CPU).forward(_CPU, x32[:10], x32, "none") is None  # type: ignore[union-attr]
    # float64 keeps fdlibm's accuracy through the op's own code
    got = lucid.special.erf(lucid.from_numpy(x64)).numpy()
    np.testing.assert_allclose(got, _oracle(math.erf, x64), rtol=1e-15, atol=1e-16)


def test_double_backward_of_gelu_still_builds_on_lucid_ops() -> None:
    x = lucid.from_numpy(np.linspace(-3, 3, 301).astype(np.float32)).requires_grad_()
    (g,) = lucid.autograd.grad(lucid.special.gelu(x).sum(), x, create_graph=True)
    (gg,) = lucid.autograd.grad(g.sum(), x)
    v = np.linspace(-3, 3, 301)
    pdf = np.exp(-0.5 * v * v) / math.sqrt(2 * math.pi)
    np.testing.assert_allclose(gg.numpy(), pdf * (2 - v * v), rtol=1e-5, atol=1e-6)
    _, d = _gelu64(v.astype(np.float32), False)
    np.testing.assert_allclose(g.detach().numpy(), d, rtol=2e-6, atol=2e-6)


def test_the_ufunc_rationals_alone() -> None:
    x = _grid()
    ref = _oracle(math.erf, x)
    ok = ~np.isnan(ref)
    np.testing.assert_allclose(special.erf_f32(x)[ok], ref[ok], rtol=6e-7, atol=0)
    assert np.isnan(special.erf_f32(x)[~ok]).all()


def test_the_ufunc_code_by_blocks_gives_the_whole_arrays_bits(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without numba, arrays above one block (64K elements) go through the ufunc passes block by
    block: elementwise, so the bits of one pass over the whole arrays (specials included)."""
    monkeypatch.setattr(cpu, "numba_enabled", False)
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((3, 70_001)) * 3).astype(np.float32)
    x[0, :5] = [np.nan, np.inf, -np.inf, 0.0, -0.0]
    g = rng.standard_normal(x.shape).astype(np.float32)
    with np.errstate(all="ignore"):
        pairs = [
            (GELU.find(_CPU).forward(_CPU, x, "none"), special._gelu_f32(x)),  # type: ignore[union-attr]
            (GELU_GRAD.find(_CPU).forward(_CPU, g, x, "none"), special._gelu_grad_f32(g, x)),  # type: ignore[union-attr]
            (GELU_GRAD.find(_CPU).forward(_CPU, g, x, "tanh"), special._gelu_grad_tanh_f32(g, x)),  # type: ignore[union-attr]
            (ERF.find(_CPU).forward(_CPU, x), special.erf_f32(x)),  # type: ignore[union-attr]
            (ERFC.find(_CPU).forward(_CPU, x), special.erfc_f32(x)),  # type: ignore[union-attr]
        ]
    for got, whole in pairs:
        assert got.dtype == whole.dtype and got.shape == whole.shape
        assert got.tobytes() == whole.tobytes()


@pytest.mark.skipif(not _HAS_NUMBA, reason="needs lucid-core[numba]")
def test_the_compiled_float32_exp_against_a_float64_oracle() -> None:
    """``_special_jit.exp32``, the vectorised exp of the GELU passes: within 1.5 ulp of float64
    wherever float32's exp is a normal number, 0 below that, inf past float32's range, NaN for
    NaN."""
    import numba

    from lucid.backends._numpy.kernels import _special_jit

    exp32, nonpositive = _special_jit.exp32, _special_jit.exp32_nonpositive

    @numba.njit
    def run(x: np.ndarray, out: np.ndarray) -> None:
        for i in range(x.shape[0]):
            out[i] = exp32(x[i])

    @numba.njit
    def run_nonpositive(x: np.ndarray, out: np.ndarray) -> None:
        for i in range(x.shape[0]):
            out[i] = nonpositive(x[i])

    rng = np.random.default_rng(3)
    x = np.concatenate([
        np.linspace(-88.0, 89.0, 200_001), rng.uniform(-87.3, 88.3, 100_000),
        np.geomspace(1e-30, 1.0, 1_000) * rng.choice([-1.0, 1.0], 1_000),
        [0.0, -0.0, -87.3, -87.4, -100.0, 88.3, 88.4, 100.0, np.inf, -np.inf, np.nan],
    ]).astype(np.float32)  # fmt: skip
    got = np.empty_like(x)
    run(x, got)
    assert got.dtype == np.float32
    with np.errstate(over="ignore"):
        ref = np.exp(x.astype(np.float64))
    normal = (ref >= np.finfo(np.float32).tiny) & (ref <= np.finfo(np.float32).max)
    ulp = np.spacing(ref[normal].astype(np.float32)).astype(np.float64)
    assert (np.abs(got[normal] - ref[normal]) <= 1.5 * ulp).all()
    tiny = np.finfo(np.float32).tiny
    low = ~np.isnan(x) & (ref < tiny)  # below the normal numbers: 0 (or the first of them)
    assert ((got[low] == 0) | (np.abs(got[low] - ref[low]) <= 2 * ulp.min())).all()
    assert (got[x < -87.34] == 0).all()
    big = ~np.isnan(x) & (ref > np.finfo(np.float32).max)
    assert np.isposinf(got[big]).all() and big.sum() > 0
    assert np.isnan(got[np.isnan(x)]).all()
    assert got[x == 0].tolist() == [1.0, 1.0]
    # the t <= 0 form (GELU's exp(-x^2 / 2)): the same bits there
    neg = x[np.isnan(x) | (x <= 0)]
    got_neg = np.empty_like(neg)
    run_nonpositive(neg, got_neg)
    assert got_neg.tobytes() == got[np.isnan(x) | (x <= 0)].tobytes()


@pytest.mark.skipif(not _HAS_NUMBA, reason="needs lucid-core[numba]")
@pytest.mark.parametrize("n", [1_000, 300_000])  # one pass, and split over numba's threads
def test_compiled_float32_silu_and_its_gradient_against_float64(n: int) -> None:
    """SiLU's one-pass kernels (``_activation_jit.silu32``/``silu_grad32``, through
    ``kernels.ACTIVATION``): within 2 ulp-scale of float64, torch's specials (-inf -> NaN as
    ``x / (1 + exp(-x))`` gives it, +inf -> inf, NaN -> NaN)."""
    from lucid.kernels import ACTIVATION, ACTIVATION_GRAD

    rng = np.random.default_rng(7)
    x = np.concatenate([np.linspace(-100.0, 100.0, n - 8), [0.0, -0.0, 1e-30, -1e-30, 88.5,
                                                            -np.inf, np.inf, np.nan]])  # fmt: skip
    x = x.astype(np.float32)
    g = rng.standard_normal(x.shape).astype(np.float32)
    y = ACTIVATION.find(_CPU).forward(_CPU, "silu", x)  # type: ignore[union-attr]
    d = ACTIVATION_GRAD.find(_CPU).forward(_CPU, "silu", g, x)  # type: ignore[union-attr]
    assert y is not None and d is not None and y.dtype == d.dtype == np.float32
    x64, g64 = x.astype(np.float64), g.astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        s = 1.0 / (1.0 + np.exp(-x64))
        want_y = x64 * s
        want_d = g64 * s * (1.0 + x64 * (1.0 - s))
    fin = np.isfinite(x)
    # (below about -88.7 float32's exp(-x) overflows: 0, where float64 gives ~1e-37)
    np.testing.assert_allclose(y[fin], want_y[fin], rtol=4e-7, atol=1e-36)
    np.testing.assert_allclose(d[fin], want_d[fin], rtol=2e-6, atol=2e-7)
    assert y[x == np.inf].tolist() == [np.inf] and np.isnan(y[np.isnan(x)]).all()
    assert np.isnan(y[x == -np.inf]).all()
