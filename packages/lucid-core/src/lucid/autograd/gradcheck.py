"""Finite-difference checks of analytical gradients (float64), as ``torch.autograd.gradcheck``.

The numerical Jacobian comes from central differences (the input's data is perturbed one
entry at a time, on any backend); the analytical one from one backward pass per output entry,
taking the gradients of every differentiable input at once. A mismatch names the output, the
input, the entry where they differ most, and both Jacobians.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from lucid._creation import randn
from lucid._generator import Generator
from lucid._tensor import Tensor
from lucid.autograd.engine import grad


class GradcheckError(RuntimeError):
    """Raised when analytical and numerical gradients disagree."""


def _tensors(inputs: Any) -> tuple[Any, ...]:
    return tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)


def _flat_outputs(fn: Callable[..., Any], inputs: Sequence[Any]) -> list[Any]:

    out = fn(*inputs)
    outs = out if isinstance(out, (tuple, list)) else (out,)
    flat: list[Any] = []
    for o in outs:
        if isinstance(o, Tensor) and o.dtype.is_floating_point:
            flat.append(o)
        elif isinstance(o, Tensor) and o.dtype.is_complex:
            flat += [o.real, o.imag]  # a complex output is checked as its two real parts
    return flat


def _realified(fn: Callable[..., Any], ins: tuple[Any, ...]) -> tuple[Any, tuple[Any, ...]]:
    """Complex inputs that require grad as real (..., 2) pairs, and ``fn`` of those.

    PyTorch's convention makes the gradient of a complex input ``dL/dx + i dL/dy``: on the pair
    it is ``(dL/dx, dL/dy)``, the real gradient, so the real check covers the convention.
    """
    cidx = [i for i, x in enumerate(ins) if getattr(x, "requires_grad", False)
            and x.dtype.is_complex]  # fmt: skip
    if not cidx:
        return fn, ins
    pairs = list(ins)
    for i in cidx:
        x = ins[i]
        host = np.asarray(x.backend.to_numpy(x._data))
        part = "float64" if host.dtype == np.complex128 else "float32"
        pair = np.stack([host.real, host.imag], axis=-1)
        pairs[i] = Tensor(pair, dtype=part, device=x.device).requires_grad_()

    def on_pairs(*args: Any) -> Any:
        xs = list(args)
        for i in cidx:
            xs[i] = xs[i][..., 0] + xs[i][..., 1] * 1j
        return fn(*xs)

    return on_pairs, tuple(pairs)


def _host(t: Any) -> np.ndarray:
    """A float64 NumPy copy of a tensor's values, whatever its backend."""
    return np.array(t.backend.to_numpy(t._data), dtype=np.float64).reshape(-1)


def _numerical(fn: Callable[..., Any], inputs: Sequence[Any], i: int, eps: float) -> list[Any]:
    """d(outputs)/d(inputs[i]) by central differences: one matrix (n_in, n_out) per output."""
    x = inputs[i]
    backend = x.backend
    original = x._data
    # A C-ordered copy, so that ``flat`` is a view of it (of a transposed input, reshape would
    # copy and the perturbations would be lost): perturbations are written here, then put on
    # the backend.
    base = np.array(backend.to_numpy(original), order="C")
    flat = base.reshape(-1)
    cols: list[list[Any]] = []
    try:
        for k in range(flat.size):
            orig = flat[k].item()
            flat[k] = orig + eps
            x._data = backend.from_numpy(base.copy())
            plus = [_host(o) for o in _flat_outputs(fn, inputs)]
            flat[k] = orig - eps
            x._data = backend.from_numpy(base.copy())
            minus = [_host(o) for o in _flat_outputs(fn, inputs)]
            flat[k] = orig
            cols.append([(p - m) / (2 * eps) for p, m in zip(plus, minus)])
    finally:
        x._data = original
    if not cols:  # an empty input: empty Jacobians
        return [np.zeros((0, o.numel())) for o in _flat_outputs(fn, inputs)]
    return [np.stack([c[j] for c in cols]) for j in range(len(cols[0]))]


def _analytical(fn: Callable[..., Any], inputs: Sequence[Any], idx: list[int]) -> list[list[Any]]:
    """``result[i][j]``: the (n_in_i, n_out_j) Jacobian block of output j w.r.t. input idx[i]."""

    outs = _flat_outputs(fn, inputs)
    targets = [inputs[i] for i in idx]
    blocks: list[list[Any]] = [[] for _ in idx]
    for o in outs:
        rows: list[list[np.ndarray]] = [[] for _ in idx]
        for k in range(o.numel()):
            if not o.requires_grad:
                for r, t in zip(rows, targets):
                    r.append(np.zeros(t.numel()))
                continue
            onehot = np.zeros(o.numel())
            onehot[k] = 1.0
            seed = Tensor(onehot.reshape(o.shape), dtype=o.dtype, device=o.device)
            gs = grad(o, targets, seed, retain_graph=True, allow_unused=True)
            for r, g, t in zip(rows, gs, targets):
                r.append(np.zeros(t.numel()) if g is None else _host(g))
        for b, r, t in zip(blocks, rows, targets):
            b.append(np.stack(r, axis=1) if r else np.zeros((t.numel(), 0)))
    return blocks


def _mismatch(a: np.ndarray, n: np.ndarray, j: int, idx: int) -> str:
    diff = np.abs(a - n)
    worst = np.unravel_index(int(np.argmax(diff)), diff.shape) if diff.size else (0, 0)
    return (
        f"Jacobian mismatch for output {j} with respect to input {idx} (max abs difference "
        f"{float(diff.max()) if diff.size else 0:.3g} at input entry {worst[0]}, output entry "
        f"{worst[1]}: analytical {a[worst]:.6g}, numerical {n[worst]:.6g}),\n"
        f"numerical:{n}\nanalytical:{a}\n"
    )


def _unrun_checks(**requested: bool) -> None:
    """Warn for the extra checks torch's gradcheck can add that lucid's does not run."""
    for name, on in requested.items():
        if on:
            warnings.warn(
                f"gradcheck: {name}=True is not run by lucid's gradcheck; it compares the "
                "backward Jacobians with finite differences only",
                stacklevel=3,
            )


def gradcheck(
    func: Callable[..., Any],
    inputs: Any,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_batched_forward_grad: bool = False,
    check_forward_ad: bool = False,
    check_backward_ad: bool = True,
    fast_mode: bool = False,
    masked: bool | None = None,
) -> bool:
    """Compare backward's gradients with central finite differences.

    Inputs that require grad should be float64 (or complex128) tensors: a complex input is
    checked as its real and imaginary parts, in PyTorch's convention (its gradient is
    ``dL/dx + i dL/dy``), and so is a complex output. Returns True or raises GradcheckError
    with the first mismatching input, the two Jacobians and the largest difference.

    torch's other options are taken: ``fast_mode=True`` still compares the whole Jacobians
    (which torch's fast mode samples), ``check_backward_ad=False`` skips the comparison,
    ``nondet_tol`` and ``masked`` change nothing (lucid's backward is deterministic, its
    sparse inputs are not checked), and the extra checks ``check_grad_dtypes``,
    ``check_batched_grad``, ``check_batched_forward_grad`` and ``check_forward_ad`` are not
    run (a warning says so when one is asked for); ``check_undefined_grad`` is not run either.
    """
    _unrun_checks(check_grad_dtypes=check_grad_dtypes, check_batched_grad=check_batched_grad,
                  check_batched_forward_grad=check_batched_forward_grad,
                  check_forward_ad=check_forward_ad)  # fmt: skip
    fn = func  # torch's parameter name outside, the short one inside
    ins = _tensors(inputs)
    idx = [i for i, x in enumerate(ins) if getattr(x, "requires_grad", False)]
    if not idx:
        raise ValueError("gradcheck expects at least one input tensor to require gradient")
    for i in idx:
        if ins[i].dtype.name not in ("float64", "complex128"):
            warnings.warn(
                f"input {i} is {ins[i].dtype}, not float64: gradcheck may fail from rounding",
                stacklevel=2,
            )
    if not check_backward_ad:
        return True
    fn, ins = _realified(fn, ins)
    analytic = _analytical(fn, ins, idx)
    for pos, i in enumerate(idx):
        numeric = _numerical(fn, ins, i, eps)
        for j, (n, a) in enumerate(zip(numeric, analytic[pos])):
            if a.shape != n.shape:
                raise GradcheckError(
                    f"output {j}: analytical Jacobian has shape {a.shape} but the numerical one "
                    f"{n.shape} (with respect to input {i})"
                )
            if not np.allclose(a, n, atol=atol, rtol=rtol):
                if not raise_exception:
                    return False
                raise GradcheckError(_mismatch(a, n, j, i))
    return True


def gradgradcheck(
    func: Callable[..., Any],
    inputs: Any,
    grad_outputs: Any = None,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    gen_non_contig_grad_outputs: bool = False,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_fwd_over_rev: bool = False,
    check_rev_over_rev: bool = True,
    fast_mode: bool = False,
    masked: bool = False,
) -> bool:
    """Check second derivatives: gradcheck of (inputs, v) -> vjp(fn, inputs, v).

    Without ``grad_outputs`` the vectors v are drawn from a private generator (fixed seed),
    so the check is reproducible and leaves the global random stream untouched. torch's other
    options are taken as :func:`gradcheck` takes them (``check_rev_over_rev=False`` skips the
    check, ``check_fwd_over_rev`` is not run; ``gen_non_contig_grad_outputs`` changes nothing).
    """
    _unrun_checks(check_grad_dtypes=check_grad_dtypes, check_batched_grad=check_batched_grad,
                  check_fwd_over_rev=check_fwd_over_rev)  # fmt: skip
    if not check_rev_over_rev:
        return True
    fn = func  # torch's parameter name outside, the short one inside

    ins = _tensors(inputs)
    diff_idx = [i for i, x in enumerate(ins) if getattr(x, "requires_grad", False)]
    outs = _flat_outputs(fn, ins)
    if grad_outputs is None:
        gen = Generator().manual_seed(0)
        grad_outputs = [
            randn(*o.shape, dtype=o.dtype, device=o.device, generator=gen).requires_grad_()
            for o in outs
        ]
    gos = list(_tensors(grad_outputs))
    n_in = len(ins)

    def vjp(*args: Any) -> Any:
        xs, vs = args[:n_in], args[n_in:]
        ys = _flat_outputs(fn, xs)
        gs = grad(ys, [xs[i] for i in diff_idx], list(vs), create_graph=True, allow_unused=True)
        return tuple(g for g in gs if g is not None)

    return gradcheck(vjp, (*ins, *gos), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)  # fmt: skip
