"""BERT (Devlin et al., "BERT: Pre-training of Deep Bidirectional Transformers for Language
Understanding", NAACL 2019) in Hugging Face ``transformers``' layout (``bert.embeddings``,
``bert.encoder.layer.0.attention.self.query`` ..., ``cls.predictions``), so its
``BertForMaskedLM`` and ``BertForSequenceClassification`` state dicts load unchanged."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, TypeVar

import lucid
from lucid import nn
from lucid.models._registry import register_model
from lucid.nn import functional as F

_F = TypeVar("_F", bound=Callable[..., Any])

_PAPER = (
    'Devlin et al., "BERT: Pre-training of Deep Bidirectional Transformers for Language '
    'Understanding", NAACL 2019'
)


class BertEmbeddings(nn.Module):
    def __init__(self, vocab: int, dim: int, positions: int, types: int, eps: float,
                 dropout: float) -> None:  # fmt: skip
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab, dim)
        self.position_embeddings = nn.Embedding(positions, dim)
        self.token_type_embeddings = nn.Embedding(types, dim)
        self.LayerNorm = nn.LayerNorm(dim, eps=eps)
        self.dropout = nn.Dropout(dropout)
        self.positions = positions

    def forward(self, input_ids: Any, token_type_ids: Any | None) -> Any:
        if input_ids.ndim != 2:
            raise ValueError(
                f"BERT: expected input_ids of shape (batch, seq), got {tuple(input_ids.shape)}"
            )
        t = input_ids.shape[1]
        if t > self.positions:
            raise ValueError(f"BERT: sequence of {t} tokens is longer than "
                             f"max_position_embeddings ({self.positions})")  # fmt: skip
        if token_type_ids is None:
            token_type_ids = lucid.zeros_like(input_ids)
        x = self.word_embeddings(input_ids) + self.token_type_embeddings(token_type_ids)
        return self.dropout(self.LayerNorm(x + self.position_embeddings(lucid.arange(t))))


class BertSelfAttention(nn.Module):
    def __init__(self, dim: int, heads: int, dropout: float) -> None:
        super().__init__()
        if dim % heads:
            raise ValueError(f"hidden_size ({dim}) must be divisible by num_attention_heads "
                             f"({heads})")  # fmt: skip
        self.heads = heads
        self.query = nn.Linear(dim, dim)
        self.key = nn.Linear(dim, dim)
        self.value = nn.Linear(dim, dim)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Any, mask: Any | None) -> Any:
        b, t, d = x.shape
        q, k, v = (m(x).reshape(b, t, self.heads, d // self.heads).transpose(1, 2)
                   for m in (self.query, self.key, self.value))  # fmt: skip
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(d // self.heads)
        if mask is not None:
            scores = scores + mask
        y = self.dropout(F.softmax(scores, dim=-1)) @ v
        return y.transpose(1, 2).reshape(b, t, d)


class BertSelfOutput(nn.Module):
    def __init__(self, dim_in: int, dim: int, eps: float, dropout: float) -> None:
        super().__init__()
        self.dense = nn.Linear(dim_in, dim)
        self.LayerNorm = nn.LayerNorm(dim, eps=eps)
        self.dropout = nn.Dropout(dropout)

    def forward(self, y: Any, x: Any) -> Any:
        return self.LayerNorm(self.dropout(self.dense(y)) + x)


class BertAttention(nn.Module):
    def __init__(self, dim: int, heads: int, eps: float, dropout: float) -> None:
        super().__init__()
        self.self = BertSelfAttention(dim, heads, dropout)
        self.output = BertSelfOutput(dim, dim, eps, dropout)

    def forward(self, x: Any, mask: Any | None) -> Any:
        return self.output(self.self(x, mask), x)


class BertIntermediate(nn.Module):
    def __init__(self, dim: int, hidden: int) -> None:
        super().__init__()
        self.dense = nn.Linear(dim, hidden)

    def forward(self, x: Any) -> Any:
        return F.gelu(self.dense(x))  # the exact (erf) GELU, as BERT's "gelu"


class BertLayer(nn.Module):
    def __init__(self, dim: int, heads: int, hidden: int, eps: float, dropout: float) -> None:
        super().__init__()
        self.attention = BertAttention(dim, heads, eps, dropout)
        self.intermediate = BertIntermediate(dim, hidden)
        self.output = BertSelfOutput(hidden, dim, eps, dropout)

    def forward(self, x: Any, mask: Any | None) -> Any:
        x = self.attention(x, mask)
        return self.output(self.intermediate(x), x)


class BertEncoder(nn.Module):
    def __init__(self, layers: int, dim: int, heads: int, hidden: int, eps: float,
                 dropout: float) -> None:  # fmt: skip
        super().__init__()
        self.layer = nn.ModuleList([BertLayer(dim, heads, hidden, eps, dropout)
                                    for _ in range(layers)])  # fmt: skip

    def forward(self, x: Any, mask: Any | None) -> Any:
        for layer in self.layer:
            x = layer(x, mask)
        return x


class BertPooler(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.dense = nn.Linear(dim, dim)
        self.activation = nn.Tanh()

    def forward(self, x: Any) -> Any:
        return self.activation(self.dense(x[:, 0]))


class BertModel(nn.Module):
    """The BERT encoder: embeddings, ``num_hidden_layers`` post-norm layers, and (with
    ``add_pooling_layer``) the pooler over the first ([CLS]) token.

    ``forward(input_ids, attention_mask=None, token_type_ids=None)`` returns the hidden states
    ``(batch, seq, hidden_size)`` and the pooled output (``None`` without a pooler);
    ``attention_mask`` is 1 for the tokens to attend to, 0 for padding.
    """

    def __init__(self, vocab_size: int = 30522, hidden_size: int = 768,
                 num_hidden_layers: int = 12, num_attention_heads: int = 12,
                 intermediate_size: int = 3072, max_position_embeddings: int = 512,
                 type_vocab_size: int = 2, layer_norm_eps: float = 1e-12,
                 dropout: float = 0.1, add_pooling_layer: bool = True) -> None:  # fmt: skip
        super().__init__()
        self.embeddings = BertEmbeddings(vocab_size, hidden_size, max_position_embeddings,
                                         type_vocab_size, layer_norm_eps, dropout)  # fmt: skip
        self.encoder = BertEncoder(num_hidden_layers, hidden_size, num_attention_heads,
                                   intermediate_size, layer_norm_eps, dropout)  # fmt: skip
        self.pooler = BertPooler(hidden_size) if add_pooling_layer else None
        for m in self.modules():  # BERT's initialisation: N(0, 0.02)
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, std=0.02)

    def forward(self, input_ids: Any, attention_mask: Any | None = None,
                token_type_ids: Any | None = None) -> tuple[Any, Any | None]:  # fmt: skip
        x = self.embeddings(input_ids, token_type_ids)
        mask = None
        if attention_mask is not None:
            # 0 -> the float32 minimum added to the scores (as HF does), broadcast over heads
            keep = attention_mask.reshape(attention_mask.shape[0], 1, 1, -1).to(x.dtype)
            mask = (1.0 - keep) * float(lucid.finfo(x.dtype).min)
        x = self.encoder(x, mask)
        return x, (self.pooler(x) if self.pooler is not None else None)


class BertPredictionHeadTransform(nn.Module):
    def __init__(self, dim: int, eps: float) -> None:
        super().__init__()
        self.dense = nn.Linear(dim, dim)
        self.LayerNorm = nn.LayerNorm(dim, eps=eps)

    def forward(self, x: Any) -> Any:
        return self.LayerNorm(F.gelu(self.dense(x)))


class BertLMPredictionHead(nn.Module):
    def __init__(self, dim: int, vocab: int, eps: float) -> None:
        super().__init__()
        self.transform = BertPredictionHeadTransform(dim, eps)
        self.decoder = nn.Linear(dim, vocab)
        self.bias = nn.Parameter(lucid.zeros(vocab))
        self.decoder.bias = self.bias  # one bias, under both of HF's keys

    def forward(self, x: Any) -> Any:
        return self.decoder(self.transform(x))


class BertOnlyMLMHead(nn.Module):
    def __init__(self, dim: int, vocab: int, eps: float) -> None:
        super().__init__()
        self.predictions = BertLMPredictionHead(dim, vocab, eps)

    def forward(self, x: Any) -> Any:
        return self.predictions(x)


class BertForMaskedLM(nn.Module):
    """BERT with its masked-language-model head (decoder tied to the word embeddings):
    ``model(input_ids, attention_mask=None, token_type_ids=None)`` gives the token logits,
    ``(batch, seq, vocab_size)``. Keyword arguments are :class:`BertModel`'s."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__()
        self.bert = BertModel(add_pooling_layer=False, **kwargs)
        emb = self.bert.embeddings.word_embeddings
        self.cls = BertOnlyMLMHead(emb.weight.shape[1], emb.weight.shape[0],
                                   self.bert.embeddings.LayerNorm.eps)  # fmt: skip
        self.cls.predictions.decoder.weight = emb.weight  # weight tying, as in the paper

    def forward(self, input_ids: Any, attention_mask: Any | None = None,
                token_type_ids: Any | None = None) -> Any:  # fmt: skip
        return self.cls(self.bert(input_ids, attention_mask, token_type_ids)[0])


class BertForSequenceClassification(nn.Module):
    """BERT with the pooler and a linear classifier: ``model(input_ids, attention_mask=None,
    token_type_ids=None)`` gives ``(batch, num_labels)`` logits."""

    def __init__(self, num_labels: int = 2, **kwargs: Any) -> None:
        super().__init__()
        self.bert = BertModel(add_pooling_layer=True, **kwargs)
        dim = self.bert.embeddings.word_embeddings.weight.shape[1]
        self.dropout = nn.Dropout(kwargs.get("dropout", 0.1))
        self.classifier = nn.Linear(dim, num_labels)
        nn.init.normal_(self.classifier.weight, std=0.02)

    def forward(self, input_ids: Any, attention_mask: Any | None = None,
                token_type_ids: Any | None = None) -> Any:  # fmt: skip
        return self.classifier(self.dropout(self.bert(input_ids, attention_mask,
                                                      token_type_ids)[1]))  # fmt: skip


def _register(task: str, num_params: int) -> Callable[[_F], _F]:
    return register_model(task=task, paper=_PAPER, num_params=num_params, input_size=(512,),
                          reference="transformers")  # fmt: skip


_BASE = {"hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12,
         "intermediate_size": 3072}  # fmt: skip
_LARGE = {"hidden_size": 1024, "num_hidden_layers": 24, "num_attention_heads": 16,
          "intermediate_size": 4096}  # fmt: skip


@_register("fill-mask", 109_514_298)
def bert_base(**kwargs: Any) -> BertForMaskedLM:
    """BERT-base with the masked-LM head: 12 layers, 768 wide, 12 heads; 109,514,298
    parameters."""
    return BertForMaskedLM(**{**_BASE, **kwargs})


@_register("fill-mask", 335_174_458)
def bert_large(**kwargs: Any) -> BertForMaskedLM:
    """BERT-large with the masked-LM head: 24 layers, 1024 wide, 16 heads; 335,174,458
    parameters."""
    return BertForMaskedLM(**{**_LARGE, **kwargs})


@_register("text-classification", 109_483_778)
def bert_base_classifier(**kwargs: Any) -> BertForSequenceClassification:
    """BERT-base with the pooler and a 2-label classifier (``num_labels``); 109,483,778
    parameters."""
    return BertForSequenceClassification(**{**_BASE, **kwargs})


@_register("text-classification", 335_143_938)
def bert_large_classifier(**kwargs: Any) -> BertForSequenceClassification:
    """BERT-large with the pooler and a 2-label classifier (``num_labels``); 335,143,938
    parameters."""
    return BertForSequenceClassification(**{**_LARGE, **kwargs})
