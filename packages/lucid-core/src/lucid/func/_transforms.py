"""Differentiation transforms: grad, grad_and_value, vjp, jvp, jacrev, jacfwd, hessian.

They are built on lucid's reverse-mode autograd. Each call of a transformed function gives its
differentiated inputs fresh graph positions (a new leaf, or — when an enclosing transform is
tracking the input — an alias node of its own), so gradients of one level never leak into
another (no "perturbation confusion"), and records the backward graph (``create_graph``) only
when an enclosing transform or the caller will differentiate the result again.

Forward mode is not a separate engine: ``jvp`` uses the double-vjp identity. The vjp
``u -> J^T u`` is linear in ``u``, so its own vjp with respect to ``u``, taken along the
tangent ``t``, is ``J t``. That is exact (no finite differences) wherever the ops' backward
formulas are differentiable, which lucid's are except for a few fused kernels. ``jacfwd``
computes the same Jacobian as ``jacrev`` (row by row in reverse mode): the matrix is
identical, only the cost model differs from PyTorch's.

Inside ``vmap`` the differentiated inputs are batched at every running vmap level first (one
graph position per batch element), and the engine walks the physical (batch-first) graph:
that is what makes ``vmap(grad(f))`` per-sample.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Sequence
from typing import Any

from lucid._creation import ones_like, zeros_like
from lucid._tensor import Tensor
from lucid.autograd import engine, function, grad_mode
from lucid.func._batched import BatchedTensor, active, lift, rewrap, select, size_at, strip, wrap
from lucid.func._pytree import TreeSpec, tree_flatten, tree_unflatten
from lucid.ops.join import stack
from lucid.ops.shape import Reshape

__all__ = ["grad", "grad_and_value", "hessian", "jacfwd", "jacrev", "jvp", "linearize", "vjp"]


class _Level(threading.local):
    """How many differentiation transforms are running ``func`` right now (this thread)."""

    depth = 0


_level = _Level()


class _Inside:
    """The block in which a transform runs ``func``: one level deeper, recording on."""

    def __enter__(self) -> None:
        _level.depth += 1
        self._grad = grad_mode.enable_grad()
        self._grad.__enter__()

    def __exit__(self, *exc: object) -> None:
        self._grad.__exit__(None, None, None)
        _level.depth -= 1


def _fresh(x: Any, fn: str) -> Tensor:
    """``x`` as a new position in the graph that gradients are taken with respect to."""
    if not isinstance(x, Tensor):
        raise ValueError(
            f"{fn}: Expected the arguments being differentiated to be Tensors (or pytrees of "
            f"them), but got {type(x).__name__}"
        )
    if not x.is_floating_point() and not x.is_complex():
        raise RuntimeError(
            f"{fn}: only Tensors of floating point and complex dtype can be differentiated, "
            f"got {x.dtype}"
        )
    if active.levels:  # inside vmap: one position per batch element (per-sample gradients)
        x = lift(x)
    if x.requires_grad and grad_mode.is_grad_enabled():
        alias: Tensor = Reshape.apply(x, tuple(x.shape))  # the outer graph stays linked
        return alias
    leaf: Tensor = x.detach().requires_grad_(True)
    return leaf


def _engine_grad(
    outputs: list[Tensor],
    inputs: list[Tensor],
    grad_outputs: list[Any] | None,
    retain_graph: bool,
    create_graph: bool,
) -> tuple[Tensor | None, ...]:
    """``engine.grad`` that also takes batched values (inside vmap): outputs and cotangents are
    batched at every running level, the graph is walked on the physical Tensors, and the
    gradients come back batched like the inputs (which ``_fresh`` batched at every level)."""
    if not active.levels:
        return engine.grad(outputs, inputs, grad_outputs=grad_outputs, retain_graph=retain_graph,
                           create_graph=create_graph, allow_unused=True)  # fmt: skip
    outs = [lift(o) for o in outputs]
    if grad_outputs is None:
        cots = [ones_like(strip(o)) for o in outs]
    else:
        cots = [strip(lift(c, _levels_of(o))) for c, o in zip(grad_outputs, outs)]
    got = engine.grad([strip(o) for o in outs], [strip(x) for x in inputs], grad_outputs=cots,
                      retain_graph=retain_graph, create_graph=create_graph,
                      allow_unused=True)  # fmt: skip
    return tuple(None if g is None else rewrap(g, x) for g, x in zip(got, inputs))


def _levels_of(t: Tensor) -> list[tuple[int, int]]:
    """The (level, size) pairs ``t`` is batched at, outermost first."""
    out = []
    while isinstance(t, BatchedTensor):
        out.append((t._level, t._phys.shape[0]))
        t = t._phys
    return out[::-1]


def _argnums(argnums: Any, nargs: int, fn: str) -> tuple[int, ...]:
    nums = (argnums,) if isinstance(argnums, int) else argnums
    if not isinstance(nums, tuple) or not nums or not all(isinstance(a, int) for a in nums):
        raise RuntimeError(
            f"{fn}: argnums must be int or Tuple[int, ...], got: {type(argnums).__name__}"
        )
    out = []
    for a in nums:
        if not -nargs <= a < nargs:
            raise RuntimeError(f"{fn}: Got argnums={a}, but only {nargs} positional inputs")
        out.append(a % nargs)
    if len(set(out)) != len(out):
        raise RuntimeError(f"{fn}: argnums must be unique, got {argnums}")
    return tuple(out)


class _Prepared:
    """The positional arguments with the differentiated ones replaced by fresh positions."""

    def __init__(self, args: tuple[Any, ...], nums: tuple[int, ...], fn: str) -> None:
        self.nums = nums
        self.specs: list[TreeSpec] = []
        self.inner: list[Tensor] = []  # every differentiated leaf, in argnums order
        self.tracked = False  # whether some original leaf was tracked by an outer graph
        new_args = list(args)
        for i in nums:
            leaves, spec = tree_flatten(args[i])
            fresh = [_fresh(x, fn) for x in leaves]
            self.tracked |= any(x.requires_grad for x in leaves)
            self.specs.append(spec)
            self.inner.extend(fresh)
            new_args[i] = tree_unflatten(fresh, spec)
        self.args = tuple(new_args)

    def regroup(self, flat: Sequence[Any], single: bool) -> Any:
        """Per-leaf results back into the arguments' structure (a tuple unless ``single``)."""
        trees, k = [], 0
        for spec in self.specs:
            n = spec.num_leaves
            trees.append(tree_unflatten(list(flat[k : k + n]), spec))
            k += n
        return trees[0] if single else tuple(trees)


def _keep_graph(prepared: _Prepared) -> bool:
    """Whether results must stay differentiable: an enclosing transform is running, or the
    caller passed inputs that an outer graph tracks."""
    return grad_mode.is_grad_enabled() and (_level.depth > 0 or prepared.tracked)


def _split_aux(output: Any, has_aux: bool, fn: str) -> tuple[Any, Any]:
    if not has_aux:
        return output, None
    if not isinstance(output, tuple) or len(output) != 2:
        raise RuntimeError(
            f"{fn}(f, ...)(*args): output of function f should be a tuple: (output, aux) if "
            "has_aux is True"
        )
    return output


def _detach_tree(tree: Any) -> Any:
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([x.detach() if isinstance(x, Tensor) else x for x in leaves], spec)


def _grads(
    outputs: list[Tensor],
    inputs: list[Tensor],
    cotangents: list[Tensor] | None,
    create_graph: bool,
) -> list[Tensor]:
    """d(outputs)/d(inputs) contracted with ``cotangents``; zeros where nothing flows."""
    cots: list[Any] = list(cotangents) if cotangents is not None else [None] * len(outputs)
    pairs = [(o, c) for o, c in zip(outputs, cots) if o.requires_grad]
    if not pairs:
        return [zeros_like(x) for x in inputs]
    got = _engine_grad(
        [o for o, _ in pairs],
        inputs,
        None if cotangents is None else [c for _, c in pairs],
        True,
        create_graph,
    )
    return [zeros_like(x) if g is None else g for g, x in zip(got, inputs)]


# -- grad ----------------------------------------------------------------------------------------
def grad_and_value(
    func: Callable[..., Any], argnums: int | tuple[int, ...] = 0, has_aux: bool = False
) -> Callable[..., Any]:
    """``func`` turned into one that returns ``(gradient, value)`` (``torch.func.grad_and_value``).

    ``func`` must return a one-element Tensor (with ``has_aux``: ``(that, aux)``, and the
    result is ``(gradient, (value, aux))``). The gradient has the structure of the argument
    ``argnums`` names (a tuple of them for a tuple of argnums); arguments may be pytrees.

    >>> import lucid
    >>> g, v = grad_and_value(lambda x: (x ** 2).sum())(lucid.tensor([1.0, 2.0]))
    >>> g, v
    (tensor([2., 4.]), tensor(5.))
    """

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        nums = _argnums(argnums, len(args), "grad_and_value")
        prepared = _Prepared(args, nums, "grad_and_value")
        with _Inside():
            output = func(*prepared.args, **kwargs)
        out, aux = _split_aux(output, has_aux, "grad_and_value")
        if not isinstance(out, Tensor):
            raise RuntimeError(
                f"grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got "
                f"{type(out).__name__}"
            )
        if out.numel() != 1:
            raise RuntimeError(
                f"grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got "
                f"tensor with {out.ndim} dims. Maybe you wanted to use the vjp or jacrev APIs "
                "instead?"
            )
        keep = _keep_graph(prepared)
        flat = _grads([out], prepared.inner, None, keep)
        grads = prepared.regroup(flat, isinstance(argnums, int))
        if not keep:
            out, aux = out.detach(), _detach_tree(aux)
        return (grads, (out, aux)) if has_aux else (grads, out)

    return wrapper


def grad(
    func: Callable[..., Any], argnums: int | tuple[int, ...] = 0, has_aux: bool = False
) -> Callable[..., Any]:
    """``func`` turned into its gradient (``torch.func.grad``): ``grad(f)(x)`` is df/dx.

    ``argnums`` picks the argument(s) to differentiate; with ``has_aux`` ``func`` returns
    ``(value, aux)`` and the result is ``(gradient, aux)``. Composes with the other
    transforms: ``grad(grad(f))``, ``vmap(grad(f))``, ``jacrev(grad(f))``.

    >>> import lucid
    >>> grad(lambda x: x.sin().sum())(lucid.tensor([0.0]))
    tensor([1.])
    >>> grad(grad(lambda x: x.sin().sum()))(lucid.tensor([0.0]))
    tensor([0.])
    """
    gv = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        grads, value = gv(*args, **kwargs)
        return (grads, value[1]) if has_aux else grads

    return wrapper


# -- vjp -----------------------------------------------------------------------------------------
def vjp(func: Callable[..., Any], *primals: Any, has_aux: bool = False) -> tuple[Any, ...]:
    """``(func(*primals), vjp_fn)`` where ``vjp_fn(cotangents)`` gives the vector-Jacobian
    products, one per primal, as a tuple (``torch.func.vjp``). ``cotangents`` has the
    structure of ``func``'s output; ``vjp_fn`` may be called many times. With ``has_aux``
    the result is ``(output, vjp_fn, aux)``.

    >>> import lucid
    >>> out, vjp_fn = vjp(lambda x: x * 3.0, lucid.tensor([1.0, 2.0]))
    >>> vjp_fn(lucid.tensor([1.0, 1.0]))
    (tensor([3., 3.]),)
    """
    if not callable(func):
        raise TypeError(f"vjp expects a callable, but got {type(func).__name__}")
    prepared = _Prepared(primals, tuple(range(len(primals))), "vjp")
    with _Inside():
        output = func(*prepared.args)
    out, aux = _split_aux(output, has_aux, "vjp")
    out_leaves, out_spec = tree_flatten(out)
    for o in out_leaves:
        if not isinstance(o, Tensor):
            raise RuntimeError(
                f"vjp(f, *primals): Expected f(*primals) to return only tensors, got unsupported "
                f"type {type(o).__name__}"
            )
    keep_at_call = _keep_graph(prepared)
    recorded_levels = {level for level, _ in active.levels}

    def vjp_fn(
        cotangents: Any, *, retain_graph: bool = True, create_graph: bool | None = None
    ) -> Any:
        cots, cot_spec = tree_flatten(cotangents)
        late = _late_level(cots, recorded_levels)
        if late:  # vmap(vjp_fn) over a graph recorded outside that vmap: element by element
            return _per_element(
                lambda one: vjp_fn(one, retain_graph=retain_graph, create_graph=create_graph),
                cots, cot_spec, late,
            )  # fmt: skip
        if cot_spec != out_spec:
            raise RuntimeError(
                "Expected pytree structure of cotangents to be the same as pytree structure of "
                f"outputs to the function. cotangents: {cot_spec!r}, primal output: {out_spec!r}"
            )
        for c, o in zip(cots, out_leaves):
            if not isinstance(c, Tensor) or tuple(c.shape) != tuple(o.shape):
                shape = tuple(c.shape) if isinstance(c, Tensor) else type(c).__name__
                raise RuntimeError(
                    f"vjp: Mismatch in shape: a cotangent has a shape of {shape} and the output "
                    f"it belongs to has a shape of {tuple(o.shape)}."
                )
        keep = create_graph if create_graph is not None else (
            keep_at_call or (grad_mode.is_grad_enabled()
                             and (_level.depth > 0 or any(c.requires_grad for c in cots)))
        )  # fmt: skip
        with _GraphLevels(recorded_levels):
            flat = _grads(out_leaves, prepared.inner, cots, keep)
        if not keep:
            flat = [g.detach() for g in flat]
        return prepared.regroup(flat, False)

    shown = out if keep_at_call else _detach_tree(out)
    if has_aux:
        return shown, vjp_fn, (aux if keep_at_call else _detach_tree(aux))
    return shown, vjp_fn


def _late_level(leaves: list[Any], recorded: set[int]) -> int:
    """The innermost vmap level some leaf is batched at that the graph was not recorded under
    (0: none). A function a transform returns (``vjp_fn``, ``jvp_fn``) may be called inside a
    ``vmap`` that started after the graph was recorded: the graph knows nothing of that level."""
    late = 0
    for leaf in leaves:
        if type(leaf) is BatchedTensor and leaf._level not in recorded:
            late = max(late, leaf._level)
    return late


class _GraphLevels:
    """The block in which a graph recorded under the vmap ``levels`` is differentiated: vmaps
    that started later (and that nothing here is batched at, ``_per_element`` took those
    apart) are hidden, or the engine would broadcast along them."""

    def __init__(self, levels: set[int]) -> None:
        self._levels = levels

    def __enter__(self) -> None:
        self._saved = active.levels
        active.levels = [pair for pair in self._saved if pair[0] in self._levels]

    def __exit__(self, *exc: object) -> None:
        active.levels = self._saved


def _per_element(fn: Callable[[Any], Any], leaves: list[Any], spec: TreeSpec, level: int) -> Any:
    """``fn`` on each batch element of ``level`` (the leaves sliced there), results stacked and
    batched at ``level`` again: ``fn`` is linear in its argument and exact element by element."""
    results = [tree_flatten(fn(tree_unflatten([select(x, level, i) for x in leaves], spec)))
               for i in range(size_at(level))]  # fmt: skip
    out_spec = results[0][1]
    columns = zip(*[flat for flat, _ in results])
    return tree_unflatten([wrap(stack(list(col)), level) for col in columns], out_spec)


# -- jvp -----------------------------------------------------------------------------------------
def _transposed_jvps(outputs: list[Tensor], inputs: list[Tensor], us: list[Tensor]) -> list[Tensor]:
    """Forward mode's first pass, ``u -> J^T u`` recorded: differentiating it in ``u`` along
    the tangents gives ``J t``. A custom Function's node stands for its ``jvp`` in it, so that
    ``jvp`` and ``linearize`` use the Function's forward rule, as torch.func's do."""
    with function.jvp_pass():
        return _grads(outputs, inputs, us, True)


def jvp(
    func: Callable[..., Any],
    primals: Any,
    tangents: Any,
    *,
    strict: bool = False,
    has_aux: bool = False,
) -> tuple[Any, ...]:
    """``(func(*primals), J @ tangents)``: the Jacobian-vector product (``torch.func.jvp``).

    ``primals`` and ``tangents`` are tuples of the same structure. Computed with the
    double-vjp identity on reverse mode (exact; it needs ops whose backward is
    differentiable). ``jvp(grad(f), (x,), (v,))`` is the Hessian-vector product. A custom
    ``autograd.Function`` contributes through its ``jvp`` staticmethod, never its ``backward``
    (as in torch.func; one without ``jvp`` raises torch's NotImplementedError).

    >>> import lucid
    >>> jvp(lambda x: x ** 2, (lucid.tensor([3.0]),), (lucid.tensor([1.0]),))
    (tensor([9.]), tensor([6.]))
    """
    if strict:
        raise RuntimeError("jvp(f, primals, tangents, strict=True) is not implemented in lucid "
                           "(nor in torch.func): use strict=False")  # fmt: skip
    if not isinstance(primals, tuple) or not isinstance(tangents, tuple):
        raise RuntimeError(
            "jvp(f, primals, tangents): Expected primals and tangents to be tuples. E.g. "
            f"`primals=(x,)`, got {type(primals).__name__} and {type(tangents).__name__}"
        )
    p_leaves, p_spec = tree_flatten(primals)
    t_leaves, t_spec = tree_flatten(tangents)
    if p_spec != t_spec:
        raise RuntimeError(
            "jvp(f, primals, tangents): Expected primals and tangents to have the same python "
            f"structure. For example, if primals is a tuple of 3 tensors, tangents also must be. "
            f"Got primals with structure {p_spec!r} and tangents with structure {t_spec!r}"
        )
    for p, t in zip(p_leaves, t_leaves):
        if not isinstance(t, Tensor) or tuple(t.shape) != tuple(p.shape):
            raise RuntimeError(
                "jvp(f, primals, tangents): Expected primals and tangents to have the same "
                f"shapes; got a primal of shape {tuple(p.shape)} and a tangent of "
                f"{tuple(t.shape) if isinstance(t, Tensor) else type(t).__name__}"
            )
    prepared = _Prepared(primals, tuple(range(len(primals))), "jvp")
    with _Inside():
        output = func(*prepared.args)
        out, aux = _split_aux(output, has_aux, "jvp")
        out_leaves, out_spec = tree_flatten(out)
        for o in out_leaves:
            if not isinstance(o, Tensor):
                raise RuntimeError(
                    f"jvp(f, primals, tangents): Expected f(*primals) to return only tensors, "
                    f"got unsupported type {type(o).__name__}"
                )
        # u -> J^T u is linear in u; its derivative in u along the tangents is J t.
        us = [_fresh(zeros_like(o), "jvp") for o in out_leaves]
        vjps = _transposed_jvps(out_leaves, prepared.inner, us)
    keep = _keep_graph(prepared) or any(t.requires_grad for t in t_leaves)
    pairs = [(v, t) for v, t in zip(vjps, t_leaves) if v.requires_grad]
    if pairs:
        got = _engine_grad([v for v, _ in pairs], us, [t for _, t in pairs], keep, keep)
    else:
        got = (None,) * len(us)
    tangents_out = [zeros_like(o) if g is None else g for g, o in zip(got, out_leaves)]
    if not keep:
        tangents_out = [g.detach() for g in tangents_out]
        out, aux = _detach_tree(out), _detach_tree(aux)
    result = (out, tree_unflatten(tangents_out, out_spec))
    return (*result, aux) if has_aux else result


def linearize(func: Callable[..., Any], *primals: Any) -> tuple[Any, Callable[..., Any]]:
    """``(func(*primals), jvp_fn)`` where ``jvp_fn(*tangents)`` is the Jacobian-vector product
    at ``primals`` (``torch.func.linearize``): ``func`` runs once and each ``jvp_fn`` call
    costs one backward pass through the saved double-vjp graph. Custom Functions contribute
    through their ``jvp``, as in :func:`jvp`.

    >>> import lucid
    >>> out, jvp_fn = linearize(lambda x: x.sin(), lucid.tensor([0.0, 1.0]))
    >>> jvp_fn(lucid.tensor([2.0, 0.0]))
    tensor([2., 0.])
    """
    prepared = _Prepared(primals, tuple(range(len(primals))), "linearize")
    with _Inside():
        out = func(*prepared.args)
        out_leaves, out_spec = tree_flatten(out)
        for o in out_leaves:
            if not isinstance(o, Tensor):
                raise RuntimeError(
                    f"linearize(f, *primals): Expected f(*primals) to return only tensors, got "
                    f"unsupported type {type(o).__name__}"
                )
        us = [_fresh(zeros_like(o), "jvp") for o in out_leaves]
        vjps = _transposed_jvps(out_leaves, prepared.inner, us)
    _, p_spec = tree_flatten(primals)
    keep_at_call = _keep_graph(prepared)
    recorded_levels = {level for level, _ in active.levels}

    def jvp_fn(*tangents: Any) -> Any:
        t_leaves, t_spec = tree_flatten(tangents)
        if t_spec != p_spec:
            raise RuntimeError(
                "linearize: Expected the tangents to have the structure of the primals; got "
                f"{t_spec!r} for primals of structure {p_spec!r}"
            )
        late = _late_level(t_leaves, recorded_levels)
        if late:  # vmap(jvp_fn) over a graph recorded outside that vmap: element by element
            return _per_element(lambda one: jvp_fn(*one), t_leaves, t_spec, late)
        for t, x in zip(t_leaves, prepared.inner):
            if not isinstance(t, Tensor) or tuple(t.shape) != tuple(x.shape):
                raise RuntimeError(
                    f"linearize: a tangent of shape "
                    f"{tuple(t.shape) if isinstance(t, Tensor) else type(t).__name__} does not "
                    f"match its primal's shape {tuple(x.shape)}"
                )
        keep = keep_at_call or any(t.requires_grad for t in t_leaves)
        pairs = [(v, t) for v, t in zip(vjps, t_leaves) if v.requires_grad]
        got: Any = (None,) * len(us)
        if pairs:
            with _GraphLevels(recorded_levels):
                got = _engine_grad([v for v, _ in pairs], us, [t for _, t in pairs], True, keep)
        res = [zeros_like(o) if g is None else g for g, o in zip(got, out_leaves)]
        if not keep:
            res = [g.detach() for g in res]
        return tree_unflatten(res, out_spec)

    return (out if keep_at_call else _detach_tree(out)), jvp_fn


# -- Jacobians -----------------------------------------------------------------------------------
def _jacobian(
    func: Callable[..., Any],
    argnums: int | tuple[int, ...],
    has_aux: bool,
    chunk_size: int | None,
    fn: str,
) -> Callable[..., Any]:
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size < 1):
        raise ValueError(f"{fn}: `chunk_size` should be greater than 0, got {chunk_size!r}")

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        nums = _argnums(argnums, len(args), fn)
        prepared = _Prepared(args, nums, fn)
        with _Inside():
            output = func(*prepared.args, **kwargs)
        out, aux = _split_aux(output, has_aux, fn)
        out_leaves, out_spec = tree_flatten(out)
        keep = _keep_graph(prepared)
        single = isinstance(argnums, int)
        per_out = []
        for o in out_leaves:
            if not isinstance(o, Tensor):
                raise RuntimeError(
                    f"{fn}(f, ...)(*args): Expected f(*args) to return only tensors, got "
                    f"unsupported type {type(o).__name__}"
                )
            per_out.append(prepared.regroup(_jacobian_of(o, prepared.inner, keep), single))
        jac = tree_unflatten(per_out, out_spec)
        if has_aux:
            return jac, (aux if keep else _detach_tree(aux))
        return jac

    return wrapper


def _jacobian_of(o: Tensor, inputs: list[Tensor], keep: bool) -> list[Tensor]:
    """d o / d each input, shaped ``o.shape + input.shape``: one backward per element of o."""
    n = o.numel()
    if not o.requires_grad or n == 0:
        return [o.new_zeros(tuple(o.shape) + tuple(x.shape)) for x in inputs]
    flat = o.reshape(-1)
    rows: list[list[Tensor]] = [[] for _ in inputs]
    eye = zeros_like(flat)
    for k in range(n):
        e = eye.clone()
        e[k] = 1.0
        got = _grads([flat], inputs, [e], keep)
        for r, g in zip(rows, got):
            r.append(g if keep else g.detach())
    return [stack(r).reshape(tuple(o.shape) + tuple(x.shape)) for r, x in zip(rows, inputs)]


def jacrev(
    func: Callable[..., Any],
    argnums: int | tuple[int, ...] = 0,
    *,
    has_aux: bool = False,
    chunk_size: int | None = None,
    _preallocate_and_copy: bool = False,
) -> Callable[..., Any]:
    """``func`` turned into its Jacobian by reverse mode (``torch.func.jacrev``).

    For an output of shape ``O`` and an argument of shape ``I`` the Jacobian has shape
    ``O + I``; outputs and arguments may be pytrees (the result nests output structure outside
    argument structure). ``chunk_size`` is accepted: rows are computed one at a time anyway.

    >>> import lucid
    >>> jacrev(lambda x: x ** 2)(lucid.tensor([1.0, 2.0]))
    tensor([[2., 0.],
            [0., 4.]])
    """
    return _jacobian(func, argnums, has_aux, chunk_size, "jacrev")


def jacfwd(
    func: Callable[..., Any],
    argnums: int | tuple[int, ...] = 0,
    has_aux: bool = False,
    *,
    randomness: str = "error",
) -> Callable[..., Any]:
    """``func`` turned into its Jacobian (``torch.func.jacfwd``); same signature and result.

    Lucid has no forward-mode engine: the Jacobian is computed row by row in reverse mode, the
    same matrix ``jacrev`` gives (exact), at reverse mode's cost (one backward per output
    element). So a custom ``autograd.Function`` contributes through its ``backward`` here
    (torch's jacfwd calls its ``jvp``: the two agree where both rules are the derivative).
    ``randomness`` is accepted for the signature ('error', 'different', 'same').

    >>> import lucid
    >>> jacfwd(lambda x: x.sin())(lucid.tensor([0.0]))
    tensor([[1.]])
    """
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(
            "Only allowed values for randomness are 'error', 'different', or 'same'. Got "
            f"{randomness}"
        )
    return _jacobian(func, argnums, has_aux, None, "jacfwd")


def hessian(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0) -> Callable[..., Any]:
    """``func`` turned into its Hessian, ``jacfwd(jacrev(func, argnums), argnums)``
    (``torch.func.hessian``): for an argument of shape ``I`` and a scalar output, ``I + I``.

    >>> import lucid
    >>> hessian(lambda x: (x ** 3).sum())(lucid.tensor([1.0, 2.0]))
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    """
    return jacfwd(jacrev(func, argnums), argnums)
