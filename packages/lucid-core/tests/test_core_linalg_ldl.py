"""linalg.ldl_factor / ldl_factor_ex / ldl_solve: LAPACK's Bunch-Kaufman factorisation, checked
by rebuilding A from (LD, pivots), by solving, and against torch's LD and pivots (parity)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lucid
import lucid.linalg as LA


def _symmetric(n: int, seed: int, small_diag: bool = False) -> np.ndarray:
    a = np.random.default_rng(seed).standard_normal((n, n))
    a = a + a.T
    if small_diag:  # a tiny diagonal forces 2x2 blocks of D
        a[np.diag_indices(n)] *= 0.01
    return a


def _rebuild(ld: np.ndarray, piv: np.ndarray) -> np.ndarray:
    """A = P L D L^T P^T from LAPACK's packed lower form (sytrf's pivots, 1-based)."""
    n = ld.shape[0]
    a = np.zeros((n, n))
    # apply the blocks from the last to the first: A_k = P_k L_k A_{k+1} L_k^T P_k^T
    steps = []
    k = 0
    while k < n:
        s = 1 if piv[k] > 0 else 2
        steps.append((k, s))
        k += s
    for k, s in reversed(steps):
        block = np.zeros((n, n))
        block[k : k + s, k : k + s] = (
            np.tril(ld[k : k + s, k : k + s]) + np.tril(ld[k : k + s, k : k + s], -1).T
        )
        block += a  # the trailing part already rebuilt
        lk = np.eye(n)
        lk[k + s :, k : k + s] = ld[k + s :, k : k + s]
        a = lk @ block @ lk.T
        swap = (piv[k] if s == 1 else -piv[k]) - 1
        row = k + s - 1
        p = np.eye(n)
        p[[row, swap]] = p[[swap, row]]
        a = p @ a @ p.T
    return a


@pytest.mark.parametrize("small_diag", [False, True])
@pytest.mark.parametrize("n", [1, 2, 5, 8])
def test_ldl_factor_rebuilds_and_solves(n: int, small_diag: bool) -> None:
    a = _symmetric(n, 10 * n + small_diag, small_diag)
    ld, piv = LA.ldl_factor(lucid.tensor(a))
    assert ld.dtype is lucid.float64 and piv.dtype is lucid.int32
    assert not np.triu(ld.numpy(), 1).any()  # the upper triangle is zeroed, as torch
    np.testing.assert_allclose(_rebuild(ld.numpy(), piv.numpy()), a, rtol=1e-10, atol=1e-10)
    b = np.random.default_rng(n).standard_normal((n, 3))
    x = LA.ldl_solve(ld, piv, lucid.tensor(b))
    np.testing.assert_allclose(a @ x.numpy(), b, rtol=1e-8, atol=1e-8)


def test_ldl_batches_empty_and_info() -> None:
    a = np.stack([_symmetric(4, s, s % 2 == 1) for s in range(6)]).reshape(2, 3, 4, 4)
    ld, piv, info = LA.ldl_factor_ex(lucid.tensor(a, dtype=lucid.float32))
    assert ld.shape == (2, 3, 4, 4) and piv.shape == (2, 3, 4) and info.shape == (2, 3)
    assert ld.dtype is lucid.float32 and not info.numpy().any()
    one, p1 = LA.ldl_factor(lucid.tensor(a[1, 2], dtype=lucid.float32))
    np.testing.assert_allclose(ld[1, 2].numpy(), one.numpy(), rtol=1e-6, atol=1e-6)
    assert LA.ldl_factor(lucid.zeros(2, 0, 0)).LD.shape == (2, 0, 0)
    singular = LA.ldl_factor_ex(lucid.zeros(3, 3))
    assert int(singular.info.item()) == 1 and singular.pivots.tolist() == [1, 2, 3]
    with pytest.raises(LA.LinAlgError, match="not invertible"):
        LA.ldl_factor_ex(lucid.zeros(3, 3), check_errors=True)


def test_ldl_errors_and_no_derivative() -> None:
    with pytest.raises(RuntimeError, match="square matrices"):
        LA.ldl_factor(lucid.zeros(2, 3))
    with pytest.raises(RuntimeError, match="floating point"):
        LA.ldl_factor(lucid.zeros(3, 3, dtype=lucid.int64))
    ld, piv = LA.ldl_factor(lucid.tensor(_symmetric(3, 0)))
    with pytest.raises(RuntimeError, match="each A matrix is 3 by 3 but each b matrix is 4"):
        LA.ldl_solve(ld, piv, lucid.zeros(4, 1, dtype=lucid.float64))
    with pytest.raises(RuntimeError, match="same dtype"):
        LA.ldl_solve(ld, piv, lucid.zeros(3, 1))
    x = lucid.tensor(_symmetric(3, 1), requires_grad=True)
    with pytest.raises(RuntimeError, match="derivative for aten::linalg_ldl_factor_ex"):
        LA.ldl_factor(x).LD.sum().backward()


@pytest.mark.parity
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_ldl_parity(dtype: str) -> None:
    torch = pytest.importorskip("torch")
    for seed in range(12):
        a = _symmetric(2 + seed % 6, seed, seed % 3 == 0)
        t_ld, t_piv, t_info = torch.linalg.ldl_factor_ex(
            torch.tensor(a, dtype=getattr(torch, dtype))
        )
        l_ld, l_piv, l_info = LA.ldl_factor_ex(lucid.tensor(a, dtype=getattr(lucid, dtype)))
        assert l_piv.tolist() == t_piv.tolist() and int(l_info.item()) == int(t_info)
        np.testing.assert_allclose(l_ld.numpy(), t_ld.numpy(), rtol=1e-4, atol=1e-5)
        b: Any = np.random.default_rng(seed).standard_normal((a.shape[0], 2))
        t_x = torch.linalg.ldl_solve(t_ld, t_piv, torch.tensor(b, dtype=t_ld.dtype))
        l_x = LA.ldl_solve(l_ld, l_piv, lucid.tensor(b, dtype=l_ld.dtype))
        np.testing.assert_allclose(l_x.numpy(), t_x.numpy(), rtol=1e-3, atol=1e-4)
