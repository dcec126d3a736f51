"""Neural-network layers for Lucid (``torch.nn``): Module, Parameter, Buffer, layers.

>>> import lucid.nn as nn
>>> import lucid.nn.functional as F
>>> net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lucid.nn import attention as attention
from lucid.nn import common_types as common_types
from lucid.nn import functional as functional
from lucid.nn import grad as grad
from lucid.nn import init as init
from lucid.nn import parallel as parallel
from lucid.nn import utils as utils
from lucid.nn._compiled import OptimizedModule as OptimizedModule
from lucid.nn.containers import ModuleDict as ModuleDict
from lucid.nn.containers import ModuleList as ModuleList
from lucid.nn.containers import ParameterDict as ParameterDict
from lucid.nn.containers import ParameterList as ParameterList
from lucid.nn.containers import Sequential as Sequential
from lucid.nn.module import Module as Module
from lucid.nn.module import register_module_forward_hook as register_module_forward_hook
from lucid.nn.module import register_module_forward_pre_hook as register_module_forward_pre_hook
from lucid.nn.modules import *  # noqa: F403
from lucid.nn.parallel import DataParallel as DataParallel
from lucid.nn.parameter import Buffer as Buffer
from lucid.nn.parameter import Parameter as Parameter
from lucid.nn.parameter import UninitializedBuffer as UninitializedBuffer
from lucid.nn.parameter import UninitializedParameter as UninitializedParameter


def factory_kwargs(kwargs: dict[str, Any] | None) -> dict[str, Any]:
    """The ``device``/``dtype``/``memory_format`` of a layer's ``**kwargs`` (merged with a
    ``factory_kwargs`` entry), as ``torch.nn.factory_kwargs``."""
    if kwargs is None:
        return {}
    simple = {"device", "dtype", "memory_format"}
    unexpected = set(kwargs) - simple - {"factory_kwargs"}
    if unexpected:
        raise TypeError(f"unexpected kwargs {unexpected}")
    out = dict(kwargs.get("factory_kwargs", {}))
    for key in simple:
        if key in kwargs:
            if key in out:
                raise TypeError(f"{key} specified twice, in **kwargs and in factory_kwargs")
            out[key] = kwargs[key]
    return out


if not TYPE_CHECKING:

    def __getattr__(name: str) -> Any:
        """``nn.SyncBatchNorm`` comes with lucid-distributed (imported on first use)."""
        return parallel.from_other_package("lucid.nn", name, _FROM_OTHER_PACKAGES)


_FROM_OTHER_PACKAGES = {"SyncBatchNorm": ("lucid.distributed", "lucid-distributed")}
