"""``lucid.utils.tensorboard``: ``SummaryWriter`` writes TensorBoard event files
(``torch.utils.tensorboard``).

Needs the ``tensorboard`` package (``pip install lucid-core[tensorboard]``), as PyTorch's does;
``add_figure`` also needs matplotlib. Values may be lucid tensors, numpy arrays or numbers.

>>> from lucid.utils.tensorboard import SummaryWriter
>>> with SummaryWriter("runs/demo") as w:  # doctest: +SKIP
...     w.add_scalar("loss", 0.5, global_step=1)
"""

from __future__ import annotations

try:
    import tensorboard  # noqa: F401
except ImportError as exc:  # as torch.utils.tensorboard says it
    raise ImportError(
        "TensorBoard logging requires TensorBoard version 1.15 or above: "
        "pip install tensorboard (or lucid-core[tensorboard])"
    ) from exc

from lucid.utils.tensorboard.writer import FileWriter, SummaryWriter

__all__ = ["FileWriter", "SummaryWriter"]
