"""The reference convolution: im2col + one (grouped) GEMM, the default of every backend.

This is ``lucid.kernels.CONV_ARRAYS`` written to be read, and the oracle the fast kernels are
tested against; a backend that registers its own (NumPy's chunked, threaded one, say) replaces
it. Activations are handled channels-last, ``(N, *spatial, C)``. For a geometry ``g``:

- ``im2col`` copies every receptive field into a column matrix ``(rows, G, taps * C/G)`` with
  ``rows = N * prod(out)``, and ``weight_matrix`` lays the weight out as ``(G, taps * C/G,
  C_out/G)`` in the same column order, so the convolution is ``col @ W`` per group;
- its input gradient is ``dy @ W^T`` (the column gradient) added back, tap by tap, into the
  padded input it was read from (col2im);
- its weight gradient is ``col^T @ dy``.
"""

from __future__ import annotations

from typing import Any

from lucid import kernels
from lucid.kernels import ConvGeometry, channels_first, channels_last


def _dy_by_group(dy: Any, groups: int, xp: Any) -> Any:
    """``(N, C_out, *out)`` -> ``(G, rows, C_out/G)``."""
    rows_by_channel = xp.reshape(channels_last(dy, xp), (-1, groups, dy.shape[1] // groups))
    return xp.transpose(rows_by_channel, (1, 0, 2))


class ReferenceConv:
    """``lucid.kernels.CONV_ARRAYS`` in plain array code (no chunks, threads or caches)."""

    @staticmethod
    def forward(
        backend: Any, x: Any, w: Any, bias: Any, g: ConvGeometry, keep: dict[Any, Any] | None
    ) -> Any:
        """``(N, C, *in) -> (N, C_out, *out)``; ``keep`` is not used."""
        xp = backend.xp
        cols = kernels.im2col(backend, channels_last(x, xp), g)  # (rows, G, K)
        wm = kernels.weight_matrix(w, g.groups, xp)  # (G, K, C_out/G)
        out = xp.matmul(xp.transpose(cols, (1, 0, 2)), wm)  # (G, rows, C_out/G)
        out = xp.reshape(xp.transpose(out, (1, 0, 2)), (x.shape[0], *g.out_size, w.shape[0]))
        if bias is not None:
            out = out + bias
        return channels_first(out, xp)

    @staticmethod
    def input_grad(backend: Any, dy: Any, w: Any, g: ConvGeometry) -> Any:
        """``dy -> dx``: the column gradient, added tap by tap into the padded input."""
        xp = backend.xp
        n, nd, cg = dy.shape[0], g.nd, w.shape[1]
        wm = kernels.weight_matrix(w, g.groups, xp)  # (G, K, C_out/G)
        wm_t = xp.transpose(wm, (0, 2, 1))
        dcol = xp.matmul(_dy_by_group(dy, g.groups, xp), wm_t)  # (G, rows, taps * Cg)
        dcol = xp.reshape(dcol, (g.groups, n, *g.out_size, *g.kernel, cg))
        dpad = xp.zeros((n, *g.padded, g.groups, cg), dtype=dy.dtype)
        to_nhwgc = (1, *range(2, nd + 2), 0, nd + 2)
        for tap in g.all_taps():
            part = xp.transpose(dcol[(slice(None),) * (nd + 2) + tap], to_nhwgc)
            where = (slice(None), *g.tap_slices(tap))
            dpad = backend.setitem(dpad, where, dpad[where] + part)
        crop = (slice(None), *g.crop(), slice(None))
        return channels_first(xp.reshape(dpad, (n, *g.padded, g.groups * cg))[crop], xp)

    @staticmethod
    def weight_grad(
        backend: Any, x: Any, dy: Any, g: ConvGeometry, kept: dict[Any, Any] | None
    ) -> Any:
        """``(x, dy) -> dw``; ``kept`` is not used."""
        xp = backend.xp
        cols = kernels.im2col(backend, channels_last(x, xp), g)  # (rows, G, K)
        dwm = xp.matmul(xp.transpose(cols, (1, 2, 0)), _dy_by_group(dy, g.groups, xp))
        return kernels.weight_from_matrix(dwm, g.kernel, xp)

    @staticmethod
    def channel_sum(backend: Any, dy: Any) -> Any:
        """The bias gradient: ``dy`` summed over every dim but the channel dim."""
        return backend.xp.sum(dy, axis=(0, *range(2, dy.ndim)))
