"""The no-grad fast paths of a generated token (issue 30): scaled_dot_product_attention's
``_no_grad_fast``, gelu's ``_gelu_unrecorded`` and a head split's ``view``: the same bits,
layout and errors as the full paths."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.nn.functional as F


def _heads(seed: int, t: int = 16, dtype: str = "float32") -> tuple[lucid.Tensor, ...]:
    rng = np.random.default_rng(seed)
    qkv = lucid.from_numpy(rng.standard_normal((1, t, 48)).astype(dtype))
    return tuple(z.view(1, t, 4, 4).transpose(1, 2) for z in qkv.split(16, dim=2))


@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sdpa_fast_path_matches_recorded_path(causal: bool, dtype: str) -> None:
    q, k, v = _heads(0, dtype=dtype)
    with lucid.no_grad():
        fast = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    qg, kg, vg = (t.detach().requires_grad_() for t in (q, k, v))
    full = F.scaled_dot_product_attention(qg, kg, vg, is_causal=causal)
    assert fast._data.strides == full._data.strides  # torch's layout for split heads
    np.testing.assert_allclose(fast.numpy(), full.detach().numpy(), rtol=0, atol=0)


def test_sdpa_fast_path_same_errors() -> None:
    q, k, v = _heads(1)
    with lucid.no_grad():
        with pytest.raises(RuntimeError, match="expected query"):
            F.scaled_dot_product_attention(q, k[..., :3], v)
        with pytest.raises(RuntimeError, match="one dtype"):
            F.scaled_dot_product_attention(q, k.double(), v)
        with pytest.raises(TypeError, match="lucid.Tensor"):
            F.scaled_dot_product_attention(q, k.numpy(), v)
        with pytest.raises(RuntimeError, match="at least 2 dims"):
            F.scaled_dot_product_attention(q, lucid.ones(4), v)


def test_sdpa_fast_path_keeps_merged_heads_a_view() -> None:
    q, k, v = _heads(2)
    with lucid.no_grad():
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        merged = y.transpose(1, 2).contiguous()
    assert merged._data.flags.c_contiguous
    np.testing.assert_allclose(merged.view(1, 16, 16).numpy(),
                               y.numpy().transpose(0, 2, 1, 3).reshape(1, 16, 16),
                               rtol=0, atol=0)  # fmt: skip


@pytest.mark.parity
def test_sdpa_fast_path_torch_parity() -> None:
    torch = pytest.importorskip("torch")
    q, k, v = _heads(3)
    with lucid.no_grad():
        got = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    tq, tk, tv = (torch.from_numpy(t.numpy().copy()) for t in (q, k, v))
    want = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, is_causal=True)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_unrecorded_matches_recorded(approximate: str) -> None:
    rng = np.random.default_rng(4)
    x = lucid.from_numpy(rng.standard_normal((2, 8, 32)).astype(np.float32))
    with lucid.no_grad():
        fast = F.gelu(x, approximate=approximate)
    full = F.gelu(x.detach().requires_grad_(), approximate=approximate)
    np.testing.assert_allclose(fast.numpy(), full.detach().numpy(), rtol=0, atol=0)
    with lucid.no_grad(), pytest.raises(RuntimeError, match="approximate argument"):
        F.gelu(x, approximate="fast")
    with lucid.no_grad(), pytest.raises(NotImplementedError):
        F.gelu(lucid.ones(3, dtype=lucid.int64))


def test_view_of_split_piece_fast_path() -> None:
    rng = np.random.default_rng(5)
    x = lucid.from_numpy(rng.standard_normal((2, 6, 12)).astype(np.float32))
    piece = x.split(4, dim=2)[1]
    with lucid.no_grad():
        for _ in range(2):  # the second call reads the remembered answer
            y = piece.view(2, 6, 2, 2)
            want = x.numpy()[:, :, 4:8].reshape(2, 6, 2, 2)
            np.testing.assert_allclose(y.numpy(), want, rtol=0, atol=0)
            assert y._data.strides == want.strides
            assert y._base is x
            x[0, 0, 4] = 7.0  # a view: writes show through
            assert float(y[0, 0, 0, 0].item()) == 7.0
            with pytest.raises(RuntimeError, match="view size is not compatible"):
                piece.view(2, 24)
            assert piece.view(2, 6, 4) is piece
            with pytest.raises(RuntimeError, match="invalid for input"):
                piece.view(5, 5)


@pytest.mark.parametrize("threads", [1, 2])
def test_attention_kernel_same_bits_at_any_thread_count(threads: int) -> None:
    rng = np.random.default_rng(6)
    qkv = lucid.from_numpy(rng.standard_normal((1, 64, 384)).astype(np.float32))
    q, k, v = (z.view(1, 64, 4, 32).transpose(1, 2) for z in qkv.split(128, dim=2))
    before = lucid.get_num_threads()
    try:
        lucid.set_num_threads(threads)
        with lucid.no_grad():
            got = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    finally:
        lucid.set_num_threads(before)
    want = F.scaled_dot_product_attention(*(t.detach().requires_grad_() for t in (q, k, v)),
                                          is_causal=True)  # fmt: skip
    np.testing.assert_allclose(got.numpy(), want.detach().numpy(), rtol=0, atol=0)
