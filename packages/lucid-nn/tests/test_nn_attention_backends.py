"""lucid.nn.attention: the flash-attention implementation registry, and SDPBackend's members
and sdpa_kernel's error as torch's (sdpa_kernel itself: test_nn_attention_sdpa_kernel.py)."""

from __future__ import annotations

import pytest

from lucid.nn.attention import SDPBackend, sdpa_kernel


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
