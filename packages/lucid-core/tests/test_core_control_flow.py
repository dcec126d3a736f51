"""Structured control flow (lucid._higher_order_ops: cond, while_loop, scan, associative_scan,
map): eager results and errors against torch 2.13, gradients by finite differences, and
lucid.cond captured by lucid.compile as one graph (both branches, merged with where)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lucid
from lucid._higher_order_ops import associative_scan, cond, map, scan, while_loop  # noqa: A004
from lucid.autograd import gradcheck
from lucid.utils._pytree import tree_flatten

RTOL, ATOL = 1e-10, 1e-12


def _data(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape)


def _lt(a: np.ndarray, grad: bool = False) -> lucid.Tensor:
    return lucid.tensor(a, dtype=lucid.float64, requires_grad=grad)


def _np(t: Any) -> Any:
    return t.detach().numpy() if hasattr(t, "detach") else t


def _close_trees(got: Any, want: Any, rtol: float = RTOL, atol: float = ATOL) -> None:
    """Same pytree structure (by leaf count and container types) and leaf values."""
    got_leaves, _ = tree_flatten(got)
    want_leaves, _ = tree_flatten(want)
    assert len(got_leaves) == len(want_leaves)
    assert _kinds(got) == _kinds(want)
    for g, w in zip(got_leaves, want_leaves, strict=True):
        if isinstance(w, int) and not hasattr(w, "shape"):
            assert g == w
        else:
            assert tuple(g.shape) == tuple(w.shape)
            np.testing.assert_allclose(_np(g), _np(w), rtol=rtol, atol=atol)


def _kinds(tree: Any) -> Any:
    if isinstance(tree, (tuple, list)):
        return (type(tree).__name__, [_kinds(v) for v in tree])
    if isinstance(tree, dict):
        return ("dict", {k: _kinds(v) for k, v in tree.items()})
    return "leaf"


# --------------------------------------------------------------------------- names


def test_module_paths_and_top_level_names() -> None:
    import importlib

    # as in torch, the package's attribute of each name is the function, not the submodule
    mods = {
        n: importlib.import_module(f"lucid._higher_order_ops.{n}")
        for n in ("associative_scan", "cond", "map", "scan", "while_loop")
    }
    m_as, m_cond, m_map, m_scan, m_wl = (mods[n] for n in sorted(mods))
    assert m_cond.cond is lucid.cond is cond
    assert m_wl.while_loop is lucid.while_loop is while_loop
    assert m_scan.scan is scan and m_as.associative_scan is associative_scan
    assert m_map.map is map
    assert "while_loop" in lucid.__all__


# --------------------------------------------------------------------------- eager, lucid only


def test_while_loop_counts_and_keeps_structure() -> None:
    x = _lt(_data(2, 3))
    i, y = while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x * 2), (lucid.tensor(0), x))
    assert int(i.item()) == 3
    np.testing.assert_allclose(y.numpy(), 8 * x.numpy(), rtol=RTOL, atol=ATOL)
    n, _ = while_loop(lambda n, x: n < 4, lambda n, x: (n + 1, x + 1), (0, x))
    assert n == 4 and isinstance(n, int)


def test_while_loop_zero_iterations_returns_tuple_of_clones() -> None:
    x = _lt(_data(3))
    out = while_loop(lambda x: x.sum() > 1e9, lambda x: (x + 1,), [x])
    assert isinstance(out, tuple) and out[0] is not x
    np.testing.assert_allclose(out[0].numpy(), x.numpy(), rtol=RTOL, atol=ATOL)


def test_while_loop_errors() -> None:
    x = lucid.ones(2)
    with pytest.raises(RuntimeError, match="carried_inputs must be a tuple or list"):
        while_loop(lambda x: x.sum() < 3, lambda x: (x * 2,), x)
    with pytest.raises(RuntimeError, match="Expect cond_fn and body_fn to be callable"):
        while_loop(1, lambda x: (x,), (x,))
    with pytest.raises(RuntimeError, match="tensor or int leaves"):
        while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x), (lucid.tensor(0), 1.5))
    with pytest.raises(RuntimeError, match="same number of outputs"):
        while_loop(lambda i, x: i < 3, lambda i, x: (i + 1,), (lucid.tensor(0), x))
    with pytest.raises(RuntimeError, match=r"same metadata(.|\n)*pair\[1\] differ in 'shape"):
        while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x.sum()), (lucid.tensor(0), x))
    with pytest.raises(RuntimeError, match=r"pair\[1\] differ in 'dtype"):
        while_loop(
            lambda i, x: i < 3, lambda i, x: (i + 1, x.double()), (lucid.tensor(0), x.float())
        )
    with pytest.raises(RuntimeError, match="boolean scalar tensor or a boolean"):
        while_loop(lambda i, x: i.float(), lambda i, x: (i + 1, x), (lucid.tensor(0), x))
    with pytest.raises(RuntimeError, match="boolean scalar tensor or a boolean"):
        while_loop(lambda i, x: (i < 2).reshape(1), lambda i, x: (i + 1, x), (lucid.tensor(0), x))


def test_scan_errors() -> None:
    x = lucid.arange(6.0).reshape(2, 3)
    with pytest.raises(
        RuntimeError, match=r"Expect combine_fn to return a tuple \(next_carry, y\)"
    ):
        scan(lambda c, x: c + x, lucid.zeros(3), x)
    with pytest.raises(
        RuntimeError, match=r"Expect combine_fn to return a tuple \(next_carry, y\)"
    ):
        scan(lambda c, x: (c + x, c, c), lucid.zeros(3), x)
    with pytest.raises(RuntimeError, match=r"init and carry to have same metadata"):
        scan(lambda c, x: (c.sum(), c.clone()), lucid.zeros(3), x)
    with pytest.raises(RuntimeError, match=r"init and carry to have same number of outputs"):
        scan(lambda c, x: ((c + x, c + x), c.clone()), lucid.zeros(3), x)
    with pytest.raises(RuntimeError, match="y leaves to be Tensors"):
        scan(lambda c, x: (c + x, 1), lucid.zeros(3), x)


def test_associative_scan_and_map_errors() -> None:
    x = lucid.arange(6.0).reshape(2, 3)
    with pytest.raises(IndexError, match="at least 1 xs leaf"):
        associative_scan(lambda a, b: a + b, [], 0, combine_mode="generic")
    with pytest.raises(RuntimeError, match="must match the pytree of xs"):
        associative_scan(lambda a, b: a[0] + b[0], (x, x + 1), 0, combine_mode="generic")
    with pytest.raises(RuntimeError, match="must be a Tensor of shape"):
        associative_scan(lambda a, b: a.sum(), x, 0, combine_mode="generic")
    with pytest.raises(IndexError, match="no tensor leaves"):
        map(lambda a: a, [])
    with pytest.raises(IndexError, match="leading dimension"):
        map(lambda a: a, lucid.tensor(1.0))
    with pytest.raises(RuntimeError, match="Cannot stack"):
        map(lambda a: 1, x)
    with pytest.raises(RuntimeError, match="same pytree structure"):
        map(lambda a: (a,) if float(a.sum().item()) < 5 else [a], x)


def test_cond_eager_is_unchanged() -> None:
    assert lucid.cond(lucid.tensor(True), lambda a: a + 1, lambda a: a - 1, (1,)) == 2
    assert lucid.cond(False, lambda: "t", lambda: "f") == "f"
    # eagerly only the branch taken runs: mismatched branches are no error
    x = lucid.ones(2, 3)
    assert lucid.cond(lucid.tensor([True]), lambda x: x + 1, lambda x: x.sum(), (x,)).shape == (
        2,
        3,
    )
    with pytest.raises(RuntimeError, match="single-element"):
        lucid.cond(lucid.tensor([True, False]), lambda x: x, lambda x: x, (x,))


# --------------------------------------------------------------------------- gradients


def test_gradcheck_while_loop() -> None:
    x = _lt(_data(2, 3, seed=1), grad=True)
    w = _lt(_data(3, 3, seed=2) * 0.5, grad=True)

    def f(x: lucid.Tensor, w: lucid.Tensor) -> lucid.Tensor:
        return while_loop(lambda i, h: i < 3, lambda i, h: (i + 1, (h @ w).tanh() + x), (0, x))[1]

    assert gradcheck(f, (x, w), eps=1e-6, atol=1e-6, rtol=1e-5)


def test_gradcheck_scan() -> None:
    h0 = _lt(_data(3, seed=3), grad=True)
    xs = _lt(_data(4, 2, 3, seed=4), grad=True)

    def f(h0: lucid.Tensor, xs: lucid.Tensor) -> tuple[lucid.Tensor, lucid.Tensor]:
        def step(h: Any, x: Any) -> tuple[Any, Any]:
            nh = (h * x[0] + x[1]).sin()
            return nh, nh * 2

        return scan(step, h0, xs, reverse=True)

    assert gradcheck(f, (h0, xs), eps=1e-6, atol=1e-6, rtol=1e-5)


def test_gradcheck_associative_scan_and_map() -> None:
    a = _lt(_data(2, 5, seed=5), grad=True)
    b = _lt(_data(2, 5, seed=6), grad=True)

    def lin(a: lucid.Tensor, b: lucid.Tensor) -> Any:
        return associative_scan(
            lambda p, q: (p[0] * q[0], p[1] * q[0] + q[1]), (a, b), 1, combine_mode="generic"
        )

    assert gradcheck(lin, (a, b), eps=1e-6, atol=1e-6, rtol=1e-5)

    def mapped(a: lucid.Tensor, b: lucid.Tensor) -> Any:
        return map(lambda row, s: {"u": (row * s).exp(), "v": row.sum() * s}, a, b[0, 0])

    out = mapped(a, b)
    assert set(out) == {"u", "v"} and tuple(out["v"].shape) == (2,)
    assert gradcheck(
        lambda a, b: tuple(mapped(a, b).values()), (a, b), eps=1e-6, atol=1e-6, rtol=1e-5
    )


@pytest.mark.parametrize("flag", [True, False])
def test_gradcheck_cond_both_branches(flag: bool) -> None:
    x = _lt(_data(3, seed=7), grad=True)

    def f(x: lucid.Tensor) -> lucid.Tensor:
        return lucid.cond(lucid.tensor(flag), lambda x: x.sin() * x, lambda x: x.exp(), (x,))

    assert gradcheck(f, (x,), eps=1e-6, atol=1e-6, rtol=1e-5)


# --------------------------------------------------------------------------- cond under compile


def _branchy(p: lucid.Tensor, x: lucid.Tensor, w: lucid.Tensor) -> lucid.Tensor:
    out = lucid.cond(
        p,
        lambda x, w: {"a": (x @ w).tanh(), "b": x.sum()},
        lambda x, w: {"a": (x * 2) @ w, "b": x.prod()},
        (x, w),
    )
    return out["a"].sum() + out["b"]


def test_compiled_cond_is_one_graph_and_replays_pick_the_branch() -> None:
    lucid.manual_seed(0)
    w = _lt(_data(3, 2, seed=8), grad=True)
    compiled = lucid.compile(_branchy, fullgraph=True)
    rng = np.random.default_rng(9)
    for flag in [True, False, False, True, False, True]:
        x = _lt(rng.standard_normal((4, 3)), grad=True)
        p = lucid.tensor(flag)
        got = compiled(p, x, w)
        gx, gw = lucid.autograd.grad(got, (x, w))
        want = _branchy(p, x, w)
        wx, ww = lucid.autograd.grad(want, (x, w))
        np.testing.assert_allclose(
            got.detach().numpy(), want.detach().numpy(), rtol=1e-12, atol=1e-12
        )
        np.testing.assert_allclose(gx.numpy(), wx.numpy(), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(gw.numpy(), ww.numpy(), rtol=1e-12, atol=1e-12)
    # a float predicate and a (1,)-shaped one select as its truth value does
    x = _lt(_data(4, 3, seed=10))
    for p in (lucid.tensor(0.0), lucid.tensor([2.5])):
        np.testing.assert_allclose(
            compiled(p, x, w).detach().numpy(),
            _branchy(p, x, w).detach().numpy(),
            rtol=1e-12,
            atol=1e-12,
        )


def test_explain_shows_no_graph_break() -> None:
    x, w = _lt(_data(4, 3, seed=11)), _lt(_data(3, 2, seed=12))
    report = lucid.compiler.explain(_branchy)(lucid.tensor(True), x, w)
    assert report.graph_break_count == 0
    assert report.graph_count == 1


def test_compiled_cond_runs_the_branch_not_taken() -> None:
    """The documented caveat: both branches run in a compiled graph, so a NaN made by the
    branch not taken (sqrt's gradient at 0 is inf, times where's zero) reaches the gradient."""

    def f(p: lucid.Tensor, x: lucid.Tensor) -> lucid.Tensor:
        return lucid.cond(p, lambda x: x * 3, lambda x: x.sqrt(), (x,)).sum()

    x = lucid.zeros(2, dtype=lucid.float64, requires_grad=True)
    p = lucid.tensor(True)
    (eager,) = lucid.autograd.grad(f(p, x), (x,))
    np.testing.assert_allclose(eager.numpy(), [3.0, 3.0], rtol=1e-12, atol=1e-12)
    compiled = lucid.compile(f, fullgraph=True)
    got = compiled(p, x)
    np.testing.assert_allclose(got.detach().numpy(), 0.0, rtol=1e-12, atol=1e-12)
    (g,) = lucid.autograd.grad(got, (x,))
    assert np.isnan(g.numpy()).all()


def test_compiled_cond_checks_the_branches_match() -> None:
    x = lucid.ones(2, 3)
    cases = [
        (lambda x: (x + 1, x), lambda x: x - 1, "Unmatched output spec"),
        (lambda x: x + 1, lambda x: x.sum(), "expected same dim"),
        (lambda x: x + 1, lambda x: x[:1], "expected same shape"),
        (lambda x: x + 1, lambda x: x.double(), "expected same dtype"),
    ]
    for t, f, msg in cases:
        fn = lucid.compile(lambda p, x, t=t, f=f: lucid.cond(p, t, f, (x,)), fullgraph=True)
        with pytest.raises(RuntimeError, match=msg):
            fn(lucid.tensor(True), x)


# --------------------------------------------------------------------------- parity with torch


def _torch() -> Any:
    return pytest.importorskip("torch")


def _hops() -> Any:
    torch = _torch()
    from torch._higher_order_ops.associative_scan import associative_scan as t_as
    from torch._higher_order_ops.map import map as t_map
    from torch._higher_order_ops.scan import scan as t_scan
    from torch._higher_order_ops.while_loop import while_loop as t_wl

    return torch, t_wl, t_scan, t_as, t_map


def _pair(*shape: int, seed: int = 0) -> tuple[lucid.Tensor, Any]:
    torch = _torch()
    a = _data(*shape, seed=seed)
    return _lt(a), torch.tensor(a, dtype=torch.float64)


@pytest.mark.parity
def test_parity_while_loop() -> None:
    torch, t_wl, _, _, _ = _hops()
    x, tx = _pair(2, 3)
    cases: list[tuple[Any, Any, Any]] = [
        (lambda L: lambda i, x: i < 3, lambda L: lambda i, x: (i + 1, x.sin() * 2), "tensor"),
        (lambda L: lambda i, x: 2 * i < 5, lambda L: lambda i, x: (i + 1, x + i), "int"),
        (lambda L: lambda i, x: i < 0, lambda L: lambda i, x: (i + 1, x * 2), "tensor"),
        (lambda L: lambda i, x: i < 2, lambda L: lambda i, x: [i + 1, x.cos()], "tensor"),
    ]
    for cond_of, body_of, kind in cases:
        li = lucid.tensor(0) if kind == "tensor" else 0
        ti = torch.tensor(0) if kind == "tensor" else 0
        got = while_loop(cond_of(lucid), body_of(lucid), (li, x))
        want = t_wl(cond_of(torch), body_of(torch), (ti, tx))
        _close_trees(got, want)
    got = while_loop(
        lambda d: d["i"] < 2,
        lambda d: ({"i": d["i"] + 1, "x": d["x"].exp()},),
        ({"i": lucid.tensor(0), "x": x},),
    )
    want = t_wl(
        lambda d: d["i"] < 2,
        lambda d: ({"i": d["i"] + 1, "x": d["x"].exp()},),
        ({"i": torch.tensor(0), "x": tx},),
    )
    _close_trees(got, want)


@pytest.mark.parity
def test_parity_scan_layouts() -> None:
    torch, _, t_scan, _, _ = _hops()
    x, tx = _pair(4, 3, seed=1)

    def step(c: Any, x: Any) -> Any:
        nc = c * 0.5 + x.sin()
        return nc, (nc * 2).clone()

    def step_scalar_y(c: Any, x: Any) -> Any:
        nc = c + x
        return nc, nc.sum()

    for kwargs in [{}, {"reverse": True}, {"dim": 1}, {"dim": -1, "reverse": True}]:
        n = 4 if kwargs.get("dim", 0) in (1, -1) else 3
        got = scan(step, lucid.zeros(n, dtype=lucid.float64), x, **kwargs)
        want = t_scan(step, torch.zeros(n, dtype=torch.float64), tx, **kwargs)
        _close_trees(got, want)
        got = scan(step_scalar_y, lucid.zeros(n, dtype=lucid.float64), x, **kwargs)
        want = t_scan(step_scalar_y, torch.zeros(n, dtype=torch.float64), tx, **kwargs)
        _close_trees(got, want)

    def tree_step(c: Any, xs: Any) -> Any:
        return {"a": c["a"] + xs[0]}, (xs[1] * 2, c["a"].clone())

    got = scan(tree_step, {"a": lucid.zeros(3, dtype=lucid.float64)}, (x, x + 1))
    want = t_scan(tree_step, {"a": torch.zeros(3, dtype=torch.float64)}, (tx, tx + 1))
    _close_trees(got, want)
    # no xs leaves: (init, [])
    init = lucid.ones(2)
    got = scan(step, init, [])
    assert got[0] is init and got[1] == []


@pytest.mark.parity
def test_parity_scan_gradients() -> None:
    torch, _, t_scan, _, _ = _hops()
    a = _data(5, 3, seed=2)
    x, tx = _lt(a, grad=True), torch.tensor(a, dtype=torch.float64, requires_grad=True)
    h, th = _lt(_data(3, seed=3), grad=True), torch.tensor(_data(3, seed=3), requires_grad=True)

    def step(c: Any, x: Any) -> Any:
        nc = (c * x).tanh() + x
        return nc, (nc**2).clone()

    c1, y1 = scan(step, h, x, reverse=True)
    c2, y2 = t_scan(step, th, tx, reverse=True)
    g = lucid.autograd.grad(c1.sum() + y1.sum(), (x, h))
    tg = torch.autograd.grad(c2.sum() + y2.sum(), (tx, th))
    for gl, gt in zip(g, tg, strict=True):
        np.testing.assert_allclose(gl.numpy(), gt.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parity
def test_parity_associative_scan() -> None:
    torch, _, _, t_as, _ = _hops()
    x, tx = _pair(3, 5, seed=4)
    for dim, reverse in [(0, False), (1, False), (1, True), (-1, True)]:
        got = associative_scan(lambda a, b: a + b, x, dim, reverse=reverse, combine_mode="generic")
        want = t_as(lambda a, b: a + b, tx, dim, reverse=reverse, combine_mode="generic")
        _close_trees(got, want, rtol=1e-10, atol=1e-10)

    def lin(p: Any, q: Any) -> Any:
        return (p[0] * q[0], p[1] * q[0] + q[1])

    y, ty = _pair(3, 5, seed=5)
    got = associative_scan(lin, (x, y), 1, combine_mode="generic")
    want = t_as(lin, (tx, ty), 1, combine_mode="generic")
    _close_trees(got, want, rtol=1e-10, atol=1e-10)
    # matrix products: combine_fn sees one (2, 2) slice per element, as torch's vmap gives it
    m, tm = _pair(6, 2, 2, seed=6)
    got = associative_scan(lambda a, b: a @ b, m, 0, reverse=True, combine_mode="generic")
    want = t_as(lambda a, b: a @ b, tm, 0, reverse=True, combine_mode="generic")
    _close_trees(got, want, rtol=1e-10, atol=1e-10)
    # "pointwise" on CPU tensors is torch's ValueError
    for fn, arg in [(associative_scan, x), (t_as, tx)]:
        with pytest.raises(ValueError, match="need to be on CUDA or XPU"):
            fn(lambda a, b: a + b, arg, 0)


@pytest.mark.parity
def test_parity_map() -> None:
    torch, _, _, _, t_map = _hops()
    x, tx = _pair(4, 3, seed=7)
    b, tb = _pair(3, seed=8)
    _close_trees(map(lambda r, b: r * b + 1, x, b), t_map(lambda r, b: r * b + 1, tx, tb))
    got = map(lambda d: {"s": d["a"].sum(), "t": (d["a"] + d["b"]).exp()}, {"a": x, "b": x * 2})
    want = t_map(
        lambda d: {"s": d["a"].sum(), "t": (d["a"] + d["b"]).exp()}, {"a": tx, "b": tx * 2}
    )
    _close_trees(got, want)
    got = map(lambda p: (p[0] * 2, p[1].sum()), (x, x.T.contiguous()[:, :4].T))
    want = t_map(lambda p: (p[0] * 2, p[1].sum()), (tx, tx.T.contiguous()[:, :4].T))
    _close_trees(got, want)


@pytest.mark.parity
def test_parity_cond_eager() -> None:
    torch = _torch()
    x, tx = _pair(2, 3, seed=9)
    for flag in (True, False):
        got = lucid.cond(
            lucid.tensor(flag), lambda x: (x.sin(), x * 2), lambda x: (x.cos(), x + 1), (x,)
        )
        want = torch.cond(
            torch.tensor(flag), lambda x: (x.sin(), x * 2), lambda x: (x.cos(), x + 1), (tx,)
        )
        _close_trees(tuple(got), tuple(want))


def _same_error(lucid_call: Any, torch_call: Any) -> None:
    with pytest.raises(Exception) as want:  # noqa: PT011  (torch's type is what we compare)
        torch_call()
    with pytest.raises(type(want.value)) as got:
        lucid_call()
    want_msg = str(want.value).replace("torch.Size", "lucid.Size")
    assert str(got.value).split("[")[0] == want_msg.split("[")[0], (got.value, want.value)


@pytest.mark.parity
def test_parity_errors() -> None:
    torch, t_wl, t_scan, t_as, t_map = _hops()
    x, tx = _pair(2, 3)
    z, tz = lucid.zeros(3, dtype=lucid.float64), torch.zeros(3, dtype=torch.float64)
    e, te = lucid.zeros(0, 3), torch.zeros(0, 3)

    def add(a: Any, b: Any) -> Any:
        return a + b

    def pair(c: Any, x: Any) -> Any:
        return c + x, c.clone()

    cases = [
        (lambda: while_loop(1, add, (x,)), lambda: t_wl(1, add, (tx,))),
        (lambda: scan(1, z, x), lambda: t_scan(1, tz, tx)),
        (lambda: scan(pair, 1.0, x), lambda: t_scan(pair, 1.0, tx)),
        (lambda: scan(pair, (), x), lambda: t_scan(pair, (), tx)),
        (lambda: scan(pair, z, e), lambda: t_scan(pair, tz, te)),
        (lambda: scan(pair, z, x, dim=5), lambda: t_scan(pair, tz, tx, dim=5)),
        (lambda: scan(pair, z, x, reverse=1), lambda: t_scan(pair, tz, tx, reverse=1)),
        (lambda: scan(pair, z, x, dim=0.0), lambda: t_scan(pair, tz, tx, dim=0.0)),
        (lambda: scan(pair, z, [x, 1.0]), lambda: t_scan(pair, tz, [tx, 1.0])),
        (
            lambda: associative_scan(add, x, 0, combine_mode="foo"),
            lambda: t_as(add, tx, 0, combine_mode="foo"),
        ),
        (lambda: associative_scan(add, x, 3), lambda: t_as(add, tx, 3)),
        (
            lambda: associative_scan(1, x, 0, combine_mode="generic"),
            lambda: t_as(1, tx, 0, combine_mode="generic"),
        ),
        (
            lambda: associative_scan(add, e, 0, combine_mode="generic"),
            lambda: t_as(add, te, 0, combine_mode="generic"),
        ),
        (
            lambda: associative_scan(add, (x, 1.0), 0, combine_mode="generic"),
            lambda: t_as(add, (tx, 1.0), 0, combine_mode="generic"),
        ),
        (
            lambda: associative_scan(add, x, 0, reverse=1, combine_mode="generic"),
            lambda: t_as(add, tx, 0, reverse=1, combine_mode="generic"),
        ),
        (lambda: map(lambda a: a, e), lambda: t_map(lambda a: a, te)),
        (lambda: map(add, (x, lucid.ones(3, 3))), lambda: t_map(add, (tx, torch.ones(3, 3)))),
        (lambda: map(lambda a: a, [x, 1]), lambda: t_map(lambda a: a, [tx, 1])),
    ]
    for lucid_call, torch_call in cases:
        _same_error(lucid_call, torch_call)
