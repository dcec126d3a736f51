"""lucid.compile on whole training steps: compiled and eager runs from the same seed give the
same outputs, gradients and optimizer results, bit for bit (nothing is fused), for LeNet-5,
a GPT (nanoGPT's block, with dropout), the word_language_model LSTM and zoo families; in
train and eval mode, under no_grad, after a shape change and with a graph break."""

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

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the folder's shared models

from compile_models import GPT, RNNModel  # type: ignore[import-not-found]  # noqa: E402

# compiled and eager compared at one thread (conftest.py's ``one_thread`` says why)
pytestmark = pytest.mark.usefixtures("one_thread")


def _same(a: Any, b: Any) -> None:
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def _train(
    build: Callable[[], nn.Module],
    batches: list[tuple[Any, ...]],
    compiled: bool,
    loss_of: Callable[..., lucid.Tensor],
) -> tuple[list[float], list[np.ndarray]]:
    """Seeded SGD steps over ``batches``; the losses and the final parameters (a compiled
    run's first capture must have replayed on arrays, its backward recorded)."""
    lucid.manual_seed(0)
    model = build()
    run = lucid.compile(model) if compiled else model
    opt = optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    losses = []
    for batch in batches:
        loss = loss_of(run, *batch)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    if compiled:
        first = run._compiled_forward.log[0].program  # type: ignore[union-attr]
        assert first.arrays is not None, first.arrays_why
        assert first.arrays.bwd is not None, first.arrays.failed
    return losses, [p.detach().numpy().copy() for p in model.parameters()]


def _check_training(build: Callable[[], nn.Module], batches: list[tuple[Any, ...]],
                    loss_of: Callable[..., lucid.Tensor]) -> None:  # fmt: skip
    eager = _train(build, batches, False, loss_of)
    comp = _train(build, batches, True, loss_of)
    assert eager[0] == comp[0]
    for a, b in zip(eager[1], comp[1]):
        _same(a, b)


def _images(n: int, shape: tuple[int, ...], seed: int) -> tuple[lucid.Tensor, lucid.Tensor]:
    rng = np.random.default_rng(seed)
    x = lucid.from_numpy(rng.standard_normal((n, *shape)).astype(np.float32))
    return x, lucid.from_numpy(rng.integers(0, 10, n).astype(np.int64))


def _ce(run: Any, x: lucid.Tensor, y: lucid.Tensor) -> lucid.Tensor:
    return F.cross_entropy(run(x), y)


def test_lenet5_training_steps_match_eager_bit_for_bit() -> None:
    batches = [_images(8, (1, 28, 28), s) for s in range(3)] + [_images(5, (1, 28, 28), 9)]
    _check_training(lambda: create_model("lenet5"), batches, _ce)  # the last: a shape change


def test_gpt_with_dropout_matches_eager_bit_for_bit() -> None:
    rng = np.random.default_rng(1)
    batches = [tuple(lucid.from_numpy(rng.integers(0, 17, (2, 8)).astype(np.int64))
                     for _ in range(2)) for _ in range(3)]  # fmt: skip
    _check_training(GPT, batches, lambda run, x, y: run(x, y))


def test_lstm_with_dropout_and_carried_hidden_state_matches_eager() -> None:
    rng = np.random.default_rng(2)
    data = [lucid.from_numpy(rng.integers(0, 23, (6, 3)).astype(np.int64)) for _ in range(4)]
    hidden: dict[bool, Any] = {}

    def loss_of(run: Any, x: lucid.Tensor, y: lucid.Tensor) -> lucid.Tensor:
        key = isinstance(run, nn.OptimizedModule)
        h = hidden.get(key) or (lucid.zeros(2, 3, 16), lucid.zeros(2, 3, 16))
        out, h = run(x, tuple(z.detach() for z in h))
        hidden[key] = h
        return F.nll_loss(out, y.reshape(-1))

    _check_training(RNNModel, [(data[i], data[i + 1]) for i in range(3)], loss_of)


def _mean_square(run: Any, x: lucid.Tensor, y: lucid.Tensor) -> lucid.Tensor:
    out = run(x)
    outs = out if isinstance(out, tuple) else (out,)
    return sum(((o.float() ** 2).mean() for o in outs), lucid.zeros(()))


@pytest.mark.parametrize("name, shape", [("mobilenet_v1_025", (3, 32, 32)),
                                         ("mobilenet_v3_small", (3, 32, 32)),
                                         ("dcgan_discriminator", (3, 64, 64)),
                                         ("vae_mnist", (1, 28, 28))])  # fmt: skip
def test_zoo_families_compile_in_train_and_eval(name: str, shape: tuple[int, ...]) -> None:
    batches = [_images(2, shape, s) for s in range(2)]  # vae_mnist samples with randn
    _check_training(lambda: create_model(name), batches, _mean_square)
    lucid.manual_seed(0)
    model = create_model(name).eval()
    compiled = lucid.compile(model)
    x = batches[0][0]
    with lucid.no_grad():
        for _ in range(2):
            lucid.manual_seed(1)
            got = compiled(x)
            lucid.manual_seed(1)
            want = model(x)
            for a, b in zip(got if isinstance(got, tuple) else (got,),
                            want if isinstance(want, tuple) else (want,)):  # fmt: skip
                _same(a.numpy(), b.numpy())
    assert all(e.program is not None for e in compiled._compiled_forward.log)


def test_eval_and_no_grad_are_their_own_signatures() -> None:
    lucid.manual_seed(0)
    model = GPT()
    compiled = lucid.compile(model)
    x = lucid.randint(0, 17, (2, 8))
    for mode in ("train", "eval"):
        getattr(model, mode)()
        for grad in (True, False):
            with lucid.set_grad_enabled(grad):
                lucid.manual_seed(3)
                a = compiled(x, x)
                lucid.manual_seed(3)
                b = compiled(x, x)
                lucid.manual_seed(3)
                c = model(x, x)
            assert a.requires_grad == c.requires_grad == grad
            assert a.item() == b.item() == c.item()
    assert len(compiled._compiled_forward.cache) == 4
    assert all(e.program is not None for e in compiled._compiled_forward.log)


def test_a_graph_break_runs_the_signature_eagerly_and_is_explained() -> None:
    class Gate(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = nn.Linear(4, 4)

        def forward(self, x: lucid.Tensor) -> lucid.Tensor:
            y = self.lin(x)
            return y.relu() if y.sum().item() > 0 else -y  # reads a value: a graph break

    lucid.manual_seed(0)
    model = Gate()
    compiled = lucid.compile(model)
    for sign in (1.0, -1.0, 1.0):
        x = lucid.ones(2, 4) * sign
        _same(compiled(x).detach().numpy(), model(x).detach().numpy())
    report = lucid.compiler.explain(model, lucid.ones(2, 4))
    assert report.graph_count == 0 and report.graph_break_count == 1
    assert "Tensor.item()" in report.break_reasons[0].reason
    assert "test_integration_compile.py" in report.break_reasons[0].user_stack[-1]
    with pytest.raises(lucid.compiler.Unsupported, match=r"test_integration_compile.py:\d+"):
        lucid.compile(model, fullgraph=True)(lucid.ones(2, 4))


def test_batch_norm_running_stats_and_optimizer_state_follow_eager() -> None:
    def build() -> nn.Module:
        return nn.Sequential(nn.Conv2d(1, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(),
                             nn.Linear(4 * 6 * 6, 10))  # fmt: skip

    batches = [_images(4, (1, 8, 8), s) for s in range(3)]
    _check_training(build, batches, _ce)
    models = []
    for compiled in (False, True):
        lucid.manual_seed(0)
        m = build()
        run = lucid.compile(m) if compiled else m
        for x, _ in batches:
            run(x)
        models.append(m)
    _same(models[0][1].running_var.numpy(), models[1][1].running_var.numpy())
    assert models[1][1].num_batches_tracked.item() == 3


@pytest.mark.mlx
def test_replay_on_mlx_matches_eager() -> None:
    pytest.importorskip("mlx.core")
    lucid.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Dropout(0.3), nn.BatchNorm1d(8),
                          nn.Linear(8, 2)).to("mlx")  # fmt: skip
    compiled = lucid.compile(model)
    for seed in range(3):
        x = lucid.randn(5, 4).to("mlx")
        grads = []
        for run in (compiled, model):
            lucid.manual_seed(seed)
            out = run(x)
            out.sum().backward()
            grads.append((out.detach().numpy(), model[0].weight.grad.numpy().copy()))
            model.zero_grad()
        _same(grads[0][0], grads[1][0])
        _same(grads[0][1], grads[1][1])
    assert compiled._compiled_forward.log[0].program is not None


def test_attention_masks_replay_as_eager() -> None:
    # a causal mask alone never empties a row (the replay takes softmax's plain path); an
    # attn_mask that empties one gives zeros there, compiled as eager
    lucid.manual_seed(0)
    q = lucid.randn(2, 3, 4, 8, requires_grad=True)
    mask = lucid.ones(4, 4, dtype=lucid.bool).tril()
    mask[1] = False

    def attend(q: lucid.Tensor, causal: bool) -> lucid.Tensor:
        if causal:
            return F.scaled_dot_product_attention(q, q, q, is_causal=True)
        return F.scaled_dot_product_attention(q, q, q, attn_mask=mask)

    compiled = lucid.compile(attend)
    for causal in (True, False):
        for _ in range(3):
            got, want = compiled(q, causal), attend(q, causal)
            _same(got.detach().numpy(), want.detach().numpy())
            (g1,) = lucid.autograd.grad(got.sum(), q)
            (g2,) = lucid.autograd.grad(want.sum(), q)
            _same(g1.numpy(), g2.numpy())
    assert not want[:, :, 1].detach().numpy().any()


class _TwoHeads(nn.Module):
    """A trunk and two heads: a loss on one head leaves the other head's parameters at None."""

    def __init__(self) -> None:
        super().__init__()
        self.trunk, self.a, self.b = nn.Linear(3, 4), nn.Linear(4, 2), nn.Linear(4, 2)

    def forward(self, x: lucid.Tensor) -> dict[str, lucid.Tensor]:
        h = self.trunk(x).tanh()
        return {"a": self.a(h), "b": self.b(h).relu()}


def test_an_output_without_gradient_leaves_what_only_it_reaches_at_none() -> None:
    # eager mode: ``b``'s parameters get no gradient (None) from a loss on ``a``, and an
    # optimizer skips them; the compiled node once got zeros for ``b`` (the engine's fill for
    # a multi-output node) and gave ``b``'s parameters zero gradients, which weight decay then
    # moved (Faster R-CNN's backbone: FPN levels no RoI was pooled from). The node asks for
    # None (``set_materialize_grads(False)``), which the engine honours
    lucid.manual_seed(0)
    eager = _TwoHeads()
    model = _TwoHeads()
    model.load_state_dict(eager.state_dict())
    compiled = lucid.compile(model)
    opts = [optim.SGD(m.parameters(), lr=0.1, momentum=0.9, weight_decay=0.1)
            for m in (eager, model)]  # fmt: skip
    for step, head in enumerate(["a", "a", "a", "b", "a"]):  # capture, record, replays
        x = lucid.randn(5, 3)
        for m, run, opt in zip((eager, model), (eager, compiled), opts):
            opt.zero_grad()
            run(x)[head].square().mean().backward()
            opt.step()
        for (name, p), q in zip(eager.named_parameters(), model.parameters()):
            assert (p.grad is None) == (q.grad is None), (step, name)
            if p.grad is not None:
                np.testing.assert_array_equal(q.grad.numpy(), p.grad.numpy())
            np.testing.assert_array_equal(q.detach().numpy(), p.detach().numpy())
        other = model.b if head == "a" else model.a
        assert other.weight.grad is None


class _HeadsAttention(nn.Module):
    """MaxViT's attention: one ``qkv`` Linear, split into heads by a reshape and a transpose."""

    def __init__(self) -> None:
        super().__init__()
        self.qkv = nn.Linear(256, 768)

    def forward(self, x: lucid.Tensor) -> lucid.Tensor:
        b, n, _ = x.shape
        qkv = self.qkv(x).reshape(b, n, 3, 8, 32).transpose(1, 3)
        q, k, v = qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2]
        return F.scaled_dot_product_attention(q, k, v, attn_mask=lucid.zeros(n, n))


# eager linear without a graph on 16-32 rows computes (W @ x^T)^T and copies it to row-major:
# a column-major result made the products over the heads round otherwise than a capture's
# _Linear (MaxViT, Swin3D ~1e-6 without grad, 5 December 2026)
def test_no_grad_capture_matches_eager_no_grad_after_a_small_linear() -> None:
    lucid.manual_seed(1)
    model, x = _HeadsAttention(), lucid.randn(8, 4, 256)  # 32 rows into the Linear
    with lucid.no_grad():
        eager = model(x).numpy().copy()
        compiled = lucid.compile(model)(x).numpy().copy()
    np.testing.assert_array_equal(compiled, eager)
