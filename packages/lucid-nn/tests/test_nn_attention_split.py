"""scaled_dot_product_attention's array node (``_Attention``) with its batch in parts, one a
thread on lucid's pool (issue 30), against the same call in one part: the parts are independent
matrices, so the result and every gradient must be the same bits. The split is forced at any
size (``SPLIT_FLOPS`` 0, two threads); on a one-core machine the parts run on the pool still."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lucid
import lucid.nn.functional as F
from lucid.backends import blas_threads
from lucid.nn.functional import attention


def _run(shape: tuple[int, ...], causal: bool, dtype: Any, grads: tuple[bool, bool, bool]
         ) -> list[np.ndarray]:  # fmt: skip
    rng = np.random.default_rng(7)
    q, k, v = (lucid.from_numpy(rng.standard_normal(shape).astype(dtype)).requires_grad_(need)
               for need in grads)  # fmt: skip
    out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    assert type(out.grad_fn).__name__.startswith("_Attention")
    out.backward(lucid.from_numpy(rng.standard_normal(out.shape).astype(dtype)))
    return [out.detach().numpy()] + [t.grad.numpy() for t in (q, k, v) if t.grad is not None]


@pytest.mark.parametrize("shape", [(12, 4, 64, 32), (3, 5, 17, 8), (1, 3, 9, 4), (5, 6, 2)])
@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_attention_in_parts_on_threads_gives_one_parts_bits(
    shape: tuple[int, ...], causal: bool, dtype: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(blas_threads, "budget", lambda: 2)
    for grads in [(True, True, True), (True, False, False), (False, True, True)]:
        monkeypatch.setattr(attention, "SPLIT_FLOPS", 0.0)
        split = _run(shape, causal, dtype, grads)
        monkeypatch.setattr(attention, "SPLIT_FLOPS", float("inf"))
        one = _run(shape, causal, dtype, grads)
        assert len(split) == len(one) == 1 + sum(grads)
        for a, b in zip(split, one):
            assert a.dtype == b.dtype and a.shape == b.shape
            assert a.tobytes() == b.tobytes()


def test_attention_parts_follow_the_first_batch_dim_of_two_or_more(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(blas_threads, "budget", lambda: 2)
    backend = lucid.zeros(1).backend
    assert attention._parts(backend, np.zeros((12, 4, 64, 32)), 1e9) == (0, [(0, 6), (6, 12)])
    assert attention._parts(backend, np.zeros((1, 3, 9, 4)), 1e9) == (1, [(0, 1), (1, 3)])
    assert attention._parts(backend, np.zeros((9, 4)), 1e9) is None  # no batch dims
    assert attention._parts(backend, np.zeros((1, 1, 9, 4)), 1e9) is None
    assert attention._parts(backend, np.zeros((12, 4, 64, 32)), 0.0) is None  # small calls
    monkeypatch.setattr(blas_threads, "budget", lambda: 1)  # one thread: never
    assert attention._parts(backend, np.zeros((12, 4, 64, 32)), 1e9) is None
