"""Attention's causal mask and column maxima through ``kernels.ATTENTION_SHIFT``: the same bits
as the ufuncs, forward and backward, with autograd and without (the passes it serves run where
``kernels.ATTENTION``'s whole-head kernel declines: switched off here)."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
from lucid.backends import cpu

pytest.importorskip("numba")  # lucid-core's [numba] extra: the compiled shift
if not cpu.numba_enabled:
    pytest.skip("the compiled kernels are switched off (LUCID_NUMBA=0)", allow_module_level=True)


@pytest.mark.parametrize("shape", [(1, 4, 64, 32), (12, 4, 64, 32)])  # generation, GPT step
@pytest.mark.parametrize("causal", [True, False])
def test_attention_gives_the_same_bits_with_the_compiled_shift(
    shape: tuple[int, ...], causal: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = np.random.default_rng(len(shape) + shape[0])
    arrays = [rng.standard_normal(shape).astype(np.float32) for _ in range(3)]
    sdpa = lucid.nn.functional.scaled_dot_product_attention

    def run() -> list[np.ndarray]:
        q, k, v = (lucid.from_numpy(a.copy()).requires_grad_() for a in arrays)
        out = sdpa(q, k, v, is_causal=causal)
        (out * out).sum().backward()
        with lucid.no_grad():
            plain = sdpa(q, k, v, is_causal=causal)
        assert q.grad is not None and k.grad is not None and v.grad is not None
        return [out.detach().numpy(), plain.numpy(), q.grad.numpy(), k.grad.numpy(),
                v.grad.numpy()]  # fmt: skip

    from lucid.backends._numpy.kernels import attention as kernel
    from lucid.backends._numpy.kernels.attention import CpuAttentionShift

    monkeypatch.setattr(kernel, "COMPILED_HEADS", False)  # the passes, not the whole-head kernel
    took: list[bool] = []
    real = CpuAttentionShift.forward
    monkeypatch.setattr(CpuAttentionShift, "forward",
                        staticmethod(lambda *a: took.append(real(*a)) or took[-1]))  # fmt: skip
    compiled = run()
    assert took and all(took)  # the compiled shift ran (forward, and the no-grad forward)
    monkeypatch.setattr(cpu, "numba_enabled", False)
    ufuncs = run()
    for k, (a, b) in enumerate(zip(compiled, ufuncs)):
        np.testing.assert_array_equal(a, b, err_msg=f"item {k}")
    # and the values are attention's: a float64 oracle of the forward
    q, k, v = (a.astype(np.float64) for a in arrays)
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(shape[-1])
    if causal:
        s = s + np.triu(np.full(s.shape[-2:], -np.inf), 1)
    w = np.exp(s - s.max(-1, keepdims=True))
    want = (w / w.sum(-1, keepdims=True)) @ v
    np.testing.assert_allclose(compiled[0], want, rtol=1e-4, atol=1e-5)
