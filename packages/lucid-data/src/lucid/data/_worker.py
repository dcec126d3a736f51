"""The worker process side of the DataLoader, and what crosses the process boundary."""

from __future__ import annotations

import multiprocessing
import pickle
import queue
import random
import sys
import traceback
from dataclasses import dataclass
from typing import Any

import numpy as np

import lucid

from ._fetch import IterableFetcher, make_fetcher
from ._rng import seeded_default_generator

__all__ = ["WorkerInfo", "get_worker_info"]

_POLL_S = 1.0  # how often an idle worker checks that its parent is still alive
_SEED_MASK = (1 << 63) - 1


@dataclass(frozen=True)
class WorkerInfo:
    """What ``get_worker_info()`` returns inside a worker process."""

    id: int
    num_workers: int
    seed: int
    dataset: Any


_worker_info: WorkerInfo | None = None


def get_worker_info() -> WorkerInfo | None:
    """In a DataLoader worker: its id, the number of workers, its seed and its dataset copy.

    ``None`` in the main process. Use it in an ``IterableDataset.__iter__`` to give each worker
    its own part of the stream, or in ``worker_init_fn``.
    """
    return _worker_info


class KeyErrorMessage(str):
    """KeyError prints the repr of its message: this one prints the traceback readably."""

    def __repr__(self) -> str:
        return str(self)


class ExceptionWrapper:
    """An exception raised in a worker, carried to the main process as text."""

    def __init__(self, exc: BaseException, where: str) -> None:
        self.exc_module = type(exc).__module__
        self.exc_qualname = type(exc).__qualname__
        self.where = where
        self.text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))

    def _exc_type(self) -> type[BaseException]:
        module = sys.modules.get(self.exc_module)
        obj: Any = module
        for part in self.exc_qualname.split("."):
            obj = getattr(obj, part, None)
        if isinstance(obj, type) and issubclass(obj, BaseException):
            return obj
        return RuntimeError

    def reraise(self) -> None:
        msg = f"Caught {self.exc_qualname} {self.where}.\nOriginal {self.text}"
        exc_type = self._exc_type()
        if exc_type is KeyError:
            msg = KeyErrorMessage(msg)
        try:
            exc = exc_type(msg)
        except Exception:  # an exception class that wants other arguments
            exc = RuntimeError(msg)
        raise exc


@dataclass(frozen=True)
class IterableStop:
    """A worker's iterable dataset is exhausted for this epoch."""

    worker_id: int


# Batches cross the process boundary pickled in the worker (lucid tensors pickle as their
# arrays), so a batch that cannot be pickled is an error reported here, not a lost message.


def dumps(obj: Any) -> bytes:
    return pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)


def loads(payload: bytes) -> Any:
    return pickle.loads(payload)


def _describe(worker_id: int) -> str:
    return f"in DataLoader worker process {worker_id}"


# ---- the worker loop ----


@dataclass
class WorkerConfig:
    """Everything a worker needs (pickled once at start under the spawn method)."""

    dataset: Any
    auto_collation: bool
    collate_fn: Any
    drop_last: bool
    base_seed: int
    init_fn: Any
    num_workers: int


def _seed_worker(seed: int) -> None:
    """Seed every stream a dataset may use, so forked workers never repeat each other."""
    random.seed(seed)
    np.random.seed(seed % 2**32)  # the legacy global numpy stream (np.random.rand, ...)
    lucid.manual_seed(seed)


def _parent_alive() -> bool:
    parent = multiprocessing.parent_process()
    return parent is None or parent.is_alive()


def _run_task(task: tuple[Any, ...], state: dict[str, Any], cfg: WorkerConfig, wid: int) -> Any:
    epoch, _, index, batch_seed = task
    fetcher = state.get("fetcher")
    if fetcher is None or (isinstance(fetcher, IterableFetcher) and state["epoch"] != epoch):
        fetcher = make_fetcher(cfg.dataset, cfg.auto_collation, cfg.collate_fn, cfg.drop_last)
        state["fetcher"], state["epoch"] = fetcher, epoch
    if isinstance(fetcher, IterableFetcher):
        try:
            return fetcher.fetch(index)
        except StopIteration:
            return IterableStop(wid)
    with seeded_default_generator(batch_seed):
        return fetcher.fetch(index)


def worker_loop(
    cfg: WorkerConfig, worker_id: int, index_queue: Any, result_queue: Any, done_event: Any
) -> None:
    """Serve ``(epoch, idx, index, batch_seed)`` tasks until ``None`` or shutdown."""
    global _worker_info
    seed = (cfg.base_seed + worker_id) & _SEED_MASK
    _seed_worker(seed)
    _worker_info = WorkerInfo(worker_id, cfg.num_workers, seed, cfg.dataset)
    init_error: ExceptionWrapper | None = None
    try:
        if cfg.init_fn is not None:
            cfg.init_fn(worker_id)
    except Exception as e:
        init_error = ExceptionWrapper(e, _describe(worker_id))
    state: dict[str, Any] = {}
    try:
        while True:
            try:
                task = index_queue.get(timeout=_POLL_S)
            except queue.Empty:
                if done_event.is_set() or not _parent_alive():
                    break
                continue
            if task is None or done_event.is_set():
                break
            result: Any = init_error
            if result is None:
                try:
                    result = _run_task(task, state, cfg, worker_id)
                except Exception as e:
                    result = ExceptionWrapper(e, _describe(worker_id))
            try:
                payload = dumps(result)
            except Exception as e:
                payload = dumps(ExceptionWrapper(e, _describe(worker_id) + " (sending a batch)"))
            result_queue.put((task[0], task[1], payload))
            del result, payload
    except KeyboardInterrupt:
        pass
    # nothing left to deliver matters after shutdown: never block exit on a full pipe
    result_queue.cancel_join_thread()
    result_queue.close()
