"""``F.linear``'s big bias add in row blocks over the threads (``SPLIT_BIAS_ADD``, issue 30): the
same bits as ``out += b`` on one thread, within float32 rounding of a float64 oracle."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import lucid
import lucid.nn.functional as F

linear_module = importlib.import_module("lucid.nn.functional.linear")


@pytest.mark.parametrize("grad", [True, False], ids=["recorded", "no-grad"])
def test_a_big_bias_add_split_over_threads_gives_the_same_bits(
    grad: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lucid.backends._numpy import _parallel

    monkeypatch.setattr(_parallel, "workers", lambda: 2)
    rng = np.random.default_rng(2)
    x = lucid.from_numpy(rng.standard_normal((300, 64)).astype(np.float32))
    w = lucid.from_numpy(rng.standard_normal((4000, 64)).astype(np.float32))
    b = lucid.from_numpy(rng.standard_normal(4000).astype(np.float32))
    w.requires_grad_(grad)

    def out() -> np.ndarray:
        return np.array(F.linear(x, w, b).detach().numpy())  # 1.2M elements: split

    split = out()
    monkeypatch.setattr(linear_module, "SPLIT_BIAS_ADD", False)
    np.testing.assert_array_equal(split, out())
    ref = x.numpy().astype(np.float64) @ w.detach().numpy().T.astype(np.float64) + b.numpy()
    np.testing.assert_allclose(split, ref, rtol=1e-4, atol=1e-4)
