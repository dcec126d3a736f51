"""Variable-length sequences for the recurrent layers (``torch.nn.utils.rnn``).

A ``PackedSequence`` holds the time steps of a batch of sequences sorted by decreasing length,
time-major with the finished sequences left out: ``data`` is ``(sum(lengths), *)`` and
``batch_sizes[t]`` counts the sequences still running at step ``t``. ``nn.RNN``/``LSTM``/``GRU``
take one and return one. Packing and padding are single gathers (``index_select``), so
gradients flow back to the padded input.

>>> seqs = [lucid.ones(3, 2), lucid.ones(1, 2)]
>>> packed = pack_sequence(seqs)
>>> packed.batch_sizes.tolist()
[2, 1, 1]
>>> pad_packed_sequence(packed)[0].shape
(3, 2, 2)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

import lucid
from lucid import Tensor

__all__ = [
    "PackedSequence",
    "invert_permutation",
    "pack_padded_sequence",
    "pack_sequence",
    "pad_packed_sequence",
    "pad_sequence",
    "unpack_sequence",
    "unpad_sequence",
]


class _PackedFields(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


class PackedSequence(_PackedFields):
    """``(data, batch_sizes, sorted_indices, unsorted_indices)``, as torch's.

    Made by :func:`pack_padded_sequence` or :func:`pack_sequence`. ``sorted_indices`` says
    which original sequence each packed column is (``None`` when they came sorted);
    ``unsorted_indices`` is its inverse. ``batch_sizes`` is an int64 tensor on the CPU.
    """

    def __new__(
        cls, data: Any, batch_sizes: Tensor | None = None,
        sorted_indices: Tensor | None = None, unsorted_indices: Tensor | None = None
    ) -> PackedSequence:  # fmt: skip
        if batch_sizes is None:  # PackedSequence((data, batch_sizes), ...)
            data, batch_sizes = data
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args: Any, **kwargs: Any) -> PackedSequence:
        """``data.to(...)``; the index tensors follow ``data`` to its device."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        index = [None if i is None else i.to(data.device) for i in self._indices()]
        return PackedSequence(data, self.batch_sizes, index[0], index[1])

    def cpu(self) -> PackedSequence:
        """The sequence with its data on the ``"cpu"`` device."""
        return self.to("cpu")

    def double(self) -> PackedSequence:
        """The sequence with its data cast to float64."""
        return self.to(lucid.float64)

    def float(self) -> PackedSequence:
        """The sequence with its data cast to float32."""
        return self.to(lucid.float32)

    def half(self) -> PackedSequence:
        """The sequence with its data cast to float16."""
        return self.to(lucid.float16)

    def long(self) -> PackedSequence:
        """The sequence with its data cast to int64."""
        return self.to(lucid.int64)

    def int(self) -> PackedSequence:
        """The sequence with its data cast to int32."""
        return self.to(lucid.int32)

    @property
    def is_cuda(self) -> bool:
        """Whether the data is on a CUDA device: always False in lucid."""
        return bool(self.data.is_cuda)

    def _indices(self) -> tuple[Tensor | None, Tensor | None]:
        return self.sorted_indices, self.unsorted_indices


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The inverse of a permutation (``None`` stays ``None``)."""
    if permutation is None:
        return None
    inverse = [0] * permutation.numel()
    for position, i in enumerate(permutation.tolist()):
        inverse[i] = position
    return _ints(inverse, permutation.device)


def _ints(values: Sequence[int], device: Any = None) -> Tensor:
    out: Tensor = lucid.tensor(list(values), dtype=lucid.int64, device=device)
    return out


def _lengths_list(lengths: Any) -> list[int]:
    return [int(v) for v in (lengths.tolist() if isinstance(lengths, Tensor) else lengths)]


def _check_lengths(lengths: list[int], steps: int, batch: int, enforce_sorted: bool) -> None:
    """torch's checks on ``pack_padded_sequence``'s lengths (and that none is too long)."""
    if len(lengths) != batch:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{len(lengths)} (batch_size={batch})")  # fmt: skip
    if enforce_sorted and any(a < b for a, b in zip(lengths, lengths[1:])):
        raise RuntimeError(
            "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
            "You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence "
            "to sidestep this requirement if you do not need ONNX exportability."
        )
    if lengths and min(lengths) <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an "
                           "element in 'lengths' that is <= 0")  # fmt: skip
    if lengths and max(lengths) > steps:
        raise RuntimeError(f"pack_padded_sequence: a sequence of length {max(lengths)} does not "
                           f"fit the input's {steps} time steps")  # fmt: skip


def _batch_sizes(lengths: list[int]) -> list[int]:
    """Sequences still running at each step, for lengths in decreasing order."""
    return [sum(1 for n in lengths if n > t) for t in range(max(lengths, default=0))]


def pack_padded_sequence(
    input: Tensor, lengths: Any, batch_first: bool = False, enforce_sorted: bool = True
) -> PackedSequence:
    """Pack a padded ``(T, B, *)`` batch (``(B, T, *)`` with ``batch_first``) of sequences of
    the given lengths; ``enforce_sorted=False`` sorts them by decreasing length first."""
    sizes = _lengths_list(lengths)
    sorted_indices = None
    if not enforce_sorted:
        order = sorted(range(len(sizes)), key=lambda i: -sizes[i])
        sorted_indices = _ints(order, input.device)
        sizes = [sizes[i] for i in order]
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    x = input.transpose(0, 1) if batch_first else input
    steps, batch = x.shape[0], x.shape[1]
    _check_lengths(sizes, steps, batch, enforce_sorted)
    batch_sizes = _batch_sizes(sizes)
    where = [t * batch + b for t, n in enumerate(batch_sizes) for b in range(n)]
    data = x.reshape(steps * batch, *x.shape[2:]).index_select(0, _ints(where, x.device))
    return PackedSequence(data, _ints(batch_sizes), sorted_indices, None)


def pad_packed_sequence(
    sequence: PackedSequence, batch_first: bool = False, padding_value: float = 0.0,
    total_length: int | None = None
) -> tuple[Tensor, Tensor]:  # fmt: skip
    """``(padded, lengths)``: the inverse of :func:`pack_padded_sequence`, in the original
    batch order; ``total_length`` pads the time dim further."""
    batch_sizes = [int(n) for n in sequence.batch_sizes.tolist()]
    steps = len(batch_sizes)
    if total_length is not None:
        if total_length < steps:
            raise ValueError(
                "Expected total_length to be at least the length of the longest sequence in "
                f"input, but got total_length={total_length} and max sequence length being "
                f"{steps}"
            )
        steps = total_length
    data = sequence.data
    batch = batch_sizes[0] if batch_sizes else 0
    fill = data.new_full((1, *data.shape[1:]), padding_value)
    source = lucid.cat([data, fill], 0)
    where = _padded_positions(batch_sizes, steps, batch, data.shape[0])
    padded = source.index_select(0, _ints(where, data.device))
    padded = padded.reshape(steps, batch, *data.shape[1:])
    lengths = _ints([sum(1 for n in batch_sizes if n > b) for b in range(batch)])
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(1, sequence.unsorted_indices)
        lengths = lengths[sequence.unsorted_indices.to("cpu")]
    return (padded.transpose(0, 1) if batch_first else padded), lengths


def _padded_positions(batch_sizes: list[int], steps: int, batch: int, fill: int) -> list[int]:
    """For each (step, column) of the padded batch, its row in ``data`` (``fill``: padding)."""
    where = []
    offset = 0
    for t in range(steps):
        n = batch_sizes[t] if t < len(batch_sizes) else 0
        where += [offset + b if b < n else fill for b in range(batch)]
        offset += n
    return where


def pad_sequence(
    sequences: Iterable[Tensor], batch_first: bool = False, padding_value: float = 0.0,
    padding_side: str = "right"
) -> Tensor:  # fmt: skip
    """Stack sequences ``(L_i, *)`` into ``(T, B, *)`` (``(B, T, *)`` with ``batch_first``),
    filling with ``padding_value`` on the ``padding_side``.

    >>> pad_sequence([lucid.ones(2), lucid.ones(3)], batch_first=True).tolist()
    [[1.0, 1.0, 0.0], [1.0, 1.0, 1.0]]
    """
    if not isinstance(sequences, Iterable):
        raise RuntimeError(f"pad_sequence: Expected iterable for input sequences, but got arg "
                           f"of type: {type(sequences)}")  # fmt: skip
    seqs = tuple(sequences)
    if not seqs:
        raise RuntimeError("received an empty list of sequences")
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got "
                           f"{padding_side}.")  # fmt: skip
    steps = max(s.shape[0] for s in seqs)
    padded = [_pad_to(s, steps, padding_value, padding_side) for s in seqs]
    return lucid.stack(padded, 0 if batch_first else 1)


def _pad_to(seq: Tensor, steps: int, value: float, side: str) -> Tensor:
    if seq.shape[0] == steps:
        return seq
    fill = seq.new_full((steps - seq.shape[0], *seq.shape[1:]), value)
    return lucid.cat([seq, fill] if side == "right" else [fill, seq], 0)


def unpad_sequence(
    padded_sequences: Tensor, lengths: Any, batch_first: bool = False
) -> list[Tensor]:
    """The sequences of a padded batch, each cut to its length."""
    batch = padded_sequences if batch_first else padded_sequences.transpose(0, 1)
    return [batch[b, :n] for b, n in enumerate(_lengths_list(lengths))]


def pack_sequence(sequences: Sequence[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of sequences ``(L_i, *)`` (``pad_sequence`` then ``pack_padded_sequence``)."""
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """The list of sequences a PackedSequence holds, in their original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
