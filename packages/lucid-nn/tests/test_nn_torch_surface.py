"""Layers and functions added to match torch.nn's surface: finite-difference gradients in
float64, torch's errors for bad input, reprs and state_dict keys."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.nn as nn
import lucid.nn.functional as F
from lucid.autograd import gradcheck

RNG = np.random.default_rng(7)


def t64(*shape: int, grad: bool = True) -> lucid.Tensor:
    return lucid.tensor(RNG.standard_normal(shape), dtype=lucid.float64, requires_grad=grad)


# ---- padding ---------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
def test_pad_gradcheck(mode: str) -> None:
    x = t64(2, 3, 4, 5)
    assert gradcheck(lambda a: F.pad(a, (2, 1, -1, 2), mode), (x,))


def test_pad_values_against_numpy() -> None:
    a = RNG.standard_normal((2, 3, 4))
    x = lucid.tensor(a)
    np.testing.assert_allclose(
        F.pad(x, (2, 1), "reflect").numpy(),
        np.pad(a, ((0, 0), (0, 0), (2, 1)), "reflect"),
        rtol=1e-12,
        atol=1e-12,
    )
    np.testing.assert_allclose(
        F.pad(x, (2, 1, 1, 0), "replicate").numpy(),
        np.pad(a, ((0, 0), (1, 0), (2, 1)), "edge"),
        rtol=1e-12,
        atol=1e-12,
    )
    np.testing.assert_allclose(
        F.pad(x, (2, 1), "circular").numpy(),
        np.pad(a, ((0, 0), (0, 0), (2, 1)), "wrap"),
        rtol=1e-12,
        atol=1e-12,
    )
    np.testing.assert_allclose(
        F.pad(x, (1, 1), value=2.5).numpy(),
        np.pad(a, ((0, 0), (0, 0), (1, 1)), constant_values=2.5),
        rtol=1e-12,
        atol=1e-12,
    )


def test_pad_torch_rules() -> None:
    # non-constant modes pad 1-3 trailing dims of a 2-5D input only
    with pytest.raises(NotImplementedError, match="Padding size 2 is not supported for 1D"):
        F.pad(lucid.randn(4), (1, 1), "reflect")
    with pytest.raises(RuntimeError, match="other non-zero dimensions"):
        F.pad(lucid.randn(2, 3, 0), (1, 1), "reflect")
    with pytest.raises(RuntimeError, match="other non-zero dimensions"):
        F.pad(lucid.randn(2, 0, 4), (1, 1), "replicate")
    with pytest.raises(RuntimeError, match="Padding size should be less than"):
        F.pad(lucid.randn(2, 3, 4), (4, 0), "reflect")
    with pytest.raises(RuntimeError, match="narrow"):
        F.pad(lucid.randn(2, 3, 4), (-5, 1))
    with pytest.raises(RuntimeError, match="doesn't take in value"):
        F.pad(lucid.randn(2, 3, 4), (1, 1), "reflect", 1.0)
    with pytest.raises(NotImplementedError, match="Unrecognised padding mode"):
        F.pad(lucid.randn(2, 3, 4), (1, 1), "mirror")
    # an empty batch pads like any other
    assert F.pad(lucid.randn(0, 3, 4), (1, 2), "reflect").shape == (0, 3, 7)
    assert F.pad(lucid.randn(2, 3, 4), (-4, 0)).shape == (2, 3, 0)


def test_padding_modules() -> None:
    assert repr(nn.ZeroPad2d((1, 2, 3, 4))) == "ZeroPad2d((1, 2, 3, 4))"
    assert repr(nn.ConstantPad1d(2, 3.5)) == "ConstantPad1d(padding=(2, 2), value=3.5)"
    assert repr(nn.ReflectionPad3d(1)) == "ReflectionPad3d((1, 1, 1, 1, 1, 1))"
    assert nn.ZeroPad3d(1).value == 0.0
    x = lucid.randn(1, 2, 3, 4)
    assert nn.ReplicationPad2d((1, 0, 2, 1))(x).shape == (1, 2, 6, 5)
    assert nn.CircularPad1d(2)(lucid.randn(2, 5)).shape == (2, 9)
    with pytest.raises(ValueError, match=r"expected 3D or 4D input \(got 2D input\)"):
        nn.CircularPad2d(1)(lucid.randn(4, 4))
    assert nn.ZeroPad1d(1).state_dict() == {}


# ---- normalisation -----------------------------------------------------------------------


def test_rms_norm_values_and_gradcheck() -> None:
    x, w = t64(2, 3, 4), t64(3, 4)
    a = x.detach().numpy()
    want = a / np.sqrt((a * a).mean((1, 2), keepdims=True) + 1e-6) * w.detach().numpy()
    np.testing.assert_allclose(
        F.rms_norm(x, (3, 4), w, 1e-6).detach().numpy(), want, rtol=1e-12, atol=1e-12
    )
    assert gradcheck(lambda a, b: F.rms_norm(a, [4], b[0]), (x, w))
    # eps=None: the dtype's machine epsilon
    z = lucid.zeros(2, 3)
    assert F.rms_norm(z, [3]).numpy().tolist() == [[0.0] * 3] * 2


def test_rms_norm_errors_and_module() -> None:
    with pytest.raises(RuntimeError, match=r"expected input with shape \[\*4\]"):
        F.rms_norm(lucid.randn(2, 3), [4])
    with pytest.raises(RuntimeError, match="Expected weight to be of same shape"):
        F.rms_norm(lucid.randn(2, 3), [3], lucid.ones(4))
    with pytest.raises(NotImplementedError, match="rms_norm"):
        F.rms_norm(lucid.arange(3), [3])
    m = nn.RMSNorm([2, 3], eps=1e-3)
    assert repr(m) == "RMSNorm((2, 3), eps=0.001, elementwise_affine=True)"
    assert list(m.state_dict()) == ["weight"]
    assert nn.RMSNorm(3, elementwise_affine=False).weight is None


def test_norms_without_bias_and_empty_batches() -> None:
    bn = nn.BatchNorm1d(4, bias=False)
    assert bn.bias is None and list(bn.state_dict()) == [
        "weight", "running_mean", "running_var", "num_batches_tracked",
    ]  # fmt: skip
    assert repr(bn) == (
        "BatchNorm1d(4, eps=1e-05, momentum=0.1, affine=True, bias=False, track_running_stats=True)"
    )
    gn = nn.GroupNorm(2, 4, bias=False)
    assert repr(gn) == "GroupNorm(2, 4, eps=1e-05, affine=True, bias=False)"
    assert nn.InstanceNorm2d(3, affine=True, bias=False).bias is None
    # a batch of 0 passes through; the running stats stay, the counter moves (torch's)
    m = nn.BatchNorm2d(3)
    x = lucid.randn(0, 3, 2, 2, requires_grad=True)
    y = m(x)
    y.sum().backward()
    assert y.shape == (0, 3, 2, 2) and m.num_batches_tracked.item() == 1
    assert m.running_var.numpy().tolist() == [1.0, 1.0, 1.0]
    assert m.weight.grad.numpy().tolist() == [0.0, 0.0, 0.0]
    assert gn(lucid.randn(0, 4, 3)).shape == (0, 4, 3)
    assert F.instance_norm(lucid.randn(0, 4, 3)).shape == (0, 4, 3)
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        nn.BatchNorm1d(4)(lucid.randn(1, 4))


# ---- losses ------------------------------------------------------------------------------


def _mm_reference(x: np.ndarray, y: np.ndarray, p: int, margin: float, w: np.ndarray | None):
    n, c = x.shape
    out = np.zeros(n)
    for i in range(n):
        for j in range(c):
            if j != y[i]:
                z = max(0.0, margin - x[i, y[i]] + x[i, j]) ** p
                out[i] += z * (1.0 if w is None else w[y[i]])
    return out / c


@pytest.mark.parametrize("p", [1, 2])
def test_multi_margin_loss(p: int) -> None:
    x, w = t64(5, 4), lucid.tensor(RNG.uniform(0.5, 2, 4))
    y = lucid.tensor(RNG.integers(0, 4, 5))
    got = F.multi_margin_loss(x, y, p=p, margin=0.7, weight=w, reduction="none")
    want = _mm_reference(x.detach().numpy(), y.numpy(), p, 0.7, w.numpy())
    np.testing.assert_allclose(got.detach().numpy(), want, rtol=1e-12, atol=1e-12)
    assert gradcheck(lambda a: F.multi_margin_loss(a, y, p=p, weight=w), (x,))
    with pytest.raises(ValueError, match="only p == 1 and p == 2"):
        F.multi_margin_loss(x, y, p=3)
    with pytest.raises(RuntimeError, match="target out of range"):
        F.multi_margin_loss(x, lucid.tensor([0, 1, 2, 3, 4]))
    with pytest.raises(RuntimeError, match=r"Expected target size \[5\], but got \[2\]"):
        F.multi_margin_loss(x, lucid.tensor([0, 1]))
    with pytest.raises(RuntimeError, match="inconsistent weight size"):
        nn.MultiMarginLoss(weight=lucid.ones(3))(x, y)


def test_multilabel_margin_loss() -> None:
    x = t64(3, 4)
    y = lucid.tensor([[3, 0, -1, 1], [1, 2, 3, 0], [-1, 2, 0, 0]])
    a = x.detach().numpy()
    want = []
    for row, tgt in zip(a, y.numpy().tolist()):
        tgt = tgt[: tgt.index(-1)] if -1 in tgt else tgt
        others = [i for i in range(4) if i not in tgt]
        want.append(sum(max(0, 1 - row[j] + row[i]) for j in tgt for i in others) / 4)
    got = F.multilabel_margin_loss(x, y, reduction="none")
    np.testing.assert_allclose(got.detach().numpy(), want, rtol=1e-12, atol=1e-12)
    assert gradcheck(lambda a: nn.MultiLabelMarginLoss()(a, y), (x,))
    with pytest.raises(RuntimeError, match="out of range"):
        F.multilabel_margin_loss(x, lucid.tensor([[0, 1, -1, 5]] * 3))
    with pytest.raises(RuntimeError, match="inconsistent target size"):
        F.multilabel_margin_loss(x, lucid.tensor([[0, 1]] * 3))


def test_triplet_margin_with_distance_loss() -> None:
    a, p, n = t64(4, 3), t64(4, 3), t64(4, 3)

    def cos_dist(u: lucid.Tensor, v: lucid.Tensor) -> lucid.Tensor:
        return 1 - F.cosine_similarity(u, v)

    got = F.triplet_margin_with_distance_loss(a, p, n, distance_function=cos_dist, swap=True,
                                              reduction="none")  # fmt: skip
    d_neg = np.minimum(cos_dist(a, n).detach().numpy(), cos_dist(p, n).detach().numpy())
    want = np.maximum(1.0 + cos_dist(a, p).detach().numpy() - d_neg, 0)
    np.testing.assert_allclose(got.detach().numpy(), want, rtol=1e-12, atol=1e-12)
    assert gradcheck(lambda *t: nn.TripletMarginWithDistanceLoss(margin=2.0)(*t), (a, p, n))
    with pytest.raises(ValueError, match="margin must be greater than 0"):
        F.triplet_margin_with_distance_loss(a, p, n, margin=0)
    with pytest.raises(RuntimeError, match="same number of dimensions"):
        F.triplet_margin_with_distance_loss(a, p, n[0])
    assert "PairwiseDistance" in repr(nn.TripletMarginWithDistanceLoss())


def test_ctc_loss_gradcheck_and_values() -> None:
    x = t64(7, 2, 4)
    targets, lengths = lucid.tensor([[1, 2, 2], [3, 1, 0]]), (7, 6)

    def loss(a: lucid.Tensor) -> lucid.Tensor:
        return F.ctc_loss(F.log_softmax(a, 2), targets, lengths, (3, 2), reduction="sum")

    assert gradcheck(loss, (x,))
    # one frame per label and no blanks: the only path's probability
    lp = F.log_softmax(t64(2, 3, grad=False), 1)
    got = F.ctc_loss(lp, lucid.tensor([1, 2]), lucid.tensor(2), lucid.tensor(2), reduction="sum")
    np.testing.assert_allclose(got.item(), -(lp[0, 1] + lp[1, 2]).item(), rtol=1e-12, atol=1e-12)
    # an impossible alignment: inf, or 0 with zero_infinity
    short = F.ctc_loss(lp, lucid.tensor([1, 1]), lucid.tensor(2), lucid.tensor(2), reduction="none")
    assert short.item() == float("inf")
    m = nn.CTCLoss(zero_infinity=True, reduction="none")
    assert m(lp, lucid.tensor([1, 1]), lucid.tensor(2), lucid.tensor(2)).item() == 0.0


def test_ctc_loss_errors() -> None:
    lp = F.log_softmax(lucid.randn(6, 2, 5), 2)
    tg = lucid.tensor([[1, 2, 3], [1, 1, 0]])
    with pytest.raises(RuntimeError, match="input_lengths to have value at most 6"):
        F.ctc_loss(lp, tg, lucid.tensor([7, 5]), lucid.tensor([3, 2]))
    with pytest.raises(RuntimeError, match="size at least 4 at dimension 1"):
        F.ctc_loss(lp, tg, lucid.tensor([6, 5]), lucid.tensor([4, 2]))
    with pytest.raises(RuntimeError, match="blank must be in label range"):
        F.ctc_loss(lp, tg, lucid.tensor([6, 5]), lucid.tensor([3, 2]), blank=5)
    with pytest.raises(RuntimeError, match="input_lengths must be of size batch_size"):
        F.ctc_loss(lp, tg, lucid.tensor([6]), lucid.tensor([3, 2]))


# ---- pooling -----------------------------------------------------------------------------


def test_adaptive_max_pool3d_and_lp_pool3d() -> None:
    x = t64(1, 2, 5, 4, 3)
    y, idx = F.adaptive_max_pool3d(x, (2, 3, 2), return_indices=True)
    a = x.detach().numpy()
    # the first window of torch's rule: [0, ceil(5/2)) x [0, ceil(4/3)) x [0, ceil(3/2))
    np.testing.assert_allclose(
        y[:, :, 0, 0, 0].detach().numpy(),
        a[:, :, :3, :2, :2].max((2, 3, 4)),
        rtol=1e-12,
        atol=1e-12,
    )
    assert idx.dtype == lucid.int64 and y.shape == (1, 2, 2, 3, 2)
    assert gradcheck(lambda t: F.adaptive_max_pool3d(t, (2, 3, 2)), (x,))
    assert gradcheck(lambda t: nn.LPPool3d(2, 2, stride=(1, 2, 2))(t.abs() + 0.1), (x,))
    lp = F.lp_pool3d(x.abs(), 3, 2)
    want = (np.abs(a)[:, :, :4, :4, :2] ** 3).reshape(1, 2, 2, 2, 2, 2, 1, 2).sum((3, 5, 7))
    np.testing.assert_allclose(lp.detach().numpy(), want ** (1 / 3), rtol=1e-12, atol=1e-12)
    assert F.max_pool2d_with_indices(lucid.randn(1, 1, 4, 4), 2)[1].dtype == lucid.int64
    with pytest.raises(RuntimeError, match="Expected 4D or 5D tensor"):
        F.adaptive_max_pool3d(lucid.randn(3, 4), 2)


@pytest.mark.parametrize("nd", [2, 3])
def test_fractional_max_pool(nd: int) -> None:
    shape = (2, 3, 9, 8) if nd == 2 else (2, 3, 5, 6, 5)
    x = t64(*shape)
    samples = lucid.rand(2, 3, nd, dtype=lucid.float64)
    pool = F.fractional_max_pool2d if nd == 2 else F.fractional_max_pool3d
    out = (4,) * nd if nd == 2 else (3, 4, 3)
    y, idx = pool(x, 2, out, return_indices=True, _random_samples=samples)
    assert y.shape == (2, 3, *out) and idx.dtype == lucid.int64
    # each output is the input at its index, and the largest of a 2-wide window there
    flat = x.detach().numpy().reshape(2, 3, -1)
    np.testing.assert_array_equal(
        np.take_along_axis(flat, idx.numpy().reshape(2, 3, -1), 2),
        y.detach().numpy().reshape(2, 3, -1),
    )
    assert gradcheck(lambda t: pool(t, 2, out, _random_samples=samples), (x,))
    # the same seed draws the same windows
    lucid.manual_seed(5)
    a = pool(x, 2, output_ratio=(0.5,) * nd)
    lucid.manual_seed(5)
    b = pool(x, 2, output_ratio=(0.5,) * nd)
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    cls = nn.FractionalMaxPool2d if nd == 2 else nn.FractionalMaxPool3d
    with pytest.raises(ValueError, match="either an output size, or a pooling ratio"):
        cls(2)
    with pytest.raises(ValueError, match="output_ratio must be between 0 and 1"):
        cls(2, output_ratio=1.5)
    with pytest.raises(RuntimeError, match="too large relative to input"):
        pool(x, 3, (8,) * nd)
    assert list(cls(2, output_size=3).state_dict()) == []


# ---- lazy layers -------------------------------------------------------------------------


def test_lazy_linear_materialises_on_first_forward() -> None:
    m = nn.LazyLinear(3)
    assert repr(m) == "LazyLinear(in_features=0, out_features=3, bias=True)"
    assert m.has_uninitialized_params()
    sd = m.state_dict()
    assert list(sd) == ["weight", "bias"] and isinstance(sd["weight"], nn.UninitializedParameter)
    assert repr(sd["weight"]) == "<UninitializedParameter>"
    lucid.manual_seed(0)
    y = m(lucid.randn(2, 5))
    assert type(m) is nn.Linear and m.in_features == 5 and y.shape == (2, 3)
    assert type(m.weight) is nn.Parameter and m.weight.shape == (3, 5)
    bound = 1 / np.sqrt(5)  # Linear's init
    assert np.abs(m.weight.detach().numpy()).max() <= bound
    y.sum().backward()
    assert m.weight.grad is not None and m.bias.grad.shape == (3,)


def test_lazy_layers_load_a_state_dict_and_infer_channels() -> None:
    built = nn.Conv2d(2, 4, 3)
    lazy = nn.LazyConv2d(4, 3)
    lazy.load_state_dict(built.state_dict())
    assert lazy.weight.shape == (4, 2, 3, 3)
    x = lucid.randn(1, 2, 5, 5)
    np.testing.assert_allclose(
        lazy(x).detach().numpy(), built(x).detach().numpy(), rtol=1e-6, atol=1e-7
    )
    assert type(lazy) is nn.Conv2d
    t = nn.LazyConvTranspose1d(6, 2, groups=2)
    t(lucid.randn(1, 4, 7))
    assert t.weight.shape == (4, 3, 2) and type(t) is nn.ConvTranspose1d
    with pytest.raises(RuntimeError, match="Expected 3D \\(unbatched\\) or 4D \\(batched\\)"):
        nn.LazyConv2d(4, 3)(lucid.randn(5, 5))
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.LazyConv1d(4, 3, groups=2)(lucid.randn(1, 3, 8))


def test_lazy_norms() -> None:
    bn = nn.LazyBatchNorm1d()
    assert list(bn.state_dict()) == [
        "weight", "bias", "running_mean", "running_var", "num_batches_tracked",
    ]  # fmt: skip
    bn(lucid.randn(4, 3))
    assert type(bn) is nn.BatchNorm1d and bn.num_features == 3
    assert bn.num_batches_tracked.item() == 1 and bn.running_mean.shape == (3,)
    inorm = nn.LazyInstanceNorm2d(affine=False, track_running_stats=False)
    assert inorm.state_dict() == {}
    inorm(lucid.randn(2, 3, 4, 4))  # nothing to materialise: num_features stays 0 (torch's)
    assert type(inorm) is nn.InstanceNorm2d and inorm.num_features == 0
    loaded = nn.LazyBatchNorm1d()
    loaded.load_state_dict(nn.BatchNorm1d(5).state_dict())
    loaded(lucid.randn(3, 5))
    assert loaded.num_features == 5 and type(loaded) is nn.BatchNorm1d


# ---- embedding_bag -----------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_values_and_gradcheck(mode: str) -> None:
    w = t64(6, 3)
    idx = lucid.tensor([1, 2, 4, 4, 0, 5, 2])
    offsets = lucid.tensor([0, 2, 2, 5])  # bags [1, 2], [], [4, 4, 0], [5, 2]
    got = F.embedding_bag(idx, w, offsets, mode=mode, padding_idx=0).detach().numpy()
    a = w.detach().numpy()
    reduce = {"sum": np.sum, "mean": np.mean, "max": np.max}[mode]
    for b, rows in enumerate([[1, 2], [], [4, 4], [5, 2]]):  # index 0 is padding
        want = reduce(a[rows], 0) if rows else np.zeros(3)
        np.testing.assert_allclose(got[b], want, rtol=1e-12, atol=1e-12)
    assert gradcheck(lambda t: F.embedding_bag(idx, t, offsets, mode=mode), (w,))
    bag = nn.EmbeddingBag(6, 3, mode=mode, include_last_offset=True)
    assert bag(idx, lucid.tensor([0, 2, 7])).shape == (2, 3)
    assert repr(bag) == f"EmbeddingBag(6, 3, mode='{mode}')"


def test_embedding_bag_per_sample_weights_and_errors() -> None:
    w, psw = t64(5, 2), t64(2, 3)
    idx = lucid.tensor([[0, 1, 1], [4, 3, 2]])
    got = F.embedding_bag(idx, w, mode="sum", per_sample_weights=psw)
    want = (w.detach().numpy()[idx.numpy()] * psw.detach().numpy()[..., None]).sum(1)
    np.testing.assert_allclose(got.detach().numpy(), want, rtol=1e-12, atol=1e-12)
    assert gradcheck(lambda a, b: F.embedding_bag(idx, a, mode="sum", per_sample_weights=b),
                     (w, psw))  # fmt: skip
    with pytest.raises(NotImplementedError, match="only supported for mode='sum'"):
        F.embedding_bag(idx, w, per_sample_weights=psw)
    with pytest.raises(ValueError, match="offsets has to be a 1D Tensor but got None"):
        F.embedding_bag(lucid.tensor([1, 2]), w)
    with pytest.raises(RuntimeError, match="offsets\\[0\\] has to be 0"):
        F.embedding_bag(lucid.tensor([1, 2]), w, lucid.tensor([1]))
    with pytest.raises(ValueError, match="if input is 2D, then offsets has to be None"):
        F.embedding_bag(idx, w, lucid.tensor([0]))
    with pytest.raises(RuntimeError, match="index out of range"):
        F.embedding_bag(lucid.tensor([1, 7]), w, lucid.tensor([0]))


# ---- integer and bool inputs -------------------------------------------------------------


def test_integer_inputs_where_torch_takes_them() -> None:
    x = lucid.tensor([[-3, 0, 2, 5, 7]])
    assert F.hardtanh(x).tolist() == [[-1, 0, 1, 1, 1]] and F.hardtanh(x).dtype == lucid.int64
    assert F.hardtanh(x, -1.5, 2.5).tolist() == [[-1, 0, 2, 2, 2]]  # bounds truncated
    assert F.relu6(x.to(lucid.int32)).tolist() == [[0, 0, 2, 5, 6]]
    assert F.threshold(x, 1, 20).tolist() == [[20, 20, 2, 5, 7]]
    pooled = F.avg_pool2d(lucid.arange(-8, 8).reshape(1, 1, 4, 4), 2)
    assert pooled.dtype == lucid.int64 and pooled.tolist() == [[[[-5, -3], [2, 4]]]]
    assert F.lp_pool1d(lucid.arange(8).reshape(1, 1, 8), 2, 2).dtype == lucid.float32


def test_integer_inputs_where_torch_refuses_them() -> None:
    b = lucid.tensor([True, False])
    with pytest.raises(RuntimeError, match="Bool inputs not supported for hardtanh"):
        F.relu6(b)
    with pytest.raises(NotImplementedError, match="threshold_cpu"):
        F.threshold(b, 0, 1)
    with pytest.raises(RuntimeError, match="Boolean inputs not supported for relu"):
        F.relu(b)
    with pytest.raises(RuntimeError, match="unsigned type with negative limits"):
        F.hardtanh(lucid.tensor([1, 2], dtype=lucid.uint8))
    i = lucid.arange(12).reshape(1, 2, 6)
    for fn, kernel in [
        (lambda: F.hardshrink(i), "hardshrink_cpu"),
        (lambda: F.silu(i), "silu_cpu"),
        (lambda: F.leaky_relu(i), "floating point"),
        (lambda: F.avg_pool1d(i.to(lucid.int32), 2), "avg_pool2d\" not implemented for 'Int'"),
        (lambda: F.max_pool1d(i, 2), "max_pool1d_impl"),
        (lambda: F.adaptive_max_pool1d(i, 3), "adaptive_max_pool2d"),
        (lambda: F.adaptive_avg_pool1d(i, 3), "adaptive_avg_pool2d"),
    ]:
        with pytest.raises(NotImplementedError, match=kernel):
            fn()


# ---- the rest of torch.nn.functional -------------------------------------------------------


def test_pdist_conv_tbc_channel_shuffle() -> None:
    x = t64(5, 3)
    a = x.detach().numpy()
    want = [np.abs(a[i] - a[j]).sum() for i in range(5) for j in range(i + 1, 5)]
    np.testing.assert_allclose(F.pdist(x, 1).detach().numpy(), want, rtol=1e-12, atol=1e-12)
    assert gradcheck(lambda t: F.pdist(t), (x,))
    inp, w, b = t64(6, 2, 3), t64(2, 3, 4), t64(4)
    y = F.conv_tbc(inp, w, b, 1)
    assert y.shape == (7, 2, 4)
    assert gradcheck(lambda *t: F.conv_tbc(*t, 1), (inp, w, b))
    c = lucid.arange(12.0).reshape(1, 6, 2)
    assert nn.ChannelShuffle(2)(c)[0, :, 0].tolist() == [0.0, 6.0, 2.0, 8.0, 4.0, 10.0]
    with pytest.raises(RuntimeError, match="divisible by groups"):
        F.channel_shuffle(c, 4)
    with pytest.raises(RuntimeError, match="pdist only supports 2D"):
        F.pdist(lucid.randn(3))


def test_rrelu_gumbel_and_inplace_activations() -> None:
    x = t64(200)
    lucid.manual_seed(1)
    y = F.rrelu(x, 0.1, 0.3, training=True)
    a, b = x.detach().numpy(), y.detach().numpy()
    neg = a < 0
    assert np.all(b[~neg] == a[~neg])
    assert np.all((b[neg] / a[neg] >= 0.1) & (b[neg] / a[neg] <= 0.3))
    m = nn.RReLU(0.1, 0.3).eval()
    np.testing.assert_allclose(
        m(x).detach().numpy(), np.where(neg, 0.2 * a, a), rtol=1e-12, atol=1e-12
    )
    g = F.gumbel_softmax(t64(50, 4, grad=False), tau=0.5, hard=True)
    assert g.numpy().sum(1).tolist() == [1.0] * 50 and set(np.unique(g.numpy())) <= {0.0, 1.0}
    logits = t64(3, 4)
    soft = F.gumbel_softmax(logits, tau=2.0)
    np.testing.assert_allclose(soft.detach().numpy().sum(1), np.ones(3), rtol=1e-12, atol=1e-12)
    z = lucid.tensor([-1.0, 2.0])
    assert F.relu_(z) is z and z.tolist() == [0.0, 2.0]
    assert F.hardtanh_(lucid.tensor([3.0])).tolist() == [1.0]


def test_linear_cross_entropy() -> None:
    x, w, b = t64(4, 3), t64(5, 3), t64(5)
    target = lucid.tensor([0, 4, 2, 2])
    got = F.linear_cross_entropy(x, w, target, linear_bias=b)
    want = F.cross_entropy(F.linear(x, w, b), target)
    np.testing.assert_allclose(got.item(), want.item(), rtol=1e-12, atol=1e-12)
    assert gradcheck(lambda *t: F.linear_cross_entropy(t[0], t[1], target, linear_bias=t[2]),
                     (x, w, b))  # fmt: skip
    m = nn.LinearCrossEntropyLoss(3, 5, out_features=(2,), bias=True)
    assert m.linear.weight.shape == (10, 3)
    assert m(t64(4, 3, grad=False).to(lucid.float32), lucid.tensor([[0, 1]] * 4)).shape == ()
    with pytest.raises(RuntimeError, match="expected equal input and linear_weight"):
        F.linear_cross_entropy(t64(4, 2), w, target)
    with pytest.raises(RuntimeError, match="expected weight shape to be"):
        nn.LinearCrossEntropyLoss(3, 5, weight=lucid.ones(4))


def test_adaptive_log_softmax_and_loss_edges() -> None:
    m = nn.AdaptiveLogSoftmaxWithLoss(16, 10, [3, 6]).double()
    x = t64(4, 16)
    target = lucid.tensor([0, 4, 7, 9])
    out, loss = m(x, target)
    full = m.log_prob(x)
    np.testing.assert_allclose(
        np.exp(full.detach().numpy()).sum(1), np.ones(4), rtol=1e-12, atol=1e-12
    )
    np.testing.assert_allclose(out.detach().numpy(), full.detach().numpy()[range(4), [0, 4, 7, 9]],
                               rtol=1e-12, atol=1e-12)  # fmt: skip
    assert gradcheck(lambda a: m(a, target).loss, (x,))
    with pytest.raises(ValueError, match="cutoffs should be a sequence of unique"):
        nn.AdaptiveLogSoftmaxWithLoss(16, 10, [6, 3])
    with pytest.raises(RuntimeError, match="Target values should be in \\[0, 9\\]"):
        m(x, lucid.tensor([0, 1, 2, 10]))
    # kl_div: 0 * log 0 is 0, a negative target gives nan (torch's xlogy)
    kl = F.kl_div(lucid.zeros(3), lucid.tensor([0.0, -1.0, 0.5]), reduction="none")
    assert kl[0].item() == 0.0 and np.isnan(kl[1].item())
    # cross entropy with every target ignored: nan loss, zero gradient
    logits = lucid.randn(2, 3, requires_grad=True)
    ce = F.cross_entropy(logits, lucid.tensor([-100, -100]))
    ce.backward()
    assert np.isnan(ce.item()) and logits.grad.numpy().tolist() == [[0.0] * 3] * 2


def test_nn_grad_is_the_convolutions_vjp() -> None:
    x, w = t64(1, 2, 6, 5), t64(4, 2, 3, 3)
    out = F.conv2d(x, w, None, 1, 1)
    go = lucid.randn(*out.shape, dtype=lucid.float64)
    gx, gw = lucid.autograd.grad(out, (x, w), go)
    np.testing.assert_allclose(nn.grad.conv2d_input(x.shape, w, go, 1, 1).numpy(), gx.numpy(),
                               rtol=1e-12, atol=1e-12)  # fmt: skip
    np.testing.assert_allclose(nn.grad.conv2d_weight(x, w.shape, go, 1, 1).numpy(), gw.numpy(),
                               rtol=1e-12, atol=1e-12)  # fmt: skip
    lin = nn.Linear(6, 0)  # a zero-width layer backpropagates zeros (torch's)
    z = lucid.randn(3, 6, requires_grad=True)
    lin(z).sum().backward()
    assert z.grad.shape == (3, 6) and lin.weight.grad.shape == (0, 6)


def test_loss_argument_errors_as_torch() -> None:
    x = lucid.rand(3, 4)
    with pytest.raises(ValueError, match="var is of incorrect size"):
        F.gaussian_nll_loss(x, x, lucid.rand(3, 2))
    assert F.gaussian_nll_loss(x, x, lucid.rand(3, 1)).shape == ()  # one variance per row
    with pytest.raises(RuntimeError, match="non-positive values for delta"):
        F.huber_loss(x, x, delta=-1.0)


def test_gaussian_nll_loss_takes_torchs_homoscedastic_var_shapes() -> None:
    # one size-1 dim where the input differs (torch 2.13's rule), one dim fewer, or a float
    rng = np.random.default_rng(7)
    x, t = (lucid.tensor(rng.standard_normal((4, 3, 5, 5))) for _ in range(2))
    var = lucid.tensor(rng.random((4, 1, 5, 5)) + 0.1)
    full = var.expand(4, 3, 5, 5).contiguous()
    got, want = F.gaussian_nll_loss(x, t, var).item(), F.gaussian_nll_loss(x, t, full).item()
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    got = F.gaussian_nll_loss(x, t, 0.5).item()
    want = F.gaussian_nll_loss(x, t, lucid.full_like(x, 0.5)).item()
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="var is of incorrect size"):
        F.gaussian_nll_loss(x, t, lucid.ones(4, 3, 1, 1))
    with pytest.raises(ValueError, match="negative"):
        F.gaussian_nll_loss(x, t, -1.0)


def test_softmax_without_dim_warns_as_torch() -> None:
    # introyt/modelsyt_tutorial.py builds torch.nn.Softmax() and calls it on a 2-d batch
    x = lucid.tensor([[1.0, 2.0, 3.0], [0.0, 0.0, 1.0]])
    for call, name in (
        (lambda: lucid.nn.Softmax()(x), "softmax"),
        (lambda: lucid.nn.LogSoftmax()(x), "log_softmax"),
        (lambda: lucid.nn.functional.softmin(x), "softmin"),
    ):
        with pytest.warns(UserWarning, match=f"Implicit dimension choice for {name} has been "
                                             "deprecated") as rec:  # fmt: skip
            out = call()
        if name == "softmin":  # called directly: the warning names this file's line
            assert rec[0].filename == __file__
        assert out.shape == (2, 3)
    np.testing.assert_allclose(lucid.nn.Softmax(dim=1)(x).sum(1).numpy(), [1.0, 1.0],
                               rtol=1e-6, atol=1e-6)  # fmt: skip
