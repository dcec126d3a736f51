"""``DataParallel`` (``torch.nn.DataParallel``) on one device."""

from __future__ import annotations

from typing import Any

from lucid.nn.module import Module

__all__ = ["DataParallel"]


class DataParallel(Module):
    """Wraps ``module`` as PyTorch's DataParallel does on a machine with no CUDA devices: the
    forward call goes to ``module`` unchanged, on its own device. The wrapped module is the
    child ``module``, so state-dict keys carry the ``module.`` prefix, as in PyTorch.

    >>> net = nn.DataParallel(nn.Linear(2, 3))
    >>> list(net.state_dict())
    ['module.weight', 'module.bias']
    """

    def __init__(
        self, module: Module, device_ids: Any = None, output_device: Any = None, dim: int = 0
    ) -> None:
        super().__init__()
        self.module = module
        self.device_ids: list[Any] = []
        self.output_device = output_device
        self.dim = dim

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        return self.module(*inputs, **kwargs)
