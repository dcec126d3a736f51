"""Finite-difference checks of analytical gradients (float64), as ``torch.autograd.gradcheck``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np


class GradcheckError(RuntimeError):
    """Raised when analytical and numerical gradients disagree."""


def _tensors(inputs: Any) -> tuple[Any, ...]:
    return tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)


def _flat_outputs(fn: Callable[..., Any], inputs: Sequence[Any]) -> list[Any]:
    from lucid._tensor import Tensor

    out = fn(*inputs)
    outs = out if isinstance(out, (tuple, list)) else (out,)
    return [o for o in outs if isinstance(o, Tensor) and o.dtype.is_floating_point]


def _numerical(fn: Callable[..., Any], inputs: Sequence[Any], i: int, eps: float) -> list[Any]:
    """d(outputs)/d(inputs[i]) by central differences: one matrix (n_in, n_out) per output."""
    x = inputs[i]
    flat = x.data.reshape(-1)
    if not np.shares_memory(flat, x.data):
        raise ValueError("gradcheck needs contiguous numpy-backed inputs")
    cols: list[list[Any]] = []
    for k in range(flat.size):
        orig = flat[k].item()
        flat[k] = orig + eps
        plus = [np.array(o.data, dtype=np.float64).ravel() for o in _flat_outputs(fn, inputs)]
        flat[k] = orig - eps
        minus = [np.array(o.data, dtype=np.float64).ravel() for o in _flat_outputs(fn, inputs)]
        flat[k] = orig
        cols.append([(p - m) / (2 * eps) for p, m in zip(plus, minus)])
    n_out = len(cols[0]) if cols else 0
    return [np.stack([c[j] for c in cols]) if cols else np.zeros((0, 0)) for j in range(n_out)]


def _analytical(fn: Callable[..., Any], inputs: Sequence[Any], i: int) -> list[Any]:
    from lucid._creation import zeros_like
    from lucid.autograd import grad

    outs = _flat_outputs(fn, inputs)
    result = []
    for o in outs:
        rows = []
        flat_n = o.numel()
        for k in range(flat_n):
            seed = zeros_like(o)
            seed.data.reshape(-1)[k] = 1.0
            if not o.requires_grad:
                rows.append(np.zeros(inputs[i].numel()))
                continue
            (g,) = grad(o, inputs[i], seed, retain_graph=True, allow_unused=True)
            rows.append(np.zeros(inputs[i].numel()) if g is None else g.data.reshape(-1).copy())
        result.append(np.stack(rows, axis=1) if rows else np.zeros((inputs[i].numel(), 0)))
    return result


def gradcheck(
    fn: Callable[..., Any],
    inputs: Any,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
) -> bool:
    """Compare backward's gradients with central finite differences.

    Inputs that require grad should be float64 tensors; returns True or raises GradcheckError
    with the first mismatching input, the two Jacobians and the largest difference.
    """
    ins = _tensors(inputs)
    for idx, x in enumerate(ins):
        if not (hasattr(x, "requires_grad") and x.requires_grad):
            continue
        if x.dtype.name != "float64":
            import warnings

            warnings.warn(
                f"input {idx} is {x.dtype}, not float64: gradcheck may fail from rounding",
                stacklevel=2,
            )
        numeric = _numerical(fn, ins, idx, eps)
        analytic = _analytical(fn, ins, idx)
        for j, (n, a) in enumerate(zip(numeric, analytic)):
            if not np.allclose(a, n, atol=atol, rtol=rtol):
                if not raise_exception:
                    return False
                diff = np.max(np.abs(a - n))
                raise GradcheckError(
                    f"Jacobian mismatch for output {j} with respect to input {idx} "
                    f"(max abs difference {diff:.3g}),\nnumerical:{n}\nanalytical:{a}\n"
                )
    return True


def gradgradcheck(
    fn: Callable[..., Any],
    inputs: Any,
    grad_outputs: Any = None,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
) -> bool:
    """Check second derivatives: gradcheck of (inputs, v) -> vjp(fn, inputs, v)."""
    from lucid._creation import randn
    from lucid.autograd import grad

    ins = _tensors(inputs)
    diff_idx = [i for i, x in enumerate(ins) if getattr(x, "requires_grad", False)]
    outs = _flat_outputs(fn, ins)
    if grad_outputs is None:
        grad_outputs = [randn(*o.shape, dtype=o.dtype).requires_grad_() for o in outs]
    gos = list(_tensors(grad_outputs))
    n_in = len(ins)

    def vjp(*args: Any) -> Any:
        xs, vs = args[:n_in], args[n_in:]
        ys = _flat_outputs(fn, xs)
        gs = grad(ys, [xs[i] for i in diff_idx], list(vs), create_graph=True, allow_unused=True)
        return tuple(g for g in gs if g is not None)

    return gradcheck(vjp, (*ins, *gos), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)  # fmt: skip
