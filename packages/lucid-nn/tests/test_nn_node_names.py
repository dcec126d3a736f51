"""Linear's and embedding's ``grad_fn`` show torch's node names (``AddmmBackward0``, ...), and a
loss's ``grad_fn`` shows torch's node name (``MseLossBackward0``,
``BinaryCrossEntropyWithLogitsBackward0``, ``NllLoss2DBackward0``, ...) though lucid composes
some losses of several ops (the autograd tutorial prints ``loss.grad_fn``), and the warnings
a loss gives point at its caller's line, as torch's."""

from __future__ import annotations

import warnings
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import lucid
import lucid.nn.functional as F

REDUCTIONS = ["mean", "sum", "none"]


def _inputs(L: ModuleType) -> dict[str, Any]:
    rng = np.random.default_rng(0)

    def t(*shape: int, grad: bool = False) -> Any:
        return L.tensor(rng.standard_normal(shape).astype(np.float32), requires_grad=grad)

    return {
        "x": t(4, 3, grad=True), "p": L.tensor(rng.random((4, 3)).astype(np.float32)),
        "w": L.tensor(rng.random((4, 3)).astype(np.float32)),
        "x1": t(3, grad=True), "x3": t(2, 3, 5, grad=True), "x4": t(2, 3, 2, 2, grad=True),
        "c": L.tensor([0, 1, 2, 1]), "c3": L.tensor([[0, 1, 2, 1, 0], [2, 2, 1, 0, 1]]),
        "c4": L.tensor([[[0, 1], [2, 1]], [[1, 0], [2, 2]]]),
    }  # fmt: skip


CASES: dict[str, Any] = {
    "bce_with_logits": lambda F, i, r: F.binary_cross_entropy_with_logits(
        i["x"], i["p"], reduction=r),
    "bce_with_logits_weight": lambda F, i, r: F.binary_cross_entropy_with_logits(
        i["x"], i["p"], weight=i["w"], reduction=r),
    "bce_with_logits_pos_weight": lambda F, i, r: F.binary_cross_entropy_with_logits(
        i["x"], i["p"], pos_weight=i["w"][0], reduction=r),
    "bce": lambda F, i, r: F.binary_cross_entropy(i["x"].sigmoid(), i["p"], reduction=r),
    "bce_weight": lambda F, i, r: F.binary_cross_entropy(
        i["x"].sigmoid(), i["p"], i["w"], reduction=r),
    "mse": lambda F, i, r: F.mse_loss(i["x"], i["p"], reduction=r),
    "mse_weight": lambda F, i, r: F.mse_loss(i["x"], i["p"], reduction=r, weight=i["w"]),
    "l1": lambda F, i, r: F.l1_loss(i["x"], i["p"], reduction=r),
    "smooth_l1": lambda F, i, r: F.smooth_l1_loss(i["x"], i["p"], reduction=r),
    "smooth_l1_beta0": lambda F, i, r: F.smooth_l1_loss(i["x"], i["p"], reduction=r, beta=0.0),
    "huber": lambda F, i, r: F.huber_loss(i["x"], i["p"], reduction=r),
    "huber_weight": lambda F, i, r: F.huber_loss(i["x"], i["p"], reduction=r, weight=i["w"]),
    "soft_margin": lambda F, i, r: F.soft_margin_loss(i["x"], i["p"], reduction=r),
    "nll_1d": lambda F, i, r: F.nll_loss(i["x1"], i["c"][1], reduction=r),
    "nll": lambda F, i, r: F.nll_loss(i["x"], i["c"], reduction=r),
    "nll_3d": lambda F, i, r: F.nll_loss(i["x3"], i["c3"], reduction=r),
    "nll_4d": lambda F, i, r: F.nll_loss(i["x4"], i["c4"], reduction=r),
    "nll_weight": lambda F, i, r: F.nll_loss(i["x"], i["c"], i["w"][0], reduction=r),
    "ce_1d": lambda F, i, r: F.cross_entropy(i["x1"], i["c"][1], reduction=r),
    "ce": lambda F, i, r: F.cross_entropy(i["x"], i["c"], reduction=r),
    "ce_3d": lambda F, i, r: F.cross_entropy(i["x3"], i["c3"], reduction=r),
    "ce_4d": lambda F, i, r: F.cross_entropy(i["x4"], i["c4"], reduction=r),
    "ce_weight": lambda F, i, r: F.cross_entropy(i["x"], i["c"], i["w"][0], reduction=r),
    "ce_smoothing": lambda F, i, r: F.cross_entropy(
        i["x"], i["c"], reduction=r, label_smoothing=0.1),
    "ce_1d_smoothing": lambda F, i, r: F.cross_entropy(i["x1"], i["c"][1], reduction=r,
                                                       label_smoothing=0.1),
    "ce_probs": lambda F, i, r: F.cross_entropy(i["x"], i["p"].softmax(1), reduction=r),
}  # fmt: skip


def _name(L: ModuleType, case: str, reduction: str) -> str:
    return str(CASES[case](L.nn.functional, _inputs(L), reduction).grad_fn.name())


def test_loss_node_names() -> None:
    assert _name(lucid, "bce_with_logits", "mean") == "BinaryCrossEntropyWithLogitsBackward0"
    assert _name(lucid, "mse", "none") == "MseLossBackward0"
    assert _name(lucid, "nll", "sum") == "NllLossBackward0"
    assert _name(lucid, "nll_4d", "none") == "NllLoss2DBackward0"


def test_renamed_loss_still_differentiates() -> None:
    """Only the name changes: the gradient is the composed ops'."""
    x = lucid.tensor([0.5, -1.0, 2.0], requires_grad=True)
    t = lucid.tensor([1.0, 0.0, 1.0])
    F.binary_cross_entropy_with_logits(x, t).backward()
    want = (1 / (1 + np.exp(-np.array([0.5, -1.0, 2.0]))) - np.array([1.0, 0.0, 1.0])) / 3
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-6, atol=1e-7)


def test_no_grad_loss_has_no_node() -> None:
    with lucid.no_grad():
        assert F.mse_loss(lucid.ones(2, requires_grad=True), lucid.zeros(2)).grad_fn is None


@pytest.mark.parity
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_loss_node_name_parity(case: str, reduction: str) -> None:
    torch = pytest.importorskip("torch")
    assert _name(lucid, case, reduction) == _name(torch, case, reduction)


def _warning_lines(L: ModuleType) -> list[tuple[str, int]]:
    F_ = L.nn.functional
    x, t = L.zeros(4, 3), L.ones(4, 3)
    got = []
    for call in (lambda: F_.kl_div(x, t), lambda: F_.mse_loss(x, t[0]),
                 lambda: F_.l1_loss(x, t[0])):  # fmt: skip
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            call()
        got += [(r.filename, r.lineno - call.__code__.co_firstlineno) for r in w]
    return got


def test_loss_warnings_point_at_the_caller() -> None:
    """kl_div's "reduction: 'mean'" and a loss's target-size warning name the calling line
    (not float32_op's wrapper inside lucid), with torch's wording."""
    for filename, offset in _warning_lines(lucid):
        assert filename == __file__ and offset == 0
    with pytest.warns(UserWarning, match=r"^Using a target size \(lucid\.Size\(\[3\]\)\) that is "
                      r"different to the input size \(lucid\.Size\(\[4, 3\]\)\)"):  # fmt: skip
        F.mse_loss(lucid.zeros(4, 3), lucid.zeros(3))


@pytest.mark.parity
def test_loss_warning_lines_parity() -> None:
    torch = pytest.importorskip("torch")
    assert _warning_lines(lucid) == _warning_lines(torch)


def _layer_names(L: ModuleType) -> list[str]:
    rng = np.random.default_rng(1)
    w = L.tensor(rng.standard_normal((2, 3)).astype(np.float32), requires_grad=True)
    b = L.tensor(rng.standard_normal(2).astype(np.float32), requires_grad=True)
    table = L.tensor(rng.standard_normal((5, 3)).astype(np.float32), requires_grad=True)
    F_ = L.nn.functional
    got = []
    for shape in [(3,), (4, 3), (2, 4, 3), (2, 2, 4, 3), (0, 3)]:
        x = L.tensor(rng.standard_normal(shape).astype(np.float32), requires_grad=True)
        got += [F_.linear(x, w, b).grad_fn.name(), F_.linear(x, w).grad_fn.name(),
                F_.linear(x.detach(), w, b).grad_fn.name(),
                F_.linear(x, w.detach(), b.detach()).grad_fn.name()]  # fmt: skip
    idx = L.tensor([[0, 4], [2, 2]])
    got += [F_.embedding(idx, table).grad_fn.name(),
            F_.embedding(idx, table, padding_idx=2).grad_fn.name(),
            L.nn.Embedding(5, 3)(idx).grad_fn.name(),
            L.nn.Linear(3, 2)(L.ones(4, 3)).grad_fn.name()]  # fmt: skip
    return [str(n) for n in got]


def test_linear_and_embedding_node_names() -> None:
    names = _layer_names(lucid)
    assert names[4:6] == ["AddmmBackward0", "MmBackward0"]  # a (4, 3) input
    assert names[-4:] == ["EmbeddingBackward0"] * 3 + ["AddmmBackward0"]


@pytest.mark.parity
def test_linear_and_embedding_node_names_parity() -> None:
    torch = pytest.importorskip("torch")
    assert _layer_names(lucid) == _layer_names(torch)
