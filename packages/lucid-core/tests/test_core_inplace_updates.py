"""``add_``, ``mul_``, ``addcmul_``, ``addcdiv_`` and ``lerp_`` outside autograd (running
statistics, hand-written updates) give what the recorded ops give, bit for bit, and keep every
in-place contract: the version bump, writing through shared storage, no floating-point
warnings, ops seen by observers. (lucid-optim's own fast updates are tested there.)"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import lucid
from lucid.autograd import observe_ops


def _pair(seed: int, dtype: str = "float32") -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.standard_normal((7, 5)).astype(dtype), rng.standard_normal((7, 5)).astype(dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize(
    "update",
    [
        lambda t, o: t.add_(o),
        lambda t, o: t.add_(o, alpha=-0.01),
        lambda t, o: t.add_(o, alpha=3),
        lambda t, o: t.mul_(o),
        lambda t, o: t.mul_(0.9),
        lambda t, o: t.add_(2.5),
        lambda t, o: t.add_(2.5, alpha=3),  # a number scaled: the ops' Python arithmetic
        lambda t, o: t.addcmul_(o, o, value=0.3),
        lambda t, o: t.addcmul_(o, t),
        lambda t, o: t.addcdiv_(o, o * o + 1, value=-0.1),
        lambda t, o: t.lerp_(o, 0.1),
        lambda t, o: t.lerp_(o, 1),
    ],
)
def test_matches_the_ops_bit_for_bit(dtype: str, update: object) -> None:
    a, b = _pair(0, dtype)
    with lucid.no_grad():
        fast = lucid.tensor(a.copy())
        update(fast, lucid.tensor(b))  # type: ignore[operator]
    with lucid.enable_grad():  # the recorded path: the ops themselves
        ref = lucid.tensor(a.copy(), requires_grad=True).clone()
        update(ref, lucid.tensor(b))  # type: ignore[operator]
    assert fast.dtype == ref.dtype
    np.testing.assert_array_equal(fast.numpy(), ref.detach().numpy())


def test_bumps_the_version_and_writes_through_storage() -> None:
    a, b = _pair(1)
    p = lucid.tensor(a, requires_grad=True)
    alias = p.data
    storage = p.array
    v0 = p._version
    with lucid.no_grad():
        p.add_(lucid.tensor(b), alpha=-0.5)
        alias.mul_(2.0)
    assert p._version == v0 + 1
    assert p.array is storage
    np.testing.assert_allclose(p.detach().numpy(), (a - 0.5 * b) * 2, rtol=1e-6, atol=1e-6)


def test_a_saved_parameter_changed_by_a_step_is_caught() -> None:
    w = lucid.tensor([1.0, 2.0], requires_grad=True)
    loss = (w * w).sum()
    with lucid.no_grad():
        w.add_(lucid.tensor([0.1, 0.1]), alpha=-1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


def test_no_floating_point_warnings() -> None:
    t = lucid.tensor(np.full(3, 3e38, np.float32))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with lucid.no_grad():
            t.add_(t, alpha=2.0)
    assert np.isinf(t.numpy()).all()


def test_observers_still_see_the_ops() -> None:
    t, o = lucid.ones(3), lucid.ones(3)
    seen: list[str] = []
    with lucid.no_grad(), observe_ops(lambda cls, *_: seen.append(cls.__name__)):
        t.add_(o, alpha=2.0)
    assert "Add" in seen


def test_other_dtypes_and_shapes_keep_the_ops_rules() -> None:
    with lucid.no_grad():
        i = lucid.tensor([1, 2, 3])
        with pytest.raises(RuntimeError, match="can't be cast"):
            i.add_(0.5)
        f = lucid.zeros(2, 3)
        f.add_(lucid.tensor([1.0, 2.0, 3.0]))  # broadcast
        np.testing.assert_array_equal(f.numpy(), [[1, 2, 3], [1, 2, 3]])


def test_writes_into_the_tensors_own_memory() -> None:
    # NumPy: the last ufunc writes into the array itself (no temporary), strided views included.
    base = np.zeros((4, 6), np.float32)
    t = lucid.from_numpy(base[:, ::2])
    before = t.array
    with lucid.no_grad():
        t.add_(lucid.ones(4, 3), alpha=-0.5)
        t.mul_(4.0)
        t.lerp_(lucid.full((4, 3), 2.0), 0.25)
    assert t.array is before
    np.testing.assert_array_equal(base[:, ::2], np.full((4, 3), -1.0, np.float32))
    np.testing.assert_array_equal(base[:, 1::2], np.zeros((4, 3), np.float32))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(
    "update",
    [
        lambda t, o: t.add_(o, alpha=-20),
        lambda t, o: t.add_(o, alpha=0.37),
        lambda t, o: t.sub_(o, alpha=1e-3),
        lambda t, o: t.add_(t, alpha=-0.5),  # the same array: each piece reads then writes it
        lambda t, o: t.mul_(0.37),  # clip_grad_norm_'s scaling: one ufunc into the array
    ],
)
def test_big_scaled_updates_match_the_ops_bit_for_bit(dtype: str, update: object) -> None:
    # Past the piece size (65,536 elements): the scaled pieces go through a scratch buffer.
    rng = np.random.default_rng(5)
    a, b = (rng.standard_normal((301, 257)).astype(dtype) for _ in range(2))
    with lucid.no_grad():
        fast = lucid.tensor(a.copy())
        update(fast, lucid.tensor(b))  # type: ignore[operator]
    with lucid.enable_grad():  # recorded (a non-leaf that requires grad): the ops' path
        ref = lucid.tensor(a.copy(), requires_grad=True).clone()
        update(ref, lucid.tensor(b))  # type: ignore[operator]
    np.testing.assert_array_equal(fast.numpy(), ref.detach().numpy())


def test_an_overlapping_operand_takes_the_ops_path() -> None:
    # ``other`` a shifted view of the same memory: the op reads it whole before writing.
    base = np.arange(80_000, dtype=np.float32)
    t = lucid.from_numpy(base[1:])
    o = lucid.from_numpy(base[:-1])
    expect = base[1:] - 2.0 * base[:-1]
    with lucid.no_grad():
        t.add_(o, alpha=-2.0)
    np.testing.assert_array_equal(t.numpy(), expect)
