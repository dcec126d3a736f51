"""``AdaptiveLogSoftmaxWithLoss`` (Grave et al., 2016): a softmax over many classes as a head
over the frequent classes and one cluster token per tail, each tail a two-layer projection."""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Sequence
from typing import Any

import lucid
from lucid import Tensor
from lucid.nn import functional as F
from lucid.nn.containers import ModuleList, Sequential
from lucid.nn.module import Module
from lucid.nn.modules.linear import Linear

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    """Efficient softmax approximation for large output spaces (torch's layer): ``forward``
    returns ``(output, loss)``, the target classes' log-probabilities and their mean
    negative."""

    def __init__(
        self, in_features: int, n_classes: int, cutoffs: Sequence[int], div_value: float = 4.0,
        head_bias: bool = False, device: Any = None, dtype: Any = None,
    ) -> None:  # fmt: skip
        super().__init__()
        cuts = list(cutoffs)
        if len(cuts) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (
            cuts != sorted(cuts)
            or min(cuts) <= 0
            or max(cuts) > n_classes - 1
            or len(set(cuts)) != len(cuts)
            or any(int(c) != c for c in cuts)
        ):
            raise ValueError(
                "cutoffs should be a sequence of unique, positive integers sorted in an "
                "increasing order, where each value is between 1 and n_classes-1"
            )
        kw = {"device": device, "dtype": dtype}
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = [*cuts, n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, **kw)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hsz = int(in_features // (div_value ** (i + 1)))
            osz = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(
                Sequential(
                    Linear(in_features, hsz, bias=False, **kw), Linear(hsz, osz, bias=False, **kw)
                )  # fmt: skip
            )

    def reset_parameters(self) -> None:
        """Re-initialise the head and every tail projection."""
        self.head.reset_parameters()
        for projection in self.tail:
            for layer in projection.children():
                layer.reset_parameters()

    def forward(self, input_: Tensor, target_: Tensor) -> Any:
        if target_.ndim == 1:
            if input_.shape[0] != target_.shape[0]:
                raise RuntimeError(
                    "Input and target should have the same size in the batch dimension."
                )
            if input_.ndim != 2:
                raise RuntimeError(f"1D target tensor expects 2D input tensors, but found "
                                   f"inputs with size {list(input_.shape)}")  # fmt: skip
        elif target_.ndim == 0:
            if input_.ndim != 1:
                raise RuntimeError(f"0D target tensor expects 1D input tensors, but found "
                                   f"inputs with size {list(input_.shape)}")  # fmt: skip
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        batched = target_.ndim > 0
        input = input_ if batched else input_.unsqueeze(0)
        target = target_ if batched else target_.unsqueeze(0)
        if target.numel() and (
            int(target.min().item()) < 0 or int(target.max().item()) >= self.n_classes
        ):
            raise RuntimeError(
                f"Target values should be in [0, {self.n_classes - 1}], but values in range "
                f"[{target.min().item()}, {target.max().item()}] were found. "
            )
        output = lucid.zeros(target.shape[0], dtype=input.dtype, device=input.device)
        gather = target
        for i in range(self.n_clusters):
            low, high = self.cutoffs[i], self.cutoffs[i + 1]
            inside = (target >= low) & (target < high)
            if not bool(inside.any()):
                continue
            # the tail's log-probability of each row's class (computed for every row, kept
            # where the target falls in this cluster)
            logprob = F.log_softmax(self.tail[i](input), dim=1)
            relative = (target - low).clamp(0, high - low - 1)
            local = logprob.gather(1, relative.unsqueeze(1)).squeeze(1)
            output = output + lucid.where(inside, local, lucid.zeros_like(local))
            gather = lucid.where(inside, lucid.full_like(target, self.shortlist_size + i), gather)
        head_logprob = F.log_softmax(self.head(input), dim=1)
        output = output + head_logprob.gather(1, gather.unsqueeze(1)).squeeze(1)
        loss = (-output).mean()
        if not batched:
            output = output.squeeze(0)
        return _ASMoutput(output, loss)

    def _get_full_log_prob(self, input: Tensor, head_output: Tensor) -> Tensor:
        head_logprob = F.log_softmax(head_output, dim=1)
        parts = [head_logprob[:, : self.shortlist_size]]
        for i in range(self.n_clusters):
            cluster = F.log_softmax(self.tail[i](input), dim=1)
            parts.append(cluster + head_logprob[:, self.shortlist_size + i].unsqueeze(1))
        return lucid.cat(parts, 1)

    def log_prob(self, input: Tensor) -> Tensor:
        """Log-probabilities of every class, ``(N, n_classes)``."""
        return self._get_full_log_prob(input, self.head(input))

    def predict(self, input: Tensor) -> Tensor:
        """The most likely class of each row (``log_prob(input).argmax(1)``, cheaper when the
        head's best is a shortlist class)."""
        head_output = self.head(input)
        output: Tensor = head_output.argmax(1)
        outside = output >= self.shortlist_size
        if not bool(outside.any()):
            return output
        best = self._get_full_log_prob(input, head_output).argmax(1)
        result: Tensor = lucid.where(outside, best, output)
        return result
