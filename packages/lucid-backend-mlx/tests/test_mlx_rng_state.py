"""lucid.get_rng_state / set_rng_state cover the MLX backend's own RNG key."""

from __future__ import annotations

import pytest

import lucid

pytest.importorskip("mlx.core")
pytestmark = pytest.mark.mlx

import lucid.backends.mlx  # noqa: E402,F401  (registers the backend when run from a source tree)


def test_rng_state_round_trip_replays_mlx_samples() -> None:
    lucid.manual_seed(3)
    lucid.randn(4, device="mlx")
    state = lucid.random.get_rng_state()
    first = lucid.randn(4, device="mlx").tolist()
    lucid.randn(4, device="mlx")
    lucid.random.set_rng_state(state)
    assert lucid.randn(4, device="mlx").tolist() == first


def test_different_states_give_different_samples() -> None:
    lucid.manual_seed(3)
    a = lucid.randn(4, device="mlx").tolist()
    b = lucid.randn(4, device="mlx").tolist()
    assert a != b
