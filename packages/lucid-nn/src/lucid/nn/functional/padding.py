"""``pad`` with torch's rules on which inputs each mode accepts.

The padding itself is lucid's ``lucid.ops.join.pad``; this layer adds torch's checks: the
non-constant modes pad the last 1, 2 or 3 dims of a batched or unbatched input only, reflect
and replicate need every padded (and channel) dim non-empty, and no dim may shrink below 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lucid import Tensor
from lucid.ops.join import pad as _pad

__all__ = ["pad"]

_SUPPORTED = (
    "Supported combinations for non-constant padding:\n"
    "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
    "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
    "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)"
)
_MODES = ("constant", "reflect", "replicate", "circular")


def _check_non_constant(input: Tensor, pad: Sequence[int], mode: str) -> None:
    k = len(pad) // 2
    if len(pad) not in (2, 4, 6) or input.ndim not in (k + 1, k + 2):
        if len(pad) > 2 * input.ndim:
            raise RuntimeError(
                f"Padding length should be less than or equal to two times the input dimension "
                f"but got padding length {len(pad)} and input of dimension {input.ndim}"
            )
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {input.ndim}D input tensor.\n"
            + _SUPPORTED
        )
    if mode == "circular":
        return
    # torch: every dim but the batch one (when batched) must be non-empty
    first = 1 if input.ndim == k + 2 else 0
    if any(s == 0 for s in input.shape[first:]):
        raise RuntimeError(
            f"Expected {k + 1}D or {k + 2}D (batch mode) tensor with possibly 0 batch size and "
            f"other non-zero dimensions for input, but got: {list(input.shape)}"
        )
    for i in range(k):
        d = input.ndim - 1 - i
        lo, hi = int(pad[2 * i]), int(pad[2 * i + 1])
        size = input.shape[d]
        if mode == "reflect" and (lo >= size or hi >= size):
            raise RuntimeError(
                f"Argument #4: Padding size should be less than the corresponding input "
                f"dimension, but got: padding ({lo}, {hi}) at dimension {d} of input "
                f"{list(input.shape)}"
            )
        if size + lo + hi < 1:
            name = "WHD"[i]
            raise RuntimeError(
                f"input ({name}: {size}) is too small. Calculated output {name}: {size + lo + hi}"
            )


def pad(input: Tensor, pad: Sequence[int], mode: str = "constant", value: Any = None) -> Tensor:
    """Pad the last ``len(pad) // 2`` dims: ``pad = (left_last, right_last, left_prev, ...)``,
    with negative entries cropping.

    Modes: ``"constant"`` (with ``value``, default 0), ``"reflect"`` (mirror without repeating
    the edge), ``"replicate"`` (repeat the edge), ``"circular"`` (wrap around). The non-constant
    modes pad the last 1-3 dims of a (batched or unbatched) 2-5D input, as torch's do.
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"pad(): argument 'input' must be Tensor, not {type(input).__name__}")
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) > 2 * input.ndim:
        raise RuntimeError(
            f"Padding length should be less than or equal to two times the input dimension but "
            f"got padding length {len(pad)} and input of dimension {input.ndim}"
        )
    if mode not in _MODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if mode != "constant":
        if value is not None and value != 0:
            raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
        _check_non_constant(input, pad, mode)
    k = len(pad) // 2
    for i in range(k if mode == "constant" else 0):
        size = input.shape[input.ndim - 1 - i]
        if size + min(int(pad[2 * i]), 0) + min(int(pad[2 * i + 1]), 0) < 0:  # torch's crop
            raise RuntimeError("narrow(): length must be non-negative.")
    if input.numel() == 0 and mode != "circular":
        # nothing to read: every mode gives the same (empty) result
        return _pad(input, pad, "constant", value)
    return _pad(input, pad, mode, value)
