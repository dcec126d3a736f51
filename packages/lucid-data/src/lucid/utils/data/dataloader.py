"""``torch.utils.data.dataloader``'s path: DataLoader, default_collate, get_worker_info."""

from lucid.data import DataLoader, WorkerInfo, default_collate, default_convert, get_worker_info

__all__ = ["DataLoader", "WorkerInfo", "default_collate", "default_convert", "get_worker_info"]
