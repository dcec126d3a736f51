"""The main-process side of multi-process loading: worker pool and in-order batch delivery."""

from __future__ import annotations

import dataclasses
import itertools
import multiprocessing
import pickle
import shutil
import sys
import time
import weakref
from collections.abc import Iterator
from multiprocessing import connection
from typing import Any

from ._rng import derive_seed
from ._transport import loads, make_shared_folder
from ._worker import ExceptionWrapper, IterableStop, WorkerConfig, worker_loop

_JOIN_S = 2.0  # how long shutdown waits for workers to exit before terminating them
_STOP = pickle.dumps(None)


def default_context() -> Any:
    """The "fork" context on Linux (fast start, no pickling of the dataset), else "spawn"."""
    if sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("spawn")


def resolve_context(context: Any) -> Any:
    if context is None:
        return default_context()
    if isinstance(context, str):
        if context not in multiprocessing.get_all_start_methods():
            raise ValueError(
                f"multiprocessing_context option should specify a valid start method in "
                f"{multiprocessing.get_all_start_methods()!r}, but got "
                f"multiprocessing_context={context!r}"
            )
        return multiprocessing.get_context(context)
    if not hasattr(context, "Process"):
        raise TypeError(
            "multiprocessing_context option should be a valid context object or a string "
            f"specifying the start method, but got multiprocessing_context={context!r}"
        )
    return context


def _shutdown(
    workers: list[Any],
    task_pipes: list[Any],
    result_pipes: list[Any],
    done: Any,
    how: dict[str, bool],
    shared_folder: str | None,
) -> None:
    done.set()
    if how["force"]:  # a stuck or broken pool: don't wait for it
        for w in workers:
            if w.is_alive():
                w.terminate()
    for conn in task_pipes:
        try:
            conn.send_bytes(_STOP)
        except OSError:  # that worker is gone already
            pass
    for conn in result_pipes:  # a worker blocked sending a batch gets an error and exits
        conn.close()
    deadline = time.monotonic() + _JOIN_S
    for w in workers:
        w.join(timeout=max(0.0, deadline - time.monotonic()))
    for w in workers:
        if w.is_alive():
            w.terminate()
            w.join(timeout=_JOIN_S)
    for conn in task_pipes:
        conn.close()
    if shared_folder is not None:  # arrays of batches never received
        shutil.rmtree(shared_folder, ignore_errors=True)


class WorkerPool:
    """``num_workers`` processes, each with a task pipe and a result pipe to the main process.

    Plain pipes (no queue feeder threads) keep a batch to two process wake-ups. Shut down
    (workers joined, or terminated if stuck) by ``shutdown()``, when garbage collected, or at
    interpreter exit, whichever comes first.
    """

    def __init__(self, cfg: WorkerConfig, context: Any) -> None:
        ctx = resolve_context(context)
        cfg = dataclasses.replace(cfg, shared_folder=make_shared_folder())
        self.shared_folder = cfg.shared_folder
        self.num_workers = cfg.num_workers
        self.done_event = ctx.Event()
        self.task_pipes: list[Any] = []
        self.result_pipes: list[Any] = []
        self.workers: list[Any] = []
        self._epochs = itertools.count()
        self._how = {"force": False}
        self._finalizer = weakref.finalize(
            self,
            _shutdown,
            self.workers,
            self.task_pipes,
            self.result_pipes,
            self.done_event,
            self._how,
            self.shared_folder,
        )
        for wid in range(cfg.num_workers):
            self._start_worker(ctx, cfg, wid)

    def _start_worker(self, ctx: Any, cfg: WorkerConfig, wid: int) -> None:
        task_r, task_w = ctx.Pipe(duplex=False)
        result_r, result_w = ctx.Pipe(duplex=False)
        w = ctx.Process(
            target=worker_loop, args=(cfg, wid, task_r, result_w, self.done_event), daemon=True
        )
        self.task_pipes.append(task_w)
        self.result_pipes.append(result_r)
        try:
            w.start()
        except (pickle.PicklingError, AttributeError, TypeError) as e:
            self.shutdown(force=True)
            raise RuntimeError(
                f"DataLoader workers started with {ctx.get_start_method()!r} need a picklable "
                f"dataset, collate_fn and worker_init_fn (define them at module level): {e}"
            ) from e
        finally:  # the worker has its own copies of its ends
            task_r.close()
            result_w.close()
        self.workers.append(w)

    @property
    def alive(self) -> bool:
        """Not shut down, and every worker still running."""
        return self._finalizer.alive and all(w.is_alive() for w in self.workers)

    def new_epoch(self) -> int:
        return next(self._epochs)

    def shutdown(self, force: bool = False) -> None:
        """Stop the workers: ask them to exit (``force``: terminate them at once)."""
        self._how["force"] = force
        self._finalizer()

    def send(self, wid: int, task: tuple[Any, ...]) -> None:
        try:
            self.task_pipes[wid].send_bytes(pickle.dumps(task))
        except OSError:  # a dead worker closed its end
            self._worker_gone(wid)
            raise

    def receive(self, timeout: float | None) -> tuple[Any, ...] | None:
        """The next ``(epoch, idx, data)`` from any worker, or None after ``timeout`` seconds.

        Raises RuntimeError when a worker has died (its pipe ends, or its process is gone).
        """
        sentinels = [w.sentinel for w in self.workers]
        ready = connection.wait([*self.result_pipes, *sentinels], timeout)
        for wid, conn in enumerate(self.result_pipes):
            if conn in ready:
                try:
                    epoch, idx, payload = pickle.loads(conn.recv_bytes())
                except EOFError:  # its end closed: the worker is exiting
                    self._worker_gone(wid)
                    raise
                return epoch, idx, loads(payload)  # loads also deletes shared-memory files
        if ready:
            self.check_workers()
        return None

    def _worker_gone(self, wid: int) -> None:
        self.workers[wid].join(timeout=_JOIN_S)
        self.check_workers()

    def check_workers(self) -> None:
        dead = [w for w in self.workers if not w.is_alive()]
        if dead:
            self.shutdown(force=True)
            detail = ", ".join(f"pid {w.pid} exit code {w.exitcode}" for w in dead)
            raise RuntimeError(
                f"DataLoader worker ({detail}) exited unexpectedly. A negative exit code is the "
                "signal that killed it (e.g. -9: killed, often for lack of memory)."
            )


class MultiProcessIter:
    """Sends up to ``prefetch_factor`` tasks per worker ahead and yields results in order.

    Task ``idx`` carries the seed ``derive_seed(base_seed, idx)`` under which its batch is
    fetched, so the batches equal those of single-process loading with the same base seed.
    """

    def __init__(
        self,
        pool: WorkerPool,
        index_iter: Iterator[Any],
        base_seed: int,
        prefetch_factor: int,
        timeout: float,
        persistent: bool,
    ) -> None:
        self._pool = pool
        self._epoch = pool.new_epoch()
        self._index_iter = index_iter
        self._base_seed = base_seed
        self._timeout = timeout
        self._persistent = persistent
        self._max_outstanding = prefetch_factor * pool.num_workers
        self._active = [True] * pool.num_workers
        self._worker_cycle = itertools.cycle(range(pool.num_workers))
        self._task_worker: dict[int, int] = {}
        self._arrived: dict[int, Any] = {}
        self._send_idx = 0
        self._rcvd_idx = 0
        self._exhausted = False
        self._fill()

    def __iter__(self) -> MultiProcessIter:
        return self

    def _fill(self) -> None:
        """Keep ``prefetch_factor * num_workers`` tasks in flight."""
        while len(self._task_worker) < self._max_outstanding and self._try_put_index():
            pass

    def _try_put_index(self) -> bool:
        if self._exhausted or not any(self._active):
            return False
        try:
            index = next(self._index_iter)
        except StopIteration:
            self._exhausted = True
            return False
        wid = next(self._worker_cycle)
        while not self._active[wid]:
            wid = next(self._worker_cycle)
        seed = derive_seed(self._base_seed, self._send_idx)
        self._pool.send(wid, (self._epoch, self._send_idx, index, seed))
        self._task_worker[self._send_idx] = wid
        self._send_idx += 1
        return True

    def _skip_abandoned(self) -> None:
        """Tasks sent to a worker whose iterable ran out will never be delivered."""
        while self._rcvd_idx < self._send_idx and self._rcvd_idx not in self._arrived:
            if self._active[self._task_worker[self._rcvd_idx]]:
                return
            del self._task_worker[self._rcvd_idx]
            self._rcvd_idx += 1

    def _receive(self) -> tuple[int, Any]:
        deadline = time.monotonic() + self._timeout if self._timeout > 0 else None
        while True:
            wait = None if deadline is None else max(deadline - time.monotonic(), 0.0)
            got = self._pool.receive(wait)
            if got is None:
                if deadline is not None and time.monotonic() >= deadline:
                    self._pool.shutdown(force=True)
                    raise RuntimeError(
                        f"DataLoader timed out after {self._timeout} seconds waiting for a "
                        "batch from its worker processes"
                    )
                continue
            epoch, idx, data = got
            if epoch == self._epoch:  # results of an abandoned earlier epoch are dropped
                return idx, data

    def __next__(self) -> Any:
        while True:
            self._skip_abandoned()
            self._fill()
            if self._rcvd_idx >= self._send_idx:
                self._finish()
                raise StopIteration
            if self._rcvd_idx in self._arrived:
                return self._deliver(self._arrived.pop(self._rcvd_idx))
            idx, data = self._receive()
            if idx not in self._task_worker:
                continue
            if isinstance(data, IterableStop):
                self._active[data.worker_id] = False
                continue
            if idx != self._rcvd_idx:
                self._arrived[idx] = data
                continue
            return self._deliver(data)

    def _deliver(self, data: Any) -> Any:
        del self._task_worker[self._rcvd_idx]
        self._rcvd_idx += 1
        if isinstance(data, ExceptionWrapper):
            self._pool.shutdown()
            data.reraise()
        self._fill()
        return data

    def _finish(self) -> None:
        if not self._persistent:
            self._pool.shutdown()

    def __len__(self) -> int:
        raise TypeError("use len(DataLoader) instead")
