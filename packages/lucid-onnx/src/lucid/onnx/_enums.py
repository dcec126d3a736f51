"""``torch.onnx.TrainingMode`` and ``torch.onnx.OperatorExportTypes`` (deprecated in torch,
kept for programs that pass them to ``export``; lucid honours EVAL and ONNX only)."""

from __future__ import annotations

import enum


class TrainingMode(enum.IntEnum):
    """The mode a model is exported in (``export(training=...)``): lucid exports in EVAL."""

    EVAL = 0
    PRESERVE = 1
    TRAINING = 2


class OperatorExportTypes(enum.IntEnum):
    """Which operators an export may write: lucid writes plain ONNX."""

    ONNX = 0
    ONNX_ATEN = 1
    ONNX_ATEN_FALLBACK = 2
    ONNX_FALLTHROUGH = 3
