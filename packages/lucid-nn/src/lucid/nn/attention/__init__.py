"""``lucid.nn.attention`` (``torch.nn.attention``): choosing scaled dot product attention's
backend.

lucid's ``scaled_dot_product_attention`` has one implementation per device (the math, with
fused kernels where they apply: they compute the same softmax attention), so
:func:`sdpa_kernel` records the backends a block allows (:func:`enabled_backends`) and changes
no result; a list without ``SDPBackend.MATH`` still runs lucid's kernels. The flash-attention
implementation registry (FA3/FA4 are CUDA kernels) is kept and read back, and activates none.
"""

from __future__ import annotations

import contextlib
import enum
import threading
from collections.abc import Callable, Iterator
from typing import Any

__all__ = [
    "SDPBackend",
    "activate_flash_attention_impl",
    "current_flash_attention_impl",
    "enabled_backends",
    "list_flash_attention_impls",
    "register_flash_attention_impl",
    "restore_flash_attention_impl",
    "sdpa_kernel",
]


class SDPBackend(enum.IntEnum):
    """``torch.nn.attention.SDPBackend``: the attention backends, with torch's values."""

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


_ALL = [b for b in SDPBackend if b is not SDPBackend.ERROR]


class _Allowed(threading.local):
    def __init__(self) -> None:
        self.backends: list[SDPBackend] = list(_ALL)


_allowed = _Allowed()


def enabled_backends() -> list[SDPBackend]:
    """The backends the innermost :func:`sdpa_kernel` block allows (all, outside one)."""
    return list(_allowed.backends)


@contextlib.contextmanager
def sdpa_kernel(backends: list[SDPBackend] | SDPBackend,
                set_priority: bool = False) -> Iterator[dict[str, Any]]:  # fmt: skip
    """``torch.nn.attention.sdpa_kernel``: a block in which attention may use ``backends``
    (one, or a list; ``set_priority``: in that order). lucid records them and computes as
    everywhere (see the module's docstring)."""
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError(
            "Backend must be an instance of SDPBackend or a list of SDPBackend instances, got "
            f"{type(backends).__name__}"
        )
    chosen = [backends] if isinstance(backends, SDPBackend) else list(dict.fromkeys(backends))
    for b in chosen:
        if not isinstance(b, SDPBackend):
            raise AssertionError(
                f"Backend must be an instance of SDPBackend, got {type(b).__name__}"
            )
    previous = _allowed.backends
    _allowed.backends = chosen
    try:
        yield {}
    finally:
        _allowed.backends = previous


_FLASH_IMPLS: dict[str, Callable[..., Any]] = {}
_active_impl: list[str | None] = [None]


def register_flash_attention_impl(impl: str, *, register_fn: Callable[..., Any]) -> None:
    """``torch.nn.attention.register_flash_attention_impl``: keep ``register_fn`` as ``impl``."""
    _FLASH_IMPLS[impl] = register_fn


def list_flash_attention_impls() -> list[str]:
    """``torch.nn.attention.list_flash_attention_impls``: the registered implementations'
    names (none are built into lucid: FA3 and FA4 are CUDA kernels)."""
    return sorted(_FLASH_IMPLS)


def activate_flash_attention_impl(impl: str) -> None:
    """``torch.nn.attention.activate_flash_attention_impl``: make ``impl`` the current one (it
    must be registered). lucid's attention runs its own kernels regardless."""
    if impl not in _FLASH_IMPLS:
        raise ValueError(
            f"Unknown flash attention impl '{impl}'. Available implementations: "
            f"{list_flash_attention_impls()}"
        )
    _active_impl[0] = impl


def current_flash_attention_impl() -> str | None:
    """``torch.nn.attention.current_flash_attention_impl``: the activated name, or None."""
    return _active_impl[0]


def restore_flash_attention_impl(_raise_warn: bool = True) -> None:
    """``torch.nn.attention.restore_flash_attention_impl``: back to none activated."""
    _active_impl[0] = None
