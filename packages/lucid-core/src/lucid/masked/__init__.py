"""``lucid.masked`` (``torch.masked``): reductions and normalizations that skip masked-out
elements, on ordinary tensors with a boolean ``mask=`` (torch's dense-layout semantics; its
``MaskedTensor`` class and sparse masks are not provided).

>>> import lucid
>>> x = lucid.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
>>> lucid.masked.sum(x, 1, mask=lucid.tensor([True, False, True]))
tensor([ 4., 10.])
"""

from __future__ import annotations

from lucid.masked._ops import (
    amax,
    amin,
    argmax,
    argmin,
    cumprod,
    cumsum,
    log_softmax,
    logaddexp,
    logsumexp,
    mean,
    median,
    norm,
    normalize,
    prod,
    softmax,
    softmin,
    std,
    sum,  # noqa: A004
    var,
)

__all__ = [
    "amax",
    "amin",
    "argmax",
    "argmin",
    "cumprod",
    "cumsum",
    "log_softmax",
    "logaddexp",
    "logsumexp",
    "mean",
    "median",
    "norm",
    "normalize",
    "prod",
    "softmax",
    "softmin",
    "std",
    "sum",
    "var",
]
