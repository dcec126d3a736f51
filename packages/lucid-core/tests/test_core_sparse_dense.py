"""lucid.sparse: torch's COO constructors and conversions, stored dense."""

from __future__ import annotations

import numpy as np
import pytest

import lucid


def _coo(lib: object) -> object:
    idx = np.array([[0, 1, 0, 2], [1, 2, 1, 0]])
    vals = lib.tensor([1.0, 2.0, 3.0, 4.0], dtype=lib.float64, requires_grad=True)  # type: ignore[attr-defined]
    return lib.sparse_coo_tensor(lib.tensor(idx), vals, (3, 3)), vals  # type: ignore[attr-defined]


def test_duplicates_sum_and_gradients_reach_values() -> None:
    a, vals = _coo(lucid)
    np.testing.assert_allclose(
        a.detach().numpy(), [[0, 4, 0], [0, 0, 2], [4, 0, 0]], rtol=0, atol=0
    )
    assert a.to_sparse() is a and a.to_dense() is a and a.coalesce() is a and not a.is_sparse
    (lucid.spmm(a, lucid.ones(3, 2, dtype=lucid.float64)) ** 2).sum().backward()
    np.testing.assert_allclose(vals.grad.numpy(), [16.0, 8.0, 16.0, 16.0], rtol=1e-12, atol=1e-12)


def test_default_size_dense_dims_and_errors() -> None:
    t = lucid.sparse_coo_tensor([[0, 2]], lucid.tensor([[1.0, 2.0], [3.0, 4.0]]))
    assert tuple(t.shape) == (3, 2) and t.tolist() == [[1.0, 2.0], [0.0, 0.0], [3.0, 4.0]]
    with pytest.raises(RuntimeError, match="size is inconsistent with indices"):
        lucid.sparse_coo_tensor([[0, 5]], lucid.ones(2), (3,))
    with pytest.raises(RuntimeError, match="same nnz"):
        lucid.sparse_coo_tensor([[0, 1]], lucid.ones(3), (3,))
    with pytest.raises(NotImplementedError, match="stores sparse tensors dense"):
        lucid.sparse.softmax(t, 0)


@pytest.mark.parity
def test_matches_torch() -> None:
    torch = pytest.importorskip("torch")
    a, va = _coo(lucid)
    b, vb = _coo(torch)
    m = np.arange(6.0).reshape(3, 2)
    ya = lucid.sparse.mm(a, lucid.tensor(m))
    yb = torch.sparse.mm(b, torch.tensor(m))
    np.testing.assert_allclose(ya.detach().numpy(), yb.detach().numpy(), rtol=1e-12, atol=1e-12)
    ya.sum().backward()
    yb.sum().backward()
    np.testing.assert_allclose(va.grad.numpy(), vb.grad.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(lucid.sparse.sum(a, 0).detach().numpy(),
                               torch.sparse.sum(b, 0).to_dense().detach().numpy(), rtol=1e-12,
                               atol=1e-12)  # fmt: skip


@pytest.mark.parametrize("name", ["zeros", "ones", "empty", "rand", "randn"])
def test_factories_take_size_as_a_keyword(name: str) -> None:
    # torch.empty(size=(n, m)) is how the GAT example of pytorch/examples builds its weights
    fn = getattr(lucid, name)
    assert tuple(fn(size=(2, 3)).shape) == (2, 3)
    assert tuple(fn(size=[4]).shape) == (4,)
    with pytest.raises(TypeError, match="both positionally and as size="):
        fn(2, size=(3,))
    with pytest.raises(TypeError, match="unexpected keyword argument 'sizes'"):
        fn(sizes=(3,))
