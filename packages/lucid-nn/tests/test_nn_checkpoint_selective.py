"""Selective activation checkpointing (``context_fn=create_selective_checkpoint_contexts``),
``CheckpointFunction`` and ``GraphExecGroup`` of ``lucid.utils.checkpoint``: gradients equal to
the plain run (float64) and to PyTorch's, saved ops not run again in the recomputation, the
others run again, and torch's errors and their wording."""

from __future__ import annotations

import functools
import random
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lucid
import lucid.nn as nn
from lucid.autograd import observe_ops
from lucid.ops.matmul import Matmul
from lucid.ops.unary import Sin
from lucid.utils.checkpoint import (
    SAC_IGNORED_OPS,
    CheckpointError,
    CheckpointFunction,
    CheckpointPolicy,
    GraphExecGroup,
    SelectiveCheckpointContext,
    checkpoint,
    create_selective_checkpoint_contexts,
)

D = lucid.float64


def _arrays(seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((3, 4)), rng.standard_normal((4, 5)) / 2,
            rng.standard_normal((5, 4)) / 2)  # fmt: skip


def _leaves(seed: int = 0) -> list[lucid.Tensor]:
    return [lucid.tensor(a, dtype=D, requires_grad=True) for a in _arrays(seed)]


def _block(x: Any, w1: Any, w2: Any) -> Any:
    return ((x @ w1).sin() @ w2).tanh() * x


def _sac(policy: Any, **kwargs: Any) -> Callable[[], tuple[Any, Any]]:
    return functools.partial(create_selective_checkpoint_contexts, policy, **kwargs)


def _grads(fn: Callable[..., Any], leaves: list[lucid.Tensor], **ck: Any) -> list[np.ndarray]:
    out = checkpoint(fn, *leaves, use_reentrant=False, **ck) if ck else fn(*leaves)
    return [g.numpy() for g in lucid.autograd.grad(out.pow(2).sum(), leaves)]


def _ops_in_backward(loss: lucid.Tensor) -> list[str]:
    """The ops run while ``loss.backward()`` runs (recomputation and backward formulas)."""
    seen: list[str] = []
    with observe_ops(lambda cls, args, kwargs, out: seen.append(cls.__name__)):
        loss.backward()
    return seen


def _save_matmul(ctx: SelectiveCheckpointContext, op: Any, *args: Any, **kwargs: Any) -> Any:
    return CheckpointPolicy.MUST_SAVE if op is Matmul else CheckpointPolicy.PREFER_RECOMPUTE


@pytest.mark.parametrize("policy", [
    [Matmul], [], _save_matmul,
    lambda ctx, op, *a, **k: CheckpointPolicy.PREFER_SAVE,
    lambda ctx, op, *a, **k: CheckpointPolicy.MUST_RECOMPUTE,
    lambda ctx, op, *a, **k: op.__name__ == "Sin",  # a bool, torch's older contract
], ids=["list", "empty-list", "fn", "save-all", "recompute-all", "bool"])  # fmt: skip
def test_gradients_equal_the_plain_run(policy: Any) -> None:
    plain = _grads(_block, _leaves())
    got = _grads(_block, _leaves(), context_fn=_sac(policy))
    for a, b in zip(got, plain):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_random_policies_on_an_nn_block_with_dropout() -> None:
    lucid.manual_seed(0)
    net = nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.Dropout(0.3), nn.LayerNorm(8),
                        nn.Linear(8, 4)).double()  # fmt: skip
    x = lucid.tensor(np.random.default_rng(1).standard_normal((6, 4)), dtype=D,
                     requires_grad=True)  # fmt: skip
    params = [x, *net.parameters()]

    def grads(policy: Any) -> list[np.ndarray]:
        lucid.manual_seed(7)
        if policy is None:
            y = net(x)
        else:
            y = checkpoint(net, x, use_reentrant=False, context_fn=_sac(policy))
        return [g.numpy() for g in lucid.autograd.grad((y * y).sum(), params)]

    plain = grads(None)
    for seed in range(5):
        rng = random.Random(seed)
        choices = list(CheckpointPolicy)
        got = grads(lambda ctx, op, *a, **k: rng.choice(choices))
        for a, b in zip(got, plain):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_saved_ops_are_not_run_again_and_the_others_are() -> None:
    def count(policy: Any) -> dict[str, int]:
        w = _leaves()
        y = checkpoint(_block, *w, use_reentrant=False, context_fn=_sac(policy))
        seen = _ops_in_backward(y.sum())
        return {name: seen.count(name) for name in ("Matmul", "Sin", "Tanh")}

    plain = count(lambda ctx, op, *a, **k: CheckpointPolicy.MUST_RECOMPUTE)
    saved = count([Matmul])
    # each Matmul's backward runs two more: 2 recomputed + 4 vs 0 + 4
    assert plain == {"Matmul": 6, "Sin": 1, "Tanh": 1}
    assert saved == {"Matmul": 4, "Sin": 1, "Tanh": 1}
    everything = count(lambda ctx, op, *a, **k: CheckpointPolicy.PREFER_SAVE)
    assert everything == {"Matmul": 4, "Sin": 0, "Tanh": 0}


class _Cube(lucid.autograd.Function):
    """A custom op that counts its forward runs."""

    runs = 0

    @staticmethod
    def forward(ctx: Any, x: lucid.Tensor) -> lucid.Tensor:
        _Cube.runs += 1
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx: Any, g: lucid.Tensor) -> lucid.Tensor:
        (x,) = ctx.saved_tensors
        return 3 * x * x * g


@pytest.mark.parametrize(("policy", "runs"), [
    (CheckpointPolicy.MUST_SAVE, 2), (CheckpointPolicy.PREFER_SAVE, 2),
    (CheckpointPolicy.MUST_RECOMPUTE, 4), (CheckpointPolicy.PREFER_RECOMPUTE, 4),
])  # fmt: skip
def test_custom_function_runs_once_when_saved(policy: CheckpointPolicy, runs: int) -> None:
    x, w1, _ = _leaves(2)

    def fn(a: lucid.Tensor) -> lucid.Tensor:
        return _Cube.apply(_Cube.apply(a @ w1).sin())

    def pol(ctx: SelectiveCheckpointContext, op: Any, *args: Any, **kwargs: Any) -> Any:
        return policy if op is _Cube else CheckpointPolicy.PREFER_RECOMPUTE

    _Cube.runs = 0
    y = checkpoint(fn, x, use_reentrant=False, context_fn=_sac(pol))
    assert _Cube.runs == 2
    gx, gw = lucid.autograd.grad(y.sum(), [x, w1])
    assert _Cube.runs == runs
    gx0, gw0 = lucid.autograd.grad(fn(x).sum(), [x, w1])
    np.testing.assert_allclose(gx.numpy(), gx0.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(gw.numpy(), gw0.numpy(), rtol=1e-12, atol=1e-12)


def test_policy_is_asked_once_per_op_in_the_first_run_only() -> None:
    calls: list[tuple[str, bool, tuple[int, ...]]] = []

    def policy(ctx: SelectiveCheckpointContext, op: Any, *args: Any, **kwargs: Any) -> Any:
        assert isinstance(ctx, SelectiveCheckpointContext)
        calls.append((op.__name__, ctx.is_recompute, tuple(ctx.op_output.shape)))
        return CheckpointPolicy.PREFER_RECOMPUTE

    w = _leaves()
    y = checkpoint(_block, *w, use_reentrant=False, context_fn=_sac(policy))
    first = list(calls)
    assert [c[0] for c in first] == ["Matmul", "Sin", "Matmul", "Tanh", "Mul"]
    assert first[0][2] == (3, 5) and not any(c[1] for c in first)
    y.sum().backward()
    assert calls == first  # the recomputation reads the stored decisions
    ctx = SelectiveCheckpointContext(is_recompute=True)
    assert ctx.is_recompute and ctx.op_output is None


def test_the_op_is_the_class_of_its_outputs_node() -> None:
    lin = nn.Linear(4, 4).double()
    x = lucid.tensor(np.random.default_rng(3).standard_normal((2, 4)), dtype=D)
    linear_op = type(lin(x).grad_fn)
    seen: list[Any] = []

    def policy(ctx: SelectiveCheckpointContext, op: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(op)
        return op is linear_op

    y = checkpoint(lambda a: lin(lin(a).relu()), x, use_reentrant=False, context_fn=_sac(policy))
    assert seen.count(linear_op) == 2
    names = _ops_in_backward(y.sum())
    assert linear_op.__name__ not in names and "Relu" in names
    m = lucid.ones(2, 2, requires_grad=True)
    assert type((m @ m).grad_fn) is Matmul  # lucid.mm's op, as a user finds it


def test_the_list_is_checked_like_torchs() -> None:
    with pytest.raises(ValueError, match=r"Expected op in `op_list` to be an OpOverload but "
                       r"got: 3 of type <class 'int'>\. $"):  # fmt: skip
        create_selective_checkpoint_contexts([Matmul, 3])
    with pytest.raises(ValueError, match=r"Expected op in `op_list` to be an OpOverload but "
                       r"got: <function mm .*lucid\.ops\.matmul\.Matmul"):  # fmt: skip
        create_selective_checkpoint_contexts([lucid.mm])
    with pytest.raises(TypeError, match=r"^policy_fn_or_list must be either a function or a "
                       r"list of ops\.$"):  # fmt: skip
        create_selective_checkpoint_contexts((Matmul,))
    assert len(create_selective_checkpoint_contexts([])) == 2
    assert isinstance(SAC_IGNORED_OPS, set)


def test_context_fn_needs_use_reentrant_false_and_no_debug() -> None:
    w = _leaves()
    msg = r"Passing `context_fn` or `debug` is only supported when use_reentrant=False\."
    for flag in (True, None):
        with pytest.raises(ValueError, match=msg):
            checkpoint(_block, *w, use_reentrant=flag, context_fn=_sac([Matmul]))
    with pytest.raises(ValueError, match="debug=True is incompatible with non-default context_fn"):
        checkpoint(_block, *w, use_reentrant=False, debug=True, context_fn=_sac([Matmul]))


def test_a_second_backward_raises() -> None:
    w = _leaves()
    y = checkpoint(_block, *w, use_reentrant=False, context_fn=_sac([Matmul])).sum()
    y.backward(retain_graph=True)
    with pytest.raises(RuntimeError, match=r"^Trying to backward an extra time\. You are only "
                       r"allowed to backward once on any region computed under selective "
                       r"activation checkpoint\.$"):  # fmt: skip
        y.backward()


def test_a_mutated_cache_entry_raises_unless_allowed() -> None:
    x, w1, _ = _leaves(4)

    def fn(a: lucid.Tensor) -> lucid.Tensor:
        h = a @ w1
        h.relu_()
        return (h * 2).sin()

    y = checkpoint(fn, x, use_reentrant=False, context_fn=_sac([Matmul]))
    with pytest.raises(RuntimeError, match="^Tensor cached during selective activation "
                       "checkpoint has been mutated$"):  # fmt: skip
        y.sum().backward()
    x.grad = w1.grad = None
    y = checkpoint(fn, x, use_reentrant=False,
                   context_fn=_sac([Matmul], allow_cache_entry_mutation=True))  # fmt: skip
    gx, gw = lucid.autograd.grad(y.sum(), [x, w1])
    gx0, gw0 = lucid.autograd.grad(fn(x).sum(), [x, w1])
    np.testing.assert_allclose(gx.numpy(), gx0.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(gw.numpy(), gw0.numpy(), rtol=1e-12, atol=1e-12)


def test_a_recomputation_that_runs_other_ops_raises() -> None:
    runs: list[int] = []
    x = lucid.ones(3, dtype=D, requires_grad=True)

    def other_op(a: lucid.Tensor) -> lucid.Tensor:
        runs.append(1)
        return a.sin() if len(runs) == 1 else a.cos()

    def more_calls(a: lucid.Tensor) -> lucid.Tensor:
        runs.append(1)
        return a.sin() if len(runs) == 1 else a.sin().sin()

    y = checkpoint(other_op, x, use_reentrant=False, context_fn=_sac([]))
    with pytest.raises(RuntimeError, match=r"^lucid\.ops\.unary\.Cos encountered during "
                       r"backward but not found in storage\. This can happen if the operations "
                       r"in the checkpointed region are nondeterministic"):  # fmt: skip
        y.sum().backward()
    runs.clear()
    y = checkpoint(more_calls, x, use_reentrant=False, context_fn=_sac([]))
    with pytest.raises(RuntimeError, match=r"^lucid\.ops\.unary\.Sin invocation index 1 "
                       r"encountered during backward but not found in storage\."):  # fmt: skip
        y.sum().backward()


def test_checkpoint_function_is_the_reentrant_scheme() -> None:
    x, w1, w2 = _leaves(5)
    CheckpointFunction.apply(lambda a: _block(a, w1, w2), True, x).pow(2).sum().backward()
    got = [t.grad.numpy().copy() for t in (x, w1, w2)]
    for t in (x, w1, w2):
        t.grad = None
    _block(x, w1, w2).pow(2).sum().backward()
    for g, t in zip(got, (x, w1, w2)):
        np.testing.assert_allclose(g, t.grad.numpy(), rtol=1e-12, atol=1e-12)
    y = CheckpointFunction.apply(lambda a: _block(a, w1, w2), True, x)
    with pytest.raises(RuntimeError, match=r"^When use_reentrant=True, torch\.utils\.checkpoint "
                       r"is incompatible with \.grad\(\) or passing an `inputs` parameter to "
                       r"\.backward\(\)\."):  # fmt: skip
        lucid.autograd.grad(y.sum(), x)
    y = CheckpointFunction.apply(lambda a: a.detach() * 2, True, x)
    with pytest.raises(RuntimeError, match=r"^none of output has requires_grad=True, this "
                       r"checkpoint\(\) is not necessary$"):  # fmt: skip
        y.sum().backward()


def test_checkpoint_function_replays_rng_and_warns_without_grad_inputs() -> None:
    x = lucid.tensor(np.random.default_rng(6).standard_normal(40), dtype=D, requires_grad=True)

    def noisy(a: lucid.Tensor) -> lucid.Tensor:
        return a * (lucid.rand(40, dtype=D) > 0.5) * 2.0

    lucid.manual_seed(3)
    y = CheckpointFunction.apply(noisy, True, x)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2.0 * (y.detach().numpy() != 0), rtol=0, atol=0)
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        CheckpointFunction.apply(noisy, True, lucid.ones(40, dtype=D))


def test_graph_exec_group_recomputes_once_for_disjoint_backward_calls() -> None:
    runs: list[int] = []

    def two(a: lucid.Tensor, b: lucid.Tensor) -> tuple[lucid.Tensor, lucid.Tensor]:
        runs.append(1)
        return a.sin(), b.cos()

    a = lucid.ones(3, dtype=D, requires_grad=True)
    b = lucid.ones(3, dtype=D, requires_grad=True)
    y1, y2 = checkpoint(two, a, b, use_reentrant=False)
    with GraphExecGroup() as group:
        assert GraphExecGroup._get_current_group() is group
        (ga,) = lucid.autograd.grad(y1.sum(), a)
        (gb,) = lucid.autograd.grad(y2.sum(), b)
    assert GraphExecGroup._get_current_group() is None
    assert len(runs) == 2
    np.testing.assert_allclose(ga.numpy(), np.cos(np.ones(3)), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(gb.numpy(), -np.sin(np.ones(3)), rtol=1e-12, atol=1e-12)


def test_graph_exec_group_errors() -> None:
    x = lucid.ones(3, dtype=D, requires_grad=True)
    y = checkpoint(lambda a: a.sin(), x, use_reentrant=False)
    with GraphExecGroup():
        lucid.autograd.grad(y.sum(), x, retain_graph=True)
        with pytest.raises(CheckpointError, match=r"^torch\.utils\.checkpoint: Unpack is being "
                           r"triggered for a tensor that was already unpacked once\. Performing "
                           r"two backward calls that overlap"):  # fmt: skip
            lucid.autograd.grad(y.sum(), x)
        nested = "^GraphExecGroup contexts cannot be nested. Already inside group <lucid"
        with pytest.raises(RuntimeError, match=nested):
            with GraphExecGroup():
                pass
    (g,) = lucid.autograd.grad(y.sum(), x)  # outside the group: recomputed again
    np.testing.assert_allclose(g.numpy(), np.cos(np.ones(3)), rtol=1e-12, atol=1e-12)


# -- against PyTorch -------------------------------------------------------------------------------
def _torch_count_mm(torch: Any) -> Any:
    from torch.utils._python_dispatch import TorchDispatchMode

    class CountMm(TorchDispatchMode):
        def __init__(self) -> None:
            super().__init__()
            self.n = 0

        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None):
            self.n += func is torch.ops.aten.mm.default
            return func(*args, **(kwargs or {}))

    return CountMm()


@pytest.mark.parity
@pytest.mark.parametrize("save_mm", [True, False])
def test_gradients_and_recompute_counts_match_torch(save_mm: bool) -> None:
    torch = pytest.importorskip("torch")
    import torch.utils.checkpoint as tc

    arrays = _arrays(7)
    tl = [torch.tensor(a, requires_grad=True) for a in arrays]
    t_ops = [torch.ops.aten.mm.default] if save_mm else []
    ty = tc.checkpoint(_block, *tl, use_reentrant=False,
                       context_fn=functools.partial(tc.create_selective_checkpoint_contexts,
                                                    t_ops))  # fmt: skip
    counter = _torch_count_mm(torch)
    with counter:
        ty.pow(2).sum().backward()

    ll = [lucid.tensor(a, dtype=D, requires_grad=True) for a in arrays]
    ly = checkpoint(_block, *ll, use_reentrant=False, context_fn=_sac([Matmul] if save_mm else []))
    names = _ops_in_backward(ly.pow(2).sum())
    assert names.count("Matmul") == counter.n == (4 if save_mm else 6)
    for t, lt in zip(tl, ll):
        np.testing.assert_allclose(lt.grad.numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parity
def test_errors_match_torch() -> None:
    torch = pytest.importorskip("torch")
    import torch.utils.checkpoint as tc

    def message(fn: Callable[[], Any]) -> str:
        with pytest.raises(Exception) as info:
            fn()
        return str(info.value)

    assert message(lambda: tc.create_selective_checkpoint_contexts(3)) == message(
        lambda: create_selective_checkpoint_contexts(3)
    )
    t_prefix = message(lambda: tc.create_selective_checkpoint_contexts([3]))
    assert t_prefix == message(lambda: create_selective_checkpoint_contexts([3]))
    tx = torch.ones(2, requires_grad=True)
    t_msg = message(lambda: tc.checkpoint(torch.sin, tx, use_reentrant=True,
                                          context_fn=tc.noop_context_fn, debug=True))  # fmt: skip
    assert t_msg == message(lambda: checkpoint(lucid.sin, lucid.ones(2), use_reentrant=True,
                                               debug=True))  # fmt: skip
    import lucid.utils.checkpoint as lc

    twice = []
    for lib, mod, sin in ((torch, tc, torch.ops.aten.sin.default), (lucid, lc, Sin)):
        a = lib.ones(2, requires_grad=True)
        context_fn = functools.partial(mod.create_selective_checkpoint_contexts, [sin])
        y = mod.checkpoint(lambda v: v.sin().exp(), a, use_reentrant=False, context_fn=context_fn)
        y.sum().backward(retain_graph=True)
        twice.append(message(lambda y=y: y.sum().backward()))
    assert twice[0] == twice[1]
    assert [p.name for p in tc.CheckpointPolicy] == [p.name for p in CheckpointPolicy]
    assert [p.value for p in tc.CheckpointPolicy] == [p.value for p in CheckpointPolicy]


@pytest.mark.parity
def test_checkpoint_function_matches_torch() -> None:
    torch = pytest.importorskip("torch")
    import torch.utils.checkpoint as tc

    arrays = _arrays(9)
    tl = [torch.tensor(a, requires_grad=True) for a in arrays]
    tc.CheckpointFunction.apply(lambda a: _block(a, tl[1], tl[2]), True, tl[0]).sum().backward()
    ll = [lucid.tensor(a, dtype=D, requires_grad=True) for a in arrays]
    CheckpointFunction.apply(lambda a: _block(a, ll[1], ll[2]), True, ll[0]).sum().backward()
    for t, lt in zip(tl, ll):
        np.testing.assert_allclose(lt.grad.numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-12)
