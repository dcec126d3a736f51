"""lucid.jit (torch.jit's names, run eagerly): the annotations and decorators model code
carries behave as in torch's eager mode; script/trace give the callable back (trace runs it
on the examples with is_tracing() True) and mark it for isinstance/freeze; what needs
TorchScript itself raises NotImplementedError naming what to use."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any, Optional

import numpy as np
import pytest

import lucid
from lucid import jit

# torch 2.13 deprecates TorchScript; lucid.jit warns as it does (checked below)
pytestmark = pytest.mark.filterwarnings("ignore:`torch.jit.:DeprecationWarning")


class _Net:
    """A module-like object (lucid-core's tests do not import lucid.nn)."""

    def __init__(self) -> None:
        self.training = True
        self.w = lucid.full((3,), 2.0)
        self.seen_tracing: list[bool] = []

    def __call__(self, x: lucid.Tensor) -> lucid.Tensor:
        return self.forward(x)

    def forward(self, x: lucid.Tensor) -> lucid.Tensor:
        self.seen_tracing.append(jit.is_tracing())
        return x * self.w if bool(x.sum() > 0) else -x  # Python control flow kept

    def parameters(self) -> list[lucid.Tensor]:
        return [self.w]

    def eval(self) -> _Net:
        self.training = False
        return self


def test_script_and_trace_give_the_callable_back_and_trace_runs_the_examples() -> None:
    net = _Net()
    assert not isinstance(net, jit.ScriptModule)
    traced = jit.trace(net, (lucid.ones(3),))
    assert traced is net and net.seen_tracing == [True] and not jit.is_tracing()
    assert isinstance(net, jit.ScriptModule) and not isinstance(net, jit.ScriptFunction)
    np.testing.assert_array_equal(traced(-lucid.ones(3)).numpy(), np.ones(3))  # other branch

    def f(x: lucid.Tensor) -> lucid.Tensor:
        return x + 1

    assert jit.script(f) is f and isinstance(f, jit.ScriptFunction)
    assert not isinstance(f, jit.ScriptModule)
    assert jit.trace(f, lucid.ones(2)) is f  # one tensor as the example
    other = _Net()
    assert jit.trace_module(other, {"forward": (lucid.ones(3),)}) is other
    assert other.seen_tracing == [True]
    with pytest.raises(RuntimeError, match="example_kwarg_inputs or example_inputs"):
        jit.trace(f)
    with pytest.raises(RuntimeError, match="lucid.jit.script: expected a module"):
        jit.script(3)
    with pytest.raises(NotImplementedError, match="subclass lucid.nn.Module"):
        jit.ScriptModule()


def test_freeze_and_optimize_for_inference_take_scripted_modules_in_eval_mode() -> None:
    net = _Net()
    with pytest.raises(RuntimeError, match="^Freezing expects a ScriptModule as input"):
        jit.freeze(net)
    jit.script(net)
    with pytest.raises(RuntimeError, match="only implemented for modules in eval mode"):
        jit.freeze(net)
    assert jit.optimize_for_inference(net) is net and not net.training
    assert jit.freeze(net) is net


def test_eager_annotations_and_decorators() -> None:
    def f(x: int) -> int:
        return x

    for deco in (jit.ignore, jit.ignore(drop=True), jit.unused, jit.export, jit.interface,
                 jit.script_if_tracing):  # fmt: skip
        assert deco(f) is f
    assert not jit.is_scripting() and jit.annotate(list[int], []) == []
    assert jit.Attribute(3, int) == (3, int) and jit.Attribute(3, int).type is int
    assert jit.isinstance([1, 2], list[int]) and not jit.isinstance([1, "a"], list[int])
    assert jit.isinstance({"a": lucid.ones(1)}, dict[str, lucid.Tensor])
    assert jit.isinstance((1, "a"), tuple[int, str]) and not jit.isinstance((1,), tuple[int, str])
    assert jit.isinstance((1, 2, 3), tuple[int, ...]) and jit.isinstance(None, Optional[int])  # noqa: UP045
    assert jit.isinstance(3, int | None) and jit.isinstance(3, Any)
    with jit.strict_fusion():
        pass
    previous = jit.set_fusion_strategy([("DYNAMIC", 3)])
    assert previous == [("STATIC", 2), ("DYNAMIC", 10)]
    assert jit.set_fusion_strategy(previous) == [("DYNAMIC", 3)]
    jit.enable_onednn_fusion(True)
    assert jit.onednn_fusion_enabled()
    jit.enable_onednn_fusion(False)


def test_fork_wait_and_futures() -> None:
    fut = jit.fork(lambda a, b: a + b, lucid.ones(2), b=lucid.ones(2))
    assert fut.done() and isinstance(fut, jit.Future)
    np.testing.assert_array_equal(jit.wait(fut).numpy(), [2.0, 2.0])
    empty = jit.Future(devices=None)
    assert not empty.done()
    with pytest.raises(RuntimeError, match="no result is set"):
        empty.wait()
    chained = empty.then(lambda f: f.value() * 2)
    seen: list[Any] = []
    empty.add_done_callback(lambda f: seen.append(f.value()))
    empty.set_result(5)
    assert chained.wait() == 10 and seen == [5]
    with pytest.raises(RuntimeError, match="completed once"):
        empty.set_result(6)
    failed = jit.Future()
    failed.set_exception(ValueError("bad"))
    with pytest.raises(ValueError, match="bad"):
        failed.wait()


def test_what_needs_torchscript_says_what_to_use(tmp_path: Path) -> None:
    with pytest.raises(NotImplementedError, match=r"lucid.save\(model.state_dict\(\), f\)"):
        jit.save(_Net(), tmp_path / "m.pt")
    assert not (tmp_path / "m.pt").exists()  # nothing half-written
    missing = tmp_path / "none.pt"
    with pytest.raises(ValueError, match=f"The provided filename {missing} does not exist"):
        jit.load(missing)
    (tmp_path / "scripted.pt").write_bytes(b"PK\x03\x04")
    with pytest.raises(NotImplementedError, match="TorchScript archive's code cannot run"):
        jit.load(tmp_path / "scripted.pt")
    with pytest.raises(NotImplementedError, match="TorchScript source cannot be compiled"):
        jit.CompilationUnit("def f(x): return x")
    with pytest.raises(NotImplementedError, match="export_opnames"):
        jit.export_opnames(_Net())
    assert lucid.jit is jit and issubclass(jit.Error, RuntimeError)


def _deprecations(call: Any) -> list[str]:
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        try:
            call()
        except (NotImplementedError, RuntimeError, ValueError, OSError, AttributeError):
            pass
    return [str(w.message) for w in seen if issubclass(w.category, DeprecationWarning)]


def test_deprecated_functions_warn_once_each_in_torchs_words() -> None:
    assert _deprecations(lambda: jit.script(_Net())) == [
        "`torch.jit.script` is deprecated. Please switch to `torch.compile` or `torch.export`."
    ]
    assert _deprecations(lambda: jit.load("nowhere.pt")) == [
        "`torch.jit.load` is deprecated. Please switch to `torch.export`."
    ]
    assert _deprecations(lambda: jit.annotate(int, 3)) == []
    assert _deprecations(lambda: jit.is_scripting()) == []


@pytest.mark.parity
def test_torch_agrees_on_the_eager_behaviour_and_the_messages(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    cases = [([1, 2], list[int]), ([1, "a"], list[int]), ({"a": 1}, dict[str, int]),
             ((1, "a"), tuple[int, str]), ((1,), tuple[int, str]), (None, Optional[int]),  # noqa: UP045
             ([[1], [2, 3]], list[list[int]]), ({"a": [1.0]}, dict[str, list[int]])]  # fmt: skip
    for obj, tp in cases:
        assert jit.isinstance(obj, tp) == torch.jit.isinstance(obj, tp), (obj, tp)
    assert jit.is_scripting() == torch.jit.is_scripting()
    assert jit.is_tracing() == torch.jit.is_tracing()
    assert jit.Attribute(1, int) == torch.jit.Attribute(1, int)
    with pytest.raises(RuntimeError) as theirs:
        torch.jit.freeze(torch.nn.Linear(2, 2))
    with pytest.raises(RuntimeError) as ours:
        jit.freeze(_Net())
    assert str(ours.value) == str(theirs.value)
    missing = tmp_path / "none.pt"
    with pytest.raises(ValueError) as theirs:
        torch.jit.load(missing)
    with pytest.raises(ValueError) as ours:
        jit.load(missing)
    assert str(ours.value) == str(theirs.value)
    saved = torch.jit.set_fusion_strategy([("STATIC", 1)])
    torch.jit.set_fusion_strategy(saved)
    assert jit.set_fusion_strategy(jit.set_fusion_strategy([("STATIC", 1)])) == [("STATIC", 1)]
    assert jit.set_fusion_strategy([("STATIC", 2), ("DYNAMIC", 10)]) == saved
    assert jit.wait(jit.fork(lambda: 7)) == torch.jit.wait(torch.jit.fork(lambda: 7)) == 7

    def f(x: Any) -> Any:
        return x + 1

    pairs = [
        (lambda: torch.jit.trace(f, torch.ones(2)), lambda: jit.trace(f, lucid.ones(2))),
        (lambda: torch.jit.trace_module(torch.nn.Linear(2, 2), {"forward": (torch.ones(2),)}),
         lambda: jit.trace_module(_Net(), {"forward": (lucid.ones(3),)})),
        (lambda: torch.jit.fork(f, 1), lambda: jit.fork(f, 1)),
        (lambda: torch.jit.set_fusion_strategy(saved), lambda: jit.set_fusion_strategy(saved)),
        (lambda: torch.jit.annotate(int, 1), lambda: jit.annotate(int, 1)),
        (lambda: torch.jit.ignore(f), lambda: jit.ignore(f)),
        (lambda: torch.jit.optimize_for_inference(torch.jit.script(torch.nn.Linear(2, 2)).eval()),
         lambda: jit.optimize_for_inference(jit.script(_Net()).eval())),
    ]  # fmt: skip
    for theirs_call, ours_call in pairs:
        assert set(_deprecations(ours_call)) == set(_deprecations(theirs_call))
