"""nn.init (statistics, reproducibility, fans, gains) and nn.utils."""

from __future__ import annotations

import math

import numpy as np
import pytest

import lucid
import lucid.nn as nn
from lucid.nn import init
from lucid.nn.init import _calculate_fan_in_and_fan_out


def _np(t: lucid.Tensor) -> np.ndarray:
    return t.detach().numpy()


def test_fans_and_gains() -> None:
    assert _calculate_fan_in_and_fan_out(lucid.empty(4, 3)) == (3, 4)
    assert _calculate_fan_in_and_fan_out(lucid.empty(8, 3, 5, 5)) == (75, 200)
    with pytest.raises(ValueError, match="fewer than 2"):
        _calculate_fan_in_and_fan_out(lucid.empty(3))
    assert init.calculate_gain("relu") == pytest.approx(math.sqrt(2), rel=1e-6, abs=1e-12)
    assert init.calculate_gain("tanh") == pytest.approx(5 / 3, rel=1e-6, abs=1e-12)
    assert init.calculate_gain("leaky_relu", 0.2) == pytest.approx(
        math.sqrt(2 / 1.04), rel=1e-6, abs=1e-12
    )
    assert init.calculate_gain("selu") == 0.75
    assert init.calculate_gain("conv2d") == 1.0
    with pytest.raises(ValueError, match="Unsupported nonlinearity"):
        init.calculate_gain("swishy")


def test_uniform_normal_constant_eye_dirac() -> None:
    w = lucid.empty(200, 300)
    v = _np(init.uniform_(w, -2.0, 3.0))
    assert v.min() >= -2.0 and v.max() < 3.0 and abs(v.mean() - 0.5) < 0.05
    v = _np(init.normal_(w, 1.0, 2.0))
    assert abs(v.mean() - 1.0) < 0.03 and abs(v.std() - 2.0) < 0.03
    np.testing.assert_array_equal(_np(init.constant_(lucid.empty(2, 2), 0.5)), 0.5)
    np.testing.assert_array_equal(_np(init.ones_(lucid.empty(2))), 1.0)
    np.testing.assert_array_equal(_np(init.zeros_(lucid.empty(2))), 0.0)
    np.testing.assert_array_equal(_np(init.eye_(lucid.empty(2, 3))), np.eye(2, 3))
    d = _np(init.dirac_(lucid.empty(2, 2, 3)))
    assert d[0, 0, 1] == 1 and d[1, 1, 1] == 1 and d.sum() == 2


def test_fan_based_inits_have_the_right_spread() -> None:
    w = lucid.empty(400, 500)
    v = _np(init.xavier_uniform_(w))
    a = math.sqrt(6 / 900)
    assert v.max() <= a and v.min() >= -a and abs(v.std() - a / math.sqrt(3)) < 0.002
    v = _np(init.xavier_normal_(w, gain=2.0))
    assert abs(v.std() - 2 * math.sqrt(2 / 900)) < 0.002
    v = _np(init.kaiming_uniform_(w, a=math.sqrt(5)))
    bound = 1 / math.sqrt(500)
    assert v.max() <= bound and v.min() >= -bound
    v = _np(init.kaiming_normal_(w, mode="fan_out", nonlinearity="relu"))
    assert abs(v.std() - math.sqrt(2 / 400)) < 0.002
    with pytest.raises(ValueError, match="Mode"):
        init.kaiming_normal_(w, mode="fan_middle")


def test_trunc_normal_stays_in_bounds_with_the_truncated_moments() -> None:
    v = _np(init.trunc_normal_(lucid.empty(100_000), mean=0.0, std=1.0, a=-1.0, b=2.0))
    assert v.min() >= -1.0 and v.max() <= 2.0
    # moments of N(0,1) truncated to [-1, 2]
    phi = lambda x: math.exp(-x * x / 2) / math.sqrt(2 * math.pi)  # noqa: E731
    cdf = lambda x: (1 + math.erf(x / math.sqrt(2))) / 2  # noqa: E731
    z = cdf(2) - cdf(-1)
    mean = (phi(-1) - phi(2)) / z
    assert abs(v.mean() - mean) < 0.01
    far = _np(init.trunc_normal_(lucid.empty(1000), mean=0.0, std=1.0, a=4.0, b=5.0))
    assert far.min() >= 4.0 and far.max() <= 5.0 and far.mean() < 4.5


def test_orthogonal_rows_or_columns_are_orthonormal() -> None:
    w = _np(init.orthogonal_(lucid.empty(3, 5)))
    np.testing.assert_allclose(w @ w.T, np.eye(3), atol=1e-5, rtol=1e-7)
    w = _np(init.orthogonal_(lucid.empty(6, 2, 2), gain=2.0)).reshape(6, 4)
    np.testing.assert_allclose(w.T @ w, 4 * np.eye(4), atol=1e-4, rtol=1e-7)


def test_init_is_reproducible_from_manual_seed_and_takes_generators() -> None:
    lucid.manual_seed(123)
    a = _np(nn.Linear(4, 3).weight).copy()
    lucid.manual_seed(123)
    b = _np(nn.Linear(4, 3).weight).copy()
    np.testing.assert_array_equal(a, b)
    g1, g2 = lucid.Generator(), lucid.Generator()
    g1.manual_seed(7)
    g2.manual_seed(7)
    x = _np(init.normal_(lucid.empty(5), generator=g1)).copy()
    y = _np(init.normal_(lucid.empty(5), generator=g2)).copy()
    np.testing.assert_array_equal(x, y)


def test_init_works_on_parameters_without_recording() -> None:
    p = nn.Parameter(lucid.empty(3, 3))
    init.xavier_uniform_(p)
    assert p.is_leaf and p.requires_grad and p.grad_fn is None
    assert p.dtype == lucid.float32


# -- utils ----------------------------------------------------------------------------------------
def _with_grads(*grads: list[float]) -> list[nn.Parameter]:
    params = []
    for g in grads:
        p = nn.Parameter(lucid.zeros(len(g)))
        p.grad = lucid.tensor(g)
        params.append(p)
    return params


def test_clip_grad_norm_scales_all_gradients_together() -> None:
    params = _with_grads([3.0, 0.0], [0.0, 4.0])
    total = nn.utils.clip_grad_norm_(params, max_norm=1.0)
    assert float(total.item()) == pytest.approx(5.0, rel=1e-6, abs=1e-12)
    np.testing.assert_allclose(_np(params[0].grad), [0.6, 0.0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(_np(params[1].grad), [0.0, 0.8], rtol=1e-5, atol=1e-6)
    params = _with_grads([3.0, -4.0])
    total = nn.utils.clip_grad_norm_(params, 10.0, norm_type=math.inf)
    assert float(total.item()) == 4.0
    np.testing.assert_allclose(
        _np(params[0].grad), [3.0, -4.0], rtol=1e-7, atol=1e-7
    )  # below max: unchanged
    params = _with_grads([float("nan")])
    with pytest.raises(RuntimeError, match="non-finite"):
        nn.utils.clip_grad_norm_(params, 1.0, error_if_nonfinite=True)


def test_clip_grad_value() -> None:
    params = _with_grads([3.0, -0.5, -7.0])
    nn.utils.clip_grad_value_(params, 1.0)
    np.testing.assert_allclose(_np(params[0].grad), [1.0, -0.5, -1.0], rtol=1e-7, atol=1e-7)


def test_parameters_to_vector_and_back() -> None:
    m = nn.Linear(3, 2)
    vec = nn.utils.parameters_to_vector(m.parameters())
    assert vec.shape == (8,)
    nn.utils.vector_to_parameters(lucid.arange(8, dtype=lucid.float32), m.parameters())
    np.testing.assert_array_equal(_np(m.weight), np.arange(6).reshape(2, 3))
    np.testing.assert_array_equal(_np(m.bias), [6, 7])
    with pytest.raises(ValueError, match="elements"):
        nn.utils.vector_to_parameters(lucid.zeros(3), m.parameters())
