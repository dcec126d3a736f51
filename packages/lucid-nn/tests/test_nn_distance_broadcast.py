"""cosine_similarity broadcasts its inputs before the norms, as torch does: a size-1 ``dim`` of
one input is repeated first (normalising it alone gave values past 1)."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.nn.functional as F

SHAPES = [((4, 1), (4, 5), 1), ((1, 6), (3, 6), 1), ((2, 3, 1), (2, 1, 4), 1), ((5, 3), (3,), -1)]


def _reference(a: np.ndarray, b: np.ndarray, dim: int, eps: float = 1e-8) -> np.ndarray:
    a, b = np.broadcast_arrays(a, b)
    n1 = np.maximum(np.sqrt((a * a).sum(dim, keepdims=True)), eps)
    n2 = np.maximum(np.sqrt((b * b).sum(dim, keepdims=True)), eps)
    return ((a / n1) * (b / n2)).sum(dim)


@pytest.mark.parametrize("s1, s2, dim", SHAPES)
def test_cosine_similarity_broadcasts_before_the_norms(s1, s2, dim) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(s1), rng.standard_normal(s2)
    out = F.cosine_similarity(lucid.tensor(a), lucid.tensor(b), dim=dim).numpy()
    np.testing.assert_allclose(out, _reference(a, b, dim), rtol=1e-10, atol=1e-12)
    assert np.all(np.abs(out) <= 1 + 1e-12)


@pytest.mark.parametrize("s1, s2, dim", SHAPES)
def test_cosine_similarity_gradients_by_finite_differences(s1, s2, dim) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(1)
    a = lucid.tensor(rng.standard_normal(s1), requires_grad=True)
    b = lucid.tensor(rng.standard_normal(s2), requires_grad=True)
    assert lucid.autograd.gradcheck(lambda x, y: F.cosine_similarity(x, y, dim=dim), (a, b))


@pytest.mark.parity
@pytest.mark.parametrize("s1, s2, dim", SHAPES)
def test_cosine_similarity_matches_torch(s1, s2, dim) -> None:  # type: ignore[no-untyped-def]
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal(s1).astype(np.float32), rng.standard_normal(s2).astype(np.float32)
    la = lucid.tensor(a, requires_grad=True)
    lb = lucid.tensor(b, requires_grad=True)
    ta = torch.tensor(a, requires_grad=True)
    tb = torch.tensor(b, requires_grad=True)
    ours = F.cosine_similarity(la, lb, dim=dim)
    theirs = torch.nn.functional.cosine_similarity(ta, tb, dim=dim)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-5, atol=1e-6)
    ours.sum().backward()
    theirs.sum().backward()
    np.testing.assert_allclose(la.grad.numpy(), ta.grad.numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(lb.grad.numpy(), tb.grad.numpy(), rtol=1e-4, atol=1e-5)
