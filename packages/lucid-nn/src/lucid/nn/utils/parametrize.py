"""Parametrizations of parameters and buffers (``torch.nn.utils.parametrize``).

``register_parametrization(module, "weight", P)`` moves ``module.weight`` to
``module.parametrizations.weight.original`` (or ``original0``, ``original1``... when
``P.right_inverse`` returns several tensors) and makes ``module.weight`` a property that
returns ``P(original)``. The module's class is swapped for a subclass named
``Parametrized<Cls>`` that holds the property, as torch does, so ``state_dict`` keys match
torch's exactly.

>>> import lucid.nn as nn
>>> import lucid.nn.utils.parametrize as P
>>> class Symmetric(nn.Module):
...     def forward(self, X):
...         return X.triu() + X.triu(1).mT
>>> m = P.register_parametrization(nn.Linear(3, 3), "weight", Symmetric())
>>> type(m).__name__, list(m.state_dict())
('ParametrizedLinear', ['bias', 'parametrizations.weight.original'])
"""

from __future__ import annotations

import copy
import copyreg
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from lucid import Tensor
from lucid.autograd import no_grad
from lucid.nn.containers import ModuleDict, ModuleList
from lucid.nn.module import Module
from lucid.nn.parameter import Parameter

__all__ = [
    "ParametrizationList",
    "cached",
    "is_parametrized",
    "register_parametrization",
    "remove_parametrizations",
    "transfer_parametrizations_and_params",
    "type_before_parametrizations",
]

_cache_enabled = 0
_cache: dict[tuple[int, str], Tensor] = {}


@contextmanager
def cached() -> Iterator[None]:
    """Compute each parametrized tensor once inside the block and reuse it.

    Useful when a parametrized weight is read several times in one forward (an RNN's recurrent
    kernel, tied weights). The cache is dropped when the outermost ``cached()`` exits.
    """
    global _cache, _cache_enabled
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache = {}


def _register_parameter_or_buffer(module: Module, name: str, x: Tensor) -> None:
    if isinstance(x, Parameter):
        module.register_parameter(name, x)
    else:
        module.register_buffer(name, x)


def _maybe_set(dest: Tensor, src: Tensor) -> None:
    """``dest.set_(src)``: ``dest`` keeps its identity (optimizers hold it) and takes src's data."""
    dest.data = src.detach()


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor and its unconstrained original(s).

    It is ``module.parametrizations[tensor_name]`` after :func:`register_parametrization`;
    it holds ``original`` (or ``original0``, ``original1``, ... when the first
    parametrization's ``right_inverse`` returns several tensors). Not meant to be built by
    hand.
    """

    original: Tensor
    unsafe: bool

    def __init__(self, modules: Sequence[Module], original: Tensor, unsafe: bool = False) -> None:
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        original_shape, original_dtype = original.shape, original.dtype
        with no_grad():
            new: Any = original
            for module in reversed(list(self)):
                if hasattr(module, "right_inverse"):
                    try:
                        new = module.right_inverse(new)
                    except NotImplementedError:
                        pass
        if not isinstance(new, (Tensor, Sequence)):
            raise ValueError(
                "'right_inverse' must return a Tensor or a Sequence of tensors (list, tuple...). "
                f"Got {type(new).__name__}"
            )
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if isinstance(new, Tensor):
            self._register_one(original, new)
        else:
            self._register_several(original, new)
        if not self.unsafe:
            self._check_consistent(original_shape, original_dtype)

    def _register_one(self, original: Tensor, new: Tensor) -> None:
        if original.dtype != new.dtype:
            raise ValueError(
                "When `right_inverse` outputs one tensor, it may not change the dtype.\n"
                f"original.dtype: {original.dtype}\n"
                f"right_inverse(original).dtype: {new.dtype}"
            )
        if original.device != new.device:
            raise ValueError(
                "When `right_inverse` outputs one tensor, it may not change the device.\n"
                f"original.device: {original.device}\n"
                f"right_inverse(original).device: {new.device}"
            )
        if new is not original:
            _maybe_set(original, new)
        _register_parameter_or_buffer(self, "original", original)

    def _register_several(self, original: Tensor, new: Sequence[Any]) -> None:
        for i, originali in enumerate(new):
            if not isinstance(originali, Tensor):
                raise ValueError(
                    "'right_inverse' must return a Tensor or a Sequence of tensors "
                    "(list, tuple...). "
                    f"Got element {i} of the sequence with type {type(originali).__name__}."
                )
            if isinstance(original, Parameter):
                originali = Parameter(originali.detach(), original.requires_grad)
            else:
                originali = originali.detach().requires_grad_(original.requires_grad)
            _register_parameter_or_buffer(self, f"original{i}", originali)

    def _check_consistent(self, shape: Any, dtype: Any) -> None:
        z = self()
        if not isinstance(z, Tensor):
            raise ValueError(f"A parametrization must return a tensor. Got {type(z).__name__}.")
        if z.dtype != dtype:
            raise ValueError(
                "Registering a parametrization may not change the dtype of the tensor, unless "
                "`unsafe` flag is enabled.\n"
                f"unparametrized dtype: {dtype}\n"
                f"parametrized dtype: {z.dtype}"
            )
        if z.shape != shape:
            raise ValueError(
                "Registering a parametrization may not change the shape of the tensor, unless "
                "`unsafe` flag is enabled.\n"
                f"unparametrized shape: {shape}\n"
                f"parametrized shape: {z.shape}"
            )

    def right_inverse(self, value: Tensor) -> None:
        """Run the ``right_inverse`` of each parametrization, last registered first, and store
        the result in ``original`` (or ``original0``, ``original1``...), in place."""
        with no_grad():
            result: Any = value
            for module in reversed(list(self)):
                if not hasattr(module, "right_inverse"):
                    raise RuntimeError(
                        f"parametrization {type(module).__name__} does not implement right_inverse."
                    )
                result = module.right_inverse(result)
            if self.is_tensor:
                self._set_one(result)
            else:
                self._set_several(result)

    def _set_one(self, value: Any) -> None:
        if not isinstance(value, Tensor):
            raise ValueError(f"`right_inverse` should return a tensor. Got {type(value).__name__}")
        if value.dtype != self.original.dtype:
            raise ValueError(
                f"The tensor returned by `right_inverse` has dtype {value.dtype} "
                f"while `original` has dtype {self.original.dtype}"
            )
        _maybe_set(self.original, value)

    def _set_several(self, value: Any) -> None:
        if not isinstance(value, Sequence):
            raise ValueError(
                f"'right_inverse' must return a sequence of tensors. Got {type(value).__name__}."
            )
        if len(value) != self.ntensors:
            raise ValueError(
                "'right_inverse' must return a sequence of tensors of length "
                f"{self.ntensors}. Got a sequence of length {len(value)}."
            )
        for i, tensor in enumerate(value):
            original_i = getattr(self, f"original{i}")
            if not isinstance(tensor, Tensor):
                raise ValueError(
                    "'right_inverse' must return a sequence of tensors. "
                    f"Got element {i} of type {type(tensor).__name__}."
                )
            if original_i.dtype != tensor.dtype:
                raise ValueError(
                    f"Tensor {i} returned by `right_inverse` has dtype {tensor.dtype} "
                    f"while `original{i}` has dtype {original_i.dtype}"
                )
            _maybe_set(original_i, tensor)

    def forward(self) -> Tensor:
        """The parametrized tensor: each parametrization applied in registration order."""
        if self.is_tensor:
            x = self[0](self.original)
        else:
            x = self[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for module in list(self)[1:]:
            x = module(x)
        result: Tensor = x
        return result


def _default_deepcopy(self: Module, memo: dict[int, Any]) -> Module:
    obj = memo.get(id(self))
    if obj is not None:
        found: Module = obj
        return found
    replica = self.__new__(self.__class__)
    memo[id(self)] = replica
    replica.__dict__ = copy.deepcopy(self.__dict__, memo)
    for slot in copyreg._slotnames(self.__class__):  # type: ignore[attr-defined]
        if hasattr(self, slot):
            setattr(replica, slot, copy.deepcopy(getattr(self, slot), memo))
    return replica


def _getstate(self: Module) -> Any:
    raise RuntimeError(
        "Serialization of parametrized modules is only supported through state_dict(). See:\n"
        "https://pytorch.org/tutorials/beginner/saving_loading_models.html"
        "#saving-loading-a-general-checkpoint-for-inference-and-or-resuming-training"
    )


def _inject_new_class(module: Module) -> None:
    """Swap ``module``'s class for a fresh subclass ``Parametrized<Cls>`` (to hold properties)."""
    cls = module.__class__
    dct: dict[str, Any] = {"__getstate__": _getstate}
    if not hasattr(cls, "__deepcopy__"):
        dct["__deepcopy__"] = _default_deepcopy
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), dct)


def _inject_property(module: Module, tensor_name: str) -> None:
    """Make ``module.<tensor_name>`` a property that computes the parametrized tensor."""
    if hasattr(module, tensor_name):
        raise AssertionError(f"Module already has an attribute named '{tensor_name}'")

    def get_parametrized(self: Module) -> Tensor:
        parametrization = self.parametrizations[tensor_name]
        if not _cache_enabled:
            result: Tensor = parametrization()
            return result
        key = (id(self), tensor_name)
        tensor = _cache.get(key)
        if tensor is None:
            tensor = parametrization()
            _cache[key] = tensor
        return tensor

    def set_original(self: Module, value: Tensor) -> None:
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(module.__class__, tensor_name, property(get_parametrized, set_original))


def register_parametrization(
    module: Module, tensor_name: str, parametrization: Module, *, unsafe: bool = False
) -> Module:
    """Parametrize ``module.<tensor_name>``: reading it returns ``parametrization(original)``.

    The first registration moves the parameter or buffer to
    ``module.parametrizations[tensor_name].original`` (several tensors, ``original0``,
    ``original1``..., when ``parametrization.right_inverse`` returns a sequence) and swaps
    the module's class for ``Parametrized<Cls>``; later ones chain after it. Assigning to
    ``module.<tensor_name>`` runs the ``right_inverse`` methods and writes the originals in
    place. Unless ``unsafe=True``, the parametrization must keep the shape and dtype. The
    parametrization takes the module's training mode. Returns ``module``.
    """
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            _check_appended(module, tensor_name, parametrization)
        plist = module.parametrizations[tensor_name]
        plist.append(parametrization)
        plist.unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        if original is None:
            raise ValueError(
                f"Module '{module._get_name()}' has '{tensor_name}' registered as None; there "
                "is no tensor to parametrize"
            )
        plist = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        _inject_property(module, tensor_name)
        module.parametrizations[tensor_name] = plist
    else:
        raise ValueError(
            f"Module '{module}' does not have a parameter, a buffer, or a "
            f"parametrized element with name '{tensor_name}'"
        )
    return module


def _check_appended(module: Module, tensor_name: str, parametrization: Module) -> None:
    y = getattr(module, tensor_name)
    x = parametrization(y)
    if not isinstance(x, Tensor):
        raise ValueError(f"A parametrization must return a tensor. Got {type(x).__name__}.")
    for what, a, b in (("dtype", x.dtype, y.dtype), ("shape", x.shape, y.shape)):
        if a != b:
            raise ValueError(
                f"Registering a parametrization may not change the {what} of the tensor, "
                "unless the `unsafe` flag is enabled.\n"
                f"module.{tensor_name}.{what}: {b}\n"
                f"parametrization(module.{tensor_name}).{what}: {a}"
            )
    if not hasattr(parametrization, "right_inverse"):
        return
    try:
        z = parametrization.right_inverse(x)
    except NotImplementedError:
        return
    if not isinstance(z, Tensor):
        raise ValueError(
            f"parametrization.right_inverse must return a tensor. Got: {type(z).__name__}"
        )
    for what, a, b in (("dtype", z.dtype, y.dtype), ("shape", z.shape, y.shape)):
        if a != b:
            raise ValueError(
                f"The tensor returned by parametrization.right_inverse must have the same "
                f"{what} as module.{tensor_name}, unless the `unsafe` flag is enabled.\n"
                f"module.{tensor_name}.{what}: {b}\n"
                f"returned {what}: {a}"
            )


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether ``module`` has a parametrization on ``tensor_name`` (on anything when None)."""
    parametrizations = getattr(module, "parametrizations", None)
    if not isinstance(parametrizations, ModuleDict):
        return False
    if tensor_name is None:
        return len(parametrizations) > 0
    return tensor_name in parametrizations


def remove_parametrizations(
    module: Module, tensor_name: str, leave_parametrized: bool = True
) -> Module:
    """Remove the parametrizations on ``module.<tensor_name>``.

    With ``leave_parametrized=True`` the tensor keeps its current parametrized value (written
    into the original Parameter, which keeps its identity); with ``False`` it goes back to the
    unconstrained ``original`` (only possible when there is one original tensor). When no
    parametrization is left, the module gets its own class back.
    """
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    plist = module.parametrizations[tensor_name]
    if plist.is_tensor:
        original = plist.original
        if leave_parametrized:
            with no_grad():
                t = getattr(module, tensor_name)
                _maybe_set(original, t)
    else:
        if not leave_parametrized:
            raise ValueError(
                "Cannot leave unparametrized (`leave_parametrized=False`) a tensor "
                "that is parametrized in terms of a sequence of tensors."
            )
        t = getattr(module, tensor_name)
        original = Parameter(t.detach()) if t.requires_grad else t.detach()
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    _register_parameter_or_buffer(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__.__bases__[0]
    return module


def type_before_parametrizations(module: Module) -> type:
    """The module's class before any parametrization swapped it (its class when none did)."""
    if is_parametrized(module):
        return module.__class__.__bases__[0]
    return type(module)


def transfer_parametrizations_and_params(
    from_module: Module, to_module: Module, tensor_name: str | None = None
) -> Module:
    """Register ``from_module``'s parametrizations (all, or those of ``tensor_name``) on
    ``to_module`` and share the original tensors; ``to_module`` gets a Parameter of that name
    first where it has none. Returns ``to_module``."""
    if not is_parametrized(from_module):
        return to_module
    names = list(from_module.parametrizations) if tensor_name is None else [tensor_name]
    for name in names:
        source = from_module.parametrizations[name]
        if not hasattr(to_module, name):
            setattr(to_module, name, Parameter(getattr(from_module, name).detach()))
        for param_func in source:
            register_parametrization(to_module, name, param_func)
        target = to_module.parametrizations[name]
        if hasattr(source, "original"):
            target.original = source.original
        else:
            i = 0
            while hasattr(source, f"original{i}"):
                setattr(target, f"original{i}", getattr(source, f"original{i}"))
                i += 1
    return to_module
