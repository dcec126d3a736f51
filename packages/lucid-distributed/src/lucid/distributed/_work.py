"""``ReduceOp`` and ``Work``: what a collective reduces with, and the handle of one in flight."""

from __future__ import annotations

import enum
import time
from collections.abc import Callable, Sequence
from typing import Any, Protocol

__all__ = ["ReduceOp", "Work"]


class ReduceOp(enum.Enum):
    """How ``all_reduce``, ``reduce`` and ``reduce_scatter`` combine the ranks' values
    (``torch.distributed.ReduceOp``). ``AVG`` is the sum divided by the group's size."""

    SUM = "sum"
    AVG = "avg"
    PRODUCT = "product"
    MIN = "min"
    MAX = "max"
    BAND = "band"
    BOR = "bor"
    BXOR = "bxor"


class Request(Protocol):
    """A non-blocking operation of an engine (an MPI request)."""

    def Test(self) -> bool: ...


# Polling: spin this long before sleeping between tests, then sleep at most this long.
_SPIN_S = 1e-3
_MAX_SLEEP_S = 1e-3


def wait_all(requests: Sequence[Request], timeout: float | None, what: str) -> None:
    """Wait for every request; raise after ``timeout`` seconds (None: wait forever). Polling
    (rather than a blocking wait) keeps a stuck peer from hanging this rank past its timeout."""
    start = time.monotonic()
    pending = [r for r in requests if not r.Test()]
    sleep = 0.0
    while pending:
        elapsed = time.monotonic() - start
        if timeout is not None and elapsed > timeout:
            raise RuntimeError(
                f"{what} did not complete within the process group's timeout of {timeout:g} s: "
                "another rank is stuck, has died, or called a different collective"
            )
        if elapsed > _SPIN_S:
            sleep = min(_MAX_SLEEP_S, sleep * 2 or 1e-5)
            time.sleep(sleep)
        pending = [r for r in pending if not r.Test()]


class Work:
    """A collective started with ``async_op=True`` (``torch.distributed.Work``): ``wait()``
    blocks until it is done and its result is in the output tensors.

    >>> work = dist.all_reduce(t, async_op=True)   # doctest: +SKIP
    >>> work.wait()                                # doctest: +SKIP
    True
    """

    def __init__(
        self,
        requests: Sequence[Request],
        finish: Callable[[], Any] | None,
        timeout: float | None,
        what: str,
    ) -> None:
        self._requests = list(requests)
        self._finish = finish
        self._timeout = timeout
        self._what = what
        self._done = False
        self._result: Any = None

    def is_completed(self) -> bool:
        """Whether the collective has finished (its results are written once ``wait`` runs)."""
        return self._done or all(r.Test() for r in self._requests)

    def is_success(self) -> bool:
        """Whether the operation finished without error."""
        return self.is_completed()

    def wait(self, timeout: Any = None) -> bool:
        """Block until done and write the results into the output tensors; True on success.
        ``timeout`` (seconds or a ``timedelta``) overrides the process group's."""
        if self._done:
            return True
        limit = self._timeout if timeout is None else _seconds(timeout)
        wait_all(self._requests, limit, self._what)
        self._done = True
        if self._finish is not None:
            self._result = self._finish()
        return True

    def result(self) -> Any:
        """What the collective returned (``recv``'s source rank), after waiting for it."""
        self.wait()
        return self._result


def _seconds(timeout: Any) -> float:
    total = getattr(timeout, "total_seconds", None)
    return float(total() if callable(total) else timeout)


def seconds_or_none(timeout: Any) -> float | None:
    """A timeout given as a ``timedelta`` or seconds, as seconds (None: no limit)."""
    return None if timeout is None else _seconds(timeout)
