"""The MLX backend on its own: devices, dtypes, conversions, laziness, RNG, array protocol."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytestmark = pytest.mark.mlx
mx = pytest.importorskip("mlx.core")

import lucid  # noqa: E402
import lucid.backends.mlx as lmx  # noqa: E402
from lucid.backends import DeviceError, get_backend, synchronize  # noqa: E402


@pytest.fixture
def be() -> lmx.MlxBackend:
    return get_backend("mlx")  # type: ignore[return-value]


# -- devices --------------------------------------------------------------------------------------
def test_gpu_is_an_alias_of_mlx_and_backends_are_shared() -> None:
    assert get_backend("gpu") is get_backend("mlx")
    assert lmx.create_backend("gpu") is lmx.create_backend("mlx")
    assert get_backend("mlx").device == "mlx"
    assert get_backend("mlx:cpu").device == "mlx:cpu"
    assert get_backend("mlx:cpu") is not get_backend("mlx")


def test_tensor_device_strings() -> None:
    assert lucid.ones(2, device="gpu").device == "mlx"
    assert str(lucid.ones(2, device="mlx:cpu").device) == "mlx:cpu"


def test_unknown_mlx_device_is_a_clear_error() -> None:
    with pytest.raises(DeviceError, match="mlx:7"):
        lmx.create_backend("mlx:7")


def test_mlx_gpu_without_a_gpu_says_so() -> None:
    if mx.is_available(mx.gpu):
        pytest.skip("this MLX has a GPU")
    with pytest.raises(DeviceError, match="no GPU"):
        lucid.ones(2, device="mlx:gpu")


def test_ops_on_mlx_cpu_run_on_the_cpu_stream() -> None:
    be = get_backend("mlx:cpu")
    assert be.stream == mx.cpu  # type: ignore[attr-defined]
    x = lucid.tensor([1.0, 4.0], device="mlx:cpu")
    assert (x.sqrt() * 2).tolist() == [2.0, 4.0]


def test_mixing_cpu_and_mlx_names_both_devices() -> None:
    a = lucid.ones(3)
    b = lucid.ones(3, device="mlx")
    with pytest.raises(DeviceError, match=r"cpu and mlx|mlx and cpu"):
        a + b
    with pytest.raises(DeviceError, match=r"mlx and mlx:cpu"):
        b * lucid.ones(3, device="mlx:cpu")


def test_to_moves_data_and_gradients_flow_back_across_devices() -> None:
    x = lucid.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x.to("mlx")
    assert y.device == "mlx" and isinstance(y.array, mx.array)
    (y * y).sum().backward()
    assert x.grad is not None and x.grad.device == "cpu"
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0, 6.0], rtol=1e-7, atol=1e-7)
    back = y.detach().to("cpu")
    assert isinstance(back.array, np.ndarray) and back.tolist() == [1.0, 2.0, 3.0]


def test_without_the_plugin_mlx_device_says_pip_install(monkeypatch: pytest.MonkeyPatch) -> None:
    from lucid.backends import _registry

    monkeypatch.setattr(_registry, "_by_device", {"cpu": get_backend("cpu")})
    monkeypatch.setattr(_registry, "_factories", {})
    monkeypatch.setattr(_registry, "_entry_point_factory", lambda kind: None)
    with pytest.raises(DeviceError, match="pip install lucid-backend-mlx"):
        lucid.ones(2).to("mlx")


# -- dtypes ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "dt",
    [
        "float16",
        "bfloat16",
        "float32",
        "int8",
        "int16",
        "int32",
        "int64",
        "uint8",
        "bool",
        "complex64",
        "float64",
    ],
)
def test_dtypes_map_both_ways(be: lmx.MlxBackend, dt: str) -> None:
    d = lucid.dtypes.to_dtype(dt)
    t = lucid.zeros(2, dtype=d, device="mlx")
    assert t.dtype is d
    assert be.dtype_of(t.array) is d and be.dtype_from_native(be.native_dtype(d)) is d
    if dt != "bfloat16":  # NumPy has no bfloat16
        assert t.to("cpu").dtype is d


def test_float64_works_on_mlx_cpu() -> None:
    x = lucid.tensor([1.0, 2.0], dtype=lucid.float64, device="mlx:cpu")
    assert x.dtype is lucid.float64 and (x * 3).numpy().dtype == np.float64


def test_float64_on_the_gpu_is_a_clear_error(
    be: lmx.MlxBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(be, "mlx_device", lambda: mx.gpu)
    with pytest.raises(TypeError, match="no float64 on the GPU"):
        be.native_dtype(lucid.float64)


def test_numpy_float64_input_keeps_its_dtype() -> None:
    x = lucid.tensor(np.array([0.1, 0.2]), device="mlx:cpu")
    assert x.dtype is lucid.float64  # MLX would silently make float32
    assert lucid.tensor([0.1, 0.2], device="mlx").dtype is lucid.float32


def test_index_results_are_int64() -> None:
    x = lucid.tensor([[1.0, 3.0, 2.0]], device="mlx")
    assert x.argmax(dim=1).dtype is lucid.int64


# -- conversions and laziness ---------------------------------------------------------------------
def test_every_device_to_host_conversion_is_counted(be: lmx.MlxBackend) -> None:
    x = lucid.tensor([1.5, 2.5], device="mlx")
    y = x * 2 + 1
    before = be.host_transfers
    assert be.host_transfers == before  # building the graph copies nothing
    assert y.tolist() == [4.0, 6.0]
    assert y[0].item() == 4.0
    y.numpy()
    repr(y)
    assert bool(y[1] > 5.0)
    assert be.host_transfers == before + 5


def test_sync_points_return_evaluated_values() -> None:
    x = lucid.ones(3, device="mlx")
    for _ in range(5):
        x = x * 2
    assert float(x.sum()) == 96.0
    assert "32." in repr(x) and "device='mlx'" in repr(x)


def test_synchronize_evaluates_lazy_tensors_only() -> None:
    a = lucid.ones(2, device="mlx") * 3
    b = lucid.ones(2) * 3
    synchronize([a, b])
    # an evaluated MLX array has no inputs left in its graph
    assert a.array.tolist() == [3.0, 3.0]


def test_graph_does_not_grow_when_a_sync_point_is_reached(be: lmx.MlxBackend) -> None:
    x = lucid.ones(64, device="mlx")
    mx.eval(x.array)
    base = mx.get_active_memory()
    for _ in range(300):
        x = x * 1.0001 + 0.0
        synchronize([x])
    assert mx.get_active_memory() - base < 64 * 4 * 8


# -- the array protocol --------------------------------------------------------------------------
def test_copy_and_setitem_never_alias(be: lmx.MlxBackend) -> None:
    a = mx.array([1.0, 2.0, 3.0])
    c = be.copy(a)
    out = be.setitem(c, 0, 9.0)
    assert a.tolist() == [1.0, 2.0, 3.0] and c.tolist() == [1.0, 2.0, 3.0]
    assert out.tolist() == [9.0, 2.0, 3.0]


def test_tensor_setitem_and_clone_are_independent() -> None:
    x = lucid.zeros(3, device="mlx")
    y = x.clone()
    y[1] = 5.0
    assert x.tolist() == [0.0, 0.0, 0.0] and y.tolist() == [0.0, 5.0, 0.0]


def test_index_add_accumulates_repeated_indices(be: lmx.MlxBackend) -> None:
    out = be.index_add(mx.zeros(3), mx.array([0, 0, 2]), mx.array([1.0, 2.0, 3.0]))
    assert out.tolist() == [3.0, 0.0, 3.0]


def test_scatter_add_along_a_dim(be: lmx.MlxBackend) -> None:
    idx = np.array([[0, 1, 0], [2, 2, 1]])
    vals = np.arange(6, dtype=np.float32).reshape(2, 3)
    want = np.zeros((2, 3), np.float32)
    np.add.at(want, (np.arange(2)[:, None], idx), vals)
    got = be.scatter_add(mx.zeros((2, 3)), 1, mx.array(idx), mx.array(vals))
    np.testing.assert_array_equal(np.array(got), want)


@pytest.mark.parametrize(
    ("shape", "window", "axis"),
    [
        ((2, 3, 6, 5), (3, 2), (2, 3)),
        ((2, 7, 3), (4,), (1,)),
    ],
)
def test_sliding_windows_match_numpy(
    be: lmx.MlxBackend, shape: tuple[int, ...], window: tuple[int, ...], axis: tuple[int, ...]
) -> None:
    a = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    want = np.lib.stride_tricks.sliding_window_view(a, window, axis=axis)
    got = be.sliding_windows(mx.array(a), window, axis)
    np.testing.assert_array_equal(np.array(got), want)
    # on a non-contiguous input too
    at = np.ascontiguousarray(a.swapaxes(0, 1)).swapaxes(0, 1)
    got_t = be.sliding_windows(mx.swapaxes(mx.array(np.swapaxes(a, 0, 1)), 0, 1), window, axis)
    np.testing.assert_array_equal(
        np.array(got_t), np.lib.stride_tricks.sliding_window_view(at, window, axis=axis)
    )


# -- xp: NumPy's signatures ---------------------------------------------------------------------
XP_CASES = [
    ("sum", lambda xp, a: xp.sum(a, axis=(0, 2), keepdims=True)),
    ("sum-empty-axes", lambda xp, a: xp.sum(a, axis=())),
    ("mean", lambda xp, a: xp.mean(a, axis=1)),
    ("amax", lambda xp, a: xp.amax(a, axis=(1, 2))),
    ("var-ddof", lambda xp, a: xp.var(a, axis=0, ddof=1)),
    ("transpose", lambda xp, a: xp.transpose(a, (2, 0, 1))),
    ("broadcast_to", lambda xp, a: xp.broadcast_to(a[:, :1], (2, 5, 4))),
    ("true_divide", lambda xp, a: xp.true_divide(a, 2.0)),
    ("negative", lambda xp, a: xp.negative(a)),
    ("where", lambda xp, a: xp.where(a > 0, a, 0.0)),
    ("full", lambda xp, a: xp.full((2, 2), 3.0, dtype=a.dtype)),
    ("zeros", lambda xp, a: xp.zeros((2, 3), dtype=a.dtype)),
    ("concatenate", lambda xp, a: xp.concatenate([a, a], axis=1)),
    ("split", lambda xp, a: xp.split(a, [1, 3], axis=1)[1]),
    ("flip", lambda xp, a: xp.flip(a, axis=1)),
    ("pad", lambda xp, a: xp.pad(a, ((0, 0), (1, 2), (0, 1)), constant_values=0.5)),
    ("argmax", lambda xp, a: xp.argmax(a, axis=2)),
    ("argsort", lambda xp, a: xp.argsort(a, axis=1)),
    ("cumsum", lambda xp, a: xp.cumsum(a, axis=1)),
    ("clip", lambda xp, a: xp.clip(a, -0.5, 0.5)),
    ("einsum", lambda xp, a: xp.einsum("ijk,ilk->ijl", a, a)),
    ("tensordot", lambda xp, a: xp.tensordot(a, a, axes=([1, 2], [1, 2]))),
    ("fmod", lambda xp, a: xp.fmod(a, 0.3)),
    ("copysign", lambda xp, a: xp.copysign(xp.abs(a), -a)),
    ("nonzero", lambda xp, a: xp.nonzero(a > 0)[1]),
    ("expand_dims", lambda xp, a: xp.expand_dims(a, (0, 2))),
    ("tril", lambda xp, a: xp.tril(a[0], 1)),
    (
        "matmul-int",
        lambda xp, a: xp.matmul((a[0] * 4).astype(xp.int64), (a[1] * 4).astype(xp.int64).T),
    ),
    ("linalg.norm", lambda xp, a: xp.linalg.norm(a[0], axis=1)),
    ("linalg.inv", lambda xp, a: xp.linalg.inv(a[0][:4, :4] + 4 * xp.eye(4, dtype=a.dtype))),
]


@pytest.mark.parametrize(("name", "fn"), XP_CASES, ids=[c[0] for c in XP_CASES])
def test_xp_matches_numpy(be: lmx.MlxBackend, name: str, fn: object) -> None:
    a = np.random.default_rng(3).standard_normal((2, 5, 4)).astype(np.float32)
    want = fn(np, a)  # type: ignore[operator]
    got = fn(be.xp, mx.array(a))  # type: ignore[operator]
    got = np.array(got)
    assert got.dtype == want.dtype, f"{name}: {got.dtype} vs {want.dtype}"
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_xp_array_takes_numpy_bool_arrays(be: lmx.MlxBackend) -> None:
    mask = np.array([[True, False], [False, True]])
    got = be.xp.asarray(mask)
    assert got.dtype == mx.bool_
    np.testing.assert_array_equal(np.array(got), mask)


def test_xp_names_missing_in_mlx_say_where_to_add_them(be: lmx.MlxBackend) -> None:
    with pytest.raises(AttributeError, match="_xp.py"):
        be.xp.no_such_numpy_function  # noqa: B018


# -- random ----------------------------------------------------------------------------------------
def test_manual_seed_makes_mlx_draws_reproducible() -> None:
    get_backend("mlx")
    lucid.manual_seed(123)
    a = [lucid.randn(4, device="mlx").tolist(), lucid.rand(3, device="mlx").tolist()]
    b_int = lucid.randint(0, 10, (5,), device="mlx").tolist()
    lucid.manual_seed(123)
    assert [lucid.randn(4, device="mlx").tolist(), lucid.rand(3, device="mlx").tolist()] == a
    assert lucid.randint(0, 10, (5,), device="mlx").tolist() == b_int
    assert lucid.randn(4, device="mlx").tolist() != a[0]


def test_draws_are_made_on_the_device_with_the_right_distribution() -> None:
    lucid.manual_seed(0)
    n = lucid.randn(20000, device="mlx")
    u = lucid.rand(20000, device="mlx")
    i = lucid.randint(3, 7, (20000,), device="mlx")
    assert isinstance(n.array, mx.array) and n.dtype is lucid.float32
    assert abs(n.mean().item()) < 0.03 and abs(n.std().item() - 1) < 0.03
    assert 0 <= u.min().item() and u.max().item() < 1 and abs(u.mean().item() - 0.5) < 0.01
    assert sorted(set(i.tolist())) == [3, 4, 5, 6] and i.dtype is lucid.int64


def test_an_explicit_generator_drives_mlx_draws() -> None:
    g1 = lucid.Generator().manual_seed(5)
    g2 = lucid.Generator().manual_seed(5)
    a = lucid.randn(3, device="mlx", generator=g1).tolist()
    assert lucid.randn(3, device="mlx", generator=g2).tolist() == a


# -- kernels ---------------------------------------------------------------------------------------
def test_native_kernels_are_registered_under_known_contracts(be: lmx.MlxBackend) -> None:
    from lucid import kernels

    assert set(be.kernels) <= set(kernels.CONTRACTS)
    for contract, impl in be.kernels.items():
        contract.check(impl)  # raises on a missing method or a wrong arity
    wanted = [kernels.SOFTMAX, kernels.LOG_SOFTMAX, kernels.ERF, kernels.ERFINV, kernels.GELU]
    wanted += [kernels.CONV, kernels.CONV_TRANSPOSE, kernels.SDPA, kernels.MAX_POOL]
    wanted += [kernels.AVG_POOL, kernels.LAYER_NORM]
    assert [c.name for c in wanted if c not in be.kernels] == []


def test_softmax_kernel_runs_and_keeps_double_backward() -> None:
    calls = []
    from lucid import kernels

    kernel = get_backend("mlx").kernels[kernels.SOFTMAX]
    original = kernel.forward

    def spy(backend: object, x: object, dim: int) -> object:
        assert isinstance(x, mx.array)  # arrays, not Tensors
        calls.append(dim)
        return original(backend, x, dim)

    kernel.forward = staticmethod(spy)
    try:
        a = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
        grads = {}
        for dev in ("cpu", "mlx"):
            x = lucid.tensor(a, device=dev, requires_grad=True)
            y = lucid.softmax(x, dim=1)
            (g,) = lucid.autograd.grad((y * y).sum(), [x], create_graph=True)
            (gg,) = lucid.autograd.grad(g.sum(), [x])
            grads[dev] = (y.detach().numpy(), g.detach().numpy(), gg.numpy())
    finally:
        kernel.forward = staticmethod(original)
    assert calls == [1]
    for want, got in zip(grads["cpu"], grads["mlx"]):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)


def test_every_native_kernel_receives_and_returns_arrays_only(
    be: lmx.MlxBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each MLX kernel, spied on through the public ops (as lucid.nn calls them on "mlx"): its
    arguments and results hold MLX arrays and plain values, never a Tensor or a Function."""
    from lucid import kernels
    from lucid.autograd.function import Function

    def plain(value: object) -> bool:
        if isinstance(value, (lucid.Tensor, Function)):
            return False
        if isinstance(value, (tuple, list)):
            return all(plain(v) for v in value)
        return True

    seen: list[str] = []
    contracts: dict[Any, Any] = dict(be.kernels)
    for contract, impl in contracts.items():
        for name in ("forward", "backward"):
            fn = getattr(impl, name, None)
            if fn is None:
                continue

            label = f"{contract.name}.{name}"

            def method(*args: object, _fn: Any = fn, _n: str = label) -> object:
                assert all(plain(a) for a in args[1:]), _n
                out = _fn(*args)
                assert plain(out), _n
                seen.append(_n)
                return out

            monkeypatch.setattr(impl, name, staticmethod(method))
    x = lucid.tensor(np.random.default_rng(5).standard_normal((2, 3, 8, 8)).astype(np.float32),
                     device="mlx", requires_grad=True)  # fmt: skip
    y = lucid.softmax(x, dim=1) + lucid.special.erf(x) + lucid.special.erfinv(x.tanh() * 0.5)
    y.sum().backward()
    assert {"softmax.forward", "erf.forward", "erfinv.forward"} <= set(seen)
    # The whole-op kernels, called as lucid.nn's Functions call them.
    xa, wa = x.detach().array, mx.ones((4, 3, 3, 3))
    ks = be.kernels
    out, res = ks[kernels.CONV].forward(be, xa, wa, None, (1, 1), ((1, 1), (1, 1)), (1, 1), 1)
    ks[kernels.CONV].backward(be, res, out, (True, True, False))
    pooled = ks[kernels.MAX_POOL].forward(be, xa, (2, 2), (2, 2), (0, 0), (1, 1), False, False)
    assert pooled is not None
    ks[kernels.MAX_POOL].backward(be, pooled[1], pooled[0], (True,))
    assert ks[kernels.MAX_POOL].forward(be, xa, (2, 2), (2, 2), (0, 0), (1, 1), False, True) is None
    normed = ks[kernels.LAYER_NORM].forward(be, xa, None, None, 1, 1e-5)
    assert normed is not None
    ks[kernels.LAYER_NORM].backward(be, normed[1], normed[0], (True, False, False))
    assert {"conv.backward", "max_pool.backward", "layer_norm.backward"} <= set(seen)
