"""lucid.compile on functions: torch.compile's conventions, guards, graph breaks, explain."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lucid
from lucid.compiler import Unsupported


def _same(a: lucid.Tensor, b: lucid.Tensor) -> None:
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


def step(x: lucid.Tensor, w: lucid.Tensor) -> lucid.Tensor:
    return ((x @ w).tanh() * 2.0).sum()


def test_replay_matches_eager_values_and_gradients_on_new_inputs() -> None:
    lucid.manual_seed(0)
    w = lucid.randn(4, 3, dtype=lucid.float64, requires_grad=True)
    compiled = lucid.compile(step)
    for _ in range(3):
        x = lucid.randn(5, 4, dtype=lucid.float64)
        got, want = compiled(x, w), step(x, w)
        _same(got, want)
        (g1,) = lucid.autograd.grad(got, w)
        (g2,) = lucid.autograd.grad(want, w)
        _same(g1, g2)
    assert len(compiled.cache) == 1 and compiled.log[0].program is not None
    assert lucid.autograd.gradcheck(lambda w: compiled(x, w), (w,))


def test_guards_shape_dtype_grad_mode_and_python_scalars() -> None:
    compiled = lucid.compile(lambda x, k: x * k)
    x = lucid.ones(2)
    _same(compiled(x, 2), x * 2)
    _same(compiled(x, 3), x * 3)  # a new scalar: a new signature
    _same(compiled(lucid.ones(3), 3), lucid.ones(3) * 3)
    _same(compiled(lucid.ones(3, dtype=lucid.float64), 3), lucid.full((3,), 3.0))
    with lucid.no_grad():
        compiled(lucid.ones(3), 3)
    assert len(compiled.cache) == 5


def test_dynamic_and_the_recompile_limit_fall_back_to_eager_with_a_reason() -> None:
    compiled = lucid.compile(lambda x: x + 1, dynamic=True)
    _same(compiled(lucid.ones(2)), lucid.full((2,), 2.0))
    assert compiled.log[0].program is None and "dynamic=True" in compiled.log[0].reasons[0].reason
    many = lucid.compile(lambda x: x + 1)
    for n in range(1, lucid.compiler.RECOMPILE_LIMIT + 3):
        _same(many(lucid.ones(n)), lucid.full((n,), 2.0))
    assert "recompile_limit" in many.log[-1].reasons[0].reason


def test_value_reads_are_graph_breaks_and_fullgraph_names_the_line() -> None:
    def branchy(x: lucid.Tensor) -> lucid.Tensor:
        return x * 2 if bool(x.sum() > 0) else x * -1

    compiled = lucid.compile(branchy)
    for sign in (1.0, -1.0):
        _same(compiled(lucid.full((2,), sign)), branchy(lucid.full((2,), sign)))
    report = lucid.compiler.explain(branchy)(lucid.ones(2))
    assert report.graph_count == 0 and report.graph_break_count == 1
    assert "Tensor.__bool__()" in str(report)
    with pytest.raises(Unsupported, match=r"test_core_compile.py:\d+ in branchy"):
        lucid.compile(branchy, fullgraph=True)(lucid.ones(2))


def test_dropout_style_sampling_draws_as_eager_does() -> None:
    def noisy(x: lucid.Tensor) -> lucid.Tensor:
        return x * (lucid.rand(*x.shape) >= 0.5).float() + lucid.randn(*x.shape)

    compiled = lucid.compile(noisy)
    x = lucid.ones(50)
    for seed in (1, 2, 3):
        lucid.manual_seed(seed)
        got = compiled(x)
        after = lucid.rand(1)
        lucid.manual_seed(seed)
        _same(got, noisy(x))
        _same(after, lucid.rand(1))  # the generator moved on as much


def test_inplace_writes_aliases_and_grad_mode_switches_replay() -> None:
    state = lucid.zeros(3)

    def f(x: lucid.Tensor) -> lucid.Tensor:
        buf = lucid.zeros(3)  # a factory constant written in place: fresh at every call
        buf[1:] = x[:2]
        with lucid.no_grad():
            state.add_(x)  # an outside buffer: written at every call
        return (buf + x.detach() * 0 + x).sum()

    compiled = lucid.compile(f)
    x = lucid.tensor([1.0, 2.0, 3.0], requires_grad=True)
    for _ in range(3):
        out = compiled(x)
        assert out.item() == 9.0 and out.requires_grad
    _same(state, lucid.tensor([3.0, 6.0, 9.0]))
    out.backward()
    _same(x.grad, lucid.tensor([2.0, 2.0, 1.0]))


def test_api_conventions() -> None:
    @lucid.compile(mode="reduce-overhead")
    def double(x: lucid.Tensor) -> lucid.Tensor:
        return x * 2

    assert double.__name__ == "double" and double.__wrapped__ is not None
    _same(double(lucid.ones(2)), lucid.full((2,), 2.0))
    assert lucid.compile(step, disable=True) is step
    with pytest.raises(RuntimeError, match="Unrecognized mode=fast"):
        lucid.compile(step, mode="fast")
    with pytest.raises(RuntimeError, match="Invalid backend: 'tvm'"):
        lucid.compile(step, backend="tvm")
    with pytest.raises(RuntimeError, match="expects a callable"):
        lucid.compile(3)
    assert "inductor" in lucid.compiler.list_backends()
    lucid.compiler.reset()
    assert not double.cache


def test_disable_and_is_compiling() -> None:
    seen: list[bool] = []

    @lucid.compiler.disable
    def log(x: lucid.Tensor) -> lucid.Tensor:
        seen.append(lucid.compiler.is_compiling())
        return x

    compiled = lucid.compile(lambda x: log(x) + 1)
    compiled(lucid.ones(1))
    compiled(lucid.ones(1))
    assert len(seen) == 2  # the disabled call runs every time: its signature runs eagerly
    assert "lucid.compiler.disable" in compiled.log[0].reasons[0].reason
    assert not lucid.compiler.is_compiling()


def test_autocast_is_part_of_the_signature() -> None:
    compiled = lucid.compile(lambda a, b: a @ b)
    a = lucid.ones(2, 2)
    assert compiled(a, a).dtype is lucid.float32
    with lucid.autocast("cpu", dtype=lucid.float16):
        assert compiled(a, a).dtype is (a @ a).dtype
    assert compiled(a, a).dtype is lucid.float32
    assert len(compiled.cache) == 2


class _ArrayMade(lucid.autograd.Function):
    """A backward that computes on arrays outside the ops: replayed as one opaque call."""

    forward_on_arrays = True  # forward computes on backend arrays (ctx.xp)

    @staticmethod
    def forward(ctx, x):  # type: ignore[no-untyped-def]
        ctx.save_for_backward(x)
        return ctx.xp.sin(x)

    @staticmethod
    def backward(ctx, g):  # type: ignore[no-untyped-def]
        (x,) = ctx.saved_tensors
        return lucid.Tensor.from_backend_array(g._data * np.cos(x._data), g._backend)


class _KeepsState(lucid.autograd.Function):
    """A forward that keeps an array on ctx, which the backward's ops read (recorded)."""

    forward_on_arrays = True  # forward computes on backend arrays (ctx.xp)

    @staticmethod
    def forward(ctx, x):  # type: ignore[no-untyped-def]
        ctx.scale = ctx.xp.abs(x) + 1.0
        return x * ctx.scale

    @staticmethod
    def backward(ctx, g):  # type: ignore[no-untyped-def]
        s = lucid.Tensor.from_backend_array(ctx.scale, g._backend)
        x_sign = s * 0 + 1  # ops on the kept array (the sign term is left out on purpose)
        return g * s * x_sign


def _two_outputs(x: lucid.Tensor, w: lucid.Tensor) -> tuple[lucid.Tensor, lucid.Tensor]:
    h = (x @ w).tanh()
    return _ArrayMade.apply(h).sum(dim=1), _KeepsState.apply(h) * 3.0


def _grads(fn, x, w, use_both=True):  # type: ignore[no-untyped-def]
    a, b = fn(x, w)
    loss = (a * a).sum() + (b.sum() if use_both else 0.0)
    return lucid.autograd.grad(loss, (x, w))


def test_array_replay_records_the_backward_and_keeps_opaque_formulas() -> None:
    lucid.manual_seed(0)
    w = lucid.randn(4, 3, dtype=lucid.float64, requires_grad=True)
    compiled = lucid.compile(_two_outputs)
    for k in range(4):
        x = lucid.randn(5, 4, dtype=lucid.float64, requires_grad=True)
        for got, want in zip(compiled(x, w), _two_outputs(x, w)):
            _same(got, want)
            assert k == 0 or got.grad_fn.name() == "CompiledFunctionBackward0"  # 0: capture
        for g1, g2 in zip(_grads(compiled, x, w, k != 2), _grads(_two_outputs, x, w, k != 2)):
            _same(g1, g2)  # k == 2: one output gets no gradient (zeros, as the engine fills)
    arrays = compiled.log[0].program.arrays
    assert arrays is not None and arrays.bwd is not None and not arrays.failed
    assert arrays.opaque == ["_ArrayMade"]  # _KeepsState's ops on its ctx array: recorded


def test_array_replay_backward_rules() -> None:
    w = lucid.randn(3, 3, requires_grad=True)
    compiled = lucid.compile(lambda x: (x @ w).exp().sum())
    x = lucid.randn(2, 3)
    for _ in range(2):
        compiled(x).backward()  # the second backward replays the recorded one
    out = compiled(x)
    with pytest.raises(RuntimeError, match="create_graph=True through it is not supported"):
        lucid.autograd.grad(out, w, create_graph=True)
    out = compiled(x)
    (g1,) = lucid.autograd.grad(out, w, retain_graph=True)
    (g2,) = lucid.autograd.grad(out, w)
    _same(g1, g2)
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        out.backward()
    w.requires_grad_(False)  # the capture's parameter no longer needs a gradient
    out = compiled(x)
    assert not out.requires_grad and out.grad_fn is None
    _same(out, (x @ w).exp().sum())
    with lucid.no_grad():  # a signature of its own, replayed on arrays without a node
        compiled(x)
        got = compiled(x)
    _same(got, (x @ w).exp().sum())
    assert all(e.program.arrays is not None for e in compiled.log)


class _Branchy(lucid.autograd.Function):
    """A backward formula that branches on values: it must stay whole (not recorded)."""

    forward_on_arrays = True  # forward computes on backend arrays (ctx.xp)

    @staticmethod
    def forward(ctx, x):  # type: ignore[no-untyped-def]
        ctx.save_for_backward(x)
        return x * 1.0

    @staticmethod
    def backward(ctx, g):  # type: ignore[no-untyped-def]
        (x,) = ctx.saved_tensors
        return g * 2.0 if bool((x > 0).all()) else g * 3.0


def test_a_backward_that_reads_values_is_not_recorded() -> None:
    w = lucid.ones(3, requires_grad=True)
    compiled = lucid.compile(lambda x: _Branchy.apply(x * w).sum())
    for x in ([1.0, 2.0, 3.0], [1.0, 2.0, 3.0], [-1.0, 2.0, 3.0], [1.0, 1.0, 1.0]):
        t = lucid.tensor(x)
        (got,) = lucid.autograd.grad(compiled(t), w)
        (want,) = lucid.autograd.grad(_Branchy.apply(t * w).sum(), w)
        _same(got, want)
    assert compiled.log[0].program.arrays.opaque == ["_Branchy"]


def _chain_peak(free: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[int, Any]:
    """Peak traced memory of a recorded call of an unfused chain of big elementwise ops."""
    import tracemalloc

    from lucid.compiler import _arrays, _fused_elementwise

    monkeypatch.setattr(_arrays, "FREE_DEAD", free)
    monkeypatch.setattr(_fused_elementwise, "FUSE_ELEMENTWISE", False)
    lucid.compiler.reset()
    x = lucid.tensor(np.random.default_rng(0).standard_normal(1 << 18).astype(np.float32),
                     requires_grad=True)  # fmt: skip
    f = lucid.compile(lambda x: ((x * 2.0 + 1.0).tanh() * 3.0 - x).exp().sum())
    for _ in range(3):  # the capture, the traced backward, the recorded one
        (g,) = lucid.autograd.grad(f(x), [x])
    tracemalloc.start()
    try:
        (g,) = lucid.autograd.grad(f(x), [x])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak, (g.numpy(), f.log[0].program.arrays)


def test_generated_code_drops_each_array_after_its_last_use(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # each intermediate (1 MB here) goes back to the allocator after the op that last reads it,
    # as eager code's temporaries do, instead of living to the function's return
    kept, (g_kept, _) = _chain_peak(False, monkeypatch)
    freed, (g_freed, prog) = _chain_peak(True, monkeypatch)
    np.testing.assert_array_equal(g_freed, g_kept)  # the same ops: the same bits
    assert "    del a" in prog.fwd_source and "    del b" in prog.bwd_source
    assert freed < 0.75 * kept, (freed, kept)
