"""``torch.utils.data.dataset``'s path: the objects of ``lucid.data.dataset``."""

from lucid.data.dataset import *  # noqa: F403
from lucid.data.dataset import __all__ as __all__
