"""DropBlock's mask against torchvision's recipe in torch (pad the seeds, stride-1 max pool,
rescale), for the same seeds: lucid's draw is patched to hand both the same Bernoulli seeds."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
from lucid.data import ops

pytestmark = pytest.mark.parity
torch = pytest.importorskip("torch")


@pytest.mark.parametrize(("nd", "block_size"), [(2, 3), (2, 5), (3, 3)])
def test_drop_block_matches_torchvisions_recipe(
    monkeypatch: pytest.MonkeyPatch, nd: int, block_size: int
) -> None:
    rng = np.random.default_rng(nd * 10 + block_size)
    shape = (2, 3) + (9,) * nd
    x = rng.standard_normal(shape)
    valid = [s - block_size + 1 for s in shape[2:]]
    seeds = (rng.random((2, 3, *valid)) < 0.08).astype(np.float64)
    monkeypatch.setattr(lucid, "bernoulli", lambda p, *a, **k: lucid.tensor(seeds))
    fn = ops.drop_block2d if nd == 2 else ops.drop_block3d
    got = fn(lucid.tensor(x), 0.2, block_size).numpy()
    # torchvision.ops.drop_block{2,3}d after its bernoulli_ draw:
    noise = torch.nn.functional.pad(torch.from_numpy(seeds), [block_size // 2] * (2 * nd), value=0)
    pool = torch.nn.functional.max_pool2d if nd == 2 else torch.nn.functional.max_pool3d
    noise = pool(noise, stride=1, kernel_size=block_size, padding=block_size // 2)
    noise = 1 - noise
    ref = torch.from_numpy(x) * noise * (noise.numel() / (1e-6 + noise.sum()))
    np.testing.assert_allclose(got, ref.numpy(), rtol=1e-12, atol=1e-12)
