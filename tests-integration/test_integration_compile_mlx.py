"""lucid.compile on the MLX backend (``mx.compile``): compiled and eager training steps from
the same seed give the same losses, gradients and optimizer results within float32
tolerances (``mx.compile`` fuses elementwise chains and MLX's vjp sums in its own order), for
LeNet-5, a GPT with dropout off and on (the dropout masks are the same draws: lucid's
generator advances as in eager mode), the word_language_model LSTM, in train and eval mode,
under no_grad, after a shape change and with a graph break."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import lucid
import lucid.nn as nn
import lucid.nn.functional as F
from lucid import optim
from lucid.models import create_model

pytestmark = pytest.mark.mlx
mx = pytest.importorskip("mlx.core")
import lucid.backends.mlx  # noqa: E402,F401 - registers the device and its compiler

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the folder's shared models

from compile_models import GPT, RNNModel  # type: ignore[import-not-found]  # noqa: E402


def _mx_compile_builds() -> bool:
    """Whether mx.compile can build a fused kernel here (MLX's CPU backend compiles them with
    the system C++ compiler; without one every capture keeps the array replay)."""
    try:
        mx.eval(mx.compile(lambda a: mx.exp(a) * 2.0 + 1.0)(mx.ones(3)))
    except Exception:  # noqa: BLE001 - whatever MLX raises for it
        return False
    return True


if not _mx_compile_builds():
    pytest.skip("mx.compile cannot build kernels on this machine", allow_module_level=True)

DEV = "mlx"
# float32 after a few SGD steps: fused kernels and another summation order move the last bits
RTOL, ATOL = 1e-4, 1e-5


def _close(a: Any, b: Any, rtol: float = RTOL, atol: float = ATOL) -> None:
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol)


def _native(run: Any) -> list[Any]:
    """The programs of a compiled module's captures, each checked to run with mx.compile (or,
    for a call needing gradients whose outputs are not one loss, to say why the array replay
    runs it)."""
    progs = [e.program for e in run._compiled_forward.log]
    recompute = lucid.compiler.native_config.recompute_in_backward
    for p in progs:
        assert p is not None
        if "not one loss" in p.native_why and not recompute:
            assert p.arrays is not None and not p.arrays.failed
            continue
        assert p.native is not None, p.native_why
    return progs


@pytest.fixture(params=[False, True], ids=["replay-backward", "recompute-backward"])
def recompute(request: Any, monkeypatch: pytest.MonkeyPatch) -> bool:
    """Both ways a compiled Module returning logits trains: the array replay (the default)
    and mx.compile with the forward computed again in the backward's vjp."""
    monkeypatch.setattr(lucid.compiler.native_config, "recompute_in_backward", request.param)
    return bool(request.param)


def _train(build: Callable[[], nn.Module], batches: list[tuple[Any, ...]], compiled: bool,
           loss_of: Callable[..., lucid.Tensor],
           adam: bool) -> tuple[list[float], list[Any], Any]:  # fmt: skip
    """Seeded Adam (or SGD) steps: the losses, the final parameters, the generator's state
    after."""
    lucid.manual_seed(0)
    model = build().to(DEV)
    run = lucid.compile(model) if compiled else model
    params = model.parameters()
    opt = optim.Adam(params, lr=1e-2) if adam else optim.SGD(params, lr=0.05, momentum=0.9)
    losses = []
    for batch in batches:
        loss = loss_of(run, *batch)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    if compiled:
        _native(run)
    params = [p.detach().numpy().copy() for p in model.parameters()]
    return losses, params, lucid.rand(4, device=DEV).numpy()


def _check(build: Callable[[], nn.Module], batches: list[tuple[Any, ...]],
           loss_of: Callable[..., lucid.Tensor], adam: bool = True) -> None:  # fmt: skip
    eager = _train(build, batches, False, loss_of, adam)
    comp = _train(build, batches, True, loss_of, adam)
    _close(comp[0], eager[0])
    for a, b in zip(comp[1], eager[1]):
        _close(a, b)
    np.testing.assert_array_equal(comp[2], eager[2])  # the generator advanced alike


def _tokens(seed: int, hi: int, shape: tuple[int, ...]) -> lucid.Tensor:
    rng = np.random.default_rng(seed)
    return lucid.from_numpy(rng.integers(0, hi, shape).astype(np.int64)).to(DEV)


def _images(n: int, seed: int) -> tuple[lucid.Tensor, lucid.Tensor]:
    rng = np.random.default_rng(seed)
    x = lucid.from_numpy(rng.standard_normal((n, 1, 28, 28)).astype(np.float32)).to(DEV)
    return x, lucid.from_numpy(rng.integers(0, 10, n).astype(np.int64)).to(DEV)


def test_lenet5_training_steps_match_eager_and_a_shape_change_captures_again(
    recompute: bool,
) -> None:
    batches = [_images(8, s) for s in range(3)] + [_images(5, 9)]  # the last: a new shape
    _check(lambda: create_model("lenet5"), batches, lambda run, x, y: F.cross_entropy(run(x), y))


@pytest.mark.parametrize("p", [0.0, 0.1])
def test_gpt_with_dropout_off_and_on_matches_eager(p: float) -> None:
    batches = [(_tokens(s, 17, (2, 8)), _tokens(s + 10, 17, (2, 8))) for s in range(3)]
    _check(lambda: GPT(p), batches, lambda run, x, y: run(x, y))


def test_lstm_with_dropout_and_carried_hidden_state_matches_eager(recompute: bool) -> None:
    data = [_tokens(s, 23, (6, 3)) for s in range(4)]
    hidden: dict[bool, Any] = {}

    def loss_of(run: Any, x: lucid.Tensor, y: lucid.Tensor) -> lucid.Tensor:
        key = isinstance(run, nn.OptimizedModule)
        h = hidden.get(key) or (lucid.zeros(2, 3, 16, device=DEV),) * 2
        out, h = run(x, tuple(z.detach() for z in h))
        hidden[key] = h
        return F.nll_loss(out, y.reshape(-1))

    _check(RNNModel, [(data[i], data[i + 1]) for i in range(3)], loss_of)


def test_eval_and_no_grad_run_compiled_and_match_eager() -> None:
    lucid.manual_seed(0)
    model = GPT().to(DEV)
    compiled = lucid.compile(model)
    x = _tokens(5, 17, (2, 8))
    for mode in ("train", "eval"):
        getattr(model, mode)()
        for grad in (True, False):
            with lucid.set_grad_enabled(grad):
                for _ in range(2):  # the capture, then a replay
                    lucid.manual_seed(3)
                    a = compiled(x, x)
                    lucid.manual_seed(3)
                    c = model(x, x)
                    assert a.requires_grad == c.requires_grad == grad
                    _close(a.item(), c.item())
    assert len(compiled._compiled_forward.cache) == 4
    _native(compiled)


def test_batch_norm_running_stats_follow_eager(recompute: bool) -> None:
    def build() -> nn.Module:
        return nn.Sequential(nn.Conv2d(1, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(),
                             nn.Linear(4 * 26 * 26, 10))  # fmt: skip

    batches = [_images(4, s) for s in range(3)]
    # SGD: the conv bias before BatchNorm has a gradient that is zero up to rounding noise,
    # which Adam's normalisation would scale up to a step of lr
    _check(build, batches, lambda run, x, y: F.cross_entropy(run(x), y), adam=False)
    models = []
    for compiled in (False, True):
        lucid.manual_seed(0)
        m = build().to(DEV)
        run = lucid.compile(m) if compiled else m
        for x, _ in batches:
            run(x)
        models.append(m)
    _close(models[1][1].running_mean.numpy(), models[0][1].running_mean.numpy())
    _close(models[1][1].running_var.numpy(), models[0][1].running_var.numpy())
    assert models[1][1].num_batches_tracked.item() == 3


def test_a_graph_break_runs_eagerly_and_explain_names_the_replay() -> None:
    class Gate(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = nn.Linear(4, 4)

        def forward(self, x: lucid.Tensor) -> lucid.Tensor:
            y = self.lin(x)
            return y.relu() if y.sum().item() > 0 else -y  # reads a value: a graph break

    lucid.manual_seed(0)
    model = Gate().to(DEV)
    compiled = lucid.compile(model)
    for sign in (1.0, -1.0, 1.0):
        x = lucid.ones(2, 4, device=DEV) * sign
        _close(compiled(x).detach().numpy(), model(x).detach().numpy(), 0, 0)
    report = lucid.compiler.explain(model, lucid.ones(2, 4, device=DEV))
    assert report.graph_count == 0 and report.graph_break_count == 1
    assert "Tensor.item()" in report.break_reasons[0].reason
    with pytest.raises(lucid.compiler.Unsupported, match=r"test_integration_compile_mlx.py:\d+"):
        lucid.compile(model, fullgraph=True)(lucid.ones(2, 4, device=DEV))
    report = lucid.compiler.explain(model.lin, lucid.ones(2, 4, device=DEV))
    assert (
        "array replay; not compiled by the backend: a call needing gradients whose outputs are "
        "not one loss" in report.replay_per_graph[0]
    )
    with lucid.no_grad():
        report = lucid.compiler.explain(model.lin, lucid.ones(2, 4, device=DEV))
    assert report.replay_per_graph == ["mx.compile"]
    assert "Graph 1: mx.compile" in str(report)
    report = lucid.compiler.explain(lambda x: model.lin(x).sum(), lucid.ones(2, 4, device=DEV))
    assert report.replay_per_graph == ["mx.compile (forward and gradients in one call)"]


def test_backward_frees_as_eager_and_is_not_differentiable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lucid.compiler.native_config, "recompute_in_backward", True)
    lucid.manual_seed(0)
    lin = nn.Linear(3, 2).to(DEV)
    compiled = lucid.compile(lin)
    x = lucid.randn(4, 3, device=DEV, requires_grad=True)
    for _ in range(2):
        out = compiled(x)
    assert out.grad_fn is not None and out.grad_fn.name() == "CompiledFunctionBackward0"
    (gx,) = lucid.autograd.grad(out.sum(), x, retain_graph=True)
    _close(gx.numpy(), lucid.autograd.grad(lin(x).sum(), x)[0].numpy())
    out.sum().backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        out.sum().backward()
    with pytest.raises(RuntimeError, match="not differentiable"):
        lucid.autograd.grad(compiled(x).sum(), x, create_graph=True)


def test_an_out_of_range_index_still_raises_at_the_next_sync() -> None:
    emb = nn.Embedding(5, 3).to(DEV)
    compiled = lucid.compile(emb)
    good = lucid.tensor([0, 4], device=DEV)
    for _ in range(2):
        _close(compiled(good).detach().numpy(), emb(good).detach().numpy(), 0, 0)
    with pytest.raises(IndexError, match="out of bounds"):
        compiled(lucid.tensor([1, 7], device=DEV)).sum().item()


def test_a_loss_gets_its_gradients_with_the_forward_and_any_cotangent() -> None:
    lucid.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 1)).to(DEV)
    x = lucid.randn(5, 6, device=DEV)

    def loss_of(x: lucid.Tensor) -> lucid.Tensor:
        return model(x).square().mean()

    compiled = lucid.compile(loss_of)
    for _ in range(2):  # the capture, then a replay
        grads = []
        for run in (compiled, loss_of):
            (run(x) * 3.0).backward()  # a cotangent other than 1 reaches the compiled node
            grads.append([p.grad.numpy().copy() for p in model.parameters()])
            model.zero_grad()
        for a, b in zip(*grads):
            _close(a, b, 1e-5, 1e-6)
    program = compiled.log[0].program
    assert program is not None and program.native is not None and program.native.vg


def test_dropout_inside_attention_keeps_the_array_replay_and_says_why() -> None:
    lucid.manual_seed(0)
    q = lucid.randn(2, 2, 4, 8, device=DEV, requires_grad=True)

    def attend(q: lucid.Tensor) -> lucid.Tensor:
        return F.scaled_dot_product_attention(q, q, q, dropout_p=0.5).sum()

    compiled = lucid.compile(attend)
    for _ in range(2):
        lucid.manual_seed(4)
        got = compiled(q)
        lucid.manual_seed(4)
        _close(got.item(), attend(q).item(), 1e-5, 1e-6)
    program = compiled.log[0].program
    assert program is not None and program.native is None and program.arrays is not None
    assert "draws random numbers inside its forward" in program.native_why


def test_no_grad_and_detach_inside_a_compiled_loss_cut_the_gradient_as_eager() -> None:
    lucid.manual_seed(0)
    lin = nn.Linear(4, 4).to(DEV)
    x = lucid.randn(3, 4, device=DEV)

    def loss_of(x: lucid.Tensor) -> lucid.Tensor:
        h = lin(x)
        with lucid.no_grad():
            target = lin(x).tanh()
        return ((h - target) ** 2).mean() + (h.detach() * h).mean()

    compiled = lucid.compile(loss_of)
    for _ in range(2):
        grads = []
        for run in (compiled, loss_of):
            run(x).backward()
            grads.append([p.grad.numpy().copy() for p in lin.parameters()])
            lin.zero_grad()
        for a, b in zip(*grads):
            _close(a, b, 1e-5, 1e-6)
    program = compiled.log[0].program
    assert program is not None and program.native is not None, program.native_why


@pytest.mark.parametrize("name", ["mobilenet_v3_small", "resnet18"])
def test_zoo_models_compile_in_train_and_eval_with_in_place_activations(name: str) -> None:
    # eval under no_grad: the in-place activations write tensors the function made, which
    # the compiled function rebinds (the array replay cannot run those captures)
    lucid.manual_seed(0)
    model = create_model(name).to(DEV)
    x = lucid.randn(2, 3, 32, 32, device=DEV)

    def loss_of(x: lucid.Tensor) -> lucid.Tensor:
        return (model(x).float() ** 2).mean() + lucid.zeros((), device=DEV)

    compiled = lucid.compile(loss_of)
    for mode in ("train", "eval"):
        getattr(model, mode)()
        for _ in range(2):
            with lucid.set_grad_enabled(mode == "train"):
                lucid.manual_seed(1)  # the same dropout masks
                got = compiled(x)
                lucid.manual_seed(1)
                want = loss_of(x)
            _close(got.item(), want.item(), 1e-4, 1e-6)
    for entry in compiled.log:
        assert entry.program is not None and entry.program.native is not None


def test_logits_and_loss_as_nanogpt_returns_them_train_on_mx_compile() -> None:
    class Head(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = nn.Linear(6, 5)

        def forward(self, x: lucid.Tensor, y: lucid.Tensor) -> tuple[lucid.Tensor, lucid.Tensor]:
            logits = self.lin(x)
            return logits, F.cross_entropy(logits, y)

    lucid.manual_seed(0)
    model = Head().to(DEV)
    compiled = lucid.compile(model)
    x, y = lucid.randn(4, 6, device=DEV), lucid.tensor([0, 1, 4, 2], device=DEV)
    for through_logits in (False, True, False):  # the loss alone; the logits too (full vjp)
        grads = []
        for run in (compiled, model):
            logits, loss = run(x, y)
            total = loss + (logits**2).mean() if through_logits else loss
            total.backward()
            grads.append([p.grad.numpy().copy() for p in model.parameters()])
            model.zero_grad()
        for a, b in zip(*grads):
            _close(a, b, 1e-5, 1e-6)
    program = compiled._compiled_forward.log[0].program
    assert program is not None and program.native is not None, program.native_why
    assert program.native.vg and program.native.vjp_c is not None
