"""The exporter's errors and warning (``torch.onnx.errors``'s names)."""

from __future__ import annotations

__all__ = ["OnnxExporterError", "OnnxExporterWarning", "UnsupportedOperatorError"]


class OnnxExporterWarning(UserWarning):
    """Warnings of the exporter (``ONNXProgram.apply_weights`` naming a weight the model
    lacks)."""


class OnnxExporterError(RuntimeError):
    """A model could not be exported; nothing was written."""


class UnsupportedOperatorError(OnnxExporterError):
    """An op of the model has no ONNX mapping (the message names the op and its module)."""
