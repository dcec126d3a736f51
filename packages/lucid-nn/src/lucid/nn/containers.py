"""Containers: Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict."""

from __future__ import annotations

import operator
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, cast, overload

from lucid import Tensor
from lucid.nn.module import Module
from lucid.nn.parameter import Parameter


def _members(container: Module) -> OrderedDict[str, Module]:
    """A container's ``_modules``, typed as what it holds: Modules (append, insert and item
    assignment take only Modules; ``Module`` types its slots ``Module | None`` for the
    ``register_module(name, None)`` of plain modules)."""
    return cast("OrderedDict[str, Module]", container._modules)


def _index(idx: int, n: int, kind: str) -> int:
    idx = operator.index(idx)
    if not -n <= idx < n:
        raise IndexError(f"index {idx} is out of range for {kind} of length {n}")
    return idx % n


class Sequential(Module):
    """Modules called in order, each on the previous one's output.

    >>> net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    >>> net[0]
    Linear(in_features=4, out_features=8, bias=True)
    """

    def __init__(self, *args: Any) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for name, module in args[0].items():
                self.add_module(name, module)
        else:
            for i, module in enumerate(args):
                self.add_module(str(i), module)

    @overload
    def __getitem__(self, idx: slice) -> Sequential: ...

    @overload
    def __getitem__(self, idx: int) -> Module: ...

    def __getitem__(self, idx: int | slice) -> Module:
        if isinstance(idx, slice):
            return type(self)(OrderedDict(list(self._modules.items())[idx]))
        key = list(self._modules)[_index(idx, len(self), "Sequential")]
        return _members(self)[key]

    def __setitem__(self, idx: int, module: Module) -> None:
        key = list(self._modules)[_index(idx, len(self), "Sequential")]
        setattr(self, key, module)

    def __delitem__(self, idx: int | slice) -> None:
        keys = list(self._modules)
        for key in keys[idx] if isinstance(idx, slice) else [keys[_index(idx, len(self), "")]]:
            del self._modules[key]
        # keep numeric names contiguous, as PyTorch does
        items = list(self._modules.items())
        self._modules.clear()
        for i, (_, m) in enumerate(items):
            self._modules[str(i)] = m

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(m for m in self._modules.values() if m is not None)

    def append(self, module: Module) -> Sequential:
        """Add ``module`` at the end; returns the container."""
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> Sequential:
        """Add each of ``modules`` at the end; returns the container."""
        for m in modules:
            self.append(m)
        return self

    def insert(self, index: int, module: Module) -> Sequential:
        """Insert ``module`` before position ``index``; returns the container."""
        n = len(self)
        index = index + n if index < 0 else index
        if not 0 <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        items = list(self._modules.values())
        items.insert(index, module)
        self._modules.clear()
        for i, m in enumerate(items):
            self._modules[str(i)] = m
        return self

    def forward(self, x: Any) -> Any:
        """Call each module on the previous one's output, in order."""
        for module in _members(self).values():
            x = module(x)
        return x


class ModuleList(Module):
    """A list of registered submodules (indexing, slicing, append, extend, insert)."""

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.extend(modules)

    @overload
    def __getitem__(self, idx: slice) -> ModuleList: ...

    @overload
    def __getitem__(self, idx: int) -> Module: ...

    def __getitem__(self, idx: int | slice) -> Module:
        if isinstance(idx, slice):
            return ModuleList(list(_members(self).values())[idx])
        return _members(self)[str(_index(idx, len(self), "ModuleList"))]

    def __setitem__(self, idx: int, module: Module) -> None:
        setattr(self, str(_index(idx, len(self), "ModuleList")), module)

    def __delitem__(self, idx: int | slice) -> None:
        items = list(self._modules.values())
        del items[idx]
        self._modules.clear()
        for i, m in enumerate(items):
            self._modules[str(i)] = m

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(_members(self).values())

    def __iadd__(self, modules: Iterable[Module]) -> ModuleList:
        return self.extend(modules)

    def append(self, module: Module) -> ModuleList:
        """Add ``module`` at the end; returns the list."""
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> ModuleList:
        """Add each of ``modules`` at the end; returns the list."""
        if not isinstance(modules, Iterable):
            raise TypeError(
                f"ModuleList.extend should be called with an iterable, but got "
                f"{type(modules).__name__}"
            )
        for m in modules:
            self.append(m)
        return self

    def insert(self, index: int, module: Module) -> None:
        """Insert ``module`` before position ``index``."""
        items = list(self._modules.values())
        items.insert(index, module)
        self._modules.clear()
        for i, m in enumerate(items):
            self._modules[str(i)] = m


class ModuleDict(Module):
    """An ordered dict of registered submodules."""

    def __init__(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]] | None = None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return _members(self)[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key: object) -> bool:
        return key in self._modules

    def keys(self) -> Iterable[str]:
        """The keys, in insertion order."""
        return self._modules.keys()

    def items(self) -> Iterable[tuple[str, Module]]:
        """The ``(key, module)`` pairs, in insertion order."""
        return _members(self).items()

    def values(self) -> Iterable[Module]:
        """The modules, in insertion order."""
        return _members(self).values()

    def pop(self, key: str) -> Module:
        """Remove the module at ``key`` and return it."""
        m = self[key]
        del self[key]
        return m

    def clear(self) -> None:
        """Remove every module."""
        self._modules.clear()

    def update(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]]) -> None:
        """Add or replace modules from a mapping or an iterable of ``(key, module)`` pairs."""
        pairs = modules.items() if isinstance(modules, Mapping) else modules
        for key, module in pairs:
            self[key] = module


def _as_parameter(value: Any) -> Any:
    if isinstance(value, Tensor) and not isinstance(value, Parameter):
        return Parameter(value)
    return value


def _element_repr(key: object, value: Any, by_type: bool = False) -> str:
    """One line of a ParameterList's (``by_type``: a ParameterDict's) ``extra_repr``, as torch's:
    indented, a tensor by its dtype (ParameterDict: its type name), another object by its type."""
    if isinstance(value, Tensor):
        kind = "Parameter" if isinstance(value, Parameter) else "Tensor"
        size = "x".join(str(s) for s in value.shape)
        dtype = value.type() if by_type else value.dtype
        return f"  ({key}): {kind} containing: [{dtype} of size {size}]"
    return f"  ({key}): Object of type: {type(value).__name__}"


class ParameterList(Module):
    """A list of registered parameters (plain tensors are wrapped as Parameters).

    As torch's, an element is stored as the attribute ``str(index)``: a module becomes a
    submodule (``nn.ParameterList([nn.ParameterList([...]), ...])`` nests) and any other object
    a plain attribute.
    """

    def __init__(self, values: Iterable[Any] | None = None) -> None:
        super().__init__()
        object.__setattr__(self, "_size", 0)
        if values is not None:
            self.extend(values)

    @overload
    def __getitem__(self, idx: int) -> Any: ...

    @overload
    def __getitem__(self, idx: slice) -> ParameterList: ...

    def __getitem__(self, idx: int | slice) -> Any:
        if isinstance(idx, slice):
            out = self.__class__()
            for i in range(*idx.indices(len(self))):
                out.append(self[i])
            return out
        return getattr(self, str(_index(idx, self._size, "ParameterList")))

    def __setitem__(self, idx: int, value: Any) -> None:
        setattr(self, str(_index(idx, self._size, "ParameterList")), _as_parameter(value))

    def __len__(self) -> int:
        return int(self._size)

    def __iter__(self) -> Iterator[Any]:
        return iter(self[i] for i in range(len(self)))

    def __iadd__(self, values: Iterable[Any]) -> ParameterList:
        return self.extend(values)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("ParameterList should not be called.")

    def append(self, value: Any) -> ParameterList:
        """Add ``value`` at the end (a plain tensor becomes a Parameter); returns the list."""
        object.__setattr__(self, "_size", self._size + 1)
        self[self._size - 1] = value
        return self

    def extend(self, values: Iterable[Any]) -> ParameterList:
        """Add each of ``values`` at the end; returns the list."""
        if not isinstance(values, Iterable) or isinstance(values, Tensor):
            raise TypeError(
                "ParameterList.extend should be called with an iterable, but got "
                + type(values).__name__
            )
        for v in values:
            self.append(v)
        return self

    def extra_repr(self) -> str:
        """One line per element: its index, and a tensor's shape and dtype or its type."""
        return "\n".join(_element_repr(i, p) for i, p in enumerate(self))


class ParameterDict(Module):
    """An ordered dict of registered parameters (plain tensors are wrapped as Parameters).

    As torch's, a value is stored as the attribute ``key`` (a module becomes a submodule, any
    other object a plain attribute), and ``update`` with a plain ``dict`` adds its keys in
    sorted order (an ``OrderedDict``, a ParameterDict or pairs keep theirs).
    """

    _keys: dict[str, None]

    def __init__(
        self,
        parameters: Mapping[str, Any] | ParameterDict | Iterable[tuple[str, Any]] | None = None,
    ):
        super().__init__()
        object.__setattr__(self, "_keys", {})
        if parameters is not None:
            self.update(parameters)

    def _key_to_attr(self, key: str) -> str:
        if not isinstance(key, str):
            raise TypeError(
                "Index given to ParameterDict cannot be used as a key as it is not a string "
                f"(type is '{type(key).__name__}'). Open an issue on github if you need "
                "non-string keys."
            )
        return key

    def __getitem__(self, key: str) -> Any:
        return getattr(self, self._key_to_attr(key))

    def __setitem__(self, key: str, value: Any) -> None:
        attr = self._key_to_attr(key)
        self._keys[key] = None
        setattr(self, attr, _as_parameter(value))

    def __delitem__(self, key: str) -> None:
        del self._keys[key]
        delattr(self, self._key_to_attr(key))

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __reversed__(self) -> Iterator[str]:
        return reversed(self._keys)

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("ParameterDict should not be called.")

    def copy(self) -> ParameterDict:
        """A new ParameterDict holding the same values."""
        return ParameterDict(OrderedDict((k, self[k]) for k in self._keys))

    def setdefault(self, key: str, default: Any | None = None) -> Any:
        """The value at ``key``, after setting it to ``default`` if ``key`` is missing."""
        if key not in self:
            self[key] = default
        return self[key]

    def get(self, key: str, default: Any | None = None) -> Any:
        """The value at ``key``, or ``default`` if ``key`` is missing."""
        return self[key] if key in self else default

    def fromkeys(self, keys: Iterable[str], default: Any | None = None) -> ParameterDict:
        """A new ParameterDict with ``keys``, each set to ``default``."""
        return ParameterDict((k, default) for k in keys)

    def keys(self) -> Iterable[str]:
        """The keys, in insertion order."""
        return self._keys.keys()

    def items(self) -> Iterable[tuple[str, Any]]:
        """The ``(key, value)`` pairs, in insertion order."""
        return ((k, self[k]) for k in self._keys)

    def values(self) -> Iterable[Any]:
        """The values, in insertion order."""
        return (self[k] for k in self._keys)

    def pop(self, key: str) -> Any:
        """Remove the value at ``key`` and return it."""
        v = self[key]
        del self[key]
        return v

    def popitem(self) -> tuple[str, Any]:
        """Remove and return the last inserted ``(key, value)`` pair."""
        k, _ = self._keys.popitem()
        self._keys[k] = None
        return k, self.pop(k)

    def clear(self) -> None:
        """Remove every value."""
        for k in list(self._keys):
            del self[k]

    def update(
        self, parameters: Mapping[str, Any] | ParameterDict | Iterable[tuple[str, Any]]
    ) -> None:
        """Add or replace values from a mapping or an iterable of ``(key, value)`` pairs."""
        if not isinstance(parameters, Iterable):
            raise TypeError(
                "ParametersDict.update should be called with an iterable of key/value pairs, "
                "but got " + type(parameters).__name__
            )
        if isinstance(parameters, OrderedDict | ParameterDict):
            for key, value in parameters.items():
                self[key] = value
        elif isinstance(parameters, Mapping):
            for key, value in sorted(parameters.items()):
                self[key] = value
        else:
            for j, pair in enumerate(parameters):
                if not isinstance(pair, Iterable):
                    raise TypeError(
                        f"ParameterDict update sequence element #{j} should be Iterable; is"
                        + type(pair).__name__
                    )
                pair = tuple(pair)
                if len(pair) != 2:
                    raise ValueError(
                        f"ParameterDict update sequence element #{j} has length {len(pair)}; "
                        "2 is required"
                    )
                self[pair[0]] = pair[1]

    def __or__(self, other: ParameterDict) -> ParameterDict:
        out = self.copy()
        out.update(other)
        return out

    def __ror__(self, other: ParameterDict) -> ParameterDict:
        out = other.copy()
        out.update(self)
        return out

    def __ior__(self, other: ParameterDict) -> ParameterDict:
        self.update(other)
        return self

    def extra_repr(self) -> str:
        """One line per value: its key, and a tensor's shape and dtype or its type."""
        return "\n".join(_element_repr(k, p, by_type=True) for k, p in self.items())
