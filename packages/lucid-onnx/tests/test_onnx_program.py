"""``lucid.onnx.export``'s torch 2.13 form: ``dynamo=True`` returns an ``ONNXProgram`` (save,
call in onnxruntime, optimize, weights), ``dynamo=False`` writes ``f`` and returns None; and
``ExportableModule`` / ``InputObserver``."""

from __future__ import annotations

import io
import os
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

import onnx  # noqa: E402

import lucid  # noqa: E402
import lucid.nn as nn  # noqa: E402
import lucid.onnx  # noqa: E402

RTOL = 1e-5
ATOL = 1e-5


def _mlp() -> nn.Module:
    lucid.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3)).eval()


def _eager(model: nn.Module, *args: Any) -> np.ndarray:
    with lucid.no_grad():
        return np.asarray(model(*args).numpy())


def _close(got: Any, expected: np.ndarray) -> None:
    np.testing.assert_allclose(np.asarray(got), expected, rtol=RTOL, atol=ATOL)


class TwoInputs(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(3, 2)

    def forward(self, x: lucid.Tensor, y: lucid.Tensor, scale: float = 1.0) -> lucid.Tensor:
        return self.fc(x) * scale + y


def test_export_without_f_returns_a_program_that_runs_like_the_model() -> None:
    model = _mlp()
    x = lucid.randn(2, 4)
    program = lucid.onnx.export(model, (x,))
    assert isinstance(program, lucid.onnx.ONNXProgram)
    assert program.exported_program is None
    assert isinstance(program.model_proto, onnx.ModelProto)
    onnx.checker.check_model(program.model_proto, full_check=True)
    outputs = program(x)
    assert isinstance(outputs, tuple) and len(outputs) == 1
    assert isinstance(outputs[0], lucid.Tensor)
    _close(outputs[0].numpy(), _eager(model, x))
    # a tensor (not a tuple) as args, as torch
    _close(lucid.onnx.export(model, x)(x)[0].numpy(), _eager(model, x))
    assert "ONNXProgram(" in repr(program)


def test_tutorial_flow_optimize_save_call(tmp_path: Path) -> None:
    model = _mlp()
    example_inputs = (lucid.randn(1, 4),)
    onnx_program = lucid.onnx.export(model, example_inputs, dynamo=True)
    onnx_program.optimize()
    target = tmp_path / "model.onnx"
    onnx_program.save(str(target))
    assert target.exists() and not (tmp_path / "model.onnx.data").exists()
    expected = _eager(model, *example_inputs)
    _close(onnx_program(*example_inputs)[0].numpy(), expected)
    session = ort.InferenceSession(str(target), providers=["CPUExecutionProvider"])
    (got,) = session.run(None, {"input": example_inputs[0].numpy()})
    _close(got, expected)
    _close(lucid.onnx.load(str(target))(*example_inputs).numpy(), expected)
    onnx_program.release()
    _close(onnx_program.call_reference(*example_inputs)[0].numpy(), expected)


def test_f_with_dynamo_true_writes_and_returns_the_program(tmp_path: Path) -> None:
    model = _mlp()
    x = lucid.randn(2, 4)
    target = tmp_path / "m.onnx"
    program = lucid.onnx.export(model, (x,), target, input_names=["x"], output_names=["y"])
    assert isinstance(program, lucid.onnx.ONNXProgram)
    written = onnx.load(str(target))
    assert written.SerializeToString() == program.model_proto.SerializeToString()
    assert [i.name for i in written.graph.input] == ["x"]
    buf = io.BytesIO()
    assert lucid.onnx.export(model, (x,), buf) is not None
    assert onnx.load_from_string(buf.getvalue()).graph.node


def test_dynamo_false_returns_none_and_writes_f(tmp_path: Path) -> None:
    model = _mlp()
    x = lucid.randn(2, 4)
    target = tmp_path / "legacy.onnx"
    with pytest.warns(DeprecationWarning, match="dynamo=False"):
        assert lucid.onnx.export(model, (x,), str(target), dynamo=False) is None
    session = ort.InferenceSession(str(target), providers=["CPUExecutionProvider"])
    _close(session.run(None, {"input": x.numpy()})[0], _eager(model, x))
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]
    with pytest.warns(DeprecationWarning), pytest.raises(TypeError, match="needs f"):
        lucid.onnx.export(model, (x,), dynamo=False)
    with pytest.warns(DeprecationWarning), pytest.raises(ValueError, match="dynamic_axes"):
        lucid.onnx.export(model, (x,), io.BytesIO(), dynamo=False, dynamic_shapes=({0: "b"},))


def test_save_initializer_options_and_external_data(tmp_path: Path) -> None:
    model = _mlp()
    x = lucid.randn(2, 4)
    program = lucid.onnx.export(model, (x,))
    expected = _eager(model, x)
    names = {t.name for t in program.model.graph.initializer}
    assert names == set(model.state_dict())

    as_inputs = tmp_path / "as_inputs.onnx"
    program.save(as_inputs, keep_initializers_as_inputs=True)
    proto = onnx.load(str(as_inputs))
    assert {i.name for i in proto.graph.input} == {"input"} | names
    assert {t.name for t in proto.graph.initializer} == names

    bare = tmp_path / "bare.onnx"
    program.save(bare, include_initializers=False)
    assert not onnx.load(str(bare)).graph.initializer

    fed = tmp_path / "fed.onnx"
    program.save(fed, include_initializers=False, keep_initializers_as_inputs=True)
    session = ort.InferenceSession(str(fed), providers=["CPUExecutionProvider"])
    feeds = {k: np.asarray(v.numpy()) for k, v in model.state_dict().items()}
    _close(session.run(None, {"input": x.numpy(), **feeds})[0], expected)

    small = tmp_path / "small.onnx"
    program.save(small, external_data=True)  # no weight of 1 KiB: no data file
    assert not (tmp_path / "small.onnx.data").exists()

    lucid.manual_seed(4)
    big = nn.Sequential(nn.Linear(4, 256), nn.Tanh(), nn.Linear(256, 3)).eval()
    ext = tmp_path / "ext.onnx"
    lucid.onnx.export(big, (x,)).save(ext, external_data=True)
    data_size = (tmp_path / "ext.onnx.data").stat().st_size
    assert data_size >= (256 * 4 + 3 * 256) * 4
    assert os.path.getsize(ext) < data_size
    session = ort.InferenceSession(str(ext), providers=["CPUExecutionProvider"])
    _close(session.run(None, {"input": x.numpy()})[0], _eager(big, x))
    with pytest.raises(TypeError, match="file path"):
        program.save(io.BytesIO(), external_data=True)

    # export(..., f, external_data=True) as torch 2.13's default does
    target = tmp_path / "exported.onnx"
    lucid.onnx.export(big, (x,), target, external_data=True)
    assert (tmp_path / "exported.onnx.data").exists()
    _close(lucid.onnx.load(str(target))(x).numpy(), _eager(big, x))


def test_dynamic_shapes_forms_run_at_other_batch_sizes() -> None:
    model = _mlp()
    x = lucid.randn(2, 4)
    other = lucid.randn(5, 4)
    # nn.Sequential.forward's parameter is "x"; any object but None/str/int is dynamic
    for spec in (({0: "batch"},), {"x": {0: "batch"}}, ([object(), None],)):
        program = lucid.onnx.export(model, (x,), dynamic_shapes=spec)
        _close(program(other)[0].numpy(), _eager(model, other))
    program = lucid.onnx.export(model, (x,), dynamic_shapes=({0: "batch"},))
    dim = program.model.graph.input[0].type.tensor_type.shape.dim[0]
    assert dim.dim_param == "batch"
    assert program.model.graph.output[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    program.rename_axes({"batch": "N"})
    assert program.model.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "N"
    with pytest.raises(ValueError, match="not an argument of forward"):
        lucid.onnx.export(model, (x,), dynamic_shapes={"nope": {0: "b"}})
    with pytest.raises(ValueError, match="entries"):
        lucid.onnx.export(model, (x,), dynamic_shapes=({0: "b"}, None))
    with pytest.raises(ValueError, match="axis 5"):
        lucid.onnx.export(model, (x,), dynamic_shapes=({5: "b"},))


def test_kwargs_and_trailing_dict() -> None:
    lucid.manual_seed(1)
    model = TwoInputs().eval()
    x, y = lucid.randn(2, 3), lucid.randn(2, 2)
    with lucid.no_grad():
        expected = np.asarray(model(x, y, scale=2.0).numpy())
    for program in (
        lucid.onnx.export(model, (x,), kwargs={"y": y, "scale": 2.0}),
        lucid.onnx.export(model, (x, {"y": y, "scale": 2.0})),
    ):
        assert [i.name for i in program.model.graph.input] == ["input_0", "input_1"]
        _close(program(x, y=y)[0].numpy(), expected)
    program = lucid.onnx.export(model, (x, y), dynamic_shapes={"x": {0: "b"}, "y": {0: "b"}})
    x5, y5 = lucid.randn(5, 3), lucid.randn(5, 2)
    with lucid.no_grad():
        _close(program(x5, y5)[0].numpy(), np.asarray(model(x5, y5).numpy()))
    with pytest.raises(TypeError, match="do not fit"):
        lucid.onnx.export(model, (x,), kwargs={"nope": y})


def test_optimize_drops_inner_identities_and_keeps_outputs() -> None:
    class Flat(nn.Module):
        def forward(self, x: lucid.Tensor) -> lucid.Tensor:
            return (x.contiguous() + 1).clone() * 2

    x = lucid.randn(2, 3)
    raw = lucid.onnx.export(Flat(), (x,), optimize=False)
    program = lucid.onnx.export(Flat(), (x,), optimize=False)
    program.optimize()
    ops = [n.op_type for n in program.model.graph.node]
    assert ops.count("Identity") <= [n.op_type for n in raw.model.graph.node].count("Identity")
    assert ops[-1] == "Identity"  # the output keeps its name
    _close(program(x)[0].numpy(), raw(x)[0].numpy())
    _close(program(x)[0].numpy(), (x.numpy() + 1) * 2)


def test_apply_weights_and_compute_values() -> None:
    model = _mlp()
    x = lucid.randn(2, 4)
    program = lucid.onnx.export(model, (x,))
    before = program(x)[0].numpy()
    lucid.manual_seed(5)
    other = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3)).eval()
    program.apply_weights(other.state_dict())
    _close(program(x)[0].numpy(), _eager(other, x))
    assert not np.allclose(before, program(x)[0].numpy(), rtol=RTOL, atol=ATOL)
    with pytest.warns(lucid.onnx.errors.OnnxExporterWarning, match="not found"):
        program.apply_weights({"nope": lucid.zeros(2)})

    gemm = program.model.graph.node[0]
    assert gemm.op_type == "Gemm"
    (hidden,) = program.compute_values([gemm.output[0]], (x,))
    with lucid.no_grad():
        _close(hidden.numpy(), np.asarray(other[0](x).numpy()))
    (weight,) = program.compute_values(["0.weight"], (x,))
    _close(weight.numpy(), np.asarray(other.state_dict()["0.weight"].numpy()))
    with pytest.raises(ValueError, match="not found"):
        program.compute_values(["nope"], (x,))
    _close(program(x)[0].numpy(), _eager(other, x))  # the graph's outputs are back


def test_bad_inputs_raise_clear_errors() -> None:
    model = _mlp()
    x = lucid.randn(2, 4)
    program = lucid.onnx.export(model, (x,))
    with pytest.raises(ValueError, match="takes 1 inputs"):
        program(x, x)
    with pytest.raises(ValueError, match="takes 1 inputs"):
        program()
    with pytest.raises(TypeError, match="float32"):
        program(lucid.ones(2, 4, dtype=lucid.float64))
    with pytest.raises(ValueError, match="shape"):
        program(lucid.randn(3, 4))  # static batch of 2
    with pytest.raises(TypeError, match="lucid Tensors"):
        program("text")
    with pytest.raises(TypeError, match="nn.Module"):
        lucid.onnx.export(lambda t: t, (x,))
    for option in (
        {"profile": True},
        {"dump_exported_program": True},
        {"custom_translation_table": {"op": "fn"}},
        {"custom_opsets": {"my": 1}},
        {"export_modules_as_functions": True},
        {"training": lucid.onnx.TrainingMode.TRAINING},
        {"operator_export_type": lucid.onnx.OperatorExportTypes.ONNX_ATEN},
    ):
        with pytest.raises(NotImplementedError, match="lucid"):
            lucid.onnx.export(model, (x,), **option)
    with pytest.raises(NotImplementedError, match="ExportedProgram"):
        lucid.onnx.ONNXProgram(program.model, exported_program=object())


def test_verify_and_report(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    model = _mlp()
    x = lucid.randn(2, 4)
    with caplog.at_level("WARNING"):
        program = lucid.onnx.export(model, (x,), verify=True, report=True, artifacts_dir=tmp_path)
    assert program is not None
    assert not [r for r in caplog.records if "difference" in r.getMessage()]
    (report,) = tmp_path.glob("onnx_export_*_success.md")
    text = report.read_text()
    assert "Gemm" in text and "max abs diff" in text


def test_exportable_module() -> None:
    class Doubler(lucid.onnx.ExportableModule):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(3, 3)

        def forward(self, x: lucid.Tensor) -> lucid.Tensor:
            return self.fc(x) * 2

        def example_arguments(self) -> tuple[tuple[Any, ...], dict[str, Any] | None]:
            return (lucid.randn(2, 3),), None

        def input_names(self) -> list[str]:
            return ["features"]

        def output_names(self) -> list[str]:
            return ["doubled"]

        def dynamic_shapes(self) -> Any:
            return ({0: "batch"},)

    with pytest.raises(TypeError, match="abstract"):
        lucid.onnx.ExportableModule()  # type: ignore[abstract]
    lucid.manual_seed(2)
    module = Doubler().eval()
    x = lucid.randn(6, 3)
    for program in (module.to_onnx(), lucid.onnx.export(module, dynamo=False)):
        assert program is not None
        assert [i.name for i in program.model.graph.input] == ["features"]
        assert [o.name for o in program.model.graph.output] == ["doubled"]
        _close(program(x)[0].numpy(), _eager(module, x))


def test_input_observer_infers_shapes_and_checks_discrepancies() -> None:
    lucid.manual_seed(3)
    model = TwoInputs().eval()
    observer = lucid.onnx.InputObserver()
    with observer(model):
        for n in (2, 3, 5, 7):
            model(lucid.randn(n, 3), lucid.randn(n, 2))
    assert "forward" not in vars(model)  # the method is restored
    assert observer.num_obs() == 3
    shapes = observer.infer_dynamic_shapes()
    assert shapes == ({0: "x_dim_0"}, {0: "y_dim_0"})
    args = observer.infer_arguments()
    assert [tuple(a.shape) for a in args] == [(2, 3), (2, 2)]
    assert observer.infer_dynamic_shapes(set_batch_dimension_for={"x"})[0] == {0: "x_dim_0"}
    program = lucid.onnx.export(model, args, dynamic_shapes=shapes)
    results = observer.check_discrepancies(program, atol=1e-4, rtol=1e-3)
    assert len(results) == 3
    assert all(r["SUCCESS"] for r in results), results
    assert all(float(r["abs"]) <= 1e-4 for r in results)
    with pytest.raises(NotImplementedError, match="value_if_missing"):
        lucid.onnx.InputObserver(value_if_missing={"pixel_values": lucid.zeros(1)})
    with pytest.raises(RuntimeError, match="No inputs"):
        lucid.onnx.InputObserver().infer_arguments()


def test_no_warning_for_plain_export() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lucid.onnx.export(_mlp(), (lucid.randn(1, 4),), io.BytesIO())
