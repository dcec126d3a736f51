"""Small real pre-training runs of the zoo's language models on local text.

GPT-2 (``lucid.models.gpt2.GPT2LMHeadModel``) learns next-byte prediction; BERT
(``lucid.models.bert.BertForMaskedLM``) learns masked-character prediction. Both use tiny
configurations (by default 2 layers, 128 wide, 4 heads, context 64) so that a run of a few
hundred steps fits in minutes on a CPU.

Tokenizers (``--tokenizer``):

- GPT-2, ``byte`` (the default): 256 byte ids plus ``<|endoftext|>`` (id 256) between files,
  no merges. ``bpe``: GPT-2's byte-level BPE (``lucid.models.tokenizers.GPT2Tokenizer``)
  trained on the training split to ``--vocab-size`` tokens.
- BERT, ``char`` (the default): every character seen at least twice in the training split,
  plus ``[PAD] [UNK] [CLS] [SEP] [MASK]``. ``wordpiece``: BERT's WordPiece
  (``lucid.models.tokenizers.BertTokenizer``, lower-cased) trained on the training split to
  ``--vocab-size`` tokens, the same five special tokens first.
  Masking as in the BERT paper: 15% of the positions are predicted; of those 80% become
  ``[MASK]``, 10% a random token, 10% stay.

The losses are in nats per token, so they compare across runs of one tokenizer only.

The text is split by position: the last ``--val-frac`` of the concatenated text is the
validation split. The validation loss is measured on a fixed set of windows (and, for BERT,
fixed masks), so successive numbers are comparable. The unigram baseline is the cross entropy
of the validation tokens under the training split's token frequencies (add-one smoothed):
what a model that ignores context would reach.

    python tools/experiments/lm_pretrain.py --model gpt2 --steps 400
    python tools/experiments/lm_pretrain.py --model bert --steps 400
    python tools/experiments/lm_pretrain.py --model gpt2 --tokenizer bpe --vocab-size 2000
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[2]
EOT = 256  # GPT-2's <|endoftext|> after the 256 byte ids
BERT_SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
PAD, UNK, CLS, SEP, MASK = range(5)


def default_texts() -> list[Path]:
    """The repository's own docs: docs/*.md and docs/guides/*.md (a few thousand lines)."""
    return sorted((REPO / "docs").glob("*.md")) + sorted((REPO / "docs" / "guides").glob("*.md"))


def read_texts(paths: Sequence[Path]) -> list[str]:
    return [Path(p).read_text(encoding="utf-8", errors="replace") for p in paths]


class ByteTokenizer:
    """Byte-level: token ``i < 256`` is the byte ``i``; 256 is ``<|endoftext|>``."""

    vocab_size = 257
    eot = EOT

    def encode_text(self, text: str) -> list[int]:
        return list(text.encode("utf-8"))

    def encode_docs(self, docs: Sequence[str]) -> np.ndarray:
        ids: list[int] = []
        for d in docs:
            ids.extend(d.encode("utf-8"))
            ids.append(EOT)
        return np.asarray(ids, dtype=np.int64)

    def decode(self, ids: Sequence[int]) -> str:
        return bytes(i for i in ids if i < 256).decode("utf-8", errors="replace")


class CharTokenizer:
    """Characters seen at least ``min_count`` times, after BERT's five special tokens."""

    def __init__(self, text: str, min_count: int = 2) -> None:
        counts = Counter(text)
        chars = sorted(c for c, n in counts.items() if n >= min_count)
        self.itos = BERT_SPECIALS + chars
        self.stoi = {c: i for i, c in enumerate(self.itos)}
        self.vocab_size = len(self.itos)

    def encode(self, text: str) -> np.ndarray:
        return np.asarray([self.stoi.get(c, UNK) for c in text], dtype=np.int64)


class BpeTokenizer:
    """GPT-2's byte-level BPE trained on the training text; ``<|endoftext|>`` between files."""

    def __init__(self, train_text: str, vocab_size: int) -> None:
        from lucid.models.tokenizers import GPT2Tokenizer

        self.tok = GPT2Tokenizer.train(train_text.splitlines(keepends=True),
                                       vocab_size=vocab_size)  # fmt: skip
        self.vocab_size = len(self.tok)
        self.eot = self.tok.eos_token_id

    def encode_docs(self, docs: Sequence[str]) -> np.ndarray:
        ids: list[int] = []
        for d in docs:
            ids.extend(self.tok.encode(d))
            ids.append(self.eot)
        return np.asarray(ids, dtype=np.int64)

    def encode_text(self, text: str) -> list[int]:
        return list(self.tok.encode(text))

    def decode(self, ids: Sequence[int]) -> str:
        return str(self.tok.decode([i for i in ids if i != self.eot]))


class WordPieceTokenizer:
    """BERT's WordPiece trained on the training text, its five special tokens first (ids
    0-4, as ``BERT_SPECIALS``)."""

    def __init__(self, train_text: str, vocab_size: int) -> None:
        from lucid.models.tokenizers import BertTokenizer

        self.tok = BertTokenizer.train(train_text.splitlines(), vocab_size=vocab_size,
                                       special_tokens=BERT_SPECIALS)  # fmt: skip
        self.vocab_size = len(self.tok)

    def encode(self, text: str) -> np.ndarray:
        ids = self.tok.encode(text, add_special_tokens=False)
        return np.asarray(ids, dtype=np.int64)


def unigram_ce(train: np.ndarray, val: np.ndarray, vocab: int) -> float:
    """Cross entropy (nats) of ``val`` under the add-one smoothed unigram of ``train``."""
    counts = np.bincount(train, minlength=vocab).astype(np.float64) + 1.0
    logp = np.log(counts / counts.sum())
    return float(-logp[val].mean())


def windows(data: np.ndarray, length: int, starts: np.ndarray) -> np.ndarray:
    return np.stack([data[s : s + length] for s in starts])


def bert_mask(
    x: np.ndarray, vocab: int, rng: np.random.Generator, prob: float = 0.15
) -> tuple[np.ndarray, np.ndarray]:
    """BERT's masking of the non-special positions: returns (inputs, labels with -100)."""
    inp = x.copy()
    labels = np.full_like(x, -100)
    candidates = x >= len(BERT_SPECIALS)
    chosen = candidates & (rng.random(x.shape) < prob)
    labels[chosen] = x[chosen]
    roll = rng.random(x.shape)
    inp[chosen & (roll < 0.8)] = MASK
    rand = chosen & (roll >= 0.8) & (roll < 0.9)
    inp[rand] = rng.integers(len(BERT_SPECIALS), vocab, size=int(rand.sum()))
    return inp, labels


def bert_batch(data: np.ndarray, ctx: int, starts: np.ndarray) -> np.ndarray:
    body = windows(data, ctx - 2, starts)
    n = len(starts)
    return np.concatenate([np.full((n, 1), CLS), body, np.full((n, 1), SEP)], axis=1)


def build(args: argparse.Namespace, vocab: int) -> Any:
    from lucid.models.bert import BertForMaskedLM
    from lucid.models.gpt2 import GPT2LMHeadModel

    if args.model == "gpt2":
        return GPT2LMHeadModel(vocab_size=vocab, n_positions=args.ctx, n_embd=args.dim,
                               n_layer=args.layers, n_head=args.heads,
                               dropout=args.dropout)  # fmt: skip
    return BertForMaskedLM(vocab_size=vocab, hidden_size=args.dim, num_hidden_layers=args.layers,
                           num_attention_heads=args.heads, intermediate_size=4 * args.dim,
                           max_position_embeddings=args.ctx, dropout=args.dropout)  # fmt: skip


def sample(model: Any, tok: Any, prompt: str, n: int, ctx: int, temperature: float,
           rng: np.random.Generator) -> str:  # fmt: skip
    """Autoregressive sampling at ``temperature`` (top-k 40), ``n`` new tokens."""
    import lucid

    ids = tok.encode_text(prompt)
    model.eval()
    with lucid.no_grad():
        for _ in range(n):
            x = lucid.from_numpy(np.asarray([ids[-ctx:]], dtype=np.int64))
            logits = model(x).numpy()[0, -1].astype(np.float64) / temperature
            logits[tok.eot] = -np.inf
            kth = np.sort(logits)[-min(40, len(logits))]
            logits[logits < kth] = -np.inf
            p = np.exp(logits - logits.max())
            ids.append(int(rng.choice(len(p), p=p / p.sum())))
    return tok.decode(ids)


def run(args: argparse.Namespace) -> dict[str, Any]:
    import lucid
    import lucid.nn.functional as F
    import lucid.optim as optim
    from lucid.nn.utils import clip_grad_norm_

    lucid.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    paths = [Path(p) for p in args.text] if args.text else default_texts()
    docs = read_texts(paths)
    n_lines = sum(d.count("\n") for d in docs)
    kind = args.tokenizer or ("byte" if args.model == "gpt2" else "char")
    if kind not in (("byte", "bpe") if args.model == "gpt2" else ("char", "wordpiece")):
        raise SystemExit(f"lm_pretrain: --tokenizer {kind} does not go with --model {args.model}")
    full = "\n".join(docs)
    train_text = full[: int(len(full) * (1 - args.val_frac))]
    btok: Any = None
    if args.model == "gpt2":
        btok = ByteTokenizer() if kind == "byte" else BpeTokenizer(train_text, args.vocab_size)
        data = btok.encode_docs(docs)
        vocab = btok.vocab_size
    else:
        ctok: Any = (CharTokenizer(train_text) if kind == "char"
                     else WordPieceTokenizer(train_text, args.vocab_size))  # fmt: skip
        data = ctok.encode(full)
        vocab = ctok.vocab_size
    cut = int(len(data) * (1 - args.val_frac))
    train, val = data[:cut], data[cut:]
    if len(val) < args.ctx + 1:
        raise SystemExit(f"lm_pretrain: validation split ({len(val)} tokens) is shorter than ctx")
    base = unigram_ce(train, val, vocab)

    model = build(args, vocab)
    n_params = sum(p.numel() for p in model.parameters())
    decay = [p for n, p in model.named_parameters() if p.ndim >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.ndim < 2]
    opt = optim.AdamW([{"params": decay, "weight_decay": 0.1},
                       {"params": no_decay, "weight_decay": 0.0}],
                      lr=args.lr, betas=(0.9, 0.95))  # fmt: skip
    warmup = max(1, min(args.warmup, args.steps - 1))
    sched = optim.lr_scheduler.LinearWarmupCosineAnnealingLR(
        opt, warmup, max(args.steps, warmup + 1), args.lr / 100, args.lr / 10
    )

    win = args.ctx + 1 if args.model == "gpt2" else args.ctx - 2
    vrng = np.random.default_rng(args.seed + 1)
    val_starts = vrng.integers(0, len(val) - win + 1, size=args.val_batches * args.batch)
    val_masks = None
    if args.model == "bert":
        val_masks = [bert_mask(bert_batch(val, args.ctx, val_starts[i : i + args.batch]), vocab,
                               vrng) for i in range(0, len(val_starts), args.batch)]  # fmt: skip

    def loss_of(x: np.ndarray, y: np.ndarray | None = None) -> tuple[Any, Any]:
        if args.model == "gpt2":
            logits = model(lucid.from_numpy(x[:, :-1]))
            target = lucid.from_numpy(x[:, 1:].reshape(-1))
        else:
            assert y is not None
            logits = model(lucid.from_numpy(x))
            target = lucid.from_numpy(y.reshape(-1))
        flat = logits.reshape(-1, vocab)
        return F.cross_entropy(flat, target, ignore_index=-100), (flat, target)

    def evaluate() -> dict[str, float]:
        model.eval()
        tot, n, correct = 0.0, 0, 0
        with lucid.no_grad():
            for b in range(args.val_batches):
                if args.model == "gpt2":
                    x = windows(val, win, val_starts[b * args.batch : (b + 1) * args.batch])
                    loss, (flat, target) = loss_of(x)
                else:
                    assert val_masks is not None
                    x, y = val_masks[b]
                    loss, (flat, target) = loss_of(x, y)
                t = target.numpy()
                keep = t != -100
                k = int(keep.sum())
                tot += loss.item() * k
                n += k
                correct += int(((flat.argmax(1).numpy() == t) & keep).sum())
        model.train()
        out = {"val_loss": tot / n}
        if args.model == "bert":
            out["val_masked_acc"] = correct / n
        return out

    print(f"lm_pretrain: {args.model}, {kind} tokens, {n_params:,} parameters, vocab {vocab}, "
          f"{len(paths)} files, {n_lines} lines, {len(train)} train / {len(val)} val tokens, "
          f"unigram baseline {base:.4f} nats", flush=True)  # fmt: skip
    rows: list[dict[str, Any]] = [{"step": 0, "train_loss": None, **evaluate()}]
    print(json.dumps(rows[-1]), flush=True)
    model.train()
    t0 = time.perf_counter()
    running: list[float] = []
    for step in range(1, args.steps + 1):
        starts = rng.integers(0, len(train) - win + 1, size=args.batch)
        if args.model == "gpt2":
            loss, _ = loss_of(windows(train, win, starts))
        else:
            loss, _ = loss_of(*bert_mask(bert_batch(train, args.ctx, starts), vocab, rng))
        opt.zero_grad()
        loss.backward()
        clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        running.append(loss.item())
        if step % args.eval_every == 0 or step == args.steps:
            rows.append({"step": step, "train_loss": float(np.mean(running)), **evaluate(),
                         "lr": sched.get_last_lr()[0],
                         "elapsed_s": round(time.perf_counter() - t0, 1)})  # fmt: skip
            running = []
            print(json.dumps(rows[-1]), flush=True)
    result: dict[str, Any] = {
        "model": args.model, "tokenizer": kind, "params": n_params, "vocab": vocab,
        "files": len(paths),
        "lines": n_lines, "train_tokens": int(len(train)), "val_tokens": int(len(val)),
        "unigram_baseline": base, "rows": rows,
        "config": {k: v for k, v in vars(args).items() if k not in ("text", "out")},
    }  # fmt: skip
    if args.model == "gpt2" and args.sample_chars > 0:
        srng = np.random.default_rng(args.seed + 2)
        result["samples"] = [
            sample(model, btok, p, args.sample_chars, args.ctx, 0.8, srng)
            for p in ("The ", "```python\nimport lucid\n", "- ")
        ]
        for s in result["samples"]:
            print("--- sample ---\n" + s, flush=True)
    return result


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model", choices=["gpt2", "bert"], default="gpt2")
    p.add_argument(
        "--text",
        nargs="+",
        default=None,
        help="text files (default: the repo's docs/*.md and docs/guides/*.md)",
    )
    p.add_argument(
        "--tokenizer",
        choices=["byte", "bpe", "char", "wordpiece"],
        default=None,
        help="gpt2: byte (default) or bpe; bert: char (default) or wordpiece",
    )
    p.add_argument(
        "--vocab-size",
        type=int,
        default=2000,
        help="the trained tokenizer's vocabulary (bpe, wordpiece)",
    )
    p.add_argument("--steps", type=int, default=400)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--dim", type=int, default=128)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--ctx", type=int, default=64)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--warmup", type=int, default=40)
    p.add_argument("--dropout", type=float, default=0.0)
    p.add_argument("--val-frac", type=float, default=0.1)
    p.add_argument("--val-batches", type=int, default=8)
    p.add_argument("--eval-every", type=int, default=50)
    p.add_argument("--sample-chars", type=int, default=200)
    p.add_argument("--threads", type=int, default=0, help="BLAS threads (0: leave as is)")
    p.add_argument("--out", type=Path, default=None, help="write the result as JSON here")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    if args.threads:
        from threadpoolctl import threadpool_limits

        threadpool_limits(args.threads)
    result = run(args)
    first, last = result["rows"][0]["val_loss"], result["rows"][-1]["val_loss"]
    print(f"validation loss {first:.4f} -> {last:.4f} nats/token "
          f"(unigram baseline {result['unigram_baseline']:.4f})", flush=True)  # fmt: skip
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=1) + "\n")
    return result


if __name__ == "__main__":
    main()
