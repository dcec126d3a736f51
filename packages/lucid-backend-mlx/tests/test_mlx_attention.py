"""The MLX "sdpa" kernel against the same formula in lucid ops on "cpu": masks, dead rows, grads.

lucid.nn is not a dependency of this package, so the kernel is reached the way lucid.nn reaches
it: through a Function that finds the ``kernels.SDPA`` kernel and keeps its residuals.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

pytestmark = pytest.mark.mlx
mx = pytest.importorskip("mlx.core")

import lucid  # noqa: E402
import lucid.backends.mlx  # noqa: E402, F401
from lucid import Tensor, kernels  # noqa: E402
from lucid.autograd import Function  # noqa: E402

RNG = np.random.default_rng(0)


class _SDPA(Function):
    forward_on_arrays = True  # forward computes on backend arrays (ctx.xp)

    @staticmethod
    def forward(ctx: Any, q: Any, k: Any, v: Any, mask: Any, p: float, causal: bool,
                scale: Any) -> Any:  # fmt: skip
        ctx.fused = kernels.SDPA.find(ctx.backend)
        assert ctx.fused is not None, "the MLX backend should have an 'sdpa' kernel"
        out, ctx.residuals = ctx.fused.forward(ctx.backend, q, k, v, mask, p, causal, scale,
                                               ctx.needs_input_grad[:4])  # fmt: skip
        return out

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        grads = ctx.fused.backward(ctx.backend, ctx.residuals, g.array, ctx.needs_input_grad)
        wrapped = [None if a is None else Tensor.from_backend_array(a, ctx.backend) for a in grads]
        return (*wrapped, *([None] * (7 - len(wrapped))))


def sdpa(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, p: float = 0.0) -> Tensor:
    out: Tensor = _SDPA.apply(q, k, v, mask, p, False, None)
    return out


def reference(q: Tensor, k: Tensor, v: Tensor, mask: Tensor) -> Tensor:
    """torch's SDPA in lucid ops: a query whose keys are all masked gets zeros."""
    scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(q.shape[-1]))
    if mask.dtype is lucid.bool:
        scores = scores.masked_fill(mask.logical_not(), -math.inf)
    else:
        scores = scores + mask
    dead = (scores == -math.inf).all(dim=-1, keepdim=True)
    weights = lucid.softmax(scores.masked_fill(dead, 0.0), dim=-1).masked_fill(dead, 0.0)
    out: Tensor = weights @ v
    return out


def _arrays(*shapes: tuple[int, ...]) -> list[np.ndarray]:
    return [RNG.standard_normal(s).astype(np.float32) for s in shapes]


def _leaves(arrays: list[np.ndarray], device: str) -> list[Tensor]:
    return [lucid.tensor(a, device=device, requires_grad=True) for a in arrays]


def _bool_mask(shape: tuple[int, ...], dead: list[tuple[int, ...]]) -> np.ndarray:
    mask = RNG.random(shape) < 0.6
    mask[..., 0] = True  # every row keeps a key, except the dead ones below
    for row in dead:
        mask[row] = False
    return mask


def _float_mask(shape: tuple[int, ...], dead: list[tuple[int, ...]]) -> np.ndarray:
    return np.where(_bool_mask(shape, dead), 0.0, -np.inf).astype(np.float32)


CASES = {  # (B, H, L, E) runs MLX's fused kernel, (H, L, E) the formula in MLX ops
    "fused_bool_mask": ((2, 2, 3, 4), (2, 2, 5, 4), _bool_mask((3, 5), [(1,)])),
    "fused_per_batch": ((2, 2, 3, 4), (2, 2, 5, 4), _bool_mask((2, 1, 3, 5), [(0, 0, 2)])),
    "unfused_bool_mask": ((2, 3, 4), (2, 5, 4), _bool_mask((2, 3, 5), [(1, 0), (0, 2)])),
    "fused_float_mask": ((1, 2, 3, 4), (1, 2, 5, 4), _float_mask((3, 5), [(2,)])),
    "unfused_float_mask": ((2, 3, 4), (2, 5, 4), _float_mask((3, 5), [(0,)])),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(CASES))
def test_all_masked_queries_give_zeros_and_no_gradient_as_on_cpu(name: str) -> None:
    qs, ks, mask_np = CASES[name]
    dtype = lucid.bool if mask_np.dtype == bool else lucid.float32
    arrays, results = _arrays(qs, ks, ks), {}
    for dev, fn in (("cpu", reference), ("mlx", sdpa)):
        q, k, v = _leaves(arrays, dev)
        mask = lucid.tensor(mask_np, dtype=dtype, device=dev)
        out = fn(q, k, v, mask)
        (out * out).sum().backward()
        results[dev] = [out.detach().numpy()] + [t.grad.numpy() for t in (q, k, v)]  # type: ignore[union-attr]
    out, gq = results["mlx"][0], results["mlx"][1]
    alive = mask_np if mask_np.dtype == bool else mask_np != -np.inf
    dead = np.broadcast_to(~alive.any(-1), out.shape[:-1])
    assert dead.any() and np.isfinite(out).all()
    assert (out[dead] == 0).all() and (gq[dead] == 0).all()
    for want, got, what in zip(results["cpu"], results["mlx"], ["out", "dq", "dk", "dv"]):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5, err_msg=what)


@pytest.mark.parametrize("rank", [3, 4])
def test_float_mask_gradient_is_zero_on_all_masked_rows(rank: int) -> None:
    lead = (1, 2)[4 - rank :]
    q, k, v = _leaves(_arrays((*lead, 3, 4), (*lead, 5, 4), (*lead, 5, 4)), "mlx")
    mask = lucid.tensor(_float_mask((3, 5), [(1,)]) + 0.5, device="mlx", requires_grad=True)
    sdpa(q, k, v, mask).sum().backward()
    assert mask.grad is not None
    gm = mask.grad.numpy()  # row 1 is the dead one
    assert np.isfinite(gm).all() and (gm[1] == 0).all() and (gm[0] != 0).any()


def test_dropout_keeps_all_masked_queries_at_zero() -> None:
    q, k, v = _leaves(_arrays((1, 2, 3, 4), (1, 2, 5, 4), (1, 2, 5, 4)), "mlx")
    mask = lucid.tensor(_bool_mask((3, 5), [(2,)]), device="mlx")
    out = sdpa(q, k, v, mask, p=0.5)
    out.sum().backward()
    assert (out.detach().numpy()[..., 2, :] == 0).all()
    assert q.grad is not None and (q.grad.numpy()[..., 2, :] == 0).all()
