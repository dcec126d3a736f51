"""``OptimizedModule``: what ``lucid.compile(module)`` returns (torch's
``torch._dynamo.eval_frame.OptimizedModule``): a Module holding the original as ``_orig_mod``
(so ``state_dict`` keys start with ``_orig_mod.``, as torch's) whose call replays the
capture of the original's call."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lucid.compiler import register_module_type
from lucid.nn.module import Module


class OptimizedModule(Module):
    """A compiled Module: calls go through the compiled ``_orig_mod`` call (its hooks
    included); attributes it does not have are the original's."""

    _orig_mod: Module

    def __init__(self, mod: Module, make: Callable[..., Any]) -> None:
        super().__init__()
        self._orig_mod = mod
        object.__setattr__(self, "_compiled_forward", make(mod._call_impl, guard=mod))

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """The original module's call, captured once per input signature and replayed."""
        return self._compiled_forward(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self.__dict__["_modules"]["_orig_mod"], name)


register_module_type(Module, OptimizedModule)
