"""default_collate and default_convert."""

from __future__ import annotations

from collections import namedtuple

import numpy as np
import pytest

import lucid
from lucid.data import default_collate, default_convert

Point = namedtuple("Point", ["x", "y"])


def test_numbers_become_tensors_with_pytorch_dtypes() -> None:
    assert default_collate([1, 2, 3]).dtype == lucid.int64
    assert default_collate([1.0, 2.0]).dtype == lucid.float64
    assert default_collate([True, False]).dtype == lucid.bool
    assert default_collate([np.float32(1), np.float32(2)]).dtype == lucid.float32
    np.testing.assert_array_equal(default_collate([1, 2, 3]).numpy(), [1, 2, 3])


def test_arrays_and_tensors_are_stacked() -> None:
    arrays = [np.full((2, 3), i, np.float32) for i in range(4)]
    out = default_collate(arrays)
    assert isinstance(out, lucid.Tensor) and out.shape == (4, 2, 3) and out.dtype == lucid.float32
    np.testing.assert_array_equal(out.numpy()[:, 0, 0], [0, 1, 2, 3])
    tensors = [lucid.tensor(a) for a in arrays]
    np.testing.assert_array_equal(default_collate(tensors).numpy(), out.numpy())
    assert default_collate(tensors).device == "cpu"


def test_unequal_shapes_are_an_error() -> None:
    with pytest.raises(RuntimeError, match="equal size"):
        default_collate([np.zeros(2), np.zeros(3)])


def test_tuples_become_lists_of_batches() -> None:
    out = default_collate([(np.zeros(2), 1), (np.ones(2), 0)])
    assert isinstance(out, list) and len(out) == 2
    assert out[0].shape == (2, 2)
    assert out[1].numpy().tolist() == [1, 0]


def test_dicts_namedtuples_and_nesting() -> None:
    out = default_collate([{"a": 1, "b": {"c": 2.0}}, {"a": 3, "b": {"c": 4.0}}])
    assert out["a"].numpy().tolist() == [1, 3]
    assert out["b"]["c"].numpy().tolist() == [2.0, 4.0]
    p = default_collate([Point(1, 2.0), Point(3, 4.0)])
    assert isinstance(p, Point)
    assert p.x.numpy().tolist() == [1, 3]


def test_lists_are_transposed_and_checked() -> None:
    out = default_collate([[1, 2], [3, 4]])
    assert isinstance(out, list) and [t.numpy().tolist() for t in out] == [[1, 3], [2, 4]]
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal size"):
        default_collate([[1, 2], [3]])


def test_strings_are_kept() -> None:
    assert default_collate(["a", "b"]) == ["a", "b"]


def test_unsupported_types_name_themselves() -> None:
    with pytest.raises(TypeError, match="found <class 'object'>"):
        default_collate([object(), object()])
    with pytest.raises(TypeError, match="found"):
        default_collate([np.array(["a"]), np.array(["b"])])


def test_default_convert_does_not_stack() -> None:
    out = default_convert((np.zeros(3), {"k": np.ones(2)}, "s", 5))
    assert isinstance(out, list)
    assert out[0].shape == (3,) and isinstance(out[0], lucid.Tensor)
    assert isinstance(out[1]["k"], lucid.Tensor)
    assert out[2:] == ["s", 5]


def test_stacked_samples_read_as_rows_and_collate_like_the_rows() -> None:
    from lucid.data import StackedSamples

    images = lucid.tensor(np.arange(24, dtype=np.float32).reshape(3, 2, 4))
    batch = StackedSamples(images, [7, 8, 9], np.array([0.5, 1.5, 2.5]))
    assert len(batch) == 3
    img, label, w = batch[1]
    np.testing.assert_array_equal(img.numpy(), images.numpy()[1])
    assert label == 8 and w == 1.5
    assert len(batch[1:]) == 2
    with pytest.raises(IndexError):
        batch[3]
    fast = default_collate(batch)
    slow = default_collate(list(batch))
    assert len(fast) == len(slow) == 3
    for f, s in zip(fast, slow):
        assert f.dtype == s.dtype and f.shape == s.shape
        np.testing.assert_array_equal(f.numpy(), s.numpy())
    with pytest.raises(ValueError, match=r"differ in length: \[3, 2\]"):
        StackedSamples(np.zeros(3), [1, 2])
