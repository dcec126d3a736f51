"""``lucid.distributed``: data-parallel training across processes and machines
(``torch.distributed``), on MPI through mpi4py, or on MLX's ``mx.distributed``.

>>> import lucid.distributed as dist                      # doctest: +SKIP
>>> dist.init_process_group()           # under lucid-run --nproc-per-node 2 script.py
>>> model = lucid.nn.parallel.DistributedDataParallel(model)
>>> t = lucid.ones(3); dist.all_reduce(t)               # every rank: 2.0 each
"""

from __future__ import annotations

from lucid.distributed._collectives import (
    all_gather,
    all_gather_into_tensor,
    all_reduce,
    broadcast,
    gather,
    irecv,
    isend,
    recv,
    reduce,
    reduce_scatter,
    reduce_scatter_tensor,
    scatter,
    send,
)
from lucid.distributed._group import (
    Backend,
    GroupMember,
    ProcessGroup,
    barrier,
    destroy_process_group,
    get_backend,
    get_rank,
    get_world_size,
    init_process_group,
    is_available,
    is_initialized,
    is_mlx_available,
    is_mpi_available,
    new_group,
)
from lucid.distributed._objects import all_gather_object, broadcast_object_list
from lucid.distributed._work import ReduceOp, Work
from lucid.distributed.ddp import DistributedDataParallel
from lucid.distributed.sync_batchnorm import SyncBatchNorm

__all__ = [
    "Backend",
    "DistributedDataParallel",
    "GroupMember",
    "ProcessGroup",
    "ReduceOp",
    "SyncBatchNorm",
    "Work",
    "all_gather",
    "all_gather_into_tensor",
    "all_gather_object",
    "all_reduce",
    "barrier",
    "broadcast",
    "broadcast_object_list",
    "destroy_process_group",
    "gather",
    "get_backend",
    "get_rank",
    "get_world_size",
    "init_process_group",
    "irecv",
    "is_available",
    "is_initialized",
    "is_mlx_available",
    "is_mpi_available",
    "isend",
    "new_group",
    "recv",
    "reduce",
    "reduce_scatter",
    "reduce_scatter_tensor",
    "scatter",
    "send",
]
