"""torch.compiler's controls beside lucid.compile (set_stance, the recompile limit from
``lucid._dynamo.config``, wrap_numpy, the no-op hints and guard filters) and the
``torch._dynamo`` names programs call (``lucid._dynamo``: reset, config, graph_break,
mark_dynamic, optimize, run, explain)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import lucid
import lucid._dynamo as dynamo
from lucid import compiler
from lucid.compiler import Unsupported


@pytest.fixture(autouse=True)
def _default_stance_and_config() -> Iterator[None]:
    saved = dynamo.config.get_config_copy()
    yield
    compiler.set_stance("default")
    for name, value in saved.items():
        if name != "cache_size_limit":  # recompile_limit's old name: set through it
            setattr(dynamo.config, name, value)


def _plus_one() -> Any:
    return lucid.compile(lambda x: x.sin() + 1)


def _same(a: lucid.Tensor, b: lucid.Tensor) -> None:
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


def test_force_eager_runs_the_function_and_captures_nothing() -> None:
    f = _plus_one()
    x = lucid.ones(3)
    with compiler.set_stance("force_eager"):
        _same(f(x), x.sin() + 1)
    assert f.cache == {}
    f(x)
    assert len(f.cache) == 1 and f.log[0].program is not None


def test_fail_on_recompile_raises_where_a_capture_is_needed_and_replays_the_rest() -> None:
    f = _plus_one()
    x = lucid.ones(3)
    f(x)
    with compiler.set_stance("fail_on_recompile"):
        _same(f(x), x.sin() + 1)  # captured: replayed
        with pytest.raises(RuntimeError, match=r"^Detected recompile when torch.compile stance "
                           r"is 'fail_on_recompile'\. filename: '.*test_core_compiler_api\.py', "
                           r"function name: '<lambda>'"):  # fmt: skip
            f(lucid.ones(4, 2))
    assert compiler._api._state.stance == "default"  # the block restored it
    assert len(f.cache) == 1


def test_eager_on_recompile_replays_captures_and_runs_new_signatures_eagerly() -> None:
    f = _plus_one()
    f(lucid.ones(3))
    with compiler.set_stance("eager_on_recompile"):
        y = lucid.ones(4, 2)
        _same(f(y), y.sin() + 1)
        assert len(f.cache) == 1  # nothing kept for the new signature
    f(lucid.ones(4, 2))
    assert len(f.cache) == 2


def test_set_stance_as_a_call_a_block_and_a_decorator() -> None:
    f = _plus_one()
    compiler.set_stance("force_eager")  # a plain call: from now on
    f(lucid.ones(2))
    assert f.cache == {}
    compiler.set_stance("default")

    @compiler.set_stance("force_eager")
    def eager_step(x: lucid.Tensor) -> lucid.Tensor:
        assert compiler._api._state.stance == "force_eager"
        return f(x)

    assert compiler._api._state.stance == "default"  # decorating does not change it
    eager_step(lucid.ones(2))
    assert f.cache == {} and compiler._api._state.stance == "default"
    with compiler.set_stance("fail_on_recompile"), compiler.set_stance("force_eager"):
        f(lucid.ones(5))  # the inner stance: eager, no error
    assert compiler._api._state.stance == "default"


def test_set_stance_rejects_unknown_stances_and_a_backend_off_default() -> None:
    with pytest.raises(RuntimeError, match="invalid torch.compile stance 'eager'"):
        compiler.set_stance("eager")
    with pytest.raises(RuntimeError, match="non-default stance cannot have force_backend set"):
        compiler.set_stance("force_eager", force_backend="eager")
    assert compiler._api._state.stance == "default"


def test_the_recompile_limit_is_dynamos_config_and_cache_size_limit_its_old_name() -> None:
    dynamo.config.cache_size_limit = 2
    assert dynamo.config.recompile_limit == 2
    f = _plus_one()
    for n in range(1, 5):
        _same(f(lucid.ones(n)), lucid.ones(n).sin() + 1)
    kept = [e for e in f.log if e.program is not None]
    assert len(kept) == 2
    assert "recompile_limit (2) reached" in f.log[-1].reasons[0].reason


def test_config_patch_and_unknown_names() -> None:
    with dynamo.config.patch(suppress_errors=True, verbose=True):
        assert dynamo.config.suppress_errors and dynamo.config.verbose
    assert not dynamo.config.suppress_errors

    @dynamo.config.patch("recompile_limit", 1)
    def limited() -> int:
        return int(dynamo.config.recompile_limit)

    assert limited() == 1 and dynamo.config.recompile_limit == 8
    with pytest.raises(AttributeError, match=r"torch._dynamo.config.no_such_option does not "):
        dynamo.config.no_such_option = 1
    with pytest.raises(AttributeError, match="does not exist"):
        dynamo.config.patch(no_such_option=1)
    assert {"recompile_limit", "suppress_errors", "cache_size_limit"} <= set(dir(dynamo.config))


def test_graph_break_makes_the_signature_eager_and_fullgraph_raises() -> None:
    def step(x: lucid.Tensor) -> lucid.Tensor:
        y = x * 2
        dynamo.graph_break("logging")
        return y + 1

    x = lucid.arange(3.0)
    compiled = lucid.compile(step)
    _same(compiled(x), x * 2 + 1)
    _same(compiled(x), x * 2 + 1)
    report = dynamo.explain(step)(x)
    assert report.graph_count == 0 and report.graph_break_count == 1
    assert report.break_reasons[0].reason == "torch._dynamo.graph_break(): logging"
    with pytest.raises(Unsupported, match=r"torch._dynamo.graph_break\(\): logging"):
        dynamo.optimize("eager", nopython=True)(step)(x)
    dynamo.graph_break()  # outside a capture: nothing
    assert dynamo.optimize(disable=True)(step) is step


def test_reset_forgets_the_captures() -> None:
    f = _plus_one()
    f(lucid.ones(2))
    dynamo.reset()
    assert f.cache == {} and lucid._dynamo is dynamo


def test_run_replays_without_capturing() -> None:
    f = _plus_one()
    f(lucid.ones(2))
    with dynamo.run():
        f(lucid.ones(6))
    runner = dynamo.run(lambda x: f(x))
    runner(lucid.ones(7))
    assert len(f.cache) == 1 and compiler._api._state.stance == "default"


def test_shape_hints_are_kept_beside_the_tensor_and_dropped_with_it() -> None:
    t = lucid.ones(3, 4)
    dynamo.mark_dynamic(t, 0, min=2, max=64)
    dynamo.maybe_mark_dynamic(t, [1])
    dynamo.mark_static_address(t, guard=True)
    assert dynamo.hints(t) == {"dynamic": {0}, "maybe_dynamic": {1}, "static_address": "guarded"}
    u = lucid.ones(2, 2)
    dynamo.mark_static(u)
    assert dynamo.hints(u) == {"static": {0, 1}} and dynamo.hints(lucid.ones(1)) == {}
    n = len(dynamo._hints)
    del t, u
    gc.collect()
    assert len(dynamo._hints) == n - 2
    with pytest.raises(TypeError, match="mark_dynamic: expected a Tensor, got ndarray"):
        dynamo.mark_dynamic(np.ones(3), 0)
    with pytest.raises(ValueError, match="min"):
        dynamo.mark_dynamic(lucid.ones(2), 0, min=5, max=2)
    marked = object()
    assert dynamo.mark_static(marked) is marked  # a module or class: given back


def test_wrap_numpy_runs_a_numpy_function_on_tensors() -> None:
    @compiler.wrap_numpy
    def fn(a: np.ndarray, pair: tuple[np.ndarray, float]) -> tuple[np.ndarray, np.ndarray]:
        assert type(a) is np.ndarray and type(pair[0]) is np.ndarray
        return a * pair[1], np.concatenate([a, pair[0]])

    x = lucid.arange(3.0)
    scaled, joined = fn(x, (lucid.ones(2), 2.0))
    assert isinstance(scaled, lucid.Tensor) and isinstance(joined, lucid.Tensor)
    np.testing.assert_allclose(scaled.numpy(), [0.0, 2.0, 4.0], rtol=0, atol=0)
    np.testing.assert_allclose(joined.numpy(), [0.0, 1.0, 2.0, 1.0, 1.0], rtol=0, atol=0)


def test_the_tracer_hints_give_the_function_back_or_call_the_original() -> None:
    def f(x: lucid.Tensor) -> lucid.Tensor:
        return x + 1

    assert compiler.allow_in_graph(f) is f
    assert compiler.assume_constant_result(f) is f and f._dynamo_marked_constant  # type: ignore[attr-defined]
    assert compiler.nested_compile_region(f) is f and compiler.nested_compile_region()(f) is f
    calls: list[str] = []

    def original(a: int) -> int:
        calls.append("original")
        return a * 2

    @compiler.substitute_in_graph(original)
    def polyfill(a: int) -> int:
        calls.append("polyfill")
        return a * 2

    assert polyfill(3) == 6 and calls == ["original"]
    with pytest.raises(TypeError, match="allow_in_graph expects a callable"):
        compiler.allow_in_graph(3)


def test_guard_filters_caches_and_backends() -> None:
    entries = [object(), object()]
    filters = (compiler.skip_guard_on_inbuilt_nn_modules_unsafe,
               compiler.skip_guard_on_all_nn_modules_unsafe, compiler.skip_guard_on_globals_unsafe,
               compiler.skip_all_guards_unsafe, compiler.keep_tensor_guards_unsafe,
               compiler.keep_portable_guards_unsafe)  # fmt: skip
    for filt in filters:
        assert filt(entries) == [True, True] and filt([]) == []
    assert compiler.save_cache_artifacts() is None
    assert compiler.load_cache_artifacts(b"") is None
    with pytest.raises(TypeError, match="load_cache_artifacts expects the bytes"):
        compiler.load_cache_artifacts("artifacts")  # type: ignore[arg-type]
    with pytest.raises(NotImplementedError, match="no ahead-of-time compiled functions"):
        compiler.load_compiled_function(None)
    assert compiler.get_default_backend() == "inductor"
    compiler.set_default_backend("eager")
    try:
        assert compiler.get_default_backend() == "eager"
        with pytest.raises(RuntimeError, match="Invalid backend: 'tvm'"):
            compiler.set_default_backend("tvm")
    finally:
        compiler.set_default_backend(None)
    assert compiler.get_default_backend() == "inductor"
    assert compiler.set_enable_guard_collectives(True) is False
    assert compiler.set_enable_guard_collectives(False) is True
    assert not compiler.is_exporting() and not compiler.is_dynamo_compiling()
    assert compiler.cudagraph_mark_step_begin() is None
    seen = []
    lucid.compile(lambda x: seen.append(compiler.is_dynamo_compiling()) or x + 1)(lucid.ones(1))
    assert seen == [True]


@pytest.mark.parity
def test_torchs_words_and_results_for_the_same_calls() -> None:
    torch = pytest.importorskip("torch")
    pytest.importorskip("torch._dynamo")
    # torch.compile's first call turns torch.distributions' argument validation off for the
    # whole process; the distributions' parity tests that run later need it back
    validate = torch.distributions.Distribution._validate_args
    try:
        _compare_with_torch(torch)
    finally:
        torch.distributions.Distribution.set_default_validate_args(validate)
        torch.compiler.set_stance("default")


def _compare_with_torch(torch: Any) -> None:

    with pytest.raises(AttributeError) as theirs:
        torch._dynamo.config.no_such_option = 1
    with pytest.raises(AttributeError) as ours:
        dynamo.config.no_such_option = 1
    assert str(ours.value) == str(theirs.value)
    f_t = torch.compile(lambda x: x.sin() + 1, backend="eager")
    f_t(torch.ones(3))
    with torch.compiler.set_stance("fail_on_recompile"), pytest.raises(RuntimeError) as theirs:
        f_t(torch.ones(4, 2))
    f = _plus_one()
    f(lucid.ones(3))
    with compiler.set_stance("fail_on_recompile"), pytest.raises(RuntimeError) as ours:
        f(lucid.ones(4, 2))
    assert str(ours.value).split(" filename")[0] == str(theirs.value).split(" filename")[0]
    with pytest.raises(RuntimeError) as theirs:
        torch.compiler.set_stance("force_eager", force_backend="eager")
    with pytest.raises(RuntimeError) as ours:
        compiler.set_stance("force_eager", force_backend="eager")
    assert str(ours.value) == str(theirs.value)
    torch.compiler.set_stance("default")
    got = compiler.wrap_numpy(lambda a: a * 2)(lucid.arange(3.0))
    want = torch.compiler.wrap_numpy(lambda a: a * 2)(torch.arange(3.0))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=0, atol=0)
    for name in ("recompile_limit", "cache_size_limit", "suppress_errors", "verbose",
                 "automatic_dynamic_shapes", "assume_static_by_default"):  # fmt: skip
        assert getattr(dynamo.config, name) == getattr(torch._dynamo.config, name), name
    assert compiler.save_cache_artifacts() is torch.compiler.save_cache_artifacts() is None
    assert compiler.get_default_backend() == torch.compiler.get_default_backend()


def test_compile_takes_torchs_per_call_options() -> None:
    # torch 2.13's signature: backend=None (the default backend), name, recompile_limit,
    # isolate_recompiles, shapes_spec
    f = lucid.compile(lambda x: x * 2, backend=None, name="double", recompile_limit=1,
                      isolate_recompiles=True, shapes_spec=None)  # fmt: skip
    assert f.name == "double" and f.recompile_limit == 1
    _same(f(lucid.ones(2)), lucid.full((2,), 2.0))
    # past this call's limit a new signature runs eagerly (the global limit is 8)
    _same(f(lucid.ones(3)), lucid.full((3,), 2.0))
    assert [e.program is not None for e in f.log] == [True, False]
    assert "recompile_limit (1) reached" in f.log[-1].reasons[0].reason
    deco = lucid.compile(recompile_limit=2, name="deco")(lambda x: x + 1)
    assert deco.recompile_limit == 2 and deco.name == "deco"
    with pytest.raises(TypeError, match="recompile_limit must be an int or None, got str"):
        lucid.compile(lambda x: x, recompile_limit="2")


def test_fullgraph_past_the_recompile_limit_is_a_hard_failure() -> None:
    f = lucid.compile(lambda x: x * 2, fullgraph=True, recompile_limit=1)
    f(lucid.ones(2))
    with pytest.raises(dynamo.exc.FailOnRecompileLimitHit,
                       match=r"^Hard failure due to fullgraph=True"):  # fmt: skip
        f(lucid.ones(3))
    assert not isinstance(dynamo.exc.FailOnRecompileLimitHit(), RuntimeError)  # as torch's
    _same(f(lucid.ones(2)), lucid.full((2,), 2.0))  # the capture still replays
    dynamo.config.recompile_limit = 1  # the global limit, too
    g = lucid.compile(lambda x: x * 2, fullgraph=True)
    g(lucid.ones(2))
    with pytest.raises(dynamo.exc.FailOnRecompileLimitHit):
        g(lucid.ones(3))


def test_error_on_recompile_raises_recompile_error() -> None:
    dynamo.config.error_on_recompile = True
    f = lucid.compile(lambda x: x * 2)
    _same(f(lucid.ones(2)), lucid.full((2,), 2.0))  # the first capture is no recompile
    with pytest.raises(dynamo.exc.RecompileError, match=r"^Recompiling function <lambda> in "):
        f(lucid.ones(3))
    _same(f(lucid.ones(2)), lucid.full((2,), 2.0))


def test_the_exception_classes_are_dynamos() -> None:
    exc = dynamo.exc
    assert Unsupported is exc.Unsupported
    for cls in (exc.Unsupported, exc.RecompileError, exc.InvalidBackend,
                exc.BackendCompilerFailed, exc.UserError, exc.TorchRuntimeError,
                exc.InternalTorchDynamoError):  # fmt: skip
        assert issubclass(cls, exc.TorchDynamoException) and issubclass(cls, RuntimeError)
    with pytest.raises(exc.InvalidBackend, match=r"^Invalid backend: 'nope'"):
        lucid.compile(lambda x: x, backend="nope")
    with pytest.raises(exc.InvalidBackend):
        compiler.set_default_backend("nope")
    with pytest.raises(exc.Unsupported):
        lucid.compile(lambda x: x * int(x.sum().item()), fullgraph=True)(lucid.ones(2))


@pytest.mark.parity
def test_torchs_exception_classes_and_words_for_the_new_options() -> None:
    torch = pytest.importorskip("torch")
    pytest.importorskip("torch._dynamo")
    validate = torch.distributions.Distribution._validate_args
    try:
        for name in ("Unsupported", "RecompileError", "InvalidBackend", "UserError",
                     "FailOnRecompileLimitHit", "TorchDynamoException"):  # fmt: skip
            theirs = [c.__name__ for c in getattr(torch._dynamo.exc, name).__mro__]
            ours = [c.__name__ for c in getattr(dynamo.exc, name).__mro__]
            assert ours == theirs, name
        f_t = torch.compile(lambda x: x * 2, backend="eager", fullgraph=True, dynamic=False,
                            recompile_limit=1)  # fmt: skip
        f_t(torch.ones(2))
        with pytest.raises(torch._dynamo.exc.FailOnRecompileLimitHit) as theirs_err:
            f_t(torch.ones(3))
        f = lucid.compile(lambda x: x * 2, fullgraph=True, recompile_limit=1)
        f(lucid.ones(2))
        with pytest.raises(dynamo.exc.FailOnRecompileLimitHit) as ours_err:
            f(lucid.ones(3))
        assert str(ours_err.value).startswith(str(theirs_err.value))
        with pytest.raises(torch._dynamo.exc.InvalidBackend) as t_bad:
            torch.compile(lambda x: x, backend="nope")
        with pytest.raises(dynamo.exc.InvalidBackend) as l_bad:
            lucid.compile(lambda x: x, backend="nope")
        assert str(l_bad.value).split(" see ")[0] == str(t_bad.value).split(" see ")[0]
    finally:
        torch.distributions.Distribution.set_default_validate_args(validate)
        torch._dynamo.reset()
