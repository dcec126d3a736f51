"""``lucid.futures`` (``torch.futures``): :class:`Future` and the helpers over lists of them.

lucid runs work at once (``lucid.jit.fork`` returns a done future), so a future is done when
it is made, or when ``set_result`` completes one made empty.
"""

from __future__ import annotations

from typing import Any

from lucid._toplevel import Future

__all__ = ["Future", "collect_all", "wait_all"]


def collect_all(futures: list[Future]) -> Future:
    """``torch.futures.collect_all``: a future of the list of ``futures``, done once every one
    of them is (at once where they all are)."""
    out = Future()
    left = [len(futures)]

    def one_done(_: Future) -> None:
        left[0] -= 1
        if left[0] == 0:
            out.set_result(list(futures))

    if not futures:
        out.set_result([])
    for fut in futures:
        fut.add_done_callback(one_done)
    return out


def wait_all(futures: list[Future]) -> list[Any]:
    """``torch.futures.wait_all``: the result of each future, in order (an error one of them
    holds is raised)."""
    return [fut.wait() for fut in futures]
