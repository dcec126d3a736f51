"""nn.functional inputs from torch's OpInfo samples that lucid refused (issue 29's gauge):
integer inputs of ops torch computes in floating point."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.nn.functional as F

RNG = np.random.default_rng(29)


@pytest.mark.parametrize("log_input", [True, False])
@pytest.mark.parametrize("full", [True, False])
def test_poisson_nll_loss_computes_integer_counts_in_float(log_input: bool, full: bool) -> None:
    x = RNG.integers(0, 4, 6)
    t = RNG.integers(0, 5, 6)
    got = F.poisson_nll_loss(lucid.tensor(x), lucid.tensor(t), log_input, full, reduction="none")
    want = F.poisson_nll_loss(
        lucid.tensor(x.astype(np.float32)), lucid.tensor(t.astype(np.float32)), log_input, full,
        reduction="none",
    )  # fmt: skip
    assert got.dtype is lucid.float32
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-6)


def test_local_response_norm_of_integers_is_float_and_keeps_empty_inputs() -> None:
    x = RNG.integers(-3, 4, (1, 6, 3))
    got = F.local_response_norm(lucid.tensor(x), 3, alpha=1e-2, beta=0.5, k=1.25)
    # torch averages the integer squares with avg_pool: an integer (truncated) mean
    padded = np.pad(x * x, ((0, 0), (1, 1), (0, 0)))
    window = padded[:, 0:6] + padded[:, 1:7] + padded[:, 2:8]
    want = x / ((window // 3) * 1e-2 + 1.25) ** 0.5
    assert got.dtype is lucid.float32
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6, atol=1e-6)
    empty = lucid.zeros(0, 1, 2, dtype=lucid.int64)
    assert F.local_response_norm(empty, 1).dtype is lucid.int64
    with pytest.raises(TypeError, match="must be Tensor, not list"):
        F.local_response_norm([[[1.0]]], 1)  # type: ignore[arg-type]


@pytest.mark.parity
def test_integer_inputs_match_torch() -> None:
    torch = pytest.importorskip("torch")
    x, t = RNG.integers(0, 4, 6), RNG.integers(0, 5, 6)
    ours = F.poisson_nll_loss(lucid.tensor(x), lucid.tensor(t), full=True)
    theirs = torch.nn.functional.poisson_nll_loss(torch.tensor(x), torch.tensor(t), full=True)
    assert str(theirs.dtype) == "torch." + str(ours.dtype).removeprefix("lucid.")
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-6)
    y = RNG.integers(-3, 4, (2, 6, 3))
    ours = F.local_response_norm(lucid.tensor(y), 3, alpha=1e-2)
    theirs = torch.nn.functional.local_response_norm(torch.tensor(y), 3, alpha=1e-2)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-3, atol=1e-4)


def test_hinge_embedding_loss_gives_both_terms_to_other_targets() -> None:
    x, t = lucid.tensor([0.5, 0.5, 2.0]), lucid.tensor([0.3, 1.0, -1.0])
    out = F.hinge_embedding_loss(x, t, reduction="none")
    np.testing.assert_allclose(out.numpy(), [1.0, 0.5, 0.0], rtol=1e-6, atol=1e-6)
