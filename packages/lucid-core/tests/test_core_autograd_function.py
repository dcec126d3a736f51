"""``autograd.Function`` with PyTorch's contract: ``forward`` on Tensors (without recording),
``ctx`` helpers, ``setup_context``, ``once_differentiable``, ``jvp`` for forward-mode AD
(``autograd.forward_ad``, ``func.jvp``, ``func.linearize``).

Cases follow torch's test/test_autograd.py (test_function, test_once_differentiable,
test_function_returns_input, test_function_returns_undefined_tensor,
test_dont_materialize_grads, test_mark_non_differentiable*, test_dirty*, test_save_none_*,
test_needs_input_grad, the forward-AD custom Function tests); the parity ones run the same
class body on torch and on lucid.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np
import pytest

import lucid
import lucid.autograd.forward_ad as fwAD
from lucid.autograd import Function, gradcheck, gradgradcheck, once_differentiable


def _close(a: Any, b: Any) -> None:
    np.testing.assert_allclose(np.asarray(a.detach().numpy()), np.asarray(b), rtol=1e-6, atol=1e-8)


def _leaf(*shape: int, seed: int = 0) -> lucid.Tensor:
    rng = np.random.default_rng(seed)
    return lucid.tensor(rng.standard_normal(shape), requires_grad=True)


def _my_function(L: ModuleType) -> Any:
    """torch's test_function: a scalar argument, two saved inputs, a None gradient."""

    class MyFunction(L.autograd.Function):  # type: ignore[misc,name-defined]
        @staticmethod
        def forward(ctx: Any, tensor1: Any, pyscalar: float, tensor2: Any) -> Any:
            assert not L.is_grad_enabled()  # forward runs without recording
            ctx.pyscalar = pyscalar
            ctx.save_for_backward(tensor1, tensor2)
            return tensor1 + pyscalar * tensor2 + tensor1 * tensor2

        @staticmethod
        def backward(ctx: Any, grad_output: Any) -> Any:
            var1, var2 = ctx.saved_tensors
            assert isinstance(var1, L.Tensor) and isinstance(grad_output, L.Tensor)
            return (grad_output + grad_output * var2, None,
                    grad_output * ctx.pyscalar + grad_output * var1)  # fmt: skip

    return MyFunction


def test_forward_gets_tensors_and_the_graph_is_differentiable_again() -> None:
    fn = _my_function(lucid)
    x, y = _leaf(5, 5), _leaf(5, 5, seed=1)
    result = fn.apply(x, 2, y)
    assert result.grad_fn.name() == "MyFunctionBackward"
    assert type(result.grad_fn).__name__ == "MyFunctionBackward"
    go = lucid.ones((), dtype=lucid.float64, requires_grad=True)
    result.sum().backward(go, create_graph=True)
    _close(x.grad, (y + 1).detach().numpy())
    _close(y.grad, (x + 2).detach().numpy())
    assert x.grad.grad_fn is not None and y.grad.grad_fn is not None
    assert gradcheck(lambda a, b: fn.apply(a, 3.0, b), (x, y), eps=1e-6, atol=1e-6, rtol=1e-4)
    assert gradgradcheck(lambda a, b: fn.apply(a, 3.0, b), (x, y), eps=1e-6, atol=1e-6,
                         rtol=1e-4)  # fmt: skip


def test_needs_input_grad_and_keyword_arguments() -> None:
    seen: list[tuple[bool, ...]] = []

    class Scale(Function):
        @staticmethod
        def forward(ctx: Any, x: Any, w: Any, k: float = 2.0) -> Any:
            seen.append(ctx.needs_input_grad)
            ctx.save_for_backward(x, w)
            ctx.k = k
            return x * w * k

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            x, w = ctx.saved_tensors
            gx = g * w * ctx.k if ctx.needs_input_grad[0] else None
            gw = g * x * ctx.k if ctx.needs_input_grad[1] else None
            return gx, gw, None

    x, w = _leaf(3), lucid.ones(3, dtype=lucid.float64)
    Scale.apply(x, w, k=3.0).sum().backward()
    assert seen == [(True, False, False)]
    _close(x.grad, np.full(3, 3.0))
    out = Scale.apply(w, w)  # no input needs grad: no node
    assert out.grad_fn is None and not out.requires_grad


def test_setup_context_style() -> None:
    class Cube(Function):
        @staticmethod
        def forward(x: Any) -> Any:
            return x**3

        @staticmethod
        def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
            (x,) = inputs
            ctx.save_for_backward(x, output)

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            x, out = ctx.saved_tensors
            assert out.grad_fn is not None  # a saved output keeps its place in the graph
            return 3 * g * out / x

    x = _leaf(4) + 3.0
    assert gradcheck(Cube.apply, (x.detach().requires_grad_(),), eps=1e-6, atol=1e-6, rtol=1e-4)
    x = x.detach().requires_grad_()
    Cube.apply(x).sum().backward()
    _close(x.grad, 3 * x.detach().numpy() ** 2)


def test_returns_input_is_a_view_and_undefined_gradients_stay_none() -> None:
    class Ident(Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            return x

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            return grad * 2

    for shape in [(1,), ()]:
        v = lucid.ones(shape, requires_grad=True)
        out = Ident.apply(v)
        assert out is not v and out._base is v
        out.backward()
        _close(v.grad, np.full(shape, 2.0))
        with lucid.no_grad():
            v.grad.zero_()
        Ident.apply(v.clone()).backward()
        _close(v.grad, np.full(shape, 2.0))

    class NoGrad(Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            return x * 2

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            return None

    x = lucid.ones(1, requires_grad=True)
    NoGrad.apply(x).backward()
    assert x.grad is None
    NoGrad.apply(x**2).sum().backward()
    assert x.grad is None
    assert lucid.autograd.grad(NoGrad.apply(x), x, allow_unused=True)[0] is None


def test_materialize_grads_and_non_tensor_outputs() -> None:
    got: list[Any] = []

    class Two(Function):
        @staticmethod
        def forward(ctx: Any, x: Any, materialize: bool) -> Any:
            ctx.set_materialize_grads(materialize)
            return x.clone(), x * 2, "label"

        @staticmethod
        def backward(ctx: Any, g1: Any, g2: Any, g3: Any) -> Any:
            got.append((g1, g2, g3))
            return g1 if g1 is not None else g2, None

    x = _leaf(3)
    a, _, label = Two.apply(x, True)
    assert label == "label"
    a.sum().backward()
    g1, g2, g3 = got.pop()
    _close(g1, np.ones(3))
    _close(g2, np.zeros(3))  # materialized
    assert g3 is None  # the string output gets no gradient
    _, b, _ = Two.apply(x, False)
    b.sum().backward()
    g1, g2, g3 = got.pop()
    assert g1 is None and g3 is None
    _close(g2, np.ones(3))


def test_mark_non_differentiable() -> None:
    class MaxIdx(Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            v, i = x.max(dim=0)
            mask = x > 0
            ctx.mark_non_differentiable(mask)
            ctx.save_for_backward(i)
            ctx.n = x.shape[0]
            return v, i, mask

        @staticmethod
        def backward(ctx: Any, gv: Any, gi: Any, gm: Any) -> Any:
            (i,) = ctx.saved_tensors
            assert not gi.requires_grad and float(gm.abs().sum()) == 0.0
            return lucid.zeros(ctx.n, dtype=gv.dtype).index_put((i,), gv)

    x = _leaf(4)
    v, i, mask = MaxIdx.apply(x)
    assert v.requires_grad and not i.requires_grad and not mask.requires_grad
    assert i.grad_fn is None and mask.grad_fn is None
    v.backward()
    want = np.zeros(4)
    want[int(np.argmax(x.detach().numpy()))] = 1.0
    _close(x.grad, want)


def test_mark_dirty() -> None:
    class DoubleInPlace(Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g * 2

    x = _leaf(3)
    a = x.clone()
    version = a._version
    b = DoubleInPlace.apply(a)
    assert b is a and a.grad_fn.name() == "DoubleInPlaceBackward"
    assert a._version == version + 2  # the write and the marking, as torch counts
    _close(a, 2 * x.detach().numpy())
    (a * a).sum().backward()
    _close(x.grad, 8 * x.detach().numpy())
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad has been used"):
        DoubleInPlace.apply(x)


def test_save_for_backward_checks_and_none() -> None:
    class SaveNone(Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            ctx.save_for_backward(None, x, None)
            return x * 1.5

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            a, x, b = ctx.saved_tensors
            assert a is None and b is None and isinstance(x, lucid.Tensor)
            return g * 1.5

    x = _leaf(2)
    SaveNone.apply(x).sum().backward()
    _close(x.grad, np.full(2, 1.5))

    class SaveInt(Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            ctx.save_for_backward(x, 3)
            return x.clone()

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g

    with pytest.raises(TypeError, match="argument 1 is of type int"):
        SaveInt.apply(x)


def test_backward_result_checks() -> None:
    class Count(Function):
        @staticmethod
        def forward(ctx: Any, x: Any, y: Any) -> Any:
            return x * y

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g

    x = _leaf(3)
    with pytest.raises(RuntimeError, match=r"function CountBackward returned an incorrect "
                       r"number of gradients \(expected 2, got 1\)"):  # fmt: skip
        Count.apply(x, x).sum().backward()

    class NonTensorGrad(Function):
        @staticmethod
        def forward(ctx: Any, x: Any, n: int) -> Any:
            return x * n

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g, g

    with pytest.raises(
        RuntimeError,
        match="returned a gradient different than None at "
        "position 2, but the corresponding forward input was not a Variable",
    ):
        NonTensorGrad.apply(x, 2).sum().backward()


def test_once_differentiable_errors_only_when_differentiated_again() -> None:
    class Square(Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @once_differentiable
        def backward(ctx: Any, g: Any) -> Any:
            assert not lucid.is_grad_enabled()
            (x,) = ctx.saved_tensors
            return 2 * x * g

    x = _leaf(3)
    y = Square.apply(x)
    (g,) = lucid.autograd.grad((y * y).sum(), x, create_graph=True)  # no error yet
    assert g.requires_grad and g.grad_fn.name() == "torch::autograd::Error"
    _close(g, 4 * x.detach().numpy() ** 3)
    with pytest.raises(RuntimeError, match="trying to differentiate twice a function that "
                       "was marked with @once_differentiable"):  # fmt: skip
        g.sum().backward()
    (g2,) = lucid.autograd.grad(Square.apply(x).sum(), x, create_graph=True)
    assert not g2.requires_grad  # the incoming gradient needed none: nothing to guard


def test_custom_jvp_drives_forward_mode() -> None:
    calls: list[int] = []

    class Sin(Function):
        @staticmethod
        def forward(x: Any) -> Any:
            return x.sin()

        @staticmethod
        def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
            (x,) = inputs
            ctx.save_for_backward(x)
            ctx.save_for_forward(x)

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            raise AssertionError("forward mode must not call backward")

        @staticmethod
        def jvp(ctx: Any, t: Any) -> Any:
            calls.append(1)
            (x,) = ctx.saved_tensors
            return x.cos() * t

    class NoJvp(Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            return x * 2

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g * 2

    p = lucid.tensor([0.0, 1.0, 2.0], dtype=lucid.float64)
    t = lucid.tensor([1.0, 0.5, -2.0], dtype=lucid.float64)
    with fwAD.dual_level():
        d = fwAD.make_dual(p, t)
        out = Sin.apply(d) * 3.0
        tangent = fwAD.unpack_dual(out).tangent
        assert calls
        _close(tangent, 3.0 * np.cos(p.numpy()) * t.numpy())
        with pytest.raises(NotImplementedError, match="You must implement the jvp function"):
            fwAD.unpack_dual(NoJvp.apply(d))


# -- lucid.func.jvp and linearize call a Function's jvp, as torch.func does ---------------------
def _rule_functions(L: ModuleType, true_rule: bool) -> tuple[Any, Any]:
    """``SinScaled(x) = sin(x)`` and ``Mul(x, y) = x * y`` on ``L`` (torch or lucid), setup_context
    style; their ``backward`` is the true derivative. With ``true_rule`` their ``jvp`` is too,
    else it is a deliberately different rule (10 t; t_x + t_y) that only a call of ``jvp`` gives."""

    class SinScaled(L.autograd.Function):  # type: ignore[misc,name-defined]
        generate_vmap_rule = True

        @staticmethod
        def forward(x: Any) -> Any:
            return x.sin()

        @staticmethod
        def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
            (x,) = inputs
            ctx.save_for_backward(x)
            ctx.save_for_forward(x)

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            (x,) = ctx.saved_tensors
            return g * x.cos()

        @staticmethod
        def jvp(ctx: Any, t: Any) -> Any:
            (x,) = ctx.saved_tensors
            return t * x.cos() if true_rule else t * 10.0

    class Mul(L.autograd.Function):  # type: ignore[misc,name-defined]
        generate_vmap_rule = True

        @staticmethod
        def forward(x: Any, y: Any) -> Any:
            return x * y

        @staticmethod
        def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
            ctx.save_for_backward(*inputs)
            ctx.save_for_forward(*inputs)

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            x, y = ctx.saved_tensors
            return g * y, g * x

        @staticmethod
        def jvp(ctx: Any, tx: Any, ty: Any) -> Any:
            x, y = ctx.saved_tensors
            return tx * y + x * ty if true_rule else tx + ty

    return SinScaled, Mul


def _f64(*shape: int, seed: int) -> lucid.Tensor:
    return lucid.tensor(np.random.default_rng(seed).standard_normal(shape), dtype=lucid.float64)


def test_func_jvp_and_linearize_use_the_functions_jvp() -> None:
    sin, mul = _rule_functions(lucid, true_rule=False)
    x, y, tx, ty = (_f64(3, 4, seed=k) for k in range(4))

    def f(a: Any, b: Any) -> Any:
        return mul.apply(sin.apply(a), b) * 2.0

    out, tangent = lucid.func.jvp(f, (x, y), (tx, ty))
    _close(out, 2.0 * np.sin(x.numpy()) * y.numpy())
    _close(tangent, 2.0 * (10.0 * tx.numpy() + ty.numpy()))  # the rule, not the derivative
    _, jvp_fn = lucid.func.linearize(f, x, y)
    _close(jvp_fn(tx, ty), 2.0 * (10.0 * tx.numpy() + ty.numpy()))
    # reverse mode keeps calling backward: the gradient is the true one
    gx = lucid.func.grad(lambda a: f(a, y).sum())(x)
    _close(gx, 2.0 * np.cos(x.numpy()) * y.numpy())


def test_func_jvp_of_a_true_rule_matches_finite_differences() -> None:
    sin, mul = _rule_functions(lucid, true_rule=True)
    x, y, tx, ty = (_f64(2, 3, seed=10 + k) for k in range(4))

    def f(a: Any, b: Any) -> Any:
        return mul.apply(sin.apply(a), b.exp())

    _, tangent = lucid.func.jvp(f, (x, y), (tx, ty))
    eps = 1e-6
    plus = f(x + eps * tx, y + eps * ty).numpy()
    minus = f(x - eps * tx, y - eps * ty).numpy()
    np.testing.assert_allclose(tangent.numpy(), (plus - minus) / (2 * eps), rtol=1e-7, atol=1e-9)


def test_grad_of_func_jvp_differentiates_the_rule() -> None:
    sin, _ = _rule_functions(lucid, true_rule=True)
    x, t = _f64(5, seed=20), _f64(5, seed=21)
    g = lucid.func.grad(lambda a: lucid.func.jvp(sin.apply, (a,), (t,))[1].sum())(x)
    _close(g, -np.sin(x.numpy()) * t.numpy())  # d/dx (cos(x) t)


def test_func_jvp_of_a_function_without_jvp_raises_torchs_error() -> None:
    class NoJvp(Function):
        @staticmethod
        def forward(x: Any) -> Any:
            return x * 2

        @staticmethod
        def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
            pass

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g * 2

    x, t = _f64(3, seed=30), _f64(3, seed=31)
    message = "You must implement the jvp function for custom autograd.Function to use it with "
    with pytest.raises(NotImplementedError, match=message):
        lucid.func.jvp(NoJvp.apply, (x,), (t,))
    with pytest.raises(NotImplementedError, match=message):
        lucid.func.linearize(NoJvp.apply, x)[1](t)
    (gx,) = lucid.func.vjp(NoJvp.apply, x)[1](t)  # reverse mode still works
    _close(gx, 2.0 * t.numpy())


@pytest.mark.parity
@pytest.mark.parametrize("true_rule", [True, False])
def test_func_jvp_with_a_custom_rule_matches_torch_func(true_rule: bool) -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(40 + true_rule)
    arrays = [rng.standard_normal((3, 2)) for _ in range(4)]
    results = []
    for L in (torch, lucid):
        sin, mul = _rule_functions(L, true_rule)
        x, y, tx, ty = (L.tensor(a, dtype=L.float64) for a in arrays)

        def f(a: Any, b: Any, sin: Any = sin, mul: Any = mul) -> Any:
            return mul.apply(sin.apply(a), b).exp()

        out, tangent = L.func.jvp(f, (x, y), (tx, ty))
        lin = L.func.linearize(f, x, y)[1](tx, ty)
        g = L.func.grad(lambda a, b, f=f: L.func.jvp(f, (a, b), (tx, ty))[1].sum())(x, y)
        results.append([r.detach().numpy() for r in (out, tangent, lin, g)])
    for want, got in zip(*results):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_forward_on_arrays_keeps_the_array_contract() -> None:
    class ArraySquare(Function):
        forward_on_arrays = True

        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            assert isinstance(x, np.ndarray)
            ctx.save_for_backward(x)
            return ctx.xp.multiply(x, x)

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            (x,) = ctx.saved_tensors
            return 2 * x * g

    x = _leaf(3)
    y = ArraySquare.apply(x)
    assert y.grad_fn.name() == "ArraySquareBackward0"
    y.sum().backward()
    _close(x.grad, 2 * x.detach().numpy())


def test_custom_function_under_compile_is_one_replayed_step() -> None:
    class Cube(Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            (x,) = ctx.saved_tensors
            return 3 * x * x * g

    w = _leaf(3)
    compiled = lucid.compile(lambda a: Cube.apply(a * w).sum())
    for k in range(3):
        a = lucid.tensor(np.arange(3.0) + k, dtype=lucid.float64)
        (got,) = lucid.autograd.grad(compiled(a), w)
        (want,) = lucid.autograd.grad(Cube.apply(a * w).sum(), w)
        _close(got, want.numpy())


# -- parity with torch: the same class bodies ----------------------------------------------------
def _parity_cases(L: ModuleType) -> list[tuple[Any, Any]]:
    """(function of two float64 leaves -> scalar loss) built on ``L``'s custom Functions."""
    fn = _my_function(L)

    class SinCos(L.autograd.Function):  # type: ignore[misc,name-defined]
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            ctx.save_for_backward(x)
            return x.sin(), x.cos()

        @staticmethod
        def backward(ctx: Any, gs: Any, gc: Any) -> Any:
            (x,) = ctx.saved_tensors
            return gs * x.cos() - gc * x.sin()

    class Mixed(L.autograd.Function):  # type: ignore[misc,name-defined]
        @staticmethod
        def forward(x: Any, y: Any, k: int) -> Any:
            return x * y + k, (x - y).abs()

        @staticmethod
        def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
            x, y, _ = inputs
            ctx.save_for_backward(x, y, output[1])
            ctx.set_materialize_grads(False)

        @staticmethod
        def backward(ctx: Any, g1: Any, g2: Any) -> Any:
            x, y, d = ctx.saved_tensors
            gx = g1 * y if g1 is not None else L.zeros_like(x)
            gy = g1 * x if g1 is not None else L.zeros_like(y)
            if g2 is not None:
                s = (x - y) / d
                gx, gy = gx + g2 * s, gy - g2 * s
            return gx, gy, None

    return [
        (fn, lambda a, b: (fn.apply(a, 2.5, b) ** 2).sum()),
        (SinCos, lambda a, b: (SinCos.apply(a * b)[0] * SinCos.apply(b)[1]).sum()),
        (Mixed, lambda a, b: (Mixed.apply(a, b, 3)[0].exp() + Mixed.apply(b, a, 1)[1]).sum()),
        (Mixed, lambda a, b: Mixed.apply(a, b, 2)[1].sum()),
    ]


@pytest.mark.parity
@pytest.mark.parametrize("case", range(4))
def test_parity_with_torch(case: int) -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(case)
    arrays = [rng.standard_normal((3, 4)) for _ in range(2)]
    results = []
    for L in (torch, lucid):
        cls, f = _parity_cases(L)[case]
        a, b = (L.tensor(v, requires_grad=True) for v in arrays)
        loss = f(a, b)
        ga, gb = L.autograd.grad(loss, (a, b), create_graph=True)
        (gga,) = L.autograd.grad((ga * gb).sum(), a, allow_unused=True)
        names = loss.grad_fn.name(), cls.__name__ + "Backward"
        results.append((float(loss.detach()), ga.detach().numpy(), gb.detach().numpy(),
                        None if gga is None else gga.detach().numpy(), names))  # fmt: skip
    (lt, *tg, tn), (ll, *lg, ln) = results
    np.testing.assert_allclose(ll, lt, rtol=1e-10, atol=1e-12)
    for got, want in zip(lg, tg):
        assert (got is None) == (want is None)
        if want is not None:
            np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)
    assert ln == tn


# -- saved-tensor hooks see tensors in torch's saving order ---------------------------------------
_SAVE_ORDER_CASES: dict[str, Any] = {
    "mul": lambda L, a, b: a * b,
    "div": lambda L, a, b: a / b,
    "pow": lambda L, a, b: a**b,
    "mm": lambda L, a, b: a @ b,
    "mv": lambda L, a, b: a @ b[0],
    "atan2": lambda L, a, b: L.atan2(a, b),
    "maximum": lambda L, a, b: L.maximum(a, b),
    "minimum": lambda L, a, b: L.minimum(a, b),
    "remainder": lambda L, a, b: L.remainder(a, b),
    "logaddexp": lambda L, a, b: L.logaddexp(a, b),
    "clamp": lambda L, a, b: L.clamp(a, min=b - 1, max=b),
    "addcmul": lambda L, a, b: L.addcmul(a, a, b),
    "exp": lambda L, a, b: a.exp(),
}


def _packed_labels(L: ModuleType, name: str) -> list[str]:
    x = np.array([[0.3, 0.7], [1.1, 1.9]])
    y = np.array([[1.3, 2.3], [0.6, 1.7]])
    a, b = L.tensor(x, requires_grad=True), L.tensor(y, requires_grad=True)
    seen: list[Any] = []

    def pack(t: Any) -> Any:
        seen.append(t.detach().numpy().copy())
        return t

    with L.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = _SAVE_ORDER_CASES[name](L, a, b).detach().numpy()
    labels = []
    for v in seen:
        found = [k for k, r in (("a", x), ("b", y), ("out", out))
                 if v.shape == r.shape and np.allclose(v, r, rtol=0, atol=0)]  # fmt: skip
        labels.append(found[0] if found else f"other{list(v.shape)}")
    return labels


def test_pack_hooks_see_mul_operands_other_first() -> None:
    assert _packed_labels(lucid, "mul") == ["b", "a"]  # torch's MulBackward0: other, self
    assert _packed_labels(lucid, "pow") == ["b", "a", "out"]


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(_SAVE_ORDER_CASES))
def test_pack_hook_order_parity(name: str) -> None:
    torch = pytest.importorskip("torch")
    assert _packed_labels(lucid, name) == _packed_labels(torch, name)


# -- grad_fn names are torch's where the op is one node in both ----------------------------------
_NAME_CASES: dict[str, Any] = {
    "mm": lambda L, a: a @ a,
    "mv": lambda L, a: a @ a[0],
    "dot": lambda L, a: a[0] @ a[1],
    "bmm": lambda L, a: L.bmm(a[None], a[None]),
    "pow_tensor": lambda L, a: a ** (a + 2),
    "pow_scalar": lambda L, a: a**3.0,
    "cumsum": lambda L, a: a.cumsum(0),
    "cumprod": lambda L, a: a.cumprod(1),
    "amax": lambda L, a: a.amax(0),
    "amin": lambda L, a: a.amin(1),
    "max_dim": lambda L, a: a.max(1)[0],
    "cummin": lambda L, a: L.cummin(a, 0)[0],
    "tril": lambda L, a: a.tril(),
    "triu": lambda L, a: a.triu(1),
    "remainder": lambda L, a: L.remainder(a, a + 3),
    "fmod": lambda L, a: L.fmod(a, a + 3),
    "logaddexp2": lambda L, a: L.logaddexp2(a, a),
    "to_float32": lambda L, a: a.to(L.float32),
    "view": lambda L, a: a.reshape(-1),
    "inv": lambda L, a: L.linalg.inv(a + 3 * L.eye(3, dtype=a.dtype)),
    "det": lambda L, a: L.linalg.det(a),
    "logcumsumexp": lambda L, a: a.logcumsumexp(0),
    "pad": lambda L, a: L.nn.functional.pad(a, (1, 1)),
    "elu": lambda L, a: L.nn.functional.elu(a),
    "layer_norm": lambda L, a: L.nn.functional.layer_norm(a, (3,)),
    "sum": lambda L, a: a.sum(),
    "sum_dim": lambda L, a: a.sum(1),
    "mean": lambda L, a: a.mean(),
    "mean_dim": lambda L, a: a.mean(0, keepdim=True),
    "std": lambda L, a: a.std(1),
    "var": lambda L, a: L.var(a),
    "logsumexp": lambda L, a: a.logsumexp(1),
    "t": lambda L, a: a.t(),
    "t_fn": lambda L, a: L.t(a),
    "T": lambda L, a: a.T,
    "mT": lambda L, a: a.mT,
    "transpose": lambda L, a: a.transpose(0, 1),
    "swapaxes": lambda L, a: L.swapaxes(a, 1, 0),
    "permute": lambda L, a: a.permute(1, 0),
    "dist": lambda L, a: L.dist(a, a * 2),
    "dist_p1": lambda L, a: L.dist(a, a * 2, p=1),
}


def _node_name(L: ModuleType, name: str) -> str:
    a = L.tensor(np.arange(9.0).reshape(3, 3) / 9.0 + 0.1, requires_grad=True)
    return str(_NAME_CASES[name](L, a).grad_fn.name())


def test_grad_fn_names_follow_torch() -> None:
    assert _node_name(lucid, "mm") == "MmBackward0"
    assert _node_name(lucid, "cumsum") == "CumsumBackward0"


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(_NAME_CASES))
def test_grad_fn_name_parity(name: str) -> None:
    torch = pytest.importorskip("torch")
    assert _node_name(lucid, name) == _node_name(torch, name)


def test_non_tensor_inputs_and_outputs() -> None:
    """torch's test_custom_function_non_tensor_inputs_outputs and _no_tensors."""

    class Mixed(Function):
        @staticmethod
        def forward(ctx: Any, t1: Any, t2: Any, scale: int, t3: Any) -> Any:
            t4 = t1 + t2 * t3
            t5 = t1 * t2 + t3
            t4 *= scale
            t5 *= scale
            ctx.scale = scale
            ctx.save_for_backward(t1, t2, t3)
            return scale, t4, None, True, t5, "bar", t1

        @staticmethod
        @once_differentiable
        def backward(ctx: Any, *grads: Any) -> Any:
            assert len(grads) == 7
            assert grads[0] is None and grads[2] is None and grads[3] is None
            assert grads[5] is None
            scale = ctx.scale
            var1, var2, var3 = ctx.saved_tensors
            return (
                grads[1] * scale + grads[4] * var2 * scale + grads[6],
                grads[1] * var3 * scale + grads[4] * var1 * scale,
                None,
                grads[1] * var2 * scale + grads[4] * scale,
            )

    t1, t2 = _leaf(10), _leaf(10, seed=1)
    t3 = _leaf(10, seed=2).detach()
    res = Mixed.apply(t1, t2, 4, t3)
    assert res[0] == 4 and res[2] is None and res[3] is True and res[5] == "bar"
    assert res[1].requires_grad and res[4].requires_grad and res[6] is not t1
    lucid.autograd.backward([res[1].sum(), res[4].sum(), res[6].sum()])
    assert t1.grad is not None and t2.grad is not None and t3.grad is None

    def three(a: Any, b: Any, c: Any) -> Any:
        r = Mixed.apply(a, b, 4, c)
        return r[1], r[4], r[6]

    assert gradcheck(three, (t1, t2, t3), eps=1e-6, atol=1e-6, rtol=1e-4)
    assert Mixed.apply(0.5, 0.25, 3, 2.0) == (3, 3.0, None, True, 6.375, "bar", 0.5)


def test_an_invalid_gradient_shape_is_named() -> None:
    class Wrong(Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            return x * 2

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return lucid.ones(10)

    x = lucid.ones(5, 5, requires_grad=True)
    want = r"WrongBackward returned an invalid gradient at index 0 - got \[10\] but expected"
    with pytest.raises(RuntimeError, match=want):
        Wrong.apply(x).sum().backward()


@pytest.mark.parity
def test_unpack_hooks_run_in_torch_order() -> None:
    torch = pytest.importorskip("torch")

    def order(L: ModuleType) -> list[list[float]]:
        a = L.tensor([1.0, 2.0], requires_grad=True)
        b = L.tensor([3.0, 4.0], requires_grad=True)
        seen: list[list[float]] = []

        def unpack(t: Any) -> Any:
            seen.append(t.detach().reshape(-1).tolist())
            return t

        with L.autograd.graph.saved_tensors_hooks(lambda t: t, unpack):
            y = (a * b) ** b + L.clamp(a, b - 3, b) + (a.reshape(1, 2) @ b.reshape(2, 1))
        y.sum().backward()
        return seen

    assert order(lucid) == order(torch)


def test_torch_names_around_function() -> None:
    from lucid.autograd.function import FunctionCtx, InplaceFunction

    class ByVjp(Function):  # torch: vjp is another name for backward
        @staticmethod
        def forward(ctx: FunctionCtx, x: Any) -> Any:
            assert isinstance(ctx, FunctionCtx) and ctx.materialize_grads
            return x * 3

        @staticmethod
        def vjp(ctx: FunctionCtx, g: Any) -> Any:
            return g * 3

    x = _leaf(2)
    ByVjp.apply(x).sum().backward()
    _close(x.grad, np.full(2, 3.0))
    assert ByVjp.generate_vmap_rule is False

    class AddOne(InplaceFunction):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            return x + 1

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g

    y = AddOne.apply(x)
    assert y.grad_fn.name() == "AddOneBackward" and AddOne(inplace=True).inplace


def test_calling_an_instance_is_torchs_legacy_error() -> None:
    class Legacy(Function):
        def forward(self, x: Any) -> Any:  # type: ignore[override]
            return x

        def backward(self, g: Any) -> Any:  # type: ignore[override]
            return g

    with pytest.raises(RuntimeError, match="Legacy autograd function with non-static forward"):
        Legacy()(lucid.ones(3))


def test_an_array_returned_by_a_tensor_forward_is_named() -> None:
    class OldStyle(Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            return ctx.xp.multiply(x.detach().numpy(), 2.0)  # the array contract's habit

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g * 2

    with pytest.raises(TypeError, match=r"OldStyle.forward returned a numpy.ndarray: .* set "
                       r"forward_on_arrays = True on OldStyle"):  # fmt: skip
        OldStyle.apply(lucid.ones(2, requires_grad=True))


def test_node_repr_has_its_address() -> None:
    """A node prints in Python's default form, as torch's: ``<MulBackward0 object at 0x...>``
    (the autograd tutorial prints ``z.grad_fn``); a leaf's sink is ``AccumulateGrad`` without
    a module path, a custom Function's node is qualified by lucid.autograd.function."""
    x = lucid.ones(2, requires_grad=True)
    node = (x * 2).grad_fn
    assert repr(node) == f"<MulBackward0 object at {id(node):#x}>"
    assert str(node) == repr(node)
    sink = node.next_functions[0][0]
    assert repr(sink) == f"<AccumulateGrad object at {id(sink):#x}>"

    class Twice(Function):
        @staticmethod
        def forward(ctx: Any, a: Any) -> Any:
            return a * 2

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g * 2

    custom = Twice.apply(x).grad_fn
    assert repr(custom) == f"<lucid.autograd.function.TwiceBackward object at {id(custom):#x}>"
    # the tensor's own repr keeps torch's short form
    assert repr(x * 2) == "tensor([2., 2.], grad_fn=<MulBackward0>)"


@pytest.mark.parity
def test_node_repr_parity() -> None:
    torch = pytest.importorskip("torch")

    class TwiceT(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, a: Any) -> Any:
            return a * 2

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g * 2

    class TwiceL(Function):
        @staticmethod
        def forward(ctx: Any, a: Any) -> Any:
            return a * 2

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g * 2

    def shapes(L: ModuleType, fn: Any) -> list[str]:
        x = L.ones(2, requires_grad=True)
        nodes = [(x + 1).grad_fn, (x + 1).grad_fn.next_functions[0][0], fn.apply(x).grad_fn]
        # the address is the object's: replace it to compare the rest
        return [repr(n).replace(f"{id(n):#x}", "ADDR").replace("torch.", "lucid.") for n in nodes]

    assert shapes(lucid, TwiceL) == [s.replace("TwiceT", "TwiceL") for s in shapes(torch, TwiceT)]
