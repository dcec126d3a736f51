"""``skip_init`` (``torch.nn.utils.init``): build a module whose parameter values do not
matter because they are about to be overwritten (by ``load_state_dict``, say)."""

from __future__ import annotations

import inspect
from typing import Any, TypeVar

from lucid.nn.module import Module

__all__ = ["skip_init"]

M = TypeVar("M", bound=Module)


def skip_init(module_cls: type[M], *args: Any, **kwargs: Any) -> M:
    """``module_cls(*args, **kwargs)`` with unspecified parameter values, on ``device``
    (default ``"cpu"``); the class must take a ``device`` argument, as torch requires.

    Lucid has no ``meta`` device, so unlike torch the module is initialised as usual (the
    values are as unspecified as torch's; only the time saving is missing).
    """
    if not (isinstance(module_cls, type) and issubclass(module_cls, Module)):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    kwargs.setdefault("device", "cpu")
    return module_cls(*args, **kwargs)
