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
