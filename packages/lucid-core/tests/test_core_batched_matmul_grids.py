"""bmm, addmm, addmv, baddbmm, addbmm, cross, cdist, triangle indices, meshgrid, histc, bincount."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

import lucid
from lucid.autograd import gradcheck, gradgradcheck


def _r(*shape: int) -> lucid.Tensor:
    return lucid.randn(*shape, dtype=lucid.float64, requires_grad=True)


def test_products_match_numpy() -> None:
    lucid.manual_seed(0)
    a, b, c = _r(2, 3, 4), _r(2, 4, 5), _r(3, 5)
    np.testing.assert_allclose(
        lucid.bmm(a, b).detach().numpy(),
        a.detach().numpy() @ b.detach().numpy(),
        rtol=1e-10,
        atol=1e-12,
    )
    m1, m2 = _r(3, 4), _r(4, 5)
    out = lucid.addmm(c, m1, m2, beta=0.5, alpha=2.0).detach().numpy()
    ref = 0.5 * c.detach().numpy() + 2.0 * m1.detach().numpy() @ m2.detach().numpy()
    np.testing.assert_allclose(out, ref, rtol=1e-10, atol=1e-12)
    nan_input = lucid.full((3, 5), float("nan"), dtype=lucid.float64)
    assert np.isfinite(lucid.addmm(nan_input, m1, m2, beta=0).detach().numpy()).all()
    v = _r(4)
    np.testing.assert_allclose(lucid.addmv(_r(3).detach() * 0, m1, v).detach().numpy(),
                               m1.detach().numpy() @ v.detach().numpy(),
                               rtol=1e-10, atol=1e-12)  # fmt: skip
    base = _r(2, 3, 5)
    ref = base.detach().numpy() + a.detach().numpy() @ b.detach().numpy()
    np.testing.assert_allclose(
        lucid.baddbmm(base, a, b).detach().numpy(), ref, rtol=1e-10, atol=1e-12
    )
    ref = c.detach().numpy() + (a.detach().numpy() @ b.detach().numpy()).sum(0)
    np.testing.assert_allclose(lucid.addbmm(c, a, b).detach().numpy(), ref, rtol=1e-10, atol=1e-12)


def test_bmm_errors() -> None:
    with pytest.raises(RuntimeError, match="3D"):
        lucid.bmm(lucid.ones(2, 3), lucid.ones(3, 2))
    with pytest.raises(RuntimeError, match="batch2"):
        lucid.bmm(lucid.ones(2, 3, 4), lucid.ones(2, 5, 2))


@pytest.mark.parametrize(
    ("fn", "shapes"),
    [
        (lambda a, b: lucid.bmm(a, b), [(2, 3, 4), (2, 4, 2)]),
        (lambda c, a, b: lucid.addmm(c, a, b, beta=0.3, alpha=-1.5), [(3, 2), (3, 4), (4, 2)]),
        (lambda c, a, b: lucid.baddbmm(c, a, b, beta=2.0), [(1, 3, 2), (2, 3, 4), (2, 4, 2)]),
        (lambda c, a, b: lucid.addbmm(c, a, b), [(3, 2), (2, 3, 4), (2, 4, 2)]),
        (lambda c, a, b: lucid.addmv(c, a, b), [(3,), (3, 4), (4,)]),
        (lambda a, b: lucid.cross(a, b, dim=-1), [(4, 3), (4, 3)]),
        (lambda a, b: lucid.cross(a, b), [(3, 2), (1, 2)]),
        (lambda a, b: lucid.meshgrid(a, b, indexing="xy"), [(2,), (3,)]),
        (lambda a, b: lucid.cartesian_prod(a, b) * 1.5, [(2,), (3,)]),
    ],
)
def test_product_gradients(fn: object, shapes: list[tuple[int, ...]]) -> None:
    lucid.manual_seed(1)
    xs = tuple(_r(*s) for s in shapes)
    assert gradcheck(fn, xs)  # type: ignore[arg-type]
    assert gradgradcheck(fn, xs)  # type: ignore[arg-type]


def test_cross_values() -> None:
    i, j = lucid.tensor([1.0, 0, 0]), lucid.tensor([0.0, 1, 0])
    assert lucid.cross(i, j, dim=0).tolist() == [0.0, 0.0, 1.0]
    assert i.cross(j, dim=0).tolist() == [0.0, 0.0, 1.0]
    with pytest.raises(RuntimeError, match="length 3"):
        lucid.cross(lucid.ones(2, 4), lucid.ones(2, 4), dim=1)


@pytest.mark.parametrize("p", [0.0, 0.5, 1.0, 2.0, 3.0, float("inf")])
def test_cdist_values(p: float) -> None:
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 4, 3)), rng.standard_normal((2, 5, 3))
    diff = np.abs(a[:, :, None, :] - b[:, None, :, :])
    if p == 0:
        ref = (diff != 0).sum(-1).astype(float)
    elif p == float("inf"):
        ref = diff.max(-1)
    else:
        ref = (diff**p).sum(-1) ** (1 / p)
    np.testing.assert_allclose(lucid.cdist(lucid.tensor(a), lucid.tensor(b), p).numpy(), ref,
                               rtol=1e-12, atol=1e-12)  # fmt: skip


def test_cdist_mm_path_and_zero_distance_gradient() -> None:
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((30, 3)), rng.standard_normal((27, 3))
    ref = np.sqrt(((a[:, None] - b[None]) ** 2).sum(-1))
    np.testing.assert_allclose(lucid.cdist(lucid.tensor(a), lucid.tensor(b)).numpy(), ref,
                               rtol=1e-10, atol=1e-12)  # fmt: skip
    x = lucid.tensor([[1.0, 2.0], [0.0, 0.0]], dtype=lucid.float64, requires_grad=True)
    lucid.cdist(x, x.detach()).sum().backward()
    assert np.isfinite(x.grad.numpy()).all()
    with pytest.raises(RuntimeError, match="same number of columns"):
        lucid.cdist(lucid.ones(2, 3), lucid.ones(2, 4))


@pytest.mark.parametrize("p", [1.0, 2.0, 3.0, float("inf")])
@pytest.mark.parametrize("mode", ["use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist"])
def test_cdist_gradients(p: float, mode: str) -> None:
    lucid.manual_seed(2)
    a, b = _r(2, 3, 2), _r(1, 4, 2)
    assert gradcheck(lambda u, v: lucid.cdist(u, v, p, mode), (a, b))
    assert gradgradcheck(lambda u, v: lucid.cdist(u, v, p, mode), (a, b))


def test_triangle_indices() -> None:
    for r, c, k in itertools.product([0, 1, 3, 4], [1, 3, 5], [-2, 0, 1]):
        np.testing.assert_array_equal(
            lucid.triu_indices(r, c, k).numpy(), np.stack(np.triu_indices(r, k, c))
        )
        np.testing.assert_array_equal(
            lucid.tril_indices(r, c, k).numpy(), np.stack(np.tril_indices(r, k, c))
        )
    assert lucid.triu_indices(3, 3).dtype is lucid.int64
    assert lucid.tril_indices(3, 3, dtype=lucid.int32).dtype is lucid.int32


def test_meshgrid_and_cartesian_prod() -> None:
    x, y = lucid.tensor([1, 2, 3]), lucid.tensor([4, 5])
    gx, gy = lucid.meshgrid(x, y, indexing="ij")
    assert gx.tolist() == [[1, 1], [2, 2], [3, 3]] and gy.tolist() == [[4, 5], [4, 5], [4, 5]]
    gx, gy = lucid.meshgrid([x, y], indexing="xy")
    assert gx.tolist() == [[1, 2, 3], [1, 2, 3]] and gy.tolist() == [[4, 4, 4], [5, 5, 5]]
    assert lucid.cartesian_prod(x, y).tolist() == [[1, 4], [1, 5], [2, 4], [2, 5], [3, 4], [3, 5]]
    w = lucid.tensor([1.0, 2.0], dtype=lucid.float64, requires_grad=True)
    a, b = lucid.meshgrid(w, w)
    (a * 2 + b).sum().backward()
    assert w.grad.tolist() == [6.0, 6.0]
    with pytest.raises(RuntimeError, match="0D or 1D"):
        lucid.meshgrid(lucid.ones(2, 2))


def test_histc() -> None:
    x = lucid.tensor([1.0, 2.0, 1.0, 7.0, -1.0])
    assert lucid.histc(x, bins=4, min=0, max=3).tolist() == [0.0, 2.0, 1.0, 0.0]
    assert lucid.histc(x, bins=2).tolist() == [4.0, 1.0]  # range from the data: [-1, 7]
    assert lucid.histc(lucid.tensor([3.0]), bins=2).tolist() == [0.0, 1.0]
    assert lucid.histc(x.double(), bins=3).dtype is lucid.float64
    with pytest.raises(RuntimeError, match="bins must be > 0"):
        lucid.histc(x, bins=0)


def test_bincount() -> None:
    x = lucid.tensor([0, 1, 1, 3])
    out = lucid.bincount(x)
    assert out.tolist() == [1, 2, 0, 1] and out.dtype is lucid.int64
    assert lucid.bincount(x, minlength=6).tolist() == [1, 2, 0, 1, 0, 0]
    w = lucid.tensor([0.5, 1.0, 2.0, 4.0])
    assert lucid.bincount(x, weights=w).tolist() == [0.5, 3.0, 0.0, 4.0]
    assert lucid.bincount(lucid.tensor([], dtype=lucid.int64)).shape == (0,)
    with pytest.raises(RuntimeError, match="non-negative"):
        lucid.bincount(lucid.tensor([-1, 2]))
    with pytest.raises(RuntimeError, match="1-d"):
        lucid.bincount(lucid.tensor([1.0]))


@pytest.mark.parametrize("p", [0.5, 1.0, 2.0, 3.0, float("inf")])
def test_cdist_gradient_with_equal_coordinates_is_finite(p: float) -> None:
    a = lucid.tensor([[1.0, 2.0], [0.0, 5.0]], dtype=lucid.float64, requires_grad=True)
    b = lucid.tensor([[1.0, 3.0]], dtype=lucid.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lucid.cdist(a, b, p).sum().backward()
    assert a.grad.tolist()[0] == [0.0, -1.0]  # the equal coordinate gets 0, as PyTorch
