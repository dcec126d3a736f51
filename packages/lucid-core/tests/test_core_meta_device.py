"""The meta device: tensors with a shape and a dtype and no data; ops give meta results with
torch's shapes and dtypes without allocating their size; reading values raises torch's errors."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

import lucid


def test_creation_and_moves() -> None:
    x = lucid.empty(2, 3, device="meta")
    assert x.is_meta and x.device == "meta" and x.shape == (2, 3) and x.dtype is lucid.float32
    assert lucid.zeros(size=(4,), dtype=lucid.int64, device="meta").dtype is lucid.int64
    y = lucid.randn(3, 4).to("meta")
    assert y.is_meta and y.shape == (3, 4)
    assert lucid.ones_like(y).is_meta and lucid.full((2,), 7.0, device="meta").is_meta
    assert repr(x) == "tensor(..., device='meta', size=(2, 3))"
    assert not lucid.randn(2).is_meta


def test_repr_shows_the_autograd_suffix_as_torch() -> None:
    # pytorch/tutorials' reasoning_about_shapes prints a meta Conv2d's output: torch adds its
    # grad_fn (and wraps at 80 columns as for any tensor); the Conv2d case is lucid-nn's test
    out = lucid.rand(2, 3, device="meta", requires_grad=True) * 2
    assert repr(out) == "tensor(..., device='meta', size=(2, 3), grad_fn=<MulBackward0>)"
    leaf = lucid.rand(3, device="meta", dtype=lucid.float64, requires_grad=True)
    assert (
        repr(leaf)
        == "tensor(..., device='meta', size=(3,), dtype=lucid.float64, requires_grad=True)"
    )
    big = lucid.rand(2**10, 3, 2**16, 2**16, device="meta", dtype=lucid.float64, requires_grad=True)
    assert repr(big) == (
        "tensor(..., device='meta', size=(1024, 3, 65536, 65536), dtype=lucid.float64,\n"
        "       requires_grad=True)"
    )


def test_reading_values_raises() -> None:
    x = lucid.empty(1, device="meta")
    with pytest.raises(RuntimeError, match="cannot be called on meta tensors"):
        x.item()
    with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor; no data!"):
        x.numpy()
    with pytest.raises(NotImplementedError, match="to_empty"):
        x.to("cpu")


def test_ops_shapes_and_dtypes_without_allocating() -> None:
    tracemalloc.start()
    try:
        x = lucid.empty(20000, 20000, device="meta")  # 1.6 GB were it real
        y = (x * 2 + 1).exp().sigmoid()
        z = y @ lucid.empty(20000, 300, device="meta")
        s, m, r = z.sum(1), z.mean(), z.reshape(-1)
        c = lucid.cat([z, z], 0)
        b = x > 0
        h = x.to(lucid.float64)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 5_000_000
    assert y.shape == (20000, 20000) and z.shape == (20000, 300) and s.shape == (20000,)
    assert m.shape == () and r.shape == (6_000_000,) and c.shape == (40000, 300)
    assert b.dtype is lucid.bool and h.dtype is lucid.float64 and z.is_meta
    assert x.T.shape == (20000, 20000) and x[1:3, None].shape == (2, 1, 20000)


def test_ops_match_real_shapes_and_dtypes() -> None:
    rng = np.random.default_rng(0)
    real = [lucid.tensor(rng.standard_normal((4, 5)).astype(np.float32)), lucid.arange(5)]
    meta = [t.to("meta") for t in real]
    cases = [
        lambda a, i: a.softmax(-1), lambda a, i: a.max(dim=1).values, lambda a, i: a.var(0),
        lambda a, i: lucid.where(a > 0, a, 0.0), lambda a, i: a * i, lambda a, i: a.permute(1, 0),
        lambda a, i: lucid.stack([a, a]), lambda a, i: a.unsqueeze(0).expand(3, 4, 5),
    ]  # fmt: skip
    for case in cases:
        want, got = case(*real), case(*meta)
        assert got.is_meta and got.shape == want.shape and got.dtype is want.dtype


def test_layers_on_meta() -> None:
    nn = pytest.importorskip("lucid.nn")
    conv = nn.Conv2d(3, 8, 3, padding=1).to("meta")
    assert conv(lucid.empty(2, 3, 16, 16, device="meta")).shape == (2, 8, 16, 16)
    layer = nn.TransformerEncoderLayer(16, 2, 32, batch_first=True).to("meta")
    assert layer(lucid.empty(2, 5, 16, device="meta")).shape == (2, 5, 16)
    a, b = lucid.empty(7, 1, 3, 4, device="meta"), lucid.empty(6, 4, 5, device="meta")
    assert lucid.einsum("...ij,...jk->...ik", a, b).shape == (7, 6, 3, 5)


def test_unsupported_op_says_so() -> None:
    x = lucid.empty(4, 4, device="meta")
    with pytest.raises((NotImplementedError, RuntimeError)):
        x.unique()  # its size depends on the values


def test_sorts_ffts_triangles_and_pooling_on_meta() -> None:
    nn = pytest.importorskip("lucid.nn")
    real = lucid.randn(2, 3, 8, 10)
    meta = real.to("meta")
    cases = [
        lambda x: x.sort(-1).values, lambda x: x.sort(-1).indices, lambda x: x.topk(3).indices,
        lambda x: x.median(-1).values, lambda x: lucid.fft.rfft(x), lambda x: lucid.fft.fft2(x),
        lambda x: lucid.fft.irfft(lucid.fft.rfft(x)), lambda x: x.tril(), lambda x: x.roll(2, -1),
        lambda x: nn.functional.avg_pool2d(x, 2), lambda x: nn.functional.adaptive_avg_pool2d(x, 1),
    ]  # fmt: skip
    for case in cases:
        want, got = case(real), case(meta)
        assert got.is_meta and got.shape == want.shape and got.dtype is want.dtype
    q = lucid.empty(1, 2, 5, 4, device="meta")
    mask = lucid.ones(5, 5, dtype=lucid.bool, device="meta")
    out = nn.functional.scaled_dot_product_attention(q, q, q, attn_mask=mask)
    assert out.is_meta and out.shape == (1, 2, 5, 4)  # a value check/branch skips, as torch's


def test_module_to_meta_and_to_empty() -> None:
    nn = pytest.importorskip("lucid.nn")
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2), nn.BatchNorm1d(2))
    model.to("meta")
    assert all(p.is_meta for p in model.parameters())
    out = model(lucid.empty(5, 4, device="meta"))
    assert out.is_meta and out.shape == (5, 2)
    model.to_empty(device="cpu")
    assert not any(p.is_meta for p in model.parameters())
    assert model[0].weight.shape == (8, 4)
    assert model(lucid.randn(5, 4)).shape == (5, 2)


def test_meta_module_loads_weights_by_assignment() -> None:
    nn = pytest.importorskip("lucid.nn")
    weights = nn.Linear(4, 3).state_dict()
    model = nn.Linear(4, 3, device="meta")
    assert model.weight.is_meta
    model.load_state_dict(weights, assign=True)
    assert not model.weight.is_meta and isinstance(model.weight, nn.Parameter)
    assert model.weight.requires_grad and lucid.equal(model.weight, weights["weight"])
    x = lucid.randn(2, 4)
    want = x @ weights["weight"].T + weights["bias"]
    assert lucid.allclose(model(x), want, rtol=1e-6, atol=1e-6)


def test_ensembling_with_a_meta_base_model() -> None:
    """pytorch/tutorials' model ensembling: stack_module_state, a meta copy, vmap."""
    nn = pytest.importorskip("lucid.nn")
    import copy

    from lucid.func import functional_call, stack_module_state, vmap

    lucid.manual_seed(0)
    models = [nn.Sequential(nn.Linear(6, 5), nn.ReLU(), nn.Linear(5, 3)) for _ in range(4)]
    params, buffers = stack_module_state(models)
    base = copy.deepcopy(models[0]).to("meta")

    def fmodel(p: dict, b: dict, x: lucid.Tensor) -> lucid.Tensor:
        return functional_call(base, (p, b), (x,))  # type: ignore[no-any-return]

    x = lucid.randn(4, 7, 6)
    want = lucid.stack([m(xi) for m, xi in zip(models, x)])
    got = vmap(fmodel)(params, buffers, x)
    assert lucid.allclose(got, want, rtol=1e-5, atol=1e-6)
    shared = vmap(fmodel, in_dims=(0, 0, None))(params, buffers, x[0])
    want_shared = lucid.stack([m(x[0]) for m in models])
    assert lucid.allclose(shared, want_shared, rtol=1e-5, atol=1e-6)
