"""The "mpi" engine: a process group over an MPI communicator (mpi4py), on NumPy buffers.

Every operation is non-blocking (``MPI_I*``) and returns its request; the caller waits by
polling (``wait_all``), so a timeout can end a wait on a peer that never comes.
"""

from __future__ import annotations

import functools
import os
import sys
import traceback
from collections.abc import Sequence
from types import TracebackType
from typing import Any

import numpy as np

from lucid.distributed._work import ReduceOp, Request


@functools.cache
def mpi() -> Any:
    """The ``mpi4py.MPI`` module (importing it initialises MPI once per process)."""
    from mpi4py import MPI

    _keep_sibling_finder_last()
    return MPI


def _keep_sibling_finder_last() -> None:
    """Loading MPI appends mpi4py's own finder to ``sys.meta_path``; lucid's finder for missing
    sibling packages must stay last (it answers only once every other finder has missed)."""
    ours = [f for f in sys.meta_path if getattr(f, "__name__", "") == "MissingSiblingFinder"]
    for finder in ours:
        sys.meta_path.remove(finder)
        sys.meta_path.append(finder)


def _op(op: ReduceOp) -> Any:
    m = mpi()
    return {
        ReduceOp.SUM: m.SUM,
        ReduceOp.AVG: m.SUM,  # divided by the size when the data arrives
        ReduceOp.PRODUCT: m.PROD,
        ReduceOp.MIN: m.MIN,
        ReduceOp.MAX: m.MAX,
        ReduceOp.BAND: m.BAND,
        ReduceOp.BOR: m.BOR,
        ReduceOp.BXOR: m.BXOR,
    }[op]


class MPIEngine:
    """Collectives of one MPI communicator, on contiguous NumPy arrays."""

    name = "mpi"

    def __init__(self, comm: Any) -> None:
        self.comm = comm
        self.rank: int = comm.Get_rank()
        self.size: int = comm.Get_size()

    @classmethod
    def world(cls) -> MPIEngine:
        return cls(mpi().COMM_WORLD)

    def split(self, ranks: Sequence[int]) -> MPIEngine | None:
        """A sub-communicator of ``ranks`` (every rank of this one calls it; None where this
        rank is not a member)."""
        m = mpi()
        member = self.rank in ranks
        key = list(ranks).index(self.rank) if member else 0
        sub = self.comm.Split(0 if member else m.UNDEFINED, key)
        return MPIEngine(sub) if member else None

    def allreduce(self, buf: np.ndarray, op: ReduceOp) -> Request:
        req: Request = self.comm.Iallreduce(mpi().IN_PLACE, buf, _op(op))
        return req

    def broadcast(self, buf: np.ndarray, root: int) -> Request:
        req: Request = self.comm.Ibcast(buf, root)
        return req

    def allgather(self, send: np.ndarray, recv: np.ndarray) -> Request:
        req: Request = self.comm.Iallgather(send, recv)
        return req

    def gather(self, send: np.ndarray, recv: np.ndarray | None, root: int) -> Request:
        req: Request = self.comm.Igather(send, recv, root)
        return req

    def scatter(self, send: np.ndarray | None, recv: np.ndarray, root: int) -> Request:
        req: Request = self.comm.Iscatter(send, recv, root)
        return req

    def reduce(self, buf: np.ndarray, root: int, op: ReduceOp) -> Request:
        m = mpi()
        if self.rank == root:
            req: Request = self.comm.Ireduce(m.IN_PLACE, buf, _op(op), root)
        else:
            req = self.comm.Ireduce(buf, None, _op(op), root)
        return req

    def reduce_scatter(self, send: np.ndarray, recv: np.ndarray, op: ReduceOp) -> Request:
        req: Request = self.comm.Ireduce_scatter_block(send, recv, _op(op))
        return req

    def send(self, buf: np.ndarray, dst: int, tag: int) -> Request:
        req: Request = self.comm.Isend(buf, dst, tag)
        return req

    def recv(self, buf: np.ndarray, src: int | None, tag: int) -> tuple[Request, Any]:
        """Start receiving into ``buf``; also returns the status that names the sender."""
        m = mpi()
        status = m.Status()
        source = m.ANY_SOURCE if src is None else src
        probe_tag = m.ANY_TAG if tag < 0 else tag
        self.comm.Probe(source, probe_tag, status)  # the size check needs the message's count
        count = status.Get_count(m.BYTE)
        if count != buf.nbytes:
            raise RuntimeError(
                f"recv: rank {status.Get_source()} sent {count} bytes but the receiving tensor "
                f"holds {buf.nbytes} ({buf.shape}, {buf.dtype}): the tensors must match"
            )
        return self.comm.Irecv(buf, status.Get_source(), status.Get_tag()), status

    def barrier(self) -> Request:
        req: Request = self.comm.Ibarrier()
        return req

    def allgather_bytes(self, data: bytes) -> list[bytes]:
        """Every rank's ``data`` (blocking; sizes may differ). Raw bytes, never pickles."""
        sizes = np.zeros(self.size, dtype=np.int64)
        self.comm.Allgather(np.array([len(data)], dtype=np.int64), sizes)
        recv = np.empty(int(sizes.sum()), dtype=np.uint8)
        send = np.frombuffer(data, dtype=np.uint8) if data else np.empty(0, dtype=np.uint8)
        self.comm.Allgatherv(send, (recv, sizes))
        ends = np.cumsum(sizes)
        return [recv[e - s : e].tobytes() for s, e in zip(sizes.tolist(), ends.tolist())]

    def free(self) -> None:
        if self.comm != mpi().COMM_WORLD:
            self.comm.Free()


def drain_stdio(limit: float = 2.0) -> None:
    """Flush stdout/stderr and wait (up to ``limit`` seconds) until the launcher has read them.

    ``MPI_Abort`` makes the launcher kill every rank at once; what a rank wrote just before is
    still in the pipe to the launcher's I/O forwarder and could be lost with it (seen as a job
    that failed with an empty stderr). A pipe's unread byte count (``FIONREAD``) says when the
    forwarder has taken it.
    """
    import fcntl
    import stat
    import struct
    import termios
    import time

    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    deadline = time.monotonic() + limit
    for fd in (1, 2):
        try:
            if not stat.S_ISFIFO(os.fstat(fd).st_mode):
                continue
            while time.monotonic() < deadline:
                unread = struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0" * 4))[0]
                if unread == 0:
                    break
                time.sleep(0.01)
        except OSError:
            continue
    time.sleep(0.05)  # the forwarder has read it; give it a moment to pass it on


def abort_on_uncaught_exceptions() -> None:
    """Make an exception nobody catches end the whole job, not just this rank: print it (with
    the rank), then ``MPI_Abort``, which makes the launcher stop every rank with a non-zero exit
    instead of leaving the others waiting in a collective forever."""
    previous = sys.excepthook

    def hook(kind: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        if issubclass(kind, KeyboardInterrupt | SystemExit):
            previous(kind, exc, tb)
            return
        rank = mpi().COMM_WORLD.Get_rank()
        text = "".join(traceback.format_exception(kind, exc, tb))
        sys.stderr.write(f"[rank {rank}] {text}")
        sys.stderr.write(f"[rank {rank}] aborting the job: this rank raised {kind.__name__}\n")
        drain_stdio()
        mpi().COMM_WORLD.Abort(1)
        os._exit(1)  # Abort does not return; this is for an MPI that does

    sys.excepthook = hook
