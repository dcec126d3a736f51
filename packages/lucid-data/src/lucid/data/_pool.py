"""The main-process side of multi-process loading: worker pool and in-order batch delivery."""

from __future__ import annotations

import itertools
import multiprocessing
import pickle
import queue
import sys
import time
import weakref
from collections.abc import Iterator
from typing import Any

from ._rng import derive_seed
from ._worker import ExceptionWrapper, IterableStop, WorkerConfig, loads, worker_loop

_POLL_S = 0.5  # how often a waiting main process checks on its workers
_JOIN_S = 2.0  # how long shutdown waits for workers to exit before terminating them


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
    workers: list[Any], index_queues: list[Any], result_queue: Any, done: Any, how: dict[str, bool]
) -> None:
    done.set()
    if how["force"]:  # a stuck or broken pool: don't wait for it
        for w in workers:
            if w.is_alive():
                w.terminate()
    for q in index_queues:
        try:
            q.put(None)
        except (OSError, ValueError):
            pass
    deadline = time.monotonic() + _JOIN_S
    for w in workers:
        w.join(timeout=max(0.0, deadline - time.monotonic()))
    for w in workers:
        if w.is_alive():
            w.terminate()
            w.join(timeout=_JOIN_S)
    for q in [*index_queues, result_queue]:
        q.cancel_join_thread()
        q.close()


class WorkerPool:
    """``num_workers`` processes, one index queue each and one shared result queue.

    Shut down (workers joined, or terminated if stuck) by ``shutdown()``, when garbage
    collected, or at interpreter exit, whichever comes first.
    """

    def __init__(self, cfg: WorkerConfig, context: Any) -> None:
        ctx = resolve_context(context)
        self.num_workers = cfg.num_workers
        self.result_queue = ctx.Queue()
        self.done_event = ctx.Event()
        self.index_queues: list[Any] = []
        self.workers: list[Any] = []
        self._epochs = itertools.count()
        self._how = {"force": False}
        self._finalizer = weakref.finalize(
            self,
            _shutdown,
            self.workers,
            self.index_queues,
            self.result_queue,
            self.done_event,
            self._how,
        )
        for wid in range(cfg.num_workers):
            index_queue = ctx.Queue()
            index_queue.cancel_join_thread()
            w = ctx.Process(
                target=worker_loop,
                args=(cfg, wid, index_queue, self.result_queue, self.done_event),
                daemon=True,
            )
            self.index_queues.append(index_queue)
            try:
                w.start()
            except (pickle.PicklingError, AttributeError, TypeError) as e:
                self.shutdown(force=True)
                raise RuntimeError(
                    f"DataLoader workers started with {ctx.get_start_method()!r} need a picklable "
                    f"dataset, collate_fn and worker_init_fn (define them at module level): {e}"
                ) from e
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
        self._pool.index_queues[wid].put((self._epoch, self._send_idx, index, seed))
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
            wait = _POLL_S if deadline is None else min(_POLL_S, deadline - time.monotonic())
            try:
                epoch, idx, payload = self._pool.result_queue.get(timeout=max(wait, 0.0))
            except queue.Empty:
                self._pool.check_workers()
                if deadline is not None and time.monotonic() >= deadline:
                    self._pool.shutdown(force=True)
                    raise RuntimeError(
                        f"DataLoader timed out after {self._timeout} seconds waiting for a "
                        "batch from its worker processes"
                    ) from None
                continue
            if epoch == self._epoch:  # results of an abandoned earlier epoch are dropped
                return idx, loads(payload)

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
