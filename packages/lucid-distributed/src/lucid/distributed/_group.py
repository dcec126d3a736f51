"""Process groups: ``init_process_group`` and the queries about the job it joined."""

from __future__ import annotations

import datetime
import importlib.util
import os
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from lucid.distributed._work import ReduceOp, Request, seconds_or_none

__all__ = [
    "Backend",
    "GroupMember",
    "ProcessGroup",
    "barrier",
    "destroy_process_group",
    "get_backend",
    "get_rank",
    "get_world_size",
    "init_process_group",
    "is_available",
    "is_initialized",
    "is_mpi_available",
    "is_mlx_available",
    "new_group",
]

default_pg_timeout = datetime.timedelta(minutes=30)


class Engine(Protocol):
    """What a process group runs its collectives on (MPI, mx.distributed), on host arrays."""

    name: str
    rank: int
    size: int

    def split(self, ranks: Sequence[int]) -> Engine | None: ...
    def allreduce(self, buf: np.ndarray, op: ReduceOp) -> Request: ...
    def broadcast(self, buf: np.ndarray, root: int) -> Request: ...
    def allgather(self, send: np.ndarray, recv: np.ndarray) -> Request: ...
    def gather(self, send: np.ndarray, recv: np.ndarray | None, root: int) -> Request: ...
    def scatter(self, send: np.ndarray | None, recv: np.ndarray, root: int) -> Request: ...
    def reduce(self, buf: np.ndarray, root: int, op: ReduceOp) -> Request: ...
    def reduce_scatter(self, send: np.ndarray, recv: np.ndarray, op: ReduceOp) -> Request: ...
    def send(self, buf: np.ndarray, dst: int, tag: int) -> Request: ...
    def recv(self, buf: np.ndarray, src: int | None, tag: int) -> tuple[Request, Any]: ...
    def barrier(self) -> Request: ...
    def allgather_bytes(self, data: bytes) -> list[bytes]: ...
    def free(self) -> None: ...


class Backend(str):
    """The names ``init_process_group`` accepts (``torch.distributed.Backend``)."""

    MPI = "mpi"
    MLX = "mlx"
    GLOO = "gloo"  # accepted for PyTorch programs: runs on MPI (CPU tensors)
    NCCL = "nccl"  # accepted for PyTorch programs: runs on mx.distributed where it works


class ProcessGroup:
    """A set of ranks that run collectives together. ``ranks`` are their ranks in the world."""

    def __init__(self, engine: Engine, ranks: Sequence[int], timeout: float | None) -> None:
        self.engine = engine
        self.ranks = list(ranks)
        self.timeout = timeout

    def rank(self) -> int:
        """This process's rank in the group."""
        return self.engine.rank

    def size(self) -> int:
        """The number of processes in the group."""
        return self.engine.size

    def name(self) -> str:
        """The name of the group's backend (``"mpi"`` or ``"mlx"``)."""
        return self.engine.name

    def group_rank(self, global_rank: int, role: str) -> int:
        """The rank in this group of the world rank ``global_rank`` (``src``/``dst`` args)."""
        if global_rank not in self.ranks:
            raise ValueError(
                f"{role}={global_rank} is not a rank of this group, whose ranks are {self.ranks}"
            )
        return self.ranks.index(global_rank)

    def __repr__(self) -> str:
        return f"ProcessGroup(backend={self.name()!r}, ranks={self.ranks})"


class GroupMember:
    """``GroupMember.WORLD`` is the default group; ``NON_GROUP_MEMBER`` is what ``new_group``
    returns on the ranks it leaves out."""

    WORLD: ProcessGroup | None = None
    NON_GROUP_MEMBER = object()


class _State:
    world: ProcessGroup | None = None
    groups: list[ProcessGroup] = []
    exported: list[str] = []  # environment variables init_process_group set (destroy unsets)


_MISSING = (
    "Default process group has not been initialized, please make sure to call init_process_group."
)


def is_mpi_available() -> bool:
    """Whether mpi4py is installed (it brings MPI; the ``mpich`` wheel brings the library)."""
    return importlib.util.find_spec("mpi4py") is not None


def is_mlx_available() -> bool:
    """Whether MLX with ``mx.distributed`` is installed."""
    try:
        import mlx.core as mx
    except ImportError:
        return False
    return bool(mx.distributed.is_available())


def is_available() -> bool:
    """Whether this package can run collectives here (``torch.distributed.is_available``)."""
    return is_mpi_available() or is_mlx_available()


def is_initialized() -> bool:
    """Whether ``init_process_group`` has run (``torch.distributed.is_initialized``)."""
    return _State.world is not None


def _world() -> ProcessGroup:
    if _State.world is None:
        raise ValueError(_MISSING)
    return _State.world


def resolve(group: Any) -> ProcessGroup:
    """The group a collective runs on: ``group`` or the default one."""
    if group is None:
        return _world()
    if group is GroupMember.NON_GROUP_MEMBER:
        raise RuntimeError("this rank is not a member of the group passed to the collective")
    if not isinstance(group, ProcessGroup):
        raise TypeError(f"group must be a ProcessGroup from new_group or None, got {group!r}")
    return group


def _engine_name(backend: str | None) -> str:
    name = (backend or "mpi").lower()
    if name in ("mpi", "gloo"):
        return "mpi"
    if name in ("mlx", "nccl"):
        return "mlx"
    raise ValueError(f"backend must be one of 'mpi', 'mlx' (or 'gloo', 'nccl'), got {backend!r}")


def _start_engine(name: str) -> Engine:
    from lucid.distributed._mlx import MLXEngine, launched_by_mpi

    if name == "mlx":
        engine: Engine = MLXEngine.world()
    elif not is_mpi_available():
        raise RuntimeError("the 'mpi' backend needs mpi4py: pip install mpi4py mpich")
    else:
        from lucid.distributed._mpi import MPIEngine

        engine = MPIEngine.world()
    if engine.size > 1 and launched_by_mpi():
        from lucid.distributed._mpi import abort_on_uncaught_exceptions

        abort_on_uncaught_exceptions()
    return engine


def _check_launcher(engine: Engine, world_size: int, rank: int) -> None:
    """The launcher decides rank and world size; arguments or env that disagree are errors."""
    for what, given, actual in (
        ("world_size", world_size, engine.size),
        ("rank", rank, engine.rank),
        ("WORLD_SIZE", int(os.environ.get("WORLD_SIZE", -1)), engine.size),
        ("RANK", int(os.environ.get("RANK", -1)), engine.rank),
    ):
        if given != -1 and given != actual:
            raise ValueError(
                f"init_process_group: {what}={given}, but the launcher started this process as "
                f"rank {engine.rank} of {engine.size} (start N processes with lucid-run "
                "--nproc-per-node N or mpiexec -n N)"
            )


def _default_threads(engine: Engine) -> None:
    """Each rank's BLAS threads: the cores divided among this machine's ranks, unless set."""
    if any(v in os.environ for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")):
        return
    local = next((int(os.environ[v]) for v in _LOCAL_SIZE_VARS if v in os.environ), engine.size)
    if local > 1:
        import lucid

        lucid.set_num_threads(max(1, (os.cpu_count() or 1) // local))


# This machine's number of ranks, as lucid-run, MPICH and Open MPI name it.
_LOCAL_SIZE_VARS = ("LOCAL_WORLD_SIZE", "MPI_LOCALNRANKS", "OMPI_COMM_WORLD_LOCAL_SIZE")


def init_process_group(
    backend: str | None = None,
    init_method: str | None = None,
    timeout: datetime.timedelta | None = None,
    world_size: int = -1,
    rank: int = -1,
    store: Any = None,
    group_name: str = "",
    pg_options: Any = None,
    device_id: Any = None,
) -> None:
    """Join the job this process was launched in (``torch.distributed.init_process_group``).

    ``backend`` is ``"mpi"`` (the default; ``"gloo"`` means the same) or ``"mlx"``
    (mx.distributed; ``"nccl"`` means the same). Rank and world size come from the launcher
    (``lucid-run`` or ``mpiexec``); ``init_method`` and ``store`` are accepted and unused: the
    launcher connects the ranks. A collective that waits longer than ``timeout`` (30 minutes by
    default) raises, and an exception nobody catches on any rank ends the whole job.
    """
    if _State.world is not None:
        raise RuntimeError("trying to initialize the default process group twice!")
    engine = _start_engine(_engine_name(backend))
    _check_launcher(engine, world_size, rank)
    limit = seconds_or_none(default_pg_timeout if timeout is None else timeout)
    _State.world = GroupMember.WORLD = ProcessGroup(engine, range(engine.size), limit)
    _default_threads(engine)
    _export_rank(engine)


def _export_rank(engine: Engine) -> None:
    """``RANK`` and ``WORLD_SIZE`` for code that reads them (``DistributedSampler``, nanoGPT),
    also under a plain ``mpiexec``, which does not set them."""
    local = os.environ.get("MPI_LOCALRANKID", os.environ.get("OMPI_COMM_WORLD_LOCAL_RANK"))
    values = {"RANK": str(engine.rank), "WORLD_SIZE": str(engine.size),
              "LOCAL_RANK": local if local is not None else str(engine.rank)}  # fmt: skip
    for name, value in values.items():
        if name not in os.environ:
            os.environ[name] = value
            _State.exported.append(name)


def destroy_process_group(group: ProcessGroup | None = None) -> None:
    """Leave the group (the default one: every group), after which ``is_initialized()`` is
    False and ``init_process_group`` may be called again."""
    if group is not None and group is not _State.world:
        group.engine.free()
        if group in _State.groups:
            _State.groups.remove(group)
        return
    for g in _State.groups:
        g.engine.free()
    _State.groups.clear()
    _State.world = GroupMember.WORLD = None
    for name in _State.exported:
        os.environ.pop(name, None)
    _State.exported.clear()


def new_group(
    ranks: Sequence[int] | None = None,
    timeout: datetime.timedelta | None = None,
    backend: str | None = None,
    pg_options: Any = None,
    use_local_synchronization: bool = False,
) -> Any:
    """A group of ``ranks`` (world ranks; None: all). Every rank of the world calls it, as in
    PyTorch; ranks left out get ``GroupMember.NON_GROUP_MEMBER``."""
    world = _world()
    chosen = sorted(set(range(world.size()) if ranks is None else ranks))
    bad = [r for r in chosen if not 0 <= r < world.size()]
    if bad:
        raise ValueError(f"new_group: ranks {bad} are outside the world of {world.size()} ranks")
    engine = world.engine.split(chosen)
    if engine is None:
        return GroupMember.NON_GROUP_MEMBER
    limit = world.timeout if timeout is None else seconds_or_none(timeout)
    group = ProcessGroup(engine, chosen, limit)
    _State.groups.append(group)
    return group


def get_rank(group: ProcessGroup | None = None) -> int:
    """This process's rank in ``group`` (default: the world); -1 outside the group."""
    if group is GroupMember.NON_GROUP_MEMBER:
        return -1
    return resolve(group).rank()


def get_world_size(group: ProcessGroup | None = None) -> int:
    """The number of processes in ``group`` (default: the world); -1 outside the group."""
    if group is GroupMember.NON_GROUP_MEMBER:
        return -1
    return resolve(group).size()


def get_backend(group: ProcessGroup | None = None) -> str:
    """The name of ``group``'s backend (default: the world's), such as ``"mpi"``."""
    return resolve(group).name()


def barrier(
    group: ProcessGroup | None = None, async_op: bool = False, device_ids: Any = None
) -> Any:
    """Wait until every rank of the group reaches the barrier."""
    from lucid.distributed._work import Work

    g = resolve(group)
    work = Work([g.engine.barrier()], None, g.timeout, "barrier")
    return work if async_op else work.wait() and None
