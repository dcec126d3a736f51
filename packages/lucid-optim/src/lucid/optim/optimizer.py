"""The optimizer base class: param groups, state, state dicts, hooks, ``step``.

An algorithm subclasses :class:`Optimizer` and writes only two methods for one parameter
(as MLX's ``init_single`` / ``apply_single``)::

    def _init_state(self, p, state, group):     # fill the empty per-parameter state dict
    def _update(self, p, grad, state, group):   # update p in place (grad already negated
                                                # when the group has ``maximize=True``)

The base class runs them for every parameter that has a gradient, without recording a graph.
As in PyTorch, an algorithm may also write a multi-tensor update over the whole group,
``_multi_tensor_update(params, grads, states, group)`` (its ``_multi_tensor_<name>``, on the
arrays, see ``_foreach``): it gets the raw gradients, handles ``maximize`` itself and returns
the positions it leaves to ``_update``. It runs unless the group says ``foreach=False`` or a
subclass changed ``_update``/``_init_state`` below it. Whole-problem algorithms (LBFGS)
override ``_step(closure)`` instead.
"""

from __future__ import annotations

import copy
import functools
import itertools
import warnings
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Iterable
from typing import Any

import lucid
from lucid import Tensor
from lucid.backends import synchronize
from lucid.utils.hooks import RemovableHandle

from ._checks import check_options

__all__ = [
    "Optimizer",
    "OptimizerPostHook",
    "OptimizerPreHook",
    "RemovableHandle",
    "register_optimizer_step_post_hook",
    "register_optimizer_step_pre_hook",
    "required",
]

# ``hook(optimizer, args, kwargs)`` before a step: None, or ``(new_args, new_kwargs)``
OptimizerPreHook = Callable[[Any, tuple[Any, ...], dict[str, Any]],
                            "tuple[tuple[Any, ...], dict[str, Any]] | None"]  # fmt: skip
# ``hook(optimizer, args, kwargs)`` after a step
OptimizerPostHook = Callable[[Any, tuple[Any, ...], dict[str, Any]], None]

# Hooks every optimizer runs around its step (``register_optimizer_step_pre_hook``): the
# global pre hooks before the optimizer's own, the global post hooks after its own.
_global_optimizer_pre_hooks: OrderedDict[int, Any] = OrderedDict()
_global_optimizer_post_hooks: OrderedDict[int, Any] = OrderedDict()


def register_optimizer_step_pre_hook(hook: OptimizerPreHook) -> RemovableHandle:
    """Run ``hook(optimizer, args, kwargs)`` before every optimizer's ``step``; it may return
    ``(new_args, new_kwargs)`` (``torch.optim.optimizer.register_optimizer_step_pre_hook``)."""
    return _register(_global_optimizer_pre_hooks, hook)


def register_optimizer_step_post_hook(hook: OptimizerPostHook) -> RemovableHandle:
    """Run ``hook(optimizer, args, kwargs)`` after every optimizer's ``step``
    (``torch.optim.optimizer.register_optimizer_step_post_hook``)."""
    return _register(_global_optimizer_post_hooks, hook)


StateDict = dict[str, Any]
ParamGroup = dict[str, Any]


class _RequiredParameter:
    """Sentinel for a hyper-parameter every param group must give (no default)."""

    def __repr__(self) -> str:
        return "<required parameter>"


required: Any = _RequiredParameter()


def _register(hooks: OrderedDict[int, Any], hook: Any, prepend: bool = False) -> RemovableHandle:
    handle = RemovableHandle(hooks)
    hooks[handle.id] = hook
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    return handle


_HOOK_DICTS = (
    "_optimizer_step_pre_hooks",
    "_optimizer_step_post_hooks",
    "_optimizer_state_dict_pre_hooks",
    "_optimizer_state_dict_post_hooks",
    "_optimizer_load_state_dict_pre_hooks",
    "_optimizer_load_state_dict_post_hooks",
)

_ORDER_ERROR = (
    "optimizer parameters need to be organized in ordered collections, but the ordering of "
    "tensors in sets will change between runs. Please use a list instead."
)


class Optimizer:
    """Base class of all optimizers.

    Args:
        params: an iterable of tensors (or of ``(name, tensor)`` pairs), or an iterable of
            dicts, each a parameter group with a ``"params"`` entry and options that override
            ``defaults`` for that group.
        defaults: the default value of each hyper-parameter.

    Every algorithm takes ``foreach`` (PyTorch's meaning): ``None``, the default, updates the
    whole group at once where it can (NumPy arrays written in place), ``False`` one tensor at a
    time, ``True`` asks for the group update; all give the same bits (see :mod:`lucid.optim`).

    Example::

        >>> import lucid, lucid.optim as optim
        >>> w = lucid.tensor([1.0, 2.0], requires_grad=True)
        >>> opt = optim.SGD([w], lr=0.5)
        >>> (w * w).sum().backward()
        >>> opt.step()
        >>> w.tolist()
        [0.0, 0.0]
    """

    # Updates that are linear in the gradient act on complex numbers as on (real, imag) pairs,
    # as PyTorch's view_as_real does; the others would square complex values.
    _supports_complex = False
    # State entries kept as Python numbers; a loaded 0-d tensor (PyTorch keeps ``step`` as
    # one) becomes a number again.
    _scalar_state: tuple[str, ...] = ("step",)
    # The state tensors the base ``_init_state`` starts at zero, after a ``step`` count, in
    # PyTorch's key order.
    _zero_state: tuple[str, ...] = ()
    # The hyper-parameters the base check validates, in the order PyTorch checks them.
    _checked_options: tuple[str, ...] = ("lr",)
    _in_step = False
    _opt_called = False  # set by the first step(); schedulers check it

    def __init__(self, params: Iterable[Any], defaults: dict[str, Any]) -> None:
        _check_step_flags(type(self).__name__, defaults)
        self.defaults = defaults
        self._optimizer_step_pre_hooks: OrderedDict[int, Any] = OrderedDict()
        self._optimizer_step_post_hooks: OrderedDict[int, Any] = OrderedDict()
        self._optimizer_state_dict_pre_hooks: OrderedDict[int, Any] = OrderedDict()
        self._optimizer_state_dict_post_hooks: OrderedDict[int, Any] = OrderedDict()
        self._optimizer_load_state_dict_pre_hooks: OrderedDict[int, Any] = OrderedDict()
        self._optimizer_load_state_dict_post_hooks: OrderedDict[int, Any] = OrderedDict()
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or "
                f"dicts, but got {_typename(params)}"
            )
        if isinstance(params, (set, frozenset)):
            raise TypeError(_ORDER_ERROR)
        self.state: defaultdict[Tensor, dict[str, Any]] = defaultdict(dict)
        self.param_groups: list[ParamGroup] = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)

    def __repr__(self) -> str:
        lines = [self.__class__.__name__ + " ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines += [f"    {k}: {group[k]}" for k in sorted(group) if k != "params"]
        return "\n".join(lines) + "\n)"

    def __getstate__(self) -> dict[str, Any]:
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        for name in _HOOK_DICTS:
            self.__dict__.setdefault(name, OrderedDict())

    # -- param groups ---------------------------------------------------------------------------
    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group of parameters (with its own options) to :attr:`param_groups`."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {_typename(param_group)}")
        param_group = dict(param_group)
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, (set, frozenset)):
            raise TypeError(_ORDER_ERROR)
        tensors, names = _split_names(list(params))
        param_group["params"] = tensors
        if names:
            param_group["param_names"] = names
        for p in tensors:
            _check_param(p)
            if p.is_complex() and not self._supports_complex:
                raise ValueError(
                    f"{type(self).__name__} does not support complex parameters, but got one of "
                    f"dtype {p.dtype} and shape {tuple(p.shape)}: optimize its real and "
                    "imaginary parts as two real tensors (or use SGD/ASGD, whose updates are "
                    "linear)"
                )
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(
                    "parameter group didn't specify a value of required optimization "
                    f"parameter {name}"
                )
            param_group.setdefault(name, default)
        self._check_group_options(param_group)
        if len({id(p) for p in tensors}) != len(tensors):
            warnings.warn(
                "optimizer contains a parameter group with duplicate parameters; "
                "in future, this will cause an error",
                stacklevel=3,
            )
        seen: set[int] = set()
        for group in self.param_groups:
            seen.update(id(p) for p in group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                which = "with names" if "param_names" in param_group else "without names"
                raise ValueError(
                    "all optimizer param groups should be with/without names. "
                    f"cannot add param group {which} to the optimizer"
                )
        if not seen.isdisjoint(id(p) for p in tensors):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def _check_group_options(self, group: ParamGroup) -> None:
        """Validate one group's hyper-parameters: ``_checked_options`` (see
        ``_checks.check_options``); a subclass adds its other checks."""
        check_options(group, self._checked_options)

    # -- stepping -------------------------------------------------------------------------------
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradient of every parameter: to ``None`` (default) or to zeros."""
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    with lucid.no_grad():
                        p.grad = p.grad.detach()
                        p.grad.zero_()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # A subclass that writes its own ``step`` (PyTorch style) still runs the step hooks
        # and tells schedulers that the optimizer has stepped.
        super().__init_subclass__(**kwargs)
        if "step" in cls.__dict__:
            cls.step = _with_step_hooks(cls.__dict__["step"])  # type: ignore[method-assign]

    OptimizerPreHook = OptimizerPreHook
    OptimizerPostHook = OptimizerPostHook

    @staticmethod
    def profile_hook_step(func: Callable[..., Any]) -> Callable[..., Any]:
        """Wrap a ``step(self, *args, **kwargs)`` function so that it runs the global and the
        optimizer's step hooks around it, as every optimizer's ``step`` already does
        (``torch.optim.Optimizer.profile_hook_step``)."""
        return _with_step_hooks(func)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update the parameters once; ``closure`` re-evaluates the model and returns the loss."""
        return self._step(closure)

    def _step(self, closure: Callable[[], Any] | None = None) -> Any:
        loss = None
        if closure is not None:
            with lucid.enable_grad():
                loss = closure()
        with lucid.no_grad():
            for group in self.param_groups:
                self._step_group(group)
        self._evaluate_lazy()
        return loss

    def _evaluate_lazy(self) -> None:
        """On lazy backends (MLX) compute the new parameters and state now, at step end, so
        the pending graph does not grow from step to step."""
        synchronize(self._tensors())

    def _tensors(self) -> list[Tensor]:
        """Every parameter and every state tensor."""
        params = [p for group in self.param_groups for p in group["params"]]
        state = [v for p in params for v in self.state.get(p, {}).values() if isinstance(v, Tensor)]
        return params + state

    def _step_group(self, group: ParamGroup) -> None:
        params: list[Tensor] = []
        grads: list[Tensor] = []
        states: list[dict[str, Any]] = []
        for p in group["params"]:
            grad = p.grad
            if grad is None:
                continue
            state = self.state[p]
            if not state:
                self._init_state(p, state, group)
            params.append(p)
            grads.append(grad)
            states.append(state)
        if (
            group.get("foreach") is False
            or lucid.is_grad_enabled()
            or not _multi_tensor_fits(type(self))
        ):
            self._single_tensor_update(params, grads, states, group)
            return
        rest = self._multi_tensor_update(params, grads, states, group)
        if rest:
            pick = [params[i] for i in rest], [grads[i] for i in rest], [states[i] for i in rest]
            self._single_tensor_update(*pick, group)

    def _single_tensor_update(
        self,
        params: list[Tensor],
        grads: list[Tensor],
        states: list[dict[str, Any]],
        group: ParamGroup,
    ) -> None:
        """The per-tensor update of each parameter: ``_update``, with the gradient negated when
        the group has ``maximize=True``."""
        maximize = group.get("maximize", False)
        for p, grad, state in zip(params, grads, states):
            self._update(p, -grad if maximize else grad, state, group)

    def _multi_tensor_update(
        self,
        params: list[Tensor],
        grads: list[Tensor],
        states: list[dict[str, Any]],
        group: ParamGroup,
    ) -> list[int]:
        """Update the whole group at once (PyTorch's ``foreach``), with the same results as the
        per-tensor update; return the positions left to the per-tensor update (the base class
        has no multi-tensor update: all of them)."""
        return list(range(len(params)))

    def _init_state(self, p: Tensor, state: dict[str, Any], group: ParamGroup) -> None:
        """Fill the (empty) state of parameter ``p`` before its first update: with
        ``_zero_state`` (empty in the base class: nothing), ``step`` 0 and a zero tensor like
        ``p`` for each name."""
        if self._zero_state:
            state["step"] = 0
            for name in self._zero_state:
                state[name] = lucid.zeros_like(p)

    def _update(self, p: Tensor, grad: Tensor, state: dict[str, Any], group: ParamGroup) -> None:
        """Update ``p`` in place from ``grad`` (already negated when maximizing)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement _update")

    # -- hooks ----------------------------------------------------------------------------------
    def register_step_pre_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """``hook(optimizer, args, kwargs) -> None or (new_args, new_kwargs)`` before ``step``."""
        return _register(self._optimizer_step_pre_hooks, hook)

    def register_step_post_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """``hook(optimizer, args, kwargs) -> None`` after each ``step``."""
        return _register(self._optimizer_step_post_hooks, hook)

    def register_state_dict_pre_hook(
        self, hook: Callable[..., Any], prepend: bool = False
    ) -> RemovableHandle:
        """``hook(optimizer) -> None`` before :meth:`state_dict` builds the dict."""
        return _register(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(
        self, hook: Callable[..., Any], prepend: bool = False
    ) -> RemovableHandle:
        """``hook(optimizer, state_dict) -> state_dict or None`` after :meth:`state_dict`."""
        return _register(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(
        self, hook: Callable[..., Any], prepend: bool = False
    ) -> RemovableHandle:
        """``hook(optimizer, state_dict) -> state_dict or None`` before loading."""
        return _register(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(
        self, hook: Callable[..., Any], prepend: bool = False
    ) -> RemovableHandle:
        """``hook(optimizer) -> None`` after :meth:`load_state_dict`."""
        return _register(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    # -- state dicts ----------------------------------------------------------------------------
    def state_dict(self) -> StateDict:
        """The optimizer's state, in PyTorch's layout.

        ``{"state": {index: {...}}, "param_groups": [{..., "params": [index, ...]}]}``, where
        a parameter's index is its position across all groups. The state tensors are the
        optimizer's own (not copies); :meth:`load_state_dict` copies them.
        """
        for pre_hook in list(self._optimizer_state_dict_pre_hooks.values()):
            pre_hook(self)
        index: dict[int, int] = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for p in group["params"]:
                index.setdefault(id(p), len(index))
            packed["params"] = [index[id(p)] for p in group["params"]]
            groups.append(packed)
        state = {index[id(p)]: dict(s) for p, s in self.state.items() if id(p) in index}
        result: StateDict = {"state": state, "param_groups": groups}
        for post_hook in list(self._optimizer_state_dict_post_hooks.values()):
            out = post_hook(self, result)
            if out is not None:
                result = out
        return result

    def load_state_dict(self, state_dict: StateDict) -> None:
        """Load a state from :meth:`state_dict` (also after ``lucid.save``/``lucid.load``).

        State tensors are copied onto each parameter's device, floating ones cast to its dtype.
        """
        state_dict = dict(state_dict)
        for pre_hook in list(self._optimizer_load_state_dict_pre_hooks.values()):
            out = pre_hook(self, state_dict)
            if out is not None:
                state_dict = out
        groups = self.param_groups
        saved_groups = copy.deepcopy(list(state_dict["param_groups"]))
        if len(groups) != len(saved_groups):
            raise ValueError(
                "loaded state dict has a different number of parameter groups: "
                f"expected {len(groups)}, got {len(saved_groups)}"
            )
        for g, s in zip(groups, saved_groups):
            if len(g["params"]) != len(s["params"]):
                raise ValueError(
                    "loaded state dict contains a parameter group that doesn't match the size "
                    f"of optimizer's group: expected {len(g['params'])} parameters, "
                    f"got {len(s['params'])}"
                )
        id_map = {
            int(saved): p
            for saved, p in zip(
                itertools.chain.from_iterable(s["params"] for s in saved_groups),
                itertools.chain.from_iterable(g["params"] for g in groups),
            )
        }
        new_state: defaultdict[Tensor, dict[str, Any]] = defaultdict(dict)
        for key, value in dict(state_dict["state"]).items():
            param = id_map.get(int(key))
            if param is None:
                continue
            new_state[param] = {
                k: v.item()
                if k in self._scalar_state and _is_scalar(v)
                else _cast_state(param, v, k)
                for k, v in dict(value).items()
            }
        new_groups = []
        for group, saved in zip(groups, saved_groups):
            saved = {k: _like(group.get(k), v) for k, v in saved.items()}
            saved["params"] = group["params"]
            if "param_names" in group and "param_names" not in saved:
                saved["param_names"] = group["param_names"]
            new_groups.append(saved)
        self.state = new_state
        self.param_groups = new_groups
        for post_hook in list(self._optimizer_load_state_dict_post_hooks.values()):
            post_hook(self)


def _check_step_flags(name: str, defaults: dict[str, Any]) -> None:
    """torch's ``fused``/``capturable``/``differentiable``: ``fused=True`` takes lucid's
    multi-tensor update (one compiled pass a parameter where a kernel exists: torch's fused
    CPU kernels' place), ``capturable`` has no CUDA graph to capture into (accepted, no
    effect), and a differentiable step is not implemented."""
    if defaults.get("fused") and defaults.get("foreach"):
        raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
    if defaults.get("differentiable"):
        raise NotImplementedError(
            f"{name}(differentiable=True): lucid's optimizer steps are not recorded by autograd "
            "(see docs/differences.md, Optimizers); use lucid.func.functional_call with a "
            "hand-written update to differentiate through one"
        )


def _with_step_hooks(step: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap a ``step`` method so that the step pre/post hooks run around it (once, even when
    an overriding ``step`` calls ``super().step()``)."""

    @functools.wraps(step)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        # the hooks see ``args`` with the optimizer first, as torch's do
        self: Optimizer = args[0]
        if self._in_step:
            return step(*args, **kwargs)
        pre_hooks = [*_global_optimizer_pre_hooks.values(),
                     *self._optimizer_step_pre_hooks.values()]  # fmt: skip
        for pre_hook in pre_hooks:
            result = pre_hook(self, args, kwargs)
            if result is not None:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError(
                        f"{pre_hook} must return None or a tuple of (new_args, new_kwargs), "
                        f"but got {result}."
                    )
                args, kwargs = result
        self._opt_called = True
        self._in_step = True
        try:
            out = step(*args, **kwargs)
        finally:
            self._in_step = False
        post_hooks = [*self._optimizer_step_post_hooks.values(),
                      *_global_optimizer_post_hooks.values()]  # fmt: skip
        for post_hook in post_hooks:
            post_hook(self, args, kwargs)
        return out

    return wrapper


Optimizer.step = _with_step_hooks(Optimizer.step)  # type: ignore[method-assign]


def _defaults(arguments: dict[str, Any], order: tuple[str, ...] = ()) -> dict[str, Any]:
    """An algorithm's ``defaults`` from its ``__init__``'s ``locals()``: every argument but
    ``self`` and ``params``, in the signature's order, or ``order``'s first where PyTorch's
    ``defaults`` dict has another order than its signature (a printed ``state_dict()`` shows
    the order)."""
    got = {
        k: v for k, v in arguments.items() if k not in ("self", "params") and not k.startswith("__")
    }
    if not order:
        return got
    return {**{k: got[k] for k in order}, **got}


def _multi_tensor_fits(cls: type[Optimizer]) -> bool:
    """Whether ``cls``'s multi-tensor update was written for its per-tensor one: no subclass
    below the class that wrote ``_multi_tensor_update`` changed ``_update`` or
    ``_init_state`` (a user's variant of SGD then runs its own ``_update``)."""
    for klass in cls.__mro__:
        if "_multi_tensor_update" in vars(klass):
            return True
        if "_update" in vars(klass) or "_init_state" in vars(klass):
            return False
    return False


def _typename(obj: Any) -> str:
    if isinstance(obj, Tensor):
        return f"lucid.Tensor (dtype {obj.dtype}, shape {tuple(obj.shape)})"
    return type(obj).__name__


def _split_names(params: list[Any]) -> tuple[list[Any], list[str]]:
    """Split ``[(name, tensor), ...]`` into tensors and names (names empty if none given)."""
    named = [isinstance(p, tuple) for p in params]
    if not any(named):
        return params, []
    if not all(named):
        raise ValueError(
            "all optimizer params should be with/without names. Some param names are missing"
        )
    return [p[1] for p in params], [p[0] for p in params]


def _check_param(p: Any) -> None:
    if not isinstance(p, Tensor):
        raise TypeError(
            f"optimizer can only optimize Tensors, but one of the params is {_typename(p)}"
        )
    if not (p.is_leaf or getattr(p, "retains_grad", False)):
        raise ValueError("can't optimize a non-leaf Tensor")


def _is_scalar(value: Any) -> bool:
    return isinstance(value, Tensor) and value.ndim == 0


def _cast_state(param: Tensor, value: Any, key: Any = None) -> Any:
    """A copy of a state value on ``param``'s device (floating tensors in its dtype)."""
    if isinstance(value, Tensor):
        if key != "step" and param.is_floating_point() and value.is_floating_point():
            return value.to(param.device, param.dtype, copy=True).detach()
        return value.to(param.device, copy=True).detach()
    if isinstance(value, dict):
        return {k: _cast_state(param, v, k) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast_state(param, v, key) for v in value)
    return copy.deepcopy(value)


def _like(current: Any, loaded: Any) -> Any:
    """A loaded option in the current option's container type (JSON turns tuples into lists)."""
    if isinstance(current, tuple) and isinstance(loaded, list):
        return tuple(loaded)
    return loaded
