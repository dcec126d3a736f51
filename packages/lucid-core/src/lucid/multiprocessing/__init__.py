"""``lucid.multiprocessing``: Python's ``multiprocessing`` with torch's additions
(``torch.multiprocessing``): :func:`spawn` and :class:`ProcessContext`.

Tensors made shared with ``Tensor.share_memory_()`` / ``Module.share_memory()`` live in a
named shared-memory segment. Processes forked afterwards inherit the mapping; processes
started by "spawn" or "forkserver", and processes that receive the tensor through a
``multiprocessing`` queue or pipe, get a handle and map the same memory (as torch's
``file_system`` strategy). Either way their in-place writes (an optimizer's step) reach the
parent, which is Hogwild training. Tensors that are not shared travel by value (a copy).

>>> import lucid.multiprocessing as mp
>>> ctx = mp.get_context("fork")  # doctest: +SKIP
"""

from __future__ import annotations

import multiprocessing
import traceback
from collections.abc import Callable
from multiprocessing import *  # noqa: F403 (torch.multiprocessing re-exports it too)
from typing import Any

# (multiprocessing's own names are here too, through the star import, as in torch)
__all__ = [
    "ProcessContext", "ProcessExitedException", "ProcessRaisedException",
    "get_all_sharing_strategies", "get_sharing_strategy", "set_sharing_strategy", "spawn",
    "start_processes",
]  # fmt: skip

# torch's two strategies for sending shared tensors to other processes; lucid's shared tensors
# always travel as a named segment's handle (the module's docstring), torch's "file_system"
_STRATEGIES = frozenset({"file_descriptor", "file_system"})
_sharing = ["file_descriptor"]  # torch's default on Linux


def get_all_sharing_strategies() -> set[str]:
    """``torch.multiprocessing.get_all_sharing_strategies``: the strategies one may set."""
    return set(_STRATEGIES)


def get_sharing_strategy() -> str:
    """``torch.multiprocessing.get_sharing_strategy``: the one set (``"file_descriptor"``
    unless changed)."""
    return _sharing[0]


def set_sharing_strategy(new_strategy: str) -> None:
    """``torch.multiprocessing.set_sharing_strategy``: remembered and read back. Either way lucid
    hands shared tensors over as a named shared-memory segment (what torch's ``file_system``
    does), which holds no file descriptor open per tensor ("too many open files" cannot
    happen)."""
    if new_strategy not in _STRATEGIES:
        raise AssertionError(
            f"set_sharing_strategy expects one of {sorted(_STRATEGIES)}, got {new_strategy!r}"
        )
    _sharing[0] = new_strategy


class ProcessRaisedException(Exception):
    """A spawned process raised: its error index and traceback (torch's name)."""

    def __init__(self, msg: str, error_index: int, error_pid: int | None) -> None:
        super().__init__(msg)
        self.error_index, self.pid = error_index, error_pid


class ProcessExitedException(Exception):
    """A spawned process exited with a non-zero code (torch's name)."""

    def __init__(self, msg: str, error_index: int, error_pid: int | None, exit_code: int) -> None:
        super().__init__(msg)
        self.error_index, self.pid, self.exit_code = error_index, error_pid, exit_code


def _wrap(fn: Callable[..., Any], i: int, args: tuple[Any, ...], errors: Any) -> None:
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass
    except Exception:
        errors.put((i, traceback.format_exc()))
        raise SystemExit(1) from None


class ProcessContext:
    """The processes :func:`spawn` started; :meth:`join` waits and raises the first error."""

    def __init__(self, processes: list[Any], errors: Any) -> None:
        self.processes, self.error_queue = processes, errors

    def pids(self) -> list[int | None]:
        """The processes' ids."""
        return [p.pid for p in self.processes]

    def join(self, timeout: float | None = None) -> bool:
        """Wait for every process; True when all ended, an exception when one failed."""
        for p in self.processes:
            p.join(timeout)
        if not self.error_queue.empty():
            index, text = self.error_queue.get()
            for p in self.processes:
                if p.is_alive():
                    p.terminate()
            raise ProcessRaisedException(
                f"\n\n-- Process {index} terminated with the following error:\n{text}",
                index, self.processes[index].pid,
            )  # fmt: skip
        for i, p in enumerate(self.processes):
            if p.exitcode not in (0, None):
                raise ProcessExitedException(
                    f"process {i} terminated with exit code {p.exitcode}", i, p.pid, p.exitcode
                )
        return all(not p.is_alive() for p in self.processes)


def start_processes(fn: Callable[..., Any], args: tuple[Any, ...] = (), nprocs: int = 1,
                    join: bool = True, daemon: bool = False,
                    start_method: str = "spawn") -> ProcessContext | None:  # fmt: skip
    """Run ``fn(i, *args)`` for each ``i`` in ``range(nprocs)``, each in its own process."""
    ctx: Any = multiprocessing.get_context(start_method)
    errors = ctx.SimpleQueue()
    processes = []
    for i in range(nprocs):
        p = ctx.Process(target=_wrap, args=(fn, i, args, errors), daemon=daemon)
        p.start()
        processes.append(p)
    context = ProcessContext(processes, errors)
    if not join:
        return context
    while not context.join():
        pass
    return None


def spawn(fn: Callable[..., Any], args: tuple[Any, ...] = (), nprocs: int = 1,
          join: bool = True, daemon: bool = False,
          start_method: str = "spawn") -> ProcessContext | None:  # fmt: skip
    """``torch.multiprocessing.spawn``: ``fn(i, *args)`` in ``nprocs`` processes, joined."""
    return start_processes(fn, args, nprocs, join, daemon, start_method)
