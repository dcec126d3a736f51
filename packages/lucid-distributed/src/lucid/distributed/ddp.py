"""``DistributedDataParallel`` (``torch.nn.parallel.DistributedDataParallel``): one model
replica per process, gradients averaged over the processes during backward."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

import lucid
from lucid.distributed._group import ProcessGroup, resolve
from lucid.distributed._reducer import Reducer
from lucid.distributed._tensors import agree, host_copy, write
from lucid.distributed._work import wait_all
from lucid.nn import Module

__all__ = ["DistributedDataParallel"]


class DistributedDataParallel(Module):
    """Wrap ``module`` for data-parallel training: each rank runs it on its part of the batch,
    and ``backward()`` leaves every rank with the gradients averaged over all ranks, so that
    each optimizer step is the same everywhere.

    At construction every rank gets rank 0's parameters and buffers (and the ranks' models are
    checked to have the same parameter names and shapes). Gradients travel in buckets of about
    ``bucket_cap_mb`` MiB, each all-reduced (non-blocking) as soon as backward has completed it,
    while backward goes on. With ``broadcast_buffers`` every forward first copies rank 0's
    buffers (BatchNorm's running statistics) to all ranks. Under :meth:`no_sync` (or with
    ``require_backward_grad_sync = False``) gradients accumulate locally, and the next
    synchronised backward averages the sum. A parameter that takes no part in the forward's
    output is an error unless ``find_unused_parameters=True``. ``device_ids``,
    ``output_device``, ``gradient_as_bucket_view`` and ``static_graph`` are accepted for
    PyTorch programs (one process drives one device; gradients are copied out of the buckets).

    The wrapped module is ``.module``; state-dict keys carry the ``module.`` prefix.
    """

    def __init__(
        self,
        module: Module,
        device_ids: Sequence[Any] | None = None,
        output_device: Any = None,
        dim: int = 0,
        broadcast_buffers: bool = True,
        process_group: ProcessGroup | None = None,
        bucket_cap_mb: float | None = 25,
        find_unused_parameters: bool = False,
        check_reduction: bool = False,
        gradient_as_bucket_view: bool = False,
        static_graph: bool = False,
    ) -> None:
        super().__init__()
        self.module = module
        self.device_ids = list(device_ids) if device_ids is not None else None
        self.output_device = output_device
        self.dim = dim
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.process_group = resolve(process_group)
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        named = [(n, p) for n, p in module.named_parameters() if p.requires_grad]
        self._check_same_model(named)
        self._broadcast([p for _, p in module.named_parameters()] + self._buffers_to_sync())
        cap = int((25 if bucket_cap_mb is None else bucket_cap_mb) * 1024 * 1024)
        self.reducer = Reducer(
            [p for _, p in named], [n for n, _ in named], self.process_group, cap,
            find_unused_parameters,
        )  # fmt: skip

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        if self.broadcast_buffers and self.require_forward_param_sync:
            self._broadcast(self._buffers_to_sync())
        out = self.module(*inputs, **kwargs)
        if lucid.is_grad_enabled() and self.require_backward_grad_sync:
            self.reducer.prepare(out)
        else:
            self.reducer.current = None
        return out

    @contextlib.contextmanager
    def no_sync(self) -> Iterator[None]:
        """Inside the block, backward accumulates gradients locally without averaging; the
        first synchronised backward after it averages the accumulated sum."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def _buffers_to_sync(self) -> list[lucid.Tensor]:
        return [b for _, b in self.module.named_buffers() if b is not None]

    def _check_same_model(self, named: Sequence[tuple[str, lucid.Tensor]]) -> None:
        text = "; ".join(f"{n} {tuple(p.shape)} {p.dtype}" for n, p in named)
        try:
            agree(self.process_group, text, "DistributedDataParallel")
        except RuntimeError:
            raise RuntimeError(
                "DistributedDataParallel: the ranks' models differ (parameter names, shapes or "
                "dtypes): every rank must build the same model"
            ) from None

    def _broadcast(self, tensors: list[lucid.Tensor]) -> None:
        """Copy rank 0's values of ``tensors`` into every rank's, one broadcast per dtype."""
        g = self.process_group
        if g.size() == 1 or not tensors:
            return
        by_dtype: dict[Any, list[lucid.Tensor]] = {}
        for t in tensors:
            by_dtype.setdefault(str(t.dtype), []).append(t)
        for group in by_dtype.values():
            flat = np.concatenate([host_copy(t).reshape(-1) for t in group])
            wait_all([g.engine.broadcast(flat, 0)], g.timeout, "DistributedDataParallel broadcast")
            if g.rank() == 0:
                continue
            start = 0
            for t in group:
                n = t.numel()
                write(t, flat[start : start + n].reshape(t.shape))
                start += n
