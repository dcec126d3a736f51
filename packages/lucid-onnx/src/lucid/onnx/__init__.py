"""Export Lucid models to ONNX (``torch.onnx.export``'s signature) and run ONNX files in Lucid.

>>> import lucid, lucid.nn as nn
>>> import lucid.onnx
>>> onnx_program = lucid.onnx.export(nn.Linear(3, 2), (lucid.randn(1, 3),), input_names=["x"])
>>> tuple(onnx_program(lucid.ones(1, 3))[0].shape)
(1, 2)
>>> import io
>>> buf = io.BytesIO()
>>> onnx_program.save(buf)
>>> tuple(lucid.onnx.load(io.BytesIO(buf.getvalue()))(lucid.ones(1, 3)).shape)
(1, 2)
"""

from __future__ import annotations

from lucid.onnx import errors
from lucid.onnx._enums import OperatorExportTypes, TrainingMode
from lucid.onnx._export import ExportableModule, export, is_in_onnx_export
from lucid.onnx._input_observer import InputObserver
from lucid.onnx._onnx_program import ONNXProgram
from lucid.onnx._runtime import OnnxModule, load
from lucid.onnx.errors import OnnxExporterError, UnsupportedOperatorError

__all__ = [
    "ExportableModule",
    "InputObserver",
    "ONNXProgram",
    "OnnxExporterError",
    "OnnxModule",
    "UnsupportedOperatorError",
    "errors",
    "export",
    "is_in_onnx_export",
    "load",
]

# Deprecated in torch and kept out of its __all__ too.
_ = (OperatorExportTypes, TrainingMode)
