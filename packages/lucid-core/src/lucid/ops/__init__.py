# ruff: noqa: F403  (the star imports bind each module's tabled ops)
"""All tensor operations. ``lucid.<op>`` and ``Tensor.<op>`` both come from here.

Each op module lists its public ops once, in its ``OPS`` table (see ``lucid.ops._registry``):
this package's ``__all__``, the Tensor methods and the typing stubs (``__init__.pyi`` and
``lucid/_tensor_methods.py``, written by ``tools/gen_stubs.py``) are all derived from them.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from types import ModuleType
from typing import Any

from lucid.ops._numpy_names import takes_numpy_names, with_numpy_names
from lucid.ops._registry import Op
from lucid.ops.arrange import *
from lucid.ops.aten_names import *
from lucid.ops.blas import *
from lucid.ops.calculus import *
from lucid.ops.complex import *
from lucid.ops.compose import *
from lucid.ops.copies import *
from lucid.ops.elementwise import *
from lucid.ops.floatbits import *
from lucid.ops.gamma import *
from lucid.ops.grids import *
from lucid.ops.histogramdd import *
from lucid.ops.indexing import *
from lucid.ops.join import *
from lucid.ops.matmul import *
from lucid.ops.movement import *
from lucid.ops.native_norms import *
from lucid.ops.reduction import *
from lucid.ops.shape import *
from lucid.ops.softmax import *
from lucid.ops.sorting import *
from lucid.ops.special import *
from lucid.ops.stats import *
from lucid.ops.strided import *
from lucid.ops.unary import *

# By import path: some op names (softmax) hide their module's attribute on this package.
MODULES: tuple[ModuleType, ...] = tuple(
    importlib.import_module(f"lucid.ops.{name}")
    for name in ("elementwise", "indexing", "join", "matmul", "movement", "reduction", "shape",
                 "unary", "blas", "grids", "softmax", "sorting", "special", "gamma", "stats",
                 "arrange", "compose", "complex", "copies", "aten_names", "strided", "native_norms",
                 "floatbits", "calculus", "histogramdd")
)  # fmt: skip


def _spelled(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The reductions' public form: also taking NumPy's ``axis=``/``keepdims=`` (_numpy_names)."""
    wrapped = _NUMPY_NAMED.get(fn)
    if wrapped is None:
        wrapped = with_numpy_names(fn) if takes_numpy_names(fn) else fn
        _NUMPY_NAMED[fn] = wrapped
    return wrapped


_NUMPY_NAMED: dict[Callable[..., Any], Callable[..., Any]] = {}


def rows() -> list[tuple[ModuleType, Op]]:
    """Every public op's row, with the module that defines it."""
    return [(m, row) for m in MODULES for row in m.OPS]


def methods() -> dict[str, Callable[..., Any]]:
    """The ops that are also Tensor methods (the tensor is their first argument)."""
    return {row.name: _spelled(getattr(m, row.name)) for m, row in rows() if row.method}


__all__ = [row.name for _, row in rows()]

# lucid.sum (and lucid.ops.sum) as torch.sum: taking NumPy's spellings. The op modules keep
# the plain functions, which lucid's own code calls.
for _name in __all__:
    globals()[_name] = _spelled(globals()[_name])
del _name
