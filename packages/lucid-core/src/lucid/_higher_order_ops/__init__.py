"""``torch._higher_order_ops``: structured control flow (``cond``, ``while_loop``, ``scan``,
``associative_scan``, ``map``) as torch 2.13 runs it eagerly.

torch captures these as graph operators; lucid runs them as loops of ordinary lucid ops, so
autograd flows through them and ``lucid.compile`` records the ops each call runs. Only
``cond`` is special under ``lucid.compile``: with a tensor predicate it runs both branches and
selects with ``lucid.where`` (see :func:`lucid.cond`).

>>> import lucid
>>> from lucid._higher_order_ops import scan
>>> carry, ys = scan(lambda c, x: (c + x, (c + x).clone()), lucid.zeros(1), lucid.arange(4.0))
>>> carry, ys.flatten()
(tensor([6.]), tensor([0., 1., 3., 6.]))
"""

from __future__ import annotations

from lucid._higher_order_ops.associative_scan import associative_scan
from lucid._higher_order_ops.cond import cond
from lucid._higher_order_ops.map import map  # noqa: A004  (torch's name)
from lucid._higher_order_ops.scan import scan
from lucid._higher_order_ops.while_loop import while_loop

__all__ = ["associative_scan", "cond", "map", "scan", "while_loop"]
