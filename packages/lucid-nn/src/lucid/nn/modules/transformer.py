"""Transformer blocks (``torch.nn``): encoder/decoder layers, their stacks, and Transformer.

Submodule names match PyTorch's (``self_attn``, ``linear1``, ``norm1``, ``dropout1``, ...), so
state dicts load either way.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from typing import Any

import lucid
from lucid import Tensor
from lucid.nn import functional as F
from lucid.nn.containers import ModuleList
from lucid.nn.module import Module
from lucid.nn.modules._checks import check_tensor
from lucid.nn.modules.activation import GELU, ReLU
from lucid.nn.modules.activation_attention import MultiheadAttention
from lucid.nn.modules.dropout import Dropout
from lucid.nn.modules.linear import Linear
from lucid.nn.modules.normalization import LayerNorm

__all__ = [
    "Transformer",
    "TransformerDecoder",
    "TransformerDecoderLayer",
    "TransformerEncoder",
    "TransformerEncoderLayer",
]

Activation = str | Callable[[Tensor], Tensor]


def _activation(activation: Activation) -> Callable[[Tensor], Tensor]:
    if callable(activation):
        return activation
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


def generate_square_subsequent_mask(size: int, device: Any = None, dtype: Any = None) -> Tensor:
    """Float mask ``(size, size)``: 0 on and below the diagonal, -inf above (causal)."""
    rows = lucid.arange(size, device=device).reshape(size, 1)
    cols = lucid.arange(size, device=device).reshape(1, size)
    zeros = lucid.zeros(size, size, dtype=dtype, device=device)
    out: Tensor = zeros.masked_fill(cols > rows, -math.inf)
    return out


class _TransformerLayer(Module):
    """What both layer kinds share: the constructor, the feed-forward block, self-attention.

    A decoder layer (``_cross_attention``) adds ``multihead_attn`` and a third norm/dropout.
    """

    _cross_attention = False
    linear1: Linear
    linear2: Linear
    dropout: Dropout
    norm1: LayerNorm
    norm2: LayerNorm
    dropout1: Dropout
    dropout2: Dropout

    def __init__(
        self,
        d_model: int,
        nhead: int,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: Activation = "relu",
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        attn = {"dropout": dropout, "bias": bias, "batch_first": batch_first, **kw}
        self.self_attn = MultiheadAttention(d_model, nhead, **attn)
        if self._cross_attention:
            self.multihead_attn = MultiheadAttention(d_model, nhead, **attn)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
        self.activation = _activation(activation)
        self.norm_first = norm_first
        sublayers = range(1, 4 if self._cross_attention else 3)
        for i in sublayers:
            setattr(self, f"norm{i}", LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw))
        for i in sublayers:
            setattr(self, f"dropout{i}", Dropout(dropout))

    def _check(self, name: str, x: Any, batch_first: bool) -> None:
        check_tensor(type(self).__name__, x, self.linear1.weight)
        d = self.linear1.in_features
        if x.ndim not in (2, 3) or x.shape[-1] != d:
            layout = f"(N, L, {d})" if batch_first else f"(L, N, {d})"
            raise ValueError(f"{type(self).__name__} expected {name} of shape {layout} or "
                             f"(L, {d}), got {tuple(x.shape)}")  # fmt: skip

    def _ff_block(self, x: Tensor, drop: Dropout) -> Tensor:
        out: Tensor = drop(self.linear2(self.dropout(self.activation(self.linear1(x)))))
        return out

    def _sa_block(
        self, x: Tensor, mask: Tensor | None, pad: Tensor | None, is_causal: bool = False
    ) -> Tensor:
        out = self.self_attn(x, x, x, attn_mask=mask, key_padding_mask=pad, need_weights=False,
                             is_causal=is_causal)[0]  # fmt: skip
        result: Tensor = self.dropout1(out)
        return result


class TransformerEncoderLayer(_TransformerLayer):
    """Self-attention then feed-forward, each with a residual and LayerNorm (post- or pre-norm).

    >>> layer = nn.TransformerEncoderLayer(d_model=16, nhead=4, batch_first=True)
    >>> layer(lucid.randn(2, 7, 16)).shape
    (2, 7, 16)
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # PyTorch's flag for its fused path: 1 for ReLU, 2 for GELU, 0 otherwise.
        act = self.activation
        if act is F.relu or isinstance(act, ReLU):
            self.activation_relu_or_gelu = 1
        elif act is F.gelu or isinstance(act, GELU):
            self.activation_relu_or_gelu = 2
        else:
            self.activation_relu_or_gelu = 0

    def forward(
        self, src: Tensor, src_mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None, is_causal: bool = False
    ) -> Tensor:  # fmt: skip
        self._check("src", src, self.self_attn.batch_first)
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            return x + self._ff_block(self.norm2(x), self.dropout2)
        x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
        out: Tensor = self.norm2(x + self._ff_block(x, self.dropout2))
        return out


class TransformerDecoderLayer(_TransformerLayer):
    """Self-attention, cross-attention over ``memory``, then feed-forward (post- or pre-norm)."""

    _cross_attention = True
    multihead_attn: MultiheadAttention
    norm3: LayerNorm
    dropout3: Dropout

    def _mha_block(
        self, x: Tensor, mem: Tensor, mask: Tensor | None, pad: Tensor | None, is_causal: bool
    ) -> Tensor:
        out = self.multihead_attn(x, mem, mem, attn_mask=mask, key_padding_mask=pad,
                                  need_weights=False, is_causal=is_causal)[0]  # fmt: skip
        result: Tensor = self.dropout2(out)
        return result

    def forward(
        self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None, tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None, tgt_is_causal: bool = False,
        memory_is_causal: bool = False,
    ) -> Tensor:  # fmt: skip
        self._check("tgt", tgt, self.self_attn.batch_first)
        self._check("memory", memory, self.self_attn.batch_first)
        sa = (tgt_mask, tgt_key_padding_mask, tgt_is_causal)
        ca = (memory_mask, memory_key_padding_mask, memory_is_causal)
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), *sa)
            x = x + self._mha_block(self.norm2(x), memory, *ca)
            return x + self._ff_block(self.norm3(x), self.dropout3)
        x = self.norm1(x + self._sa_block(x, *sa))
        x = self.norm2(x + self._mha_block(x, memory, *ca))
        out: Tensor = self.norm3(x + self._ff_block(x, self.dropout3))
        return out


def _clones(module: Module, n: int) -> ModuleList:
    return ModuleList([copy.deepcopy(module) for _ in range(n)])


class TransformerEncoder(Module):
    """``num_layers`` independent copies of ``encoder_layer``, then an optional norm."""

    def __init__(
        self, encoder_layer: TransformerEncoderLayer, num_layers: int, norm: Module | None = None,
        enable_nested_tensor: bool = True, mask_check: bool = True
    ) -> None:  # fmt: skip
        super().__init__()
        self.layers = _clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        # PyTorch's attributes. lucid has no nested-tensor fast path, so `use_nested_tensor`
        # is always False (PyTorch warns when it turns it off; nothing is turned off here).
        self.enable_nested_tensor = enable_nested_tensor
        self.use_nested_tensor = False
        self.mask_check = mask_check

    def forward(
        self, src: Tensor, mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None, is_causal: bool | None = None
    ) -> Tensor:  # fmt: skip
        x = src
        for layer in self.layers:
            x = layer(x, src_mask=mask, src_key_padding_mask=src_key_padding_mask,
                      is_causal=bool(is_causal))  # fmt: skip
        return self.norm(x) if self.norm is not None else x


class TransformerDecoder(Module):
    """``num_layers`` independent copies of ``decoder_layer``, then an optional norm."""

    def __init__(
        self, decoder_layer: TransformerDecoderLayer, num_layers: int, norm: Module | None = None
    ) -> None:
        super().__init__()
        self.layers = _clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(
        self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None, tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None, tgt_is_causal: bool | None = None,
        memory_is_causal: bool = False,
    ) -> Tensor:  # fmt: skip
        x = tgt
        for layer in self.layers:
            x = layer(x, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                      tgt_key_padding_mask=tgt_key_padding_mask,
                      memory_key_padding_mask=memory_key_padding_mask,
                      tgt_is_causal=bool(tgt_is_causal),
                      memory_is_causal=memory_is_causal)  # fmt: skip
        return self.norm(x) if self.norm is not None else x


class Transformer(Module):
    """Encoder-decoder Transformer ("Attention Is All You Need"), PyTorch's defaults."""

    def __init__(
        self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6,
        num_decoder_layers: int = 6, dim_feedforward: int = 2048, dropout: float = 0.1,
        activation: Activation = "relu", custom_encoder: Module | None = None,
        custom_decoder: Module | None = None, layer_norm_eps: float = 1e-5,
        batch_first: bool = False, norm_first: bool = False, bias: bool = True,
        device: Any = None, dtype: Any = None,
    ) -> None:  # fmt: skip
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        common = dict(dim_feedforward=dim_feedforward, dropout=dropout, activation=activation,
                      layer_norm_eps=layer_norm_eps, batch_first=batch_first,
                      norm_first=norm_first, bias=bias, **kw)  # fmt: skip
        self.encoder = custom_encoder or TransformerEncoder(
            TransformerEncoderLayer(d_model, nhead, **common), num_encoder_layers,
            LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw),
        )  # fmt: skip
        self.decoder = custom_decoder or TransformerDecoder(
            TransformerDecoderLayer(d_model, nhead, **common), num_decoder_layers,
            LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw),
        )  # fmt: skip
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first
        for p in self.parameters():
            if p.ndim > 1:
                from lucid.nn import init

                init.xavier_uniform_(p)

    @staticmethod
    def generate_square_subsequent_mask(size: int, device: Any = None, dtype: Any = None) -> Tensor:
        """A causal mask: ``-inf`` above the diagonal, 0 elsewhere, of shape ``(size, size)``."""
        return generate_square_subsequent_mask(size, device, dtype)

    def forward(
        self,
        src: Tensor,
        tgt: Tensor,
        src_mask: Tensor | None = None,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
        src_is_causal: bool | None = None,
        tgt_is_causal: bool | None = None,
        memory_is_causal: bool = False,
    ) -> Tensor:
        b = 0 if self.batch_first else 1
        if src.ndim == 3 and tgt.ndim == 3 and src.shape[b] != tgt.shape[b]:
            raise RuntimeError(f"the batch number of src and tgt must be equal, got src "
                               f"{tuple(src.shape)} and tgt {tuple(tgt.shape)} (batch dim "
                               f"{b})")  # fmt: skip
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise RuntimeError(f"the feature number of src and tgt must be equal to d_model "
                               f"({self.d_model}), got src {tuple(src.shape)} and tgt "
                               f"{tuple(tgt.shape)}")  # fmt: skip
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)  # fmt: skip
        out: Tensor = self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                                   tgt_key_padding_mask=tgt_key_padding_mask,
                                   memory_key_padding_mask=memory_key_padding_mask,
                                   tgt_is_causal=tgt_is_causal,
                                   memory_is_causal=memory_is_causal)  # fmt: skip
        return out
