"""The NumPy backend's fused kernels, registered against the contracts in ``lucid.kernels``.

Convolution: the arithmetic of lucid.nn's reference im2col + GEMM, organised for the CPU
(``im2col``: cache-sized chunks on a thread per core, two col2im layouts, forward columns kept
for the weight gradient), Winograd F(2x2, 3x3) for stride-1 3x3 layers where it measured
faster (``winograd``) and depthwise convolutions as tap loops (``depthwise``): ``conv_kernel``
chooses, with its thresholds beside it. Batch norm: blocked one-read statistics and gradient
sums in x's memory order (``batchnorm``). Max pooling: compiled 2-D loops with
``lucid-core[numba]`` (``pool``). ReLU's gradient: one compiled pass on every core with
``lucid-core[numba]`` (``relu``). erf, erfc, GELU and its gradient: one compiled pass, or a
float32 rational approximation in a few ufunc passes (``special``). LSTM, GRU and Elman RNN:
a layer as one op, gates in place (``lstm``, ``gru``). Layer norm: one compiled pass over the
rows each way (``layernorm``). softmax, log_softmax and their gradients over the last dim: row
blocks that stay in L2 (``softmax``). Adam/AdamW's step: one compiled pass a parameter
(``adam``).
"""

from __future__ import annotations

from typing import Any, Literal

from lucid import kernels
from lucid.backends._base import Backend
from lucid.backends._numpy import _settings
from lucid.backends._numpy.kernels import (
    activation,
    adam,
    attention,
    batchnorm,
    depthwise,
    gru,
    im2col,
    layernorm,
    lstm,
    pool,
    relu,
    scaled_add,
    softmax,
    special,
    winograd,
)  # fmt: skip
from lucid.kernels import ConvGeometry

# -- which convolution kernel runs: decided here, and only here ----------------------------------
# Winograd where it measured faster than im2col (single thread, docs/performance.md): channels
# in and out at least this many (the input gradient from fewer, as im2col's col2im is dear),
# tiles covering the output at least this fully, and enough tiles in the batch to pay for the
# weight transform. ``lucid.backends.cpu.winograd_enabled = False`` (``LUCID_CONV=im2col``) turns
# it off.
WINOGRAD_MIN_CHANNELS = 64
WINOGRAD_MIN_CHANNELS_INPUT_GRAD = 16
WINOGRAD_MIN_FILL = 0.75
WINOGRAD_MIN_TILES = 256

ConvStep = Literal["forward", "input_grad", "weight_grad"]
ConvPath = Literal["depthwise", "winograd", "im2col"]


def conv_kernel(step: ConvStep, a: Any, c_in: int, c_out: int, g: ConvGeometry) -> ConvPath:
    """The kernel that runs ``step`` of a convolution from ``c_in`` to ``c_out`` channels.

    ``a`` is the step's batch array (x; dy for the input gradient). Depthwise convolutions (one
    input and one output channel per group) run as tap loops; 3x3 stride-1 layers big enough
    (the thresholds above) as Winograd; everything else as chunked im2col + GEMM.
    """
    if a.shape[0] > 0 and g.groups > 1 and c_in == g.groups == c_out:
        return "depthwise"
    if step == "input_grad":
        min_channels, size = WINOGRAD_MIN_CHANNELS_INPUT_GRAD, g.in_size
    else:
        min_channels, size = WINOGRAD_MIN_CHANNELS, g.out_size
    on = _settings.cpu.winograd_enabled
    if on and winograd.applies(a, g) and min(c_in, c_out) >= min_channels:
        fill, tiles = winograd.coverage(g, size)
        if fill >= WINOGRAD_MIN_FILL and a.shape[0] * tiles >= WINOGRAD_MIN_TILES:
            return "winograd"
    return "im2col"


class CpuConv:
    """``kernels.CONV_ARRAYS`` for NumPy: the kernel ``conv_kernel`` picks for each step."""

    @staticmethod
    def forward(
        backend: Any, x: Any, w: Any, bias: Any, g: ConvGeometry, keep: dict[Any, Any] | None
    ) -> Any:
        path = conv_kernel("forward", x, x.shape[1], w.shape[0], g)
        if path == "depthwise":
            return depthwise.forward(backend, x, w, bias, g)
        if path == "winograd":
            return winograd.conv_forward(backend, x, w, bias, g, keep)
        return im2col.conv_forward(backend, x, w, bias, g, keep)

    @staticmethod
    def input_grad(backend: Any, dy: Any, w: Any, g: ConvGeometry) -> Any:
        path = conv_kernel("input_grad", dy, w.shape[1] * g.groups, w.shape[0], g)
        if path == "depthwise":
            return depthwise.input_grad(backend, dy, w, g)
        if path == "winograd":
            return winograd.conv_input_grad(backend, dy, w, g)
        return im2col.conv_input_grad(backend, dy, w, g)

    @staticmethod
    def weight_grad(
        backend: Any, x: Any, dy: Any, g: ConvGeometry, kept: dict[Any, Any] | None
    ) -> Any:
        path = conv_kernel("weight_grad", x, x.shape[1], dy.shape[1], g)
        if path == "depthwise":
            return depthwise.weight_grad(backend, x, dy, g)
        if path == "winograd":
            return winograd.conv_weight_grad(backend, x, dy, g, kept)
        return im2col.conv_weight_grad(backend, x, dy, g, kept)

    @staticmethod
    def channel_sum(backend: Any, dy: Any) -> Any:
        return im2col.channel_sum(backend, dy)


def register(backend: Backend) -> None:
    """File the NumPy backend's kernels under their contracts."""
    kernels.CONV_ARRAYS.register(backend, CpuConv)
    kernels.BATCH_NORM.register(backend, batchnorm.CpuBatchNorm)
    kernels.MAX_POOL_ARRAYS.register(backend, pool.CpuMaxPool)
    kernels.RELU_GRAD.register(backend, relu.CpuReluGrad)
    kernels.ERF.register(backend, special.CpuErf)
    kernels.ERFC.register(backend, special.CpuErfc)
    kernels.GELU.register(backend, special.CpuGelu)
    kernels.GELU_GRAD.register(backend, special.CpuGeluGrad)
    kernels.ACTIVATION.register(backend, activation.CpuActivation)
    kernels.ACTIVATION_GRAD.register(backend, activation.CpuActivationGrad)
    kernels.ADAM_STEP.register(backend, adam.CpuAdamStep)
    kernels.SCALED_ADD.register(backend, scaled_add.CpuScaledAdd)
    kernels.ATTENTION_SHIFT.register(backend, attention.CpuAttentionShift)
    kernels.ATTENTION.register(backend, attention.CpuAttention)
    kernels.LSTM.register(backend, lstm.CpuLstm)
    kernels.GRU.register(backend, gru.CpuGru)
    kernels.RNN.register(backend, gru.CpuRnn)
    kernels.LAYER_NORM.register(backend, layernorm.CpuLayerNorm)
    kernels.SOFTMAX.register(backend, softmax.CpuSoftmax)
    kernels.LOG_SOFTMAX.register(backend, softmax.CpuLogSoftmax)
    kernels.SOFTMAX_GRAD.register(backend, softmax.CpuSoftmaxGrad)
    kernels.LOG_SOFTMAX_GRAD.register(backend, softmax.CpuLogSoftmaxGrad)
    kernels.ONE_HOT_ROWS.register(backend, softmax.CpuOneHotRows)
