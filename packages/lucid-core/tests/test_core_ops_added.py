"""Ops added to close torch's surface (issue 29): what the op-table samples cannot say (shapes
as arguments, error messages, NumPy references for quantile/histogram/kron)."""

from __future__ import annotations

import numpy as np
import pytest

import lucid


def test_broadcast_shapes_follows_numpy_and_rejects_mismatches() -> None:
    assert lucid.broadcast_shapes((2, 1), (3,), 1) == (2, 3)
    assert lucid.broadcast_shapes() == ()
    assert lucid.broadcast_shapes((0, 1), (4,)) == np.broadcast_shapes((0, 1), (4,))
    with pytest.raises(RuntimeError, match="Shape mismatch"):
        lucid.broadcast_shapes((2, 1), (3, 2))


@pytest.mark.parametrize("how", ["linear", "lower", "higher", "midpoint", "nearest"])
def test_quantile_matches_numpy(how: str) -> None:
    a = np.random.default_rng(0).standard_normal((4, 7))
    q = np.array([0.0, 0.1, 0.5, 0.93, 1.0])
    got = lucid.quantile(lucid.tensor(a), lucid.tensor(q), dim=1, interpolation=how)
    np.testing.assert_allclose(got.numpy(), np.quantile(a, q, axis=1, method=how),
                               rtol=1e-12, atol=1e-12)  # fmt: skip


def test_quantile_errors_name_the_problem() -> None:
    x = lucid.randn(5)
    with pytest.raises(RuntimeError, match=r"q values must be in the range \[0, 1\]"):
        lucid.quantile(x, 1.5)
    with pytest.raises(RuntimeError, match="float or double"):
        lucid.quantile(lucid.arange(5), 0.5)
    with pytest.raises(RuntimeError, match="non-empty"):
        lucid.quantile(lucid.zeros(0), 0.5)


def test_histogram_and_kron_match_numpy() -> None:
    a = np.random.default_rng(1).standard_normal(50)
    hist, edges = lucid.histogram(lucid.tensor(a), 6, range=(-1.5, 2.0))
    want, want_edges = np.histogram(a, 6, range=(-1.5, 2.0))
    np.testing.assert_array_equal(hist.numpy(), want)
    np.testing.assert_allclose(edges.numpy(), want_edges, rtol=1e-12, atol=1e-12)
    b = np.arange(6.0).reshape(2, 3)
    c = np.arange(4.0).reshape(2, 1, 2)
    np.testing.assert_array_equal(lucid.kron(lucid.tensor(b), lucid.tensor(c)).numpy(),
                                  np.kron(b, c))  # fmt: skip


def test_select_and_splits_reject_bad_arguments() -> None:
    x = lucid.zeros(3, 4)
    with pytest.raises(IndexError, match="out of range"):
        lucid.select(x, 0, 3)
    with pytest.raises(RuntimeError, match="not divisible"):
        lucid.hsplit(x, 3)
    with pytest.raises(RuntimeError, match="at least 3 dimension"):
        lucid.dsplit(x, 2)
    with pytest.raises(RuntimeError, match="rotation dims"):
        lucid.rot90(x, 1, [0, 0])


def _nuc_cases() -> list[tuple[np.ndarray, dict[str, object]]]:
    rng = np.random.default_rng(2)
    return [(rng.standard_normal((3, 4)), {}),
            (rng.standard_normal((2, 3, 4)), {"dim": (0, 2), "keepdim": True})]  # fmt: skip


def test_norm_nuc_gradcheck_and_matches_singular_values() -> None:
    from lucid.autograd import gradcheck

    for a, kw in _nuc_cases():
        x = lucid.tensor(a, requires_grad=True)
        assert gradcheck(lambda t, kw=kw: lucid.norm(t, "nuc", **kw), (x,))
    a = _nuc_cases()[0][0]
    want = np.linalg.svd(a, compute_uv=False).sum()
    np.testing.assert_allclose(lucid.norm(lucid.tensor(a), p="nuc").item(), want, rtol=1e-12,
                               atol=1e-12)  # fmt: skip


@pytest.mark.parity
def test_norm_nuc_matches_torch() -> None:
    torch = pytest.importorskip("torch")
    for a, kw in _nuc_cases():
        outs = []
        for L in (lucid, torch):
            x = L.tensor(a, requires_grad=True)
            y = L.norm(x, p="nuc", **kw)
            y.sum().backward()
            outs.append((y.detach().numpy(), x.grad.numpy()))
        for got, want in zip(outs[0], outs[1]):
            np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


# -- linalg: lu_factor / lu_solve / cholesky_solve, torch's top-level svd/qr/cholesky --------------
def _mats() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(3)
    a = rng.standard_normal((4, 4))
    return {"A": a, "B": rng.standard_normal((4, 2)), "W": rng.standard_normal((2, 3, 5)),
            "S": a @ a.T + 4 * np.eye(4)}  # fmt: skip


def _sym(s: object) -> object:
    """The symmetric part: cholesky reads one triangle, so finite differences need this."""
    return (s + s.mT) / 2  # type: ignore[attr-defined,operator]


LINALG_CALLS = {
    "lu_factor": (lambda L, m: L.linalg.lu_factor(m["A"]).LU, ("A",)),
    "lu_factor_wide": (lambda L, m: L.linalg.lu_factor(m["W"]).LU, ("W",)),
    "lu_solve": (lambda L, m: L.linalg.lu_solve(*L.linalg.lu_factor(m["A"]), m["B"]), ("A", "B")),
    "lu_solve_adjoint": (
        lambda L, m: L.linalg.lu_solve(*L.linalg.lu_factor(m["A"]), m["B"], adjoint=True),
        ("A", "B"),
    ),
    "lu_solve_right": (
        lambda L, m: L.linalg.lu_solve(*L.linalg.lu_factor(m["A"]), m["B"].mT, left=False),
        ("A", "B"),
    ),
    "cholesky_solve": (
        lambda L, m: L.cholesky_solve(m["B"], L.linalg.cholesky(_sym(m["S"]))),
        ("S", "B"),
    ),
    "svd_legacy": (lambda L, m: (lambda r: r.U @ r.S.diag_embed() @ r.V.mT)(L.svd(m["W"])), ("W",)),
    "qr_legacy": (lambda L, m: L.qr(m["A"], some=False).R.abs(), ("A",)),
    "qr_wide": (lambda L, m: (lambda r: r.Q @ r.R + r.R.abs())(L.linalg.qr(m["W"])), ("W",)),
    "cholesky_upper": (lambda L, m: L.cholesky(_sym(m["S"]), upper=True), ("S",)),
    "linalg_lu": (lambda L, m: (lambda r: r.P @ r.L + r.U)(L.linalg.lu(m["A"])), ("A",)),
    "linalg_lu_tall": (
        lambda L, m: (lambda r: r.L.sum(-1) + r.U.sum())(L.linalg.lu(m["W"].mT)),
        ("W",),
    ),
    "cond": (lambda L, m: L.linalg.cond(m["A"]), ("A",)),
    "cond_fro": (lambda L, m: L.linalg.cond(m["A"], "fro"), ("A",)),
    "vander": (lambda L, m: L.linalg.vander(m["B"], N=3), ("B",)),
    "vecdot": (lambda L, m: L.linalg.vecdot(m["A"], m["B"][:, :1], dim=0), ("A", "B")),
    "tensorinv": (lambda L, m: L.linalg.tensorinv(m["A"].reshape(4, 2, 2), 1), ("A",)),
    "tensorsolve": (
        lambda L, m: L.linalg.tensorsolve(m["A"].reshape(2, 2, 4), m["B"][:, 0].reshape(2, 2)),
        ("A", "B"),
    ),
    "solve_ex": (lambda L, m: L.linalg.solve_ex(m["S"], m["B"]).result, ("S", "B")),
    "lu_legacy": (lambda L, m: L.lu_solve(m["B"], *L.lu(m["A"])), ("A", "B")),
    "lu_unpack": (lambda L, m: (lambda r: r.L + r.U)(L.lu_unpack(*L.lu(m["A"]))), ("A",)),
    "cholesky_inverse": (lambda L, m: L.cholesky_inverse(L.linalg.cholesky(_sym(m["S"]))), ("S",)),
}


def _run(L: object, name: str) -> tuple[object, dict[str, object]]:
    fn, uses = LINALG_CALLS[name]
    mats = {k: L.tensor(v, requires_grad=k in uses) for k, v in _mats().items()}  # type: ignore[attr-defined]
    return fn(L, mats), mats


@pytest.mark.parametrize("name", sorted(LINALG_CALLS))
def test_linalg_additions_gradcheck(name: str) -> None:
    from lucid.autograd import gradcheck

    fn, uses = LINALG_CALLS[name]
    base = {k: lucid.tensor(v) for k, v in _mats().items()}
    ins = [lucid.tensor(_mats()[k], requires_grad=True) for k in uses]
    assert gradcheck(lambda *xs: fn(lucid, {**base, **dict(zip(uses, xs))}), ins)


# torch 2.13's own backward fails here (an in-place change of linalg_inv_ex's output).
TORCH_BACKWARD_FAILS = {"cond_fro"}


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(LINALG_CALLS))
def test_linalg_additions_match_torch(name: str) -> None:
    torch = pytest.importorskip("torch")
    results = []
    for L in (lucid, torch):
        out, mats = _run(L, name)
        w = np.random.default_rng(5).standard_normal(tuple(out.shape))  # type: ignore[attr-defined]
        if name in TORCH_BACKWARD_FAILS:
            results.append([out.detach().numpy()])  # type: ignore[attr-defined]
            continue
        (out * L.tensor(w)).sum().backward()  # type: ignore[attr-defined]
        grads = [mats[k].grad.numpy() for k in LINALG_CALLS[name][1]]  # type: ignore[attr-defined]
        results.append([out.detach().numpy(), *grads])  # type: ignore[attr-defined]
    for got, want in zip(*results):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-11)


def test_lu_pivots_follow_lapack_and_eig_is_complex() -> None:
    lu, piv = lucid.linalg.lu_factor(lucid.tensor([[0.0, 1.0], [2.0, 3.0]]))
    assert piv.dtype is lucid.int32 and piv.tolist() == [2, 2]
    np.testing.assert_allclose(lu.numpy(), [[2.0, 3.0], [0.0, 1.0]], rtol=0, atol=0)
    # eig (test_core_fft.py tests it fully): complex as torch's, also for real eigenvalues
    assert lucid.linalg.eig(lucid.eye(2)).eigenvalues.dtype is lucid.complex64
    assert lucid.linalg.eigvals(lucid.eye(2)).tolist() == [1, 1]


# -- in-place random fills -------------------------------------------------------------------------
FILLS = {
    # name: (call, mean, variance) of the distribution
    "exponential_": (lambda t, g: t.exponential_(2.0, generator=g), 0.5, 0.25),
    "log_normal_": (lambda t, g: t.log_normal_(0.0, 0.5, generator=g), np.exp(0.125),
                    (np.exp(0.25) - 1) * np.exp(0.25)),
    "geometric_": (lambda t, g: t.geometric_(0.25, generator=g), 4.0, 0.75 / 0.0625),
    "bernoulli_": (lambda t, g: t.bernoulli_(0.3, generator=g), 0.3, 0.21),
    "random_": (lambda t, g: t.random_(3, 7, generator=g), 4.5, 1.25),
    "uniform_": (lambda t, g: t.uniform_(-1.0, 3.0, generator=g), 1.0, 16 / 12),
    "normal_": (lambda t, g: t.normal_(1.0, 2.0, generator=g), 1.0, 4.0),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(FILLS))
def test_random_fills_have_their_moments_and_follow_the_generator(name: str) -> None:
    fill, mean, var = FILLS[name]
    n = 200_000
    t = lucid.zeros(n, dtype=lucid.float64)
    out = fill(t, lucid.Generator().manual_seed(0))
    assert out is t and t.dtype is lucid.float64
    x = t.numpy()
    # 6 standard errors of the mean and (roughly) of the variance
    assert abs(x.mean() - mean) < 6 * np.sqrt(var / n) + 1e-12
    assert abs(x.var() - var) < 0.05 * var
    again = fill(lucid.zeros(n, dtype=lucid.float64), lucid.Generator().manual_seed(0))
    np.testing.assert_array_equal(again.numpy(), x)


def test_cauchy_median_and_fill_errors() -> None:
    t = lucid.zeros(100_000, dtype=lucid.float64).cauchy_(1.0, 0.5)
    assert abs(float(np.median(t.numpy())) - 1.0) < 0.02
    assert set(lucid.zeros(50, dtype=lucid.int64).random_(2).tolist()) <= {0, 1}
    with pytest.raises(RuntimeError, match="lambda > 0"):
        lucid.zeros(3).exponential_(-1.0)
    with pytest.raises(RuntimeError, match=r"p to be in \(0, 1\)"):
        lucid.zeros(3).geometric_(1.5)
    with pytest.raises(RuntimeError, match="floating point"):
        lucid.zeros(3, dtype=lucid.int64).exponential_()
    with pytest.raises(RuntimeError, match="requires dtype Double"):
        lucid.zeros(3).float_power_(2)
    w = lucid.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf"):
        w.sin_()


def test_h_and_mh_transpose_matrices() -> None:
    x = lucid.arange(6.0).reshape(2, 3)
    assert x.H.shape == (3, 2) and x.mH.shape == (3, 2)
    assert lucid.zeros(2, 3, 4).mH.shape == (2, 4, 3)
    with pytest.raises(RuntimeError, match="only supported on matrices"):
        lucid.zeros(2, 3, 4).H


def test_size_is_a_tuple_like_torch_size() -> None:
    import json
    import pickle

    s = lucid.zeros(2, 3).shape
    assert isinstance(s, lucid.Size) and isinstance(s, tuple)
    assert s == (2, 3) and (2, 3) == s and hash(s) == hash((2, 3))
    assert repr(s) == "lucid.Size([2, 3])" and s.numel() == 6
    assert isinstance(s[1:], lucid.Size) and s[1:] == (3,) and isinstance(s[0], int)
    assert isinstance(s + (4,), lucid.Size) and s + (4,) == (2, 3, 4)
    assert type((4,) + s) is tuple and (4,) + s == (4, 2, 3)
    assert lucid.zeros(2, 3).size() == s and lucid.Size([2, 3]) == s
    back = pickle.loads(pickle.dumps(s))
    assert back == s and type(back) is lucid.Size
    assert json.dumps(s) == "[2, 3]"
    assert lucid.zeros(s).shape == s and np.zeros(s).shape == (2, 3)
    assert lucid.zeros(()).shape == () and lucid.zeros(()).shape.numel() == 1


def test_linalg_tensor_methods_call_the_functions() -> None:
    rng = np.random.default_rng(4)
    a = lucid.tensor(rng.standard_normal((3, 3)))
    s = a @ a.mT + 3 * lucid.eye(3, dtype=lucid.float64)
    b = lucid.tensor(rng.standard_normal((3, 2)))
    pairs = [
        (a.det(), lucid.linalg.det(a)), (a.logdet(), lucid.logdet(a)),
        (a.slogdet().logabsdet, lucid.linalg.slogdet(a).logabsdet),
        (a.inverse(), lucid.linalg.inv(a)), (a.pinverse(), lucid.linalg.pinv(a)),
        (a.matrix_power(3), a @ a @ a), (a.matrix_exp(), lucid.linalg.matrix_exp(a)),
        (a.svd().V, lucid.linalg.svd(a).Vh.mT), (a.qr().R, lucid.linalg.qr(a).R),
        (s.cholesky(upper=True), lucid.linalg.cholesky(s).mT),
        (b.cholesky_solve(s.cholesky()), lucid.linalg.solve(s, b)),
    ]  # fmt: skip
    for got, want in pairs:
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-10, atol=1e-12)


def test_shape_changing_inplace_methods() -> None:
    base = lucid.arange(6.0)
    x = base.reshape(2, 3)
    assert x.unsqueeze_(0) is x and x.shape == (1, 2, 3)
    assert x.squeeze_().shape == (2, 3) and x.t_().shape == (3, 2)
    x[0, 1] = 100.0  # still a view of base: writes through as in torch
    assert base.tolist() == [0.0, 1.0, 2.0, 100.0, 4.0, 5.0]
    assert x.transpose_(0, 1).shape == (2, 3) and x.swapdims_(0, 1).swapaxes_(1, 0).shape == (2, 3)
    w = lucid.zeros(2, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match="out-of-place t"):
        w.t_()


def test_unravel_index_and_predicates() -> None:
    rows, cols = lucid.unravel_index(lucid.tensor([4, -1, 7]), (2, 4))
    assert rows.tolist() == [1, 1, 1] and cols.tolist() == [0, 3, 3]
    with pytest.raises(RuntimeError, match="must be in range"):
        lucid.unravel_index(lucid.tensor([8]), (2, 4))
    x = lucid.zeros(2, 3)
    assert lucid.is_tensor(x) and not lucid.is_tensor([1.0]) and lucid.numel(x) == 6
    assert lucid.is_floating_point(x) and not lucid.is_complex(x)
    assert lucid.is_same_size(x, lucid.ones(2, 3)) and not lucid.is_same_size(x, lucid.ones(3))
    assert lucid.is_nonzero(lucid.tensor([2])) and not lucid.is_nonzero(lucid.tensor(0.0))
    with pytest.raises(RuntimeError, match="more than one value"):
        lucid.is_nonzero(x)
    assert lucid.result_type(lucid.tensor([1, 2]), 2.5) is lucid.float32
    assert lucid.result_type(lucid.tensor([1, 2]), lucid.tensor(1.0)) is lucid.float32
    assert lucid.can_cast(lucid.int64, lucid.float16)
    assert not lucid.can_cast(lucid.float32, lucid.int32)


def test_tensor_surface_methods() -> None:
    x = lucid.zeros(7, 3)
    x.fill_diagonal_(1.0, wrap=True)
    assert x.sum().item() == 6.0 and x[4, 0].item() == 1.0 and x[3].sum().item() == 0.0
    assert lucid.zeros(2, 2, 2).fill_diagonal_(5.0).sum().item() == 10.0
    z = lucid.arange(6.0).reshape(2, 3)
    assert z.stride() == (3, 1) and z.t().stride() == (1, 3) and z.stride(0) == 3
    assert z.is_contiguous() and not z.t().is_contiguous()
    assert (z.nbytes, z.itemsize, z.is_cpu, z.get_device(), z.ndimension()) == (24, 4, True, -1, 2)
    assert z.is_signed() and not z.bool().is_signed()
    assert z.conj() is z and z.real is z and not z.is_conj() and z.adjoint().shape == (3, 2)
    with pytest.raises(RuntimeError, match="non-complex"):
        z.imag
    np.testing.assert_allclose((z - 2).angle().numpy(), [[np.pi, np.pi, 0], [0, 0, 0]], atol=1e-6,
                               rtol=0)  # fmt: skip
    assert [t.shape for t in z.split_with_sizes([1, 2], 1)] == [(2, 1), (2, 2)]
    assert z.char().dtype is lucid.int8 and z.share_memory_() is z
    assert lucid.tensor([1.0, 2.0]).vdot(lucid.tensor([3.0, 4.0])).item() == 11.0
    p = lucid.tensor([0.0, 1.0])
    assert p.bernoulli().tolist() == [0.0, 1.0] and p.multinomial(2, True).tolist() == [1, 1]


def test_finfo_iinfo_and_top_level_helpers() -> None:
    f = lucid.finfo(lucid.float32)
    assert (f.bits, f.eps, f.resolution, f.dtype) == (32, 2.0**-23, 1e-6, "float32")
    assert f.max == float(np.finfo(np.float32).max) and f.tiny == f.smallest_normal
    assert lucid.finfo().bits == 32 and lucid.finfo(lucid.bfloat16).eps == 2.0**-7
    i = lucid.iinfo(lucid.int16)
    assert (i.bits, i.min, i.max) == (16, -32768, 32767)
    with pytest.raises(TypeError, match="floating point"):
        lucid.finfo(lucid.int32)
    with pytest.raises(TypeError, match="integer"):
        lucid.iinfo(lucid.float32)
    arr = np.arange(3.0)
    shared = lucid.asarray(arr)
    assert np.shares_memory(shared.numpy(), arr) and not np.shares_memory(
        lucid.asarray(arr, copy=True).numpy(), arr
    )
    assert lucid.asarray([1, 2], dtype=lucid.float64, requires_grad=True).requires_grad
    assert lucid.scalar_tensor(3).dtype is lucid.float32 and lucid.scalar_tensor(3).shape == ()
    assert lucid.typename(lucid.zeros(2)) == "lucid.FloatTensor" and lucid.typename(3) == "int"

    def fn(x: lucid.Tensor) -> lucid.Tensor:
        return x * 2

    assert lucid.compile(fn).__wrapped__ is fn and lucid.compile(fn, disable=True) is fn
    assert lucid.compile(mode="max-autotune")(fn)(lucid.ones(2)).tolist() == [2.0, 2.0]
    lucid.use_deterministic_algorithms(True, warn_only=True)
    assert lucid.are_deterministic_algorithms_enabled()
    assert lucid.is_deterministic_algorithms_warn_only_enabled()
    lucid.use_deterministic_algorithms(False)
    assert not lucid.are_deterministic_algorithms_enabled()


def test_resize_keeps_row_major_elements() -> None:
    x = lucid.arange(6.0)
    assert x.resize_(2, 2) is x and x.tolist() == [[0.0, 1.0], [2.0, 3.0]]
    assert x.resize_(5).tolist() == [0.0, 1.0, 2.0, 3.0, 0.0]
    assert x.resize_as_(lucid.zeros(1, 5)).shape == (1, 5)


def test_data_ptr_storage_offset_apply_and_map() -> None:
    x = lucid.arange(6.0).reshape(2, 3)
    assert x.data_ptr() == x.detach().data_ptr() and x.storage_offset() == 0
    assert x[1].storage_offset() == 3 and x[:, 1:].storage_offset() == 1
    assert x.clone().apply_(lambda v: v * 2).tolist() == [[0.0, 2.0, 4.0], [6.0, 8.0, 10.0]]
    got = x.clone().map_(x[0], lambda a, b: a - b).tolist()
    assert got == [[0.0, 0.0, 0.0], [3.0, 3.0, 3.0]]
