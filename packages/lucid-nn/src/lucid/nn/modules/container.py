"""``torch.nn.modules.container``'s path: the containers live in ``lucid.nn.containers``."""

from lucid.nn.containers import ModuleDict as ModuleDict
from lucid.nn.containers import ModuleList as ModuleList
from lucid.nn.containers import ParameterDict as ParameterDict
from lucid.nn.containers import ParameterList as ParameterList
from lucid.nn.containers import Sequential as Sequential

__all__ = ["ModuleDict", "ModuleList", "ParameterDict", "ParameterList", "Sequential"]
