"""Finite-difference gradient checks (float64) for every functional op of lucid.nn."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lucid
import lucid.nn.functional as F
from lucid.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(0)


def t(*shape: int, lo: float = -2.0, hi: float = 2.0, kinks: tuple[float, ...] = (0.0,)) -> Any:
    """A float64 leaf with values kept 0.1 away from the given kinks (finite differences
    straddling a kink would disagree with any one-sided derivative)."""
    x = RNG.uniform(lo, hi, shape)
    for k in kinks:
        close = np.abs(x - k) < 0.1
        x[close] = k + 0.1 * np.sign(x[close] - k + 1e-9) + 0.05 * np.sign(x[close] - k + 1e-9)
    return lucid.tensor(x, dtype=lucid.float64, requires_grad=True)


def const(*shape: int, lo: float = -1.0, hi: float = 1.0) -> Any:
    return lucid.tensor(RNG.uniform(lo, hi, shape), dtype=lucid.float64)


ACTIVATIONS: dict[str, Callable[[], tuple[Callable[..., Any], tuple[Any, ...]]]] = {
    "relu": lambda: (F.relu, (t(2, 3),)),
    "relu6": lambda: (F.relu6, (t(2, 3, lo=-2, hi=8, kinks=(0.0, 6.0)),)),
    "leaky_relu": lambda: (lambda x: F.leaky_relu(x, 0.2), (t(2, 3),)),
    "elu": lambda: (lambda x: F.elu(x, 1.3), (t(2, 3),)),
    "selu": lambda: (F.selu, (t(2, 3),)),
    "celu": lambda: (lambda x: F.celu(x, 0.7), (t(2, 3),)),
    "gelu": lambda: (F.gelu, (t(2, 3, kinks=()),)),
    "gelu_tanh": lambda: (lambda x: F.gelu(x, approximate="tanh"), (t(2, 3, kinks=()),)),
    "silu": lambda: (F.silu, (t(2, 3, kinks=()),)),
    "mish": lambda: (F.mish, (t(2, 3, kinks=()),)),
    "softplus": lambda: (F.softplus, (t(2, 3, kinks=()),)),
    "softplus_beta_threshold": lambda: (
        lambda x: F.softplus(x, beta=2.0, threshold=3.0),
        (t(2, 3, lo=-3, hi=3, kinks=(1.5,)),),
    ),
    "softsign": lambda: (F.softsign, (t(2, 3),)),
    "hardtanh": lambda: (F.hardtanh, (t(2, 3, kinks=(-1.0, 1.0)),)),
    "hardsigmoid": lambda: (F.hardsigmoid, (t(2, 3, lo=-5, hi=5, kinks=(-3.0, 3.0)),)),
    "hardswish": lambda: (F.hardswish, (t(2, 3, lo=-5, hi=5, kinks=(-3.0, 3.0)),)),
    "sigmoid": lambda: (F.sigmoid, (t(2, 3, kinks=()),)),
    "tanh": lambda: (F.tanh, (t(2, 3, kinks=()),)),
    "softmax": lambda: (lambda x: F.softmax(x, dim=1), (t(2, 3, kinks=()),)),
    "log_softmax": lambda: (lambda x: F.log_softmax(x, dim=0), (t(2, 3, kinks=()),)),
    "softmin": lambda: (lambda x: F.softmin(x, dim=1), (t(2, 3, kinks=()),)),
    "glu": lambda: (lambda x: F.glu(x, dim=1), (t(2, 4, kinks=()),)),
    "logsigmoid": lambda: (F.logsigmoid, (t(2, 3, lo=-30, hi=5, kinks=()),)),
    "threshold": lambda: (lambda x: F.threshold(x, 0.5, -2.0), (t(2, 3, kinks=(0.5,)),)),
    "tanhshrink": lambda: (F.tanhshrink, (t(2, 3, kinks=()),)),
    "hardshrink": lambda: (F.hardshrink, (t(2, 3, kinks=(-0.5, 0.5)),)),
    "softshrink": lambda: (F.softshrink, (t(2, 3, kinks=(-0.5, 0.5)),)),
    "prelu_scalar": lambda: (F.prelu, (t(2, 3, 2), t(1, lo=0.1, hi=0.5))),
    "prelu_channels": lambda: (F.prelu, (t(2, 3, 2), t(3, lo=0.1, hi=0.5))),
}


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_gradcheck(name: str) -> None:
    fn, inputs = ACTIVATIONS[name]()
    assert gradcheck(fn, inputs)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_double_backward(approximate: str) -> None:
    assert gradgradcheck(lambda x: F.gelu(x, approximate=approximate), (t(2, 3, kinks=()),))


def test_gelu_rejects_integer_input_and_unknown_approximation() -> None:
    with pytest.raises(RuntimeError, match="gelu.*floating point input, got lucid.int64"):
        F.gelu(lucid.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="approximate argument must be either none or tanh"):
        F.gelu(lucid.randn(2), approximate="fast")


def test_elu_large_inputs_have_finite_gradients() -> None:
    x = lucid.tensor([800.0, -800.0, 1.0], requires_grad=True)
    F.elu(x).sum().backward()
    assert x.grad is not None
    np.testing.assert_allclose(x.grad.numpy(), [1.0, 0.0, 1.0], atol=1e-6, rtol=1e-7)


LINEAR: dict[str, Callable[[], tuple[Callable[..., Any], tuple[Any, ...]]]] = {
    "linear": lambda: (F.linear, (t(2, 3, kinks=()), t(4, 3, kinks=()), t(4, kinks=()))),
    "linear_3d_no_bias": lambda: (F.linear, (t(2, 2, 3, kinks=()), t(4, 3, kinks=()))),
    "bilinear": lambda: (
        F.bilinear,
        (t(2, 3, kinks=()), t(2, 2, kinks=()), t(4, 3, 2, kinks=()), t(4, kinks=())),
    ),
}


@pytest.mark.parametrize("name", sorted(LINEAR))
def test_linear_gradcheck(name: str) -> None:
    fn, inputs = LINEAR[name]()
    assert gradcheck(fn, inputs)


def _bn_train(x: Any, w: Any, b: Any) -> Any:
    return F.batch_norm(x, None, None, w, b, training=True)


def _bn_eval() -> Callable[..., Any]:
    rm, rv = const(3), const(3, lo=0.5, hi=2.0)
    return lambda x, w, b: F.batch_norm(x, rm, rv, w, b, training=False)


NORMS: dict[str, Callable[[], tuple[Callable[..., Any], tuple[Any, ...]]]] = {
    "batch_norm_2d_input": lambda: (_bn_train, (t(4, 3, kinks=()), t(3), t(3))),
    "batch_norm_4d": lambda: (_bn_train, (t(2, 3, 2, 2, kinks=()), t(3), t(3))),
    "batch_norm_no_affine": lambda: (
        lambda x: F.batch_norm(x, None, None, training=True),
        (t(3, 3, 2, kinks=()),),
    ),
    "batch_norm_eval": lambda: (_bn_eval(), (t(2, 3, 2, kinks=()), t(3), t(3))),
    "layer_norm": lambda: (
        lambda x, w, b: F.layer_norm(x, (2, 3), w, b),
        (t(2, 2, 3, kinks=()), t(2, 3), t(2, 3)),
    ),
    "layer_norm_no_affine": lambda: (lambda x: F.layer_norm(x, 4), (t(3, 4, kinks=()),)),
    "group_norm": lambda: (
        lambda x, w, b: F.group_norm(x, 2, w, b),
        (t(2, 4, 3, kinks=()), t(4), t(4)),
    ),
    "instance_norm": lambda: (
        lambda x, w, b: F.instance_norm(x, weight=w, bias=b),
        (t(2, 3, 4, kinks=()), t(3), t(3)),
    ),
    "local_response_norm": lambda: (
        lambda x: F.local_response_norm(x, 3, alpha=0.5, beta=0.75, k=1.0),
        (t(2, 4, 3, kinks=()),),
    ),
    "local_response_norm_even": lambda: (
        lambda x: F.local_response_norm(x, 2, alpha=0.3),
        (t(1, 3, 2, 2, kinks=()),),
    ),
    "normalize": lambda: (lambda x: F.normalize(x, dim=1), (t(2, 3, kinks=()),)),
    "normalize_p1": lambda: (lambda x: F.normalize(x, p=1.0, dim=0), (t(2, 3),)),
}


@pytest.mark.parametrize("name", sorted(NORMS))
def test_normalization_gradcheck(name: str) -> None:
    fn, inputs = NORMS[name]()
    assert gradcheck(fn, inputs)


def test_fused_norms_have_a_double_backward_from_differentiable_formulas() -> None:
    x = t(4, 3, kinks=())
    y = F.layer_norm(x, 3)
    (g,) = lucid.autograd.grad(y.sum() * 0 + (y * y).sum(), x, create_graph=False)
    assert g.shape == (4, 3) and g.grad_fn is None  # first order: the fused array backward
    assert gradgradcheck(lambda v: F.layer_norm(v, 3), (x,))
    assert gradgradcheck(lambda v: F.batch_norm(v, None, None, training=True), (x,))


def _seeded(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Reseed before each call so the random mask is the same for every evaluation."""

    def run(*args: Any) -> Any:
        lucid.manual_seed(5)
        return fn(*args)

    return run


def test_dropout_family_gradcheck() -> None:
    x = t(4, 3, 2, 2, kinks=())
    assert gradcheck(_seeded(lambda a: F.dropout(a, 0.4)), (x,))
    assert gradcheck(_seeded(lambda a: F.dropout2d(a, 0.4)), (x,))
    assert gradcheck(_seeded(lambda a: F.alpha_dropout(a, 0.3, training=True)), (x,))


def test_embedding_gradcheck_and_padding_row_gets_no_gradient() -> None:
    idx = lucid.tensor([[0, 2], [1, 2]])
    w = t(4, 3, kinks=())
    assert gradcheck(lambda w: F.embedding(idx, w), (w,))
    F.embedding(idx, w, padding_idx=2).sum().backward()
    assert w.grad is not None
    np.testing.assert_allclose(w.grad.numpy()[2], 0.0, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(w.grad.numpy()[0], 1.0, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(w.grad.numpy()[3], 0.0, rtol=1e-10, atol=1e-12)


def _idx(*vals: int) -> Any:
    return lucid.tensor(list(vals))


LOSSES: dict[str, Callable[[], tuple[Callable[..., Any], tuple[Any, ...]]]] = {
    "mse": lambda: (F.mse_loss, (t(2, 3, kinks=()), t(2, 3, kinks=()))),
    "mse_sum": lambda: (lambda a, b: F.mse_loss(a, b, reduction="sum"), (t(2, 3), t(2, 3))),
    "l1": lambda: (F.l1_loss, (t(2, 3, lo=0.2, hi=2), t(2, 3, lo=-2, hi=-0.2))),
    "smooth_l1": lambda: (
        lambda a: F.smooth_l1_loss(
            a, lucid.zeros(2, 3, dtype=lucid.float64), beta=0.5, reduction="none"
        ),
        (t(2, 3, kinks=(-0.5, 0.5)),),
    ),
    "huber": lambda: (
        lambda a: F.huber_loss(
            a, lucid.zeros(2, 3, dtype=lucid.float64), delta=0.7, reduction="sum"
        ),
        (t(2, 3, kinks=(-0.7, 0.7)),),
    ),
    "bce": lambda: (
        F.binary_cross_entropy,
        (t(2, 3, lo=0.05, hi=0.95, kinks=()), t(2, 3, lo=0, hi=1, kinks=())),
    ),
    "bce_weighted": lambda w=const(3, lo=0.5, hi=2): (
        lambda a, b: F.binary_cross_entropy(a, b, weight=w),
        (t(2, 3, lo=0.05, hi=0.95, kinks=()), const(2, 3, lo=0, hi=1)),
    ),
    "bce_with_logits": lambda: (
        F.binary_cross_entropy_with_logits,
        (t(2, 3, kinks=()), t(2, 3, lo=0, hi=1, kinks=())),
    ),
    "bce_with_logits_pos_weight": lambda: (
        lambda a, b, pw: F.binary_cross_entropy_with_logits(a, b, pos_weight=pw),
        (t(2, 3, kinks=()), const(2, 3, lo=0, hi=1), t(3, lo=0.5, hi=3, kinks=())),
    ),
    "cross_entropy": lambda: (lambda a: F.cross_entropy(a, _idx(0, 2, 1)), (t(3, 4, kinks=()),)),
    "cross_entropy_weight_ignore_smoothing": lambda w=const(4, lo=0.5, hi=2): (
        lambda a: F.cross_entropy(a, _idx(0, 2, -100, 3), weight=w, label_smoothing=0.2),
        (t(4, 4, kinks=()),),
    ),
    "cross_entropy_none_sum": lambda: (
        lambda a: (
            F.cross_entropy(a, _idx(1, 0), reduction="none"),
            F.cross_entropy(a, _idx(1, 0), reduction="sum", label_smoothing=0.1),
        ),
        (t(2, 3, kinks=()),),
    ),
    "cross_entropy_spatial": lambda: (
        lambda a: F.cross_entropy(a, lucid.tensor([[0, 2], [1, 1]])),
        (t(2, 3, 2, kinks=()),),
    ),
    "cross_entropy_probs": lambda p=F.softmax(const(3, 4), 1): (
        lambda a: F.cross_entropy(a, p, label_smoothing=0.1),
        (t(3, 4, kinks=()),),
    ),
    "nll": lambda w=const(3, lo=0.5, hi=2): (
        lambda a: F.nll_loss(a, _idx(0, 2, -100), weight=w),
        (t(3, 3, kinks=()),),
    ),
    "kl_div": lambda: (
        lambda a, b: F.kl_div(a, b, reduction="batchmean"),
        (t(2, 3, kinks=()), t(2, 3, lo=0.1, hi=1.0, kinks=())),
    ),
    "kl_div_log_target": lambda: (
        lambda a, b: F.kl_div(a, b, reduction="sum", log_target=True),
        (t(2, 3, kinks=()), t(2, 3, kinks=())),
    ),
    "cosine_embedding": lambda: (
        lambda a, b: F.cosine_embedding_loss(a, b, _idx(1, -1, 1), margin=-0.5),
        (t(3, 4, kinks=()), t(3, 4, kinks=())),
    ),
    "margin_ranking": lambda y=lucid.tensor([1.0, -1.0, -1.0, 1.0], dtype=lucid.float64): (
        lambda a, b: F.margin_ranking_loss(a, b, y, margin=0.1),
        (t(4, kinks=()), t(4, lo=5, hi=6, kinks=())),
    ),
    "hinge_embedding": lambda: (
        lambda a: F.hinge_embedding_loss(a, _idx(1, -1, -1), margin=1.0),
        (t(3, lo=-3, hi=3, kinks=(1.0,)),),
    ),
    "triplet_margin": lambda: (
        lambda a, p, n: F.triplet_margin_loss(a, p, n, margin=2.0, swap=True),
        (t(3, 4, kinks=()), t(3, 4, kinks=()), t(3, 4, kinks=())),
    ),
    "triplet_margin_p1": lambda: (
        lambda a, p, n: F.triplet_margin_loss(a, p, n, margin=3.0, p=1.0, reduction="sum"),
        (t(3, 4, kinks=()), t(3, 4, lo=3, hi=4, kinks=()), t(3, 4, lo=-4, hi=-3, kinks=())),
    ),
    "poisson_nll": lambda: (
        lambda a, b: F.poisson_nll_loss(a, b, full=True),
        (t(2, 3, kinks=()), t(2, 3, lo=0.5, hi=3, kinks=())),
    ),
    "poisson_nll_rate": lambda: (
        lambda a: F.poisson_nll_loss(a, lucid.full((2, 3), 2.0, dtype=lucid.float64), False),
        (t(2, 3, lo=0.5, hi=3, kinks=()),),
    ),
    "gaussian_nll": lambda: (
        lambda a, b, v: F.gaussian_nll_loss(a, b, v, full=True),
        (t(3, 2, kinks=()), t(3, 2, kinks=()), t(3, 2, lo=0.2, hi=2, kinks=())),
    ),
    "multilabel_soft_margin": lambda w=const(3, lo=0.5, hi=2): (
        lambda a, b: F.multilabel_soft_margin_loss(a, b, weight=w),
        (t(2, 3, kinks=()), const(2, 3, lo=0, hi=1)),
    ),
    "soft_margin": lambda y=const(2, 3).sign(): (
        lambda a: F.soft_margin_loss(a, y),
        (t(2, 3, kinks=()),),
    ),
}


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_loss_gradcheck(name: str) -> None:
    fn, inputs = LOSSES[name]()
    assert gradcheck(fn, inputs)


def test_distance_gradcheck() -> None:
    assert gradcheck(lambda a, b: F.cosine_similarity(a, b, dim=1), (t(3, 4), t(3, 4)))
    assert gradcheck(lambda a, b: F.cosine_similarity(a, b, dim=0), (t(3, 4), t(1, 4)))
    assert gradcheck(lambda a, b: F.pairwise_distance(a, b), (t(3, 4), t(3, 4)))
    assert gradcheck(lambda a, b: F.pairwise_distance(a, b, p=3.0, keepdim=True),
                     (t(3, 4), t(3, 4)))  # fmt: skip
