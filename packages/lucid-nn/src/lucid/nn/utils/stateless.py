"""Call a module with other tensors in place of its parameters and buffers
(``torch.nn.utils.stateless``): the deprecated name of ``lucid.func.functional_call``, which
does the work.

>>> import lucid, lucid.nn as nn
>>> from lucid.nn.utils.stateless import functional_call
>>> m = nn.Linear(2, 1)
>>> w = {"weight": lucid.ones(1, 2), "bias": lucid.zeros(1)}
>>> functional_call(m, w, (lucid.tensor([[1.0, 2.0]]),))
tensor([[3.]])
"""

from __future__ import annotations

import warnings
from typing import Any

from lucid import Tensor
from lucid.func import functional_call as _func_functional_call
from lucid.nn.module import Module
from lucid.nn.parallel import DataParallel

__all__ = ["functional_call"]


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
    return _func_functional_call(
        module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights, strict=strict
    )


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
    ``lucid.func.functional_call``, the same call (this one calls it).

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
