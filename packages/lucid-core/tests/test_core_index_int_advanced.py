"""Indices that mix integers with advanced items (lists, index tensors, bool masks) against
torch: torch applies the integers as selects first and indexes what is left, so where an
integer stands apart from the advanced items (``x[0, :, [1, 2]]``) the advanced dims stay in
place, where NumPy's rule would move them to the front. A seeded family of index tuples
(integers, NumPy and 0-d tensor integers, slices, ``...``, None, lists, index tensors, masks,
adjacent and apart) checks reads, writes, ``+=``, gradients and, where mlx is installed,
reads on the MLX backend."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lucid

pytestmark = pytest.mark.parity
torch = pytest.importorskip("torch")

SHAPE = (2, 3, 5, 4)
SLICES = [slice(None), slice(1, None), slice(None, None, 2), slice(-2, None), slice(0, 2)]


class Index:
    """An index tuple as specs, built for torch or for lucid (on a device)."""

    def __init__(self, specs: list[tuple[Any, ...]]) -> None:
        self.specs = specs

    def build(self, lib: Any, device: str = "cpu") -> tuple[Any, ...]:
        out: list[Any] = []
        for kind, *arg in self.specs:
            if kind == "int":
                out.append(arg[0])
            elif kind == "np":
                out.append(np.int64(arg[0]))
            elif kind == "t0":
                out.append(_tensor(lib, np.array(arg[0], dtype=np.int64), device))
            elif kind == "slice":
                out.append(arg[0])
            elif kind == "none":
                out.append(None)
            elif kind == "ell":
                out.append(Ellipsis)
            elif kind == "bool":
                out.append(arg[0])
            elif kind == "list":
                out.append(list(arg[0]))
            else:  # "tensor" (int64) or "mask" (bool)
                out.append(_tensor(lib, arg[0], device))
        return tuple(out)

    def kinds(self) -> str:
        """Per item, as torch sees it: "i" integer, "a" advanced, "b" basic."""
        return "".join(
            "i" if k in ("int", "np", "t0") else "b" if k in ("slice", "none", "ell") else "a"
            for k, *_ in self.specs
        )

    def apart(self) -> bool:
        """Whether an integer stands apart from advanced items that are together without it."""
        k = self.kinds()
        return (
            "i" in k
            and "a" in k
            and "b" in k.strip("b")
            and "b" not in (k.replace("i", "").strip("b"))
        )

    def __repr__(self) -> str:
        parts = []
        for kind, *arg in self.specs:
            if kind in ("tensor", "mask"):
                parts.append(f"{kind}{np.asarray(arg[0]).astype(int).tolist()}")
            elif kind == "ell":
                parts.append("...")
            elif kind == "none":
                parts.append("None")
            elif kind == "slice":
                s = arg[0]
                parts.append(f"{s.start}:{s.stop}:{s.step}".replace("None", ""))
            else:
                parts.append(f"{kind}{arg[0]!r}")
        return "[" + ", ".join(parts) + "]"


def _tensor(lib: Any, a: np.ndarray, device: str) -> Any:
    if lib is torch:
        return torch.from_numpy(np.array(a))
    return lucid.tensor(np.array(a), device=device)


def _values(rng: np.random.Generator, d: int, k: int, distinct: bool) -> list[int]:
    """``k`` indices into a dim of size ``d`` (one where ``d < k`` and they must differ)."""
    if distinct:
        vals = rng.choice(d, k, replace=False) if d >= k else rng.integers(0, d, 1)
    else:
        vals = rng.integers(0, d, k)
    return [int(v) - d if rng.random() < 0.3 else int(v) for v in vals]


def _mask(rng: np.random.Generator, shape: tuple[int, ...], k: int) -> np.ndarray:
    n = int(np.prod(shape))
    m = np.zeros(n, dtype=bool)
    m[rng.choice(n, k if n >= k else 1, replace=False)] = True
    return m.reshape(shape)


def _generate(rng: np.random.Generator, distinct: bool) -> Index:
    specs: list[tuple[Any, ...]] = []
    k = int(rng.integers(1, 4))  # the advanced items' common length
    pos, finish, ell = 0, False, False
    kinds = ["int", "int", "np", "t0", "slice", "slice", "list", "tensor", "mask", "none",
             "ell", "stop"]  # fmt: skip
    while pos < len(SHAPE) and len(specs) < 7:
        kind = kinds[int(rng.integers(len(kinds)))]
        d = SHAPE[pos]
        if kind == "stop":
            if finish:
                continue
            break
        if kind == "ell":
            if ell:
                continue
            ell = finish = True
            specs.append(("ell",))
            pos += int(rng.integers(0, len(SHAPE) - pos + 1))  # the dims it stands for
            continue
        if kind == "none":
            specs.append(("none",))
            continue
        if kind in ("int", "np", "t0"):
            specs.append((kind, int(rng.integers(-d, d))))
        elif kind == "slice":
            specs.append(("slice", SLICES[int(rng.integers(len(SLICES)))]))
        elif kind == "list":
            specs.append(("list", _values(rng, d, k, distinct)))
        elif kind == "tensor":
            vals = np.array(_values(rng, d, k, distinct), dtype=np.int64)
            if len(vals) == k and rng.random() < 0.3:
                vals = vals.reshape(1, k)  # broadcasts with the (k,) ones
            specs.append(("tensor", vals))
        else:  # a mask over one dim, or two
            width = 2 if pos + 1 < len(SHAPE) and rng.random() < 0.3 else 1
            specs.append(("mask", _mask(rng, SHAPE[pos : pos + width], k)))
            pos += width
            continue
        pos += 1
    return Index(specs)


def _family(seed: int, n: int, distinct: bool) -> list[Index]:
    rng = np.random.default_rng(seed)
    seen: dict[str, Index] = {}
    while len(seen) < n:
        ix = _generate(rng, distinct)
        if "a" not in ix.kinds():
            continue
        seen.setdefault(repr(ix), ix)
    return list(seen.values())


REPRO = [
    Index([("int", 0), ("slice", slice(None)), ("list", [1, 2])]),
    Index([("slice", slice(None)), ("int", 1), ("slice", slice(None)), ("list", [0, 2])]),
    Index([("int", 0), ("ell",), ("list", [1])]),
    Index([("int", 0), ("slice", slice(None)), ("mask", np.array([1, 0, 1, 0, 0], bool))]),
    Index([("t0", 0), ("slice", slice(None)), ("list", [1, 2])]),
    Index([("np", -1), ("slice", slice(1, None)), ("tensor", np.array([[3, 0]]))]),
    Index([("list", [0, 1]), ("slice", slice(None)), ("int", 2)]),
    Index([("slice", slice(None)), ("list", [0]), ("int", 1), ("list", [2])]),  # together
    Index([("list", [1]), ("none",), ("int", 0), ("slice", slice(None)), ("list", [3, 1])]),
    Index([("int", 1), ("none",), ("list", [0, 2]), ("slice", slice(None)), ("int", -1)]),
    Index([("int", 0), ("slice", slice(None)), ("bool", True), ("list", [1, 3])]),
    Index([("ell",), ("int", 1), ("slice", slice(None)), ("mask", np.ones(4, bool))]),
]
CASES = REPRO + _family(0, 150, distinct=True)
DUP_CASES = _family(1, 60, distinct=False)  # repeated indices: the gradients add up

X = np.random.default_rng(2).standard_normal(SHAPE)


def test_the_family_reaches_the_integers_apart() -> None:
    assert sum(ix.apart() for ix in CASES) >= 30
    assert sum(not ix.apart() and "i" in ix.kinds() for ix in CASES) >= 20


def _both_raise(fn: Any) -> bool:
    """Whether torch raises for ``fn(torch)`` (lucid must then raise too)."""
    try:
        fn(torch)
    except (IndexError, RuntimeError, ValueError):
        with pytest.raises((IndexError, RuntimeError, ValueError)):
            fn(lucid)
        return True
    return False


def _close(got: Any, want: Any) -> None:
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(np.asarray(got.tolist()), want.detach().numpy(), rtol=1e-12,
                               atol=1e-12)  # fmt: skip


@pytest.mark.parametrize("ix", CASES + DUP_CASES, ids=repr)
def test_read(ix: Index) -> None:
    if _both_raise(lambda lib: _tensor(lib, X, "cpu")[ix.build(lib)]):
        return
    _close(lucid.tensor(X)[ix.build(lucid)], torch.from_numpy(X)[ix.build(torch)])


@pytest.mark.parametrize("ix", CASES + DUP_CASES, ids=repr)
def test_read_grad(ix: Index) -> None:
    if _both_raise(lambda lib: _tensor(lib, X, "cpu")[ix.build(lib)]):
        return
    xt = torch.from_numpy(X).requires_grad_()
    out_t = xt[ix.build(torch)]
    w = np.random.default_rng(3).standard_normal(tuple(out_t.shape))
    (out_t * torch.from_numpy(w)).sum().backward()
    xl = lucid.tensor(X, requires_grad=True)
    (xl[ix.build(lucid)] * lucid.tensor(w)).sum().backward()
    _close(xl.grad, xt.grad)


def _value(shape: tuple[int, ...], seed: int) -> np.ndarray:
    """Values for ``y[index] = v``: the full shape, or one that broadcasts to it (some dims
    1, fewer leading dims, or an extra leading 1)."""
    rng = np.random.default_rng(seed)
    v = rng.standard_normal(shape)
    way = seed % 4
    if way == 1 and v.ndim:
        v = v[(slice(0, 1),) * int(rng.integers(1, v.ndim + 1))]  # leading dims to 1
    elif way == 2 and v.ndim:
        v = v[(0,) * int(rng.integers(1, v.ndim + 1))]  # fewer dims
    elif way == 3:
        v = v[None]
    return np.ascontiguousarray(v)


@pytest.mark.parametrize("ix", CASES, ids=repr)
def test_write(ix: Index) -> None:
    if _both_raise(lambda lib: _tensor(lib, X, "cpu")[ix.build(lib)]):
        return
    target = tuple(torch.from_numpy(X)[ix.build(torch)].shape)
    for seed in range(4):
        v = _value(target, seed)
        yt, yl = torch.zeros(SHAPE, dtype=torch.float64), lucid.zeros(SHAPE, dtype=lucid.float64)
        yt[ix.build(torch)] = torch.from_numpy(v)
        yl[ix.build(lucid)] = lucid.tensor(v)
        _close(yl, yt)
    yt, yl = torch.zeros(SHAPE, dtype=torch.float64), lucid.zeros(SHAPE, dtype=lucid.float64)
    yt[ix.build(torch)] = 2.5
    yl[ix.build(lucid)] = 2.5
    _close(yl, yt)


@pytest.mark.parametrize("ix", CASES, ids=repr)
def test_add_in_place(ix: Index) -> None:
    if _both_raise(lambda lib: _tensor(lib, X, "cpu")[ix.build(lib)]):
        return
    target = tuple(torch.from_numpy(X)[ix.build(torch)].shape)
    v = _value(target, 5)
    yt, yl = torch.from_numpy(X.copy()), lucid.tensor(X.copy())
    yt[ix.build(torch)] += torch.from_numpy(v)
    yl[ix.build(lucid)] += lucid.tensor(v)
    _close(yl, yt)


@pytest.mark.parametrize("ix", CASES, ids=repr)
def test_write_grad(ix: Index) -> None:
    """``y[index] = v`` under autograd: the gradients of ``y``'s base and of ``v``."""
    if _both_raise(lambda lib: _tensor(lib, X, "cpu")[ix.build(lib)]):
        return
    target = tuple(torch.from_numpy(X)[ix.build(torch)].shape)
    v = _value(target, 6 + len(repr(ix)) % 4)
    w = np.random.default_rng(7).standard_normal(SHAPE)
    grads = []
    for lib, make in ((torch, torch.from_numpy), (lucid, lucid.tensor)):
        base, val = make(X.copy()), make(v)
        base.requires_grad_()
        val.requires_grad_()
        y = base * 2.0
        y[ix.build(lib)] = val * 3.0
        (y * make(w)).sum().backward()
        grads.append((base.grad, val.grad))
    (bt, vt), (bl, vl) = grads
    _close(bl, bt)
    _close(vl, vt)


SPLIT = [ix for ix in CASES if ix.apart()][:12]


@pytest.mark.parametrize("ix", SPLIT, ids=repr)
def test_gradcheck(ix: Index) -> None:
    x = lucid.tensor(np.random.default_rng(8).standard_normal(SHAPE), requires_grad=True)
    index = ix.build(lucid)
    assert lucid.autograd.gradcheck(lambda t: t[index], (x,), eps=1e-6, atol=1e-6, rtol=1e-4)
    target = tuple(x[index].shape)
    v = lucid.tensor(np.random.default_rng(9).standard_normal(target), requires_grad=True)

    def write(a: Any, b: Any) -> Any:
        y = a * 1.0
        y[index] = b
        return y

    assert lucid.autograd.gradcheck(write, (x, v), eps=1e-6, atol=1e-6, rtol=1e-4)


def test_read_node_is_torchs() -> None:
    """An integer apart: torch's ``IndexBackward0`` (its select is a view step before it)."""
    xt = torch.from_numpy(X).requires_grad_()
    xl = lucid.tensor(X, requires_grad=True)
    assert type(xt[0, :, [1, 2]].grad_fn).__name__ == "IndexBackward0"
    assert xl[0, :, [1, 2]].grad_fn.name() == "IndexBackward0"


def test_index_put_accumulate() -> None:
    """index_put_ takes tensors only; a 0-d one among them is an advanced index."""
    idx = (np.array(1), np.array([0, 2, 0]), np.array([4, 4, 4]))
    v = np.random.default_rng(10).standard_normal((3, 4))
    yt = torch.from_numpy(X.copy()).index_put_(
        tuple(torch.from_numpy(i) for i in idx), torch.from_numpy(v), accumulate=True
    )
    yl = lucid.tensor(X.copy()).index_put_(
        tuple(lucid.tensor(i) for i in idx), lucid.tensor(v), accumulate=True
    )
    _close(yl, yt)


def test_basic_indices_stay_views() -> None:
    """An index of integers and slices alone is a view, as before (NumPy integers too)."""
    x = lucid.zeros(SHAPE, dtype=lucid.float64)
    x[0, :, 1:3][1, 0] = 7.0
    x[np.int64(1), 2][3] = 5.0
    x[1, ..., np.int64(-1)][0, 0] = 3.0
    assert x[0, 1, 1, 0].item() == 7.0
    assert x[1, 2, 3, 0].item() == 5.0
    assert x[1, 0, 0, 3].item() == 3.0
    y = x[0, :, [1, 2]]
    y += 1.0  # an advanced index copies
    assert x[0, 1, 1, 0].item() == 7.0


# MLX takes no Python bool in an index (lucid's MLX backend raises for x[True] alone too)
MLX_CASES = [ix for ix in CASES[:60] + DUP_CASES[:20] if "bool" not in repr(ix)]


@pytest.mark.mlx
@pytest.mark.parametrize("ix", MLX_CASES, ids=repr)
def test_read_on_mlx(ix: Index) -> None:
    pytest.importorskip("mlx.core")
    pytest.importorskip("lucid.backends.mlx")
    x32 = X.astype(np.float32)
    try:
        want = torch.from_numpy(x32)[ix.build(torch)]
    except (IndexError, RuntimeError, ValueError):
        return
    got = lucid.tensor(x32, device="mlx")[ix.build(lucid, "mlx")]
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(np.asarray(got.tolist(), dtype=np.float32), want.numpy(),
                               rtol=0, atol=0)  # fmt: skip


# MLX's own writes misplace a None after an advanced item and a slice (x[[0, 1], :, None]
# = v raises there without any integer): not this file's subject
MLX_WRITES = [ix for ix in MLX_CASES if "None" not in repr(ix)]


@pytest.mark.mlx
@pytest.mark.parametrize("ix", MLX_WRITES, ids=repr)
def test_write_and_grad_on_mlx(ix: Index) -> None:
    pytest.importorskip("mlx.core")
    pytest.importorskip("lucid.backends.mlx")
    x32 = X.astype(np.float32)
    try:
        target = tuple(torch.from_numpy(x32)[ix.build(torch)].shape)
    except (IndexError, RuntimeError, ValueError):
        return
    v = _value(target, len(repr(ix)) % 4).astype(np.float32)
    yt, ym = torch.zeros(SHAPE), lucid.zeros(SHAPE, device="mlx")
    yt[ix.build(torch)] = torch.from_numpy(v)
    ym[ix.build(lucid, "mlx")] = lucid.tensor(v, device="mlx")
    np.testing.assert_allclose(np.asarray(ym.tolist(), dtype=np.float32), yt.numpy(), rtol=0,
                               atol=0)  # fmt: skip
    w = np.random.default_rng(11).standard_normal(target).astype(np.float32)
    xt = torch.from_numpy(x32).requires_grad_()
    (xt[ix.build(torch)] * torch.from_numpy(w)).sum().backward()
    xm = lucid.tensor(x32, device="mlx", requires_grad=True)
    (xm[ix.build(lucid, "mlx")] * lucid.tensor(w, device="mlx")).sum().backward()
    np.testing.assert_allclose(np.asarray(xm.grad.tolist(), dtype=np.float32), xt.grad.numpy(),
                               rtol=1e-6, atol=1e-6)  # fmt: skip
