"""lucid.autocast and lucid.amp.GradScaler against PyTorch's: the same output dtypes and values
for the same inputs, the same scales and skipped steps over a training loop."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lucid

pytestmark = pytest.mark.parity
torch = pytest.importorskip("torch")

OPS: dict[str, Callable[[Any, list[Any]], Any]] = {
    "matmul": lambda m, t: m.matmul(t[0], t[1]),
    "mm": lambda m, t: m.mm(t[0], t[1]),
    "bmm": lambda m, t: m.bmm(t[2], t[3]),
    "addmm": lambda m, t: m.addmm(t[4], t[0], t[1]),
    "baddbmm": lambda m, t: m.baddbmm(t[5], t[2], t[3]),
    "addbmm": lambda m, t: m.addbmm(t[4], t[2], t[3]),
    "einsum": lambda m, t: m.einsum("bij,bjk->bik", t[2], t[3]),
    "mv": lambda m, t: m.mv(t[0], t[1][:, 0]),
    "dot": lambda m, t: m.dot(t[0][0], t[1][:, 0]),
    "addmv": lambda m, t: m.addmv(t[4][:, 0], t[0], t[1][:, 0]),
    "cdist": lambda m, t: m.cdist(t[0].bfloat16(), t[0].bfloat16()),
    "tanh_of_matmul": lambda m, t: m.tanh(m.matmul(t[0], t[1])),
}


def _arrays() -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    shapes = [(6, 5), (5, 4), (2, 6, 5), (2, 5, 4), (6, 4), (2, 6, 4)]
    return [rng.standard_normal(s).astype(np.float32) for s in shapes]


@pytest.mark.parametrize("low", ["bfloat16", "float16"])
@pytest.mark.parametrize("name", sorted(OPS))
def test_ops_under_autocast_match_torch(name: str, low: str) -> None:
    arrays = _arrays()
    with torch.autocast("cpu", dtype=getattr(torch, low)):
        want = OPS[name](torch, [torch.from_numpy(a) for a in arrays])
    with lucid.autocast("cpu", dtype=getattr(lucid, low)):
        got = OPS[name](lucid, [lucid.tensor(a) for a in arrays])
    assert str(got.dtype).split(".")[1] == str(want.dtype).split(".")[1]
    np.testing.assert_allclose(got.float().numpy(), want.float().numpy(), rtol=1e-2, atol=1e-2)


def _regression(framework: Any) -> tuple[Any, Callable[[int], Any]]:
    """A linear model and its loss at each step; steps 2 and 5 overflow (inf, then nan)."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((16, 4)).astype(np.float32)
    y = x @ np.array([1.0, -2.0, 0.5, 3.0], dtype=np.float32)
    w = framework.zeros(4, requires_grad=True)
    xs, ys = framework.tensor(x), framework.tensor(y)

    def loss(step: int) -> Any:
        err = (xs @ w - ys) ** 2
        if step == 2:
            err = err * 1e38
        if step == 5:
            err = err * float("nan")
        return err.mean()

    return w, loss


def test_grad_scaler_loop_matches_torch() -> None:
    settings = {"init_scale": 2.0**10, "growth_factor": 2.0, "backoff_factor": 0.5,
                "growth_interval": 2}  # fmt: skip
    runs = {}
    for name, fw, scaler in [
        ("torch", torch, torch.amp.GradScaler("cpu", **settings)),
        ("lucid", lucid, lucid.amp.GradScaler("cpu", **settings)),
    ]:
        w, loss_at = _regression(fw)
        opt = _SGD(w)
        scales, stepped = [], []
        for step in range(8):
            w.grad = None
            scaler.scale(loss_at(step)).backward()
            before = w.detach().numpy().copy()
            scaler.step(opt)
            scaler.update()
            scales.append(scaler.get_scale())
            stepped.append(not np.array_equal(before, w.detach().numpy()))
        runs[name] = (scales, stepped, w.detach().numpy(), scaler.state_dict())
    assert runs["lucid"][0] == runs["torch"][0]
    skipped_at_2_and_5 = [True, True, False, True, True, False, True, True]
    assert runs["lucid"][1] == runs["torch"][1] == skipped_at_2_and_5
    np.testing.assert_allclose(runs["lucid"][2], runs["torch"][2], rtol=1e-5, atol=1e-6)
    assert runs["lucid"][3] == runs["torch"][3]


class _SGD:
    """Plain SGD over one tensor: the same update in both frameworks (what GradScaler wraps)."""

    def __init__(self, w: Any) -> None:
        self.param_groups = [{"params": [w]}]

    def step(self) -> None:
        w = self.param_groups[0]["params"][0]
        w.data.sub_(w.grad * 0.05)


def test_disabled_scaler_and_nanogpt_idiom_match_torch() -> None:
    def run(fw: Any, amp: Any) -> list[float]:
        w, loss_at = _regression(fw)
        opt = _SGD(w)
        scaler = amp.GradScaler(enabled=False)
        losses = []
        for step in (0, 1, 3, 4):
            w.grad = None
            with amp.autocast(enabled=False):
                loss = loss_at(step)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            losses.append(float(loss.item()))
        return losses

    import lucid.cuda.amp  # noqa: F401  (the attribute torch.cuda.amp has)

    with pytest.warns(FutureWarning):
        want = run(torch, torch.cuda.amp)
    with pytest.warns(FutureWarning):
        got = run(lucid, lucid.cuda.amp)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
