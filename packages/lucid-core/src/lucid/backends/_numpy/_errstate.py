"""NumPy's floating-point warnings stay inside lucid's ops, as PyTorch never warns for them.

``lucid.log(lucid.tensor(0.0))`` is ``-inf`` and ``0 / 0`` is ``nan`` with no RuntimeWarning.
``Function.apply`` runs each forward with NumPy's error state set to "ignore" for the current
thread and context only, and restores it after, so users' own NumPy code keeps its settings
(``np.seterr`` at import would change them for the whole program).

``QUIET`` is ``(state, value)``: ``token = state.set(value)`` before, ``state.reset(token)``
after. On NumPy 2 ``state`` is NumPy's own error-state context variable (what
``np.errstate`` sets; far cheaper per op than entering a new ``np.errstate``:
docs/performance.md); on older NumPy a small object with the same two methods over
``np.seterr`` (per thread there).
"""

from __future__ import annotations

from typing import Any

import numpy as np


class _SeterrState:
    """``set``/``reset`` over ``np.seterr`` (NumPy < 2, whose error state is per thread)."""

    def set(self, value: Any) -> Any:
        return np.seterr(**value)

    def reset(self, token: Any) -> None:
        np.seterr(**token)


def _quiet() -> tuple[Any, Any]:
    try:
        from numpy._core._ufunc_config import (  # type: ignore[attr-defined]
            _extobj_contextvar,
            _make_extobj,
        )
    except ImportError:  # NumPy < 2
        return _SeterrState(), {"all": "ignore"}
    return _extobj_contextvar, _make_extobj(all="ignore")


QUIET = _quiet()
