"""RoFormer (Su et al., "RoFormer: Enhanced Transformer with Rotary Position Embedding",
Neurocomputing 2024; arXiv 2021): BERT's encoder with the absolute position embeddings replaced
by rotary position embeddings (RoPE, eq. 34 of the paper): each query and key vector is rotated,
pair of dimensions by pair, by an angle proportional to its position, so that their dot
product depends on the relative position only.

Laid out as Hugging Face ``transformers``' ``RoFormerModel`` (``roformer.embeddings``,
``roformer.encoder.embed_positions``, ``roformer.encoder.layer.0.attention.self.query`` ...,
``cls.predictions``, ``classifier.dense``/``out_proj``), so its state dicts load unchanged; the
sinusoid table ``encoder.embed_positions.weight`` is a frozen parameter there and here.

Example:
    >>> model = RoFormerForMaskedLM(vocab_size=50, hidden_size=32, num_hidden_layers=1,
    ...                             num_attention_heads=4, intermediate_size=64)
    >>> tuple(model(lucid.randint(0, 50, (2, 7))).shape)
    (2, 7, 50)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

import lucid
from lucid import Tensor, nn
from lucid.models._registry import register_model
from lucid.models.bert import BertIntermediate, BertSelfOutput
from lucid.nn import functional as F

_F = TypeVar("_F", bound=Callable[..., Any])

_PAPER = (
    'Su et al., "RoFormer: Enhanced Transformer with Rotary Position Embedding", '
    "Neurocomputing 2024 (arXiv 2021)"
)


def sinusoid_table(num_positions: int, dim: int) -> Tensor:
    """``(num_positions, dim)``: ``sin(p * theta_i)`` in the first half, ``cos(p * theta_i)``
    in the second, ``theta_i = 10000 ** (-2 i / dim)`` (the paper's eq. 15 frequencies)."""
    theta = np.power(10000.0, -2 * np.arange(dim // 2) / dim)
    angles = np.arange(num_positions)[:, None] * theta[None, :]
    return lucid.tensor(np.concatenate([np.sin(angles), np.cos(angles)], 1), dtype=lucid.float32)


def apply_rotary(x: Tensor, sinusoid: Tensor) -> Tensor:
    """Rotate the pairs ``(x_{2i}, x_{2i+1})`` of the last dimension of ``x`` (``(..., seq,
    head_dim)``) by the angles of ``sinusoid`` (``(seq, head_dim)``, :func:`sinusoid_table`'s
    rows): ``x * cos + rotate_half(x) * sin``, ``rotate_half(x) = (-x_1, x_0, -x_3, x_2...)``."""
    sin, cos = sinusoid.chunk(2, dim=-1)
    sin = lucid.stack([sin, sin], dim=-1).reshape(sinusoid.shape)  # t0, t0, t1, t1, ...
    cos = lucid.stack([cos, cos], dim=-1).reshape(sinusoid.shape)
    rotated = lucid.stack([-x[..., 1::2], x[..., ::2]], dim=-1).reshape(x.shape)
    return x * cos + rotated * sin


class RoFormerEmbeddings(nn.Module):
    """Word and token-type embeddings, LayerNorm, dropout (no absolute positions)."""

    def __init__(self, vocab: int, dim: int, types: int, eps: float, dropout: float,
                 pad_token_id: int) -> None:  # fmt: skip
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab, dim, padding_idx=pad_token_id)
        self.token_type_embeddings = nn.Embedding(types, dim)
        self.LayerNorm = nn.LayerNorm(dim, eps=eps)
        self.dropout = nn.Dropout(dropout)

    def forward(self, input_ids: Tensor, token_type_ids: Tensor | None) -> Any:
        if token_type_ids is None:
            token_type_ids = lucid.zeros_like(input_ids)
        x = self.word_embeddings(input_ids) + self.token_type_embeddings(token_type_ids)
        return self.dropout(self.LayerNorm(x))


class RoFormerSelfAttention(nn.Module):
    """Multi-head self-attention with the queries and keys (and, with ``rotary_value``, the
    values) rotated by their positions."""

    def __init__(self, dim: int, heads: int, dropout: float, rotary_value: bool) -> None:
        super().__init__()
        if dim % heads:
            raise ValueError(f"hidden_size ({dim}) must be divisible by num_attention_heads "
                             f"({heads})")  # fmt: skip
        self.heads, self.rotary_value = heads, rotary_value
        self.query = nn.Linear(dim, dim)
        self.key = nn.Linear(dim, dim)
        self.value = nn.Linear(dim, dim)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor, mask: Tensor | None, sinusoid: Tensor) -> Any:
        b, t, d = x.shape
        q, k, v = (m(x).reshape(b, t, self.heads, d // self.heads).transpose(1, 2)
                   for m in (self.query, self.key, self.value))  # fmt: skip
        q, k = apply_rotary(q, sinusoid), apply_rotary(k, sinusoid)
        if self.rotary_value:
            v = apply_rotary(v, sinusoid)
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(d // self.heads)
        if mask is not None:
            scores = scores + mask
        y = self.dropout(F.softmax(scores, dim=-1)) @ v
        return y.transpose(1, 2).reshape(b, t, d)


class RoFormerAttention(nn.Module):
    def __init__(self, dim: int, heads: int, eps: float, dropout: float, attn_dropout: float,
                 rotary_value: bool) -> None:  # fmt: skip
        super().__init__()
        self.self = RoFormerSelfAttention(dim, heads, attn_dropout, rotary_value)
        self.output = BertSelfOutput(dim, dim, eps, dropout)

    def forward(self, x: Tensor, mask: Tensor | None, sinusoid: Tensor) -> Any:
        return self.output(self.self(x, mask, sinusoid), x)


class RoFormerLayer(nn.Module):
    def __init__(self, dim: int, heads: int, hidden: int, eps: float, dropout: float,
                 attn_dropout: float, rotary_value: bool) -> None:  # fmt: skip
        super().__init__()
        self.attention = RoFormerAttention(dim, heads, eps, dropout, attn_dropout, rotary_value)
        self.intermediate = BertIntermediate(dim, hidden)
        self.output = BertSelfOutput(hidden, dim, eps, dropout)

    def forward(self, x: Tensor, mask: Tensor | None, sinusoid: Tensor) -> Any:
        x = self.attention(x, mask, sinusoid)
        return self.output(self.intermediate(x), x)


class RoFormerEncoder(nn.Module):
    """The layers, and the frozen sinusoid table the rotations read (``embed_positions``)."""

    def __init__(self, layers: int, dim: int, heads: int, hidden: int, positions: int,
                 eps: float, dropout: float, attn_dropout: float,
                 rotary_value: bool) -> None:  # fmt: skip
        super().__init__()
        self.positions = positions
        self.embed_positions = nn.Embedding(positions, dim // heads, _freeze=True)
        with lucid.no_grad():
            self.embed_positions.weight.copy_(sinusoid_table(positions, dim // heads))
        self.layer = nn.ModuleList([
            RoFormerLayer(dim, heads, hidden, eps, dropout, attn_dropout, rotary_value)
            for _ in range(layers)
        ])  # fmt: skip

    def forward(self, x: Tensor, mask: Tensor | None) -> Tensor:
        t = x.shape[1]
        if t > self.positions:
            raise ValueError(f"RoFormer: sequence of {t} tokens is longer than "
                             f"max_position_embeddings ({self.positions})")  # fmt: skip
        sinusoid = self.embed_positions.weight[:t]
        for layer in self.layer:
            x = layer(x, mask, sinusoid)
        return x


class RoFormerModel(nn.Module):
    """The RoFormer encoder: ``forward(input_ids, attention_mask=None, token_type_ids=None)``
    gives the hidden states ``(batch, seq, hidden_size)``; ``attention_mask`` is 1 for the
    tokens to attend to, 0 for padding. An ``embedding_size`` other than ``hidden_size`` adds
    HF's ``embeddings_project`` linear map."""

    def __init__(self, vocab_size: int = 50000, embedding_size: int | None = None,
                 hidden_size: int = 768, num_hidden_layers: int = 12,
                 num_attention_heads: int = 12, intermediate_size: int = 3072,
                 max_position_embeddings: int = 1536, type_vocab_size: int = 2,
                 layer_norm_eps: float = 1e-12, hidden_dropout_prob: float = 0.1,
                 attention_probs_dropout_prob: float = 0.1, rotary_value: bool = False,
                 pad_token_id: int = 0) -> None:  # fmt: skip
        super().__init__()
        emb = embedding_size or hidden_size
        self.embeddings = RoFormerEmbeddings(vocab_size, emb, type_vocab_size, layer_norm_eps,
                                             hidden_dropout_prob, pad_token_id)  # fmt: skip
        if emb != hidden_size:
            self.embeddings_project = nn.Linear(emb, hidden_size)
        self.project = emb != hidden_size
        self.encoder = RoFormerEncoder(num_hidden_layers, hidden_size, num_attention_heads,
                                       intermediate_size, max_position_embeddings,
                                       layer_norm_eps, hidden_dropout_prob,
                                       attention_probs_dropout_prob, rotary_value)  # fmt: skip
        for m in self.modules():  # BERT's initialisation: N(0, 0.02), the table left as it is
            if isinstance(m, (nn.Linear, nn.Embedding)) and m is not self.encoder.embed_positions:
                nn.init.normal_(m.weight, std=0.02)
        with lucid.no_grad():
            self.embeddings.word_embeddings.weight[pad_token_id] = 0.0

    def forward(self, input_ids: Tensor, attention_mask: Tensor | None = None,
                token_type_ids: Tensor | None = None) -> Any:  # fmt: skip
        if input_ids.ndim != 2:
            raise ValueError(f"RoFormer: expected input_ids of shape (batch, seq), got "
                             f"{tuple(input_ids.shape)}")  # fmt: skip
        x = self.embeddings(input_ids, token_type_ids)
        if self.project:
            x = self.embeddings_project(x)
        mask = None
        if attention_mask is not None:
            # 0 -> the dtype's minimum added to the scores (as HF does), broadcast over heads
            keep = attention_mask.reshape(attention_mask.shape[0], 1, 1, -1).to(x.dtype)
            mask = (1.0 - keep) * float(lucid.finfo(x.dtype).min)
        return self.encoder(x, mask)


class RoFormerPredictionHeadTransform(nn.Module):
    def __init__(self, dim: int, emb: int, eps: float) -> None:
        super().__init__()
        self.dense = nn.Linear(dim, emb)
        self.LayerNorm = nn.LayerNorm(emb, eps=eps)

    def forward(self, x: Tensor) -> Any:
        return self.LayerNorm(F.gelu(self.dense(x)))


class RoFormerLMPredictionHead(nn.Module):
    def __init__(self, dim: int, emb: int, vocab: int, eps: float) -> None:
        super().__init__()
        self.transform = RoFormerPredictionHeadTransform(dim, emb, eps)
        self.decoder = nn.Linear(emb, vocab)
        self.bias = nn.Parameter(lucid.zeros(vocab))
        self.decoder.bias = self.bias  # one bias, under both of HF's keys

    def forward(self, x: Tensor) -> Any:
        return self.decoder(self.transform(x))


class RoFormerOnlyMLMHead(nn.Module):
    def __init__(self, dim: int, emb: int, vocab: int, eps: float) -> None:
        super().__init__()
        self.predictions = RoFormerLMPredictionHead(dim, emb, vocab, eps)

    def forward(self, x: Tensor) -> Any:
        return self.predictions(x)


class RoFormerForMaskedLM(nn.Module):
    """RoFormer with the masked-language-model head (decoder tied to the word embeddings):
    ``model(input_ids, attention_mask=None, token_type_ids=None)`` gives the token logits
    ``(batch, seq, vocab_size)``. Keyword arguments are :class:`RoFormerModel`'s."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__()
        self.roformer = RoFormerModel(**kwargs)
        words = self.roformer.embeddings.word_embeddings.weight
        hidden = kwargs.get("hidden_size", 768)
        self.cls = RoFormerOnlyMLMHead(hidden, words.shape[1], words.shape[0],
                                       self.roformer.embeddings.LayerNorm.eps)  # fmt: skip
        nn.init.normal_(self.cls.predictions.transform.dense.weight, std=0.02)
        self.cls.predictions.decoder.weight = words  # weight tying, as HF's tie_word_embeddings

    def forward(self, input_ids: Tensor, attention_mask: Tensor | None = None,
                token_type_ids: Tensor | None = None) -> Any:  # fmt: skip
        return self.cls(self.roformer(input_ids, attention_mask, token_type_ids))


class RoFormerClassificationHead(nn.Module):
    """The first token's state: dropout, dense, GELU, dropout, ``out_proj``."""

    def __init__(self, dim: int, num_labels: int, dropout: float) -> None:
        super().__init__()
        self.dense = nn.Linear(dim, dim)
        self.dropout = nn.Dropout(dropout)
        self.out_proj = nn.Linear(dim, num_labels)

    def forward(self, x: Tensor) -> Any:
        h = self.dropout(F.gelu(self.dense(self.dropout(x[:, 0]))))
        return self.out_proj(h)


class RoFormerForSequenceClassification(nn.Module):
    """RoFormer with HF's classification head: ``model(input_ids, attention_mask=None,
    token_type_ids=None)`` gives ``(batch, num_labels)`` logits."""

    def __init__(self, num_labels: int = 2, **kwargs: Any) -> None:
        super().__init__()
        self.roformer = RoFormerModel(**kwargs)
        dim, dropout = kwargs.get("hidden_size", 768), kwargs.get("hidden_dropout_prob", 0.1)
        self.classifier = RoFormerClassificationHead(dim, num_labels, dropout)
        for lin in (self.classifier.dense, self.classifier.out_proj):
            nn.init.normal_(lin.weight, std=0.02)

    def forward(self, input_ids: Tensor, attention_mask: Tensor | None = None,
                token_type_ids: Tensor | None = None) -> Any:  # fmt: skip
        return self.classifier(self.roformer(input_ids, attention_mask, token_type_ids))


def _register(task: str, num_params: int) -> Callable[[_F], _F]:
    return register_model(task=task, paper=_PAPER, num_params=num_params, input_size=(1536,),
                          reference="transformers")  # fmt: skip


@_register("fill-mask", 124_197_968)
def roformer_base(**kwargs: Any) -> RoFormerForMaskedLM:
    """RoFormer-base with the masked-LM head (HF ``RoFormerConfig()``'s defaults: 12 layers,
    768 wide, 12 heads, 50,000 tokens, 1536 positions); 124,197,968 parameters (the 98,304 of
    the frozen sinusoid table among them, as HF counts them)."""
    return RoFormerForMaskedLM(**kwargs)


@_register("text-classification", 124_147_970)
def roformer_base_classifier(**kwargs: Any) -> RoFormerForSequenceClassification:
    """RoFormer-base with HF's 2-label classification head (``num_labels``); 124,147,970
    parameters."""
    return RoFormerForSequenceClassification(**kwargs)
