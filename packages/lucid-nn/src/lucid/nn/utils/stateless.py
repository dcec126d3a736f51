"""Call a module with other tensors in place of its parameters and buffers
(``torch.nn.utils.stateless``; ``torch.func.functional_call`` is the same call).

>>> import lucid, lucid.nn as nn
>>> from lucid.nn.utils.stateless import functional_call
>>> m = nn.Linear(2, 1)
>>> w = {"weight": lucid.ones(1, 2), "bias": lucid.zeros(1)}
>>> functional_call(m, w, (lucid.tensor([[1.0, 2.0]]),))
tensor([[3.]])
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from lucid import Tensor
from lucid.nn.module import Module
from lucid.nn.parallel import DataParallel

__all__ = ["functional_call"]

_MISSING: Any = object()


def _submodule(module: Module, path: str) -> Module:
    for attr in path.split(".") if path else ():
        try:
            child = getattr(module, attr)
        except AttributeError as ex:
            raise AttributeError(f"{module._get_name()} has no attribute `{attr}`") from ex
        if not isinstance(child, Module):
            raise TypeError(f"submodule `{path}`: {child} is not an instance of lucid.nn.Module")
        module = child
    return module


def _swap_tensor(root: Module, name: str, tensor: Any) -> Any:
    """Put ``tensor`` at the dotted ``name`` (``_MISSING`` removes it); return what was there."""
    path, _, attr = name.rpartition(".")
    module = _submodule(root, path)
    if tensor is not _MISSING and tensor is not None and not isinstance(tensor, Tensor):
        raise TypeError(f"{tensor} is not an instance of lucid.Tensor")
    for registry in (module._parameters, module._buffers):
        if attr in registry:
            orig = registry[attr]
            if tensor is _MISSING:
                del registry[attr]
            else:
                registry[attr] = tensor  # a plain Tensor may stand in for a Parameter
            return orig
    orig = getattr(module, attr) if hasattr(module, attr) else _MISSING
    if orig is not _MISSING and orig is not None and not isinstance(orig, Tensor):
        raise TypeError(f"attribute `{attr}`: {orig} is not an instance of lucid.Tensor")
    if tensor is not _MISSING:
        setattr(module, attr, tensor)
    elif hasattr(module, attr):
        delattr(module, attr)
    return orig


def _swap_tensors_dict(root: Module, tensors: Mapping[str, Any]) -> dict[str, Any]:
    swapped: dict[str, Any] = {}
    try:
        for name, tensor in tensors.items():
            swapped[name] = _swap_tensor(root, name, tensor)
    except Exception:
        for name, orig in swapped.items():
            _swap_tensor(root, name, orig)
        raise
    return swapped


def _named_tensors(module: Module) -> Iterator[tuple[str, Tensor]]:
    yield from module.named_parameters(remove_duplicate=False)
    yield from module.named_buffers(remove_duplicate=False)


def _untie_named_tensors_map(
    module: Module, parameters_and_buffers: Mapping[str, Tensor]
) -> dict[str, Tensor]:
    """Give every name of a tied tensor the value passed for one of its names."""
    by_tensor: dict[int, set[str]] = {}
    for name, tensor in dict(_named_tensors(module)).items():
        by_tensor.setdefault(id(tensor), set()).add(name)
    tied = {name: names for names in by_tensor.values() if len(names) > 1 for name in names}
    given = {name for name in parameters_and_buffers if name in tied}
    for name in given:
        names = tied[name]
        values = {id(parameters_and_buffers[n]) for n in names if n in parameters_and_buffers}
        if len(names & given) > 1 and len(values) != 1:
            raise ValueError(
                f"functional_call got multiple values for keys {sorted(names)}, which are "
                "tied. Consider using tie_weights=False"
            )
    untied = dict(parameters_and_buffers)
    for name in given:
        for tied_name in tied[name]:
            untied[tied_name] = parameters_and_buffers[name]
    return untied


@contextmanager
def _reparametrize_module(
    module: Module,
    parameters_and_buffers: dict[str, Tensor],
    tie_weights: bool = False,
    strict: bool = False,
) -> Iterator[None]:
    untied = (
        _untie_named_tensors_map(module, parameters_and_buffers)
        if tie_weights
        else parameters_and_buffers
    )
    if strict:
        valid = {name for name, _ in _named_tensors(module)}
        missing, unexpected = sorted(valid - set(untied)), sorted(set(untied) - valid)
        msgs = []
        if unexpected:
            msgs.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
        if missing:
            msgs.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
        if msgs:
            raise RuntimeError(
                f"Error(s) in reparametrizing for {module._get_name()}:\n\t" + "\n\t".join(msgs)
            )
    orig: dict[str, Any] = {}
    try:
        orig = _swap_tensors_dict(module, untied)
        yield
    finally:
        new = _swap_tensors_dict(module, orig)
        # a forward that rebinds a buffer (x.running_mean = ...) hands the new value back
        parameters_and_buffers.update(
            {k: new[k] for k in parameters_and_buffers if k in new and new[k] is not _MISSING}
        )


def _functional_call(
    module: Module,
    parameters_and_buffers: dict[str, Tensor],
    args: Any = None,
    kwargs: dict[str, Any] | None = None,
    *,
    tie_weights: bool = True,
    strict: bool = False,
) -> Any:
    if isinstance(module, DataParallel):
        raise RuntimeError("The stateless API can't be used with nn.DataParallel module")
    kwargs = {} if kwargs is None else kwargs
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _reparametrize_module(module, parameters_and_buffers, tie_weights, strict):
        return module(*args, **kwargs)


def functional_call(
    module: Module,
    parameters_and_buffers: dict[str, Tensor],
    args: Any = None,
    kwargs: dict[str, Any] | None = None,
    *,
    tie_weights: bool = True,
    strict: bool = False,
) -> Any:
    """``module(*args, **kwargs)`` with the tensors of ``parameters_and_buffers`` (dotted
    names, as ``named_parameters``/``named_buffers`` give) in place of the module's own, put
    back afterwards. Deprecated as in torch (``FutureWarning``): use
    ``lucid.func.functional_call``, the same call.

    ``args`` is a tuple or a single argument. ``tie_weights``: a value given for one name of
    a tied tensor is used for all its names. ``strict``: the names must be exactly the
    module's parameters and buffers.
    """
    warnings.warn(
        "`lucid.nn.utils.stateless.functional_call` is deprecated (as in PyTorch 2.0) and will "
        "be removed in a future version. Please use `lucid.func.functional_call` "
        "instead which is a drop-in replacement.",
        FutureWarning,
        stacklevel=2,
    )
    return _functional_call(
        module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights, strict=strict
    )
