"""torch's ``out=`` on the functions that take it (``lucid.ops._util.with_out``), against torch.

The ops are those of ``torch.overrides.get_testing_overrides()`` whose torch signature has an
``out`` parameter and that lucid has, each with a sample built per op family here. For each,
torch and lucid are called with an ``out`` of the result's shape, of another shape (resized,
with torch's warning) and of a dtype torch refuses (the same error class) or casts to.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lucid

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity

RTOL, ATOL = 1e-5, 1e-6


def _rand(rng: np.random.Generator, *shape: int, kind: str = "any") -> np.ndarray:
    x = rng.standard_normal(shape).astype(np.float32)
    if kind == "pos":
        return np.abs(x) + np.float32(0.5)
    if kind == "unit":
        return np.tanh(x) * np.float32(0.8)
    if kind == "int":
        return rng.integers(1, 9, shape)
    return x


# op family -> (op names, a sample: a function of the generator giving the positional arguments
# and keyword arguments as NumPy arrays / Python values)
Sample = Callable[[np.random.Generator], tuple[tuple[Any, ...], dict[str, Any]]]
FAMILIES: list[tuple[str, Sample]] = [
    (
        "atan2 arctan2 copysign fmax fmin fmod hypot logaddexp logaddexp2 maximum minimum "
        "nextafter remainder xlogy eq ne lt le gt ge greater greater_equal less less_equal "
        "not_equal logical_and logical_or logical_xor heaviside",
        lambda g: ((_rand(g, 3, 4), _rand(g, 3, 4)), {}),
    ),
    ("pow", lambda g: ((_rand(g, 3, 4, kind="pos"), _rand(g, 3, 4)), {})),
    (
        "angle deg2rad rad2deg erf erfc lgamma neg negative round sgn sign sinc square "
        "nan_to_num logical_not signbit msort",
        lambda g: ((_rand(g, 3, 4),), {}),
    ),
    ("digamma i0", lambda g: ((_rand(g, 3, 4, kind="pos"),), {})),
    ("erfinv", lambda g: ((_rand(g, 3, 4, kind="unit"),), {})),
    (
        "bitwise_and bitwise_or bitwise_xor gcd lcm",
        lambda g: ((_rand(g, 3, 4, kind="int"), _rand(g, 3, 4, kind="int")), {}),
    ),
    ("bitwise_not", lambda g: ((_rand(g, 3, 4, kind="int"),), {})),
    ("clamp clip", lambda g: ((_rand(g, 3, 4), -0.5, 0.5), {})),
    ("clamp_min clamp_max", lambda g: ((_rand(g, 3, 4), 0.1), {})),
    (
        "addcmul addcdiv",
        lambda g: ((_rand(g, 3, 4), _rand(g, 3, 4), _rand(g, 3, 4, kind="pos")), {"value": 0.5}),
    ),
    ("lerp", lambda g: ((_rand(g, 3, 4), _rand(g, 3, 4), 0.3), {})),
    ("bmm", lambda g: ((_rand(g, 2, 3, 4), _rand(g, 2, 4, 5)), {})),
    ("mv", lambda g: ((_rand(g, 3, 4), _rand(g, 4)), {})),
    ("dot vdot outer ger inner", lambda g: ((_rand(g, 4), _rand(g, 4)), {})),
    ("addmm", lambda g: ((_rand(g, 3, 5), _rand(g, 3, 4), _rand(g, 4, 5)), {"beta": 0.5})),
    ("addmv", lambda g: ((_rand(g, 3), _rand(g, 3, 4), _rand(g, 4)), {})),
    ("addr", lambda g: ((_rand(g, 3, 4), _rand(g, 3), _rand(g, 4)), {})),
    ("baddbmm", lambda g: ((_rand(g, 2, 3, 5), _rand(g, 2, 3, 4), _rand(g, 2, 4, 5)), {})),
    ("addbmm", lambda g: ((_rand(g, 3, 5), _rand(g, 2, 3, 4), _rand(g, 2, 4, 5)), {})),
    ("tensordot", lambda g: ((_rand(g, 3, 4), _rand(g, 4, 5)), {"dims": 1})),
    (
        "stack hstack vstack dstack column_stack row_stack",
        lambda g: (([_rand(g, 3, 4), _rand(g, 3, 4)],), {}),
    ),
    ("tril triu diag diff", lambda g: ((_rand(g, 4, 4),), {})),
    ("inverse", lambda g: ((_rand(g, 3, 3) + 3 * np.eye(3, dtype=np.float32),), {})),
    ("linspace", lambda g: ((0.0, 1.0, 5), {})),
    ("full", lambda g: (((2, 3), 1.5), {})),
]
LINALG: list[tuple[str, Sample]] = [
    ("inv", lambda g: ((_rand(g, 3, 3) + 3 * np.eye(3, dtype=np.float32),), {})),
    ("matrix_norm norm svdvals", lambda g: ((_rand(g, 3, 4),), {})),
    ("vector_norm", lambda g: ((_rand(g, 3, 4),), {"dim": 1})),
    ("cross", lambda g: ((_rand(g, 2, 3), _rand(g, 2, 3)), {})),
    ("qr", lambda g: ((_rand(g, 4, 3),), {})),
]
SPECIAL: list[tuple[str, Sample]] = [
    ("xlog1py zeta", lambda g: ((_rand(g, 3, 4, kind="pos") + 1, _rand(g, 3, 4, kind="pos")), {})),
]


def _takes_out(fn: Any) -> bool:
    try:
        return "out" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def _cases() -> list[Any]:
    overrides = torch.overrides.get_testing_overrides()
    cases = []
    for t_ns, l_ns, families in (
        (torch, lucid, FAMILIES),
        (torch.linalg, lucid.linalg, LINALG),
        (torch.special, lucid.special, SPECIAL),
    ):
        for names, sample in families:
            for name in names.split():
                fn = getattr(t_ns, name)
                lam = overrides.get(fn)
                factory = lam is None  # linspace, full: not overridable
                if not factory and not _takes_out(lam):
                    continue
                if hasattr(l_ns, name):
                    cases.append(
                        pytest.param(t_ns, l_ns, name, sample, id=f"{l_ns.__name__}.{name}")
                    )
    return cases


def _convert(value: Any, module: Any) -> Any:
    if isinstance(value, np.ndarray):
        return module.tensor(value)
    if isinstance(value, list):
        return [_convert(v, module) for v in value]
    if isinstance(value, tuple) and any(isinstance(v, (np.ndarray, list)) for v in value):
        return tuple(_convert(v, module) for v in value)
    return value


def _leaves(result: Any) -> list[Any]:
    return list(result) if isinstance(result, tuple) else [result]


def _blank(module: Any, like: Any, shape: tuple[int, ...], dtype: Any = None) -> Any:
    return module.zeros(shape, dtype=dtype if dtype is not None else like.dtype)


def _check_same(t_got: Any, l_got: Any) -> None:
    assert len(_leaves(t_got)) == len(_leaves(l_got))
    for t, x in zip(_leaves(t_got), _leaves(l_got), strict=True):
        assert tuple(x.shape) == tuple(t.shape)
        assert str(x.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        np.testing.assert_allclose(
            np.asarray(x.numpy(), dtype=np.float64), t.numpy().astype(np.float64),
            rtol=1e-4, atol=1e-5,
        )  # fmt: skip


def _call(module: Any, ns: Any, name: str, args: Any, kwargs: Any, out: Any) -> Any:
    return getattr(ns, name)(*_convert(args, module), out=out, **kwargs)


@pytest.mark.parametrize(("t_ns", "l_ns", "name", "sample"), _cases())
def test_out_matches_torch(t_ns: Any, l_ns: Any, name: str, sample: Sample) -> None:
    args, kwargs = sample(np.random.default_rng(0))
    expected = getattr(t_ns, name)(*_convert(args, torch), **kwargs)
    t_leaves = _leaves(expected)

    def outs(module: Any, shape: Any = None, dtype: Any = None) -> Any:
        made = [
            module.zeros(
                tuple(t.shape) if shape is None else shape,
                dtype=getattr(module, str(dtype or t.dtype).split(".")[-1]),
            )
            for t in t_leaves
        ]
        return tuple(made) if isinstance(expected, tuple) else made[0]

    # the result's shape: written in place, the same tensor(s) returned
    for shape in (None, (1,)):  # (1,): resized with torch's warning
        t_out, l_out = outs(torch, shape), outs(lucid, shape)
        with warnings.catch_warnings(record=True) as t_warned:
            warnings.simplefilter("always")
            t_got = _call(torch, t_ns, name, args, kwargs, t_out)
        with warnings.catch_warnings(record=True) as l_warned:
            warnings.simplefilter("always")
            l_got = _call(lucid, l_ns, name, args, kwargs, l_out)
        _check_same(t_got, l_got)
        _check_same(t_out if isinstance(t_out, tuple) else t_out, l_out)
        for got, given in zip(_leaves(l_got), _leaves(l_out), strict=True):
            assert got is given
        resized = [str(w.message) for w in t_warned if "was resized" in str(w.message)]
        ours = [str(w.message) for w in l_warned if "was resized" in str(w.message)]
        assert bool(resized) == bool(ours)
        if ours:
            assert ours[0].startswith(resized[0].split(" (Triggered")[0][:120])

    # another dtype: torch refuses it (lucid raises the same class) or casts into it
    first = t_leaves[0]
    other = "int64" if first.dtype.is_floating_point or first.dtype.is_complex else (
        "bool" if first.dtype != torch.bool else "float32")  # fmt: skip
    t_out, l_out = outs(torch, dtype=other), outs(lucid, dtype=other)
    try:
        t_got = _call(torch, t_ns, name, args, kwargs, t_out)
    except (RuntimeError, TypeError) as e:
        with pytest.raises(type(e)):
            _call(lucid, l_ns, name, args, kwargs, l_out)
    else:
        if name in ("linspace", "full"):
            pytest.skip("torch's factories count in out's dtype")
        l_got = _call(lucid, l_ns, name, args, kwargs, l_out)
        _check_same(t_got, l_got)


def test_amsgrad_update_in_place() -> None:
    """labml's AMSGrad: ``torch.maximum(v_max, v, out=v_max)`` (out is an input)."""
    rng = np.random.default_rng(1)
    a, b = _rand(rng, 5), _rand(rng, 5)
    t_max, l_max = torch.tensor(a), lucid.tensor(a)
    t_res = torch.maximum(t_max, torch.tensor(b), out=t_max)
    l_res = lucid.maximum(l_max, lucid.tensor(b), out=l_max)
    assert l_res is l_max and t_res is t_max
    np.testing.assert_allclose(l_max.numpy(), t_max.numpy(), rtol=0, atol=0)


def test_methods_stay_bare() -> None:
    """The Tensor methods take no out= (as torch's), the op modules' functions neither."""
    assert "out" not in inspect.signature(lucid.Tensor.maximum).parameters
    assert "out" in inspect.signature(lucid.maximum).parameters
    assert lucid.maximum.__without_out__ is lucid.ops.elementwise.maximum
