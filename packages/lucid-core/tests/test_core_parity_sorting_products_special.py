"""PyTorch parity for sorting, index grids, products, softmax and special functions.

Forward values and gradients are compared on the same inputs.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lucid

pytestmark = pytest.mark.parity
torch = pytest.importorskip("torch")


def _arrays(shapes: list[tuple[int, ...]], seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s) for s in shapes]


def _outputs(res: Any) -> list[Any]:
    if isinstance(res, (tuple, list)):
        return [r for item in res for r in _outputs(item)]
    return [res]


def check(
    lfn: Callable[..., Any],
    tfn: Callable[..., Any],
    arrays: list[np.ndarray],
    grad: bool = True,
    rtol: float = 1e-7,
    atol: float = 1e-9,
) -> None:
    """Same forward outputs; same gradients of a random weighting of the float outputs."""
    lx = [lucid.tensor(a, requires_grad=grad) for a in arrays]
    tx = [torch.tensor(a, requires_grad=grad) for a in arrays]
    lo, to = _outputs(lfn(*lx)), _outputs(tfn(*tx))
    assert len(lo) == len(to)
    for a, b in zip(lo, to):
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=rtol, atol=atol)
    if not grad:
        return
    rng = np.random.default_rng(1)
    lsum: Any = 0
    tsum: Any = 0
    for a, b in zip(lo, to):
        if a.dtype.is_floating_point and b.requires_grad:
            w = rng.standard_normal(tuple(a.shape))
            lsum = lsum + (a * lucid.tensor(w)).sum()
            tsum = tsum + (b * torch.tensor(w)).sum()
    if isinstance(lsum, int):  # no differentiable outputs (indices only)
        return
    lsum.backward()
    tsum.backward()
    for a, b in zip(lx, tx):
        ga = np.zeros(a.shape) if a.grad is None else a.grad.numpy()
        gb = np.zeros(tuple(b.shape)) if b.grad is None else b.grad.numpy()
        np.testing.assert_allclose(ga, gb, rtol=rtol, atol=atol)


DISTINCT = [np.random.default_rng(5).permutation(24).reshape(4, 6) * 0.5 - 3.0]


@pytest.mark.parametrize(
    ("lfn", "tfn"),
    [
        (lambda x: lucid.sort(x, 1), lambda x: torch.sort(x, 1)),
        (lambda x: lucid.sort(x, 0, descending=True), lambda x: torch.sort(x, 0, descending=True)),
        (lambda x: x.argsort(1), lambda x: x.argsort(1)),
        (lambda x: x.topk(3), lambda x: x.topk(3)),
        (lambda x: x.topk(2, 0, largest=False), lambda x: x.topk(2, 0, largest=False)),
        (lambda x: x.kthvalue(4, 1), lambda x: x.kthvalue(4, 1)),
        (lambda x: x.kthvalue(2, 0, keepdim=True), lambda x: x.kthvalue(2, 0, keepdim=True)),
        (lambda x: x.median(1), lambda x: x.median(1)),
        (lambda x: x.median(0, keepdim=True), lambda x: x.median(0, keepdim=True)),
        (lambda x: x.median(), lambda x: x.median()),
        (lambda x: lucid.nanmedian(x, 1), lambda x: torch.nanmedian(x, 1)),
    ],
)
def test_sorting(lfn: Any, tfn: Any) -> None:
    check(lfn, tfn, DISTINCT)


def test_sort_stable_ties_and_nan() -> None:
    a = [np.array([2.0, math.nan, 1.0, 2.0, 1.0, math.nan])]
    for desc in (False, True):
        check(
            lambda x: lucid.sort(x, stable=True, descending=desc),
            lambda x: torch.sort(x, stable=True, descending=desc),
            a,
            grad=False,
        )
    check(lambda x: x.median(0), lambda x: x.median(0), [np.array([3.0, math.nan, 1.0])], False)
    b = [np.array([[1.0, math.nan, 3.0, 2.0], [math.nan, 5.0, math.nan, math.nan]])]
    check(lambda x: lucid.nanmedian(x, 1), lambda x: torch.nanmedian(x, 1), b, grad=False)


def _int_check(lres: Any, tres: Any) -> None:
    for a, b in zip(_outputs(lres), _outputs(tres)):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
        assert str(a.dtype).split(".")[1] == str(b.dtype).split(".")[1]


def test_unique_nonzero_searchsorted_bucketize_bincount_histc() -> None:
    ints = np.array([[3, 1, 2], [1, 3, 3]])
    li, ti = lucid.tensor(ints), torch.tensor(ints)
    _int_check(
        lucid.unique(li, return_inverse=True, return_counts=True),
        torch.unique(ti, return_inverse=True, return_counts=True),
    )
    _int_check(
        lucid.unique(li, dim=1, return_inverse=True), torch.unique(ti, dim=1, return_inverse=True)
    )
    _int_check(lucid.nonzero(li - 1), torch.nonzero(ti - 1))
    _int_check(lucid.nonzero(li - 1, as_tuple=True), torch.nonzero(ti - 1, as_tuple=True))
    seq = np.array([[1.0, 3.0, 5.0, 7.0], [0.0, 2.0, 2.0, 9.0]])
    vals = np.array([[3.0, 8.0], [2.0, -1.0]])
    for right in (False, True):
        _int_check(
            lucid.searchsorted(lucid.tensor(seq), lucid.tensor(vals), right=right),
            torch.searchsorted(torch.tensor(seq), torch.tensor(vals), right=right),
        )
        _int_check(
            lucid.bucketize(lucid.tensor(vals), lucid.tensor(seq[0]), right=right),
            torch.bucketize(torch.tensor(vals), torch.tensor(seq[0]), right=right),
        )
    counts = np.array([0, 4, 1, 1, 7])
    _int_check(
        lucid.bincount(lucid.tensor(counts), minlength=9),
        torch.bincount(torch.tensor(counts), minlength=9),
    )
    w = np.linspace(0, 1, 5)
    _int_check(
        lucid.bincount(lucid.tensor(counts), lucid.tensor(w)),
        torch.bincount(torch.tensor(counts), torch.tensor(w)),
    )
    data = np.random.default_rng(0).standard_normal(200)
    for lo, hi in ((0.0, 0.0), (-1.0, 1.5)):
        _int_check(
            lucid.histc(lucid.tensor(data), bins=7, min=lo, max=hi),
            torch.histc(torch.tensor(data), bins=7, min=lo, max=hi),
        )


def test_index_grids() -> None:
    for r, c, k in [(3, 3, 0), (4, 2, -1), (2, 5, 2), (0, 3, 0)]:
        _int_check(lucid.triu_indices(r, c, k), torch.triu_indices(r, c, k))
        _int_check(lucid.tril_indices(r, c, k), torch.tril_indices(r, c, k))
    for indexing in ("ij", "xy"):
        check(
            lambda a, b, c: lucid.meshgrid(a, b, c, indexing=indexing),
            lambda a, b, c: torch.meshgrid(a, b, c, indexing=indexing),
            _arrays([(2,), (3,), (4,)]),
        )
    check(
        lambda a, b: lucid.cartesian_prod(a, b),
        lambda a, b: torch.cartesian_prod(a, b),
        _arrays([(2,), (3,)]),
    )


@pytest.mark.parametrize(
    ("lfn", "tfn", "shapes"),
    [
        (lucid.bmm, torch.bmm, [(2, 3, 4), (2, 4, 5)]),
        (
            lambda c, a, b: lucid.addmm(c, a, b, beta=0.5, alpha=2.0),
            lambda c, a, b: torch.addmm(c, a, b, beta=0.5, alpha=2.0),
            [(3, 5), (3, 4), (4, 5)],
        ),
        (
            lambda c, a, b: lucid.addmm(c, a, b),
            lambda c, a, b: torch.addmm(c, a, b),
            [(5,), (3, 4), (4, 5)],
        ),
        (
            lambda c, a, b: lucid.addmv(c, a, b, beta=0.0),
            lambda c, a, b: torch.addmv(c, a, b, beta=0.0),
            [(3,), (3, 4), (4,)],
        ),
        (
            lambda c, a, b: lucid.baddbmm(c, a, b, alpha=0.3),
            lambda c, a, b: torch.baddbmm(c, a, b, alpha=0.3),
            [(1, 3, 5), (2, 3, 4), (2, 4, 5)],
        ),
        (lucid.addbmm, torch.addbmm, [(3, 5), (2, 3, 4), (2, 4, 5)]),
        (
            lambda a, b: lucid.cross(a, b, dim=1),
            lambda a, b: torch.cross(a, b, dim=1),
            [(4, 3), (4, 3)],
        ),
        (
            lambda a, b: lucid.linalg.cross(a, b),
            lambda a, b: torch.linalg.cross(a, b),
            [(2, 1, 3), (1, 4, 3)],
        ),
    ],
)
def test_products(lfn: Any, tfn: Any, shapes: list[tuple[int, ...]]) -> None:
    check(lfn, tfn, _arrays(shapes))


@pytest.mark.parametrize("p", [0.0, 0.7, 1.0, 2.0, 3.0, math.inf])
@pytest.mark.parametrize("rows", [4, 30])
def test_cdist(p: float, rows: int) -> None:
    check(
        lambda a, b: lucid.cdist(a, b, p),
        lambda a, b: torch.cdist(a, b, p),
        _arrays([(2, rows, 3), (2, 5, 3)]),
        grad=p != 0.0,
        rtol=1e-6,
    )


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax_family(dim: int) -> None:
    arrays = _arrays([(3, 4, 5)])
    check(lambda x: lucid.softmax(x, dim), lambda x: torch.softmax(x, dim), arrays)
    check(lambda x: lucid.log_softmax(x, dim), lambda x: torch.log_softmax(x, dim), arrays)
    huge = [np.array([[1e4, 1e4 + 1.0, -1e4], [-1e4, -1e4, 0.0]])]
    check(lambda x: lucid.softmax(x, -1), lambda x: torch.softmax(x, -1), huge)
    check(lambda x: lucid.log_softmax(x, -1), lambda x: torch.log_softmax(x, -1), huge)


def test_softmax_float32_matches() -> None:
    x = np.random.default_rng(0).standard_normal((8, 10)).astype(np.float32) * 30
    np.testing.assert_allclose(
        lucid.log_softmax(lucid.tensor(x), 1).numpy(),
        torch.log_softmax(torch.tensor(x), 1).numpy(),
        rtol=1e-5,
        atol=1e-5,
    )


def test_special() -> None:
    x = [np.linspace(-5, 5, 41)]
    check(lucid.erf, torch.erf, x, rtol=1e-14, atol=1e-15)
    check(lucid.erfc, torch.erfc, x, rtol=1e-13, atol=1e-15)
    check(lucid.erfinv, torch.erfinv, [np.linspace(-0.999, 0.999, 41)], rtol=1e-12, atol=1e-14)
    check(lucid.special.ndtr, torch.special.ndtr, x, rtol=1e-13, atol=1e-15)
    check(lucid.special.ndtri, torch.special.ndtri, [np.linspace(0.01, 0.99, 21)], rtol=1e-11)
    for approximate in ("none", "tanh"):
        check(
            lambda t: lucid.special.gelu(t, approximate=approximate),
            lambda t: torch.nn.functional.gelu(t, approximate=approximate),
            x,
            rtol=1e-13,
            atol=1e-14,
        )
    edge = [np.array([-1.0, 1.0, 0.0, 2.0, math.nan])]
    check(lucid.erfinv, torch.erfinv, edge, grad=False)
