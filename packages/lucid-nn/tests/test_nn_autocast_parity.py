"""A small CNN and a causal self-attention block under autocast, lucid against PyTorch from the
same weights: output dtypes, logits, the float32 loss and the float32 gradients."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lucid
import lucid.nn as nn
import lucid.nn.functional as F

pytestmark = pytest.mark.parity
torch = pytest.importorskip("torch")


def _cnn(m: Any) -> Any:
    return m.Sequential(m.Conv2d(2, 4, 3, padding=1), m.ReLU(), m.Flatten(), m.Linear(64, 3))


class _Attention:
    """nanoGPT's block shape: qkv projection, causal sdpa, output projection, in either
    framework (``m`` is the nn module, ``fn`` its functional)."""

    def __init__(self, m: Any, fn: Any) -> None:
        self.qkv, self.proj, self.fn = m.Linear(8, 24), m.Linear(8, 8), fn

    def parameters(self) -> list[Any]:
        return [*self.qkv.parameters(), *self.proj.parameters()]

    def __call__(self, x: Any) -> Any:
        b, t, c = x.shape
        q, k, v = self.qkv(x).split(c, dim=2)
        heads = [h.reshape(b, t, 2, c // 2).transpose(1, 2) for h in (q, k, v)]
        y = self.fn.scaled_dot_product_attention(*heads, is_causal=True)
        return self.proj(y.transpose(1, 2).reshape(b, t, c))


def _copy(src: list[Any], dst: list[Any]) -> None:
    with torch.no_grad():
        for s, d in zip(src, dst):
            d.copy_(torch.from_numpy(s.detach().numpy().copy()))


def _run(model: Any, x: Any, target: Any, fw: Any, fn: Any) -> tuple[Any, Any, list[Any]]:
    with fw.autocast("cpu", dtype=fw.bfloat16):
        out = model(x)
        loss = fn.cross_entropy(out.reshape(-1, out.shape[-1]), target)
    loss.backward()
    return out, loss, [p.grad for p in model.parameters()]


@pytest.mark.parametrize("kind", ["cnn", "attention"])
def test_model_under_autocast_matches_torch(kind: str) -> None:
    lucid.manual_seed(0)
    rng = np.random.default_rng(0)
    if kind == "cnn":
        ours, theirs = _cnn(nn), _cnn(torch.nn)
        x = rng.standard_normal((2, 2, 4, 4)).astype(np.float32)
        target = np.array([0, 2])
    else:
        ours, theirs = _Attention(nn, F), _Attention(torch.nn, torch.nn.functional)
        x = rng.standard_normal((2, 5, 8)).astype(np.float32)
        target = rng.integers(0, 8, 10)
    _copy(list(ours.parameters()), list(theirs.parameters()))
    got = _run(ours, lucid.tensor(x), lucid.tensor(target), lucid, F)
    want = _run(theirs, torch.from_numpy(x), torch.from_numpy(target), torch, torch.nn.functional)
    assert got[0].dtype is lucid.bfloat16 and want[0].dtype == torch.bfloat16
    assert got[1].dtype is lucid.float32 and want[1].dtype == torch.float32
    np.testing.assert_allclose(got[0].float().detach().numpy(), want[0].float().detach().numpy(),
                               rtol=3e-2, atol=3e-2)  # fmt: skip
    np.testing.assert_allclose(got[1].item(), want[1].item(), rtol=1e-2, atol=1e-2)
    for g, w in zip(got[2], want[2]):
        assert g.dtype is lucid.float32 and w.dtype == torch.float32
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=5e-2, atol=5e-2)
