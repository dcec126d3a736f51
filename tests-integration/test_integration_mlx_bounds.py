"""lucid.nn's index checks on MLX: cross_entropy / nll_loss targets and embedding indices out
of range raise the NumPy path's IndexError (the targets at the next sync point, with no sync
of their own)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

pytestmark = pytest.mark.mlx
mx = pytest.importorskip("mlx.core")

import lucid  # noqa: E402
import lucid.backends.mlx  # noqa: E402, F401  (registers "mlx" without an installed wheel)
import lucid.nn.functional as F  # noqa: E402
from lucid.backends import get_backend  # noqa: E402


def _message(fn: Callable[[str], Any], device: str) -> str:
    with pytest.raises(IndexError) as info:
        fn(device).tolist()  # (a sync point)
    return str(info.value)


CASES: dict[str, Callable[[str], Any]] = {
    "cross_entropy": lambda d: F.cross_entropy(
        lucid.zeros(2, 10, device=d), lucid.tensor([1, 10], device=d)
    ),
    "cross_entropy negative": lambda d: F.cross_entropy(
        lucid.zeros(2, 10, device=d), lucid.tensor([-1, 2], device=d)
    ),
    "cross_entropy weighted": lambda d: F.cross_entropy(
        lucid.zeros(2, 3, device=d), lucid.tensor([3, 0], device=d), lucid.ones(3, device=d)
    ),
    "nll_loss": lambda d: F.nll_loss(lucid.zeros(2, 4, device=d), lucid.tensor([4, 0], device=d)),
    "embedding": lambda d: F.embedding(lucid.tensor([7], device=d), lucid.zeros(5, 2, device=d)),
    "embedding negative": lambda d: F.embedding(
        lucid.tensor([-1], device=d), lucid.zeros(5, 2, device=d)
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_out_of_range_targets_and_indices_raise_the_numpy_paths_error(case: str) -> None:
    assert _message(CASES[case], "mlx") == _message(CASES[case], "cpu")


def test_ignored_targets_pass_and_the_check_adds_no_host_transfer() -> None:
    backend = get_backend("mlx")
    logits = lucid.zeros(2, 10, device="mlx")
    before = backend.host_transfers
    loss = F.cross_entropy(logits, lucid.tensor([1, -100], device="mlx"), ignore_index=-100)
    bad = F.cross_entropy(logits, lucid.tensor([1, 10], device="mlx"))
    assert backend.host_transfers == before
    with pytest.raises(IndexError, match="Target 10 is out of bounds"):
        bad.item()
    assert loss.item() == pytest.approx(2.302585, rel=1e-5, abs=1e-6)
