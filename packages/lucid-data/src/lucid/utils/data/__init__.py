"""``lucid.utils.data``: ``torch.utils.data``'s path to the objects of ``lucid.data``.

Everything here is the same object as in ``lucid.data`` (``lucid.utils.data.DataLoader is
lucid.data.DataLoader``), so ``from torch.utils.data import DataLoader`` ports by changing
``torch`` to ``lucid``. The submodules ``dataloader``, ``dataset``, ``sampler`` and
``distributed`` mirror PyTorch's.

>>> import lucid.utils.data, lucid.data
>>> lucid.utils.data.TensorDataset is lucid.data.TensorDataset
True
"""

from lucid.data import *  # noqa: F403
from lucid.data import __all__ as __all__
from lucid.utils.data import dataloader, dataset, distributed, sampler  # noqa: F401
