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


class ParameterList(Module):
    """A list of registered parameters (plain tensors are wrapped as Parameters)."""

    def __init__(self, values: Iterable[Any] | None = None) -> None:
        super().__init__()
        object.__setattr__(self, "_size", 0)
        if values is not None:
            self.extend(values)

    def __getitem__(self, idx: int) -> Any:
        return self._parameters[str(_index(idx, self._size, "ParameterList"))]

    def __setitem__(self, idx: int, value: Any) -> None:
        self.register_parameter(str(_index(idx, self._size, "ParameterList")), _as_parameter(value))

    def __len__(self) -> int:
        return int(self._size)

    def __iter__(self) -> Iterator[Any]:
        return iter(self[i] for i in range(len(self)))

    def __iadd__(self, values: Iterable[Any]) -> ParameterList:
        return self.extend(values)

    def append(self, value: Any) -> ParameterList:
        """Add ``value`` at the end (a plain tensor becomes a Parameter); returns the list."""
        object.__setattr__(self, "_size", self._size + 1)
        self.register_parameter(str(self._size - 1), _as_parameter(value))
        return self

    def extend(self, values: Iterable[Any]) -> ParameterList:
        """Add each of ``values`` at the end; returns the list."""
        for v in values:
            self.append(v)
        return self

    def extra_repr(self) -> str:
        """One line per parameter: its index, shape and dtype."""
        lines = []
        for i, p in enumerate(self):
            if p is None:
                lines.append(f"({i}): None")
                continue
            kind = "Parameter" if isinstance(p, Parameter) else "Tensor"
            size = "x".join(str(s) for s in p.shape)
            lines.append(f"({i}): {kind} containing: [{p.dtype} of size {size}]")
        return "\n".join(lines)


class ParameterDict(Module):
    """An ordered dict of registered parameters (plain tensors are wrapped as Parameters)."""

    def __init__(self, parameters: Mapping[str, Any] | Iterable[tuple[str, Any]] | None = None):
        super().__init__()
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key: str) -> Any:
        return self._parameters[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.register_parameter(key, _as_parameter(value))

    def __delitem__(self, key: str) -> None:
        del self._parameters[key]

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self) -> Iterator[str]:
        return iter(self._parameters)

    def __contains__(self, key: object) -> bool:
        return key in self._parameters

    def keys(self) -> Iterable[str]:
        """The keys, in insertion order."""
        return self._parameters.keys()

    def items(self) -> Iterable[tuple[str, Any]]:
        """The ``(key, parameter)`` pairs, in insertion order."""
        return self._parameters.items()

    def values(self) -> Iterable[Any]:
        """The parameters, in insertion order."""
        return self._parameters.values()

    def pop(self, key: str) -> Any:
        """Remove the parameter at ``key`` and return it."""
        v = self[key]
        del self[key]
        return v

    def update(self, parameters: Mapping[str, Any] | Iterable[tuple[str, Any]]) -> None:
        """Add or replace parameters from a mapping or an iterable of ``(key, value)`` pairs."""
        pairs = parameters.items() if isinstance(parameters, Mapping) else parameters
        for key, value in pairs:
            self[key] = value

    def extra_repr(self) -> str:
        """One line per parameter: its key, shape and dtype."""
        lines = []
        for k, p in self.items():
            size = "x".join(str(s) for s in p.shape)
            lines.append(f"({k}): Parameter containing: [{p.dtype} of size {size}]")
        return "\n".join(lines)
