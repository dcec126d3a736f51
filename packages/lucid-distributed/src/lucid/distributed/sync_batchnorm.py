"""``SyncBatchNorm`` (``torch.nn.SyncBatchNorm``): batch normalisation whose statistics are
those of the global batch, all ranks' parts together."""

from __future__ import annotations

from typing import Any

import numpy as np

import lucid
import lucid.nn as nn
from lucid.autograd import Function
from lucid.distributed._group import ProcessGroup, is_initialized, resolve
from lucid.distributed._work import ReduceOp, wait_all

__all__ = ["SyncBatchNorm"]


def _sum_over_ranks(arr: Any, backend: Any, group: ProcessGroup) -> Any:
    buf = np.array(backend.to_numpy(arr), order="C", copy=True)
    wait_all([group.engine.allreduce(buf, ReduceOp.SUM)], group.timeout, "SyncBatchNorm")
    return backend.from_numpy(buf)


class AllReduceSum(Function):
    """The sum over the group's ranks, differentiable: its backward sums the gradients (every
    rank's loss depends on every rank's input through the sum)."""

    @staticmethod
    def forward(ctx: Any, x: Any, group: ProcessGroup) -> Any:
        ctx.group = group
        return _sum_over_ranks(x, ctx.backend, group)

    @staticmethod
    def backward(ctx: Any, grad: lucid.Tensor) -> lucid.Tensor:
        summed = _sum_over_ranks(grad.array, grad.backend, ctx.group)
        return lucid.Tensor.from_backend_array(summed, grad.backend)


class SyncBatchNorm(nn.BatchNorm1d):
    """Batch norm over (N, C, ...) inputs of any rank >= 2 whose training statistics (mean and
    variance per channel) are those of the whole batch over the ``process_group``'s ranks (two
    small all-reduces per call). In eval mode, or outside a process group, it is BatchNorm.
    """

    _dims = (2, 3, 4, 5)  # type: ignore[assignment]  # any rank >= 2, as torch's
    _dims_text = "at least 2D"

    # torch.nn.SyncBatchNorm's signature: BatchNorm's, with process_group before device
    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True,
                 process_group: ProcessGroup | None = None, device: Any = None,
                 dtype: Any = None, *, bias: bool = True) -> None:  # fmt: skip
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype,
                         bias=bias)  # fmt: skip
        self.process_group = process_group

    def _group(self) -> ProcessGroup | None:
        if self.process_group is None and not is_initialized():
            return None
        group = resolve(self.process_group)
        return group if group.size() > 1 else None

    def forward(self, input: lucid.Tensor) -> lucid.Tensor:
        group = self._group() if self.training else None
        if group is None:
            return super().forward(input)
        self._check_input(input)
        factor = self._factor()
        mean, var, count = self._global_stats(input, group)
        shape = (1, self.num_features) + (1,) * (input.ndim - 2)
        y = (input - mean.reshape(shape)) / (var.reshape(shape) + self.eps).sqrt()
        if self.affine:
            y = y * self.weight.reshape(shape) + self.bias.reshape(shape)
        if self.track_running_stats and self.running_mean is not None:
            with lucid.no_grad():
                unbiased = var.detach() * (count / max(count - 1, 1))
                self.running_mean.mul_(1 - factor).add_(mean.detach() * factor)
                self.running_var.mul_(1 - factor).add_(unbiased * factor)
        return y

    def _global_stats(
        self, x: lucid.Tensor, group: ProcessGroup
    ) -> tuple[lucid.Tensor, lucid.Tensor, float]:
        """The global batch's per-channel mean and (biased) variance, and its size per channel:
        the mean first, then the squared deviations from it (exact, unlike E[x^2] - E[x]^2)."""
        dims = [0, *range(2, x.ndim)]
        local = float(x.numel() // self.num_features)
        ones = lucid.full((1,), local, dtype=x.dtype, device=x.device)
        totals = AllReduceSum.apply(lucid.cat([x.sum(dims), ones]), group=group)
        count = float(totals[-1].item())
        mean = totals[:-1] / count
        shape = (1, self.num_features) + (1,) * (x.ndim - 2)
        centred = x - mean.reshape(shape)
        var = AllReduceSum.apply((centred * centred).sum(dims), group=group) / count
        return mean, var, count

    @classmethod
    def convert_sync_batchnorm(
        cls, module: nn.Module, process_group: ProcessGroup | None = None
    ) -> nn.Module:
        """``module`` with every BatchNorm layer (1d/2d/3d) replaced by a SyncBatchNorm holding
        the same parameters and running statistics (``module`` itself if it is one)."""
        if isinstance(module, nn.BatchNorm1d | nn.BatchNorm2d | nn.BatchNorm3d) and not isinstance(
            module, SyncBatchNorm
        ):
            return cls._from_batchnorm(module, process_group)
        for name, child in list(module.named_children()):
            converted = cls.convert_sync_batchnorm(child, process_group)
            if converted is not child:
                setattr(module, name, converted)
        return module

    @classmethod
    def _from_batchnorm(cls, bn: nn.Module, process_group: ProcessGroup | None) -> SyncBatchNorm:
        sync = cls(
            bn.num_features, bn.eps, bn.momentum, bn.affine, bn.track_running_stats,
            process_group,
        )  # fmt: skip
        for name in ("weight", "bias"):
            if getattr(bn, name, None) is not None:
                setattr(sync, name, getattr(bn, name))
        for name in ("running_mean", "running_var", "num_batches_tracked"):
            if getattr(bn, name, None) is not None:
                setattr(sync, name, getattr(bn, name))
        sync.train(bn.training)
        return sync
