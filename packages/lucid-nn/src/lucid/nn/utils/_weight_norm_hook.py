"""Legacy weight normalisation by a forward pre-hook (``torch.nn.utils.weight_norm``).

The module is private: torch's ``torch.nn.utils.weight_norm`` module path is shadowed by the
function of that name, so lucid keeps the function alone public.

Prefer :func:`lucid.nn.utils.parametrizations.weight_norm`. The state_dict keys are
``<name>_g`` and ``<name>_v``; ``module.<name>`` is recomputed before every forward.
"""

from __future__ import annotations

import warnings
from typing import Any, TypeVar

from lucid import Tensor
from lucid.nn.module import Module
from lucid.nn.parameter import Parameter
from lucid.nn.utils._norms import norm_except_dim
from lucid.nn.utils._norms import weight_norm as _weight_norm

__all__ = ["WeightNorm", "remove_weight_norm", "weight_norm"]

T_module = TypeVar("T_module", bound=Module)


class WeightNorm:
    """The forward pre-hook that recomputes ``module.<name>`` from ``<name>_g`` and
    ``<name>_v``."""

    name: str
    dim: int

    def __init__(self, name: str, dim: int | None) -> None:
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module: Module) -> Tensor:
        """``v * g / ||v||`` from the module's current ``<name>_g`` and ``<name>_v``."""
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return _weight_norm(v, g, self.dim)

    @staticmethod
    def apply(module: Module, name: str, dim: int | None) -> WeightNorm:
        """Replace ``module.<name>`` by ``<name>_g`` and ``<name>_v`` and register the hook."""
        warnings.warn(
            "`lucid.nn.utils.weight_norm` is deprecated in favor of "
            "`lucid.nn.utils.parametrizations.weight_norm`.",
            FutureWarning,
            stacklevel=3,
        )
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(
                    f"Cannot register two weight_norm hooks on the same parameter {name}"
                )
        fn = WeightNorm(name, dim)
        weight = module._parameters.get(name)
        if weight is None:
            raise ValueError(
                f"weight_norm needs a parameter named '{name}' on {module._get_name()}; "
                f"it has {list(module._parameters)}"
            )
        del module._parameters[name]
        module.register_parameter(
            name + "_g", Parameter(norm_except_dim(weight.detach(), 2, fn.dim))
        )
        module.register_parameter(name + "_v", Parameter(weight.detach()))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module: Module) -> None:
        """Put the current weight back as a plain Parameter named ``<name>``."""
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module: T_module, name: str = "weight", dim: int | None = 0) -> T_module:
    """Reparametrize ``module.<name>`` as ``g * v / ||v||`` with a forward pre-hook (legacy;
    warns ``FutureWarning`` as torch does). ``dim=None`` takes the norm of the whole tensor."""
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module: T_module, name: str = "weight") -> T_module:
    """Undo :func:`weight_norm`: ``module.<name>`` becomes a Parameter again."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
