"""MultiheadAttention (``torch.nn.MultiheadAttention``), with PyTorch's parameter layout.

The packed ``in_proj_weight`` (3E x E, rows q|k|v), ``in_proj_bias``, ``out_proj`` and the
optional ``bias_k``/``bias_v`` are named and initialised as in PyTorch, so state dicts load
either way.
"""

from __future__ import annotations

from typing import Any

import lucid
from lucid import Tensor
from lucid.nn import functional as F
from lucid.nn import init
from lucid.nn.module import Module
from lucid.nn.modules._checks import check_tensor
from lucid.nn.modules.linear import NonDynamicallyQuantizableLinear
from lucid.nn.parameter import Parameter

__all__ = ["MultiheadAttention"]


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
    def _check_inputs(self, query: Any, key: Any, value: Any) -> None:
        for name, t, dim in (("query", query, self.embed_dim), ("key", key, self.kdim),
                             ("value", value, self.vdim)):  # fmt: skip
            check_tensor("MultiheadAttention", t, self.out_proj.weight)
            if t.ndim not in (2, 3) or t.shape[-1] != dim:
                layout = f"(N, L, {dim})" if self.batch_first else f"(L, N, {dim})"
                raise ValueError(f"MultiheadAttention expected {name} of shape {layout} or "
                                 f"(L, {dim}), got {tuple(t.shape)}")  # fmt: skip
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
        """Attend; masks: bool True = do not attend, float = added to the scores.

        ``key_padding_mask`` is ``(N, S)`` (``(S,)`` unbatched); ``attn_mask`` is ``(L, S)`` or
        ``(N * num_heads, L, S)``. Returns ``(output, weights)``; weights are averaged over heads
        ``(N, L, S)`` unless ``average_attn_weights=False`` (``(N, H, L, S)``), None when
        ``need_weights=False`` (which runs the fused scaled_dot_product_attention path).
        """
        self._check_inputs(query, key, value)
        batched = query.ndim == 3
        if batched and self.batch_first:
            query, key, value = query.transpose(0, 1), key.transpose(0, 1), value.transpose(0, 1)
        out, weights = F.multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight,
            self.in_proj_bias, self.bias_k, self.bias_v, self.add_zero_attn, self.dropout,
            self.out_proj.weight, self.out_proj.bias, training=self.training,
            key_padding_mask=key_padding_mask, need_weights=need_weights, attn_mask=attn_mask,
            use_separate_proj_weight=not self._qkv_same_embed_dim,
            q_proj_weight=self.q_proj_weight, k_proj_weight=self.k_proj_weight,
            v_proj_weight=self.v_proj_weight, average_attn_weights=average_attn_weights,
            is_causal=is_causal,
        )  # fmt: skip
        if batched and self.batch_first:
            out = out.transpose(0, 1)
        return out, weights

    def extra_repr(self) -> str:
        return ""
