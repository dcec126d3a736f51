"""A small character-level GPT, written as a PyTorch user writes one: tiny_gpt.py --text F"""

import argparse
from contextlib import nullcontext

import numpy as np
import torch
import torch.nn as nn
from torch.nn import functional as F


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, block_size):
        super().__init__()
        self.c_attn, self.c_proj = nn.Linear(n_embd, 3 * n_embd), nn.Linear(n_embd, n_embd)
        self.n_head, self.n_embd = n_head, n_embd
        mask = torch.tril(torch.ones(block_size, block_size, dtype=torch.bool))
        self.register_buffer("mask", mask.view(1, 1, block_size, block_size), persistent=False)

    def forward(self, x):
        B, T, C = x.size()
        qkv = self.c_attn(x).split(self.n_embd, dim=2)
        q, k, v = [t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in qkv]
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=self.mask[:, :, :T, :T])
        return self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C))


class Block(nn.Module):
    def __init__(self, n_embd, n_head, block_size):
        super().__init__()
        self.ln_1, self.ln_2 = nn.LayerNorm(n_embd), nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention(n_embd, n_head, block_size)
        hidden = 4 * n_embd
        self.mlp = nn.Sequential(nn.Linear(n_embd, hidden), nn.GELU(), nn.Linear(hidden, n_embd))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, vocab_size, block_size, n_layer=2, n_head=4, n_embd=32):
        super().__init__()
        self.block_size = block_size
        self.wte, self.wpe = nn.Embedding(vocab_size, n_embd), nn.Embedding(block_size, n_embd)
        self.h = nn.ModuleList([Block(n_embd, n_head, block_size) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(n_embd)
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)
        self.wte.weight = self.lm_head.weight  # weight tying
        self.apply(self._init_weights)

    def _init_weights(self, module):
        if isinstance(module, (nn.Linear, nn.Embedding)):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
        if isinstance(module, nn.Linear) and module.bias is not None:
            torch.nn.init.zeros_(module.bias)

    def forward(self, idx, targets=None):
        x = self.wte(idx) + self.wpe(torch.arange(idx.size(1), device=idx.device))
        for block in self.h:
            x = block(x)
        logits = self.lm_head(self.ln_f(x))
        if targets is None:
            return logits, None
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        return logits, loss

    def configure_optimizers(self, weight_decay, learning_rate, betas):
        params = [p for p in self.parameters() if p.requires_grad]
        groups = [
            {"params": [p for p in params if p.dim() >= 2], "weight_decay": weight_decay},
            {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0},
        ]
        return torch.optim.AdamW(groups, lr=learning_rate, betas=betas)

    @torch.no_grad()
    def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None):
        for _ in range(max_new_tokens):
            logits, _ = self(idx[:, -self.block_size :])
            logits = logits[:, -1, :] / temperature
            if top_k is not None:
                v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
                logits[logits < v[:, [-1]]] = -float("Inf")
            probs = F.softmax(logits, dim=-1)
            idx = torch.cat((idx, torch.multinomial(probs, num_samples=1)), dim=1)
        return idx


def get_batch(data, block_size, batch_size, device):
    ix = torch.randint(len(data) - block_size, (batch_size,))
    x = torch.stack([torch.from_numpy(data[i : i + block_size]) for i in ix])
    y = torch.stack([torch.from_numpy(data[i + 1 : i + 1 + block_size]) for i in ix])
    return x.to(device), y.to(device)


def main(argv=None):
    parser = argparse.ArgumentParser(description="a small character-level GPT")
    parser.add_argument("--text", required=True, help="a text file to model")
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--init-from", help="a .npz of initial weights")
    parser.add_argument("--save-init", help="where to save the initial weights (.npz)")
    parser.add_argument("--compile", action="store_true", help="torch.compile the model")
    args = parser.parse_args(argv)

    torch.manual_seed(1337)
    device_type = "cuda" if torch.cuda.is_available() else "cpu"
    bf16 = device_type == "cuda" and torch.cuda.is_bf16_supported()
    ptdtype = torch.bfloat16 if bf16 else torch.float32
    ctx = nullcontext() if device_type == "cpu" else torch.autocast(device_type, dtype=ptdtype)
    amp = torch.autocast(device_type=device_type, dtype=torch.bfloat16, enabled=False)
    block_size, device = 32, torch.device(device_type)

    with open(args.text, encoding="utf-8") as f:
        text = f.read()
    chars = sorted(set(text))
    data = np.array([chars.index(c) for c in text], dtype=np.int64)
    model = GPT(len(chars), block_size).to(device)
    if args.init_from:
        model.load_state_dict({k: torch.from_numpy(v) for k, v in np.load(args.init_from).items()})
    if args.save_init:
        state = {k: v.detach().cpu().numpy() for k, v in model.state_dict().items()}
        np.savez(args.save_init, **state)
    optimizer = model.configure_optimizers(0.1, 3e-3, (0.9, 0.99))
    scaler = torch.cuda.amp.GradScaler(enabled=(ptdtype == torch.float16))
    if args.compile:  # as nanoGPT's train.py: after the optimizer, before the loop
        model = torch.compile(model)

    model.eval()
    with torch.no_grad(), ctx:
        fixed = torch.from_numpy(data[: block_size + 1]).view(1, -1)
        _, before = model(fixed[:, :-1].to(device), fixed[:, 1:].to(device))
    model.train()
    losses = []
    for _ in range(args.steps):
        x, y = get_batch(data, block_size, 16, device)
        with amp:
            _, loss = model(x, y)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)
        losses.append(loss.item())
    model.eval()
    sample = model.generate(torch.zeros((1, 1), dtype=torch.long, device=device), 20, top_k=5)
    print("loss", losses[0], "->", losses[-1], repr("".join(chars[i] for i in sample[0].tolist())))
    return {"losses": losses, "eval_before": before.item(), "model": model}


if __name__ == "__main__":
    main()
