"""``lucid.nn.attention.bias`` (``torch.nn.attention.bias``): causal biases for attention.

A :class:`CausalBias` is a bool :class:`lucid.Tensor` of shape ``(L, S)`` (its data: the
materialized mask, True = attend) that ``scaled_dot_product_attention`` takes as ``attn_mask``:
an upper-left one (or any with ``L == S``) runs as ``is_causal=True``, a lower-right one as its
bool mask (PyTorch's CPU path).

>>> from lucid.nn.attention.bias import causal_lower_right
>>> causal_lower_right(2, 3).tolist()
[[True, True, False], [True, True, True]]
"""

from __future__ import annotations

import warnings
from enum import IntEnum, auto
from typing import Any

import lucid
from lucid import Tensor

__all__ = ["CausalBias", "CausalVariant", "causal_lower_right", "causal_upper_left"]


class CausalVariant(IntEnum):
    """The two causal biases (torch's values).

    ``UPPER_LEFT``: ``ones(L, S).tril()`` (``is_causal=True``); ``LOWER_RIGHT``:
    ``ones(L, S).tril(S - L)``, aligned to the lower-right corner. They agree when ``L == S``.
    """

    UPPER_LEFT = auto()
    LOWER_RIGHT = auto()


class CausalBias(Tensor):
    """A causal attention bias ``(seq_len_q, seq_len_kv)`` for ``scaled_dot_product_attention``.

    Made by :func:`causal_upper_left` and :func:`causal_lower_right`. As a Tensor it is the
    materialized bool mask (on the CPU); ``variant``, ``seq_len_q`` and ``seq_len_kv`` describe
    it. A ``LOWER_RIGHT`` bias with ``seq_len_q > seq_len_kv`` warns, as torch's: its first
    queries attend no key (their outputs are zeros, as with torch's CPU kernel).
    """

    def __init__(self, variant: CausalVariant, seq_len_q: int, seq_len_kv: int) -> None:
        if not isinstance(variant, CausalVariant):
            raise AssertionError(f"variant must be a CausalVariant, got {type(variant).__name__}")
        self.variant = variant
        self.seq_len_q = seq_len_q
        self.seq_len_kv = seq_len_kv
        mask = self._materialize()
        Tensor.__init__(self, mask.array, dtype=mask.dtype, device=mask.backend.device)
        if seq_len_q > seq_len_kv and variant == CausalVariant.LOWER_RIGHT:
            warnings.warn(
                "Lower right causal bias will produce NaNs in the output when seq_len_q > "
                "seq_len_kv!",
                stacklevel=2,
            )

    def _upper_left(self, device: Any) -> Tensor:
        """``ones(L, S, dtype=bool).tril()``."""
        ones = lucid.ones(self.seq_len_q, self.seq_len_kv, dtype=lucid.bool, device=device)
        out: Tensor = ones.tril()
        return out

    def _lower_right(self, device: Any) -> Tensor:
        """``ones(L, S, dtype=bool).tril(S - L)``."""
        ones = lucid.ones(self.seq_len_q, self.seq_len_kv, dtype=lucid.bool, device=device)
        out: Tensor = ones.tril(self.seq_len_kv - self.seq_len_q)
        return out

    def _materialize(self, device: Any = None) -> Tensor:
        """The bias as a plain bool Tensor ``(seq_len_q, seq_len_kv)`` (True = attend), on
        ``device`` (the CPU by default)."""
        if device is None:
            device = "cpu"
        if self.variant == CausalVariant.UPPER_LEFT:
            return self._upper_left(device)
        if self.variant == CausalVariant.LOWER_RIGHT:
            return self._lower_right(device)
        raise ValueError(
            f"CausalBias.variant must be a CausalVariant type, but found: {self.variant}"
        )

    def __repr__(self) -> str:
        return repr(self._materialize())

    def __reduce_ex__(self, protocol: Any) -> Any:
        return (CausalBias, (self.variant, self.seq_len_q, self.seq_len_kv))

    def __deepcopy__(self, memo: dict[int, Any]) -> CausalBias:
        return CausalBias(self.variant, self.seq_len_q, self.seq_len_kv)


def causal_upper_left(*size: int) -> CausalBias:
    """An upper-left causal bias of ``size`` ``(seq_len_q, seq_len_kv)``: ``is_causal=True``.

    >>> causal_upper_left(2, 3).tolist()
    [[True, False, False], [True, True, False]]
    """
    if len(size) != 2:
        raise AssertionError("causal_upper_left only supports 2D tensors")
    seq_len_q, seq_len_kv = size
    return CausalBias(CausalVariant.UPPER_LEFT, seq_len_q, seq_len_kv)


def causal_lower_right(*size: int) -> CausalBias:
    """A lower-right causal bias of ``size`` ``(seq_len_q, seq_len_kv)``: query i attends the
    keys up to ``i + seq_len_kv - seq_len_q``.

    >>> causal_lower_right(2, 3).tolist()
    [[True, True, False], [True, True, True]]
    """
    if len(size) != 2:
        raise AssertionError("causal_lower_right only supports 2D tensors")
    seq_len_q, seq_len_kv = size
    return CausalBias(CausalVariant.LOWER_RIGHT, seq_len_q, seq_len_kv)
