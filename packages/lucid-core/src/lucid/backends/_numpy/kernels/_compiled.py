"""The optional compiled kernels (``lucid-core[numba]``): loaded once, and NumPy where absent.

``_winograd_jit`` and ``_batchnorm_jit`` import numba at their top; a kernel module asks
``load(name)`` for one and gets it, or None where numba is not installed, cannot be imported
(a numba built for another numpy) or ``LUCID_NUMBA=0`` is set. ``run`` calls a compiled
function; where it fails (numba compiles on the first call, and a numba that cannot build here
must not stop training) it warns once and the caller falls back to its NumPy code, for good.
"""

from __future__ import annotations

import importlib
import os
import warnings
from typing import Any

# ``LUCID_NUMBA=0`` in the environment keeps every kernel in NumPy (for A/B comparisons).
NUMBA = os.environ.get("LUCID_NUMBA", "1") != "0"
_modules: dict[str, Any] = {}  # name -> module, or False once it failed


def load(name: str) -> Any:
    """The compiled kernel module ``lucid.backends._numpy.kernels.<name>``, or None."""
    if not NUMBA:
        return None
    mod = _modules.get(name)
    if mod is None:
        try:
            mod = importlib.import_module(f"{__package__}.{name}")
        except ImportError:
            mod = False
        _modules[name] = mod
    return mod or None


def in_use() -> bool:
    """Whether some compiled kernel module has been loaded (and has not failed) in this
    process."""
    return any(_modules.values())


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
