"""PyTorch parity of default initialisation: the same layer shapes give the same weight
statistics (mean, std, range) over large samples, and nn.init matches torch.nn.init."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lucid
import lucid.nn as nn
from lucid.nn import init

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity


def _compare(ours: np.ndarray, theirs: np.ndarray, what: str) -> None:
    """Same distribution: two-sample Kolmogorov-Smirnov at alpha = 1e-6, plus mean and std."""
    a = np.sort(ours.astype(np.float64).ravel())
    b = np.sort(theirs.astype(np.float64).ravel())
    if b[0] == b[-1]:  # a constant init (ones, zeros, 0.25)
        np.testing.assert_array_equal(a, b[0], err_msg=what)
        return
    grid = np.concatenate([a, b])
    d = np.max(np.abs(np.searchsorted(a, grid, "right") / a.size
                      - np.searchsorted(b, grid, "right") / b.size))  # fmt: skip
    limit = 2.76 * np.sqrt((a.size + b.size) / (a.size * b.size))
    assert d < limit, f"{what}: KS distance {d:.4f} >= {limit:.4f}"
    sd = b.std()
    assert abs(a.mean() - b.mean()) < 6 * sd * np.sqrt(1 / a.size + 1 / b.size), what
    assert abs(a.std() - sd) < 6 * sd * np.sqrt(1 / a.size + 1 / b.size) + 1e-12, what


def _samples(make: Callable[[], Any], key: str, minimum: int = 20_000) -> np.ndarray:
    """Values of ``key`` from fresh layers until at least ``minimum`` (at most 40 layers)."""
    out = []
    total = 0
    for _ in range(40):
        v = make().state_dict()[key]
        out.append(v.detach().numpy().copy() if hasattr(v, "detach") else v.numpy().copy())
        total += out[-1].size
        if total >= minimum:
            break
    return np.concatenate([o.ravel() for o in out])


TN = torch.nn

LAYERS: dict[str, tuple[str, tuple[Any, ...]]] = {
    "linear": ("Linear", (300, 200)),
    "linear_small_fan": ("Linear", (3, 5000)),
    "bilinear": ("Bilinear", (20, 30, 40)),
    "embedding": ("Embedding", (500, 64, 0)),
    "prelu": ("PReLU", (8,)),
    "batchnorm": ("BatchNorm2d", (16,)),
    "layernorm": ("LayerNorm", (32,)),
    "groupnorm": ("GroupNorm", (4, 16)),
}


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_default_init_statistics_match_torch(name: str) -> None:
    cls, args = LAYERS[name]
    ostate = getattr(nn, cls)(*args).state_dict()
    tstate = getattr(TN, cls)(*args).state_dict()
    assert list(ostate) == list(tstate)
    for key, value in ostate.items():
        t = tstate[key].numpy()
        assert value.shape == tuple(t.shape), key
        assert str(value.dtype).split(".")[-1] == str(t.dtype), key
        if t.dtype.kind != "f":
            np.testing.assert_array_equal(value.numpy(), t)
            continue
        ours = _samples(lambda: getattr(nn, cls)(*args), key)
        theirs = _samples(lambda: getattr(TN, cls)(*args), key)
        _compare(ours, theirs, f"{name}.{key}")


INITS: list[tuple[str, dict[str, Any], tuple[int, ...]]] = [
    ("uniform_", {"a": -0.5, "b": 2.0}, (300, 200)),
    ("normal_", {"mean": 1.0, "std": 0.3}, (300, 200)),
    ("xavier_uniform_", {"gain": 1.5}, (300, 200)),
    ("xavier_normal_", {}, (64, 32, 3, 3)),
    ("kaiming_uniform_", {"a": 0.1, "mode": "fan_out", "nonlinearity": "leaky_relu"}, (300, 200)),
    ("kaiming_normal_", {"nonlinearity": "relu"}, (64, 32, 3, 3)),
    ("trunc_normal_", {"mean": 0.1, "std": 0.5, "a": -0.4, "b": 0.9}, (300, 200)),
    ("orthogonal_", {"gain": 2.0}, (60, 90)),
]  # fmt: skip


@pytest.mark.parametrize(("fn", "kwargs", "shape"), INITS, ids=[i[0] for i in INITS])
def test_init_functions_match_torch_statistics(
    fn: str, kwargs: dict[str, Any], shape: tuple[int, ...]
) -> None:
    ours = getattr(init, fn)(lucid.empty(*shape), **kwargs).numpy()
    theirs = getattr(torch.nn.init, fn)(torch.empty(*shape), **kwargs).numpy()
    _compare(ours, theirs, fn)


def test_gains_match_torch() -> None:
    for nl, param in [("relu", None), ("tanh", None), ("leaky_relu", 0.3), ("selu", None),
                      ("sigmoid", None), ("conv2d", None), ("leaky_relu", None)]:  # fmt: skip
        assert init.calculate_gain(nl, param) == pytest.approx(
            torch.nn.init.calculate_gain(nl, param), rel=1e-6, abs=1e-12
        )
