"""nn.init's remaining torch names: ``sparse_`` and the deprecated non-underscore aliases."""

from __future__ import annotations

import math

import numpy as np
import pytest

import lucid
from lucid.nn import init


def test_sparse_zeros_per_column_and_std() -> None:
    lucid.manual_seed(0)
    w = lucid.empty(400, 50)
    assert init.sparse_(w, sparsity=0.3, std=0.05) is w
    a = w.numpy()
    zeros = (a == 0).sum(axis=0)
    np.testing.assert_array_equal(zeros, math.ceil(0.3 * 400))
    nz = a[a != 0]
    assert abs(nz.std() - 0.05) < 0.003 and abs(nz.mean()) < 0.003


def test_sparse_rejects_non_2d() -> None:
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions"):
        init.sparse_(lucid.empty(3, 4, 5), 0.1)


@pytest.mark.parametrize(
    ("old", "args"),
    [
        ("uniform", ()),
        ("normal", ()),
        ("constant", (0.5,)),
        ("eye", ()),
        ("xavier_uniform", ()),
        ("xavier_normal", ()),
        ("kaiming_uniform", ()),
        ("kaiming_normal", ()),
        ("orthogonal", ()),
        ("sparse", (0.5,)),
    ],
)
def test_deprecated_aliases_warn_and_fill(old: str, args: tuple[float, ...]) -> None:
    fn = getattr(init, old)
    assert fn.__name__ == old
    w = lucid.zeros(6, 4)
    with pytest.warns(FutureWarning, match=rf"`nn.init.{old}` is now deprecated in favor of"):
        out = fn(w, *args)
    assert out is w
    if old == "eye":
        np.testing.assert_array_equal(w.numpy(), np.eye(6, 4))
    elif old == "constant":
        np.testing.assert_array_equal(w.numpy(), 0.5)
    else:
        assert np.count_nonzero(w.numpy()) > 0


def test_deprecated_dirac() -> None:
    w = lucid.zeros(2, 2, 3)
    with pytest.warns(FutureWarning, match="nn.init.dirac"):
        init.dirac(w)
    expected = np.zeros((2, 2, 3))
    expected[0, 0, 1] = expected[1, 1, 1] = 1
    np.testing.assert_array_equal(w.numpy(), expected)


@pytest.mark.parity
def test_sparse_matches_torch_statistics() -> None:
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    t = torch.empty(300, 40)
    torch.nn.init.sparse_(t, sparsity=0.2, std=0.1)
    lucid.manual_seed(0)
    w = lucid.empty(300, 40)
    init.sparse_(w, sparsity=0.2, std=0.1)
    tz, lz = (t.numpy() == 0).sum(axis=0), (w.numpy() == 0).sum(axis=0)
    np.testing.assert_array_equal(lz, tz)
    assert abs(w.numpy()[w.numpy() != 0].std() - t.numpy()[t.numpy() != 0].std()) < 0.006
