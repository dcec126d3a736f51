"""``lucid.nn.attention``: ``SDPBackend`` and ``sdpa_kernel`` as torch's (vit-pytorch's ViViT
wraps its attention in ``sdpa_kernel([...])``), and the ``lucid.backends.cuda`` switches."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.nn.functional as F
from lucid.nn.attention import SDPBackend, sdpa_kernel

NO_BACKEND = "No viable backend for scaled_dot_product_attention was found"


def _switches() -> tuple[bool, ...]:
    cuda = lucid.backends.cuda
    return (cuda.math_sdp_enabled(), cuda.flash_sdp_enabled(),
            cuda.mem_efficient_sdp_enabled(), cuda.cudnn_sdp_enabled())  # fmt: skip


def test_sdpa_kernel_sets_the_switches_and_restores_them() -> None:
    assert _switches() == (True, True, True, True)
    with sdpa_kernel(SDPBackend.MATH) as out:
        assert out == {} and _switches() == (True, False, False, False)
        with sdpa_kernel([SDPBackend.CUDNN_ATTENTION, SDPBackend.FLASH_ATTENTION]):
            assert _switches() == (False, True, False, True)
        assert _switches() == (True, False, False, False)
    assert _switches() == (True, True, True, True)
    with pytest.raises(ValueError), sdpa_kernel(SDPBackend.MATH):
        raise ValueError  # restored after an exception too
    assert _switches() == (True, True, True, True)


def test_sdpa_runs_on_math_or_flash_and_raises_without_both() -> None:
    q = lucid.from_numpy(np.random.default_rng(0).standard_normal((1, 2, 3, 4), dtype=np.float32))
    plain = F.scaled_dot_product_attention(q, q, q).numpy()
    every = [SDPBackend.MATH, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.FLASH_ATTENTION,
             SDPBackend.CUDNN_ATTENTION]  # fmt: skip
    for allowed in (SDPBackend.MATH, SDPBackend.FLASH_ATTENTION, every):
        with sdpa_kernel(allowed):
            out = F.scaled_dot_product_attention(q, q, q).numpy()
        np.testing.assert_allclose(out, plain, rtol=1e-6, atol=1e-7)
    for refused in (SDPBackend.EFFICIENT_ATTENTION, SDPBackend.CUDNN_ATTENTION, SDPBackend.ERROR):
        with sdpa_kernel(refused), pytest.raises(RuntimeError, match=NO_BACKEND):
            F.scaled_dot_product_attention(q, q, q)
    lucid.backends.cuda.enable_math_sdp(False)
    lucid.backends.cuda.enable_flash_sdp(False)
    try:
        with pytest.raises(RuntimeError, match=NO_BACKEND):
            F.scaled_dot_product_attention(q, q, q)
    finally:
        lucid.backends.cuda.enable_math_sdp(True)
        lucid.backends.cuda.enable_flash_sdp(True)


def test_sdpa_kernel_refuses_what_is_not_a_backend() -> None:
    with pytest.raises(AssertionError, match="got str"), sdpa_kernel("math"):  # type: ignore[arg-type]
        pass


@pytest.mark.parity
def test_sdp_backend_matches_torch() -> None:
    torch = pytest.importorskip("torch")
    from torch.nn.attention import SDPBackend as TorchBackend

    assert list(SDPBackend.__members__) == list(TorchBackend.__members__)
    for name, theirs in TorchBackend.__members__.items():
        mine = SDPBackend[name]
        assert int(mine) == int(theirs) and repr(mine) == repr(theirs) and str(mine) == str(theirs)
        assert mine != int(theirs)  # not an int, as torch's
    warn_flag = torch.nn.attention.WARN_FOR_UNFUSED_KERNELS
    assert lucid.nn.attention.WARN_FOR_UNFUSED_KERNELS is warn_flag
    with sdpa_kernel([SDPBackend.MATH, SDPBackend.MATH]):
        mine = lucid.nn.attention._cur_sdpa_kernel_backends()
    with torch.nn.attention.sdpa_kernel([TorchBackend.MATH, TorchBackend.MATH]):
        theirs = torch.nn.attention._cur_sdpa_kernel_backends()
    assert [b.name for b in mine] == [b.name for b in theirs]
