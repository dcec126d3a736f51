"""Export Lucid models to ONNX (``torch.onnx.export``'s signature) and run ONNX files in Lucid.

>>> import io, lucid, lucid.nn as nn
>>> import lucid.onnx
>>> buf = io.BytesIO()
>>> _ = lucid.onnx.export(nn.Linear(3, 2), lucid.randn(1, 3), buf, input_names=["x"])
>>> lucid.onnx.load(io.BytesIO(buf.getvalue()))(lucid.ones(1, 3)).shape
(1, 2)
"""

from __future__ import annotations

from lucid.onnx import errors
from lucid.onnx._export import export, is_in_onnx_export
from lucid.onnx._runtime import OnnxModule, load
from lucid.onnx.errors import OnnxExporterError, UnsupportedOperatorError

__all__ = [
    "OnnxExporterError",
    "OnnxModule",
    "UnsupportedOperatorError",
    "errors",
    "export",
    "is_in_onnx_export",
    "load",
]
