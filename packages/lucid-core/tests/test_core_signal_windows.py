"""lucid.signal.windows: against NumPy's windows (the symmetric ones it has) and torch's."""

from __future__ import annotations

import numpy as np
import pytest

import lucid

W = lucid.signal.windows


@pytest.mark.parametrize(
    "name, numpy_window",
    [
        ("bartlett", np.bartlett),
        ("blackman", np.blackman),
        ("hamming", np.hamming),
        ("hann", np.hanning),
        ("kaiser", lambda m: np.kaiser(m, 12.0)),
    ],
)
@pytest.mark.parametrize("m", [1, 2, 7, 16])
def test_symmetric_windows_match_numpy(name: str, numpy_window: object, m: int) -> None:
    got = getattr(W, name)(m, dtype=lucid.float64).numpy()
    np.testing.assert_allclose(got, numpy_window(m), rtol=1e-10, atol=1e-12)  # type: ignore[operator]


def test_periodic_is_the_symmetric_window_one_longer_less_its_last_point() -> None:
    for name in ("hann", "blackman", "nuttall", "bartlett", "cosine", "gaussian"):
        periodic = getattr(W, name)(8, sym=False, dtype=lucid.float64).numpy()
        longer = getattr(W, name)(9, dtype=lucid.float64).numpy()
        np.testing.assert_allclose(periodic, longer[:8], rtol=1e-12, atol=1e-12, err_msg=name)


def test_arguments_are_checked_as_torch_does() -> None:
    with pytest.raises(ValueError, match="non-negative window length"):
        W.hann(-1)
    with pytest.raises(ValueError, match="float32 or float64"):
        W.cosine(4, dtype=lucid.int64)
    with pytest.raises(ValueError, match="Center must be None"):
        W.exponential(4, center=1.0)
    with pytest.raises(ValueError, match="Coefficients cannot be empty"):
        W.general_cosine(4, a=[])
    assert W.gaussian(0).shape == (0,) and W.kaiser(3, requires_grad=True).is_leaf


@pytest.mark.parity
@pytest.mark.parametrize(
    "name, kwargs",
    [
        ("exponential", {"tau": 0.5}),
        ("exponential", {"sym": False, "center": 2.0}),
        ("cosine", {}),
        ("gaussian", {"std": 0.7, "sym": False}),
        ("kaiser", {"beta": 3.0, "sym": False}),
        ("general_cosine", {"a": [0.5, 0.3, 0.2]}),
        ("general_hamming", {"alpha": 0.6, "sym": False}),
        ("nuttall", {}),
    ],
)
def test_same_values_as_torch(name: str, kwargs: dict[str, object]) -> None:
    torch = pytest.importorskip("torch")
    want = getattr(torch.signal.windows, name)(9, **kwargs).numpy()
    got = getattr(W, name)(9, **kwargs).numpy()
    assert got.dtype == want.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
