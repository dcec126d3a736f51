"""A character-level LSTM language model, written as a PyTorch user writes one.

python char_lstm.py --text some.txt
"""

import argparse
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class Corpus:
    def __init__(self, text):
        self.chars = sorted(set(text))
        stoi = {ch: i for i, ch in enumerate(self.chars)}
        ids = torch.tensor([stoi[ch] for ch in text], dtype=torch.long)
        n = int(0.9 * len(ids))
        self.train, self.valid = ids[:n], ids[n:]


def batchify(data, batch_size):
    nbatch = data.size(0) // batch_size
    return data[: nbatch * batch_size].view(batch_size, -1).t().contiguous()


def get_batch(source, i, bptt):
    seq_len = min(bptt, len(source) - 1 - i)
    return source[i : i + seq_len], source[i + 1 : i + 1 + seq_len].reshape(-1)


class RNNModel(nn.Module):
    def __init__(self, ntoken, ninp, nhid, nlayers, dropout=0.0):
        super().__init__()
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid, nlayers, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        self.nlayers, self.nhid = nlayers, nhid
        nn.init.uniform_(self.encoder.weight, -0.1, 0.1)
        nn.init.zeros_(self.decoder.bias)

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        decoded = self.decoder(self.drop(output))
        return F.log_softmax(decoded.view(-1, decoded.size(-1)), dim=1), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        shape = (self.nlayers, bsz, self.nhid)
        return weight.new_zeros(shape), weight.new_zeros(shape)


def repackage_hidden(h):
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


def evaluate(model, source, bptt, batch_size):
    model.eval()
    total = 0.0
    hidden = model.init_hidden(batch_size)
    with torch.no_grad():
        for i in range(0, source.size(0) - 1, bptt):
            data, targets = get_batch(source, i, bptt)
            output, hidden = model(data, hidden)
            total += len(data) * F.nll_loss(output, targets).item()
    return total / (len(source) - 1)


def train(model, source, optimizer, args):
    model.train()
    losses = []
    hidden = model.init_hidden(args.batch_size)
    for i in range(0, source.size(0) - 1, args.bptt):
        data, targets = get_batch(source, i, args.bptt)
        hidden = repackage_hidden(hidden)
        model.zero_grad()
        output, hidden = model(data, hidden)
        loss = F.nll_loss(output, targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
        optimizer.step()
        losses.append(loss.item())
        if len(losses) == args.steps:
            break
    return losses


def main(argv=None):
    parser = argparse.ArgumentParser(description="character-level LSTM language model")
    parser.add_argument("--text", required=True, help="a text file to model")
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--bptt", type=int, default=32)
    parser.add_argument("--clip", type=float, default=0.25)
    parser.add_argument("--dropout", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=1111)
    parser.add_argument("--init-from", help="a .npz of initial weights")
    parser.add_argument("--save-init", help="where to save the initial weights (.npz)")
    args = parser.parse_args(argv)

    torch.manual_seed(args.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    with open(args.text, encoding="utf-8") as f:
        corpus = Corpus(f.read())
    train_data = batchify(corpus.train, args.batch_size).to(device)
    valid_data = batchify(corpus.valid, args.batch_size).to(device)[:257]

    model = RNNModel(len(corpus.chars), 32, 64, 2, args.dropout).to(device)
    if args.init_from:
        model.load_state_dict({k: torch.from_numpy(v) for k, v in np.load(args.init_from).items()})
    if args.save_init:
        state = {k: v.detach().cpu().numpy() for k, v in model.state_dict().items()}
        np.savez(args.save_init, **state)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)

    before = evaluate(model, valid_data, args.bptt, args.batch_size)
    losses = train(model, train_data, optimizer, args)
    after = evaluate(model, valid_data, args.bptt, args.batch_size)
    print(f"valid loss {before:.3f} -> {after:.3f}, perplexity {math.exp(after):.1f}")
    return {"losses": losses, "eval_before": before, "eval_after": after, "model": model}


if __name__ == "__main__":
    main()
