"""``lucid._foreach_*`` against torch's ``torch._foreach_*``: every function torch has, each of
its overloads (a number, a list of numbers, a list of tensors, a 0-d tensor), in place and out
of place, the results' values, dtypes and container types, gradients, and torch's errors.

Found by lucidrains' ema-pytorch (``use_foreach=True``: ``_foreach_lerp_``/``_foreach_copy_``)
and lion-pytorch's foreach Lion (``_foreach_mul_``, ``_foreach_lerp_``, ``_foreach_sign_``,
``_foreach_add_(params, updates, alpha=-lr)``), which stopped at their ``hasattr`` checks.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lucid

pytestmark = pytest.mark.parity
torch = pytest.importorskip("torch")

SHAPES = [(3,), (2, 4), ()]


def _arrays(seed: int = 0, positive: bool = False) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    out = []
    for s in SHAPES:
        a = rng.standard_normal(s).astype(np.float32)
        out.append(np.abs(a) * 0.4 + 0.3 if positive else a)
    return out


def _lists(seed: int = 0, positive: bool = False) -> tuple[list[Any], list[Any]]:
    arrays = _arrays(seed, positive)
    return [lucid.tensor(a) for a in arrays], [torch.tensor(a) for a in arrays]


def _close(ours: Any, theirs: Any) -> None:
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs, strict=True):
        assert str(o.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        assert tuple(o.shape) == tuple(t.shape)
        np.testing.assert_allclose(
            np.asarray(o.detach().numpy(), dtype=np.float64),
            t.detach().numpy().astype(np.float64),
            rtol=1e-5,
            atol=1e-6,
        )


UNARY = [
    n[len("_foreach_") :]
    for n in dir(torch)
    if n.startswith("_foreach_")
    and not n.endswith("_")
    and n[len("_foreach_") :]
    in {
        "abs", "acos", "asin", "atan", "ceil", "cos", "cosh", "erf", "erfc", "exp", "expm1",
        "floor", "frac", "lgamma", "log", "log10", "log1p", "log2", "neg", "reciprocal",
        "round", "rsqrt", "sigmoid", "sign", "sin", "sinh", "sqrt", "tan", "tanh", "trunc",
    }
]  # fmt: skip


def test_every_torch_foreach_function_exists() -> None:
    names = sorted(n for n in dir(torch) if n.startswith("_foreach_"))
    missing = [n for n in names if not hasattr(lucid, n)]
    assert missing == []
    assert lucid._foreach_add.__module__ == "lucid"
    assert lucid._foreach_lerp_.__doc__


@pytest.mark.parametrize("op", UNARY)
def test_unary(op: str) -> None:
    positive = op in {"acos", "asin", "log", "log10", "log1p", "log2", "rsqrt", "sqrt"}
    ours, theirs = _lists(1, positive)
    out_l = getattr(lucid, f"_foreach_{op}")(ours)
    out_t = getattr(torch, f"_foreach_{op}")(theirs)
    assert isinstance(out_l, tuple) and isinstance(out_t, tuple)
    _close(out_l, out_t)
    ret = getattr(lucid, f"_foreach_{op}_")(ours)
    getattr(torch, f"_foreach_{op}_")(theirs)
    assert ret is ours
    _close(ours, theirs)


def _second(kind: str, lib: Any, seed: int = 2) -> Any:
    if kind == "scalar":
        return 1.5
    if kind == "scalarlist":
        return [0.5, -2.0, 3.0]
    if kind == "tensor0d":
        return lib.tensor(1.25)
    arrays = _arrays(seed, positive=True)
    return [lib.tensor(a) for a in arrays]


BINARY = [
    ("add", "scalar"), ("add", "scalarlist"), ("add", "list"), ("add", "tensor0d"),
    ("sub", "scalar"), ("sub", "scalarlist"), ("sub", "list"),
    ("mul", "scalar"), ("mul", "scalarlist"), ("mul", "list"), ("mul", "tensor0d"),
    ("div", "scalar"), ("div", "scalarlist"), ("div", "list"), ("div", "tensor0d"),
    ("clamp_max", "scalar"), ("clamp_max", "scalarlist"), ("clamp_max", "list"),
    ("clamp_min", "scalar"), ("clamp_min", "scalarlist"), ("clamp_min", "list"),
    ("maximum", "scalar"), ("maximum", "scalarlist"), ("maximum", "list"),
    ("minimum", "scalar"), ("minimum", "scalarlist"), ("minimum", "list"),
    ("pow", "scalar"), ("pow", "scalarlist"), ("pow", "list"),
]  # fmt: skip


@pytest.mark.parametrize(("op", "kind"), BINARY)
def test_binary(op: str, kind: str) -> None:
    positive = op == "pow"
    ours, theirs = _lists(3, positive)
    _close(
        getattr(lucid, f"_foreach_{op}")(ours, _second(kind, lucid)),
        getattr(torch, f"_foreach_{op}")(theirs, _second(kind, torch)),
    )
    ret = getattr(lucid, f"_foreach_{op}_")(ours, _second(kind, lucid))
    getattr(torch, f"_foreach_{op}_")(theirs, _second(kind, torch))
    assert ret is ours
    _close(ours, theirs)


@pytest.mark.parametrize(("op", "kind"), [("add", "list"), ("add", "tensor0d"), ("sub", "list")])
def test_alpha(op: str, kind: str) -> None:
    ours, theirs = _lists(4)
    _close(
        getattr(lucid, f"_foreach_{op}")(ours, _second(kind, lucid), alpha=-0.5),
        getattr(torch, f"_foreach_{op}")(theirs, _second(kind, torch), alpha=-0.5),
    )
    getattr(lucid, f"_foreach_{op}_")(ours, _second(kind, lucid), alpha=3)
    getattr(torch, f"_foreach_{op}_")(theirs, _second(kind, torch), alpha=3)
    _close(ours, theirs)


def test_pow_number_base() -> None:
    ours, theirs = _lists(5)
    _close(lucid._foreach_pow(2.0, ours), torch._foreach_pow(2.0, theirs))


@pytest.mark.parametrize("op", ["addcmul", "addcdiv"])
@pytest.mark.parametrize("kind", ["default", "scalar", "scalarlist", "tensor"])
def test_addcmul_addcdiv(op: str, kind: str) -> None:
    ours, theirs = _lists(6)
    a_l, a_t = _lists(7)
    b_l, b_t = _lists(8, positive=True)
    values: dict[str, Any] = {
        "scalar": (0.5, 0.5),
        "scalarlist": ([1.0, -2.0, 0.25], [1.0, -2.0, 0.25]),
        "tensor": (lucid.tensor([1.0, -2.0, 0.25]), torch.tensor([1.0, -2.0, 0.25])),
    }
    args_l: tuple[Any, ...] = (ours, a_l, b_l)
    args_t: tuple[Any, ...] = (theirs, a_t, b_t)
    if kind != "default":
        args_l += (values[kind][0],)
        args_t += (values[kind][1],)
    _close(getattr(lucid, f"_foreach_{op}")(*args_l), getattr(torch, f"_foreach_{op}")(*args_t))
    getattr(lucid, f"_foreach_{op}_")(*args_l)
    getattr(torch, f"_foreach_{op}_")(*args_t)
    _close(ours, theirs)


@pytest.mark.parametrize("kind", ["scalar", "scalarlist", "list"])
def test_lerp(kind: str) -> None:
    ours, theirs = _lists(9)
    end_l, end_t = _lists(10)
    w: dict[str, tuple[Any, Any]] = {
        "scalar": (0.3, 0.3),
        "scalarlist": ([0.1, 0.5, 0.9], [0.1, 0.5, 0.9]),
        "list": (_lists(11, positive=True)[0], _lists(11, positive=True)[1]),
    }
    _close(
        lucid._foreach_lerp(ours, end_l, w[kind][0]), torch._foreach_lerp(theirs, end_t, w[kind][1])
    )
    assert lucid._foreach_lerp_(ours, end_l, w[kind][0]) is ours
    torch._foreach_lerp_(theirs, end_t, w[kind][1])
    _close(ours, theirs)


@pytest.mark.parametrize("ord_", [2, 1, 3.0, 0, float("inf")])
def test_norm_powsum(ord_: float) -> None:
    ours, theirs = _lists(12)
    _close(lucid._foreach_norm(ours, ord_), torch._foreach_norm(theirs, ord_))
    _close(lucid._foreach_powsum(ours, ord_), torch._foreach_powsum(theirs, ord_))
    _close(
        lucid._foreach_norm(ours, ord_, dtype=lucid.float64),
        torch._foreach_norm(theirs, ord_, dtype=torch.float64),
    )


def test_max_mm_copy_clone_zero() -> None:
    ours, theirs = _lists(13)
    ints_l = [lucid.tensor([[4, 5]]), lucid.tensor([1, -2])]
    ints_t = [torch.tensor([[4, 5]]), torch.tensor([1, -2])]
    _close(lucid._foreach_max(ours), torch._foreach_max(theirs))
    _close(lucid._foreach_max(ints_l), torch._foreach_max(ints_t))
    m_l = [lucid.ones(2, 3), lucid.full((1, 2), 2.0)]
    n_l = [lucid.ones(3, 1), lucid.ones(2, 2)]
    m_t = [torch.ones(2, 3), torch.full((1, 2), 2.0)]
    n_t = [torch.ones(3, 1), torch.ones(2, 2)]
    _close(lucid._foreach_mm(m_l, n_l), torch._foreach_mm(m_t, n_t))
    clones = lucid._foreach_clone(ours)
    assert all(c is not t for c, t in zip(clones, ours, strict=True))
    _close(clones, theirs)
    dst_l = [lucid.zeros(3), lucid.zeros(2, 4, dtype=lucid.float64), lucid.zeros(())]
    dst_t = [torch.zeros(3), torch.zeros(2, 4, dtype=torch.float64), torch.zeros(())]
    src_l = [lucid.tensor([1, 2, 3]), lucid.ones(4), lucid.tensor(7.0)]
    src_t = [torch.tensor([1, 2, 3]), torch.ones(4), torch.tensor(7.0)]
    assert lucid._foreach_copy_(dst_l, src_l) is dst_l
    torch._foreach_copy_(dst_t, src_t)
    _close(dst_l, dst_t)
    lucid._foreach_zero_(dst_l)
    assert all(float(t.abs().sum()) == 0.0 for t in dst_l)


def test_tuple_in_place_returns_it() -> None:
    ours = (lucid.ones(2), lucid.ones(3))
    assert lucid._foreach_mul_(ours, 2.0) is ours
    assert isinstance(lucid._foreach_mul(list(ours), 2.0), tuple)


def test_gradients() -> None:
    arrays = _arrays(14)
    xs_l = [lucid.tensor(a, requires_grad=True) for a in arrays]
    xs_t = [torch.tensor(a, requires_grad=True) for a in arrays]
    for lib, xs in ((lucid, xs_l), (torch, xs_t)):
        ys = lib._foreach_mul(xs, [2.0, -1.0, 0.5])
        zs = lib._foreach_addcmul(ys, xs, xs, 0.5)
        ws = lib._foreach_lerp(zs, lib._foreach_exp(xs), 0.25)
        sum(w.sum() for w in lib._foreach_norm(ws)).backward()
    _close([x.grad for x in xs_l], [x.grad for x in xs_t])


def _error(fn: Any) -> tuple[type, str]:
    try:
        fn()
    except (RuntimeError, TypeError) as e:
        return type(e), str(e).split("\n")[0]
    return type(None), ""


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m._foreach_add([], 1),
        lambda m: m._foreach_add([m.ones(2), m.ones(3)], [m.ones(2)]),
        lambda m: m._foreach_add([m.ones(2), m.ones(3)], [1.0]),
        lambda m: m._foreach_mul([m.ones(2)], m.tensor([2.0, 3.0])),
        lambda m: m._foreach_addcmul(*[[m.ones(2)] * 2] * 3, m.tensor([3.0])),
        lambda m: m._foreach_addcmul(*[[m.ones(2)] * 2] * 3, m.tensor([[3.0, 1.0]])),
        lambda m: m._foreach_max([m.tensor([])]),
        lambda m: m._foreach_abs(m.ones(2)),
        lambda m: m._foreach_abs([m.ones(2), 3]),
        lambda m: m._foreach_add_([m.tensor([1, 2])], 2.5),
        lambda m: m._foreach_mul_([m.ones(2, requires_grad=True)], 2.0),
    ],
)  # fmt: skip
def test_errors(call: Any) -> None:
    kind_t, msg_t = _error(lambda: call(torch))
    kind_l, msg_l = _error(lambda: call(lucid))
    assert kind_l is kind_t
    if "leaf Variable" in msg_t or "can't be cast" in msg_t:
        return  # the per-op in-place errors: their wording is the op's own
    assert msg_l == msg_t
