"""``lucid.backends.cuda``: PyTorch's CUDA switches, kept so device-agnostic programs run.

Lucid has no CUDA device, so ``is_built()`` is False and the switches change no computation.
``matmul.allow_tf32`` is the same setting as ``lucid.set_float32_matmul_precision`` (True is
``"high"``, False is ``"highest"``), as in PyTorch.

The scaled-dot-product-attention switches (``enable_math_sdp``, ``flash_sdp_enabled``, ...;
what ``lucid.nn.attention.sdpa_kernel`` sets) are PyTorch's CPU ones: lucid has one attention
computation, which runs while the math or the flash backend is enabled (the two PyTorch has on
the CPU); with both off ``scaled_dot_product_attention`` raises as PyTorch's does.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator

from lucid.backends import _precision

__all__ = [
    "cudnn_sdp_enabled",
    "enable_cudnn_sdp",
    "enable_flash_sdp",
    "enable_math_sdp",
    "enable_mem_efficient_sdp",
    "flash_sdp_enabled",
    "is_built",
    "math_sdp_enabled",
    "matmul",
    "mem_efficient_sdp_enabled",
    "sdp_kernel",
]


def is_built() -> bool:
    """Whether lucid was built with CUDA support: always False (MLX reaches CUDA GPUs instead)."""
    return False


class _MatmulSwitches:
    """``lucid.backends.cuda.matmul``: ``allow_tf32`` and the reduced-precision reductions."""

    def __init__(self) -> None:
        self.allow_fp16_reduced_precision_reduction = True
        self.allow_bf16_reduced_precision_reduction = True

    @property
    def allow_tf32(self) -> bool:
        return _precision.get_float32_matmul_precision() != "highest"

    @allow_tf32.setter
    def allow_tf32(self, value: bool) -> None:
        _precision.set_float32_matmul_precision("high" if value else "highest")


matmul = _MatmulSwitches()


# The attention backends' switches, by PyTorch's names (all enabled, as in PyTorch).
_SDP_ENABLED = {
    "cudnn": True,
    "flash": True,
    "mem_efficient": True,
    "math": True,
    "overrideable": True,
}


def _sdp_available() -> bool:
    """Whether an enabled backend can run lucid's attention (math or flash, as on torch's CPU)."""
    return _SDP_ENABLED["math"] or _SDP_ENABLED["flash"]


def enable_math_sdp(enabled: bool) -> None:
    """Enables or disables the math scaled dot product attention backend."""
    _SDP_ENABLED["math"] = bool(enabled)


def math_sdp_enabled() -> bool:
    """Whether the math scaled dot product attention backend is enabled."""
    return _SDP_ENABLED["math"]


def enable_flash_sdp(enabled: bool) -> None:
    """Enables or disables the flash scaled dot product attention backend."""
    _SDP_ENABLED["flash"] = bool(enabled)


def flash_sdp_enabled() -> bool:
    """Whether the flash scaled dot product attention backend is enabled."""
    return _SDP_ENABLED["flash"]


def enable_mem_efficient_sdp(enabled: bool) -> None:
    """Enables or disables the memory-efficient scaled dot product attention backend."""
    _SDP_ENABLED["mem_efficient"] = bool(enabled)


def mem_efficient_sdp_enabled() -> bool:
    """Whether the memory-efficient scaled dot product attention backend is enabled."""
    return _SDP_ENABLED["mem_efficient"]


def enable_cudnn_sdp(enabled: bool) -> None:
    """Enables or disables the cuDNN scaled dot product attention backend."""
    _SDP_ENABLED["cudnn"] = bool(enabled)


def cudnn_sdp_enabled() -> bool:
    """Whether the cuDNN scaled dot product attention backend is enabled."""
    return _SDP_ENABLED["cudnn"]


@contextlib.contextmanager
def sdp_kernel(
    enable_flash: bool = True,
    enable_math: bool = True,
    enable_mem_efficient: bool = True,
    enable_cudnn: bool = True,
) -> Iterator[dict[str, object]]:
    """Enable only the named attention backends inside the ``with`` block (deprecated in torch,
    as here: ``lucid.nn.attention.sdpa_kernel`` is the new one); the switches come back after."""
    warnings.warn(
        "`torch.backends.cuda.sdp_kernel()` is deprecated. In the future, this context manager "
        "will be removed. Please see `torch.nn.attention.sdpa_kernel()` for the new context "
        "manager, with updated signature.",
        FutureWarning,
        stacklevel=3,
    )
    previous = dict(_SDP_ENABLED)
    _SDP_ENABLED.update(
        flash=bool(enable_flash), math=bool(enable_math), mem_efficient=bool(enable_mem_efficient),
        cudnn=bool(enable_cudnn), overrideable=False,
    )  # fmt: skip
    try:
        yield {}
    finally:
        _SDP_ENABLED.update(previous)
