"""The Transformer of Vaswani et al., "Attention Is All You Need" (NeurIPS 2017), for
sequence-to-sequence translation: a source/target embedding shared with the output projection
(the paper's section 3.4, one BPE vocabulary of 37,000 tokens for WMT English-German), scaled by
``sqrt(d_model)`` and added to sinusoidal position encodings (section 3.5), then
:class:`lucid.nn.Transformer` (post-norm encoder-decoder, causal target mask)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, TypeVar

import lucid
from lucid import nn
from lucid.models._registry import register_model

_F = TypeVar("_F", bound=Callable[..., Any])

_PAPER = 'Vaswani et al., "Attention Is All You Need", NeurIPS 2017'


def sinusoidal_position_encoding(length: int, dim: int) -> Any:
    """The paper's ``PE(pos, 2i) = sin(pos / 10000^(2i/d))``, ``PE(pos, 2i+1) = cos(...)``:
    a ``(length, dim)`` tensor."""
    pos = lucid.arange(length, dtype=lucid.float32).reshape(length, 1)
    freq = lucid.exp(lucid.arange(0, dim, 2, dtype=lucid.float32) * (-math.log(10000.0) / dim))
    pe = lucid.zeros(length, dim)
    pe[:, 0::2] = lucid.sin(pos * freq)
    pe[:, 1::2] = lucid.cos(pos * freq)
    return pe


class TransformerSeq2Seq(nn.Module):
    """``model(src, tgt)``: token ids ``(batch, src_len)`` and ``(batch, tgt_len)`` to the
    next-token logits ``(batch, tgt_len, vocab_size)``; the target attends causally.
    ``src_key_padding_mask`` / ``tgt_key_padding_mask`` are ``True`` at padding, as
    :class:`lucid.nn.Transformer` takes them."""

    def __init__(self, vocab_size: int = 37000, d_model: int = 512, nhead: int = 8,
                 num_encoder_layers: int = 6, num_decoder_layers: int = 6,
                 dim_feedforward: int = 2048, dropout: float = 0.1) -> None:  # fmt: skip
        super().__init__()
        self.d_model = d_model
        self.embedding = nn.Embedding(vocab_size, d_model)
        nn.init.normal_(self.embedding.weight, std=d_model**-0.5)
        self.dropout = nn.Dropout(dropout)
        self.transformer = nn.Transformer(d_model, nhead, num_encoder_layers, num_decoder_layers,
                                          dim_feedforward, dropout, batch_first=True)  # fmt: skip
        self.generator = nn.Linear(d_model, vocab_size, bias=False)
        self.generator.weight = self.embedding.weight  # shared, as in the paper (section 3.4)

    def _embed(self, ids: Any) -> Any:
        if ids.ndim != 2:
            raise ValueError(f"TransformerSeq2Seq: expected token ids of shape (batch, seq), "
                             f"got {tuple(ids.shape)}")  # fmt: skip
        pe = sinusoidal_position_encoding(ids.shape[1], self.d_model)
        return self.dropout(self.embedding(ids) * math.sqrt(self.d_model) + pe)

    def forward(self, src: Any, tgt: Any, src_key_padding_mask: Any | None = None,
                tgt_key_padding_mask: Any | None = None) -> Any:  # fmt: skip
        mask = nn.Transformer.generate_square_subsequent_mask(tgt.shape[1])
        y = self.transformer(
            self._embed(src), self._embed(tgt), tgt_mask=mask, tgt_is_causal=True,
            src_key_padding_mask=src_key_padding_mask, tgt_key_padding_mask=tgt_key_padding_mask,
            memory_key_padding_mask=src_key_padding_mask,
        )  # fmt: skip
        return self.generator(y)


def _register(num_params: int) -> Callable[[_F], _F]:
    return register_model(task="translation", paper=_PAPER, num_params=num_params,
                          input_size=(256,), reference="torch")  # fmt: skip


@_register(63_084_544)
def transformer_base(**kwargs: Any) -> TransformerSeq2Seq:
    """The base Transformer (d_model 512, 8 heads, 6+6 layers, d_ff 2048, shared 37,000-token
    vocabulary); 63,084,544 parameters (the paper's Table 3 rounds its count to 65M)."""
    return TransformerSeq2Seq(**kwargs)


@_register(214_249_472)
def transformer_big(**kwargs: Any) -> TransformerSeq2Seq:
    """The big Transformer (d_model 1024, 16 heads, 6+6 layers, d_ff 4096, dropout 0.3);
    214,249,472 parameters (Table 3: 213M)."""
    kw: dict[str, Any] = {"d_model": 1024, "nhead": 16, "dim_feedforward": 4096, "dropout": 0.3}
    return TransformerSeq2Seq(**{**kw, **kwargs})
