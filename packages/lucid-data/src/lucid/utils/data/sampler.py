"""``torch.utils.data.sampler``'s path: the objects of ``lucid.data.sampler``."""

from lucid.data.sampler import *  # noqa: F403
from lucid.data.sampler import __all__ as __all__
