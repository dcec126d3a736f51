"""Sizes, dims and counts given as NumPy integers or 0-d integer tensors, against torch.

torch takes any integer with ``__index__`` where it takes an int: ``nn.Linear(np.prod(shape),
64)`` (cleanrl's PPO: ``np.array(env.observation_space.shape).prod()``), ``x.sum(np.int64(1))``,
``nn.LayerNorm(np.int64(4))``, ``F.interpolate(x, size=torch.tensor(8))``. Each call below runs in
both frameworks with the same integer-like arguments; where torch gives a result, lucid must
give one of the same shape (where torch refuses one, lucid may take it: its ``split``,
``norm(dim=)`` and adaptive pools take a NumPy integer as an int, docs/differences.md).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lucid

pytestmark = pytest.mark.parity
torch = pytest.importorskip("torch")


def _cases(fw: Any, i: Callable[[int], Any]) -> dict[str, Callable[[], Any]]:
    x = fw.ones(2, 3, 4)
    nn, F = fw.nn, fw.nn.functional
    long = fw.int64
    return {
        "zeros": lambda: fw.zeros(i(3)),
        "ones": lambda: fw.ones(i(2), i(3)),
        "empty": lambda: fw.empty(i(3)),
        "full": lambda: fw.full((i(2), i(3)), 1.0),
        "randn": lambda: fw.randn(i(3)),
        "randint": lambda: fw.randint(0, 5, (i(3),)),
        "arange": lambda: fw.arange(i(5)),
        "eye": lambda: fw.eye(i(3)),
        "linspace": lambda: fw.linspace(0, 1, i(5)),
        "randperm": lambda: fw.randperm(i(5)),
        "view": lambda: x.view(i(6), i(4)),
        "reshape": lambda: x.reshape(i(6), -1),
        "expand": lambda: fw.ones(1, 3).expand(i(2), 3),
        "repeat": lambda: x.repeat(i(2), 1, 1),
        "new_zeros": lambda: x.new_zeros(i(3)),
        "narrow": lambda: x.narrow(0, i(0), i(1)),
        "select": lambda: x.select(0, i(1)),
        "getitem": lambda: x[i(1)],
        "sum": lambda: x.sum(i(1)),
        "mean": lambda: x.mean(i(2)),
        "flatten": lambda: x.flatten(i(1)),
        "unsqueeze": lambda: x.unsqueeze(i(0)),
        "squeeze": lambda: fw.ones(1, 3).squeeze(i(0)),
        "transpose": lambda: x.transpose(i(0), i(1)),
        "permute": lambda: x.permute(i(2), i(0), i(1)),
        "movedim": lambda: x.movedim(i(0), i(2)),
        "chunk": lambda: x.chunk(i(2), 1)[0],
        "tensor_split": lambda: fw.tensor_split(x, i(2))[0],
        "unflatten": lambda: x.unflatten(i(2), (i(2), i(2))),
        "topk": lambda: fw.topk(x, i(2))[0],
        "kthvalue": lambda: fw.kthvalue(x, i(1))[0],
        "cat": lambda: fw.cat([x, x], i(1)),
        "max": lambda: x.max(i(1))[0],
        "argmax": lambda: x.argmax(i(1)),
        "cumsum": lambda: x.cumsum(i(1)),
        "softmax": lambda: F.softmax(x, i(1)),
        "roll": lambda: x.roll(i(1), i(0)),
        "tril": lambda: fw.tril(fw.ones(3, 3), i(1)),
        "diag": lambda: fw.diag(fw.ones(3), i(1)),
        "gather": lambda: x.gather(i(0), fw.zeros(1, 3, 4, dtype=long)),
        "index_select": lambda: x.index_select(i(0), fw.zeros(1, dtype=long)),
        "multinomial": lambda: fw.multinomial(fw.ones(4), i(2)),
        "one_hot": lambda: F.one_hot(fw.zeros(2, dtype=long), i(4)),
        "pad": lambda: F.pad(x, (i(1), i(1))),
        "interpolate": lambda: F.interpolate(fw.ones(1, 1, 4), size=i(8)),
        "Linear": lambda: nn.Linear(i(4), i(5))(x),
        "Conv2d": lambda: nn.Conv2d(i(2), i(3), i(1))(fw.ones(1, 2, 4, 4)),
        "Embedding": lambda: nn.Embedding(i(10), i(3))(fw.zeros(2, dtype=long)),
        "LSTM": lambda: nn.LSTM(i(4), i(5))(x)[0],
        "GRU": lambda: nn.GRU(i(4), i(5), num_layers=i(2))(x)[0],
        "LayerNorm": lambda: nn.LayerNorm(i(4))(x),
        "BatchNorm1d": lambda: nn.BatchNorm1d(i(3))(x),
        "MultiheadAttention": lambda: nn.MultiheadAttention(i(4), i(2))(x, x, x)[0],
        "Flatten": lambda: nn.Flatten(i(1))(x),
        "AvgPool2d": lambda: nn.AvgPool2d(i(2))(fw.ones(1, 1, 4, 4)),
        "ZeroPad2d": lambda: nn.ZeroPad2d(i(1))(fw.ones(1, 1, 4, 4)),
        "ReflectionPad1d": lambda: nn.ReflectionPad1d(i(2))(x),
        "LPPool1d": lambda: nn.LPPool1d(2, i(2))(x),
    }


_KINDS = {
    "int64": lambda fw: np.int64,
    "int32": lambda fw: np.int32,
    "0-d tensor": lambda fw: fw.tensor,
}
_NAMES = list(_cases(lucid, int))


@pytest.mark.parametrize("kind", list(_KINDS))
@pytest.mark.parametrize("name", _NAMES)
def test_integer_like_arguments_as_torch_takes_them(kind: str, name: str) -> None:
    lucid.manual_seed(0)
    torch.manual_seed(0)
    try:
        want = tuple(_cases(torch, _KINDS[kind](torch))[name]().shape)
    except (TypeError, RuntimeError) as e:
        pytest.skip(f"torch refuses it too: {e}")
    got = _cases(lucid, _KINDS[kind](lucid))[name]()
    assert tuple(got.shape) == want


@pytest.mark.parametrize("value", [np.int64(4), np.int32(4), np.array(4)])
def test_a_linear_sized_by_a_numpy_product(value: Any) -> None:
    """cleanrl's ``layer_init(nn.Linear(np.array(obs_shape).prod(), 64))``: the same parameter
    shapes and ``in_features`` as torch's (which keeps the value as given)."""
    layer = lucid.nn.Linear(value, 64)
    ref = torch.nn.Linear(value, 64)
    assert layer.weight.shape == tuple(ref.weight.shape)
    assert layer.in_features == ref.in_features == 4
    assert type(layer.in_features) is type(ref.in_features)
