"""Generated elementwise loops compiled with numba (``lucid-core[numba]``), for
``lucid.compile``'s fuser (``lucid.compiler._fused_elementwise``): it writes a loop's Python
source over arrays, this module compiles it.

``build(source, name, constants)``: the function ``name`` defined by ``source`` (which may use
``math``, ``np`` and the ``constants``, NumPy scalars frozen into the code), compiled as
``_numba.jit_math`` compiles the library's own loops (no GIL, no fast-math, NumPy's error model,
arrays not aliasing) but not cached on disk: the source exists only in this process. One
compilation per distinct source and constants, kept for the process (a lock: two threads may
ask at once).
"""

from __future__ import annotations

import math
import threading
from typing import Any

import numba
import numpy as np

from lucid.backends._numpy._numba import NoAliasCompiler

_built: dict[tuple[str, str, tuple[tuple[str, Any], ...]], Any] = {}
_lock = threading.Lock()


def build(source: str, name: str, constants: dict[str, Any]) -> Any:
    """``name`` from ``source``, compiled (see the module's docstring)."""
    key = (
        source,
        name,
        tuple(sorted((k, (type(v).__name__, repr(v))) for k, v in constants.items())),
    )
    fn = _built.get(key)
    if fn is not None:
        return fn
    with _lock:
        fn = _built.get(key)
        if fn is None:
            ns: dict[str, Any] = {"math": math, "np": np, **constants}
            exec(compile(source, f"<lucid fused {name}>", "exec"), ns)  # noqa: S102
            fn = numba.njit(nogil=True, fastmath=False, error_model="numpy",
                            pipeline_class=NoAliasCompiler)(ns[name])  # fmt: skip
            _built[key] = fn
    return fn
