"""``torch.utils.data.distributed``'s path: ``DistributedSampler``."""

from lucid.data.distributed import DistributedSampler

__all__ = ["DistributedSampler"]
