"""``lucid.onnx.is_in_onnx_export()``: True while ``export`` runs the model (model code that
takes another path for export, as detection heads do), False before and after."""

from __future__ import annotations

import io

import numpy as np
import onnxruntime as ort

import lucid
import lucid.nn as nn
import lucid.onnx


class _Branchy(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.seen: list[bool] = []

    def forward(self, x: lucid.Tensor) -> lucid.Tensor:
        exporting = lucid.onnx.is_in_onnx_export()
        self.seen.append(exporting)
        return x * 2 if exporting else x + 1


def test_the_model_sees_the_export_and_the_file_holds_its_branch() -> None:
    m = _Branchy()
    assert not lucid.onnx.is_in_onnx_export()
    np.testing.assert_array_equal(m(lucid.ones(2)).numpy(), [2.0, 2.0])  # x + 1
    buf = io.BytesIO()
    lucid.onnx.export(m, lucid.full((2,), 3.0), buf)
    assert m.seen[0] is False and all(m.seen[1:]) and len(m.seen) > 1
    assert not lucid.onnx.is_in_onnx_export()
    sess = ort.InferenceSession(buf.getvalue())
    (out,) = sess.run(None, {sess.get_inputs()[0].name: np.full(2, 5.0, np.float32)})
    np.testing.assert_allclose(out, [10.0, 10.0], rtol=0, atol=0)  # the export's x * 2
