"""Kept for ``lucid/__init__.py``'s import of ``get_num_threads``/``set_num_threads``: the
thread code lives in ``lucid.backends._numpy._parallel``, public as
``lucid.backends.get_num_threads`` and ``lucid.backends.set_num_threads``."""

from __future__ import annotations

from lucid.backends._numpy._parallel import get_num_threads, set_num_threads

__all__ = ["get_num_threads", "set_num_threads"]
