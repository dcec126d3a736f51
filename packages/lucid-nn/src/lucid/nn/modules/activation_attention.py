"""MultiheadAttention (``torch.nn.MultiheadAttention``), with PyTorch's parameter layout.

The packed ``in_proj_weight`` (3E x E, rows q|k|v), ``in_proj_bias``, ``out_proj`` and the
optional ``bias_k``/``bias_v`` are named and initialised as in PyTorch, so state dicts load
either way.
"""

from __future__ import annotations

import math
from typing import Any

import lucid
from lucid import Tensor
from lucid.nn import functional as F
from lucid.nn import init
from lucid.nn.module import Module
from lucid.nn.modules._checks import check_tensor
from lucid.nn.modules.linear import Linear
from lucid.nn.parameter import Parameter

__all__ = ["MultiheadAttention"]


class NonDynamicallyQuantizableLinear(Linear):
    """``out_proj``'s class in PyTorch (a plain Linear; the name keeps reprs alike)."""


def mask_to_bias(mask: Tensor | None, like: Tensor) -> Tensor | None:
    """PyTorch's MHA masks: bool True = do not attend (-> -inf); float masks are added."""
    if mask is None:
        return None
    if mask.dtype is lucid.bool:
        zeros = lucid.zeros(*mask.shape, dtype=like.dtype, device=like.device)
        out: Tensor = zeros.masked_fill(mask, -math.inf)
        return out
    return mask.to(like.dtype)


class MultiheadAttention(Module):
    """Attention over ``num_heads`` heads of ``embed_dim / num_heads`` features.

    ``forward(query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
    average_attn_weights=True, is_causal=False)`` returns ``(output, weights or None)``.
    Inputs are ``(L, N, E)``, or ``(N, L, E)`` with ``batch_first=True``, or unbatched ``(L, E)``.

    >>> mha = nn.MultiheadAttention(8, 2, batch_first=True)
    >>> x = lucid.randn(3, 5, 8)
    >>> out, w = mha(x, x, x)
    >>> out.shape, w.shape
    ((3, 5, 8), (3, 5, 5))
    """

    in_proj_weight: Parameter | None
    q_proj_weight: Parameter | None
    k_proj_weight: Parameter | None
    v_proj_weight: Parameter | None
    in_proj_bias: Parameter | None
    bias_k: Parameter | None
    bias_v: Parameter | None

    def __init__(
        self,
        embed_dim: int,
        num_heads: int,
        dropout: float = 0.0,
        bias: bool = True,
        add_bias_kv: bool = False,
        add_zero_attn: bool = False,
        kdim: int | None = None,
        vdim: int | None = None,
        batch_first: bool = False,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got "
                             f"embed_dim={embed_dim} and num_heads={num_heads}")  # fmt: skip
        if embed_dim % num_heads:
            raise ValueError(f"embed_dim ({embed_dim}) must be divisible by num_heads "
                             f"({num_heads})")  # fmt: skip
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        kw = {"dtype": dtype, "device": device}
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(lucid.empty(3 * embed_dim, embed_dim, **kw))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        else:
            self.q_proj_weight = Parameter(lucid.empty(embed_dim, embed_dim, **kw))
            self.k_proj_weight = Parameter(lucid.empty(embed_dim, self.kdim, **kw))
            self.v_proj_weight = Parameter(lucid.empty(embed_dim, self.vdim, **kw))
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(lucid.empty(3 * embed_dim, **kw))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **kw)
        if add_bias_kv:
            self.bias_k = Parameter(lucid.empty(1, 1, embed_dim, **kw))
            self.bias_v = Parameter(lucid.empty(1, 1, embed_dim, **kw))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        if self.in_proj_weight is not None:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            for w in (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight):
                assert w is not None
                init.xavier_uniform_(w)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            if self.out_proj.bias is not None:
                init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None and self.bias_v is not None:
            init.xavier_normal_(self.bias_k)
            init.xavier_normal_(self.bias_v)

    # -- forward ---------------------------------------------------------------------------------
    def _project(self, q: Tensor, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        e = self.embed_dim
        b = self.in_proj_bias
        bq, bk, bv = (None, None, None) if b is None else (b[:e], b[e : 2 * e], b[2 * e :])
        if self.in_proj_weight is not None:
            w = self.in_proj_weight
            wq, wk, wv = w[:e], w[e : 2 * e], w[2 * e :]
        else:
            assert self.q_proj_weight is not None and self.k_proj_weight is not None
            assert self.v_proj_weight is not None
            wq, wk, wv = self.q_proj_weight, self.k_proj_weight, self.v_proj_weight
        return F.linear(q, wq, bq), F.linear(k, wk, bk), F.linear(v, wv, bv)

    def _check_inputs(self, query: Any, key: Any, value: Any) -> None:
        for name, t, dim in (("query", query, self.embed_dim), ("key", key, self.kdim),
                             ("value", value, self.vdim)):  # fmt: skip
            check_tensor("MultiheadAttention", t, self.out_proj.weight)
            if t.ndim not in (2, 3) or t.shape[-1] != dim:
                raise ValueError(f"MultiheadAttention expected {name} of shape (L, N, {dim}), "
                                 f"(N, L, {dim}) or (L, {dim}), got {tuple(t.shape)}")  # fmt: skip
        if not query.ndim == key.ndim == value.ndim:
            raise ValueError(f"MultiheadAttention expected query, key and value of the same "
                             f"number of dims, got {tuple(query.shape)}, {tuple(key.shape)}, "
                             f"{tuple(value.shape)}")  # fmt: skip

    def forward(
        self,
        query: Tensor,
        key: Tensor,
        value: Tensor,
        key_padding_mask: Tensor | None = None,
        need_weights: bool = True,
        attn_mask: Tensor | None = None,
        average_attn_weights: bool = True,
        is_causal: bool = False,
    ) -> tuple[Tensor, Tensor | None]:
        self._check_inputs(query, key, value)
        if is_causal and attn_mask is None:
            raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                               "Transformer module method `generate_square_subsequent_mask` to "
                               "create this mask.")  # fmt: skip
        batched = query.ndim == 3
        if not batched:
            query, key, value = query.unsqueeze(0), key.unsqueeze(0), value.unsqueeze(0)
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask.unsqueeze(0)
        elif not self.batch_first:
            query, key, value = query.transpose(0, 1), key.transpose(0, 1), value.transpose(0, 1)
        out, weights = self._attend(query, key, value, key_padding_mask, attn_mask, need_weights)
        if batched and not self.batch_first:
            out = out.transpose(0, 1)
        if weights is not None and average_attn_weights:
            weights = weights.mean(dim=1)
        if not batched:
            out = out.squeeze(0)
            weights = weights.squeeze(0) if weights is not None else None
        return out, weights

    def _attend(
        self, query: Tensor, key: Tensor, value: Tensor, key_padding_mask: Tensor | None,
        attn_mask: Tensor | None, need_weights: bool
    ) -> tuple[Tensor, Tensor | None]:  # fmt: skip
        """Batch-first attention; weights are per head ``(N, H, L, S)``."""
        n, length, e = query.shape
        h, d = self.num_heads, self.head_dim
        q, k, v = self._project(query, key, value)
        bias = mask_to_bias(attn_mask, q)
        pad = mask_to_bias(key_padding_mask, q)
        if self.bias_k is not None and self.bias_v is not None:
            k = lucid.cat([k, self.bias_k.expand(n, 1, e)], dim=1)
            v = lucid.cat([v, self.bias_v.expand(n, 1, e)], dim=1)
            bias = F.pad(bias, (0, 1)) if bias is not None else None
            pad = F.pad(pad, (0, 1)) if pad is not None else None
        q = q.reshape(n, length, h, d).transpose(1, 2)
        k = k.reshape(n, k.shape[1], h, d).transpose(1, 2)
        v = v.reshape(n, v.shape[1], h, d).transpose(1, 2)
        if self.add_zero_attn:
            k = lucid.cat([k, lucid.zeros(n, h, 1, d, dtype=k.dtype, device=k.device)], dim=2)
            v = lucid.cat([v, lucid.zeros(n, h, 1, d, dtype=v.dtype, device=v.device)], dim=2)
            bias = F.pad(bias, (0, 1)) if bias is not None else None
            pad = F.pad(pad, (0, 1)) if pad is not None else None
        source = k.shape[2]
        scores = (q * (1.0 / math.sqrt(d))) @ k.transpose(-2, -1)
        if bias is not None:
            if bias.ndim == 3:
                bias = bias.reshape(n, h, length, source)
            elif bias.shape != (length, source):
                raise RuntimeError(f"The shape of the 2D attn_mask is {tuple(bias.shape)}, but "
                                   f"should be {(length, source)}.")  # fmt: skip
            scores = scores + bias
        if pad is not None:
            if pad.shape != (n, source):
                raise RuntimeError(f"expected key_padding_mask of shape {(n, source)}, got "
                                   f"{tuple(pad.shape)}")  # fmt: skip
            scores = scores + pad.reshape(n, 1, 1, source)
        weights = F.softmax(scores, dim=-1)
        if self.training and self.dropout > 0.0:
            weights = F.dropout(weights, self.dropout)
        out = (weights @ v).transpose(1, 2).reshape(n, length, e)
        return self.out_proj(out), (weights if need_weights else None)

    def extra_repr(self) -> str:
        return ""
