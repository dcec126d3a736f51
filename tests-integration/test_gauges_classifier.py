"""The compatibility gauges' own logic (tools/gauges/gauge_common.py) on tiny fake cases; no torch.

The gauges classify every torch test sample run through lucid; a wrong verdict would move the
numbers the floors guard, so the classifier is tested here on cases whose verdict is known.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
GAUGES = REPO_ROOT / "tools" / "gauges"


def _load_common() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gauges_common", GAUGES / "gauge_common.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["gauges_common"] = module
    spec.loader.exec_module(module)
    return module


common = _load_common()
Leaf = common.Leaf


def arr(values: object, dtype: str = "float32") -> object:
    return Leaf("array", np.asarray(values, dtype=dtype), dtype)


def test_gauges_identical_outputs_pass() -> None:
    out = [arr([[1.0, 2.0], [3.0, np.nan]])]
    assert common.compare_outputs(out, out).kind == "pass"


def test_gauges_small_float_difference_passes_within_both_tolerances() -> None:
    expected = [arr([1000.0, 0.0])]
    got = [arr([1000.0 * (1 + 5e-4), 5e-5])]  # inside rtol at 1000, inside atol at 0
    assert common.compare_outputs(expected, got).kind == "pass"


def test_gauges_value_mismatch_names_the_first_difference() -> None:
    verdict = common.compare_outputs([arr([0.87, 0.5])], [arr([1.23, 0.5])])
    assert verdict.kind == "value"
    assert "at (0,)" in verdict.detail and "0.87" in verdict.detail and "1.23" in verdict.detail


def test_gauges_integer_values_compare_exactly() -> None:
    verdict = common.compare_outputs([arr([1, 2], "int64")], [arr([1, 3], "int64")])
    assert verdict.kind == "value"


def test_gauges_shape_is_checked_before_dtype_and_value() -> None:
    verdict = common.compare_outputs([arr([1.0, 2.0])], [arr([[1.0, 2.0]], "float64")])
    assert verdict.kind == "shape"
    assert "(2,)" in verdict.detail and "(1, 2)" in verdict.detail


def test_gauges_dtype_mismatch_is_reported_as_dtype() -> None:
    verdict = common.compare_outputs([arr([1.0], "float64")], [arr([1.0], "float32")])
    assert verdict.kind == "dtype"
    assert "float64" in verdict.detail and "float32" in verdict.detail


def test_gauges_tensor_against_python_number_is_a_type_difference() -> None:
    verdict = common.compare_outputs([Leaf("scalar", 3, "int")], [arr(3, "int64")])
    assert verdict.kind == "dtype"


def test_gauges_different_number_of_outputs_is_a_shape_mismatch() -> None:
    verdict = common.compare_outputs([arr([1.0]), arr([2.0])], [arr([1.0])])
    assert verdict.kind == "shape"


def test_gauges_worst_leaf_wins() -> None:
    expected = [arr([1.0]), arr([1.0]), arr([1.0])]
    got = [arr([2.0]), arr([1.0], "float64"), arr([1.0])]
    assert common.compare_outputs(expected, got).kind == "dtype"


def test_gauges_random_ops_compare_only_shapes_and_dtypes() -> None:
    expected, got = [arr([0.1, 0.2])], [arr([0.9, 0.4])]
    assert common.compare_outputs(expected, got, values=False).kind == "pass"
    assert common.compare_outputs(expected, [arr([0.9])], values=False).kind == "shape"


def test_gauges_gradients_none_counts_as_zero() -> None:
    zeros = np.zeros(3)
    assert common.compare_grads([None], [zeros]).kind == "pass"
    verdict = common.compare_grads([None], [np.ones(3)], ["x"])
    assert verdict.kind == "gradient" and verdict.detail.startswith("x:")


def test_gauges_gradient_difference_is_reported() -> None:
    verdict = common.compare_grads([np.array([1.0, 2.0])], [np.array([1.0, 2.5])])
    assert verdict.kind == "gradient"
    ok = common.compare_grads([np.array([1.0, 2.0])], [np.array([1.0, 2.0 + 1e-6])])
    assert ok.kind == "pass"


def test_gauges_verdict_rejects_an_unknown_kind() -> None:
    with pytest.raises(ValueError, match="verdict kind must be one of"):
        common.Verdict("wrong")


class _LucidThing:
    pass


_LucidThing.__module__ = "lucid._tensor"


def test_gauges_attribute_error_on_a_lucid_object_means_missing() -> None:
    lucid_module = ModuleType("lucid.special")
    exc = AttributeError("module 'lucid.special' has no attribute 'erfcx'", name="erfcx")
    exc.obj = lucid_module
    assert common.exception_kind(exc) == "missing"
    on_class = AttributeError("type object 'Tensor' has no attribute 'cauchy_'")
    on_class.obj = _LucidThing
    assert common.exception_kind(on_class) == "missing"
    on_instance = AttributeError("'Tensor' object has no attribute 'H'")
    on_instance.obj = _LucidThing()
    assert common.exception_kind(on_instance) == "missing"


def test_gauges_other_failures_are_errors() -> None:
    inner = AttributeError("'numpy.ndarray' object has no attribute 'foo'")
    inner.obj = np.zeros(1)
    assert common.exception_kind(inner) == "error"
    assert common.exception_kind(TypeError("unexpected keyword argument 'dims'")) == "error"


def test_gauges_dtype_names_are_framework_neutral() -> None:
    assert common.dtype_name("torch.float32") == "float32"
    assert common.dtype_name("lucid.int64") == "int64"
    assert common.dtype_name(np.dtype("bool")) == "bool"


DIFFERENCES = """
# Differences

```gauge-deliberate
# pattern                 reason
torch.Tensor.to_sparse*   sparse layouts: lucid has only strided tensors
torch.quantize_per_tensor quantized tensors are not supported
```

```python
torch.not_a_deliberate_name = 1
```
"""


def test_gauges_deliberate_list_is_read_from_its_fence_only() -> None:
    deliberate = common.parse_deliberate(DIFFERENCES)
    assert deliberate.reason("torch.Tensor.to_sparse_csr") == (
        "sparse layouts: lucid has only strided tensors"
    )
    assert deliberate.reason("torch.quantize_per_tensor") is not None
    assert deliberate.reason("torch.Tensor.to_dense") is None
    assert deliberate.reason("torch.not_a_deliberate_name") is None


def test_gauges_deliberate_line_without_reason_is_refused() -> None:
    with pytest.raises(ValueError, match="needs '<torch name pattern>  <reason>'"):
        common.parse_deliberate("```gauge-deliberate\ntorch.foo\n```\n")


def test_gauges_real_differences_page_parses() -> None:
    deliberate = common.load_deliberate(REPO_ROOT / "docs" / "differences.md")
    assert deliberate.entries, "docs/differences.md has no gauge-deliberate list"


def test_gauges_floors_fail_only_below() -> None:
    floors = {"opinfo.samples_pass": 100, "modules.modules_all_pass": 70}
    assert (
        common.check_floors({"opinfo.samples_pass": 100, "modules.modules_all_pass": 71}, floors)
        == []
    )
    failures = common.check_floors({"opinfo.samples_pass": 99}, floors)
    assert any("99 is below its floor 100" in f for f in failures)
    assert any("modules.modules_all_pass: not measured" in f for f in failures)


def test_gauges_floors_only_rise() -> None:
    raised = common.raised_floors({"a": 5, "b": 1}, {"a": 3, "b": 2})
    assert raised == {"a": 5, "b": 2}


def test_gauges_floor_file_is_well_formed() -> None:
    import json

    floors = json.loads((GAUGES / "floors.json").read_text())
    assert floors and all(isinstance(v, int | float) for v in floors.values())


def test_gauges_top_gaps_rank_missing_ops_by_samples_and_name_what_fails() -> None:
    def op(name: str, counts: dict[str, int], examples: list[dict[str, str]]) -> dict:
        return {"torch": name, "variant": "", "counts": counts, "examples": examples}

    missing = {"kind": "missing", "dtype": "float32", "sample": "", "detail": "no lucid.diff"}
    error = {"kind": "error", "dtype": "int64", "sample": "T(5,)", "detail": "RuntimeError: int"}
    report = {
        "opinfo": {
            "ops": [
                op("torch.rot90", {"missing": 3}, []),
                op("torch.diff", {"missing": 9}, [missing]),
                op("torch.nn.functional.relu6", {"pass": 4, "error": 2}, [error]),
            ]
        }
    }
    lines = common.top_gaps(report, limit=5)
    ranked = [line for line in lines if line.startswith("   ")]
    assert "torch.diff: no lucid.diff" in ranked[0] and "torch.rot90" in ranked[1]
    assert any("relu6 [error] int64 T(5,): RuntimeError: int" in line for line in lines)


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"gauges_{name}", GAUGES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_gauges_torchvision_names_are_read_from_sources(tmp_path: Path) -> None:
    tv = _load("gauge_torchvision")
    pkg = tmp_path / "torchvision"
    (pkg / "transforms").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "transforms" / "__init__.py").write_text(
        "from .transforms import *\nfrom ._augment import CutMix, _helper\nfrom typing import Any\n"
    )
    (pkg / "transforms" / "transforms.py").write_text(
        "__all__ = ['Compose', 'Resize']\n__all__ += ['Normalize']\n"
        "class Compose: ...\nclass Resize: ...\nclass Normalize: ...\nclass NotExported: ...\n"
    )
    (pkg / "utils.py").write_text(
        "from torchvision.transforms import Compose\ndef make_grid(x): ...\n_helper = 1\n"
    )
    names = tv.public_names(tmp_path, "torchvision.transforms")
    assert names == {"Compose", "Resize", "Normalize", "CutMix"}
    assert tv.public_names(tmp_path, "torchvision.utils") == {"Compose", "make_grid"}
    assert tv.public_names(tmp_path, "torchvision.absent") == set()


FAKE_REPORT = {
    "opinfo": {
        "summary": {
            "samples": 10,
            "samples_pass": 7,
            "samples_pass_pct": 70.0,
            "present_samples_pass_pct": 87.5,
            "ops_all_pass": 2,
            "ops_with_samples": 3,
            "ops_missing": 1,
            "excluded": 4,
            "deliberate": 0,
            "by_kind": {"missing": 2, "error": 1, "pass": 7},
        },
        "ops": [],
    },
    "errors": {
        "summary": {
            "inputs": 5,
            "raised": 3,
            "same_class": 2,
            "same_message": 1,
            "returned": 1,
            "returned_generic": 0,
            "missing": 1,
        },
        "ops": [],
    },
}


def test_gauges_floor_numbers_are_counts_and_the_returned_count_is_negated() -> None:
    run = _load("run")
    numbers = run.floor_numbers(FAKE_REPORT)
    assert numbers["opinfo.samples_pass"] == 7 and numbers["opinfo.ops_all_pass"] == 2
    assert numbers["errors.minus_returned"] == -1  # one more result for a bad input: below
    assert common.check_floors({**numbers, "errors.minus_returned": -2}, numbers)


def test_gauges_earlier_run_prints_as_a_markdown_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    run = _load("run")
    report = tmp_path / "gaps.json"
    report.write_text(json.dumps(FAKE_REPORT))
    assert run.main(["--from-json", str(report), "--markdown"]) == 0
    table = capsys.readouterr().out
    assert "| OpInfo samples | 7 of 10 pass (70.0%); 87.5% on the ops lucid has |" in table
    assert "returns a result on 1" in table


# --- the signature gauge's comparison (gauge_common.compare_signature) ------------------------

P = common.Param


def _sig(line: str, name: str = "f") -> list[object]:
    parsed = common.parse_doc_signature(line, name)
    assert parsed is not None
    return parsed


def test_gauges_signature_parses_torch_docstring_lines() -> None:
    params = _sig("add(input, other, *, alpha=1, out=None) -> Tensor", "add")
    assert [(p.name, p.kind, p.default) for p in params] == [
        ("input", common.POSITIONAL, common.NO_DEFAULT),
        ("other", common.POSITIONAL, common.NO_DEFAULT),
        ("alpha", common.KEYWORD_ONLY, "1.0"),
        ("out", common.KEYWORD_ONLY, "None"),
    ]
    zeros = _sig("zeros(*size, *, dtype=None, layout=torch.strided) -> Tensor", "zeros")
    assert zeros[0].kind == common.VAR_POSITIONAL and zeros[2].default == "strided"
    assert _sig("linalg.norm(A, ord=None) -> Tensor", "norm")[0].name == "A"
    assert _sig("rrelu(input, lower=1./8) -> Tensor", "rrelu")[1].default == "0.125"
    assert common.parse_doc_signature("Computes the sum. -> nothing", "sum") is None
    doc = "sum(input, *, dtype=None) -> Tensor\n\ntext\n\nsum(input, dim, keepdim=False) -> Tensor"
    assert len(common.doc_signatures(doc, "sum")) == 2


def test_gauges_signature_identical_and_more_lenient_signatures_match() -> None:
    torch_params = _sig("f(input, dim, keepdim=False, *, dtype=None) -> Tensor")
    assert common.compare_signature(torch_params, torch_params) == []
    lenient = [P("input", common.POSITIONAL), P("dim", common.POSITIONAL, "None"),
               P("keepdim", common.POSITIONAL, "False"), P("dtype", common.POSITIONAL, "None"),
               P("extra", common.KEYWORD_ONLY, "1.0")]  # fmt: skip
    assert common.compare_signature(torch_params, lenient) == []
    assert common.compare_signature(torch_params, [P("args", common.VAR_POSITIONAL),
                                                   P("kw", common.VAR_KEYWORD)]) == []  # fmt: skip


def test_gauges_signature_names_each_kind_of_difference() -> None:
    torch_params = _sig("f(input, dim, keepdim=False, *, dtype=None, out=None) -> Tensor")
    lucid_params = [P("input", common.POSITIONAL), P("keepdim", common.POSITIONAL),
                    P("dim", common.KEYWORD_ONLY, "0.0")]  # fmt: skip
    issues = common.compare_signature(torch_params, lucid_params)
    kinds = sorted(i.split(":")[0] for i in issues)
    assert kinds == ["keyword-only", "missing", "order", "required"]
    assert "missing: dtype" in issues  # out= is not compared
    moved = common.compare_signature(
        _sig("f(input, k=2) -> Tensor"),
        [P("input", common.POSITIONAL), P("k", common.POSITIONAL, "3.0")],
    )
    assert moved == ["default: k=2.0 in torch, 3.0 in lucid"]
    sentinel = [P("input", common.POSITIONAL), P("k", common.POSITIONAL, "None")]
    assert common.compare_signature(_sig("f(input, k=2) -> Tensor"), sentinel) == []


def test_gauges_signature_overloads_take_the_best_fit_and_every_missing_name() -> None:
    overloads = [_sig("max(input) -> Tensor", "max"),
                 _sig("max(input, dim, keepdim=False) -> Tensor", "max"),
                 _sig("max(input, other) -> Tensor", "max")]  # fmt: skip
    lucid_params = [P("input", common.POSITIONAL), P("dim", common.POSITIONAL, "None"),
                    P("keepdim", common.POSITIONAL, "False")]  # fmt: skip
    assert common.compare_overloads(overloads, lucid_params) == ["missing: other"]
