"""Legacy spectral normalisation by a forward pre-hook (``torch.nn.utils.spectral_norm``).

The module is private: torch's ``torch.nn.utils.spectral_norm`` module path is shadowed by the
function of that name, so lucid keeps the function alone public.

Prefer :func:`lucid.nn.utils.parametrizations.spectral_norm`. The state_dict keys are
``<name>_orig`` (the parameter), ``<name>_u`` and ``<name>_v`` (the power-iteration
buffers); ``module.<name>`` is recomputed before every forward.
"""

from __future__ import annotations

from typing import Any, TypeVar

import lucid
from lucid import Tensor
from lucid.autograd import no_grad
from lucid.nn.functional import normalize
from lucid.nn.module import Module
from lucid.nn.parameter import Parameter

__all__ = [
    "SpectralNorm",
    "SpectralNormLoadStateDictPreHook",
    "remove_spectral_norm",
    "spectral_norm",
]

T_module = TypeVar("T_module", bound=Module)


class SpectralNorm:
    """The forward pre-hook that divides ``<name>_orig`` by its estimated spectral norm."""

    _version: int = 1
    name: str
    dim: int
    n_power_iterations: int
    eps: float

    def __init__(
        self, name: str = "weight", n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12
    ) -> None:
        self.name = name
        self.dim = dim
        if n_power_iterations <= 0:
            raise ValueError(
                "Expected n_power_iterations to be positive, but got "
                f"n_power_iterations={n_power_iterations}"
            )
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        """The weight as a matrix with ``dim`` as rows."""
        weight_mat = weight
        if self.dim != 0:
            weight_mat = weight_mat.permute(
                self.dim, *[d for d in range(weight_mat.ndim) if d != self.dim]
            )
        return weight_mat.reshape(weight_mat.shape[0], -1)

    def compute_weight(self, module: Module, do_power_iteration: bool) -> Tensor:
        """``<name>_orig / sigma``; with ``do_power_iteration`` first updates u and v in place."""
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        weight_mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with no_grad():
                mat = weight_mat.detach()
                for _ in range(self.n_power_iterations):
                    v.copy_(normalize(lucid.mv(mat.mT, u), dim=0, eps=self.eps))
                    u.copy_(normalize(lucid.mv(mat, v), dim=0, eps=self.eps))
            u, v = u.clone(), v.clone()
        sigma = lucid.dot(u, lucid.mv(weight_mat, v))
        result: Tensor = weight / sigma
        return result

    def remove(self, module: Module) -> None:
        """Put the current normalised weight back as a plain Parameter named ``<name>``."""
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        delattr(module, self.name + "_u")
        delattr(module, self.name + "_v")
        delattr(module, self.name + "_orig")
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module, module.training))

    def _solve_v_and_rescale(self, weight_mat: Tensor, u: Tensor, target_sigma: Tensor) -> Tensor:
        # v with u = normalize(W v) and u^T W v = target_sigma, as torch's (for old checkpoints)
        v = lucid.linalg.multi_dot(
            [lucid.linalg.pinv(weight_mat.mT @ weight_mat), weight_mat.mT, u.unsqueeze(1)]
        ).squeeze(1)
        result: Tensor = v * (target_sigma / lucid.dot(u, lucid.mv(weight_mat, v)))
        return result

    @staticmethod
    def apply(
        module: Module, name: str, n_power_iterations: int, dim: int, eps: float
    ) -> SpectralNorm:
        """Move ``module.<name>`` to ``<name>_orig``, add the u/v buffers, register the hooks."""
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError(
                    f"Cannot register two spectral_norm hooks on the same parameter {name}"
                )
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters.get(name)
        if weight is None:
            raise ValueError(f"`SpectralNorm` cannot be applied as parameter `{name}` is None")
        with no_grad():
            h, w = fn.reshape_weight_to_matrix(weight).shape
            u = normalize(
                lucid.randn(h, dtype=weight.dtype, device=weight.device), dim=0, eps=fn.eps
            )
            v = normalize(
                lucid.randn(w, dtype=weight.dtype, device=weight.device), dim=0, eps=fn.eps
            )
        delattr(module, fn.name)
        module.register_parameter(fn.name + "_orig", weight)
        setattr(module, fn.name, weight.detach())
        module.register_buffer(fn.name + "_u", u)
        module.register_buffer(fn.name + "_v", v)
        module.register_forward_pre_hook(fn)
        module._register_load_state_dict_pre_hook(SpectralNormLoadStateDictPreHook(fn))
        return fn


class SpectralNormLoadStateDictPreHook:
    """Loads checkpoints written before ``<name>_v`` was saved (torch < 0.4.1: they hold
    ``<name>_orig``, ``<name>`` and ``<name>_u``) by solving for v; lucid keeps no state_dict
    metadata, so a state_dict with all of ``_orig``, ``_u``, ``_v`` is taken as current."""

    def __init__(self, fn: SpectralNorm) -> None:
        self.fn = fn

    def __call__(
        self,
        state_dict: dict[str, Any],
        prefix: str,
        local_metadata: dict[str, Any],
        strict: bool,
        missing_keys: list[str],
        unexpected_keys: list[str],
        error_msgs: list[str],
    ) -> None:
        fn = self.fn
        version = local_metadata.get("spectral_norm", {}).get(fn.name + ".version", None)
        if version is not None and version >= 1:
            return
        weight_key = prefix + fn.name
        if weight_key not in state_dict and all(
            weight_key + s in state_dict for s in ("_orig", "_u", "_v")
        ):
            return
        if any(weight_key + s not in state_dict for s in ("_orig", "", "_u")):
            return
        with no_grad():
            weight_orig = lucid.as_tensor(state_dict[weight_key + "_orig"])
            weight = lucid.as_tensor(state_dict.pop(weight_key))
            sigma = (weight_orig / weight).mean()
            weight_mat = fn.reshape_weight_to_matrix(weight_orig)
            u = lucid.as_tensor(state_dict[weight_key + "_u"])
            state_dict[weight_key + "_v"] = fn._solve_v_and_rescale(weight_mat, u, sigma)


def spectral_norm(
    module: T_module,
    name: str = "weight",
    n_power_iterations: int = 1,
    eps: float = 1e-12,
    dim: int | None = None,
) -> T_module:
    """Divide ``module.<name>`` by its spectral norm, estimated by power iteration in a
    forward pre-hook (legacy). ``dim`` defaults to 1 for transposed convolutions, else 0."""
    if dim is None:
        dim = 1 if getattr(type(module), "transposed", False) is True else 0
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module: T_module, name: str = "weight") -> T_module:
    """Undo :func:`spectral_norm`: ``module.<name>`` becomes a Parameter again."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, SpectralNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            break
    else:
        raise ValueError(f"spectral_norm of '{name}' not found in {module}")
    for k, hook in module._load_state_dict_pre_hooks.items():
        if isinstance(hook, SpectralNormLoadStateDictPreHook) and hook.fn.name == name:
            del module._load_state_dict_pre_hooks[k]
            break
    return module
