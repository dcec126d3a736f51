"""nn.utils.rnn: packing and padding variable-length sequences; RNNs on PackedSequence."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.nn as nn
from lucid.autograd import gradcheck
from lucid.nn.utils.rnn import (
    PackedSequence,
    invert_permutation,
    pack_padded_sequence,
    pack_sequence,
    pad_packed_sequence,
    pad_sequence,
    unpack_sequence,
    unpad_sequence,
)

RNG = np.random.default_rng(4)


def _t(*shape: int) -> lucid.Tensor:
    return lucid.tensor(RNG.standard_normal(shape), dtype=lucid.float64, requires_grad=True)


def test_pack_sequence_layout_is_time_major_without_finished_sequences():
    a, b, c = lucid.tensor([1, 2, 3]), lucid.tensor([4, 5]), lucid.tensor([6])
    packed = pack_sequence([a, b, c])
    assert packed.data.tolist() == [1, 4, 6, 2, 5, 3]
    assert packed.batch_sizes.tolist() == [3, 2, 1]
    assert packed.batch_sizes.dtype == lucid.int64
    assert packed.sorted_indices is None and packed.unsorted_indices is None
    assert [s.tolist() for s in unpack_sequence(packed)] == [[1, 2, 3], [4, 5], [6]]


def test_unsorted_lengths_sort_stably_and_unpad_in_the_original_order():
    x = _t(4, 3, 2)
    packed = pack_padded_sequence(x, [2, 3, 2], enforce_sorted=False)
    assert packed.sorted_indices.tolist() == [1, 0, 2]
    assert packed.unsorted_indices.tolist() == [1, 0, 2]
    padded, lengths = pad_packed_sequence(packed, padding_value=-1.0, total_length=5)
    assert lengths.tolist() == [2, 3, 2] and padded.shape == (5, 3, 2)
    mask = np.arange(5)[:, None] < np.array([2, 3, 2])[None, :]
    want = np.where(mask[..., None], np.pad(x.detach().numpy(), ((0, 1), (0, 0), (0, 0))), -1.0)
    np.testing.assert_allclose(padded.detach().numpy(), want, rtol=0, atol=0)


def test_batch_first_round_trip():
    x = _t(3, 4, 2)
    padded, lengths = pad_packed_sequence(
        pack_padded_sequence(x, lucid.tensor([1, 4, 2]), batch_first=True, enforce_sorted=False),
        batch_first=True,
    )
    assert lengths.tolist() == [1, 4, 2]
    for b, n in enumerate([1, 4, 2]):
        np.testing.assert_allclose(padded[b, :n].detach().numpy(), x[b, :n].detach().numpy(),
                                   rtol=0, atol=0)  # fmt: skip


def test_pack_and_pad_gradcheck():
    x = _t(4, 3, 2)
    assert gradcheck(lambda a: pack_padded_sequence(a, [4, 2, 1]).data, (x,))
    assert gradcheck(
        lambda a: pad_packed_sequence(pack_padded_sequence(a, [3, 4, 1], enforce_sorted=False))[0],
        (x,),
    )


def test_pad_sequence_sides_and_gradcheck():
    a, b = _t(2, 3), _t(4, 3)
    left = pad_sequence([a, b], batch_first=True, padding_value=9.0, padding_side="left")
    assert left.shape == (2, 4, 3)
    np.testing.assert_allclose(left[0, :2].detach().numpy(), 9.0, rtol=0, atol=0)
    np.testing.assert_allclose(left[0, 2:].detach().numpy(), a.detach().numpy(), rtol=0, atol=0)
    assert pad_sequence([a, b]).shape == (4, 2, 3)
    assert gradcheck(lambda u, v: pad_sequence([u, v], padding_side="left"), (a, b))
    seqs = unpad_sequence(pad_sequence([a, b]), lucid.tensor([2, 4]))
    assert [tuple(s.shape) for s in seqs] == [(2, 3), (4, 3)]


@pytest.mark.parametrize(
    "call,message",
    [
        (lambda: pack_padded_sequence(lucid.ones(4, 3, 2), [2, 3, 1]), "sorted in decreasing"),
        (lambda: pack_padded_sequence(lucid.ones(4, 3, 2), [4, 3]), "equal to batch_size"),
        (lambda: pack_padded_sequence(lucid.ones(4, 3, 2), [4, 3, 0]), "greater than 0"),
        (lambda: pack_padded_sequence(lucid.ones(4, 3, 2), [5, 3, 1]), "does not fit"),
        (lambda: pad_sequence([]), "empty list of sequences"),
        (lambda: pad_sequence([lucid.ones(2)], padding_side="up"), "left or right"),
    ],
)
def test_errors(call, message):
    with pytest.raises(RuntimeError, match=message):
        call()


def test_pad_packed_total_length_too_short():
    with pytest.raises(ValueError, match="total_length=2 and max sequence length being 3"):
        pad_packed_sequence(pack_sequence([lucid.ones(3), lucid.ones(1)]), total_length=2)


def test_packed_sequence_to_and_tuple_form():
    packed = pack_sequence([lucid.ones(3, 2), lucid.ones(2, 2)], enforce_sorted=False)
    as_double = packed.double()
    assert as_double.data.dtype == lucid.float64 and isinstance(as_double, PackedSequence)
    assert as_double.batch_sizes is packed.batch_sizes
    again = PackedSequence((packed.data, packed.batch_sizes))
    assert again.batch_sizes.tolist() == [2, 2, 1] and again.unsorted_indices is None
    assert invert_permutation(lucid.tensor([2, 0, 1])).tolist() == [1, 2, 0]
    assert nn.utils.rnn.pack_sequence is pack_sequence


# -- recurrent layers on packed input -----------------------------------------------------------
def _reference(layer, x: lucid.Tensor, lengths: list[int], cls: str):
    """Each sequence alone through the layer: outputs and final state per sequence."""
    outs, finals = [], []
    for b, n in enumerate(lengths):
        out, h = layer(x[:n, b : b + 1])
        outs.append(out[:, 0])
        finals.append((h[0] if cls == "LSTM" else h)[:, 0])
    return outs, lucid.stack(finals, 1)


@pytest.mark.parametrize("cls", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("kw", [{}, {"num_layers": 2, "bidirectional": True}])
def test_packed_rnn_matches_each_sequence_run_alone(cls, kw):
    layer = getattr(nn, cls)(3, 4, dtype=lucid.float64, **kw)
    lengths = [3, 5, 1, 4]
    x = _t(5, 4, 3)
    out, h_n = layer(pack_padded_sequence(x, lengths, enforce_sorted=False))
    assert isinstance(out, PackedSequence)
    padded, got_lengths = pad_packed_sequence(out)
    assert got_lengths.tolist() == lengths
    ref_outs, ref_h = _reference(layer, x, lengths, cls)
    for b, n in enumerate(lengths):
        np.testing.assert_allclose(padded[:n, b].detach().numpy(), ref_outs[b].detach().numpy(),
                                   rtol=1e-12, atol=1e-12)  # fmt: skip
        np.testing.assert_allclose(padded[n:, b].detach().numpy(), 0.0, rtol=0, atol=0)
    h = h_n[0] if cls == "LSTM" else h_n
    np.testing.assert_allclose(h.detach().numpy(), ref_h.detach().numpy(), rtol=1e-12,
                               atol=1e-12)  # fmt: skip


@pytest.mark.parametrize("cls", ["RNN", "LSTM", "GRU"])
def test_packed_rnn_gradcheck(cls):
    layer = getattr(nn, cls)(2, 3, dtype=lucid.float64, bidirectional=True)
    x = _t(3, 3, 2)

    def run(a):
        out, h = layer(pack_padded_sequence(a, [2, 3, 1], enforce_sorted=False))
        return out.data, (h[1] if cls == "LSTM" else h)

    assert gradcheck(run, (x,))


def test_packed_rnn_with_initial_state_is_permuted_like_the_batch():
    layer = nn.GRU(2, 3, dtype=lucid.float64)
    x, h0 = _t(4, 3, 2), _t(1, 3, 3)
    lengths = [2, 4, 3]
    _, h_n = layer(pack_padded_sequence(x, lengths, enforce_sorted=False), h0)
    for b, n in enumerate(lengths):
        _, hb = layer(x[:n, b : b + 1], h0[:, b : b + 1])
        np.testing.assert_allclose(h_n[:, b].detach().numpy(), hb[:, 0].detach().numpy(),
                                   rtol=1e-12, atol=1e-12)  # fmt: skip


def test_packed_rnn_rejects_wrong_feature_size():
    with pytest.raises(ValueError, match=r"packed data of shape \(\*, 3\)"):
        nn.LSTM(3, 4)(pack_sequence([lucid.ones(2, 5)]))
