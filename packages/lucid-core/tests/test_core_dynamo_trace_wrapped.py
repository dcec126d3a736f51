"""``lucid._dynamo._trace_wrapped_higher_order_op.TransformGetItemToIndex``: Hugging Face
transformers' ``masking_utils`` imports it and builds attention masks with ``vmap`` inside it."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
from lucid._dynamo._trace_wrapped_higher_order_op import TransformGetItemToIndex


def _padded_causal(mod, ctx, q_len: int = 5) -> np.ndarray:
    """A causal mask with padding, built as HF's ``sdpa_mask(use_vmap=True)`` builds it."""
    pad = mod.tensor([[1, 1, 1, 1, 0], [0, 1, 1, 1, 1]]).bool()

    def mask(b, h, q, kv):
        return (kv <= q) & pad[b, kv]

    f = mask
    for dims in [
        (None, None, None, 0),
        (None, None, 0, None),
        (None, 0, None, None),
        (0, None, None, None),
    ]:
        f = mod.vmap(f, in_dims=dims, out_dims=0)
    with ctx():
        out = f(mod.arange(2), mod.arange(1), mod.arange(q_len), mod.arange(q_len))
    return out.numpy()


def test_context_keeps_tensor_indexing_inside_vmap() -> None:
    with TransformGetItemToIndex() as ctx:
        assert isinstance(ctx, TransformGetItemToIndex)
        a = lucid.arange(5.0)
        got = lucid.vmap(lambda i: a[i] * 2)(lucid.tensor([0, 3, 4]))
    np.testing.assert_allclose(got.numpy(), [0.0, 6.0, 8.0], rtol=0, atol=0)
    mask = _padded_causal(lucid, TransformGetItemToIndex)
    assert mask.shape == (2, 1, 5, 5)
    assert mask[0, 0, 4].tolist() == [True, True, True, True, False]
    assert mask[1, 0, 0].tolist() == [False] * 5


def test_context_lets_exceptions_through() -> None:
    with pytest.raises(KeyError):
        with TransformGetItemToIndex():
            raise KeyError("x")


@pytest.mark.parity
def test_masks_match_torch() -> None:
    torch = pytest.importorskip("torch")
    from torch._dynamo._trace_wrapped_higher_order_op import TransformGetItemToIndex as Theirs

    np.testing.assert_array_equal(
        _padded_causal(lucid, TransformGetItemToIndex), _padded_causal(torch, Theirs)
    )
