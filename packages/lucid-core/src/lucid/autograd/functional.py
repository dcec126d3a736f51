"""Higher-level autograd: jacobian, hessian, vjp, jvp, vhp, hvp (``torch.autograd.functional``).

``inputs`` is a Tensor or a tuple of Tensors and ``func`` returns a Tensor or a tuple of them.
Everything is built on reverse mode: ``jvp`` and ``hvp`` use the double-backward trick (the
vjp is linear in its vector, so differentiating it again with respect to that vector gives
the forward-mode product), so they need ops whose backward is differentiable.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lucid._tensor import Tensor
from lucid.autograd import grad as _grad
from lucid.autograd import grad_mode
from lucid.ops.join import stack


def _as_tuple(x: Any, arg: str, fn: str) -> tuple[tuple[Tensor, ...], bool]:
    is_tuple = isinstance(x, (tuple, list))
    items = tuple(x) if is_tuple else (x,)
    for i, t in enumerate(items):
        if not isinstance(t, Tensor):
            where = f"{arg}[{i}]" if is_tuple else arg
            raise TypeError(
                f"{fn}: expected {arg} to be a Tensor or a tuple of Tensors, but {where} is "
                f"{type(t).__name__}"
            )
    return items, is_tuple


def _prepare(inputs: tuple[Tensor, ...], create_graph: bool) -> tuple[Tensor, ...]:
    """Inputs func is called on: fresh leaves, or the originals to keep their graph."""
    return tuple(
        t if create_graph and t.requires_grad else t.detach().requires_grad_(True) for t in inputs
    )


def _outputs(func: Callable[..., Any], inputs: tuple[Tensor, ...], fn: str) -> Any:
    with grad_mode.enable_grad():
        return _as_tuple(func(*inputs), "the output of func", fn)


def _call(func: Callable[..., Any], ins: tuple[Tensor, ...], create_graph: bool,
          fn: str) -> tuple[tuple[Tensor, ...], tuple[Tensor, ...], bool]:  # fmt: skip
    """``func`` on prepared inputs: (the inputs, its outputs, whether it returned a tuple)."""
    xs = _prepare(ins, create_graph)
    outs, out_tuple = _outputs(func, xs, fn)
    return xs, outs, out_tuple


def _fill(
    grads: tuple[Any, ...], like: tuple[Tensor, ...], strict: bool, what: str
) -> tuple[Tensor, ...]:
    out = []
    for i, (g, ref) in enumerate(zip(grads, like)):
        if g is None:
            if strict:
                raise RuntimeError(
                    f"The output of the user-provided function is independent of {what} {i}. "
                    "This is not allowed in strict mode."
                )
            g = ref.new_zeros(ref.shape)
        out.append(g)
    return tuple(out)


def _finish(ts: tuple[Tensor, ...], create_graph: bool, is_tuple: bool) -> Any:
    ts = ts if create_graph else tuple(t.detach() for t in ts)
    return ts if is_tuple else ts[0]


def _check_v(v: Any, refs: tuple[Tensor, ...], name: str, fn: str) -> tuple[Tensor, ...]:
    if v is None:
        if len(refs) != 1 or refs[0].numel() != 1:
            raise RuntimeError(
                f"{fn}: The vector v can only be None if the {name} is a single Tensor with a "
                "single element."
            )
        return (refs[0].new_ones(refs[0].shape),)
    vs, _ = _as_tuple(v, "v", fn)
    if len(vs) != len(refs):
        raise RuntimeError(f"{fn}: v has {len(vs)} entries but the {name} has {len(refs)}")
    for i, (a, b) in enumerate(zip(vs, refs)):
        if a.shape != b.shape:
            raise RuntimeError(
                f"{fn}: Mismatch in shape: v[{i}] has a shape of {a.shape} and the {name}[{i}] "
                f"has a shape of {b.shape}."
            )
    return vs


def _grads(outs: Any, ins: Any, grad_outs: Any, create_graph: bool) -> tuple[Any, ...]:
    outs, ins = list(outs), list(ins)
    used = [k for k, o in enumerate(outs) if o.requires_grad]
    if not used:
        return (None,) * len(ins)
    return _grad([outs[k] for k in used], ins, [grad_outs[k] for k in used], retain_graph=True,
                 create_graph=create_graph, allow_unused=True)  # fmt: skip


def _grad_dot(gs: Any, vs: Any, wrt: Any, create_graph: bool) -> tuple[Any, ...]:
    """The gradient of ``sum(<g, v>)`` with respect to ``wrt``, over the ``gs`` that depend on
    it (None for each of ``wrt`` when none does): the second backward of jvp and hvp."""
    pairs = [(g, v_) for g, v_ in zip(gs, vs) if g is not None and g.requires_grad]
    if not pairs:
        return (None,) * len(wrt)
    return tuple(_grad([g for g, _ in pairs], list(wrt), [v_ for _, v_ in pairs],
                       create_graph=create_graph, allow_unused=True))  # fmt: skip


def vjp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:  # fmt: skip
    """``(func(inputs), v^T J)``: the vector-Jacobian product (one backward pass)."""
    ins, in_tuple = _as_tuple(inputs, "inputs", "vjp")
    xs, outs, out_tuple = _call(func, ins, create_graph, "vjp")
    vs = _check_v(v, outs, "output of func", "vjp")
    res = _fill(_grads(outs, xs, vs, create_graph), xs, strict, "input")
    return _finish(outs, create_graph, out_tuple), _finish(res, create_graph, in_tuple)


def jvp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:  # fmt: skip
    """``(func(inputs), J v)``: the Jacobian-vector product, by the double-backward trick."""
    ins, in_tuple = _as_tuple(inputs, "inputs", "jvp")
    vs = _check_v(v, ins, "input", "jvp")
    xs, outs, out_tuple = _call(func, ins, create_graph, "jvp")
    dummies = tuple(o.new_zeros(o.shape).requires_grad_(True) for o in outs)
    with grad_mode.enable_grad():
        gx = _grads(outs, xs, dummies, create_graph=True)
    res = _fill(_grad_dot(gx, vs, dummies, create_graph), outs, strict, "output")
    return _finish(outs, create_graph, out_tuple), _finish(res, create_graph, out_tuple)


def jacobian(func: Callable[..., Any], inputs: Any, create_graph: bool = False,
             strict: bool = False, vectorize: bool = False,
             strategy: str = "reverse-mode") -> Any:  # fmt: skip
    """The Jacobian: ``J[i][j]`` has shape ``outputs[i].shape + inputs[j].shape``.

    One tensor in and out gives one tensor; tuples give tuples (of tuples), as PyTorch.
    ``strategy="reverse-mode"`` runs one backward per output entry; ``"forward-mode"`` one
    :func:`jvp` per input entry (cheaper when there are fewer inputs than outputs).
    ``vectorize`` is accepted for compatibility; the rows are computed one by one.
    """
    if strategy not in ("reverse-mode", "forward-mode"):
        raise ValueError(f'jacobian: expected strategy "reverse-mode" or "forward-mode", got '
                         f"{strategy!r}")  # fmt: skip
    if strategy == "forward-mode":
        return _forward_jacobian(func, inputs, create_graph, strict)

    ins, in_tuple = _as_tuple(inputs, "inputs", "jacobian")
    xs, outs, out_tuple = _call(func, ins, create_graph, "jacobian")
    per_output = []
    for o in outs:
        rows: list[list[Tensor]] = [[] for _ in xs]
        for k in range(o.numel()):
            seed = o.new_zeros(o.numel())
            seed[k] = 1
            gs = _fill(_grads([o], xs, [seed.reshape(o.shape)], create_graph), xs, strict,
                       "input")  # fmt: skip
            for j, g in enumerate(gs):
                rows[j].append(g)
        blocks = [_block(r, 0, o, x, create_graph) for x, r in zip(xs, rows)]
        per_output.append(tuple(blocks) if in_tuple else blocks[0])
    return tuple(per_output) if out_tuple else per_output[0]


def _block(parts: list[Tensor], dim: int, o: Tensor, x: Tensor, create_graph: bool) -> Tensor:
    """One Jacobian block ``d o / d x`` (shape ``o.shape + x.shape``) from its rows (dim 0) or
    columns (dim -1); zeros when ``o`` does not depend on ``x``."""
    if not parts:
        return x.new_zeros(o.shape + x.shape)
    block = stack(parts, dim).reshape(o.shape + x.shape)
    return block if create_graph else block.detach()


def _forward_jacobian(func: Callable[..., Any], inputs: Any, create_graph: bool,
                      strict: bool) -> Any:  # fmt: skip
    """The Jacobian column by column: ``J e_k`` through :func:`jvp` for each input entry."""

    ins, in_tuple = _as_tuple(inputs, "inputs", "jacobian")
    outs, out_tuple = _outputs(func, tuple(t.detach() for t in ins), "jacobian")
    cols: list[list[list[Tensor]]] = [[[] for _ in ins] for _ in outs]
    for j, x in enumerate(ins):
        for k in range(x.numel()):
            vs = [t.new_zeros(t.shape) for t in ins]
            flat = vs[j].reshape(-1)
            flat[k] = 1
            vs[j] = flat.reshape(x.shape)
            _, jv = jvp(func, tuple(ins), tuple(vs), create_graph=create_graph, strict=strict)
            for i, col in enumerate(jv if isinstance(jv, tuple) else (jv,)):
                cols[i][j].append(col)
    result = []
    for o, per_input in zip(outs, cols):
        blocks = [_block(c, -1, o, x, create_graph) for x, c in zip(ins, per_input)]
        result.append(tuple(blocks) if in_tuple else blocks[0])
    return tuple(result) if out_tuple else result[0]


def _scalar_func(func: Callable[..., Any], fn: str) -> Callable[..., Tensor]:
    def wrapped(*xs: Tensor) -> Tensor:
        out = func(*xs)
        if not isinstance(out, Tensor) or out.numel() != 1:
            got = f"a Tensor with {out.numel()} elements" if isinstance(out, Tensor) else (
                type(out).__name__)  # fmt: skip
            raise RuntimeError(
                f"{fn}: The function given to {fn} should return a single Tensor with a single "
                f"element, got {got}"
            )
        return out

    return wrapped


def hessian(func: Callable[..., Any], inputs: Any, create_graph: bool = False,
            strict: bool = False, vectorize: bool = False,
            outer_jacobian_strategy: str = "reverse-mode") -> Any:  # fmt: skip
    """The Hessian of a scalar function; ``H[i][j]`` has shape ``in[i].shape + in[j].shape``.
    ``vectorize`` and ``outer_jacobian_strategy`` are :func:`jacobian`'s ``vectorize`` and
    ``strategy`` for the outer Jacobian (of the gradient), as torch's."""
    ins, in_tuple = _as_tuple(inputs, "inputs", "hessian")
    scalar = _scalar_func(func, "hessian")

    def gradient(*xs: Tensor) -> tuple[Tensor, ...]:
        out = scalar(*xs)
        with grad_mode.enable_grad():
            gs = _grads([out], xs, [out.new_ones(out.shape)], create_graph=True)
        return _fill(gs, xs, strict, "input")

    jac = jacobian(gradient, ins, create_graph=create_graph, strict=strict, vectorize=vectorize,
                   strategy=outer_jacobian_strategy)  # fmt: skip
    return jac if in_tuple else jac[0][0]


def vhp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:  # fmt: skip
    """``(func(inputs), v^T H)`` for a scalar function (two backward passes)."""
    return _hessian_product("vhp", func, inputs, v, create_graph, strict)


def hvp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:  # fmt: skip
    """``(func(inputs), H v)``; the Hessian of a twice-differentiable function is symmetric,
    so this equals :func:`vhp` (computed the same way: two backward passes)."""
    return _hessian_product("hvp", func, inputs, v, create_graph, strict)


def _hessian_product(
    fn: str, func: Callable[..., Any], inputs: Any, v: Any, create_graph: bool, strict: bool
) -> tuple[Any, Any]:
    ins, in_tuple = _as_tuple(inputs, "inputs", fn)
    vs = _check_v(v, ins, "input", fn)
    xs = _prepare(ins, create_graph)
    with grad_mode.enable_grad():
        out = _scalar_func(func, fn)(*xs)
        gs = _grads([out], xs, [out.new_ones(out.shape)], create_graph=True)
    res = _fill(_grad_dot(gs, vs, xs, create_graph), xs, strict, "input")
    return _finish((out,), create_graph, False), _finish(res, create_graph, in_tuple)


__all__ = ["hessian", "hvp", "jacobian", "jvp", "vhp", "vjp"]
