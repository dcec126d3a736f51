"""``lucid.nested`` (``torch.nested``): lucid has no nested (ragged) tensors, on purpose.

Each function of ``torch.nested`` is here with torch's signature and raises a ``RuntimeError``
that says so and names what to use instead: pad the sequences to one length
(``lucid.nn.utils.rnn.pad_sequence``) and pass the padding as a mask (``attn_mask`` of
``scaled_dot_product_attention``, ``key_padding_mask`` of ``nn.MultiheadAttention``), or run
the sequences one at a time. A program that tries nested tensors and falls back on a
``RuntimeError`` (pytorch/tutorials' scaled_dot_product_attention_tutorial.py does) then takes
its fallback, as it does where torch's nested path is not available (docs/differences.md).
"""

from __future__ import annotations

from typing import Any, NoReturn

__all__ = [
    "as_nested_tensor",
    "masked_select",
    "narrow",
    "nested_tensor",
    "nested_tensor_from_jagged",
    "to_padded_tensor",
]

_WHY = (
    "lucid has no nested (ragged) tensors: pad the sequences to one length "
    "(lucid.nn.utils.rnn.pad_sequence) and pass the padding as a mask (attn_mask, "
    "key_padding_mask), or run the sequences one at a time"
)


def _refuse(name: str) -> NoReturn:
    raise RuntimeError(f"torch.nested.{name}: {_WHY}")


def nested_tensor(tensor_list: Any, *, dtype: Any = None, layout: Any = None, device: Any = None,
                  requires_grad: bool = False, pin_memory: bool = False) -> Any:  # fmt: skip
    """``torch.nested.nested_tensor``: raises (lucid has no nested tensors)."""
    _refuse("nested_tensor")


def as_nested_tensor(ts: Any, dtype: Any = None, device: Any = None, layout: Any = None) -> Any:
    """``torch.nested.as_nested_tensor``: raises (lucid has no nested tensors)."""
    _refuse("as_nested_tensor")


def nested_tensor_from_jagged(values: Any, offsets: Any = None, lengths: Any = None,
                              jagged_dim: Any = None, min_seqlen: Any = None,
                              max_seqlen: Any = None) -> Any:  # fmt: skip
    """``torch.nested.nested_tensor_from_jagged``: raises (lucid has no nested tensors)."""
    _refuse("nested_tensor_from_jagged")


def to_padded_tensor(input: Any, padding: float, output_size: Any = None,  # noqa: A002
                     out: Any = None) -> Any:  # fmt: skip
    """``torch.nested.to_padded_tensor``: raises (lucid has no nested tensors)."""
    _refuse("to_padded_tensor")


def narrow(tensor: Any, dim: int, start: Any, length: Any, layout: Any = None) -> Any:
    """``torch.nested.narrow``: raises (lucid has no nested tensors)."""
    _refuse("narrow")


def masked_select(tensor: Any, mask: Any) -> Any:
    """``torch.nested.masked_select``: raises (lucid has no nested tensors)."""
    _refuse("masked_select")
