"""``lucid.kernels.im2col`` of a one-channel batch (built tap by tap) holds exactly the values
of the receptive fields, in (tap) column order, for every dimensionality and geometry."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from lucid import kernels
from lucid.backends import get_backend


def _naive(x: np.ndarray, g: kernels.ConvGeometry) -> np.ndarray:
    """Rows (n, *out) by columns (taps), read one value at a time from the padded input."""
    pad = [(0, 0), *zip(g.pad_lo, g.pad_hi)]
    xp = np.pad(x[:, 0], pad)
    rows = []
    for n in range(x.shape[0]):
        for out in itertools.product(*(range(o) for o in g.out_size)):
            row = []
            for tap in itertools.product(*(range(k) for k in g.kernel)):
                at = tuple(o * s + t * d for o, s, t, d in zip(out, g.stride, tap, g.dilation))
                row.append(xp[(n, *at)])
            rows.append(row)
    return np.asarray(rows, dtype=x.dtype)


@pytest.mark.parametrize(
    "spatial, kernel, stride, pad, dilation",
    [
        ((9,), (3,), (1,), 1, (1,)),
        ((8, 7), (3, 2), (2, 1), 1, (1, 2)),
        ((12, 12), (5, 5), (1, 1), 2, (1, 1)),
        ((5, 6, 4), (2, 3, 2), (1, 2, 1), 0, (1, 1, 1)),
    ],
)
def test_one_channel_columns(
    spatial: tuple[int, ...], kernel: tuple[int, ...], stride: tuple[int, ...], pad: int,
    dilation: tuple[int, ...],
) -> None:  # fmt: skip
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 1, *spatial)).astype(np.float32)
    nd = len(spatial)
    g = kernels.conv_geometry(spatial, kernel, stride, ((pad, pad),) * nd, dilation, 1)
    cols = kernels.im2col(get_backend("cpu"), kernels.channels_last(x, np), g)
    assert cols.shape == (3 * int(np.prod(g.out_size)), 1, int(np.prod(kernel)))
    np.testing.assert_array_equal(cols[:, 0], _naive(x, g))
