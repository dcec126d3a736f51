"""lucid.compile's elementwise fuser (``compiler._fused_elementwise``): which chains it fuses,
and the values and gradients of the fused op against eager code, finite differences (float64)
and PyTorch."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lucid
from lucid.backends._numpy import _compiled
from lucid.compiler import _fused_elementwise

pytest.importorskip("numba")
pytestmark = pytest.mark.skipif(
    _compiled.load("_fused_jit") is None, reason="numba's kernels are not in use here"
)

# float32 gradients: a fused group sums a value's gradient terms in its own order
RTOL, ATOL = 1e-6, 1e-7


def _fused_lines(f: Any) -> list[str]:
    return [r for e in f.log for r in e.program.arrays.rewrites if "elementwise" in r]


def _run(fn: Callable[..., lucid.Tensor], args: list[lucid.Tensor]) -> tuple[Any, list[Any]]:
    y = fn(*args)
    g = lucid.autograd.grad((y * y).sum(), [a for a in args if a.requires_grad])
    return y.detach().numpy(), [t.numpy() for t in g]


def _compare(fn: Callable[..., lucid.Tensor], args: list[lucid.Tensor], ops: int) -> Any:
    """Compiled against eager, on the third call (capture, traced backward, recorded one):
    the forward's bits, the gradients within RTOL/ATOL; one group of ``ops`` ops fused."""
    lucid.compiler.reset()
    want_y, want_g = _run(fn, args)
    f = lucid.compile(fn)
    for _ in range(3):
        got_y, got_g = _run(f, args)
    np.testing.assert_array_equal(got_y, want_y)
    for a, b in zip(got_g, want_g):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=RTOL, atol=ATOL)
    lines = _fused_lines(f)
    assert len(lines) == 1 and lines[0].startswith(f"{ops} elementwise ops"), lines
    return f


def new_gelu(x: lucid.Tensor) -> lucid.Tensor:
    """minGPT's GELU (eight ops)."""
    c = math.sqrt(2.0 / math.pi)
    return 0.5 * x * (1.0 + lucid.tanh(c * (x + 0.044715 * lucid.pow(x, 3.0))))


def test_min_gpt_gelu_is_one_fused_op_with_eager_values() -> None:
    lucid.manual_seed(0)
    x = lucid.randn(4, 16, 64, requires_grad=True)
    f = _compare(new_gelu, [x], 8)
    assert "(Mul PowScalar Mul Add Mul Tanh Add Mul)" in _fused_lines(f)[0]


# each rule of the fuser in a chain of three or more ops, constants on either side
CHAINS: dict[str, tuple[Callable[..., lucid.Tensor], int]] = {
    "add_sub_mul": (lambda x, y: (x + y) * 2.0 - y, 3),
    "rsub_rdiv": (lambda x, y: (1.0 - x) / (y * y + 1.0), 4),
    "div_neg": (lambda x, y: -(x / (y.abs() + 0.5)) * y, 4),  # abs: not fused, an input
    "square_pow": (lambda x, y: x.square() + y**2 - x**3, 5),
    "sqrt_rsqrt_recip": (
        lambda x, y: (x * x + 1.0).sqrt() * (y * y + 2.0).rsqrt() + (x * x + 1.0).reciprocal(),
        11,
    ),  # fmt: skip
    "pow_half": (lambda x, y: (x * x + 1.0) ** 0.5 * y, 4),
    "relu": (lambda x, y: (x * y).relu() + x, 3),
    "exp_log": (lambda x, y: (x * 0.5).exp() * (y * y + 1.0).log(), 6),
    "tanh_sigmoid": (lambda x, y: x.tanh() * (y * 2.0).sigmoid() + 1.0, 5),
    "swish": (lambda x, y: x * lucid.sigmoid(x) - y, 3),
}


@pytest.mark.parametrize("name", list(CHAINS))
def test_each_rule_gives_eager_values_and_gradients(name: str) -> None:
    fn, ops = CHAINS[name]
    lucid.manual_seed(1)
    x = lucid.randn(8, 33, requires_grad=True)
    y = lucid.randn(8, 33, requires_grad=True)
    _compare(fn, [x, y], ops)


@pytest.mark.parametrize("name", ["rsub_rdiv", "sqrt_rsqrt_recip", "exp_log", "tanh_sigmoid"])
def test_fused_gradients_match_finite_differences_in_float64(name: str) -> None:
    fn, _ = CHAINS[name]
    rng = np.random.default_rng(2)
    x0, y0 = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 3, 4))
    lucid.compiler.reset()
    f = lucid.compile(fn)
    for _ in range(3):
        x = lucid.tensor(x0, dtype=lucid.float64, requires_grad=True)
        y = lucid.tensor(y0, dtype=lucid.float64, requires_grad=True)
        gx, gy = lucid.autograd.grad(f(x, y).sum(), [x, y])
    assert len(_fused_lines(f)) == 1
    eps = 1e-6
    for arr, got in ((x0, gx), (y0, gy)):
        num = np.empty_like(arr)
        for i in np.ndindex(arr.shape):
            hi, lo = arr.copy(), arr.copy()
            hi[i] += eps
            lo[i] -= eps
            args_hi = [lucid.tensor(hi if arr is x0 else x0), lucid.tensor(hi if arr is y0 else y0)]
            args_lo = [lucid.tensor(lo if arr is x0 else x0), lucid.tensor(lo if arr is y0 else y0)]
            num[i] = (fn(*args_hi).sum().item() - fn(*args_lo).sum().item()) / (2 * eps)
        np.testing.assert_allclose(got.numpy(), num, rtol=1e-6, atol=1e-8)


@pytest.mark.parity
def test_min_gpt_gelu_matches_pytorch() -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    x0 = rng.standard_normal((6, 40)).astype(np.float32)
    f = lucid.compile(new_gelu)
    for _ in range(3):
        x = lucid.tensor(x0, requires_grad=True)
        (gx,) = lucid.autograd.grad(f(x).sum(), [x])
    tx = torch.tensor(x0, requires_grad=True)
    c = math.sqrt(2.0 / math.pi)
    ty = 0.5 * tx * (1.0 + torch.tanh(c * (tx + 0.044715 * torch.pow(tx, 3.0))))
    ty.sum().backward()
    np.testing.assert_allclose(f(lucid.tensor(x0)).numpy(), ty.detach().numpy(), rtol=1e-6,
                               atol=1e-6)  # fmt: skip
    np.testing.assert_allclose(gx.numpy(), tx.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_broadcast_inputs_are_read_in_place_and_their_gradients_reduced() -> None:
    # a hand-written RMSNorm's scaling and bias: (N, T, C) * (N, T, 1) * (C,) + (C,)
    lucid.manual_seed(4)
    x = lucid.randn(3, 5, 16, requires_grad=True)
    r = lucid.rand(3, 5, 1, requires_grad=True)
    w = lucid.randn(16, requires_grad=True)
    b = lucid.randn(16, requires_grad=True)
    _compare(lambda x, r, w, b: (x * r * w + b).relu(), [x, r, w, b], 4)


def test_a_permuted_input_keeps_its_memory_order() -> None:
    # a channels-last activation: the fused op works in its memory order, as NumPy's ufuncs do
    lucid.manual_seed(5)
    base = lucid.randn(2, 6, 7, 4)
    x = base.permute(0, 3, 1, 2).detach().requires_grad_()  # (2, 4, 6, 7), not C-ordered
    s = lucid.randn(1, 4, 1, 1, requires_grad=True)
    fn = lambda x, s: (x * s + 1.0).tanh() * x  # noqa: E731
    f = _compare(fn, [x, s], 4)
    assert f(x, s)._data.strides == fn(x, s)._data.strides


def test_an_intermediate_read_elsewhere_or_returned_stays_outside_the_group() -> None:
    lucid.manual_seed(6)
    x = lucid.randn(64, 8, requires_grad=True)

    def fn(x: lucid.Tensor) -> tuple[lucid.Tensor, lucid.Tensor]:
        t = x * 3.0  # returned: made by its own op
        u = ((t + 1.0) * 0.5).tanh()
        return u, t

    f = lucid.compile(fn)
    for _ in range(3):
        u, t = f(x)
    eu, et = fn(x)
    np.testing.assert_array_equal(u.detach().numpy(), eu.detach().numpy())
    np.testing.assert_array_equal(t.detach().numpy(), et.detach().numpy())
    assert [r.split(" (")[1] for r in _fused_lines(f)] == ["Add Mul Tanh)"]


def test_small_pairs_and_the_switch_leave_ops_unfused(monkeypatch: pytest.MonkeyPatch) -> None:
    x = lucid.randn(16, requires_grad=True)
    f = lucid.compile(lambda x: x * 2.0 + 1.0)  # two ops, 16 elements: not worth a call
    f(x)
    assert _fused_lines(f) == []
    monkeypatch.setattr(_fused_elementwise, "FUSE_ELEMENTWISE", False)
    lucid.compiler.reset()
    g = lucid.compile(new_gelu)
    g(x)
    assert _fused_lines(g) == []


def test_special_values_propagate_as_in_eager_code() -> None:
    x = lucid.tensor([0.0, -0.0, 1.0, -1.0, float("inf"), -float("inf"), float("nan"), 1e-40,
                      88.0, -104.0])  # fmt: skip
    fns = [
        lambda x: (x * 2.0).relu() / x,
        lambda x: (x.sigmoid() + 1.0) * x.exp(),
        lambda x: (x * x).log() - 1.0 / x,
        lambda x: (x * 0.5 + 1.0).rsqrt() * x.tanh(),
    ]
    for fn in fns:
        lucid.compiler.reset()
        f = lucid.compile(fn)
        want = fn(x).numpy()
        with np.errstate(all="ignore"):
            got = f(x).numpy()
        np.testing.assert_array_equal(got, want)
        assert len(_fused_lines(f)) == 1


def test_under_no_grad_the_fused_op_runs_forward_only() -> None:
    x = lucid.randn(4, 64)
    f = lucid.compile(new_gelu)
    with lucid.no_grad():
        y = f(x)
    np.testing.assert_array_equal(y.numpy(), new_gelu(x).numpy())
    assert y.grad_fn is None and len(_fused_lines(f)) == 1


@pytest.mark.parity
def test_pow_by_torch_special_exponents_gives_torch_bits() -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(7)
    x0 = rng.standard_normal(1000).astype(np.float32)
    for e in (3, 3.0, -2.0, -0.5):
        a = np.abs(x0) + 0.1 if e < 0 else x0
        np.testing.assert_array_equal(
            (lucid.tensor(a) ** e).numpy(), (torch.tensor(a) ** e).numpy()
        )
    # x ** 0.5 is the correctly rounded square root (torch's differs in the last bit)
    a = np.abs(x0)
    np.testing.assert_array_equal((lucid.tensor(a) ** 0.5).numpy(), np.sqrt(a))
    assert (lucid.arange(5) ** 3).tolist() == [0, 1, 8, 27, 64]  # ints keep NumPy's power


def test_loops_are_cached_on_disk_and_a_changed_file_is_never_imported(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lucid.backends._numpy.kernels import _fused_jit

    monkeypatch.setattr(_fused_jit, "CACHE_DIR", tmp_path)
    monkeypatch.setattr(_fused_jit, "_built", {})
    src = "def twice(o, X0):\n    for i in range(o.shape[0]):\n        o[i] = X0[i] * TWO\n"
    fn = _fused_jit.build(src, "twice", {"TWO": np.float32(2.0)})
    out = np.empty(3, np.float32)
    fn(out, np.arange(3, dtype=np.float32))
    np.testing.assert_array_equal(out, [0.0, 2.0, 4.0])
    (written,) = tmp_path.glob("f*.py")
    assert written.read_text().endswith(src) and "TWO = np.float32(2.0)" in written.read_text()
    assert not list(tmp_path.glob("*.tmp"))  # written under a temporary name, then renamed
    # a file whose text is not the generated source is not run: the loop compiles from memory
    written.write_text(written.read_text().replace("* TWO", "* TWO * TWO"))
    monkeypatch.setattr(_fused_jit, "_built", {})
    fn = _fused_jit.build(src, "twice", {"TWO": np.float32(2.0)})
    fn(out, np.arange(3, dtype=np.float32))
    np.testing.assert_array_equal(out, [0.0, 2.0, 4.0])
