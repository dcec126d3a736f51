"""PyTorch parity: each layer with the same weights gives torch's outputs and gradients."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lucid
import lucid.nn as nn

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity

RTOL, ATOL = 1e-4, 1e-5
RNG = np.random.default_rng(42)


def arr(*shape: int, lo: float = -2.0, hi: float = 2.0) -> np.ndarray:
    return RNG.uniform(lo, hi, shape).astype(np.float32)


def _close(a: Any, b: Any, what: str) -> None:
    np.testing.assert_allclose(
        np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64), rtol=RTOL, atol=ATOL,
        err_msg=what,
    )  # fmt: skip


def check(
    lmod: nn.Module, tmod: Any, inputs: list[np.ndarray], grad_inputs: tuple[int, ...] = (0,)
) -> None:
    """Copy lucid's state into torch, run both forward and backward, compare everything."""
    tmod.load_state_dict({k: torch.tensor(v.numpy()) for k, v in lmod.state_dict().items()})
    tmod.train(lmod.training)
    lx, tx = [], []
    for i, a in enumerate(inputs):
        needs = i in grad_inputs and a.dtype.kind == "f"
        lx.append(lucid.tensor(a, requires_grad=needs))
        tx.append(torch.tensor(a, requires_grad=needs))
    ly, ty = lmod(*lx), tmod(*tx)
    _close(ly.detach().numpy(), ty.detach().numpy(), f"{type(lmod).__name__} forward")
    go = RNG.standard_normal(tuple(ty.shape)).astype(np.float32)
    if ly.requires_grad:
        ly.backward(lucid.tensor(go))
        ty.backward(torch.tensor(go))
        for i, (a, b) in enumerate(zip(lx, tx)):
            if b.grad is not None:
                _close(a.grad.numpy(), b.grad.numpy(), f"{type(lmod).__name__} grad of input {i}")
        tparams = dict(tmod.named_parameters())
        for name, p in lmod.named_parameters():
            if tparams[name].grad is None:
                assert p.grad is None or not p.grad.numpy().any(), name
                continue
            _close(p.grad.numpy(), tparams[name].grad.numpy(), f"grad of {name}")
    tbufs = dict(tmod.named_buffers())
    for name, b in lmod.named_buffers():
        _close(b.numpy(), tbufs[name].numpy(), f"buffer {name} after forward")


TN = torch.nn

LAYERS: dict[str, Callable[[], tuple[nn.Module, Any, list[np.ndarray]]]] = {
    "linear": lambda: (nn.Linear(5, 3), TN.Linear(5, 3), [arr(4, 5)]),
    "linear_3d_nobias": lambda: (nn.Linear(5, 3, False), TN.Linear(5, 3, False), [arr(2, 4, 5)]),
    "bilinear": lambda: (nn.Bilinear(3, 4, 2), TN.Bilinear(3, 4, 2), [arr(5, 3), arr(5, 4)]),
    "identity": lambda: (nn.Identity(), TN.Identity(), [arr(2, 3)]),
    "flatten": lambda: (nn.Flatten(), TN.Flatten(), [arr(2, 3, 4)]),
    "unflatten": lambda: (nn.Unflatten(1, (2, 3)), TN.Unflatten(1, (2, 3)), [arr(4, 6)]),
    "prelu": lambda: (nn.PReLU(), TN.PReLU(), [arr(3, 4)]),
    "prelu_channels": lambda: (nn.PReLU(3), TN.PReLU(3), [arr(2, 3, 4, 4)]),
    "batchnorm1d_2d": lambda: (nn.BatchNorm1d(4), TN.BatchNorm1d(4), [arr(6, 4)]),
    "batchnorm1d_3d": lambda: (nn.BatchNorm1d(4), TN.BatchNorm1d(4), [arr(3, 4, 5)]),
    "batchnorm2d": lambda: (nn.BatchNorm2d(3), TN.BatchNorm2d(3), [arr(4, 3, 5, 5, lo=1, hi=4)]),
    "batchnorm3d": lambda: (nn.BatchNorm3d(2), TN.BatchNorm3d(2), [arr(2, 2, 3, 3, 3)]),
    "batchnorm_momentum_none": lambda: (
        nn.BatchNorm1d(3, momentum=None),
        TN.BatchNorm1d(3, momentum=None),
        [arr(5, 3)],
    ),
    "batchnorm2d_eval": lambda: (
        _with_stats(nn.BatchNorm2d(3)).eval(),
        TN.BatchNorm2d(3),
        [arr(2, 3, 4, 4)],
    ),
    "batchnorm_no_stats": lambda: (
        nn.BatchNorm2d(3, track_running_stats=False).eval(),
        TN.BatchNorm2d(3, track_running_stats=False),
        [arr(2, 3, 2, 2)],
    ),
    "layernorm": lambda: (nn.LayerNorm(6), TN.LayerNorm(6), [arr(3, 4, 6, lo=0, hi=5)]),
    "layernorm_2d_shape": lambda: (nn.LayerNorm((3, 4)), TN.LayerNorm((3, 4)), [arr(2, 3, 4)]),
    "layernorm_no_affine": lambda: (
        nn.LayerNorm(5, elementwise_affine=False),
        TN.LayerNorm(5, elementwise_affine=False),
        [arr(4, 5)],
    ),
    "layernorm_no_bias": lambda: (
        nn.LayerNorm(5, bias=False),
        TN.LayerNorm(5, bias=False),
        [arr(4, 5)],
    ),
    "groupnorm": lambda: (nn.GroupNorm(2, 6), TN.GroupNorm(2, 6), [arr(3, 6, 4, 4)]),
    "instancenorm1d": lambda: (nn.InstanceNorm1d(3), TN.InstanceNorm1d(3), [arr(2, 3, 7)]),
    "instancenorm2d_affine_stats": lambda: (
        nn.InstanceNorm2d(3, affine=True, track_running_stats=True),
        TN.InstanceNorm2d(3, affine=True, track_running_stats=True),
        [arr(2, 3, 4, 4)],
    ),
    "local_response_norm": lambda: (
        nn.LocalResponseNorm(3, alpha=0.1),
        TN.LocalResponseNorm(3, alpha=0.1),
        [arr(2, 5, 3, 3)],
    ),
    "local_response_norm_even": lambda: (
        nn.LocalResponseNorm(4, alpha=0.2, beta=0.5, k=2.0),
        TN.LocalResponseNorm(4, alpha=0.2, beta=0.5, k=2.0),
        [arr(2, 6, 5)],
    ),
}


def _with_stats(bn: Any) -> Any:
    with lucid.no_grad():
        bn.running_mean.copy_(lucid.tensor(arr(bn.num_features)))
        bn.running_var.copy_(lucid.tensor(arr(bn.num_features, lo=0.5, hi=2)))
        bn.weight.copy_(lucid.tensor(arr(bn.num_features)))
        bn.bias.copy_(lucid.tensor(arr(bn.num_features)))
    return bn


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_layer_parity(name: str) -> None:
    lmod, tmod, inputs = LAYERS[name]()
    check(lmod, tmod, inputs, grad_inputs=tuple(range(len(inputs))))


@pytest.mark.parametrize(
    "kw",
    [{}, {"bias": False}, {"elementwise_affine": False}],
    ids=["default", "no_bias", "no_affine"],
)
def test_layernorm_repr_matches_torch(kw: dict[str, Any]) -> None:
    assert repr(nn.LayerNorm((8,), **kw)) == repr(torch.nn.LayerNorm((8,), **kw))


def test_batchnorm_running_stats_over_several_steps() -> None:
    lmod, tmod = nn.BatchNorm2d(3), TN.BatchNorm2d(3)
    tmod.load_state_dict({k: torch.tensor(v.numpy()) for k, v in lmod.state_dict().items()})
    for _ in range(3):
        x = arr(4, 3, 2, 2, lo=-1, hi=3)
        lmod(lucid.tensor(x))
        tmod(torch.tensor(x))
    _close(lmod.running_mean.numpy(), tmod.running_mean.numpy(), "running_mean")
    _close(lmod.running_var.numpy(), tmod.running_var.numpy(), "running_var")


ACTS = [
    ("ReLU", {}), ("ReLU6", {}), ("LeakyReLU", {"negative_slope": 0.2}), ("ELU", {"alpha": 0.7}),
    ("SELU", {}), ("CELU", {"alpha": 1.5}), ("GELU", {}), ("GELU", {"approximate": "tanh"}),
    ("SiLU", {}), ("Mish", {}), ("Softplus", {"beta": 2.0, "threshold": 3.0}), ("Softsign", {}),
    ("Hardtanh", {"min_val": -0.5, "max_val": 1.5}), ("Hardsigmoid", {}), ("Hardswish", {}),
    ("Sigmoid", {}), ("Tanh", {}), ("Softmax", {"dim": 1}), ("LogSoftmax", {"dim": -1}),
    ("Softmin", {"dim": 0}), ("GLU", {"dim": 1}), ("LogSigmoid", {}),
    ("Threshold", {"threshold": 0.3, "value": -1.0}), ("Tanhshrink", {}), ("Hardshrink", {}),
    ("Softshrink", {"lambd": 0.3}), ("Softmax2d", {}),
]  # fmt: skip


@pytest.mark.parametrize(("cls", "kwargs"), ACTS, ids=[f"{c}{k}" for c, k in ACTS])
def test_activation_parity(cls: str, kwargs: dict[str, Any]) -> None:
    x = arr(2, 4, 3, 3, lo=-5, hi=5)
    check(getattr(nn, cls)(**kwargs), getattr(TN, cls)(**kwargs), [x])


def test_embedding_parity_with_padding() -> None:
    idx = np.array([[0, 2, 4], [4, 1, 2]])
    check(nn.Embedding(5, 3, padding_idx=2), TN.Embedding(5, 3, padding_idx=2), [idx])


def _loss_inputs(kind: str) -> list[np.ndarray]:
    if kind == "reg":
        return [arr(4, 3), arr(4, 3)]
    if kind == "prob":
        return [arr(4, 3, lo=0.05, hi=0.95), arr(4, 3, lo=0, hi=1)]
    if kind == "pair":
        return [arr(6), arr(6), np.sign(arr(6)).astype(np.float32)]
    raise AssertionError(kind)


LOSSES: list[tuple[str, dict[str, Any], str]] = [
    ("MSELoss", {}, "reg"), ("MSELoss", {"reduction": "sum"}, "reg"),
    ("L1Loss", {"reduction": "none"}, "reg"), ("SmoothL1Loss", {"beta": 0.5}, "reg"),
    ("HuberLoss", {"delta": 0.8}, "reg"), ("BCELoss", {}, "prob"),
    ("BCEWithLogitsLoss", {}, "prob"), ("SoftMarginLoss", {}, "reg"),
    ("MarginRankingLoss", {"margin": 0.2}, "pair"),
]  # fmt: skip


@pytest.mark.parametrize(("cls", "kwargs", "kind"), LOSSES, ids=[f"{c}{k}" for c, k, _ in LOSSES])
def test_loss_parity(cls: str, kwargs: dict[str, Any], kind: str) -> None:
    inputs = _loss_inputs(kind)
    grads = (0,) if cls in ("BCELoss", "BCEWithLogitsLoss", "SoftMarginLoss") else (0, 1)
    check(getattr(nn, cls)(**kwargs), getattr(TN, cls)(**kwargs), inputs, grads)


def test_bce_weighted_and_pos_weight_parity() -> None:
    w, pw = arr(3, lo=0.5, hi=2), arr(3, lo=0.5, hi=4)
    lm = nn.BCEWithLogitsLoss(weight=lucid.tensor(w), pos_weight=lucid.tensor(pw))
    tm = TN.BCEWithLogitsLoss(weight=torch.tensor(w), pos_weight=torch.tensor(pw))
    check(lm, tm, _loss_inputs("prob"))
    check(nn.BCELoss(weight=lucid.tensor(w)), TN.BCELoss(weight=torch.tensor(w)),
          _loss_inputs("prob"))  # fmt: skip


CE_CASES: list[dict[str, Any]] = [
    {}, {"reduction": "sum"}, {"reduction": "none"}, {"label_smoothing": 0.15},
    {"ignore_index": 1}, {"weight": True}, {"weight": True, "label_smoothing": 0.2},
    {"weight": True, "ignore_index": 0, "reduction": "none"},
    {"weight": True, "ignore_index": 2, "label_smoothing": 0.1, "reduction": "sum"},
]  # fmt: skip


@pytest.mark.parametrize("kw", CE_CASES, ids=[str(k) for k in CE_CASES])
@pytest.mark.parametrize("spatial", [False, True])
def test_cross_entropy_and_nll_parity(kw: dict[str, Any], spatial: bool) -> None:
    kw = dict(kw)
    lkw, tkw = dict(kw), dict(kw)
    if kw.pop("weight", False):
        w = arr(4, lo=0.2, hi=2)
        lkw["weight"], tkw["weight"] = lucid.tensor(w), torch.tensor(w)
    x = arr(5, 4, 3, lo=-3, hi=3) if spatial else arr(6, 4, lo=-3, hi=3)
    target = RNG.integers(0, 4, (5, 3) if spatial else (6,))
    check(nn.CrossEntropyLoss(**lkw), TN.CrossEntropyLoss(**tkw), [x, target])
    lkw.pop("label_smoothing", None)
    tkw.pop("label_smoothing", None)
    logp = torch.log_softmax(torch.tensor(x), 1).numpy()
    check(nn.NLLLoss(**lkw), TN.NLLLoss(**tkw), [logp, target])


@pytest.mark.parametrize("smoothing", [0.0, 0.25])
def test_cross_entropy_probability_targets_parity(smoothing: float) -> None:
    x = arr(4, 5)
    p = torch.softmax(torch.tensor(arr(4, 5)), 1).numpy()
    w = arr(5, lo=0.5, hi=2)
    check(nn.CrossEntropyLoss(label_smoothing=smoothing), TN.CrossEntropyLoss(label_smoothing=smoothing), [x, p], (0, 1))  # fmt: skip  # noqa: E501
    lm = nn.CrossEntropyLoss(weight=lucid.tensor(w), label_smoothing=smoothing)
    tm = TN.CrossEntropyLoss(weight=torch.tensor(w), label_smoothing=smoothing)
    check(lm, tm, [x, p], (0, 1))


@pytest.mark.parametrize("reduction", ["batchmean", "sum", "none"])
@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div_parity(reduction: str, log_target: bool) -> None:
    x = torch.log_softmax(torch.tensor(arr(3, 4)), 1).numpy()
    t = torch.softmax(torch.tensor(arr(3, 4)), 1).numpy()
    t[0, 1] = 0.0
    if log_target:
        t = np.log(t + 0.1).astype(np.float32)
    kw = {"reduction": reduction, "log_target": log_target}
    check(nn.KLDivLoss(**kw), TN.KLDivLoss(**kw), [x, t], (0, 1) if log_target else (0,))


def test_cosine_and_hinge_embedding_parity() -> None:
    y = np.array([1, -1, 1, -1], dtype=np.float32)
    check(nn.CosineEmbeddingLoss(margin=0.1), TN.CosineEmbeddingLoss(margin=0.1),
          [arr(4, 5), arr(4, 5), y], (0, 1))  # fmt: skip
    check(nn.HingeEmbeddingLoss(margin=0.5), TN.HingeEmbeddingLoss(margin=0.5), [arr(4), y])


def test_dropout_eval_is_identity_like_torch() -> None:
    check(nn.Dropout(0.3).eval(), TN.Dropout(0.3), [arr(3, 4)])
    check(nn.Dropout2d(0.3).eval(), TN.Dropout2d(0.3), [arr(2, 3, 2, 2)])
    check(nn.AlphaDropout(0.3).eval(), TN.AlphaDropout(0.3), [arr(3, 4)])


def test_distance_layers_parity() -> None:
    check(nn.CosineSimilarity(dim=1), TN.CosineSimilarity(dim=1), [arr(4, 5), arr(4, 5)], (0, 1))
    check(nn.PairwiseDistance(p=1.5, keepdim=True), TN.PairwiseDistance(p=1.5, keepdim=True),
          [arr(4, 5), arr(4, 5)], (0, 1))  # fmt: skip


@pytest.mark.parametrize("swap", [False, True])
def test_triplet_margin_parity(swap: bool) -> None:
    kw = {"margin": 1.5, "swap": swap}
    check(nn.TripletMarginLoss(**kw), TN.TripletMarginLoss(**kw), [arr(5, 4), arr(5, 4), arr(5, 4)],
          (0, 1, 2))  # fmt: skip


@pytest.mark.parametrize(("log_input", "full"), [(True, False), (False, True), (True, True)])
def test_poisson_nll_parity(log_input: bool, full: bool) -> None:
    x = arr(4, 3, lo=0.1, hi=2)
    y = np.floor(arr(4, 3, lo=0, hi=4))
    kw = {"log_input": log_input, "full": full}
    check(nn.PoissonNLLLoss(**kw), TN.PoissonNLLLoss(**kw), [x, y])


@pytest.mark.parametrize("full", [False, True])
def test_gaussian_nll_parity(full: bool) -> None:
    var = arr(4, 3, lo=0.0, hi=2)
    var[0, 0] = 0.0  # clamped at eps, gradient still flows as in PyTorch
    check(nn.GaussianNLLLoss(full=full), TN.GaussianNLLLoss(full=full), [arr(4, 3), arr(4, 3), var],
          (0, 1, 2))  # fmt: skip
    check(nn.GaussianNLLLoss(reduction="sum"), TN.GaussianNLLLoss(reduction="sum"),
          [arr(4, 3), arr(4, 3), arr(4, lo=0.1, hi=2)], (0, 2))  # fmt: skip


def test_multilabel_soft_margin_parity() -> None:
    y = (arr(4, 3) > 0).astype(np.float32)
    w = arr(3, lo=0.5, hi=2)
    check(nn.MultiLabelSoftMarginLoss(weight=lucid.tensor(w)),
          TN.MultiLabelSoftMarginLoss(weight=torch.tensor(w)), [arr(4, 3), y])  # fmt: skip
