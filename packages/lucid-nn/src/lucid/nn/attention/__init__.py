"""``lucid.nn.attention``: which backends ``scaled_dot_product_attention`` may use, as torch's.

``sdpa_kernel`` sets the switches of ``lucid.backends.cuda`` (``enable_math_sdp``, ...) for the
``with`` block and restores them after. Lucid has one attention computation; it runs while the
math or the flash backend is enabled (PyTorch's two CPU backends), so a block that allows only
others makes ``scaled_dot_product_attention`` raise, as PyTorch does on the CPU.

Its submodules are imported by name, as torch's: ``lucid.nn.attention.bias`` (causal biases)
and ``lucid.nn.attention.flex_attention`` (FlexAttention: ``flex_attention``,
``create_block_mask``, ``BlockMask``).

>>> from lucid.nn.attention import SDPBackend, sdpa_kernel
>>> with sdpa_kernel([SDPBackend.MATH, SDPBackend.FLASH_ATTENTION]):
...     pass
"""

from __future__ import annotations

import contextlib
import enum
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from lucid.backends import cuda as _cuda

__all__ = [
    "WARN_FOR_UNFUSED_KERNELS",
    "SDPBackend",
    "activate_flash_attention_impl",
    "current_flash_attention_impl",
    "list_flash_attention_impls",
    "register_flash_attention_impl",
    "restore_flash_attention_impl",
    "sdpa_kernel",
]

WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(enum.Enum):
    """The backends of ``scaled_dot_product_attention``, for ``sdpa_kernel`` (torch's values)."""

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4

    def __int__(self) -> int:
        return int(self.value)

    def __index__(self) -> int:
        return int(self.value)


# lucid.backends.cuda's switch of each backend, in torch's order.
_BACKEND_NAMES = {
    "cudnn": SDPBackend.CUDNN_ATTENTION,
    "flash": SDPBackend.FLASH_ATTENTION,
    "mem_efficient": SDPBackend.EFFICIENT_ATTENTION,
    "math": SDPBackend.MATH,
    "overrideable": SDPBackend.OVERRIDEABLE,
}
# The order a backend is tried in (torch's default); ``set_priority=True`` reorders it.
_priority_order = [
    SDPBackend.FLASH_ATTENTION,
    SDPBackend.EFFICIENT_ATTENTION,
    SDPBackend.MATH,
    SDPBackend.CUDNN_ATTENTION,
    SDPBackend.OVERRIDEABLE,
]


def _cur_sdpa_kernel_backends(with_priority: bool = False) -> list[SDPBackend]:
    """The enabled backends (in priority order when ``with_priority``)."""
    backends = [b for name, b in _BACKEND_NAMES.items() if _cuda._SDP_ENABLED[name]]
    if with_priority:
        backends.sort(key=_priority_order.index)
    return backends


def _sdpa_kernel(backends: Iterable[SDPBackend], set_priority: bool = False) -> None:
    """Enable exactly ``backends`` (and make their order the priority when ``set_priority``)."""
    backends = list(backends)
    for name, backend in _BACKEND_NAMES.items():
        _cuda._SDP_ENABLED[name] = backend in backends
    if set_priority:
        order = [b for b in backends if b in _priority_order]
        _priority_order[:] = order + [b for b in _priority_order if b not in order]


@contextlib.contextmanager
def sdpa_kernel(
    backends: list[SDPBackend] | SDPBackend, set_priority: bool = False
) -> Iterator[dict[str, object]]:
    """Allow only ``backends`` to ``scaled_dot_product_attention`` inside the ``with`` block.

    ``set_priority=True`` also makes their order the order they are tried in. The previous
    switches (and order) come back when the block ends.
    """
    if not isinstance(backends, list | SDPBackend):
        raise AssertionError(
            "Backend must be an instance of SDPBackend or a list of SDPBackend instances, "
            f"got {type(backends).__name__}"
        )
    chosen = [backends] if isinstance(backends, SDPBackend) else list(dict.fromkeys(backends))
    previous = _cur_sdpa_kernel_backends(with_priority=set_priority)
    previous_order = list(_priority_order)
    try:
        _sdpa_kernel(chosen, set_priority)
        yield {}
    finally:
        _sdpa_kernel(previous, set_priority)
        _priority_order[:] = previous_order


# The flash-attention implementations registered (FA3/FA4 are CUDA kernels: none is built into
# lucid) and the one activated; kept and read back, they change no computation.
_FLASH_IMPLS: dict[str, Callable[..., Any]] = {}
_active_impl: list[str | None] = [None]


def register_flash_attention_impl(impl: str, *, register_fn: Callable[..., Any]) -> None:
    """``torch.nn.attention.register_flash_attention_impl``: keep ``register_fn`` as ``impl``."""
    _FLASH_IMPLS[impl] = register_fn


def list_flash_attention_impls() -> list[str]:
    """``torch.nn.attention.list_flash_attention_impls``: the registered implementations."""
    return sorted(_FLASH_IMPLS)


def activate_flash_attention_impl(impl: str) -> None:
    """``torch.nn.attention.activate_flash_attention_impl``: make the registered ``impl`` the
    current one (lucid's attention runs its own kernels regardless)."""
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
    """``torch.nn.attention.restore_flash_attention_impl``: none activated again."""
    _active_impl[0] = None
