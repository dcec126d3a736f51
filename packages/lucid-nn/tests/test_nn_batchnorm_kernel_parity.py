"""Conv -> BatchNorm -> ReLU vs PyTorch, with BatchNorm on the NumPy kernel's channels-last path.

A convolution hands batch norm a channels-last array; two training steps and one eval step must
match torch's outputs, gradients and running statistics (float32).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lucid
import lucid.nn as nn

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity

RTOL, ATOL = 1e-4, 1e-5


def _pair(momentum: Any, affine: bool) -> tuple[Any, Any]:
    torch.manual_seed(0)
    theirs = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1),
                                 torch.nn.BatchNorm2d(8, momentum=momentum, affine=affine),
                                 torch.nn.ReLU())  # fmt: skip
    mine = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1),
                         nn.BatchNorm2d(8, momentum=momentum, affine=affine),
                         nn.ReLU())  # fmt: skip
    mine.load_state_dict({k: lucid.from_numpy(v.detach().numpy().copy())
                          for k, v in theirs.state_dict().items()})  # fmt: skip
    return mine, theirs


@pytest.mark.parametrize("momentum", [0.1, None], ids=["momentum", "cumulative"])
@pytest.mark.parametrize("affine", [True, False], ids=["affine", "plain"])
def test_conv_batchnorm_relu_trains_and_evaluates_as_torch(momentum: Any, affine: bool) -> None:
    mine, theirs = _pair(momentum, affine)
    rng = np.random.default_rng(0)
    for _ in range(2):
        x = (rng.standard_normal((6, 3, 7, 5)) * 2.0 + 1.0).astype(np.float32)
        lx, tx = lucid.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        ly, ty = mine(lx), theirs(tx)
        np.testing.assert_allclose(ly.detach().numpy(), ty.detach().numpy(), rtol=RTOL, atol=ATOL)
        g = rng.standard_normal(ly.shape).astype(np.float32)
        ly.backward(lucid.tensor(g))
        ty.backward(torch.tensor(g))
        np.testing.assert_allclose(lx.grad.numpy(), tx.grad.numpy(), rtol=RTOL, atol=ATOL)
    mine_params = dict(mine.named_parameters())
    for name, p in theirs.named_parameters():
        got = mine_params[name].grad.numpy()
        np.testing.assert_allclose(got, p.grad.numpy(), rtol=RTOL, atol=ATOL * 10, err_msg=name)
    for name, t in theirs.state_dict().items():
        got = mine.state_dict()[name].numpy()
        np.testing.assert_allclose(got, t.numpy(), rtol=RTOL, atol=ATOL, err_msg=name)
    mine.eval()
    theirs.eval()
    x = rng.standard_normal((2, 3, 7, 5)).astype(np.float32)
    with lucid.no_grad(), torch.no_grad():
        np.testing.assert_allclose(mine(lucid.tensor(x)).numpy(), theirs(torch.tensor(x)).numpy(),
                                   rtol=RTOL, atol=ATOL)  # fmt: skip
