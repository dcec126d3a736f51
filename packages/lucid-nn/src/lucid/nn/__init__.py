"""Neural-network layers for Lucid (``torch.nn``): Module, Parameter, Buffer, layers.

>>> import lucid.nn as nn
>>> import lucid.nn.functional as F
>>> net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lucid.nn import functional as functional
from lucid.nn import init as init
from lucid.nn import parallel as parallel
from lucid.nn import utils as utils
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

if not TYPE_CHECKING:

    def __getattr__(name: str) -> Any:
        """``nn.SyncBatchNorm`` comes with lucid-distributed (imported on first use)."""
        return parallel.from_other_package("lucid.nn", name, _FROM_OTHER_PACKAGES)


_FROM_OTHER_PACKAGES = {"SyncBatchNorm": ("lucid.distributed", "lucid-distributed")}
