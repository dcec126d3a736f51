"""``Module``: the base class of layers and models (``torch.nn.Module``).

Assigning a Parameter, Buffer or Module to an attribute registers it; everything else
(state_dict, ``to``, ``train``/``eval``, ``parameters()``) walks those registries.
"""

from __future__ import annotations

import warnings
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from collections.abc import Set as AbstractSet
from typing import Any, NamedTuple, TypeVar

from lucid import Tensor, as_tensor, dtypes, empty_like, preserve_format
from lucid.autograd import no_grad
from lucid.compiler import compile as lucid_compile
from lucid.cuda import NOT_COMPILED
from lucid.nn import _hooks
from lucid.nn.parameter import Buffer, Parameter, is_lazy
from lucid.utils.hooks import RemovableHandle
from lucid.utils.to_args import parse_to

T = TypeVar("T", bound="Module")

_global_forward_pre_hooks: OrderedDict[int, Any] = OrderedDict()
_global_forward_hooks: OrderedDict[int, Any] = OrderedDict()


def _forward_unimplemented(self: Any, *args: Any, **kwargs: Any) -> Any:
    """Define the computation performed at every call (subclasses override it)."""
    raise NotImplementedError(
        f'Module [{type(self).__name__}] is missing the required "forward" function'
    )


class _IncompatibleKeys(NamedTuple):
    missing_keys: list[str]
    unexpected_keys: list[str]

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return (
            f"_IncompatibleKeys(missing_keys={self.missing_keys}, "
            f"unexpected_keys={self.unexpected_keys})"
        )


class Module:
    """Base class of all layers and models. Subclasses define ``forward``.

    >>> class Net(nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.fc = nn.Linear(4, 2)
    ...     def forward(self, x):
    ...         return self.fc(x).relu()
    >>> [name for name, _ in Net().named_parameters()]
    ['fc.weight', 'fc.bias']
    """

    training: bool
    _parameters: OrderedDict[str, Parameter | None]
    _buffers: OrderedDict[str, Tensor | None]
    _modules: OrderedDict[str, Module | None]
    _non_persistent_buffers_set: set[str]
    _forward_pre_hooks: OrderedDict[int, Any]
    _forward_hooks: OrderedDict[int, Any]
    _backward_hooks: OrderedDict[int, Any]
    _load_state_dict_pre_hooks: OrderedDict[int, Any]
    _state_dict_pass_attr: AbstractSet[str] = frozenset()
    """Names of own parameters/buffers/submodules left out of ``state_dict`` (caches...)."""
    dump_patches: bool = False
    """torch's flag for printing module-version patches on load; lucid has none (kept False)."""
    call_super_init: bool = False
    """torch's flag for passing ``__init__``'s extra arguments up the MRO; lucid's ``__init__``
    takes none, so it stays False."""
    T_destination = TypeVar("T_destination", bound=Mapping[str, Any])
    """The type variable of ``state_dict(destination=...)`` in torch's annotations."""

    def __init__(self) -> None:
        sa = object.__setattr__
        sa(self, "training", True)
        sa(self, "_parameters", OrderedDict())
        sa(self, "_buffers", OrderedDict())
        sa(self, "_non_persistent_buffers_set", set())
        sa(self, "_modules", OrderedDict())
        sa(self, "_forward_pre_hooks", OrderedDict())
        sa(self, "_forward_hooks", OrderedDict())
        sa(self, "_backward_hooks", OrderedDict())
        sa(self, "_load_state_dict_pre_hooks", OrderedDict())
        if type(self)._state_dict_pass_attr is Module._state_dict_pass_attr:
            sa(self, "_state_dict_pass_attr", set())

    forward: Callable[..., Any] = _forward_unimplemented

    # -- calling ------------------------------------------------------------------------------
    _compiled_call_impl: Callable[..., Any] | None = None  # set by Module.compile()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        compiled = self._compiled_call_impl
        if compiled is not None:  # Module.compile(): the call (hooks and forward) replayed
            return compiled(*args, **kwargs)
        if not (  # (_call_impl's body, inline: no extra frame per module call)
            self._forward_pre_hooks
            or self._forward_hooks
            or self._backward_hooks
            or _global_forward_pre_hooks
            or _global_forward_hooks
        ):
            return self.forward(*args, **kwargs)
        return self._call_with_hooks(args, kwargs)

    def _call_impl(self, *args: Any, **kwargs: Any) -> Any:
        """The call without ``compile``: forward hooks around ``forward``."""
        if not (
            self._forward_pre_hooks
            or self._forward_hooks
            or self._backward_hooks
            or _global_forward_pre_hooks
            or _global_forward_hooks
        ):
            return self.forward(*args, **kwargs)
        return self._call_with_hooks(args, kwargs)

    def _call_with_hooks(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        for hook in (*_global_forward_pre_hooks.values(), *self._forward_pre_hooks.values()):
            if type(hook) is _WithKwargs:
                result = hook.fn(self, args, kwargs)
                if result is not None:
                    if not (isinstance(result, tuple) and len(result) == 2):
                        raise RuntimeError(
                            "forward pre-hook must return None or a tuple of (new_args, new_kwargs)"
                        )
                    args, kwargs = result
                continue
            result = hook(self, args)
            if result is not None:
                args = result if isinstance(result, tuple) else (result,)
        state = None
        if self._backward_hooks:
            state = _hooks.backward_hook_state(self, list(self._backward_hooks.values()))
            args = _hooks.wrap_inputs(state, args)
        output = self.forward(*args, **kwargs)
        for hook in (*_global_forward_hooks.values(), *self._forward_hooks.values()):
            if type(hook) is _WithKwargs:
                result = hook.fn(self, args, kwargs, output)
            else:
                result = hook(self, args, output)
            if result is not None:
                output = result
        if state is not None:
            output = _hooks.wrap_outputs(state, output)
        return output

    def register_forward_pre_hook(
        self, hook: Callable[..., Any], *, prepend: bool = False, with_kwargs: bool = False
    ) -> RemovableHandle:
        """``hook(module, args) -> None or new args`` runs before ``forward``.

        With ``with_kwargs=True``: ``hook(module, args, kwargs) -> None or (args, kwargs)``.
        """
        return _add_hook(self._forward_pre_hooks, hook, prepend, with_kwargs)

    def register_forward_hook(
        self, hook: Callable[..., Any], *, prepend: bool = False, with_kwargs: bool = False
    ) -> RemovableHandle:
        """``hook(module, args, output) -> None or new output`` runs after ``forward``.

        With ``with_kwargs=True``: ``hook(module, args, kwargs, output)``.
        """
        return _add_hook(self._forward_hooks, hook, prepend, with_kwargs)

    def register_full_backward_hook(
        self, hook: Callable[..., Any], prepend: bool = False
    ) -> RemovableHandle:
        """``hook(module, grad_input, grad_output) -> None or new grad_input`` in backward.

        ``grad_input`` has one entry per positional tensor input that requires grad.
        """
        return _add_hook(self._backward_hooks, hook, prepend)

    def register_full_backward_pre_hook(
        self, hook: Callable[..., Any], prepend: bool = False
    ) -> RemovableHandle:
        """``hook(module, grad_output) -> None or new grad_output`` runs in backward before the
        module's input gradients are computed; ``grad_output`` has one entry per output that
        requires grad."""
        return _add_hook(self._backward_hooks, _hooks.PreHook(hook), prepend)

    def register_backward_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Deprecated in torch for :meth:`register_full_backward_hook`, which it calls here (torch's
        old hook saw only the last op's gradients; lucid has only the full form)."""
        warnings.warn(
            "register_backward_hook is deprecated; lucid runs it as register_full_backward_hook",
            FutureWarning,
            stacklevel=2,
        )
        return self.register_full_backward_hook(hook)

    # -- registration -------------------------------------------------------------------------
    def __setattr__(self, name: str, value: Any) -> None:
        d = self.__dict__
        if isinstance(value, Parameter):
            if "_parameters" not in d:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            _remove_from(self, name, skip="_parameters")
            self.register_parameter(name, value)
        elif isinstance(value, Module):
            if "_modules" not in d:
                raise AttributeError("cannot assign module before Module.__init__() call")
            _remove_from(self, name, skip="_modules")
            self._modules[name] = value
        elif isinstance(value, Buffer):
            if "_buffers" not in d:
                raise AttributeError("cannot assign buffer before Module.__init__() call")
            _remove_from(self, name, skip="_buffers")
            self.register_buffer(name, value, value.persistent)
        elif "_parameters" in d and name in self._parameters:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as parameter '{name}' "
                    "(nn.Parameter or None expected)"
                )
            self._parameters[name] = None
        elif "_modules" in d and name in self._modules:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as child module '{name}' "
                    "(nn.Module or None expected)"
                )
            self._modules[name] = None
        elif "_buffers" in d and name in self._buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as buffer '{name}' "
                    "(lucid.Tensor or None expected)"
                )
            self._buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name: str) -> Any:
        d = self.__dict__
        reg = d.get("_parameters")  # first, outside the loop: a layer's weight and bias
        if reg is not None and name in reg:
            return reg[name]
        for registry in ("_buffers", "_modules"):
            reg = d.get(registry)
            if reg is not None and name in reg:
                return reg[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        for registry in ("_parameters", "_buffers", "_modules"):
            reg = self.__dict__.get(registry)
            if reg is not None and name in reg:
                del reg[name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self) -> list[str]:
        keys = set(super().__dir__())
        keys.update(self._parameters, self._buffers, self._modules)
        return sorted(k for k in keys if not k[0].isdigit())

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Register ``param`` (or ``None``: a declared but absent parameter) under ``name``."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        _check_name(self, name, "parameter", "_parameters")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                "(nn.Parameter or None required)"
            )
        if param is not None and param.grad_fn is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be "
                "created explicitly; to express it as a function of another Tensor, compute "
                "the value in forward()."
            )
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Register a buffer (saved in state_dict unless ``persistent=False``; None allowed)."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        _check_name(self, name, "buffer", "_buffers")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(
                f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                "(lucid.Tensor or None required)"
            )
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name: str, module: Module | None) -> None:
        """Register a child module (or None) under ``name``."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        self._modules[name] = module

    register_module = add_module

    def set_submodule(self, target: str, module: Module, strict: bool = False) -> None:
        """Put ``module`` at the dotted path ``target`` (``"net_b.net_c.conv"``); the parent
        must exist. ``strict=True`` also requires the last name to exist already. An existing
        attribute there that is not a Module raises, as in torch."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        atoms = target.split(".")
        if not isinstance(module, Module):
            raise ValueError(f"`module` is not an nn.Module, found {type(module)}")
        parent = self if len(atoms) == 1 else self.get_submodule(".".join(atoms[:-1]))
        if strict and not hasattr(parent, atoms[-1]):
            raise AttributeError(f"{parent._get_name()} has no attribute `{atoms[-1]}`")
        if hasattr(parent, atoms[-1]) and not isinstance(getattr(parent, atoms[-1]), Module):
            raise AttributeError(f"`{atoms[-1]}` is not an nn.Module")
        setattr(parent, atoms[-1], module)

    def get_submodule(self, target: str) -> Module:
        """The submodule at the dotted path ``target`` (``"layer1.0.conv1"``)."""
        mod = self
        for item in target.split(".") if target else ():
            child = mod._modules.get(item)
            if child is None:
                raise AttributeError(f"{mod._get_name()} has no attribute `{item}`")
            mod = child
        return mod

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at the dotted path ``target``."""
        path, _, name = target.rpartition(".")
        mod = self.get_submodule(path)
        p = mod._parameters.get(name)
        if p is None:
            raise AttributeError(f"{mod._get_name()} has no parameter `{name}`")
        return p

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at the dotted path ``target``."""
        path, _, name = target.rpartition(".")
        mod = self.get_submodule(path)
        b = mod._buffers.get(name)
        if b is None:
            raise AttributeError(f"{mod._get_name()} has no buffer `{name}`")
        return b

    # -- traversal ----------------------------------------------------------------------------
    def named_modules(
        self, memo: set[Module] | None = None, prefix: str = "", remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Module]]:
        """This module and all below it, with dotted names; a shared module appears once."""
        if memo is None:
            memo = set()
        if remove_duplicate:
            if self in memo:
                return
            memo.add(self)
        yield prefix, self
        for name, child in self._modules.items():
            if child is None:
                continue
            sub = prefix + ("." if prefix else "") + name
            yield from child.named_modules(memo, sub, remove_duplicate)

    def modules(self, remove_duplicate: bool = True) -> Iterator[Module]:
        """Every module of the tree, this one first, each once (``remove_duplicate=False``:
        a module registered under several names once per name, as torch's)."""
        for _, m in self.named_modules(remove_duplicate=remove_duplicate):
            yield m

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """The immediate submodules with their names."""
        seen: set[Module] = set()
        for name, child in self._modules.items():
            if child is not None and child not in seen:
                seen.add(child)
                yield name, child

    def children(self) -> Iterator[Module]:
        """The immediate submodules."""
        for _, m in self.named_children():
            yield m

    def _named_members(
        self, registry: str, prefix: str, recurse: bool, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Any]]:
        seen: set[int] = set()
        mods = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
        for mod_prefix, mod in mods if recurse else [(prefix, self)]:
            for name, value in getattr(mod, registry).items():
                if value is None or (remove_duplicate and id(value) in seen):
                    continue
                seen.add(id(value))
                yield mod_prefix + ("." if mod_prefix else "") + name, value

    def named_parameters(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Parameter]]:
        """(dotted name, parameter) pairs; a shared parameter appears once."""
        yield from self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """The module's parameters, and its submodules' where ``recurse``."""
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Tensor]]:
        """The module's buffers with their dotted names, and its submodules' where ``recurse``."""
        yield from self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        """The module's buffers, and its submodules' where ``recurse``."""
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    # -- state --------------------------------------------------------------------------------
    def _state_items(self) -> Iterator[tuple[str, Tensor]]:
        """Own (name, tensor) pairs that belong in state_dict."""
        skip = self._state_dict_pass_attr
        for name, p in self._parameters.items():
            if p is not None and name not in skip:
                yield name, p
        for name, b in self._buffers.items():
            if b is not None and name not in skip and name not in self._non_persistent_buffers_set:
                yield name, b

    def state_dict(
        self, destination: Any = None, prefix: str = "", keep_vars: bool = False
    ) -> OrderedDict[str, Tensor]:
        """Parameters and persistent buffers by dotted name.

        Values are copies (detached, no view into the live data) unless ``keep_vars=True``,
        which returns the registered tensors themselves.
        """
        out: OrderedDict[str, Tensor] = OrderedDict() if destination is None else destination
        hooks = self.__dict__.get("_state_dict_hooks")
        if hooks:
            for hook in list(hooks[0].values()):  # pre-hooks: (module, prefix, keep_vars)
                hook(self, prefix, keep_vars)
        for name, t in self._state_items():
            out[prefix + name] = t if keep_vars else t.detach().clone()
        if type(self).get_extra_state is not Module.get_extra_state:
            out[prefix + _EXTRA_STATE] = self.get_extra_state()
        for name, child in self._modules.items():
            if child is not None and name not in self._state_dict_pass_attr:
                child.state_dict(destination=out, prefix=prefix + name + ".", keep_vars=keep_vars)
        if hooks:
            for hook in list(hooks[1].values()):  # post-hooks: (module, state_dict, prefix, meta)
                hook(self, out, prefix, {})
        return out

    def register_state_dict_pre_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """``hook(module, prefix, keep_vars)`` runs before ``state_dict`` collects this module."""
        return _add_hook(self._state_dict_hook_registries()[0], hook)

    def register_state_dict_post_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """``hook(module, state_dict, prefix, local_metadata)`` runs after ``state_dict`` has
        collected this module (and its children); it may change ``state_dict`` in place."""
        return _add_hook(self._state_dict_hook_registries()[1], hook)

    def _state_dict_hook_registries(self) -> tuple[OrderedDict[int, Any], OrderedDict[int, Any]]:
        pair: tuple[OrderedDict[int, Any], OrderedDict[int, Any]] = self.__dict__.setdefault(
            "_state_dict_hooks", (OrderedDict(), OrderedDict())
        )
        return pair

    def get_extra_state(self) -> Any:
        """The state a subclass adds to its ``state_dict`` (under ``"_extra_state"``) by
        overriding this and :meth:`set_extra_state`; Module's own raises, as torch's."""
        raise RuntimeError(
            "Reached a code path in Module.get_extra_state() that should never be called. "
            "Please file an issue at https://github.com/pytorch/pytorch/issues/new?template="
            "bug-report.yml to report this bug."
        )

    def set_extra_state(self, state: Any) -> None:
        """Take back what :meth:`get_extra_state` returned (``load_state_dict`` calls it)."""
        raise RuntimeError(
            "Reached a code path in Module.set_extra_state() that should never be called. "
            "Please file an issue at https://github.com/pytorch/pytorch/issues/new?template="
            "bug-report.yml to report this bug."
        )

    def _state_targets(self, prefix: str = "") -> Iterator[tuple[str, Tensor]]:
        for key, _, _, t in self._state_slots(prefix):
            yield key, t

    def _state_slots(self, prefix: str = "") -> Iterator[tuple[str, Module, str, Tensor]]:
        """(dotted key, owning module, attribute name, tensor) for every state_dict entry."""
        for name, t in self._state_items():
            yield prefix + name, self, name, t
        for name, child in self._modules.items():
            if child is not None and name not in self._state_dict_pass_attr:
                yield from child._state_slots(prefix + name + ".")

    def load_state_dict(
        self, state_dict: Mapping[str, Any], strict: bool = True, assign: bool = False
    ) -> _IncompatibleKeys:
        """Copy values into this module's parameters and buffers, in place and on their device.

        Returns ``(missing_keys, unexpected_keys)``; with ``strict`` any of those, or a shape
        mismatch, raises one error that lists them all. Nothing is written when it raises.
        ``assign=True`` (torch's) puts the state_dict's tensors themselves in the module, with
        their data, dtype and device (how a module built on the ``"meta"`` device gets its
        weights), a parameter staying a Parameter with the module's ``requires_grad``; an
        optimizer made before then still holds the old parameters.
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        state_dict, errors = self._run_load_state_dict_pre_hooks(state_dict, strict)
        slots = {key: (owner, name, t) for key, owner, name, t in self._state_slots()}
        targets = {key: t for key, (_, _, t) in slots.items()}
        extra = {
            (prefix + "." if prefix else "") + _EXTRA_STATE: m
            for prefix, m in self.named_modules()
            if type(m).set_extra_state is not Module.set_extra_state
        }
        missing = [k for k in (*targets, *extra) if k not in state_dict]
        unexpected = [k for k in state_dict if k not in targets and k not in extra]
        values: list[tuple[Tensor, Tensor]] = []
        assigned: list[tuple[Module, str, Tensor]] = []
        for key, target in targets.items():
            if key not in state_dict:
                continue
            if is_lazy(target):  # a lazy layer takes the shape it is given (torch's)
                if is_lazy(state_dict[key]):
                    continue
                target.materialize(tuple(state_dict[key].shape))  # type: ignore[attr-defined]
            raw = state_dict[key]
            if assign and not isinstance(raw, Tensor):
                raw = as_tensor(raw)
            value = _as_tensor(raw, target)
            if value.shape != target.shape:
                errors.append(
                    f"size mismatch for {key}: copying a param with shape {_size(value)} from "
                    f"checkpoint, the shape in current model is {_size(target)}."
                )
                continue
            values.append((target, value))
            assigned.append((*slots[key][:2], value))
        if strict:
            if unexpected:
                keys = ", ".join(f'"{k}"' for k in unexpected)
                errors.insert(0, f"Unexpected key(s) in state_dict: {keys}. ")
            if missing:
                keys = ", ".join(f'"{k}"' for k in missing)
                errors.insert(0, f"Missing key(s) in state_dict: {keys}. ")
        if errors:
            raise RuntimeError(
                f"Error(s) in loading state_dict for {self._get_name()}:\n\t" + "\n\t".join(errors)
            )
        if assign:
            for (owner, name, value), (target, _) in zip(assigned, values, strict=True):
                if isinstance(target, Parameter):
                    if isinstance(value, Parameter):
                        value.requires_grad_(target.requires_grad)
                    else:
                        value = Parameter(value, requires_grad=target.requires_grad)
                setattr(owner, name, value)
        else:
            with no_grad():
                for target, value in values:
                    target.copy_(value)
        for key, m in extra.items():
            if key in state_dict:
                m.set_extra_state(state_dict[key])
        result = _IncompatibleKeys(missing, unexpected)
        for m in self.modules():
            for hook in list(m.__dict__.get("_load_state_dict_post_hooks", {}).values()):
                hook(m, result)  # (it may clear the key lists in place, as torch's)
        return result

    def register_load_state_dict_post_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """``hook(module, incompatible_keys)`` runs after ``load_state_dict``; it may change
        ``incompatible_keys.missing_keys`` / ``unexpected_keys`` in place."""
        registry = self.__dict__.setdefault("_load_state_dict_post_hooks", OrderedDict())
        return _add_hook(registry, hook)

    def _register_load_state_dict_pre_hook(
        self, hook: Callable[..., Any], with_module: bool = False
    ) -> RemovableHandle:
        """``hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
        error_msgs)`` runs before ``load_state_dict`` reads this module's keys; it may rewrite
        ``state_dict`` (a copy) in place. ``with_module=True`` passes the module first."""
        registry = self.__dict__.setdefault("_load_state_dict_pre_hooks", OrderedDict())
        # _WithKwargs marks "pass the module too": resolved at call time, so a deepcopy's
        # hooks get the copy
        return _add_hook(registry, hook, with_kwargs=with_module)

    def register_load_state_dict_pre_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """``hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)`` runs before ``load_state_dict`` reads this module."""
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def _run_load_state_dict_pre_hooks(
        self, state_dict: Mapping[str, Any], strict: bool
    ) -> tuple[Mapping[str, Any], list[str]]:
        """Give each module's load pre-hooks a copy of ``state_dict`` to rewrite (torch's
        order: a module before its children); the error messages they add come back."""
        errors: list[str] = []
        hooked = [
            (prefix, m)
            for prefix, m in self.named_modules()
            if m.__dict__.get("_load_state_dict_pre_hooks")
        ]
        if not hooked:
            return state_dict, errors
        copied = OrderedDict(state_dict)
        missing: list[str] = []
        unexpected: list[str] = []
        for prefix, m in hooked:
            dotted = prefix + "." if prefix else ""
            for hook in list(m._load_state_dict_pre_hooks.values()):
                args: tuple[Any, ...] = (copied, dotted, {}, strict, missing, unexpected, errors)
                if type(hook) is _WithKwargs:
                    hook.fn(m, *args)
                else:
                    hook(*args)
        return copied, errors

    # -- moving and casting -------------------------------------------------------------------
    def _apply(self: T, fn: Callable[[Tensor], Tensor], memo: set[int] | None = None) -> T:
        """Apply ``fn`` to own tensors (rebinding their data in place), then each child once."""
        memo = set() if memo is None else memo
        if id(self) in memo:
            return self
        memo.add(id(self))
        with no_grad():
            for t in (*self._parameters.values(), *self._buffers.values()):
                if t is None or id(t) in memo:
                    continue
                memo.add(id(t))
                _rebind(t, fn(t.detach()))
                if t.grad is not None:
                    _rebind(t.grad, fn(t.grad))
        for child in self._modules.values():
            if child is not None:
                child._apply(fn, memo)
        return self

    def to(self: T, *args: Any, **kwargs: Any) -> T:
        """``to(device)``, ``to(dtype)``, ``to(device, dtype)``, ``to(tensor)``: in place.

        A dtype applies to floating point parameters and buffers only, as in PyTorch;
        ``memory_format=`` (``lucid.channels_last`` ...) to the 4-D and 5-D ones.
        """
        device, dtype, _, _, fmt = parse_to(*args, **kwargs)
        if dtype is not None and not dtype.is_floating_point:
            raise TypeError(
                f"nn.Module.to only accepts floating point dtypes, but got desired dtype={dtype}"
            )

        def convert(t: Tensor) -> Tensor:
            if fmt is not preserve_format and t.ndim in (4, 5):  # as torch: 4-D and 5-D only
                t = t.to(memory_format=fmt)
            if device is not None:
                t = t.to(device)
            if dtype is not None and t.dtype.is_floating_point:
                t = t.to(dtype)
            return t

        return self._apply(convert)

    def to_empty(self: T, *, device: Any, recurse: bool = True) -> T:
        """Give every parameter and buffer new, uninitialised storage on ``device`` (of the
        same shape and dtype): how a module built on the ``"meta"`` device gets real tensors
        (``to`` cannot copy values a meta tensor does not have). Re-initialise them after
        (``reset_parameters``, ``load_state_dict``). ``recurse=False``: own tensors only."""
        if recurse:
            return self._apply(lambda t: empty_like(t, device=device))
        with no_grad():
            for t in (*self._parameters.values(), *self._buffers.values()):
                if t is not None:
                    _rebind(t, empty_like(t, device=device))
        return self

    def share_memory(self: T) -> T:
        """Move every parameter and buffer into shared memory (``Tensor.share_memory_``), for
        Hogwild training in forked processes; returns the module."""
        for t in [*self.parameters(), *self.buffers()]:
            t.share_memory_()
        return self

    def cpu(self: T) -> T:
        """Move every parameter and buffer to the ``"cpu"`` device; returns the module."""
        return self.to("cpu")

    def cuda(self: T, device: Any = None) -> T:
        """Always raises: lucid has no CUDA device (see ``lucid.cuda``)."""
        raise AssertionError(NOT_COMPILED)

    def xpu(self: T, device: Any = None) -> T:
        """Always raises: lucid has no XPU device."""
        raise AssertionError("lucid has no XPU device (its devices: 'cpu', 'mlx', 'meta')")

    def ipu(self: T, device: Any = None) -> T:
        """Always raises: lucid has no IPU device."""
        raise AssertionError("lucid has no IPU device (its devices: 'cpu', 'mlx', 'meta')")

    def mtia(self: T, device: Any = None) -> T:
        """Always raises: lucid has no MTIA device."""
        raise AssertionError("lucid has no MTIA device (its devices: 'cpu', 'mlx', 'meta')")

    def type(self: T, dst_type: Any) -> T:
        """Cast every parameter and buffer to ``dst_type``; returns the module."""
        return self._apply(lambda t: t.to(dst_type))

    def float(self: T) -> T:
        """Cast the floating point parameters and buffers to float32; returns the module."""
        return self._apply(lambda t: t.to(dtypes.float32) if t.is_floating_point() else t)

    def double(self: T) -> T:
        """Cast the floating point parameters and buffers to float64; returns the module."""
        return self._apply(lambda t: t.to(dtypes.float64) if t.is_floating_point() else t)

    def half(self: T) -> T:
        """Cast the floating point parameters and buffers to float16; returns the module."""
        return self._apply(lambda t: t.to(dtypes.float16) if t.is_floating_point() else t)

    def bfloat16(self: T) -> T:
        """Cast the floating point parameters and buffers to bfloat16; returns the module."""
        return self._apply(lambda t: t.to(dtypes.bfloat16) if t.is_floating_point() else t)

    # -- modes and grads ----------------------------------------------------------------------
    def train(self: T, mode: bool = True) -> T:
        """Set training mode (``mode=True``) or evaluation mode, for this module and every
        submodule."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        for m in self.modules():
            object.__setattr__(m, "training", mode)
        return self

    def compile(self, *args: Any, **kwargs: Any) -> None:
        """Compile this module's calls in place with :func:`lucid.compile` (its arguments):
        the module stays itself (same ``state_dict`` keys), its ``__call__`` replays the
        capture, as ``torch.nn.Module.compile``."""
        object.__setattr__(self, "_compiled_call_impl",
                           lucid_compile(self._call_impl, *args, **kwargs))  # fmt: skip

    def eval(self: T) -> T:
        """Set evaluation mode (``train(False)``): dropout off, batch norm uses its running
        statistics."""
        return self.train(False)

    def requires_grad_(self: T, requires_grad: bool = True) -> T:
        """Set ``requires_grad`` on every parameter; returns the module."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset every parameter's gradient: to None, or to zeros with ``set_to_none=False``."""
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                if p.grad.grad_fn is not None:
                    p.grad = p.grad.detach()
                p.grad.zero_()

    def apply(self: T, fn: Callable[[Module], None]) -> T:
        """Call ``fn`` on every submodule (children first) and then on this module."""
        for child in self.children():
            child.apply(fn)
        fn(self)
        return self

    # -- repr ---------------------------------------------------------------------------------
    def extra_repr(self) -> str:
        """The text inside this module's parentheses in its repr (override in layers)."""
        return ""

    def _get_name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        lines = self.extra_repr().split("\n") if self.extra_repr() else []
        for name, child in self._modules.items():
            lines.append(f"({name}): " + _addindent(repr(child), 2))
        main = self._get_name() + "("
        if lines:
            if len(lines) == 1 and not self._modules:
                main += lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)


class _WithKwargs:
    """Marks a forward (pre-)hook registered with ``with_kwargs=True``."""

    __slots__ = ("fn",)

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn


_EXTRA_STATE = "_extra_state"  # torch's state_dict key of get_extra_state's value


def _add_hook(
    registry: OrderedDict[int, Any],
    hook: Any,
    prepend: bool = False,
    with_kwargs: bool = False,
) -> RemovableHandle:
    handle = RemovableHandle(registry)
    registry[handle.id] = _WithKwargs(hook) if with_kwargs else hook
    if prepend:
        registry.move_to_end(handle.id, last=False)
    return handle


def register_module_forward_pre_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """A forward-pre hook for every Module (``torch.nn.modules.module`` global hooks)."""
    return _add_hook(_global_forward_pre_hooks, hook)


def register_module_forward_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Register a forward hook that runs after every module's forward, as
    ``torch.nn.modules.module.register_module_forward_hook``."""
    return _add_hook(_global_forward_hooks, hook)


def _typename(value: Any) -> str:
    t = type(value)
    return f"{t.__module__}.{t.__qualname__}" if t.__module__ != "builtins" else t.__qualname__


def _remove_from(module: Module, name: str, skip: str) -> None:
    """A name reassigned to another kind leaves its old registry (and the plain __dict__)."""
    for registry in ("_parameters", "_buffers", "_modules"):
        if registry != skip:
            reg = module.__dict__[registry]
            if name in reg:
                del reg[name]
    module._non_persistent_buffers_set.discard(name)
    module.__dict__.pop(name, None)


def _check_name(module: Module, name: str, kind: str, registry: str) -> None:
    if not isinstance(name, str):
        raise TypeError(f"{kind} name should be a string. Got {_typename(name)}")
    if "." in name:
        raise KeyError(f'{kind} name can\'t contain "."')
    if name == "":
        raise KeyError(f'{kind} name can\'t be empty string ""')
    if hasattr(module, name) and name not in module.__dict__[registry]:
        others = [r for r in ("_parameters", "_buffers", "_modules") if r != registry]
        if not any(name in module.__dict__[r] for r in others):
            raise KeyError(f"attribute '{name}' already exists")
        for r in others:
            module.__dict__[r].pop(name, None)


def _as_tensor(value: Any, like: Tensor) -> Tensor:
    if isinstance(value, Tensor):
        return value
    converted: Tensor = as_tensor(value, dtype=like.dtype, device=like.device)
    return converted


def _size(t: Tensor) -> str:
    return f"lucid.Size({list(t.shape)})"


def _rebind(t: Tensor, new: Tensor) -> None:
    """Make ``t`` hold ``new``'s array (and backend) without changing its identity."""
    if new is not t:
        t.data = new


def _addindent(text: str, spaces: int) -> str:
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    pad = " " * spaces
    return lines[0] + "\n" + "\n".join(pad + line for line in lines[1:])
