"""The NumPy backend's fused kernels, registered against the contracts in ``lucid.kernels``.

Convolution: the arithmetic of lucid.nn's reference im2col + GEMM, organised for the CPU
(``im2col``: cache-sized chunks on a thread per core, two col2im layouts, forward columns kept
for the weight gradient), Winograd F(2x2, 3x3) for stride-1 3x3 layers where it measured
faster (``winograd``; ``LUCID_CONV=im2col`` turns it off) and depthwise convolutions as tap
loops (``depthwise``). Batch norm: blocked one-read statistics and gradient sums in x's memory
order (``batchnorm``). Max pooling: compiled 2-D loops with ``lucid-core[numba]`` (``pool``).
ReLU's gradient: one compiled pass on every core with ``lucid-core[numba]`` (``relu``).
"""

from __future__ import annotations

from typing import Any

from lucid import kernels
from lucid.backends._base import Backend
from lucid.backends._numpy.kernels import batchnorm, depthwise, im2col, pool, relu, winograd
from lucid.kernels import ConvGeometry


class CpuConv:
    """``kernels.CONV_ARRAYS`` for NumPy: depthwise tap loops, Winograd for the 3x3 layers where
    it pays, else chunked im2col + GEMM."""

    @staticmethod
    def forward(
        backend: Any, x: Any, w: Any, bias: Any, g: ConvGeometry, keep: dict[Any, Any] | None
    ) -> Any:
        if x.shape[0] > 0 and depthwise.is_depthwise(w, g):
            return depthwise.forward(backend, x, w, bias, g)
        if winograd.pays(x, w.shape[0], g):
            return winograd.conv_forward(backend, x, w, bias, g, keep)
        return im2col.conv_forward(backend, x, w, bias, g, keep)

    @staticmethod
    def input_grad(backend: Any, dy: Any, w: Any, g: ConvGeometry) -> Any:
        if dy.shape[0] > 0 and depthwise.is_depthwise(w, g):
            return depthwise.input_grad(backend, dy, w, g)
        if winograd.pays_input_grad(dy, w, g):
            return winograd.conv_input_grad(backend, dy, w, g)
        return im2col.conv_input_grad(backend, dy, w, g)

    @staticmethod
    def weight_grad(
        backend: Any, x: Any, dy: Any, g: ConvGeometry, kept: dict[Any, Any] | None
    ) -> Any:
        if x.shape[0] > 0 and g.groups > 1 and x.shape[1] == g.groups == dy.shape[1]:
            return depthwise.weight_grad(backend, x, dy, g)
        if winograd.pays(x, dy.shape[1], g):
            return winograd.conv_weight_grad(backend, x, dy, g, kept)
        return im2col.conv_weight_grad(backend, x, dy, g, kept)

    @staticmethod
    def channel_sum(backend: Any, dy: Any) -> Any:
        return im2col.channel_sum(backend, dy)


def register(backend: Backend) -> None:
    kernels.CONV_ARRAYS.register(backend, CpuConv)
    kernels.BATCH_NORM.register(backend, batchnorm.CpuBatchNorm)
    kernels.MAX_POOL_ARRAYS.register(backend, pool.CpuMaxPool)
    kernels.RELU_GRAD.register(backend, relu.CpuReluGrad)
