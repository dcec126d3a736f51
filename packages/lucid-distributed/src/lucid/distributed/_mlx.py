"""The "mlx" engine: a process group over ``mx.distributed`` (MLX's own collectives: its ring
backend over TCP on CPUs, NCCL or JACCL where MLX has them).

The job is started by MPI's launcher as for the "mpi" engine; MPI only introduces the ranks to
each other (each rank's address for MLX's ring), as torch's rendezvous store does. MLX's
collectives are synchronous once evaluated, so every request here is already complete.
"""

from __future__ import annotations

import json
import os
import socket
import tempfile
from collections.abc import Sequence
from typing import Any

import numpy as np

from lucid.distributed._work import ReduceOp, Request


class Done:
    """The request of an operation that has already completed."""

    def Test(self) -> bool:  # noqa: N802 (MPI's name, which Work calls)
        return True


class Source:
    """The status of a receive (``Get_source`` as on an MPI status)."""

    def __init__(self, rank: int) -> None:
        self.rank = rank

    def Get_source(self) -> int:  # noqa: N802
        return self.rank


def _mx() -> Any:
    import mlx.core as mx

    return mx


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("", 0))
        return int(s.getsockname()[1])


def _ring_hostfile() -> str:
    """Set ``MLX_RANK`` and ``MLX_HOSTFILE`` for MLX's ring backend from the MPI job: every rank
    picks a free port, and the ranks swap their ``host:port`` addresses over MPI. Returns the
    hostfile's path (MLX reads it once, in ``init``)."""
    from lucid.distributed._mpi import MPIEngine

    world = MPIEngine.world()
    address = f"{_host(world)}:{_free_port()}".encode()
    hosts = [[a.decode()] for a in world.allgather_bytes(address)]
    fd, path = tempfile.mkstemp(prefix=f"lucid-mlx-ring-{world.rank}-", suffix=".json")
    with os.fdopen(fd, "w") as f:
        json.dump(hosts, f)
    os.environ["MLX_RANK"] = str(world.rank)
    os.environ["MLX_HOSTFILE"] = path
    return path


def _host(world: Any) -> str:
    """This rank's address for its peers: loopback when every rank is on this machine, else
    ``LUCID_MLX_HOST`` or the address this machine's name resolves to."""
    names = world.allgather_bytes(socket.gethostname().encode())
    if len(set(names)) == 1:
        return "127.0.0.1"
    return os.environ.get("LUCID_MLX_HOST") or socket.gethostbyname(socket.gethostname())


class MLXEngine:
    """Collectives of one ``mx.distributed`` group, on host arrays (copied to MLX and back)."""

    name = "mlx"

    def __init__(self, group: Any) -> None:
        self.group = group
        self.rank: int = group.rank()
        self.size: int = group.size()

    @classmethod
    def world(cls) -> MLXEngine:
        try:
            mx = _mx()
        except ImportError:
            raise RuntimeError("the 'mlx' backend needs MLX: pip install mlx (on Linux mlx[cpu])")
        needs_hostfile = "MLX_HOSTFILE" not in os.environ and launched_by_mpi()
        hostfile = _ring_hostfile() if needs_hostfile else None
        backend = os.environ.get("LUCID_MLX_BACKEND", "any")  # MLX's names: ring, nccl, jaccl...
        try:
            group = mx.distributed.init(strict=True, backend=backend)
        except RuntimeError as e:
            raise RuntimeError(
                f"the 'mlx' backend could not start mx.distributed ({e}); start the job with "
                "lucid-run or mpiexec, or with mlx.launch"
            ) from None
        finally:
            if hostfile is not None:
                os.remove(hostfile)
        return cls(group)

    def _run(self, fn: Any, buf: np.ndarray, **kwargs: Any) -> np.ndarray:
        mx = _mx()
        out = fn(mx.array(buf), group=self.group, **kwargs)
        mx.eval(out)
        return np.array(out, copy=False)

    def split(self, ranks: Sequence[int]) -> MLXEngine | None:
        member = self.rank in ranks
        sub = self.group.split(0 if member else 1, self.rank)
        return MLXEngine(sub) if member else None

    def allreduce(self, buf: np.ndarray, op: ReduceOp) -> Request:
        dist = _mx().distributed
        fns = {ReduceOp.SUM: dist.all_sum, ReduceOp.AVG: dist.all_sum,
               ReduceOp.MAX: dist.all_max, ReduceOp.MIN: dist.all_min}  # fmt: skip
        if op not in fns:
            raise NotImplementedError(
                f"the 'mlx' backend reduces with SUM, AVG, MAX and MIN, not {op.name}"
            )
        np.copyto(buf, self._run(fns[op], buf).reshape(buf.shape))
        return Done()

    def broadcast(self, buf: np.ndarray, root: int) -> Request:
        mine = buf if self.rank == root else np.zeros_like(buf)
        np.copyto(buf, self._run(_mx().distributed.all_sum, mine).reshape(buf.shape))
        return Done()

    def allgather(self, send: np.ndarray, recv: np.ndarray) -> Request:
        flat = send.reshape(1, -1)
        np.copyto(recv, self._run(_mx().distributed.all_gather, flat).reshape(recv.shape))
        return Done()

    def gather(self, send: np.ndarray, recv: np.ndarray | None, root: int) -> Request:
        everything = np.empty((self.size, *send.shape), dtype=send.dtype)
        self.allgather(send, everything)
        if recv is not None:
            np.copyto(recv, everything.reshape(recv.shape))
        return Done()

    def scatter(self, send: np.ndarray | None, recv: np.ndarray, root: int) -> Request:
        full = np.zeros((self.size, *recv.shape), dtype=recv.dtype)
        if send is not None:
            np.copyto(full, send.reshape(full.shape))
        self.broadcast(full, root)
        np.copyto(recv, full[self.rank])
        return Done()

    def reduce(self, buf: np.ndarray, root: int, op: ReduceOp) -> Request:
        result = buf.copy()
        self.allreduce(result, op)
        if self.rank == root:
            np.copyto(buf, result)
        return Done()

    def reduce_scatter(self, send: np.ndarray, recv: np.ndarray, op: ReduceOp) -> Request:
        total = np.ascontiguousarray(send).reshape(self.size, -1).copy()
        self.allreduce(total, op)
        np.copyto(recv, total[self.rank].reshape(recv.shape))
        return Done()

    def send(self, buf: np.ndarray, dst: int, tag: int) -> Request:
        mx = _mx()
        mx.eval(mx.distributed.send(mx.array(buf), dst, group=self.group))
        return Done()

    def recv(self, buf: np.ndarray, src: int | None, tag: int) -> tuple[Request, Any]:
        if src is None:
            raise NotImplementedError("the 'mlx' backend receives from a given src rank only")
        mx = _mx()
        got = mx.distributed.recv_like(mx.array(buf), src, group=self.group)
        mx.eval(got)
        np.copyto(buf, np.array(got, copy=False).reshape(buf.shape))
        return Done(), Source(src)

    def barrier(self) -> Request:
        return self.allreduce(np.zeros(1, dtype=np.float32), ReduceOp.SUM)

    def allgather_bytes(self, data: bytes) -> list[bytes]:
        sizes = np.empty(self.size, dtype=np.int32)
        self.allgather(np.array([len(data)], dtype=np.int32), sizes)
        width = max(int(sizes.max()), 1)
        padded = np.zeros(width, dtype=np.uint8)
        padded[: len(data)] = np.frombuffer(data, dtype=np.uint8)
        rows = np.empty((self.size, width), dtype=np.uint8)
        self.allgather(padded, rows)
        return [rows[i, : int(n)].tobytes() for i, n in enumerate(sizes)]

    def free(self) -> None:
        pass


def launched_by_mpi() -> bool:
    return "PMI_RANK" in os.environ or "OMPI_COMM_WORLD_RANK" in os.environ
