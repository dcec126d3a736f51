"""Collectives on Tensors, in place as in ``torch.distributed``: every rank of the group calls
the same one with tensors of the same shape and dtype (checked: a mismatch raises on every
rank). ``async_op=True`` returns a ``Work`` whose ``wait()`` finishes writing the results."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import lucid
from lucid.distributed._group import ProcessGroup, resolve
from lucid.distributed._tensors import (
    agree,
    averaging,
    check_count,
    check_numel,
    check_tensor,
    describe,
    finisher,
    host_copy,
    host_view,
    same_as,
    write,
)
from lucid.distributed._work import ReduceOp, Request, Work


def _run(
    group: ProcessGroup,
    requests: list[Request],
    finish: Callable[[], Any] | None,
    async_op: bool,
    what: str,
) -> Work | None:
    work = Work(requests, finish, group.timeout, what)
    if async_op:
        return work
    work.wait()
    return None


def _prepare(tensor: Any, group: Any, what: str) -> tuple[lucid.Tensor, ProcessGroup]:
    g = resolve(group)
    t = check_tensor(tensor, what)
    agree(g, describe(t), what)
    return t, g


def all_reduce(
    tensor: lucid.Tensor, op: ReduceOp = ReduceOp.SUM, group: Any = None, async_op: bool = False
) -> Work | None:
    """Reduce ``tensor`` over the group with ``op``; every rank ends with the result in it.

    >>> t = lucid.tensor([float(dist.get_rank())])   # doctest: +SKIP
    >>> dist.all_reduce(t)                          # doctest: +SKIP
    """
    t, g = _prepare(tensor, group, "all_reduce")
    buf, back = host_view(t)
    req = g.engine.allreduce(buf, op)
    return _run(g, [req], finisher(averaging(buf, op, g), back), async_op, "all_reduce")


def broadcast(
    tensor: lucid.Tensor, src: int = 0, group: Any = None, async_op: bool = False
) -> Work | None:
    """Copy rank ``src``'s ``tensor`` into every rank's ``tensor``."""
    t, g = _prepare(tensor, group, "broadcast")
    buf, back = host_view(t)
    req = g.engine.broadcast(buf, g.group_rank(src, "src"))
    return _run(g, [req], back, async_op, "broadcast")


def reduce(
    tensor: lucid.Tensor,
    dst: int = 0,
    op: ReduceOp = ReduceOp.SUM,
    group: Any = None,
    async_op: bool = False,
) -> Work | None:
    """Reduce ``tensor`` over the group into rank ``dst``'s ``tensor``."""
    t, g = _prepare(tensor, group, "reduce")
    root = g.group_rank(dst, "dst")
    buf, back = host_view(t)
    req = g.engine.reduce(buf, root, op)
    if g.rank() != root:
        return _run(g, [req], None, async_op, "reduce")
    return _run(g, [req], finisher(averaging(buf, op, g), back), async_op, "reduce")


def all_gather(
    tensor_list: list[lucid.Tensor], tensor: lucid.Tensor, group: Any = None, async_op: bool = False
) -> Work | None:
    """Every rank's ``tensor`` into ``tensor_list`` (one per rank, in rank order)."""
    t, g = _prepare(tensor, group, "all_gather")
    check_count(tensor_list, g, "all_gather")
    same_as(tensor_list, t, "all_gather")
    send = host_copy(t)
    recv = np.empty((g.size(), *send.shape), dtype=send.dtype)
    req = g.engine.allgather(send, recv)

    def finish() -> None:
        for out, part in zip(tensor_list, recv):
            write(out, part)

    return _run(g, [req], finish, async_op, "all_gather")


def all_gather_into_tensor(
    output_tensor: lucid.Tensor,
    input_tensor: lucid.Tensor,
    group: Any = None,
    async_op: bool = False,
) -> Work | None:
    """Every rank's ``input_tensor`` concatenated (or stacked) into ``output_tensor``, whose
    size is the group's size times the input's."""
    t, g = _prepare(input_tensor, group, "all_gather_into_tensor")
    out = check_tensor(output_tensor, "all_gather_into_tensor")
    check_numel(out, t, g.size(), "all_gather_into_tensor")
    buf, back = host_view(out)
    req = g.engine.allgather(host_copy(t).reshape(-1), buf.reshape(-1))
    return _run(g, [req], back, async_op, "all_gather_into_tensor")


def reduce_scatter(
    output: lucid.Tensor,
    input_list: list[lucid.Tensor],
    op: ReduceOp = ReduceOp.SUM,
    group: Any = None,
    async_op: bool = False,
) -> Work | None:
    """Reduce ``input_list`` element-wise over the group; rank ``i`` gets element ``i``."""
    out, g = _prepare(output, group, "reduce_scatter")
    check_count(input_list, g, "reduce_scatter")
    same_as(input_list, out, "reduce_scatter")
    send = np.stack([host_copy(x) for x in input_list])
    buf, back = host_view(out)
    req = g.engine.reduce_scatter(send, buf, op)
    return _run(g, [req], finisher(averaging(buf, op, g), back), async_op, "reduce_scatter")


def reduce_scatter_tensor(
    output: lucid.Tensor,
    input: lucid.Tensor,  # noqa: A002 (torch's name)
    op: ReduceOp = ReduceOp.SUM,
    group: Any = None,
    async_op: bool = False,
) -> Work | None:
    """``reduce_scatter`` of ``input`` split into the group's size equal parts."""
    out, g = _prepare(output, group, "reduce_scatter_tensor")
    inp = check_tensor(input, "reduce_scatter_tensor")
    check_numel(inp, out, g.size(), "reduce_scatter_tensor")
    buf, back = host_view(out)
    req = g.engine.reduce_scatter(host_copy(inp).reshape(-1), buf.reshape(-1), op)
    what = "reduce_scatter_tensor"
    return _run(g, [req], finisher(averaging(buf, op, g), back), async_op, what)


def gather(
    tensor: lucid.Tensor,
    gather_list: list[lucid.Tensor] | None = None,
    dst: int = 0,
    group: Any = None,
    async_op: bool = False,
) -> Work | None:
    """Every rank's ``tensor`` into ``gather_list`` on rank ``dst`` (None elsewhere)."""
    t, g = _prepare(tensor, group, "gather")
    root = g.group_rank(dst, "dst")
    send, recv = host_copy(t), None
    if g.rank() == root:
        if gather_list is None:
            raise ValueError("gather: rank dst must pass gather_list")
        check_count(gather_list, g, "gather")
        same_as(gather_list, t, "gather")
        recv = np.empty((g.size(), *send.shape), dtype=send.dtype)
    req = g.engine.gather(send, recv, root)

    def finish() -> None:
        if recv is not None and gather_list is not None:
            for out, part in zip(gather_list, recv):
                write(out, part)

    return _run(g, [req], finish, async_op, "gather")


def scatter(
    tensor: lucid.Tensor,
    scatter_list: list[lucid.Tensor] | None = None,
    src: int = 0,
    group: Any = None,
    async_op: bool = False,
) -> Work | None:
    """Element ``i`` of rank ``src``'s ``scatter_list`` into rank ``i``'s ``tensor``."""
    t, g = _prepare(tensor, group, "scatter")
    root = g.group_rank(src, "src")
    send = None
    if g.rank() == root:
        if scatter_list is None:
            raise ValueError("scatter: rank src must pass scatter_list")
        check_count(scatter_list, g, "scatter")
        same_as(scatter_list, t, "scatter")
        send = np.stack([host_copy(x) for x in scatter_list])
    buf, back = host_view(t)
    req = g.engine.scatter(send, buf, root)
    return _run(g, [req], back, async_op, "scatter")


def isend(tensor: lucid.Tensor, dst: int, group: Any = None, tag: int = 0) -> Work:
    """Start sending ``tensor`` to rank ``dst``; the Work's ``wait()`` ends when it is sent."""
    g = resolve(group)
    t = check_tensor(tensor, "isend")
    req = g.engine.send(host_copy(t), g.group_rank(dst, "dst"), tag)
    return Work([req], None, g.timeout, "isend")


def send(tensor: lucid.Tensor, dst: int, group: Any = None, tag: int = 0) -> None:
    """Send ``tensor`` to rank ``dst`` (which calls ``recv``)."""
    isend(tensor, dst, group, tag).wait()


def irecv(tensor: lucid.Tensor, src: int | None = None, group: Any = None, tag: int = 0) -> Work:
    """Start receiving into ``tensor`` from ``src`` (None: any rank); the Work's ``result()``
    is the sender's rank. A message of another size than ``tensor`` raises."""
    g = resolve(group)
    t = check_tensor(tensor, "irecv")
    buf, back = host_view(t)
    source = None if src is None else g.group_rank(src, "src")
    req, status = g.engine.recv(buf, source, tag)

    def finish() -> int:
        if back is not None:
            back()
        return g.ranks[int(status.Get_source())]

    return Work([req], finish, g.timeout, "irecv")


def recv(tensor: lucid.Tensor, src: int | None = None, group: Any = None, tag: int = 0) -> int:
    """Receive into ``tensor`` from ``src`` (None: any rank); returns the sender's rank."""
    return int(irecv(tensor, src, group, tag).result())
