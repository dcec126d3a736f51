"""What the lucid.distributions tests share: float64 tensors, a tolerance-explicit comparison,
and the number of draws the moment checks take."""

from __future__ import annotations

import numpy as np

import lucid

F64 = lucid.float64
N = 20_000  # draws per moment check: a mean is then good to about 1/140 of a standard deviation


def t(values: object, grad: bool = False) -> lucid.Tensor:
    """A float64 tensor (a leaf that requires grad with ``grad=True``)."""
    return lucid.tensor(values, dtype=F64, requires_grad=grad)


def close(a: object, b: object, rtol: float = 1e-10, atol: float = 1e-12) -> None:
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol)
