"""Scaled dot-product attention (``torch.nn.functional.scaled_dot_product_attention``).

Written with lucid ops (matmul, masked_fill, softmax, dropout), so autograd and double backward
come from the ops. A backend with a fused attention kernel registers it as ``kernels["sdpa"]``
(``forward(ctx, q, k, v, attn_mask, dropout_p, is_causal, scale)``); it is used when present.
"""

from __future__ import annotations

import math
from typing import Any

import lucid
from lucid import Tensor
from lucid.autograd.function import Function
from lucid.nn.functional.activation import softmax
from lucid.nn.functional.dropout import dropout

__all__ = ["scaled_dot_product_attention"]


class FusedSDPA(Function):
    """Placeholder for a backend's fused attention; only ever run through ``kernels["sdpa"]``."""

    kernel_name = "sdpa"

    @staticmethod
    def forward(ctx: Any, *args: Any) -> Any:
        raise NotImplementedError("FusedSDPA runs only as a backend kernel override")


def causal_mask(length: int, source: int, like: Tensor) -> Tensor:
    """Boolean ``(length, source)``: True where query i may attend key j (j <= i)."""
    rows = lucid.arange(length, device=like.device).reshape(length, 1)
    cols = lucid.arange(source, device=like.device).reshape(1, source)
    out: Tensor = cols <= rows
    return out


def _check(q: Tensor, k: Tensor, v: Tensor) -> None:
    if q.ndim < 2 or k.ndim < 2 or v.ndim < 2:
        raise RuntimeError(f"scaled_dot_product_attention expects query, key and value of at "
                           f"least 2 dims, got {tuple(q.shape)}, {tuple(k.shape)}, "
                           f"{tuple(v.shape)}")  # fmt: skip
    if q.shape[-1] != k.shape[-1] or k.shape[-2] != v.shape[-2]:
        raise RuntimeError(f"scaled_dot_product_attention: expected query (..., L, E), key "
                           f"(..., S, E) and value (..., S, Ev), got {tuple(q.shape)}, "
                           f"{tuple(k.shape)}, {tuple(v.shape)}")  # fmt: skip


def _repeat_heads(t: Tensor, heads: int) -> Tensor:
    """Grouped-query attention: repeat each key/value head to match the query heads."""
    have = t.shape[-3]
    if heads % have:
        raise RuntimeError(f"enable_gqa: query heads ({heads}) must be a multiple of key/value "
                           f"heads ({have})")  # fmt: skip
    index = lucid.arange(heads, device=t.device) // (heads // have)
    out: Tensor = t.index_select(t.ndim - 3, index)
    return out


def scaled_dot_product_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
    enable_gqa: bool = False,
) -> Tensor:
    """``softmax(q @ k^T * scale + mask) @ v`` over the last two dims, as torch's.

    A boolean ``attn_mask`` marks the positions that may be attended (True = attend); a float
    mask is added to the scores. ``is_causal`` masks keys after each query (top-left aligned).
    Dropout is applied to the attention weights whenever ``dropout_p > 0``.

    >>> q = lucid.randn(2, 4, 5, 8)
    >>> scaled_dot_product_attention(q, q, q, is_causal=True).shape
    (2, 4, 5, 8)
    """
    _check(query, key, value)
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set "
                           "when is_causal=True")  # fmt: skip
    if "sdpa" in query.backend.kernels:
        fused: Tensor = FusedSDPA.apply(query, key, value, attn_mask, dropout_p, is_causal, scale)
        return fused
    if enable_gqa and key.ndim >= 3 and key.shape[-3] != query.shape[-3]:
        key = _repeat_heads(key, query.shape[-3])
        value = _repeat_heads(value, query.shape[-3])
    length, source = query.shape[-2], key.shape[-2]
    factor = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    scores = (query @ key.transpose(-2, -1)) * factor
    if is_causal:
        scores = scores.masked_fill(causal_mask(length, source, query).logical_not(), -math.inf)
    if attn_mask is not None:
        if attn_mask.dtype is lucid.bool:
            scores = scores.masked_fill(attn_mask.logical_not(), -math.inf)
        else:
            scores = scores + attn_mask
    weights = softmax(scores, dim=-1)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p, training=True)
    out: Tensor = weights @ value
    return out
