"""Call forms and edge inputs from torch's OpInfo samples that lucid refused or answered
differently (issue 29's gauge, "failing samples of present ops"), one test per class of fix."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import lucid

RNG = np.random.default_rng(29)
TOL = {"rtol": 1e-6, "atol": 1e-6}


# --- Tensor.to's positional non_blocking/copy, the conversions' memory_format -----------------


def test_to_reads_positional_non_blocking_and_copy() -> None:
    x = lucid.tensor(RNG.standard_normal((2, 3)).astype(np.float32))
    y = x.to("cpu", lucid.float64, True, True)
    assert y.dtype is lucid.float64
    z = x.to(lucid.float32, False, True)  # copy=True gives a new tensor of the same dtype
    assert z is not x
    np.testing.assert_array_equal(z.numpy(), x.numpy())
    assert x.to(lucid.float32, False, False) is x
    assert x.to(x, False, True) is not x
    with pytest.raises(TypeError, match="at most 2 flags"):
        x.to(lucid.float32, True, True, True)
    with pytest.raises(TypeError, match="after a bool"):
        x.to(True, lucid.float32)


@pytest.mark.parametrize(
    "method, dtype",
    [("float", "float32"), ("double", "float64"), ("long", "int64"), ("int", "int32"),
     ("short", "int16"), ("char", "int8"), ("byte", "uint8"), ("bool", "bool"),
     ("half", "float16"), ("bfloat16", "bfloat16")],
)  # fmt: skip
def test_dtype_conversions_take_memory_format(method: str, dtype: str) -> None:
    x = lucid.tensor(RNG.standard_normal((2, 3, 4, 5)).astype(np.float32))
    y = getattr(x, method)(memory_format=lucid.channels_last)
    assert y.dtype is getattr(lucid, dtype)
    assert y.is_contiguous(memory_format=lucid.channels_last)
    assert getattr(x, method)(memory_format=lucid.preserve_format).shape == (2, 3, 4, 5)
    with pytest.raises(TypeError, match="memory_format"):
        getattr(x, method)(memory_format="channels_last")


# --- the add* BLAS ops on integer and bool tensors: torch casts beta and alpha first ----------


def test_addmv_family_keeps_integer_dtype_and_casts_the_scalars() -> None:
    i = lucid.tensor(np.array([10, 20, 30]))
    m = lucid.tensor(np.arange(6).reshape(3, 2))
    v = lucid.tensor(np.array([1, 2]))
    out = lucid.addmv(i, m, v, beta=0.2, alpha=0.6)  # both truncate to 0 as torch's do
    assert out.dtype is lucid.int64
    np.testing.assert_array_equal(out.numpy(), [0, 0, 0])
    np.testing.assert_array_equal(lucid.addmv(i, m, v, beta=2, alpha=3).numpy(), [26, 64, 102])
    b = lucid.tensor(np.arange(12).reshape(2, 3, 2))
    c = lucid.ones(2, 3, 3, dtype=lucid.int64)
    assert lucid.baddbmm(c, b, b.mT, beta=0.2, alpha=0.6).dtype is lucid.int64
    assert lucid.addbmm(c[0], b, b.mT, beta=1.5, alpha=1).dtype is lucid.int64
    f = lucid.addmv(i.double(), m.double(), v.double(), beta=0.5, alpha=0.5)
    np.testing.assert_allclose(f.numpy(), [6.0, 14.0, 22.0], rtol=TOL["rtol"], atol=TOL["atol"])


def test_addr_of_bools_is_a_logical_or() -> None:
    inp = lucid.tensor(np.array([[True, False, False], [False, False, False]]))
    v1, v2 = lucid.tensor(np.array([True, False])), lucid.tensor(np.array([False, False, True]))
    out = lucid.addr(inp, v1, v2, beta=3, alpha=2)
    assert out.dtype is lucid.bool
    np.testing.assert_array_equal(out.numpy(), [[True, False, True], [False, False, False]])
    assert not lucid.addr(inp, v1, v2, beta=0, alpha=0).numpy().any()


# --- diag_embed's dim1/dim2, atleast_Nd of a list, randint_like's keywords --------------------


def test_diag_embed_places_the_diagonal_on_dim1_and_dim2() -> None:
    x = RNG.standard_normal((2, 3))
    got = lucid.diag_embed(lucid.tensor(x), offset=1, dim1=0, dim2=2).numpy()
    assert got.shape == (4, 2, 4)
    want = np.zeros((4, 2, 4))
    for b in range(2):
        want[:, b, :] = np.diag(x[b], 1)
    np.testing.assert_allclose(got, want, rtol=TOL["rtol"], atol=TOL["atol"])
    swapped = lucid.diag_embed(lucid.tensor(x), offset=1, dim1=-1, dim2=-2).numpy()
    np.testing.assert_allclose(
        swapped, np.swapaxes(np.stack([np.diag(r, 1) for r in x]), 1, 2), rtol=0, atol=0
    )
    with pytest.raises(RuntimeError, match="cannot be identical -2, -2"):
        lucid.diag_embed(lucid.tensor(x), dim1=-2, dim2=-2)
    with pytest.raises(IndexError, match=r"range of \[-3, 2\], but got 3"):
        lucid.diag_embed(lucid.tensor(x), dim1=3, dim2=0)


def test_diag_embed_dims_gradient_float64() -> None:
    x = lucid.tensor(RNG.standard_normal((2, 3)), requires_grad=True)
    assert lucid.autograd.gradcheck(lambda t: lucid.diag_embed(t, -1, 2, 0), (x,))


@pytest.mark.parametrize("fn, shapes", [
    ("atleast_1d", [(1,), (2,), (2, 2)]), ("atleast_2d", [(1, 1), (1, 2), (2, 2)]),
    ("atleast_3d", [(1, 1, 1), (1, 2, 1), (2, 2, 1)]),
])  # fmt: skip
def test_atleast_nd_takes_a_list_or_several_tensors(fn: str, shapes: list[tuple[int, ...]]) -> None:
    ts = [lucid.ones(()), lucid.ones(2), lucid.ones(2, 2)]
    for out in (getattr(lucid, fn)(ts), getattr(lucid, fn)(*ts), getattr(lucid, fn)(tuple(ts))):
        assert isinstance(out, tuple)
        assert [t.shape for t in out] == shapes
    assert getattr(lucid, fn)(ts[0]).shape == shapes[0]
    with pytest.raises(TypeError, match="expected Tensors, got int at position 1"):
        getattr(lucid, fn)([ts[0], 3])


def test_randint_like_takes_torchs_keywords() -> None:
    t = lucid.zeros(3, 4)
    out = lucid.randint_like(t, 10, dtype=lucid.int32, device="cpu")
    assert out.shape == (3, 4) and out.dtype is lucid.int32
    assert ((out.numpy() >= 0) & (out.numpy() < 10)).all()
    g1, g2 = lucid.Generator().manual_seed(3), lucid.Generator().manual_seed(3)
    a = lucid.randint_like(t, 2, 9, generator=g1)
    b = lucid.randint_like(t, 2, 9, generator=g2)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert a.dtype is lucid.float32 and a.numpy().min() >= 2


# --- empty and 0-d inputs -------------------------------------------------------------------


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
def test_softmax_of_an_empty_tensor_is_empty(fn: str) -> None:
    x = lucid.zeros(5, 0, 0, requires_grad=True)
    out = getattr(lucid, fn)(x, -1, dtype=lucid.float64)
    assert out.shape == (5, 0, 0) and out.dtype is lucid.float64
    out.sum().backward()
    assert x.grad is not None and x.grad.shape == (5, 0, 0)


def test_cdist_broadcasts_an_empty_batch() -> None:
    a, b = lucid.zeros(0, 4, 5), lucid.zeros(3, 5)
    assert lucid.cdist(a, b).shape == (0, 4, 3)
    assert lucid.cdist(b[:1].expand(4, 5), lucid.zeros(0, 3, 5)).shape == (0, 4, 3)
    assert lucid.cdist(a, lucid.zeros(1, 3, 5)).shape == (0, 4, 3)


def test_gather_with_an_empty_index_is_empty() -> None:
    out = lucid.gather(lucid.arange(5.0), 0, lucid.zeros(2, 0, dtype=lucid.int64))
    assert out.shape == (2, 0) and out.dtype is lucid.float32


def test_index_add_on_a_0d_input_float64() -> None:
    x = lucid.tensor(1.5, dtype=lucid.float64, requires_grad=True)
    s = lucid.tensor(2.0, dtype=lucid.float64, requires_grad=True)
    idx = lucid.tensor([0])
    out = lucid.index_add(x, 0, idx, s, alpha=-1)
    assert out.shape == () and out.item() == pytest.approx(-0.5, rel=1e-12, abs=1e-12)
    assert lucid.autograd.gradcheck(lambda a, b: lucid.index_add(a, 0, idx, b, alpha=3), (x, s))


def test_masked_fill_and_masked_scatter_broadcast_input_and_mask() -> None:
    x = lucid.tensor(RNG.standard_normal(5), dtype=lucid.float64, requires_grad=True)
    mask = lucid.tensor(RNG.random((4, 5)) > 0.5)
    filled = lucid.masked_fill(x, mask, 7.0)
    np.testing.assert_allclose(
        filled.detach().numpy(),
        np.where(mask.numpy(), 7.0, x.detach().numpy()),
        rtol=TOL["rtol"],
        atol=TOL["atol"],
    )
    src = lucid.tensor(RNG.standard_normal((4, 5)), dtype=lucid.float64, requires_grad=True)
    out = lucid.masked_scatter(x, mask, src)
    want = np.broadcast_to(x.detach().numpy(), (4, 5)).copy()
    want[mask.numpy()] = src.detach().numpy().reshape(-1)[: int(mask.numpy().sum())]
    np.testing.assert_allclose(out.detach().numpy(), want, rtol=TOL["rtol"], atol=TOL["atol"])
    assert lucid.autograd.gradcheck(lambda a, b: lucid.masked_scatter(a, mask, b), (x, src))
    with pytest.raises(RuntimeError, match=r"doesn't match the broadcast shape \[4, 5\]"):
        x.detach().clone().masked_fill_(mask, 1.0)


def test_tensor_split_takes_a_0d_tensor_as_a_count() -> None:
    parts = lucid.tensor_split(lucid.zeros(5, 2), lucid.tensor(3))
    assert [p.shape[0] for p in parts] == [2, 2, 1]


def test_matmul_of_a_stack_with_an_empty_inner_dim_is_zeros() -> None:
    out = lucid.matmul(lucid.zeros(5, 5, 0), lucid.zeros(0, 5))
    assert out.shape == (5, 5, 5) and not out.numpy().any()


def test_prod_keeps_bool_dtype_and_differentiates_an_empty_dim() -> None:
    b = lucid.tensor(RNG.random((3, 4)) > 0.3)
    out = lucid.prod(b, 1, dtype=lucid.bool)
    assert out.dtype is lucid.bool
    np.testing.assert_array_equal(out.numpy(), b.numpy().all(1))
    assert lucid.prod(lucid.ones(3, dtype=lucid.int32), 0, dtype=lucid.int32).dtype is lucid.int32
    e = lucid.zeros(0, requires_grad=True)
    lucid.prod(e, 0).backward()
    assert e.grad is not None and e.grad.shape == (0,)


@pytest.mark.parity
def test_edge_inputs_match_torch() -> None:
    torch = pytest.importorskip("torch")
    x = RNG.standard_normal(5).astype(np.float32)
    m = RNG.random((4, 5)) > 0.5
    np.testing.assert_allclose(
        lucid.masked_fill(lucid.tensor(x), lucid.tensor(m), 2.0).numpy(),
        torch.masked_fill(torch.tensor(x), torch.tensor(m), 2.0).numpy(),
        rtol=TOL["rtol"], atol=TOL["atol"],
    )  # fmt: skip
    s = RNG.standard_normal((4, 5)).astype(np.float32)
    np.testing.assert_allclose(
        lucid.masked_scatter(lucid.tensor(x), lucid.tensor(m), lucid.tensor(s)).numpy(),
        torch.masked_scatter(torch.tensor(x), torch.tensor(m), torch.tensor(s)).numpy(),
        rtol=TOL["rtol"], atol=TOL["atol"],
    )  # fmt: skip
    i, mat, v = np.array([10, 20, 30]), np.arange(6).reshape(3, 2), np.array([1, 2])
    for beta, alpha in ((0.2, 0.6), (2, 3), (1.7, 2.5)):
        ours = lucid.addmv(lucid.tensor(i), lucid.tensor(mat), lucid.tensor(v), beta=beta,
                           alpha=alpha)  # fmt: skip
        theirs = torch.addmv(torch.tensor(i), torch.tensor(mat), torch.tensor(v), beta=beta,
                             alpha=alpha)  # fmt: skip
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    e = RNG.standard_normal((2, 3))
    np.testing.assert_allclose(
        lucid.diag_embed(lucid.tensor(e), 1, 0, 2).numpy(),
        torch.diag_embed(torch.tensor(e), 1, 0, 2).numpy(),
        rtol=TOL["rtol"], atol=TOL["atol"],
    )  # fmt: skip


# --- stats and creation: cov of one variable, diff(n=0), arange's integer bounds -------------


def test_cov_and_corrcoef_of_one_row_are_0d() -> None:
    x = RNG.standard_normal((1, 4))
    c = lucid.cov(lucid.tensor(x))
    assert c.shape == ()
    np.testing.assert_allclose(c.item(), np.cov(x), rtol=1e-6, atol=1e-6)
    assert lucid.corrcoef(lucid.tensor(x)).shape == ()
    assert lucid.cov(lucid.tensor(RNG.standard_normal((2, 4)))).shape == (2, 2)


def test_diff_of_order_0_is_the_input_without_prepend_or_append() -> None:
    x = lucid.tensor(RNG.standard_normal((5, 5)))
    out = lucid.diff(x, 0, 0, lucid.zeros(1, 5, dtype=lucid.float64), lucid.zeros(2, 5))
    assert out.shape == (5, 5)
    np.testing.assert_array_equal(out.numpy(), x.numpy())


@pytest.mark.parametrize("bounds, want", [
    ((0.0, -8.000001, -4.0), [0, -4]), ((1.0, 5.000001, 2.0), [1, 3]),
    ((-0.9, 2.1, 2.0), [0]), ((0.1, -7.9, -4.0), [0, -4]),
])  # fmt: skip
def test_arange_with_an_integer_dtype_truncates_its_bounds(
    bounds: tuple[float, float, float], want: list[int]
) -> None:
    out = lucid.arange(*bounds, dtype=lucid.int64)
    assert out.dtype is lucid.int64
    np.testing.assert_array_equal(out.numpy(), want)
    with pytest.raises(ValueError, match="step must be nonzero"):  # torch 2.13's class here
        lucid.arange(0, 5, 0.5, dtype=lucid.int64)


# --- linalg: lstsq's driver results, gradients torch records ---------------------------------


@pytest.mark.parametrize("driver", ["gels", "gelsy", "gelsd", "gelss", None])
@pytest.mark.parametrize("rows", [2, 3, 4])
def test_lstsq_results_follow_the_driver(driver: str | None, rows: int) -> None:
    a, b = RNG.standard_normal((rows, 3)), RNG.standard_normal((rows, 2))
    res = lucid.linalg.lstsq(lucid.tensor(a), lucid.tensor(b), driver=driver)
    x = np.linalg.lstsq(a, b, rcond=None)[0]
    np.testing.assert_allclose(res.solution.numpy(), x, rtol=1e-8, atol=1e-8)
    drv = driver or "gelsy"
    if rows > 3 and drv != "gelsy":
        np.testing.assert_allclose(
            res.residuals.numpy(), ((a @ x - b) ** 2).sum(0), rtol=TOL["rtol"], atol=TOL["atol"]
        )
    else:
        assert res.residuals.shape == (0,)
    assert res.rank.shape == ((0,) if drv == "gels" else ())
    assert res.rank.dtype is lucid.int64
    if drv in ("gelsd", "gelss"):
        np.testing.assert_allclose(
            res.singular_values.numpy(), np.linalg.svd(a)[1], rtol=TOL["rtol"], atol=TOL["atol"]
        )
    else:
        assert res.singular_values.shape == (0,)
    with pytest.raises(RuntimeError, match="should be one of"):
        lucid.linalg.lstsq(lucid.tensor(a), lucid.tensor(b), driver="gesv")


def test_piecewise_constant_results_require_grad_with_a_zero_gradient() -> None:
    x = lucid.tensor(RNG.standard_normal((3, 3)), requires_grad=True)
    for out in (
        lucid.norm(x, 0), lucid.linalg.matrix_power(x, 0), lucid.linalg.slogdet(x).sign,
        lucid.linalg.vector_norm(x[0, 0], ord=0),
    ):  # fmt: skip
        assert out.requires_grad
        (g,) = lucid.autograd.grad(out.sum(), x)
        np.testing.assert_array_equal(g.numpy(), np.zeros((3, 3)))
    assert lucid.linalg.slogdet(lucid.zeros(0, 0, requires_grad=True)).sign.requires_grad


def test_cholesky_solve_and_inverse_gradients_are_torchs_formula_float64() -> None:
    m = RNG.standard_normal((4, 4))
    low = np.linalg.cholesky(m @ m.T + 4 * np.eye(4))
    full = low + np.triu(RNG.standard_normal((4, 4)), 1)  # the ignored triangle is not zero
    b = RNG.standard_normal((4, 2))
    for upper in (False, True):
        f = full.T.copy() if upper else full
        L = lucid.tensor(f, requires_grad=True)
        B = lucid.tensor(b, requires_grad=True)
        tri = np.triu(f) if upper else np.tril(f)
        a = tri.T @ tri if upper else tri @ tri.T
        x = lucid.cholesky_solve(B, L, upper)
        np.testing.assert_allclose(x.detach().numpy(), np.linalg.solve(a, b), 1e-10, 1e-10)
        g = RNG.standard_normal((4, 2))
        gl, gb = lucid.autograd.grad(x, (L, B), lucid.tensor(g))
        xs = np.linalg.solve(a, b)
        gbx = np.linalg.solve(a, g)
        c = gbx @ xs.T
        want = -(f @ (c + c.T)) if upper else -((c + c.T) @ f)
        np.testing.assert_allclose(gl.numpy(), want, rtol=1e-8, atol=1e-10)
        np.testing.assert_allclose(gb.numpy(), gbx, rtol=1e-8, atol=1e-10)
    L = lucid.tensor(low, requires_grad=True)
    assert lucid.autograd.gradcheck(lambda t: lucid.cholesky_inverse(t.tril() + 0), (L,))


@pytest.mark.parity
def test_linalg_results_and_gradients_match_torch() -> None:
    torch = pytest.importorskip("torch")
    f = RNG.standard_normal((4, 4)) + 3 * np.eye(4)
    b = RNG.standard_normal((4, 2))
    L, B = lucid.tensor(f, requires_grad=True), lucid.tensor(b, requires_grad=True)
    tL, tB = torch.tensor(f, requires_grad=True), torch.tensor(b, requires_grad=True)
    ours = lucid.autograd.grad(lucid.cholesky_solve(B, L).sum(), (L, B))
    theirs = torch.autograd.grad(torch.cholesky_solve(tB, tL).sum(), (tL, tB))
    for o, t in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(o.numpy(), t.numpy(), rtol=1e-8, atol=1e-10)
    a = RNG.standard_normal((5, 3))
    t = torch.linalg.lstsq(torch.tensor(a), torch.tensor(a[:, :2]), driver="gelsd")
    o = lucid.linalg.lstsq(lucid.tensor(a), lucid.tensor(a[:, :2]), driver="gelsd")
    for x, y in zip(o, t, strict=True):
        np.testing.assert_allclose(x.numpy(), y.numpy(), rtol=1e-6, atol=1e-8)


# --- out= on the ops torch's error inputs call with it ---------------------------------------


def test_out_writes_the_result_and_resizes() -> None:
    a, b = lucid.ones(2, 3), lucid.zeros(1, 3)
    out = lucid.empty(0)
    got = lucid.cat([a, b], out=out)
    assert got is out and out.shape == (3, 3)
    np.testing.assert_array_equal(out.numpy(), np.concatenate([a.numpy(), b.numpy()]))
    x = lucid.tensor(RNG.standard_normal((4, 5)).astype(np.float32))
    vals, idx = lucid.empty(4), lucid.empty(4, dtype=lucid.int64)
    res = lucid.kthvalue(x, 2, 1, out=(vals, idx))
    assert res.values is vals and res.indices is idx
    np.testing.assert_array_equal(vals.numpy(), np.sort(x.numpy(), 1)[:, 1])
    mn, mx = lucid.empty(5), lucid.empty(5)
    lucid.aminmax(x, dim=0, out=(mn, mx))
    np.testing.assert_array_equal(mx.numpy(), x.numpy().max(0))
    o = lucid.empty(3)
    lucid.take(x, lucid.tensor([0, 5, 19]), out=o)
    np.testing.assert_array_equal(o.numpy(), x.numpy().reshape(-1)[[0, 5, 19]])


def test_out_refuses_what_torch_refuses() -> None:
    x = lucid.tensor(RNG.standard_normal(6).astype(np.float32))
    idx = lucid.tensor([2, 1, 0])
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype lucid.float32"):
        lucid.gather(x, 0, idx, out=lucid.empty(3, dtype=lucid.float64))
    with pytest.raises(RuntimeError, match="unsupported operation: some elements"):
        lucid.gather(x, 0, idx, out=x)
    with pytest.raises(RuntimeError, match="unsupported operation: some elements"):
        lucid.masked_select(x, x > 0, out=x[:3])
    with pytest.raises(RuntimeError, match="unsupported operation: more than one element"):
        lucid.take(x, idx, out=lucid.zeros(1).expand(3))
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        lucid.index_select(x.requires_grad_(), 0, idx, out=lucid.empty(3))
    with pytest.raises(TypeError, match="must be tuple of Tensors, not Tensor"):
        lucid.cat(lucid.ones(2), out=lucid.empty(2))
    with pytest.raises(RuntimeError, match="dim 0 appears multiple times in the list of dims"):
        lucid.amax(lucid.ones(2, 2), (0, 0))


def test_out_on_arithmetic_unary_and_matmul() -> None:
    # blitz/tensor_tutorial.py: `torch.add(x, y, out=result)` with `result = torch.empty(5, 3)`
    x = lucid.tensor(RNG.standard_normal((5, 3)).astype(np.float32))
    y = lucid.tensor(RNG.uniform(0.5, 1.5, (5, 3)).astype(np.float32))
    xn, yn = x.numpy(), y.numpy()
    for fn, ref, kw in (
        (lucid.add, xn + 2 * yn, {"alpha": 2}),
        (lucid.sub, xn - yn, {}),
        (lucid.mul, xn * yn, {}),
        (lucid.div, xn / yn, {}),
        (lucid.div, np.floor(xn / yn), {"rounding_mode": "floor"}),
    ):
        result = lucid.empty(5, 3)
        assert fn(x, y, out=result, **kw) is result
        np.testing.assert_allclose(result.numpy(), ref, rtol=1e-6, atol=1e-6)
    grown = lucid.empty(0)  # resized to the result's shape, as torch does
    assert lucid.exp(x, out=grown) is grown and grown.shape == (5, 3)
    np.testing.assert_allclose(grown.numpy(), np.exp(xn), rtol=1e-6, atol=1e-6)
    absolute = lucid.empty(5, 3)
    lucid.abs(x, out=absolute)
    np.testing.assert_allclose(absolute.numpy(), np.abs(xn), rtol=1e-6, atol=1e-6)
    prod = lucid.empty(5, 5)
    lucid.matmul(x, y.T, out=prod)
    np.testing.assert_allclose(prod.numpy(), xn @ yn.T, rtol=1e-5, atol=1e-5)
    with pytest.raises(RuntimeError, match="add\\(\\): Expected out tensor to have dtype"):
        lucid.add(x, y, out=lucid.empty(5, 3, dtype=lucid.int64))
    with pytest.raises(RuntimeError, match="unsupported operation: some elements"):
        lucid.mul(x, y, out=x[:2])
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        lucid.exp(x.clone().requires_grad_(), out=lucid.empty(5, 3))


def test_factories_write_into_out() -> None:
    # introyt/tensors_deeper_tutorial.py: `torch.rand(2, 2, out=c)` keeps `c` the same object
    c = lucid.zeros(2, 2)
    assert lucid.rand(2, 2, out=c) is c
    assert float(c.min()) >= 0.0 and float(c.max()) < 1.0 and float(c.sum()) > 0.0
    d = lucid.empty(0, dtype=lucid.float64)  # resized; the dtype is out's
    assert lucid.randn(3, out=d) is d and d.shape == (3,) and d.dtype is lucid.float64
    assert lucid.ones(2, 3, out=d) is d
    np.testing.assert_array_equal(d.numpy(), np.ones((2, 3)))
    lucid.zeros(4, out=d)
    np.testing.assert_array_equal(d.numpy(), np.zeros(4))
    with pytest.raises(RuntimeError, match=r"dtype Float does not match dtype of out parameter "
                                           r"\(Double\)"):  # fmt: skip
        lucid.rand(2, dtype=lucid.float32, out=d)
    with pytest.raises(TypeError, match="argument 'out' must be Tensor, not list"):
        lucid.zeros(2, out=[0.0, 0.0])


def test_gather_and_scatter_check_index_bounds_as_torch() -> None:
    x = lucid.tensor([[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(RuntimeError, match="index 23 is out of bounds for dimension 1 with size 2"):
        lucid.gather(x, 1, lucid.tensor([[0, 23], [1, 0]]))
    with pytest.raises(RuntimeError, match="index -1 is out of bounds for dimension 0 with size 2"):
        lucid.scatter_add(x, 0, lucid.tensor([[-1, 0]]), x)
    with pytest.raises(RuntimeError, match="same number of dimensions as self tensor"):
        lucid.scatter(lucid.zeros(3, 5, 3), 0, lucid.zeros(2, 2, dtype=lucid.int64), 1.0)
    got = lucid.take_along_dim(x, lucid.tensor([[-1], [0]]), 1)  # negatives count from the end
    np.testing.assert_array_equal(got.numpy(), [[2.0], [3.0]])


@pytest.mark.parametrize("fn", ["hsplit", "vsplit", "dsplit"])
def test_splits_refuse_a_string_with_a_type_error(fn: str) -> None:
    with pytest.raises(TypeError, match="invalid combination of arguments - got \\(Tensor, str\\)"):
        getattr(lucid, fn)(lucid.zeros(2, 2, 2), "a")


# --- torch's keyword names (the signature gauge) ---------------------------------------------


def test_ops_take_torchs_keyword_names() -> None:
    x, y = lucid.tensor([1.0, 4.0]), lucid.tensor([2.0, 2.0])
    np.testing.assert_array_equal(lucid.add(input=x, other=y, alpha=2).numpy(), [5.0, 8.0])
    np.testing.assert_array_equal(x.sub(other=y).numpy(), [-1.0, 2.0])
    np.testing.assert_array_equal(lucid.pow(x, exponent=2).numpy(), [1.0, 16.0])
    np.testing.assert_array_equal(lucid.maximum(input=x, other=y).numpy(), [2.0, 4.0])
    assert lucid.eq(x, other=y).dtype is lucid.bool
    assert lucid.matmul(input=x, other=y).item() == pytest.approx(10.0, rel=1e-6, abs=1e-6)
    assert lucid.clamp(input=x, min=2.0).numpy().min() == 2.0


def test_expand_copy_is_torchs_a_copy_of_expand() -> None:
    x = lucid.tensor([[1.0], [2.0]])
    out = lucid.expand_copy(x, [2, 3])
    np.testing.assert_array_equal(out.numpy(), [[1.0] * 3, [2.0] * 3])
    assert lucid.expand_copy(x, [-1, 2]).shape == (2, 2)
    same = lucid.expand_copy(x, [2, 1])
    assert same is not x
    same[0, 0] = 5.0
    assert x[0, 0].item() == 1.0


def test_cat_names_a_non_tensor_element() -> None:
    with pytest.raises(TypeError, match="expected Tensor as element 1 in argument 0, but got"):
        lucid.cat([lucid.ones(2), None])  # type: ignore[list-item]


def test_tensor_of_a_tensor_warns_and_copies_as_torch() -> None:
    # pytorch/tutorials' neural_style_tutorial builds `torch.tensor(mean)` of a tensor: torch
    # warns (a copy, detached); lists, arrays and numbers do not warn
    src = lucid.tensor([1.0, 2.0], requires_grad=True)
    expected = r"To copy construct from a tensor, it is recommended to use sourceTensor\.detach"
    with pytest.warns(UserWarning, match=expected):
        copy = lucid.tensor(src)
    assert not copy.requires_grad and copy.tolist() == [1.0, 2.0]
    copy.add_(1.0)
    assert src.tolist() == [1.0, 2.0]  # a copy, not a view
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lucid.tensor([1.0, 2.0]), lucid.tensor(np.ones(2)), lucid.tensor(3)
        lucid.tensor([lucid.tensor(1.0), 2.0])  # torch takes a list of 0-d tensors silently


def test_randint_requires_grad_follows_its_dtype() -> None:
    """torch refuses ``requires_grad`` for an integer result only: a float32 randint can
    require grad (found by the tutorial memory_format_tutorial.py)."""
    x = lucid.randint(1, 10, (2, 8, 4, 4), dtype=lucid.float32, requires_grad=True)
    assert x.dtype is lucid.float32 and x.requires_grad and x.is_leaf
    assert 1 <= x.min().item() and x.max().item() < 10
    x.sum().backward()
    assert x.grad is not None and x.grad.tolist() == lucid.ones_like(x).tolist()
    msg = r"^Only Tensors of floating point and complex dtype can require gradients$"
    for dtype in (None, lucid.int32):
        with pytest.raises(RuntimeError, match=msg):
            lucid.randint(1, 10, (2,), dtype=dtype, requires_grad=True)
