"""The deprecated ``size_average``/``reduce`` arguments of the losses: torch's warning, word
for word (it names the ``reduction`` the pair stands for), and torch's values.

Found by karpathy/pytorch-made's ``run.py``
(``F.binary_cross_entropy_with_logits(xbhat, xb, size_average=False)``), whose warning said
"please use reduction instead." where torch says "please use reduction='sum' instead.".
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import lucid
import lucid.nn as lnn
import lucid.nn.functional as LF

pytestmark = pytest.mark.parity
torch = pytest.importorskip("torch")

PAIRS = [(False, None), (None, False), (True, True), (False, True), (True, False), (None, True)]


def _warnings(fn):  # type: ignore[no-untyped-def]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fn()
    return out, [str(w.message) for w in caught if "size_average" in str(w.message)]


@pytest.mark.parametrize(("size_average", "reduce_"), PAIRS)
@pytest.mark.parametrize("loss", ["binary_cross_entropy_with_logits", "mse_loss", "l1_loss"])
def test_functional_warning_and_value(loss: str, size_average, reduce_) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 3)).astype(np.float32)
    y = (rng.random((4, 3)) > 0.5).astype(np.float32)
    kw = {"size_average": size_average, "reduce": reduce_}
    ours, ours_msgs = _warnings(lambda: getattr(LF, loss)(lucid.tensor(x), lucid.tensor(y), **kw))
    theirs, their_msgs = _warnings(
        lambda: getattr(torch.nn.functional, loss)(torch.tensor(x), torch.tensor(y), **kw)
    )
    assert ours_msgs == their_msgs
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize(("size_average", "reduce_"), PAIRS)
def test_module_warning_and_reduction(size_average, reduce_) -> None:  # type: ignore[no-untyped-def]
    kw = {"size_average": size_average, "reduce": reduce_}
    ours, ours_msgs = _warnings(lambda: lnn.MSELoss(**kw))
    theirs, their_msgs = _warnings(lambda: torch.nn.MSELoss(**kw))
    assert ours_msgs == their_msgs
    assert ours.reduction == theirs.reduction


ELEMENTWISE_MEAN = (
    "reduction='elementwise_mean' is deprecated. Please use reduction='mean' instead."
)


def _mean_warnings(fn):  # type: ignore[no-untyped-def]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fn()
    return out, [str(w.message) for w in caught if "elementwise_mean" in str(w.message)]


@pytest.mark.parametrize(
    "loss", ["nll_loss", "cross_entropy", "mse_loss", "l1_loss", "huber_loss", "kl_div",
             "soft_margin_loss", "smooth_l1_loss"],
)  # fmt: skip
def test_elementwise_mean_is_mean_with_torchs_warning(loss: str) -> None:
    # pytorch/examples char_level_rnn: nn.NLLLoss(reduction='elementwise_mean'); torch's
    # _Reduction.get_enum takes the old name as "mean", with a warning
    rng = np.random.default_rng(1)
    x = rng.standard_normal((5, 4)).astype(np.float32)
    if loss in ("nll_loss", "cross_entropy"):
        y = rng.integers(0, 4, 5)
    elif loss == "soft_margin_loss":
        y = (rng.random((5, 4)) > 0.5).astype(np.float32) * 2 - 1
    elif loss == "kl_div":
        y = rng.random((5, 4)).astype(np.float32)
    else:
        y = rng.standard_normal((5, 4)).astype(np.float32)
    got, msgs = _mean_warnings(
        lambda: getattr(LF, loss)(lucid.tensor(x), lucid.tensor(y), reduction="elementwise_mean")
    )
    want, t_msgs = _mean_warnings(
        lambda: getattr(torch.nn.functional, loss)(
            torch.tensor(x), torch.tensor(y), reduction="elementwise_mean"
        )
    )
    assert msgs == t_msgs == [ELEMENTWISE_MEAN]
    mean = getattr(LF, loss)(lucid.tensor(x), lucid.tensor(y), reduction="mean")
    assert got.shape == () and float(got) == float(mean)
    np.testing.assert_allclose(float(got), float(want), rtol=1e-5, atol=1e-6)


def test_elementwise_mean_in_a_module_and_its_gradient() -> None:
    rng = np.random.default_rng(2)
    x = rng.standard_normal((6, 5)).astype(np.float32)
    y = rng.integers(0, 5, 6)
    xl = lucid.tensor(x, requires_grad=True)
    xt = torch.tensor(x, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lnn.NLLLoss(reduction="elementwise_mean")(LF.log_softmax(xl, 1), lucid.tensor(y)).backward()
        torch.nn.NLLLoss(reduction="elementwise_mean")(
            torch.log_softmax(xt, 1), torch.tensor(y)
        ).backward()
    np.testing.assert_allclose(xl.grad.numpy(), xt.grad.numpy(), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize(
    ("loss", "message"),
    [("poisson_nll_loss", "elementwise_mean is not a valid value for reduction"),
     ("gaussian_nll_loss", "elementwise_mean is not valid"),
     ("triplet_margin_with_distance_loss", "elementwise_mean is not a valid value for reduction")],
)  # fmt: skip
def test_losses_that_check_the_name_themselves_refuse_it(loss: str, message: str) -> None:
    x = np.ones((3, 2), np.float32)
    args = (x, x, x)[
        : 3 if loss in ("gaussian_nll_loss", "triplet_margin_with_distance_loss") else 2
    ]
    for fw in (lucid, torch):
        with pytest.raises(ValueError, match=f"^{message}$"):
            getattr(fw.nn.functional, loss)(
                *(fw.tensor(a) for a in args), reduction="elementwise_mean"
            )
