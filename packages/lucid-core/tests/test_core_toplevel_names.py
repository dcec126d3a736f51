"""torch's top-level helpers, legacy names, native norms and nn wrappers (issue 29)."""

from __future__ import annotations

import numpy as np
import pytest

import lucid


def _x(*shape: int, seed: int = 0) -> lucid.Tensor:
    return lucid.tensor(np.random.default_rng(seed).standard_normal(shape))


def test_legacy_range_includes_its_end() -> None:
    with pytest.warns(UserWarning, match="torch.range is deprecated"):
        r = lucid.range(0, 1, 0.25)
    assert r.dtype == lucid.float32 and r.tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]


def test_norm_helpers() -> None:
    x = _x(3, 4)
    np.testing.assert_allclose(
        lucid.frobenius_norm(x, (0, 1)).item(), np.linalg.norm(x.numpy()), rtol=1e-12, atol=0
    )
    np.testing.assert_allclose(
        lucid.nuclear_norm(x).item(), np.linalg.norm(x.numpy(), "nuc"), rtol=1e-12, atol=0
    )
    got = lucid.norm_except_dim(x, 2, 1)
    assert got.shape == (1, 4)
    np.testing.assert_allclose(got.numpy()[0], np.linalg.norm(x.numpy(), axis=0), 1e-12, 0)


def test_settings_round_trip() -> None:
    lucid.set_warn_always(True)
    assert lucid.is_warn_always_enabled()
    lucid.set_warn_always(False)
    lucid.set_deterministic_debug_mode("warn")
    assert lucid.get_deterministic_debug_mode() == 1
    lucid.set_deterministic_debug_mode(0)
    assert not lucid.are_deterministic_algorithms_enabled()
    with pytest.raises(RuntimeError, match="invalid value of debug_mode"):
        lucid.set_deterministic_debug_mode(3)
    assert lucid.get_autocast_cpu_dtype() == lucid.get_autocast_dtype("cpu")
    assert lucid.get_device(_x(2)) == -1 and lucid.newaxis is None


def test_cond_fork_and_frombuffer() -> None:
    assert lucid.cond(lucid.tensor(True), lambda a: a + 1, lambda a: a - 1, (1,)) == 2
    assert lucid.wait(lucid.fork(lambda a, b: a * b, 3, b=4)) == 12
    raw = bytearray(np.arange(4, dtype=np.float32).tobytes())
    t = lucid.frombuffer(raw, dtype=lucid.float32, offset=4)
    assert t.tolist() == [1.0, 2.0, 3.0]


def test_native_batch_norm_updates_the_running_statistics() -> None:
    x = _x(4, 2, 3)
    mean, var = lucid.zeros(2, dtype=lucid.float64), lucid.ones(2, dtype=lucid.float64)
    out, save_mean, save_invstd = lucid.native_batch_norm(x, None, None, mean, var, True, 0.1, 0)
    data = x.numpy().transpose(1, 0, 2).reshape(2, -1)
    np.testing.assert_allclose(save_mean.numpy(), data.mean(1), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(save_invstd.numpy(), 1 / data.std(1), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(mean.numpy(), 0.1 * data.mean(1), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(var.numpy(), 0.9 + 0.1 * data.var(1, ddof=1), 1e-12, 1e-12)
    _, empty, _ = lucid.native_batch_norm(x, None, None, mean, var, False, 0.1, 1e-5)
    assert empty.shape == (0,)


def test_native_layer_and_group_norm_statistics() -> None:
    x = _x(2, 6, 3)
    out, mean, rstd = lucid.native_layer_norm(x, (3,), None, None, 0.0)
    assert mean.shape == rstd.shape == (2, 6, 1)
    np.testing.assert_allclose(out.numpy().std(-1), np.ones((2, 6)), rtol=1e-10, atol=1e-10)
    out, mean, rstd = lucid.native_group_norm(x, None, None, 2, 6, 3, 3, 0.0)
    assert mean.shape == rstd.shape == (2, 3)
    np.testing.assert_allclose(
        mean.numpy(), x.numpy().reshape(2, 3, 6).mean(-1), rtol=1e-12, atol=1e-12
    )


def test_top_level_nn_forms_with_torchs_arguments() -> None:
    functional = pytest.importorskip("lucid.nn.functional")
    x, y = _x(4, 3), _x(4, 3, seed=1)
    np.testing.assert_allclose(
        lucid.kl_div(x, y, 2).item(), functional.kl_div(x, y, reduction="sum").item(), 1e-12, 0
    )
    w, idx = _x(5, 2), lucid.tensor([4, 0])
    np.testing.assert_array_equal(lucid.embedding(w, idx).numpy(), w.numpy()[[4, 0]])
    img, grid = _x(1, 1, 2, 3, 3), _x(1, 2, 2, 2, 3) * 0.5
    np.testing.assert_array_equal(
        lucid.grid_sampler_3d(img, grid, 0, 0, False).numpy(),
        functional.grid_sample(img, grid, align_corners=False).numpy(),
    )
    with pytest.raises(ValueError, match="not a valid value for reduction"):
        lucid.hinge_embedding_loss(x, y, 1.0, 5)


def test_frexp_and_nextafter_match_numpy() -> None:
    x = np.array([3.0, 0.0, -5.5, 1e-300])
    m, e = lucid.frexp(lucid.tensor(x))
    want_m, want_e = np.frexp(x)
    np.testing.assert_array_equal(m.numpy(), want_m)
    assert e.dtype == lucid.int32 and e.tolist() == want_e.tolist()
    one = lucid.tensor([1.0], dtype=lucid.float32)
    want = float(np.nextafter(np.float32(1), np.float32(2)))  # float32 under NumPy 1.26 too
    assert lucid.nextafter(one, lucid.tensor([2.0])).item() == want
    with pytest.raises(RuntimeError, match="only supports floating-point"):
        lucid.frexp(lucid.tensor([1, 2]))


def test_histogramdd_matches_numpy() -> None:
    pts = np.random.default_rng(3).standard_normal((50, 2))
    w = np.random.default_rng(4).random(50)
    for kwargs in ({"bins": [3, 4]}, {"bins": 2, "range": [-1.0, 1.0, -2.0, 0.5]}):
        np_range = None if "range" not in kwargs else [(-1.0, 1.0), (-2.0, 0.5)]
        want, want_edges = np.histogramdd(
            pts, bins=kwargs["bins"], range=np_range, weights=w, density=True
        )
        got = lucid.histogramdd(lucid.tensor(pts), weight=lucid.tensor(w), density=True, **kwargs)
        np.testing.assert_allclose(got.hist.numpy(), want, rtol=1e-10, atol=1e-12)
        for e, we in zip(got.bin_edges, want_edges):
            np.testing.assert_allclose(e.numpy(), we, rtol=1e-12, atol=1e-12)


def test_gradient_matches_numpy_on_coordinates() -> None:
    f = np.random.default_rng(5).standard_normal((4, 5))
    x = np.array([0.0, 0.5, 1.5, 1.7, 3.0])
    for order in (1, 2):
        (got,) = lucid.gradient(
            lucid.tensor(f), spacing=(lucid.tensor(x),), dim=1, edge_order=order
        )
        want = np.gradient(f, x, axis=1, edge_order=order)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-10, atol=1e-12)
    with pytest.raises(RuntimeError, match="appears multiple times"):
        lucid.gradient(lucid.tensor(f), dim=(1, 1))


def test_tensor_legacy_new_and_flags() -> None:
    x = lucid.tensor([1.0, 2.0], dtype=lucid.float32)
    assert x.new(2, 3).shape == (2, 3) and x.new(2, 3).dtype == lucid.float32
    assert x.new((2, 2)).tolist() == [2.0, 2.0]  # a plain sequence is data, as torch's
    assert x.new(lucid.Size([2, 2])).shape == (2, 2) and x.new().shape == (0,)
    assert x.cdouble().dtype == lucid.complex128
    assert not (x.is_inference() or x.is_nested() or x.is_distributed())
    y = x.clone()
    y.nextafter_(lucid.tensor([3.0, 0.0]))
    assert y.tolist() == [
        float(np.nextafter(np.float32(1), np.float32(3))),
        float(np.nextafter(np.float32(2), np.float32(0))),
    ]
