"""lucid.onnx.export checked by onnxruntime, and lucid.onnx.load running the file back.

Every model runs at a small input; onnxruntime's outputs must match lucid's within 1e-4 at the
export's batch size and (through ``dynamic_axes``) at another one. The model zoo's exports are
checked in tests-integration/test_integration_onnx_zoo.py.
"""

from __future__ import annotations

import io
import math
import os
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest

import lucid
import lucid.nn as nn
import lucid.nn.functional as F
import lucid.onnx
from lucid.onnx._trace import run as run_trace
from lucid.onnx.errors import UnsupportedOperatorError
from lucid.onnx.verification import verify

ort = pytest.importorskip("onnxruntime")

TOL = {"rtol": 1e-4, "atol": 1e-4}


def _first(out: Any) -> lucid.Tensor:
    return out[0] if isinstance(out, tuple) else out


def _lucid_out(model: nn.Module, x: lucid.Tensor) -> np.ndarray:
    with lucid.no_grad():
        return np.asarray(_first(model(x)).numpy())


def _export(model: nn.Module, x: lucid.Tensor, **kwargs: Any) -> bytes:
    buf = io.BytesIO()
    lucid.onnx.export(model, x, buf, input_names=["x"], output_names=["y"], **kwargs)
    return buf.getvalue()


def _run_ort(data: bytes, x: lucid.Tensor) -> np.ndarray:
    session = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    out: np.ndarray = session.run(None, {"x": np.asarray(x.numpy())})[0]
    return out


def check_export(model: nn.Module, x: lucid.Tensor, x_other: lucid.Tensor) -> None:
    """Export with a dynamic batch axis; onnxruntime and lucid.onnx.load agree with lucid at
    the export's batch size and at ``x_other``'s."""
    data = verify(model.eval(), x, others=[x_other], **TOL)
    onnx.checker.check_model(onnx.load_from_string(data), full_check=True)


def test_mlp_exports_and_runs_in_onnxruntime() -> None:
    lucid.manual_seed(0)
    mlp = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 8), nn.Tanh(), nn.Linear(8, 3))
    check_export(mlp, lucid.randn(2, 4), lucid.randn(5, 4))


# -- transformer, LSTM, GPT --------------------------------------------------------------------
def test_transformer_encoder_exports() -> None:
    lucid.manual_seed(0)
    layer = nn.TransformerEncoderLayer(16, 2, 32, batch_first=True)
    check_export(nn.TransformerEncoder(layer, 2), lucid.randn(2, 5, 16), lucid.randn(3, 5, 16))


def test_two_layer_lstm_exports_unrolled() -> None:
    lucid.manual_seed(0)
    lstm = nn.LSTM(8, 16, num_layers=2, batch_first=True)
    check_export(lstm, lucid.randn(2, 5, 8), lucid.randn(3, 5, 8))


def test_fused_lstm_exports_as_its_reference_ops() -> None:
    # the NumPy backend's fused LSTM kernel is recorded as one op; the exporter unrolls it
    lucid.manual_seed(0)
    lstm = nn.LSTM(4, 5, num_layers=2, bias=False, batch_first=True, bidirectional=True)
    x = lucid.randn(2, 3, 4)
    ops = {call.name for call in run_trace(lstm.eval(), (x,)).calls}
    assert "_FusedLSTM" in ops
    check_export(lstm, x, lucid.randn(4, 3, 4))


@pytest.mark.parametrize(
    ("layer", "fused"),
    [(lambda: nn.GRU(4, 5, 2, bias=False, batch_first=True, bidirectional=True), "_FusedGRU"),
     (lambda: nn.RNN(4, 5, nonlinearity="relu", batch_first=True, bidirectional=True),
      "_FusedRNN")],
    ids=["gru", "rnn_relu"],
)  # fmt: skip
def test_fused_gru_and_rnn_export_as_their_reference_ops(layer: Any, fused: str) -> None:
    lucid.manual_seed(0)
    m = layer()
    x = lucid.randn(2, 3, 4)
    ops = {call.name for call in run_trace(m.eval(), (x,)).calls}
    assert fused in ops
    check_export(m, x, lucid.randn(4, 3, 4))


class TinyGPT(nn.Module):
    """Embeddings, one pre-norm causal attention + GELU MLP block, a tied LM head."""

    def __init__(self, vocab: int = 11, dim: int = 16, heads: int = 2, block: int = 8) -> None:
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, dim), nn.Embedding(block, dim)
        self.ln_1, self.ln_2, self.ln_f = nn.LayerNorm(dim), nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.c_attn, self.c_proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))
        self.lm_head = nn.Linear(dim, vocab, bias=False)
        self.wte.weight = self.lm_head.weight
        self.heads = heads

    def forward(self, idx: lucid.Tensor) -> lucid.Tensor:
        b, t = idx.shape
        x = self.wte(idx) + self.wpe(lucid.arange(t))
        c = x.shape[-1]
        q, k, v = self.c_attn(self.ln_1(x)).split(c, dim=2)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.c_proj(y.transpose(1, 2).contiguous().view(b, t, c))
        x = x + self.mlp(self.ln_2(x))
        out: lucid.Tensor = self.lm_head(self.ln_f(x))
        return out


def test_gpt_block_exports_with_token_inputs() -> None:
    lucid.manual_seed(0)
    gpt = TinyGPT()
    check_export(gpt, lucid.randint(0, 11, (2, 8)), lucid.randint(0, 11, (3, 8)))
    proto = onnx.load_from_string(_export(gpt.eval(), lucid.randint(0, 11, (1, 8))))
    tied = [t.name for t in proto.graph.initializer if tuple(t.dims) == (11, 16)]
    assert tied == ["wte.weight"]  # the tied weight is stored once


# -- errors and options ------------------------------------------------------------------------
class Cumulative(nn.Module):
    def forward(self, x: lucid.Tensor) -> lucid.Tensor:
        out: lucid.Tensor = x.cumsum(1)
        return out


def test_an_op_without_mapping_names_the_op_and_its_module(tmp_path: Path) -> None:
    model = nn.Sequential(nn.Linear(3, 3), Cumulative())
    target = tmp_path / "model.onnx"
    with pytest.raises(UnsupportedOperatorError, match=r"Scan .*in 1 \(Cumulative\)"):
        lucid.onnx.export(model, lucid.randn(2, 3), target)
    assert list(tmp_path.iterdir()) == []  # nothing written, not even a temporary file


def test_export_writes_a_checked_file_atomically(tmp_path: Path) -> None:
    lucid.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Sigmoid()).eval()
    target = tmp_path / "model.onnx"
    target.write_bytes(b"old")
    x = lucid.randn(2, 3)
    lucid.onnx.export(model, x, target, input_names=["x"], output_names=["y"])
    assert [p.name for p in tmp_path.iterdir()] == ["model.onnx"]
    onnx.checker.check_model(str(target), full_check=True)
    np.testing.assert_allclose(
        _run_ort(target.read_bytes(), x), _lucid_out(model, x), rtol=1e-4, atol=1e-4
    )
    back = lucid.onnx.load(target)
    np.testing.assert_allclose(_lucid_out(back, x), _lucid_out(model, x), rtol=1e-4, atol=1e-4)


def test_dynamic_axes_become_symbolic_dims() -> None:
    model = nn.Sequential(nn.Linear(3, 4), nn.Flatten()).eval()
    data = _export(model, lucid.randn(2, 3), dynamic_axes={"x": {0: "batch"}, "y": [0]})
    graph = onnx.load_from_string(data).graph
    (x_dims,) = [[d.dim_param or d.dim_value for d in i.type.tensor_type.shape.dim]
                 for i in graph.input if i.name == "x"]  # fmt: skip
    y_dims = [d.dim_param or d.dim_value for d in graph.output[0].type.tensor_type.shape.dim]
    assert x_dims == ["batch", 3] and y_dims == ["y_dynamic_axes_1", 4]


def test_export_params_false_makes_parameters_graph_inputs() -> None:
    model = nn.Linear(3, 2).eval()
    buf = io.BytesIO()
    lucid.onnx.export(model, lucid.randn(1, 3), buf, export_params=False)
    graph = onnx.load_from_string(buf.getvalue()).graph
    assert [i.name for i in graph.input] == ["input", "weight", "bias"]
    assert not graph.initializer


def test_constant_folding_can_be_turned_off() -> None:
    lucid.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2)).eval()
    x = lucid.randn(1, 1, 5, 5)
    folded = onnx.load_from_string(_export(model, x)).graph
    unfolded_data = _export(model, x, do_constant_folding=False)
    unfolded = onnx.load_from_string(unfolded_data).graph
    assert len(unfolded.node) > len(folded.node)
    assert "bn.running_var" not in {t.name for t in folded.initializer}
    np.testing.assert_allclose(
        _run_ort(unfolded_data, x), _lucid_out(model, x), rtol=1e-4, atol=1e-4
    )


def test_bad_arguments_are_value_errors() -> None:
    model, x = nn.Linear(3, 2), lucid.randn(1, 3)
    with pytest.raises(ValueError, match="opset_version must be in"):
        lucid.onnx.export(model, x, io.BytesIO(), opset_version=9)
    with pytest.raises(ValueError, match="neither an input name"):
        lucid.onnx.export(model, x, io.BytesIO(), dynamic_axes={"nope": [0]})


def test_export_runs_in_eval_mode_and_restores_each_module_mode() -> None:
    lucid.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2), nn.Dropout(0.5)).train()
    model[2].eval()
    x = lucid.randn(2, 1, 5, 5)
    data = _export(model, x)
    assert [m.training for m in model.modules()] == [True, True, True, False]
    np.testing.assert_allclose(_run_ort(data, x), _lucid_out(model.eval(), x), rtol=1e-4, atol=1e-4)


class RunningCount(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("count", lucid.zeros(1))

    def forward(self, x: lucid.Tensor) -> lucid.Tensor:
        self.count.add_(1)
        out: lucid.Tensor = x + self.count
        return out


def test_a_buffer_changed_in_place_is_refused_naming_it() -> None:
    with pytest.raises(UnsupportedOperatorError, match="changes 'count' in place"):
        lucid.onnx.export(RunningCount(), lucid.randn(2, 3), io.BytesIO())


def test_load_refuses_operators_it_does_not_run() -> None:
    from onnx import helper

    node = helper.make_node("Hardmax", ["x"], ["y"])
    info = [helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT, [2]) for n in "xy"]
    graph = helper.make_graph([node], "g", info[:1], info[1:])
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(NotImplementedError, match="Hardmax"):
        lucid.onnx.load(io.BytesIO(proto.SerializeToString()))


def test_activations_and_elementwise_ops_export() -> None:
    lucid.manual_seed(0)

    class Mix(nn.Module):
        def forward(self, x: lucid.Tensor) -> lucid.Tensor:
            y = F.leaky_relu(x, 0.1) + F.elu(x) + F.selu(x) + F.softplus(x) + F.hardsigmoid(x)
            y = y + F.gelu(x, approximate="tanh") + F.relu6(x) + F.logsigmoid(x) + F.silu(x)
            y = y * x.abs().sqrt().clamp(0.1, 2.0) - x.exp() / (1 + x.square())
            y = y + F.pad(x, (1, 2), value=0.5)[:, 1:-2]
            z = lucid.where(x > 0, y, -y).softmax(-1) + x.log_softmax(-1).amax(-1, keepdim=True)
            out: lucid.Tensor = z.mean(1, keepdim=True) + z.sum() * math.pi + x.max(1)[0][:, None]
            return out

    check_export(Mix(), lucid.randn(2, 6), lucid.randn(4, 6))


def test_dtype_casts_export() -> None:
    lucid.manual_seed(0)

    class Casts(nn.Module):
        def forward(self, x: lucid.Tensor) -> lucid.Tensor:
            wide = x.to(lucid.float64).square().sum(1, keepdim=True).to(lucid.float32)
            out: lucid.Tensor = (x > 0).to(lucid.float32) * x + wide
            return out

    check_export(Casts(), lucid.randn(2, 6), lucid.randn(4, 6))


def test_indexing_reshapes_and_joins_export() -> None:
    lucid.manual_seed(0)

    class Shapes(nn.Module):
        def forward(self, x: lucid.Tensor) -> lucid.Tensor:
            a = x[:, 1:5:2, None, -1] + x[..., 0].unsqueeze(1)
            b = lucid.cat([a.flatten(1), x[:, -2:].reshape(x.shape[0], -1)], dim=1)
            c, d = b.chunk(2, dim=1)
            e = lucid.stack([c, d], dim=2).permute(0, 2, 1).tril()
            out: lucid.Tensor = e.flatten(1) + x.flip(1)[:, 0, :1] * x.pow(2).sum()
            return out

    check_export(Shapes(), lucid.randn(2, 6, 3), lucid.randn(3, 6, 3))


@pytest.mark.parametrize(
    ("layer", "shape"),
    [
        (nn.GRU(4, 6, batch_first=True), (2, 3, 4)),
        (nn.RNN(4, 6, num_layers=2), (3, 2, 4)),
        (nn.Sequential(nn.Conv1d(2, 3, 3, padding=1), nn.AvgPool1d(2)), (2, 2, 8)),
        (nn.Sequential(nn.ConvTranspose2d(2, 3, 3, stride=2), nn.PReLU(3)), (2, 2, 4, 4)),
        (nn.Sequential(nn.Conv2d(2, 4, 3, groups=2, padding="same"), nn.Hardswish()), (2, 2, 5, 5)),
        (nn.Sequential(nn.Identity(), nn.AdaptiveMaxPool2d(2)), (2, 1, 4, 6)),
        (nn.MultiheadAttention(8, 2, batch_first=True), (2, 4, 8)),
    ],
    ids=["gru", "rnn", "conv1d", "conv_transpose", "grouped_same", "adaptive_max", "mha"],
)
def test_layers_export(layer: nn.Module, shape: tuple[int, ...]) -> None:
    lucid.manual_seed(0)

    class Wrapped(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.layer = layer

        def forward(self, x: lucid.Tensor) -> lucid.Tensor:
            if isinstance(self.layer, nn.MultiheadAttention):
                return _first(self.layer(x, x, x))
            return _first(self.layer(x))

    batch_dim = 1 if isinstance(layer, nn.RNN) else 0
    other = list(shape)
    other[batch_dim] += 2
    x, x_other = lucid.randn(*shape), lucid.randn(*other)
    if batch_dim == 0:
        check_export(Wrapped(), x, x_other)
    else:
        verify(Wrapped().eval(), x, batch_dynamic=False, **TOL)


def test_written_file_has_the_usual_permissions(tmp_path: Path) -> None:
    target = tmp_path / "m.onnx"
    lucid.onnx.export(nn.Linear(2, 2), lucid.randn(1, 2), target)
    mask = os.umask(0)
    os.umask(mask)
    assert target.stat().st_mode & 0o777 == 0o666 & ~mask


class Reductions(nn.Module):
    def forward(self, x: lucid.Tensor) -> lucid.Tensor:
        out: lucid.Tensor = x.amax(-1) + x.max(1)[0] + x.argmax(1).float() + x.amin(1)
        flags = (x > 0).all(1).float() + (x > 1).any(1).float()
        return out + flags + x.mean((0, 1))  # a mean over the dynamic batch axis


@pytest.mark.parametrize("opset", [17, 18, 20])
def test_reductions_export_at_several_opsets(opset: int) -> None:
    lucid.manual_seed(0)
    verify(Reductions(), lucid.randn(2, 6), others=[lucid.randn(3, 6)], opset_version=opset, **TOL)


def test_a_constant_that_follows_a_dynamic_axis_is_refused() -> None:
    class Causal(nn.Module):
        def forward(self, x: lucid.Tensor) -> lucid.Tensor:
            return F.scaled_dot_product_attention(x, x, x, is_causal=True)

    with pytest.raises(UnsupportedOperatorError, match="follows a dynamic axis"):
        _export(Causal(), lucid.randn(2, 5, 8), dynamic_axes={"x": {0: "b", 1: "t"}})
    verify(Causal(), lucid.randn(2, 5, 8), others=[lucid.randn(4, 5, 8)], **TOL)  # batch only


LAYERS = {
    "softmin": (lambda: nn.Softmin(1), (2, 5)),
    "softsign": (lambda: nn.Softsign(), (2, 5)),
    "tanhshrink": (lambda: nn.Tanhshrink(), (2, 5)),
    "mish": (lambda: nn.Mish(), (2, 5)),
    "glu": (lambda: nn.GLU(), (2, 6)),
    "hardshrink": (lambda: nn.Hardshrink(), (2, 5)),
    "softshrink": (lambda: nn.Softshrink(), (2, 5)),
    "celu": (lambda: nn.CELU(0.7), (2, 5)),
    "threshold": (lambda: nn.Threshold(0.1, 2.0), (2, 5)),
    "softplus_beta": (lambda: nn.Softplus(2.0), (2, 5)),
    "hardtanh": (lambda: nn.Hardtanh(-0.5, 0.5), (2, 5)),
    "group_norm": (lambda: nn.GroupNorm(2, 4), (2, 4, 3, 3)),
    "instance_norm": (lambda: nn.InstanceNorm2d(4), (2, 4, 3, 3)),
    "layer_norm_plain": (lambda: nn.LayerNorm(5, elementwise_affine=False), (2, 5)),
    "batch_norm_1d": (lambda: nn.BatchNorm1d(5), (2, 5)),
    "max_pool_1d": (lambda: nn.MaxPool1d(2), (2, 3, 8)),
    "max_pool_3d": (lambda: nn.MaxPool3d(2), (2, 1, 4, 4, 4)),
    "avg_pool_3d": (lambda: nn.AvgPool3d(2), (2, 1, 4, 4, 4)),
    "max_pool_ceil": (lambda: nn.MaxPool2d(2, ceil_mode=True), (2, 1, 5, 5)),
    "avg_pool_pad": (lambda: nn.AvgPool2d(3, 1, 1, count_include_pad=False), (2, 1, 5, 5)),
    "adaptive_avg_1d": (lambda: nn.AdaptiveAvgPool1d(2), (2, 3, 8)),
    "conv_3d": (lambda: nn.Conv3d(1, 2, 3, padding=1), (2, 1, 4, 4, 4)),
    "upsample_nearest": (lambda: nn.Upsample(scale_factor=2), (2, 1, 3, 3)),
    "upsample_bilinear": (lambda: nn.Upsample(scale_factor=2, mode="bilinear"), (2, 1, 3, 3)),
    "pixel_shuffle": (lambda: nn.PixelShuffle(2), (2, 4, 3, 3)),
    "unflatten": (lambda: nn.Unflatten(1, (2, 3)), (2, 6)),
    "bidirectional_lstm": (lambda: nn.LSTM(4, 5, bidirectional=True, batch_first=True), (2, 3, 4)),
    "bidirectional_gru": (lambda: nn.GRU(4, 5, bidirectional=True, batch_first=True), (2, 3, 4)),
    "lstm_cell": (lambda: nn.LSTMCell(4, 5), (2, 4)),
    "gru_cell": (lambda: nn.GRUCell(4, 5), (2, 4)),
    "lp_pool": (lambda: nn.LPPool2d(2, 2), (2, 1, 4, 4)),
    "local_response_norm": (lambda: nn.LocalResponseNorm(3), (2, 5, 3, 3)),
    "adaptive_avg_uneven": (lambda: nn.AdaptiveAvgPool2d(3), (2, 1, 7, 7)),
    "conv_transpose_1d": (lambda: nn.ConvTranspose1d(2, 3, 3, 2, output_padding=1), (2, 2, 5)),
    "conv_transpose_3d": (lambda: nn.ConvTranspose3d(1, 2, 2, stride=2), (2, 1, 3, 3, 3)),
    "upsample_bicubic": (lambda: nn.Upsample(scale_factor=2, mode="bicubic"), (2, 1, 3, 3)),
    "pixel_unshuffle": (lambda: nn.PixelUnshuffle(2), (2, 1, 4, 4)),
}


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_nn_layer_exports(name: str) -> None:
    lucid.manual_seed(0)
    make, shape = LAYERS[name]

    class Wrapped(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.layer = make()

        def forward(self, x: lucid.Tensor) -> lucid.Tensor:
            return _first(self.layer(x))

    verify(Wrapped().eval(), lucid.randn(*shape), others=[lucid.randn(3, *shape[1:])], **TOL)


def test_transformer_and_two_input_layers_export() -> None:
    lucid.manual_seed(0)

    class Pair(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.transformer = nn.Transformer(8, 2, 1, 1, 16, batch_first=True)
            self.bilinear = nn.Bilinear(8, 8, 8)

        def forward(self, src: lucid.Tensor, tgt: lucid.Tensor) -> lucid.Tensor:
            y = self.transformer(src, tgt)
            out: lucid.Tensor = (
                self.bilinear(y, tgt) + nn.functional.cosine_similarity(y, tgt, dim=-1)[..., None]
            )
            return out

    src, tgt = lucid.randn(2, 3, 8), lucid.randn(2, 4, 8)
    verify(Pair().eval(), (src, tgt), others=[(lucid.randn(3, 3, 8), lucid.randn(3, 4, 8))], **TOL)


def test_a_detached_intermediate_stays_a_graph_value() -> None:
    class Detaching(nn.Module):
        def forward(self, x: lucid.Tensor) -> lucid.Tensor:
            y = x * 2
            out: lucid.Tensor = y.detach() + y.data + 1
            return out

    # another input of the same shape: a detached value frozen as a constant would show
    verify(Detaching(), lucid.randn(2, 3), others=[lucid.randn(2, 3)], batch_dynamic=False, **TOL)


@pytest.mark.mlx
def test_a_model_on_mlx_exports() -> None:
    pytest.importorskip("mlx.core")
    lucid.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(1, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(), nn.Linear(64, 3)
    ).to("mlx")
    x, x_other = lucid.randn(2, 1, 6, 6).to("mlx"), lucid.randn(3, 1, 6, 6).to("mlx")
    verify(model.eval(), x, others=[x_other], **TOL)


def test_a_value_computed_through_numpy_is_refused() -> None:
    class ThroughNumpy(nn.Module):
        def forward(self, x: lucid.Tensor) -> lucid.Tensor:
            scale = lucid.tensor(np.abs(x.numpy()).max(1, keepdims=True))  # not a lucid op
            out: lucid.Tensor = x / scale
            return out

    with pytest.raises(lucid.onnx.OnnxExporterError, match="computed outside lucid's ops"):
        _export(ThroughNumpy(), lucid.randn(2, 3))


def test_verbose_prints_the_graph(capsys: pytest.CaptureFixture[str]) -> None:
    lucid.onnx.export(nn.Linear(3, 2), lucid.randn(1, 3), io.BytesIO(), verbose=True)
    assert "Gemm" in capsys.readouterr().out
