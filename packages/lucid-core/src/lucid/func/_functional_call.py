"""``functional_call`` and ``stack_module_state``: run a module with tensors it does not own.

lucid-core does not import lucid-nn (it sits below it), so these work on any object laid out
as an ``nn.Module`` is — ``_parameters``, ``_buffers`` and ``_modules`` dicts, as PyTorch's
modules have too — by swapping entries of those dicts for the duration of the call and putting
the originals back afterwards, even when the call raises.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from lucid._tensor import Tensor
from lucid.ops.join import stack

__all__ = ["functional_call", "stack_module_state"]

_MISSING = object()


def _check_module(module: Any, fn: str) -> None:
    for reg in ("_parameters", "_buffers", "_modules"):
        if not isinstance(getattr(module, "__dict__", {}).get(reg), dict):
            raise TypeError(
                f"{fn}: expected an nn.Module (an object with _parameters, _buffers and "
                f"_modules dicts), but got {type(module).__name__}"
            )


def _walk(module: Any) -> list[tuple[str, str, Any, str, Any]]:
    """Every parameter and buffer slot, duplicates (tied weights) included: (full name,
    registry, owner module, attribute, tensor)."""
    out: list[tuple[str, str, Any, str, Any]] = []
    stack_: list[tuple[str, Any]] = [("", module)]
    seen: set[int] = set()
    while stack_:
        prefix, m = stack_.pop(0)
        first = id(m) not in seen
        seen.add(id(m))
        for reg in ("_parameters", "_buffers"):
            for name, t in m.__dict__[reg].items():
                if t is not None:
                    out.append((prefix + name, reg, m, name, t))
        if first:
            for name, child in m.__dict__["_modules"].items():
                if child is not None:
                    stack_.append((prefix + name + ".", child))
    return out


def _merge(dicts: Any) -> dict[str, Any]:
    if isinstance(dicts, Mapping):
        return dict(dicts)
    if not isinstance(dicts, Sequence) or not all(isinstance(d, Mapping) for d in dicts):
        raise ValueError(
            "Expected all elements of parameter_and_buffer_dicts to be dictionaries, got "
            f"{type(dicts).__name__}"
        )
    merged: dict[str, Any] = {}
    repeated = []
    for d in dicts:
        for k, v in d.items():
            if k in merged:
                repeated.append(k)
            merged[k] = v
    if repeated:
        raise ValueError(
            f"{repeated} appeared in multiple dictionaries; behavior of functional call is "
            "ambiguous"
        )
    return merged


def _resolve(module: Any, name: str) -> tuple[Any, str]:
    """The submodule that owns ``name`` ("a.b.weight" -> (module.a.b, "weight"))."""
    *path, attr = name.split(".")
    m = module
    for p in path:
        child = m.__dict__["_modules"].get(p) if "_modules" in m.__dict__ else None
        if child is None:
            raise AttributeError(f"{type(m).__name__} has no submodule {p!r} (in key {name!r})")
        m = child
    return m, attr


def functional_call(
    module: Any,
    parameter_and_buffer_dicts: Any,
    args: Any = None,
    kwargs: dict[str, Any] | None = None,
    *,
    tie_weights: bool = True,
    strict: bool = False,
) -> Any:
    """Call ``module(*args, **kwargs)`` with its parameters and buffers replaced by the tensors
    in ``parameter_and_buffer_dicts`` (``torch.func.functional_call``).

    The dict (or a tuple of dicts, which must not share keys) maps names as
    ``module.named_parameters()``/``named_buffers()`` give them to tensors; names left out keep
    the module's own. With ``tie_weights`` (default) a weight the module shares under two
    names is replaced under both when one is given. ``strict=True`` requires exactly the
    module's names. The module is unchanged afterwards; gradients flow to the given tensors.

    >>> import lucid, lucid.nn as nn
    >>> lin = nn.Linear(2, 1)
    >>> w = {"weight": lucid.ones(1, 2), "bias": lucid.zeros(1)}
    >>> functional_call(lin, w, (lucid.tensor([[1.0, 2.0]]),))
    tensor([[3.]])
    """
    _check_module(module, "functional_call")
    given = _merge(parameter_and_buffer_dicts)
    slots = _walk(module)
    by_name: dict[str, tuple[str, Any, str, Any]] = {}
    groups: dict[int, list[str]] = {}
    for full, reg, owner, attr, t in slots:
        by_name[full] = (reg, owner, attr, t)
        groups.setdefault(id(t), []).append(full)
    if strict:
        missing = [n for n in by_name if n not in given]
        if tie_weights:
            missing = [n for n in missing
                       if not any(o in given for o in groups[id(by_name[n][3])])]  # fmt: skip
        unexpected = [n for n in given if n not in by_name]
        if missing or unexpected:
            lines = [f"Error(s) in reparametrizing for {type(module).__name__}:"]
            if unexpected:
                lines.append("\tUnexpected key(s): " + ", ".join(repr(k) for k in unexpected) + ".")
            if missing:
                lines.append("\tMissing key(s): " + ", ".join(repr(k) for k in missing) + ".")
            raise RuntimeError("\n".join(lines))
    values = dict(given)
    if tie_weights:
        for names in groups.values():
            if len(names) < 2:
                continue
            provided = [n for n in names if n in given]
            if not provided:
                continue
            if len({id(given[n]) for n in provided}) > 1:
                raise ValueError(
                    f"functional_call got multiple values for keys {sorted(provided)}, which "
                    "are tied. Consider using tie_weights=False"
                )
            for n in names:
                values[n] = given[provided[0]]
    restore: list[tuple[Any, str, str, Any]] = []  # (owner, registry or "", attr, old)
    try:
        for name, value in values.items():
            if name in by_name:
                reg, owner, attr, _ = by_name[name]
                restore.append((owner, reg, attr, owner.__dict__[reg][attr]))
                owner.__dict__[reg][attr] = value
            else:  # not a parameter or buffer: set it as a plain attribute for the call
                owner, attr = _resolve(module, name)
                restore.append((owner, "", attr, owner.__dict__.get(attr, _MISSING)))
                object.__setattr__(owner, attr, value)
        if args is None:
            args = ()
        elif not isinstance(args, tuple):
            args = (args,)
        return module(*args, **(kwargs or {}))
    finally:
        for owner, reg, attr, old in reversed(restore):
            if reg:
                owner.__dict__[reg][attr] = old
            elif old is _MISSING:
                object.__delattr__(owner, attr)
            else:
                object.__setattr__(owner, attr, old)


def _unique(module: Any, reg: str) -> dict[str, Tensor]:
    """``named_parameters()``/``named_buffers()``: each tensor once, under its first name."""
    out: dict[str, Tensor] = {}
    seen: set[int] = set()
    for full, r, _, _, t in _walk(module):
        if r == reg and id(t) not in seen:
            seen.add(id(t))
            out[full] = t
    return out


def stack_module_state(models: Any) -> tuple[dict[str, Tensor], dict[str, Tensor]]:
    """The parameters and buffers of same-shaped ``models``, each stacked along a new first
    dimension (``torch.func.stack_module_state``): the inputs of ``vmap(functional_call)`` for
    model ensembling. Stacked parameters are new leaves that require grad where the models'
    parameters do.

    >>> import lucid.nn as nn
    >>> params, buffers = stack_module_state([nn.Linear(3, 2) for _ in range(4)])
    >>> tuple(params["weight"].shape)
    (4, 2, 3)
    """
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    for m in models:
        _check_module(m, "stack_module_state")
    if not all(getattr(m, "training", None) == getattr(models[0], "training", None)
               for m in models):  # fmt: skip
        raise RuntimeError(
            "stack_module_state: Expected all models to have the same training/eval mode."
        )
    first = type(models[0])
    if not all(type(m) is first for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")

    def collect(reg: str) -> dict[str, Tensor]:
        per_model = [_unique(m, reg) for m in models]
        keys = list(dict.fromkeys(per_model[0]))
        for d in per_model[1:]:
            if list(dict.fromkeys(d)) != keys:
                raise RuntimeError(
                    "stack_module_state: Expected all models to have the same parameters and "
                    "buffers (names and order)."
                )
        out = {}
        for k in keys:
            ts = [d[k].detach() for d in per_model]
            stacked = stack(ts)
            if reg == "_parameters" and per_model[0][k].requires_grad:
                stacked = stacked.requires_grad_(True)
            out[k] = stacked
        return out

    return collect("_parameters"), collect("_buffers")


def replace_all_batch_norm_modules_(root: Any) -> Any:
    """``torch.func.replace_all_batch_norm_modules_``: every batch norm module under ``root``
    (``root`` included) stops tracking running statistics, in place: ``running_mean``,
    ``running_var`` and ``num_batches_tracked`` become None and ``track_running_stats``
    False, so each call normalises with its batch's statistics (what ``vmap`` over a model
    needs). ``root`` is given back. (A module counts as batch norm when a class of its MRO is
    named ``_BatchNorm``: lucid-core does not import lucid-nn.)"""
    for module in root.modules():
        names = {cls.__name__ for cls in type(module).__mro__}
        if "_BatchNorm" in names and getattr(module, "track_running_stats", False):
            module.running_mean = None
            module.running_var = None
            module.num_batches_tracked = None
            module.track_running_stats = False
    return root


def functionalize(func: Any, *, remove: str = "mutations") -> Any:
    """``torch.func.functionalize``: ``func`` with the same results. torch rewrites in-place
    ops out of a traced program; lucid runs eagerly, where a function and its functionalized
    form compute the same values (``remove`` is checked as torch checks it)."""
    if remove not in ("mutations", "mutations_and_views"):
        raise RuntimeError(
            f"functionalize(f, remove='mutations'): received invalid argument for remove={remove}."
            " Valid options are:\n     remove='mutations': all inplace and out= operators will"
            " be removed from the program, and replaced with their out-of-place equivalents.\n"
            "     remove='mutations_and_views': In addition to the above, all aliasing operators"
            " {view} will be replaced with their non-aliasing counterparts, {view}_copy.\n"
        )
    return func
