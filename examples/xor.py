"""OR and XOR binary classifiers with raw lucid tensors and hand-written SGD (no lucid.nn).

The classic first demo of an autograd engine: OR is linearly separable, so one linear unit
learns it; XOR is not, so it needs a hidden layer. The network is two affine maps with a tanh
between them and a sigmoid on top, trained on mean-squared error by plain gradient descent:

    python examples/xor.py                      # train OR and XOR, print loss and accuracy
    python examples/xor.py --graph xor.svg      # also draw the autograd graph of the loss
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

import lucid

INPUTS = [[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]]
TARGETS = {"or": [0.0, 1.0, 1.0, 1.0], "xor": [0.0, 1.0, 1.0, 0.0]}


@dataclass
class Result:
    params: dict[str, lucid.Tensor]
    losses: list[float]
    accuracy: float
    predictions: list[int]


def init_params(hidden: int, seed: int) -> dict[str, lucid.Tensor]:
    """Weights drawn from N(0, 1/fan_in), biases zero; all leaves that require grad."""
    g = lucid.Generator().manual_seed(seed)
    w1 = lucid.randn(2, hidden, generator=g) * (1 / 2**0.5)
    w2 = lucid.randn(hidden, 1, generator=g) * (1 / hidden**0.5)
    return {
        "w1": w1.requires_grad_(),
        "b1": lucid.zeros(hidden, requires_grad=True),
        "w2": w2.requires_grad_(),
        "b2": lucid.zeros(1, requires_grad=True),
    }


def forward(params: dict[str, lucid.Tensor], x: lucid.Tensor) -> lucid.Tensor:
    hidden = (x @ params["w1"] + params["b1"]).tanh()
    return (hidden @ params["w2"] + params["b2"]).sigmoid().reshape(-1)


def mse(pred: lucid.Tensor, target: lucid.Tensor) -> lucid.Tensor:
    return ((pred - target) ** 2).mean()


def sgd_step(params: dict[str, lucid.Tensor], lr: float) -> None:
    with lucid.no_grad():
        for p in params.values():
            assert p.grad is not None
            p -= lr * p.grad
            p.grad = None


def train(kind: str, hidden: int = 4, steps: int = 600, lr: float = 2.0, seed: int = 0) -> Result:
    """Fit the 4-point truth table of ``kind`` ("or" or "xor") by full-batch gradient descent."""
    x = lucid.tensor(INPUTS)
    y = lucid.tensor(TARGETS[kind])
    params = init_params(hidden, seed)
    losses = []
    for _ in range(steps):
        loss = mse(forward(params, x), y)
        loss.backward()
        sgd_step(params, lr)
        losses.append(loss.item())
    with lucid.no_grad():
        predictions = (forward(params, x) > 0.5).long().tolist()
    correct = sum(int(p == t) for p, t in zip(predictions, TARGETS[kind]))
    return Result(params, losses, correct / len(INPUTS), predictions)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=600)
    parser.add_argument("--lr", type=float, default=2.0)
    parser.add_argument("--hidden", type=int, default=4)
    parser.add_argument("--graph", help="draw the loss's autograd graph to this .svg/.png/.dot")
    args = parser.parse_args()
    for kind in ("or", "xor"):
        res = train(kind, args.hidden, args.steps, args.lr)
        print(f"{kind.upper():>3}: loss {res.losses[0]:.4f} -> {res.losses[-1]:.5f}, "
              f"predictions {res.predictions}, accuracy {res.accuracy:.0%}")  # fmt: skip
    if args.graph:
        params = res.params
        loss = mse(forward(params, lucid.tensor(INPUTS)), lucid.tensor(TARGETS["xor"]))
        dot = lucid.viz.make_dot(loss, params=params)
        if args.graph.endswith(".dot"):
            dot.save(args.graph)
        else:
            dot.render(args.graph)
        print(f"graph written to {args.graph}")


if __name__ == "__main__":
    main()
