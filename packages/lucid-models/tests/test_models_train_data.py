"""lucid-train's datasets: images normalised a batch at a time, the same bits as the whole set."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("lucid.data")

from lucid.models.train import data  # noqa: E402


@pytest.mark.parametrize(
    "shape, mean, std",
    [
        ((50, 28, 28), (0.1307,), (0.3081,)),
        ((20, 32, 32, 3), (0.49, 0.48, 0.45), (0.25, 0.24, 0.26)),
    ],
)
def test_batches_are_normalised_as_the_whole_set_would_be(shape, mean, std) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(len(shape))
    images = rng.integers(0, 256, shape, dtype=np.uint8)
    labels = rng.integers(0, 10, shape[0]).astype(np.int64)
    nchw = images[:, None] if images.ndim == 3 else images.transpose(0, 3, 1, 2)
    m = np.asarray(mean, np.float32).reshape(1, -1, 1, 1)
    s = np.asarray(std, np.float32).reshape(1, -1, 1, 1)
    whole = (nchw.astype(np.float32) / np.float32(255.0) - m) / s  # the formula, as temporaries
    ds = data._Images(images, labels, mean, std)
    assert len(ds) == shape[0]
    idx = [7, 3, 3, 0, shape[0] - 1]
    batch = ds.__getitems__(idx)
    x, y = (np.asarray(col.numpy()) for col in batch.columns)
    assert x.dtype == np.float32 and x.flags.c_contiguous
    np.testing.assert_array_equal(x, whole[idx])
    np.testing.assert_array_equal(y, labels[idx])
    xi, yi = ds[3]
    np.testing.assert_array_equal(xi.numpy(), whole[3])
    assert int(yi.item()) == labels[3]
