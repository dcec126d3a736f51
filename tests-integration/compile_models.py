"""The small models the ``lucid.compile`` integration tests train eagerly and compiled (on
NumPy in test_integration_compile.py, on MLX in test_integration_compile_mlx.py): nanoGPT's
block and a two-block GPT with dropout, and pytorch/examples word_language_model's LSTM.
Not a test module; the tests import it from this folder."""

from __future__ import annotations

from typing import Any

import lucid
import lucid.nn as nn
import lucid.nn.functional as F


class Block(nn.Module):
    """nanoGPT's block (tools/bench/train_step.py's GPT) with attention/residual dropout ``p``."""

    def __init__(self, e: int = 32, heads: int = 4, p: float = 0.1) -> None:
        super().__init__()
        self.heads = heads
        self.ln_1, self.ln_2 = nn.LayerNorm(e, bias=False), nn.LayerNorm(e, bias=False)
        self.c_attn = nn.Linear(e, 3 * e, bias=False)
        self.attn_proj = nn.Linear(e, e, bias=False)
        self.mlp = nn.Sequential(nn.Linear(e, 4 * e), nn.GELU(), nn.Linear(4 * e, e))
        self.drop = nn.Dropout(p)

    def forward(self, x: lucid.Tensor) -> lucid.Tensor:
        b, t, e = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).split(e, dim=2)
        q, k, v = (z.view(b, t, self.heads, e // self.heads).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.drop(self.attn_proj(y.transpose(1, 2).contiguous().view(b, t, e)))
        return x + self.drop(self.mlp(self.ln_2(x)))


class GPT(nn.Module):
    """Two ``Block``s with tied embeddings; ``forward(idx, targets)`` returns the loss."""

    def __init__(self, p: float = 0.1, vocab: int = 17, block: int = 8, e: int = 32) -> None:
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, e), nn.Embedding(block, e)
        self.h = nn.ModuleList([Block(e, 4, p), Block(e, 4, p)])
        self.ln_f = nn.LayerNorm(e, bias=False)
        self.lm_head = nn.Linear(e, vocab, bias=False)
        self.wte.weight = self.lm_head.weight

    def forward(self, idx: lucid.Tensor, targets: lucid.Tensor) -> lucid.Tensor:
        pos = lucid.arange(idx.shape[1], device=idx.device)
        x = self.wte(idx) + self.wpe(pos)
        for block in self.h:
            x = block(x)
        logits = self.lm_head(self.ln_f(x))
        return F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.view(-1))


class RNNModel(nn.Module):
    """pytorch/examples word_language_model's LSTM, small, with dropout."""

    def __init__(self, vocab: int = 23, h: int = 16) -> None:
        super().__init__()
        self.drop = nn.Dropout(0.2)
        self.encoder = nn.Embedding(vocab, h)
        self.rnn = nn.LSTM(h, h, 2, dropout=0.2)
        self.decoder = nn.Linear(h, vocab)

    def forward(self, x: lucid.Tensor, hidden: Any) -> Any:
        output, hidden = self.rnn(self.drop(self.encoder(x)), hidden)
        decoded = self.decoder(self.drop(output)).view(-1, self.decoder.out_features)
        return F.log_softmax(decoded, dim=1), hidden
