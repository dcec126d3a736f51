"""The table from lucid's op classes to the functions that write their ONNX nodes."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from lucid.onnx._context import Context
from lucid.onnx._trace import Call

# A converter gets the context (value names, graph) and the call; returns one ONNX value name
# per output of the call.
Converter = Callable[[Context, Call], list[str]]


@dataclass(frozen=True)
class Entry:
    convert: Converter
    # True when the converter itself reads sizes that follow dynamic axes from the second run
    # (reshape targets, slices); others must see equal non-tensor arguments in both runs.
    dynamic: bool


CONVERTERS: dict[str, Entry] = {}


def converts(*keys: str, dynamic: bool = False) -> Callable[[Converter], Converter]:
    """Register a converter for ops named ``module.Class`` (the op's ``Function`` subclass)."""

    def register(fn: Converter) -> Converter:
        for key in keys:
            CONVERTERS[key] = Entry(fn, dynamic)
        return fn

    return register


def one(name: str) -> list[str]:
    return [name]


def attrs_equal(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except (TypeError, ValueError):  # arrays compare elementwise
        return a is b
