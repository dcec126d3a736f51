"""lucid.nn.attention: sdpa_kernel records the backends a block allows (lucid computes the
same attention under any choice), SDPBackend has torch's members and values."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.nn.functional as F
from lucid.nn.attention import SDPBackend, enabled_backends, sdpa_kernel


def test_sdpa_kernel_records_the_choice_and_changes_no_result() -> None:
    lucid.manual_seed(0)
    q, k, v = (lucid.randn(2, 3, 5, 4) for _ in range(3))
    want = F.scaled_dot_product_attention(q, k, v, is_causal=True).numpy()
    assert enabled_backends()[0] is SDPBackend.MATH and SDPBackend.ERROR not in enabled_backends()
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        assert enabled_backends() == [SDPBackend.FLASH_ATTENTION]
        with sdpa_kernel([SDPBackend.MATH, SDPBackend.MATH, SDPBackend.EFFICIENT_ATTENTION]):
            assert enabled_backends() == [SDPBackend.MATH, SDPBackend.EFFICIENT_ATTENTION]
            got = F.scaled_dot_product_attention(q, k, v, is_causal=True).numpy()
        assert enabled_backends() == [SDPBackend.FLASH_ATTENTION]
    np.testing.assert_array_equal(got, want)
    assert len(enabled_backends()) == 5
    with pytest.raises(AssertionError, match="Backend must be an instance of SDPBackend"):
        with sdpa_kernel("math"):  # type: ignore[arg-type]
            pass


def test_flash_attention_registry() -> None:
    from lucid.nn import attention

    assert attention.current_flash_attention_impl() is None
    with pytest.raises(ValueError, match="Unknown flash attention impl 'FA9'"):
        attention.activate_flash_attention_impl("FA9")
    attention.register_flash_attention_impl("FA9", register_fn=lambda: None)
    try:
        attention.activate_flash_attention_impl("FA9")
        assert attention.current_flash_attention_impl() == "FA9"
        assert "FA9" in attention.list_flash_attention_impls()
    finally:
        attention.restore_flash_attention_impl()
        attention._FLASH_IMPLS.pop("FA9")
    assert attention.current_flash_attention_impl() is None


@pytest.mark.parity
def test_backends_and_messages_as_torchs() -> None:
    torch = pytest.importorskip("torch")
    from torch.nn.attention import SDPBackend as TorchBackend

    assert {k: int(v) for k, v in SDPBackend.__members__.items()} == {
        k: int(v) for k, v in TorchBackend.__members__.items()
    }
    with pytest.raises(AssertionError) as theirs, torch.nn.attention.sdpa_kernel("math"):
        pass
    with pytest.raises(AssertionError) as ours, sdpa_kernel("math"):  # type: ignore[arg-type]
        pass
    assert str(ours.value) == str(theirs.value)
