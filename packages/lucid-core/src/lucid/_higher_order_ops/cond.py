"""``torch._higher_order_ops.cond``: :func:`lucid.cond` under torch's module path."""

from __future__ import annotations

from lucid._toplevel import cond

__all__ = ["cond"]
