"""All tensor operations. ``lucid.<op>`` and ``Tensor.<op>`` both come from here."""

from __future__ import annotations

from lucid.ops.elementwise import (
    add,
    cast,
    div,
    eq,
    exp,
    ge,
    gt,
    le,
    log,
    lt,
    mul,
    ne,
    neg,
    relu,
    sub,
    tanh,
)
from lucid.ops.indexing import getitem, setitem
from lucid.ops.matmul import matmul
from lucid.ops.reduction import mean, sum
from lucid.ops.shape import (
    broadcast_to,
    clone,
    expand,
    expand_as,
    expand_copy,
    permute,
    reshape,
    squeeze,
    sum_to_size,
    swapaxes,
    swapdims,
    t,
    to_device,
    transpose,
    unsqueeze,
    view,
)

__all__ = [
    "add", "broadcast_to", "cast", "clone", "div", "eq", "exp", "expand", "expand_as",
    "expand_copy", "ge", "getitem", "gt", "le", "log", "lt", "matmul", "mean", "mul", "ne", "neg",
    "permute", "relu", "reshape", "setitem", "squeeze", "sub", "sum", "sum_to_size", "swapaxes",
    "swapdims", "t", "tanh", "to_device", "transpose", "unsqueeze", "view",
]  # fmt: skip

# -- issue 3's ops (softmax family, sorting, special functions, ...) ---------------------------
from lucid.ops.softmax import log_softmax, softmax  # noqa: E402

__all__ += ["log_softmax", "softmax"]  # fmt: skip
