"""Which compiled kernels (``lucid-core[numba]``) are available: loaded once, NumPy where not.

The ``kernels/_*_jit.py`` modules import numba (and ``_numba``, its runtime) at their top; a
kernel module asks ``load(name)`` for one and gets it, or None where numba is not installed,
cannot be imported (a numba built for another numpy) or ``lucid.backends.cpu.numba_enabled`` is
False (read at each call). ``run`` calls a compiled function; where it fails (numba compiles on
the first call, and a numba that cannot build here must not stop training) it warns once and
the caller falls back to its NumPy code, for good. Nothing here imports numba.
"""

from __future__ import annotations

import importlib
import warnings
from typing import Any

from lucid.backends._numpy._settings import cpu

_KERNELS = "lucid.backends._numpy.kernels"
_modules: dict[str, Any] = {}  # name -> module, or False once it failed


def load(name: str) -> Any:
    """The compiled kernel module ``lucid.backends._numpy.kernels.<name>``, or None."""
    if not cpu.numba_enabled:
        return None
    mod = _modules.get(name)
    if mod is None:
        try:
            mod = importlib.import_module(f"{_KERNELS}.{name}")
        except ImportError:
            mod = False
        _modules[name] = mod
    return mod or None


def available(name: str = "_winograd_jit") -> bool:
    """Whether the compiled kernel module ``name`` loads here (numba installed and enabled)."""
    return load(name) is not None


def in_use() -> bool:
    """Whether some compiled kernel module has been loaded (and has not failed) in this
    process, with the compiled kernels enabled."""
    return cpu.numba_enabled and any(_modules.values())


def run(name: str, fn: str, *args: Any) -> bool:
    """Call ``<name>.<fn>(*args)``; False (and None from ``load(name)`` from now on) if it fails."""
    try:
        getattr(_modules[name], fn)(*args)
    except Exception as exc:  # noqa: BLE001
        _modules[name] = False
        what = f"{type(exc).__name__}: {str(exc)[:200]}"
        warnings.warn(
            f"lucid: numba could not run the compiled kernel {name}.{fn}, using NumPy's ({what})",
            RuntimeWarning,
            stacklevel=3,
        )
        return False
    return True
