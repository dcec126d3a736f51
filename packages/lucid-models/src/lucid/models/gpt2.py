"""GPT-2 (Radford et al., "Language Models are Unsupervised Multitask Learners", OpenAI 2019)
in Hugging Face ``transformers``' ``GPT2LMHeadModel`` layout (``transformer.wte``,
``transformer.h.0.attn.c_attn`` ...), so its state dicts load unchanged: the projections are
``Conv1D`` modules whose weight is ``(in_features, out_features)``, as HF stores them, and the
language-model head shares the token embedding's weight."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, TypeVar

import lucid
from lucid import nn
from lucid.models._registry import register_model
from lucid.nn import functional as F

_F = TypeVar("_F", bound=Callable[..., Any])

_PAPER = 'Radford et al., "Language Models are Unsupervised Multitask Learners", OpenAI 2019'


class Conv1D(nn.Module):
    """``x @ weight + bias`` with ``weight`` of shape ``(in_features, out_features)`` (HF's
    GPT-2 ``Conv1D``: the transpose of ``nn.Linear``'s layout)."""

    def __init__(self, out_features: int, in_features: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(lucid.empty(in_features, out_features))
        self.bias = nn.Parameter(lucid.zeros(out_features))
        nn.init.normal_(self.weight, std=0.02)

    def forward(self, x: Any) -> Any:
        return x @ self.weight + self.bias


class GPT2Attention(nn.Module):
    """Causal multi-head self-attention: one fused ``c_attn`` for q, k, v, then ``c_proj``."""

    def __init__(self, dim: int, heads: int, dropout: float) -> None:
        super().__init__()
        if dim % heads:
            raise ValueError(f"n_embd ({dim}) must be divisible by n_head ({heads})")
        self.heads = heads
        self.c_attn = Conv1D(3 * dim, dim)
        self.c_proj = Conv1D(dim, dim)
        self.attn_dropout = nn.Dropout(dropout)
        self.resid_dropout = nn.Dropout(dropout)

    def forward(self, x: Any, mask: Any | None = None) -> Any:
        b, t, d = x.shape
        q, k, v = self.c_attn(x).split(d, dim=2)
        q, k, v = (z.reshape(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(d // self.heads)
        causal = lucid.ones(t, t, dtype=lucid.bool).tril()
        scores = scores.masked_fill(~causal, float("-inf"))
        if mask is not None:  # the padding mask, additive, (batch, 1, 1, seq)
            scores = scores + mask
        y = self.attn_dropout(F.softmax(scores, dim=-1)) @ v
        return self.resid_dropout(self.c_proj(y.transpose(1, 2).reshape(b, t, d)))


class GPT2MLP(nn.Module):
    def __init__(self, dim: int, dropout: float) -> None:
        super().__init__()
        self.c_fc = Conv1D(4 * dim, dim)
        self.c_proj = Conv1D(dim, 4 * dim)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Any) -> Any:
        # GPT-2's GELU is the tanh approximation (HF's "gelu_new")
        return self.dropout(self.c_proj(F.gelu(self.c_fc(x), approximate="tanh")))


class GPT2Block(nn.Module):
    def __init__(self, dim: int, heads: int, dropout: float, eps: float) -> None:
        super().__init__()
        self.ln_1 = nn.LayerNorm(dim, eps=eps)
        self.attn = GPT2Attention(dim, heads, dropout)
        self.ln_2 = nn.LayerNorm(dim, eps=eps)
        self.mlp = GPT2MLP(dim, dropout)

    def forward(self, x: Any, mask: Any | None = None) -> Any:
        x = x + self.attn(self.ln_1(x), mask)
        return x + self.mlp(self.ln_2(x))


class GPT2Model(nn.Module):
    """The GPT-2 trunk: token and position embeddings, ``n_layer`` pre-norm blocks, ``ln_f``."""

    def __init__(self, vocab_size: int, n_positions: int, n_embd: int, n_layer: int,
                 n_head: int, dropout: float, eps: float) -> None:  # fmt: skip
        super().__init__()
        self.n_positions = n_positions
        self.wte = nn.Embedding(vocab_size, n_embd)
        self.wpe = nn.Embedding(n_positions, n_embd)
        self.drop = nn.Dropout(dropout)
        self.h = nn.ModuleList([GPT2Block(n_embd, n_head, dropout, eps) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(n_embd, eps=eps)
        for emb in (self.wte, self.wpe):
            nn.init.normal_(emb.weight, std=0.02)

    def forward(self, input_ids: Any, attention_mask: Any | None = None) -> Any:
        """Hidden states ``(batch, seq, n_embd)``; ``attention_mask`` (1 to attend, 0 for
        padding, as a tokenizer returns it) hides the padded keys, as in ``transformers``."""
        if input_ids.ndim != 2:
            raise ValueError(
                f"GPT2Model: expected input_ids of shape (batch, seq), got {tuple(input_ids.shape)}"
            )
        t = input_ids.shape[1]
        if t > self.n_positions:
            raise ValueError(f"GPT2Model: sequence of {t} tokens is longer than n_positions "
                             f"({self.n_positions})")  # fmt: skip
        x = self.drop(self.wte(input_ids) + self.wpe(lucid.arange(t)))
        mask = None
        if attention_mask is not None:
            # 0 -> the dtype's minimum added to the scores (as transformers), over the heads
            keep = attention_mask.reshape(attention_mask.shape[0], 1, 1, -1).to(x.dtype)
            mask = (1.0 - keep) * float(lucid.finfo(x.dtype).min)
        for block in self.h:
            x = block(x, mask)
        return self.ln_f(x)


class GPT2LMHeadModel(nn.Module):
    """GPT-2 with its language-model head (tied to ``transformer.wte``):
    ``model(input_ids, attention_mask=None)`` gives the next-token logits,
    ``(batch, seq, vocab_size)``; ``model(**tokenizer(texts, padding=True,
    return_tensors="lucid"))`` takes a :class:`~lucid.models.tokenizers.GPT2Tokenizer` batch."""

    def __init__(self, vocab_size: int = 50257, n_positions: int = 1024, n_embd: int = 768,
                 n_layer: int = 12, n_head: int = 12, dropout: float = 0.1,
                 layer_norm_epsilon: float = 1e-5) -> None:  # fmt: skip
        super().__init__()
        self.transformer = GPT2Model(vocab_size, n_positions, n_embd, n_layer, n_head, dropout,
                                     layer_norm_epsilon)  # fmt: skip
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)
        self.lm_head.weight = self.transformer.wte.weight  # weight tying, as in the paper

    def forward(self, input_ids: Any, attention_mask: Any | None = None) -> Any:
        return self.lm_head(self.transformer(input_ids, attention_mask))


def _gpt2(n_embd: int, n_layer: int, n_head: int, **kwargs: Any) -> GPT2LMHeadModel:
    return GPT2LMHeadModel(n_embd=n_embd, n_layer=n_layer, n_head=n_head, **kwargs)


def _register(num_params: int) -> Callable[[_F], _F]:
    return register_model(task="text-generation", paper=_PAPER, num_params=num_params,
                          input_size=(1024,), reference="transformers")  # fmt: skip


@_register(124_439_808)
def gpt2(**kwargs: Any) -> GPT2LMHeadModel:
    """GPT-2 small: 12 layers, 768 wide, 12 heads; 124,439,808 parameters."""
    return _gpt2(768, 12, 12, **kwargs)


@_register(354_823_168)
def gpt2_medium(**kwargs: Any) -> GPT2LMHeadModel:
    """GPT-2 medium: 24 layers, 1024 wide, 16 heads; 354,823,168 parameters."""
    return _gpt2(1024, 24, 16, **kwargs)


@_register(774_030_080)
def gpt2_large(**kwargs: Any) -> GPT2LMHeadModel:
    """GPT-2 large: 36 layers, 1280 wide, 20 heads; 774,030,080 parameters."""
    return _gpt2(1280, 36, 20, **kwargs)


@_register(1_557_611_200)
def gpt2_xl(**kwargs: Any) -> GPT2LMHeadModel:
    """GPT-2 XL: 48 layers, 1600 wide, 25 heads; 1,557,611,200 parameters."""
    return _gpt2(1600, 48, 25, **kwargs)
