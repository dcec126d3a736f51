"""``lucid.backends.cuda``: PyTorch's CUDA switches, kept so device-agnostic programs run.

Lucid has no CUDA device, so ``is_built()`` is False and the switches change no computation.
``matmul.allow_tf32`` is the same setting as ``lucid.set_float32_matmul_precision`` (True is
``"high"``, False is ``"highest"``), as in PyTorch.
"""

from __future__ import annotations

from lucid.backends import _precision

__all__ = ["is_built", "matmul"]


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
