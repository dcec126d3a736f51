"""Pruning by masks (``torch.nn.utils.prune``).

Pruning ``module.weight`` moves the parameter to ``weight_orig``, adds the buffer
``weight_mask`` and a forward pre-hook that sets ``module.weight = weight_orig * weight_mask``
before each forward; pruning the same tensor again combines the masks in a
:class:`PruningContainer`. :func:`remove` makes the pruning permanent.

>>> import lucid.nn as nn
>>> import lucid.nn.utils.prune as prune
>>> m = prune.l1_unstructured(nn.Linear(4, 3), "weight", amount=0.5)
>>> sorted(m.state_dict()), int(m.weight_mask.sum().item())
(['bias', 'weight_mask', 'weight_orig'], 6)

Masks are computed on the host with NumPy (they are not differentiable); where scores tie,
which of the tied entries is pruned may differ from torch's ``topk``.
"""

from __future__ import annotations

import numbers
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator
from typing import Any, ClassVar

import numpy as np

import lucid
from lucid import Tensor
from lucid.nn.module import Module
from lucid.nn.utils.convert_parameters import parameters_to_vector

__all__ = [
    "BasePruningMethod",
    "CustomFromMask",
    "Identity",
    "L1Unstructured",
    "LnStructured",
    "PruningContainer",
    "RandomStructured",
    "RandomUnstructured",
    "custom_from_mask",
    "global_unstructured",
    "identity",
    "is_pruned",
    "l1_unstructured",
    "ln_structured",
    "random_structured",
    "random_unstructured",
    "remove",
]


def _host(t: Tensor) -> np.ndarray[Any, Any]:
    return np.asarray(t.detach().numpy())


def _like(array: Any, t: Tensor) -> Tensor:
    result: Tensor = lucid.as_tensor(np.ascontiguousarray(array), dtype=t.dtype, device=t.device)
    return result


class BasePruningMethod(ABC):
    """A way to compute a mask; subclasses define ``compute_mask`` and ``PRUNING_TYPE``
    (``"unstructured"``, ``"structured"`` with a ``dim``, or ``"global"``).

    An instance is the forward pre-hook that reapplies the mask before each forward.
    """

    PRUNING_TYPE: ClassVar[str]
    _tensor_name: str

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """The new mask for ``t``, given the mask already in place (``default_mask``)."""

    def apply_mask(self, module: Module) -> Tensor:
        """``<name>_orig * <name>_mask`` (differentiable in the original)."""
        if getattr(self, "_tensor_name", None) is None:
            raise AssertionError(f"Module {module} has to be pruned")
        mask = getattr(module, self._tensor_name + "_mask")
        orig = getattr(module, self._tensor_name + "_orig")
        result: Tensor = mask.to(orig.dtype) * orig
        return result

    @classmethod
    def apply(
        cls,
        module: Module,
        name: str,
        *args: Any,
        importance_scores: Tensor | None = None,
        **kwargs: Any,
    ) -> BasePruningMethod:
        """Prune ``module.<name>`` with a new ``cls(*args, **kwargs)``, combined with the
        pruning already there; returns the method (or container) now acting on it."""
        method = _composite_method(cls, module, name, *args, **kwargs)
        orig = getattr(module, name)
        if importance_scores is not None:
            if importance_scores.shape != orig.shape:
                raise AssertionError(
                    f"importance_scores should have the same shape as parameter {name} of "
                    f"{module}, got {importance_scores.shape} vs {orig.shape}"
                )
        else:
            importance_scores = orig
        first = not isinstance(method, PruningContainer)
        if first:
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = lucid.ones_like(orig)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone()
        try:
            mask = method.compute_mask(importance_scores, default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            if first:
                orig = getattr(module, name + "_orig")
                module.register_parameter(name, orig)
                del module._parameters[name + "_orig"]
            raise
        return method

    def prune(
        self,
        t: Tensor,
        default_mask: Tensor | None = None,
        importance_scores: Tensor | None = None,
    ) -> Tensor:
        """``t`` times the mask this method computes (the module is not touched)."""
        if importance_scores is not None:
            if importance_scores.shape != t.shape:
                raise AssertionError(
                    "importance_scores should have the same shape as tensor t, got "
                    f"{importance_scores.shape} vs {t.shape}"
                )
        else:
            importance_scores = t
        default_mask = default_mask if default_mask is not None else lucid.ones_like(t)
        result: Tensor = t * self.compute_mask(importance_scores, default_mask=default_mask)
        return result

    def remove(self, module: Module) -> None:
        """Make the pruning permanent: ``<name>`` becomes the Parameter ``<name>_orig`` with
        the masked values; ``<name>_orig`` and ``<name>_mask`` go."""
        if getattr(self, "_tensor_name", None) is None:
            raise AssertionError(f"Module {module} has to be pruned before pruning can be removed")
        weight = self.apply_mask(module)
        if self._tensor_name in module.__dict__:
            delattr(module, self._tensor_name)
        orig = module._parameters[self._tensor_name + "_orig"]
        assert orig is not None
        orig.data = weight.detach()
        del module._parameters[self._tensor_name + "_orig"]
        del module._buffers[self._tensor_name + "_mask"]
        setattr(module, self._tensor_name, orig)


def _composite_method(
    cls: type[BasePruningMethod], module: Module, name: str, *args: Any, **kwargs: Any
) -> BasePruningMethod:
    old_method = None
    hooks_to_remove = []
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            old_method = hook
            hooks_to_remove.append(k)
    if len(hooks_to_remove) > 1:
        raise AssertionError(
            f"Avoid adding multiple pruning hooks to the same tensor {name} of module "
            f"{module}. Use a PruningContainer."
        )
    for k in hooks_to_remove:
        del module._forward_pre_hooks[k]
    method = cls(*args, **kwargs)
    method._tensor_name = name
    if old_method is None:
        return method
    if isinstance(old_method, PruningContainer):
        old_method.add_pruning_method(method)
        return old_method
    container = PruningContainer(old_method)
    container.add_pruning_method(method)
    return container


class PruningContainer(BasePruningMethod):
    """The pruning methods applied one after another to one tensor; the last one's mask is
    computed on what the earlier ones left (unstructured: the kept entries; structured: the
    kept channels)."""

    def __init__(self, *args: BasePruningMethod) -> None:
        self._pruning_methods: tuple[BasePruningMethod, ...] = ()
        if len(args) == 1:
            self._tensor_name = args[0]._tensor_name
            self.add_pruning_method(args[0])
        else:
            for method in args:
                self.add_pruning_method(method)

    def add_pruning_method(self, method: BasePruningMethod | None) -> None:
        """Append ``method`` (it must act on this container's tensor)."""
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and getattr(self, "_tensor_name", None) != method._tensor_name:
            raise ValueError(
                "Can only add pruning methods acting on the parameter named "
                f"'{getattr(self, '_tensor_name', None)}' to PruningContainer {self}."
                f" Found '{method._tensor_name}'"
            )
        if method is not None:
            self._pruning_methods += (method,)

    def __len__(self) -> int:
        return len(self._pruning_methods)

    def __iter__(self) -> Iterator[BasePruningMethod]:
        return iter(self._pruning_methods)

    def __getitem__(self, idx: int) -> BasePruningMethod:
        return self._pruning_methods[idx]

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """The last method's mask on the part of ``t`` that ``default_mask`` keeps."""
        method = self._pruning_methods[-1]
        t_host = _host(t)
        new_mask = _host(default_mask).astype(t_host.dtype, copy=True)
        slc: Any
        if method.PRUNING_TYPE == "unstructured":
            slc = new_mask == 1
        elif method.PRUNING_TYPE == "structured":
            if not hasattr(method, "dim"):
                raise AttributeError(
                    'Pruning methods of PRUNING_TYPE "structured" need to have the attribute '
                    "`dim` defined."
                )
            n_dims = t_host.ndim
            dim = method.dim if method.dim >= 0 else n_dims + method.dim
            if dim < 0:
                raise IndexError(f"Index is out of bounds for tensor with dimensions {n_dims}")
            others = tuple(d for d in range(n_dims) if d != dim)
            keep_channel = new_mask.sum(axis=others) != 0
            slc = tuple(keep_channel if d == dim else slice(None) for d in range(n_dims))
        elif method.PRUNING_TYPE == "global":
            slc = (slice(None),) * t_host.ndim
        else:
            raise ValueError(f"Unrecognized PRUNING_TYPE {method.PRUNING_TYPE}")
        partial = method.compute_mask(_like(t_host[slc], t), default_mask=_like(new_mask[slc], t))
        new_mask[slc] = _host(partial)
        return _like(new_mask, default_mask)


class Identity(BasePruningMethod):
    """Prunes nothing: the mask is all ones (the hook and keys are still added)."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """``default_mask`` unchanged."""
        return default_mask

    @classmethod
    def apply(cls, module: Module, name: str) -> BasePruningMethod:  # type: ignore[override]
        """Add the identity pruning to ``module.<name>``."""
        return super().apply(module, name)


class RandomUnstructured(BasePruningMethod):
    """Prunes ``amount`` entries (a fraction, or a count when an int) chosen at random."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount: float) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """Zero ``amount`` entries of ``default_mask`` picked by a uniform draw."""
        k = _nparams_toprune(self.amount, t.numel())
        mask = _host(default_mask).copy()
        if k != 0:
            prob = _host(lucid.rand_like(t)).reshape(-1)
            mask.reshape(-1)[np.argsort(-prob, kind="stable")[:k]] = 0
        return _like(mask, default_mask)

    @classmethod
    def apply(cls, module: Module, name: str, amount: float) -> BasePruningMethod:  # type: ignore[override]
        """Prune ``module.<name>`` at random."""
        return super().apply(module, name, amount=amount)


class L1Unstructured(BasePruningMethod):
    """Prunes the ``amount`` entries of smallest absolute value (of ``importance_scores``
    where given)."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount: float) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """Zero the ``amount`` smallest ``|t|`` in ``default_mask``."""
        k = _nparams_toprune(self.amount, t.numel())
        mask = _host(default_mask).copy()
        if k != 0:
            scores = np.abs(_host(t)).reshape(-1)
            mask.reshape(-1)[np.argsort(scores, kind="stable")[:k]] = 0
        return _like(mask, default_mask)

    @classmethod
    def apply(  # type: ignore[override]
        cls,
        module: Module,
        name: str,
        amount: float,
        importance_scores: Tensor | None = None,
    ) -> BasePruningMethod:
        """Prune ``module.<name>`` by magnitude."""
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


class RandomStructured(BasePruningMethod):
    """Prunes ``amount`` whole channels along ``dim``, chosen at random."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount: float, dim: int = -1) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.dim = dim

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """Keep the channels whose uniform draw is above the ``amount``-th smallest."""
        _validate_structured_pruning(t)
        _validate_pruning_dim(t, self.dim)
        nchannels = t.shape[self.dim]
        k = _nparams_toprune(self.amount, nchannels)
        if k == 0:
            return default_mask
        prob = _host(lucid.rand(nchannels))
        keep = prob > np.sort(prob)[k - 1]
        return _channel_mask(t, self.dim, keep, default_mask)

    @classmethod
    def apply(  # type: ignore[override]
        cls, module: Module, name: str, amount: float, dim: int = -1
    ) -> BasePruningMethod:
        """Prune channels of ``module.<name>`` at random."""
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    """Prunes the ``amount`` channels along ``dim`` of smallest ``L_n`` norm."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount: float, n: float, dim: int = -1) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.n = n
        self.dim = dim

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """Keep the channels of largest norm."""
        _validate_structured_pruning(t)
        _validate_pruning_dim(t, self.dim)
        nchannels = t.shape[self.dim]
        k = _nparams_toprune(self.amount, nchannels)
        if k == 0:
            return default_mask
        dims = list(range(t.ndim))
        dims.remove(dims[self.dim])
        norm = _host(lucid.norm(t.detach(), p=self.n, dim=tuple(dims)))
        keep = np.zeros(nchannels, dtype=bool)
        keep[np.argsort(-norm, kind="stable")[: nchannels - k]] = True
        return _channel_mask(t, self.dim, keep, default_mask)

    @classmethod
    def apply(  # type: ignore[override]
        cls,
        module: Module,
        name: str,
        amount: float,
        n: float,
        dim: int,
        importance_scores: Tensor | None = None,
    ) -> BasePruningMethod:
        """Prune channels of ``module.<name>`` by norm."""
        return super().apply(
            module, name, amount=amount, n=n, dim=dim, importance_scores=importance_scores
        )


class CustomFromMask(BasePruningMethod):
    """Prunes where a given mask is 0."""

    PRUNING_TYPE = "global"

    def __init__(self, mask: Tensor) -> None:
        self.mask = mask

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """``default_mask * mask``."""
        if default_mask.shape != self.mask.shape:
            raise AssertionError(
                f"default_mask shape {default_mask.shape} must match self.mask shape "
                f"{self.mask.shape}"
            )
        result: Tensor = default_mask * self.mask.to(default_mask.dtype)
        return result

    @classmethod
    def apply(cls, module: Module, name: str, mask: Tensor) -> BasePruningMethod:  # type: ignore[override]
        """Prune ``module.<name>`` with ``mask``."""
        return super().apply(module, name, mask=mask)


def identity(module: Module, name: str) -> Module:
    """Add an all-ones mask to ``module.<name>`` (the keys and hook, nothing pruned)."""
    Identity.apply(module, name)
    return module


def random_unstructured(module: Module, name: str, amount: float) -> Module:
    """Prune ``amount`` entries of ``module.<name>`` chosen at random."""
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(
    module: Module, name: str, amount: float, importance_scores: Tensor | None = None
) -> Module:
    """Prune the ``amount`` entries of ``module.<name>`` of smallest absolute value."""
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module: Module, name: str, amount: float, dim: int) -> Module:
    """Prune ``amount`` channels of ``module.<name>`` along ``dim``, at random."""
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(
    module: Module,
    name: str,
    amount: float,
    n: float,
    dim: int,
    importance_scores: Tensor | None = None,
) -> Module:
    """Prune the ``amount`` channels of ``module.<name>`` along ``dim`` of smallest L``n``
    norm."""
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def global_unstructured(
    parameters: Iterable[tuple[Module, str]],
    pruning_method: type[BasePruningMethod],
    importance_scores: dict[tuple[Module, str], Tensor] | None = None,
    **kwargs: Any,
) -> None:
    """Prune ``(module, name)`` pairs together: the scores of all of them are pooled, so
    ``amount`` counts across every tensor. ``pruning_method`` must be unstructured."""
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    parameters = list(parameters)
    importance_scores = importance_scores if importance_scores is not None else {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    scores = parameters_to_vector(
        [importance_scores.get((m, name), getattr(m, name)) for m, name in parameters]
    )
    default_mask = parameters_to_vector([_mask_or_ones(m, name) for m, name in parameters])
    container = PruningContainer()
    container._tensor_name = "temp"
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError(
            'Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. Found method '
            f"{pruning_method} of type {method.PRUNING_TYPE}"
        )
    container.add_pruning_method(method)
    final_mask = container.compute_mask(scores.detach(), default_mask.detach())
    pointer = 0
    for m, name in parameters:
        param = getattr(m, name)
        num = param.numel()
        custom_from_mask(m, name, mask=final_mask[pointer : pointer + num].reshape(param.shape))
        pointer += num


def custom_from_mask(module: Module, name: str, mask: Tensor) -> Module:
    """Prune ``module.<name>`` where ``mask`` is 0."""
    CustomFromMask.apply(module, name, mask)
    return module


def remove(module: Module, name: str) -> Module:
    """Make the pruning of ``module.<name>`` permanent (``<name>`` is a Parameter again,
    holding the masked values)."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(
        f"Parameter '{name}' of module {module} has to be pruned before pruning can be removed"
    )


def is_pruned(module: Module) -> bool:
    """Whether any submodule of ``module`` (or itself) carries a pruning hook."""
    for _, submodule in module.named_modules():
        for hook in submodule._forward_pre_hooks.values():
            if isinstance(hook, BasePruningMethod):
                return True
    return False


def _mask_or_ones(module: Module, name: str) -> Tensor:
    mask: Tensor | None = getattr(module, name + "_mask", None)
    return mask if mask is not None else lucid.ones_like(getattr(module, name))


def _channel_mask(t: Tensor, dim: int, keep: Any, default_mask: Tensor) -> Tensor:
    mask = np.zeros(t.shape, dtype=_host(default_mask).dtype)
    slc = [slice(None)] * t.ndim
    slc[dim] = keep
    mask[tuple(slc)] = 1
    return _like(mask * _host(default_mask), default_mask)


def _validate_pruning_amount_init(amount: Any) -> None:
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if (isinstance(amount, numbers.Integral) and amount < 0) or (
        not isinstance(amount, numbers.Integral) and (float(amount) > 1.0 or float(amount) < 0.0)
    ):
        raise ValueError(
            f"amount={amount} should either be a float in the range [0, 1] or a non-negative "
            "integer"
        )


def _nparams_toprune(amount: Any, tensor_size: int) -> int:
    k = amount if isinstance(amount, numbers.Integral) else round(amount * tensor_size)
    if isinstance(amount, numbers.Integral) and int(amount) > tensor_size:
        raise ValueError(
            f"amount={amount} should be smaller than the number of parameters to "
            f"prune={tensor_size}"
        )
    return int(k)


def _validate_structured_pruning(t: Tensor) -> None:
    if t.ndim <= 1:
        raise ValueError(
            "Structured pruning can only be applied to multidimensional tensors. Found tensor "
            f"of shape {t.shape} with {t.ndim} dims"
        )


def _validate_pruning_dim(t: Tensor, dim: int) -> None:
    if dim >= t.ndim:
        raise IndexError(f"Invalid index {dim} for tensor of size {t.shape}")
