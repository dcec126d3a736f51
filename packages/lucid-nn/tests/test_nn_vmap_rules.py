"""vmap's batching rules for lucid-nn's fused Functions (linear, convolution, pooling, the norms,
cross entropy, binary cross entropy) and its value checks (BCE's range, causal attention,
one_hot): each equals a loop over the batch, values and per-sample gradients, with shared and
with per-element weights, and runs through its rule (no loop-fallback warning)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lucid
import lucid.nn  # noqa: F401  (registers nothing: imported so the rule names resolve)
import lucid.nn.functional as F
from lucid.autograd.function import CompositeOp, Function
from lucid.func import _batched, grad, vmap

D = lucid.float64


def _rand(*shape: int, seed: int = 0) -> lucid.Tensor:
    return lucid.tensor(np.random.default_rng(seed).standard_normal(shape), dtype=D)


def _close(got: lucid.Tensor, want: lucid.Tensor) -> None:
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-9, atol=1e-11)


def _check(fn: Callable[..., lucid.Tensor], *args: Any, in_dims: Any = 0) -> None:
    """vmap(fn) and vmap(grad(sum of squares of fn)) against the loop, with no fallback."""
    dims = in_dims if isinstance(in_dims, tuple) else (in_dims,) * len(args)
    n = next(a.shape[d] for a, d in zip(args, dims) if d is not None)

    def element(i: int) -> list[Any]:
        return [a if d is None else a.select(d, i) for a, d in zip(args, dims)]

    floats = tuple(j for j, a in enumerate(args) if a.dtype.is_floating_point)

    def loss(*xs: Any) -> lucid.Tensor:
        return (fn(*xs) ** 2).sum()

    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*batching rule")
        got = vmap(fn, in_dims=in_dims)(*args)
        got_g = vmap(grad(loss, argnums=floats), in_dims=in_dims)(*args)
    _close(got, lucid.stack([fn(*element(i)) for i in range(n)]))
    want_g = [grad(loss, argnums=floats)(*element(i)) for i in range(n)]
    for k in range(len(floats)):
        _close(got_g[k], lucid.stack([w[k] for w in want_g]))


def test_every_rule_names_an_existing_function() -> None:
    names: set[str] = set()
    todo: list[type] = [Function, CompositeOp]
    while todo:
        c = todo.pop()
        for s in c.__subclasses__():
            names.add(f"{s.__module__}.{s.__qualname__}")
            todo.append(s)
    missing = sorted(set(_batched.registered()) - names)
    assert not missing, f"batching rules for Functions that no longer exist: {missing}"


def test_linear_with_shared_and_per_element_weights() -> None:
    x, w, b = _rand(4, 3, 5), _rand(2, 5, seed=1), _rand(2, seed=2)
    _check(F.linear, x, w, b, in_dims=(0, None, None))
    _check(F.linear, x, _rand(4, 2, 5, seed=3), b, in_dims=(0, 0, None))
    _check(lambda v, w: F.linear(v, w), _rand(4, 5, seed=4), _rand(4, 2, 5, seed=5))


@pytest.mark.parametrize("groups", [1, 2])
def test_conv2d_with_shared_and_per_element_weights(groups: int) -> None:
    x, w, b = _rand(3, 2, 4, 6, 6), _rand(4, 4 // groups, 3, 3, seed=1), _rand(4, seed=2)

    def conv(x: lucid.Tensor, w: lucid.Tensor, b: lucid.Tensor) -> lucid.Tensor:
        return F.conv2d(x, w, b, stride=2, padding=1, groups=groups)

    _check(conv, x, w, b, in_dims=(0, None, None))
    _check(conv, x, _rand(3, 4, 4 // groups, 3, 3, seed=3), _rand(3, 4, seed=4))
    _check(conv, x[0], _rand(3, 4, 4 // groups, 3, 3, seed=5), b, in_dims=(None, 0, None))


def test_conv1d_and_pooling() -> None:
    x = _rand(3, 2, 4, 9)
    _check(lambda x, w: F.conv1d(x, w, padding=2, dilation=2), x, _rand(5, 4, 3, seed=1),
           in_dims=(0, None))  # fmt: skip
    _check(lambda x: F.max_pool1d(x, 2), x)
    y = _rand(3, 2, 3, 6, 6, seed=2)
    _check(lambda x: F.max_pool2d(x, 3, stride=2, padding=1), y)
    _check(lambda x: F.max_pool2d(x, 2), y[:, 0])  # an input without a batch dim
    _check(lambda x: F.avg_pool2d(x, 2, ceil_mode=True), y)
    _check(lambda x: F.adaptive_max_pool2d(x, 2), y)
    _check(lambda x: F.adaptive_avg_pool2d(x, 3), y)


def test_transposed_conv_unfold_and_prelu() -> None:
    x = _rand(3, 2, 4, 5, 5)
    _check(lambda x, w: F.conv_transpose2d(x, w, stride=2, padding=1), x, _rand(4, 3, 3, 3, seed=1),
           in_dims=(0, None))  # fmt: skip
    _check(lambda x: F.unfold(x, 2, stride=2), x)
    _check(lambda x, w: F.prelu(x, w), x, _rand(4, seed=2), in_dims=(0, None))


def test_embedding_and_nll_loss_map_and_check_every_elements_indices() -> None:
    rng = np.random.default_rng(0)
    weight = _rand(6, 4)
    idx = lucid.tensor(rng.integers(0, 6, (3, 5)))
    _check(lambda i, w: F.embedding(i, w), idx, weight, in_dims=(0, None))
    t = lucid.tensor(rng.integers(0, 4, (3, 5)))
    _check(lambda x, t: F.nll_loss(F.log_softmax(x, -1), t), _rand(3, 5, 4, seed=1), t)
    bad = idx.clone()
    bad[2, 1] = 6  # one element's index out of range: the check sees every element
    with pytest.raises(IndexError, match="index out of range in self"):
        vmap(lambda i: F.embedding(i, weight))(bad)


def test_norms_compute_statistics_per_element() -> None:
    x = _rand(4, 3, 5, 6)
    w, b = _rand(6, seed=1), _rand(6, seed=2)
    _check(lambda x, w, b: F.layer_norm(x, (6,), w, b), x, w, b, in_dims=(0, None, None))
    _check(lambda x: F.group_norm(x, 1), _rand(4, 3, 4, 2, seed=3))
    c = _rand(4, 5, 3, 2, seed=4)
    wc, bc = _rand(3, seed=5), _rand(3, seed=6)
    _check(lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True), c, wc, bc,
           in_dims=(0, None, None))  # fmt: skip
    _check(lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True), c,
           _rand(4, 3, seed=7), _rand(4, 3, seed=8))  # fmt: skip


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_reduces_per_element(reduction: str) -> None:
    x = _rand(4, 5, 3)
    t = lucid.tensor(np.random.default_rng(1).integers(0, 3, (4, 5)))
    t[1, 2] = -100
    weight = lucid.tensor([0.2, 1.0, 3.0], dtype=D)

    def ce(x: lucid.Tensor, t: lucid.Tensor) -> lucid.Tensor:
        return F.cross_entropy(x, t, weight=weight, reduction=reduction, label_smoothing=0.1)

    _check(ce, x, t)
    _check(lambda x, t: F.cross_entropy(x, t, reduction=reduction), x, t[0], in_dims=(0, None))
    _check(lambda x, t: F.cross_entropy(x, t), x[:, 0], t[:, 0])  # (C,) logits, () target


@pytest.mark.mlx
def test_per_sample_cnn_gradients_on_mlx_match_numpy_through_the_rules() -> None:
    pytest.importorskip("mlx.core")
    pytest.importorskip("lucid.backends.mlx")
    x, w, b = _rand(5, 1, 6, 6), _rand(3, 1, 3, 3, seed=1), _rand(3, seed=2)
    fc = _rand(2, 12, seed=3)
    t = lucid.tensor([0, 1, 1, 0, 1])

    def loss(w: lucid.Tensor, b: lucid.Tensor, x: lucid.Tensor, t: lucid.Tensor) -> Any:
        h = F.max_pool2d(F.relu(F.conv2d(x.unsqueeze(0), w, b)), 2).flatten(1)
        return F.cross_entropy(F.linear(h, fc.to(x.device).to(x.dtype)), t.unsqueeze(0))

    def per_sample(*args: lucid.Tensor) -> Any:
        with warnings.catch_warnings():
            warnings.filterwarnings("error", message=".*batching rule")
            return vmap(grad(loss, argnums=(0, 1)), in_dims=(None, None, 0, 0))(*args)

    want = per_sample(w, b, x, t)
    f32 = [a.to(lucid.float32).to("mlx") for a in (w, b, x)]
    got = per_sample(*f32, t.to("mlx"))
    for g, e in zip(got, want):
        assert g.device == "mlx"
        np.testing.assert_allclose(g.cpu().numpy(), e.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parity
def test_per_sample_gradients_of_a_layer_norm_mlp_match_torch_func() -> None:
    torch = pytest.importorskip("torch")
    tf = pytest.importorskip("torch.func")
    rng = np.random.default_rng(0)
    params = {
        "w1": rng.standard_normal((8, 4)), "b1": rng.standard_normal(8),
        "g": rng.standard_normal(8), "beta": rng.standard_normal(8),
        "w2": rng.standard_normal((3, 8)), "b2": rng.standard_normal(3),
    }  # fmt: skip
    xs, ys = rng.standard_normal((6, 4)), rng.integers(0, 3, 6)

    def make(L: Any, nnf: Any) -> Callable[..., Any]:
        def loss(p: dict[str, Any], x: Any, y: Any) -> Any:
            h = nnf.layer_norm(nnf.linear(x, p["w1"], p["b1"]), (8,), p["g"], p["beta"])
            out = nnf.linear(nnf.gelu(h), p["w2"], p["b2"])
            return nnf.cross_entropy(out.unsqueeze(0), y.unsqueeze(0))

        return loss

    lp = {k: lucid.tensor(v, dtype=D) for k, v in params.items()}
    tp = {k: torch.from_numpy(v) for k, v in params.items()}
    got = vmap(grad(make(lucid, F)), in_dims=(None, 0, 0))(lp, lucid.tensor(xs), lucid.tensor(ys))
    want = tf.vmap(tf.grad(make(torch, torch.nn.functional)), in_dims=(None, 0, 0))(
        tp, torch.from_numpy(xs), torch.from_numpy(ys)
    )
    for k in params:
        np.testing.assert_allclose(got[k].numpy(), want[k].numpy(), rtol=1e-9, atol=1e-11)


def test_value_checks_run_on_the_whole_batch() -> None:
    rng = np.random.default_rng(0)
    p = lucid.tensor(rng.uniform(0.05, 0.95, (4, 6)), dtype=D)
    _check(lambda a, t: F.binary_cross_entropy(a, t), p, p.flip(0))
    q = _rand(3, 2, 4, 8)
    _check(lambda t: F.scaled_dot_product_attention(t, t, t, is_causal=True), q)
    idx = lucid.tensor(rng.integers(0, 5, (4, 3)))
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*batching rule")
        got = vmap(lambda t: F.one_hot(t, 5))(idx)
    assert bool((got == F.one_hot(idx, 5)).all())
    bad = p.clone()
    bad[2, 1] = 1.5  # one element of one batch entry out of range: the check sees it
    with pytest.raises(RuntimeError, match="between 0 and 1"):
        vmap(lambda a, t: F.binary_cross_entropy(a, t))(bad, p)
    with pytest.raises(RuntimeError, match="smaller than num_classes"):
        vmap(lambda t: F.one_hot(t, 4))(idx)
    with pytest.raises(RuntimeError, match="values of a batched Tensor were read"):
        vmap(lambda t: F.one_hot(t))(idx)  # num_classes from the values: torch refuses too
