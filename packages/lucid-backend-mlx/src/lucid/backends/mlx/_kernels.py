"""Fused kernels: MLX-native implementations of Functions that declare a ``kernel_name``."""

from __future__ import annotations

from typing import Any

KERNELS: dict[str, Any] = {}
