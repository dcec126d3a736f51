"""The exporter's errors (``torch.onnx.errors``'s names)."""

from __future__ import annotations


class OnnxExporterError(RuntimeError):
    """A model could not be exported; nothing was written."""


class UnsupportedOperatorError(OnnxExporterError):
    """An op of the model has no ONNX mapping (the message names the op and its module)."""
