"""What the worker scripts share: output lines (the ranks share one pipe) and an optimizer
(lucid-distributed does not depend on lucid-optim, so its tests do not either)."""

from __future__ import annotations

import sys
from collections.abc import Iterable

import lucid


def say(line: str) -> None:
    """One line in one write, so that the ranks' lines on the shared pipe never interleave."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


class SGD:
    """``torch.optim.SGD(params, lr, momentum)``: ``buf = momentum * buf + grad`` (``grad``
    at the first step), ``p -= lr * buf``."""

    def __init__(self, params: Iterable[lucid.Tensor], lr: float, momentum: float = 0.0) -> None:
        self.params = list(params)
        self.lr, self.momentum = lr, momentum
        self.bufs: list[lucid.Tensor | None] = [None] * len(self.params)

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.params:
            p.grad = None

    def step(self) -> None:
        with lucid.no_grad():
            for i, p in enumerate(self.params):
                if p.grad is None:
                    continue
                old = self.bufs[i]
                buf = p.grad.clone() if old is None else old * self.momentum + p.grad
                self.bufs[i] = buf
                p.sub_(buf * self.lr)
