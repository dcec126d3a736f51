"""lucid.random: seeding, generators, RNG state, and the sampling functions."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
from lucid import random as lr


def test_manual_seed_makes_streams_reproducible() -> None:
    lucid.manual_seed(123)
    a = [lucid.randn(4), lucid.normal(0.0, 1.0, (3,)), lucid.randperm(7), lucid.rand(2)]
    lucid.manual_seed(123)
    b = [lucid.randn(4), lucid.normal(0.0, 1.0, (3,)), lucid.randperm(7), lucid.rand(2)]
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x.numpy(), y.numpy())
    lucid.manual_seed(124)
    assert not np.array_equal(lucid.randn(4).numpy(), a[0].numpy())


def test_generator_is_independent_of_global_stream() -> None:
    g = lucid.Generator().manual_seed(5)
    first = lucid.normal(0.0, 1.0, (5,), generator=g).numpy()
    lucid.manual_seed(0)
    lucid.randn(100)  # moving the global stream must not change g's stream
    g.manual_seed(5)
    np.testing.assert_array_equal(lucid.normal(0.0, 1.0, (5,), generator=g).numpy(), first)
    assert g.initial_seed() == 5


def test_rng_state_round_trip_restores_every_draw() -> None:
    lucid.manual_seed(7)
    state = lucid.get_rng_state()
    assert state.dtype is lucid.uint8
    draws = (lucid.randn(3).numpy(), lucid.bernoulli(lucid.full((6,), 0.5)).numpy())
    lucid.set_rng_state(state)
    again = (lucid.randn(3).numpy(), lucid.bernoulli(lucid.full((6,), 0.5)).numpy())
    for x, y in zip(draws, again):
        np.testing.assert_array_equal(x, y)


def test_set_rng_state_accepts_generator_state_and_rejects_garbage() -> None:
    lucid.manual_seed(1)
    st = lr.default_generator.get_state()
    x = lucid.randn(2).numpy()
    lucid.set_rng_state(st)
    np.testing.assert_array_equal(lucid.randn(2).numpy(), x)
    with pytest.raises(RuntimeError, match="invalid"):
        lucid.set_rng_state(lucid.tensor([1, 2, 3], dtype=lucid.uint8))


class _FakeBackendState:
    def __init__(self) -> None:
        self.state = [1, 2]
        self.seeded: list[int] = []


def test_rng_state_includes_backends_that_expose_one(monkeypatch: pytest.MonkeyPatch) -> None:
    from lucid.backends import get_backend

    cpu = get_backend("cpu")
    box = _FakeBackendState()
    monkeypatch.setattr(cpu, "get_rng_state", lambda: list(box.state), raising=False)
    monkeypatch.setattr(cpu, "set_rng_state", lambda s: setattr(box, "state", s), raising=False)
    state = lucid.get_rng_state()
    box.state = [9, 9]
    lucid.set_rng_state(state)
    assert box.state == [1, 2]


def test_normal_shapes_dtypes_and_moments() -> None:
    lucid.manual_seed(0)
    mean = lucid.tensor([0.0, 10.0, -5.0], dtype=lucid.float64)
    out = lucid.normal(mean, 0.5)
    assert out.shape == (3,) and out.dtype is lucid.float64
    big = lucid.normal(2.0, 3.0, (20000,))
    assert big.dtype is lucid.float32
    assert abs(big.mean().item() - 2.0) < 0.1
    assert abs(float(np.std(big.numpy())) - 3.0) < 0.1
    std = lucid.tensor([[1.0], [2.0]])
    assert lucid.normal(lucid.zeros(3), std).shape == (2, 3)
    with pytest.raises(TypeError, match="size"):
        lucid.normal(0.0, 1.0)
    with pytest.raises(RuntimeError, match="std >= 0.0"):
        lucid.normal(0.0, -1.0, (2,))


def test_uniform_range() -> None:
    lucid.manual_seed(0)
    u = lr.uniform(-2.0, 3.0, (5000,)).numpy()
    assert u.min() >= -2.0 and u.max() < 3.0
    assert abs(u.mean() - 0.5) < 0.1
    with pytest.raises(RuntimeError, match="low <= high"):
        lr.uniform(1.0, 0.0, (2,))


def test_bernoulli_probabilities() -> None:
    lucid.manual_seed(0)
    p = lucid.tensor([0.0, 1.0, 0.25], dtype=lucid.float64).expand(4000, 3)
    s = lucid.bernoulli(p)
    assert s.dtype is lucid.float64 and s.shape == (4000, 3)
    freq = s.numpy().mean(axis=0)
    assert freq[0] == 0.0 and freq[1] == 1.0
    assert abs(freq[2] - 0.25) < 0.03
    assert set(np.unique(lucid.bernoulli(lucid.zeros(100), p=0.5).numpy())) == {0.0, 1.0}
    with pytest.raises(RuntimeError, match=r"\[0, 1\]"):
        lucid.bernoulli(lucid.tensor([1.5]))


def test_multinomial_with_replacement_frequencies() -> None:
    lucid.manual_seed(0)
    w = lucid.tensor([1.0, 0.0, 3.0])
    s = lucid.multinomial(w, 8000, replacement=True)
    assert s.dtype is lucid.int64 and s.shape == (8000,)
    counts = np.bincount(s.numpy(), minlength=3) / 8000
    assert counts[1] == 0.0
    assert abs(counts[2] - 0.75) < 0.03


def test_multinomial_without_replacement_is_distinct() -> None:
    lucid.manual_seed(0)
    w = lucid.tensor([[1.0, 2.0, 3.0, 4.0, 0.0], [5.0, 0.0, 1.0, 1.0, 1.0]])
    s = lucid.multinomial(w, 4)
    assert s.shape == (2, 4)
    for row, wrow in zip(s.numpy(), w.numpy()):
        assert len(set(row)) == 4
        assert all(wrow[i] > 0 for i in row)
    # The heaviest category is drawn first most of the time.
    firsts = [lucid.multinomial(lucid.tensor([1.0, 1.0, 20.0]), 1).item() for _ in range(200)]
    assert firsts.count(2) > 150


def test_multinomial_errors() -> None:
    with pytest.raises(RuntimeError, match="without replacement"):
        lucid.multinomial(lucid.tensor([1.0, 2.0]), 3)
    with pytest.raises(RuntimeError, match="element < 0"):
        lucid.multinomial(lucid.tensor([-1.0, 2.0]), 1)
    with pytest.raises(RuntimeError, match="sum of probabilities"):
        lucid.multinomial(lucid.tensor([0.0, 0.0]), 1)
    with pytest.raises(RuntimeError, match="prob_dist must be 1 or 2 dim"):
        lucid.multinomial(lucid.ones(2, 2, 2), 1)


def test_randperm_is_a_permutation() -> None:
    lucid.manual_seed(3)
    p = lucid.randperm(50)
    assert p.dtype is lucid.int64
    assert sorted(p.tolist()) == list(range(50))
    assert p.tolist() != list(range(50))
    g = lucid.Generator().manual_seed(9)
    a = lucid.randperm(10, generator=g).tolist()
    g.manual_seed(9)
    assert lucid.randperm(10, generator=g).tolist() == a
    assert lucid.randperm(0).shape == (0,)


def test_fork_rng_restores_the_streams() -> None:
    lucid.manual_seed(11)
    with lr.fork_rng():
        inside = lucid.randn(3).numpy()
    np.testing.assert_array_equal(lucid.randn(3).numpy(), inside)
    with lr.fork_rng(enabled=False):
        lucid.randn(3)
    assert not np.array_equal(lucid.randn(3).numpy(), inside)


def test_fork_rng_takes_torchs_arguments() -> None:
    """``fork_rng(devices=..., enabled=True)``: reversible networks (lucidrains' performer,
    reformer: RevTorch's ``Deterministic``) pass the devices they recorded, ``[]`` on a CPU."""
    lucid.manual_seed(12)
    with lr.fork_rng(devices=[], enabled=True):
        inside = lucid.randn(3).numpy()
    np.testing.assert_array_equal(lucid.randn(3).numpy(), inside)
    lucid.manual_seed(12)
    with lr.fork_rng(devices=iter(()), device_type="cpu"):
        lucid.randn(3)
    np.testing.assert_array_equal(lucid.randn(3).numpy(), inside)
    with lr.fork_rng(device_type="meta"):  # forks nothing, as torch's
        moved = lucid.randn(3).numpy()
    assert not np.array_equal(lucid.randn(3).numpy(), moved)


@pytest.mark.parity
def test_fork_rng_signature_is_torchs() -> None:
    import inspect

    torch = pytest.importorskip("torch")
    ours = inspect.signature(lr.fork_rng).parameters
    theirs = inspect.signature(torch.random.fork_rng).parameters
    assert list(ours) == list(theirs)
    assert [p.default for p in ours.values()] == [p.default for p in theirs.values()]
