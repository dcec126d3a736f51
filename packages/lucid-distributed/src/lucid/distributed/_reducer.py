"""Gradient averaging for DistributedDataParallel: parameters packed in buckets whose
all-reduces start (non-blocking) while backward is still running.

After each forward, the reducer walks the new graph once (``grad_fn.next_functions``) to find,
for every parameter, the graph nodes that send it a gradient, and hooks those nodes: each hook
adds its contribution into the parameter's slot of its bucket, and when a bucket's last
parameter is complete the bucket's all-reduce starts (buckets start in one order on every rank,
as MPI requires). The parameters' own gradient hooks, which the engine calls once at the end of
backward, wait for the buckets and hand the engine the averaged gradient to store.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import lucid
from lucid.distributed._group import ProcessGroup
from lucid.distributed._tensors import host_copy
from lucid.distributed._work import ReduceOp, Request, wait_all

# The first bucket is small so that its all-reduce starts early in backward (as in PyTorch).
FIRST_BUCKET_BYTES = 1024 * 1024


@dataclass
class Bucket:
    """Parameters whose gradients travel in one all-reduce, in one flat host buffer."""

    params: list[int]  # indices into Reducer.params
    buffer: np.ndarray
    offsets: list[int] = field(default_factory=list)
    waiting: int = 0  # parameters of this pass whose gradient is not complete yet
    request: Request | None = None


def make_buckets(params: list[lucid.Tensor], cap_bytes: int) -> list[Bucket]:
    """Buckets of one dtype each, filled in reverse parameter order (roughly the order backward
    completes the gradients) and closed on reaching ``cap_bytes`` (the first: 1 MiB)."""
    buckets: list[Bucket] = []
    open_: dict[Any, tuple[list[int], int]] = {}

    def close(dtype: Any) -> None:
        members, _ = open_.pop(dtype)
        buckets.append(_bucket(params, members))

    for i in reversed(range(len(params))):
        key = host_dtype(params[i])
        members, nbytes = open_.get(key, ([], 0))
        members.append(i)
        nbytes += params[i].numel() * key.itemsize
        open_[key] = (members, nbytes)
        if nbytes >= (min(FIRST_BUCKET_BYTES, cap_bytes) if not buckets else cap_bytes):
            close(key)
    for key in list(open_):
        close(key)
    return buckets


def _bucket(params: list[lucid.Tensor], members: list[int]) -> Bucket:
    offsets, total = [], 0
    for i in members:
        offsets.append(total)
        total += params[i].numel()
    dtype = host_dtype(params[members[0]])
    return Bucket(members, np.zeros(total, dtype=dtype), offsets, waiting=len(members))


def host_dtype(p: lucid.Tensor) -> np.dtype[Any]:
    return np.dtype(host_copy(p.detach()).dtype)


class Pass:
    """The bookkeeping of one backward pass: which contributions each parameter still awaits."""

    def __init__(self, n: int) -> None:
        self.remaining = [0] * n  # graph edges into each parameter not yet run
        self.written = [False] * n  # whether the parameter's slot holds this pass's values
        self.used = np.zeros(n, dtype=np.int32)  # in this rank's graph
        self.used_anywhere = self.used  # in any rank's (all-reduced with find_unused_parameters)
        self.used_request: Request | None = None
        self.hooks_left = 0  # parameter hooks the engine will call at the end of backward
        self.next_bucket = 0  # buckets start in index order
        self.started_in_backward = 0  # buckets whose all-reduce started before backward's end
        self.wait_s = 0.0  # time backward's end waited for the all-reduces (and the peers)
        self.bytes_done_early = 0  # gradient bytes whose all-reduce was done by backward's end
        self.finished = False


class Reducer:
    def __init__(
        self,
        params: list[lucid.Tensor],
        names: list[str],
        group: ProcessGroup,
        cap_bytes: int,
        find_unused: bool,
    ) -> None:
        self.params = params
        self.names = names
        self.group = group
        self.find_unused = find_unused
        self.buckets = make_buckets(params, cap_bytes)
        self.slot: dict[int, tuple[Bucket, int]] = {}
        for b in self.buckets:
            for i, off in zip(b.params, b.offsets):
                self.slot[i] = (b, off)
        self.index = {id(p): i for i, p in enumerate(params)}
        self.current: Pass | None = None
        self.last: Pass | None = None  # the latest pass, for tests and benchmarks
        for i, p in enumerate(params):
            p.register_hook(self._leaf_hook(i))

    # -- after forward ----------------------------------------------------------------------
    def prepare(self, outputs: Any) -> None:
        """Hook the graph that produced ``outputs`` so that the next backward averages."""
        if self.current is not None and not self.current.finished:
            self._drain(self.current)  # a forward whose backward never ran
        state = Pass(len(self.params))
        edges = list(self._param_edges(_tensors(outputs)))
        if not edges:
            self.current = None
            return
        for node, slots in _by_node(edges).items():
            node.register_hook(self._node_hook(state, slots))
            for _, i in slots:
                state.remaining[i] += 1
                state.used[i] = 1
        self._check_unused(state)
        if self.find_unused:
            state.used_anywhere = state.used.copy()
            state.used_request = self.group.engine.allreduce(state.used_anywhere, ReduceOp.MAX)
        state.hooks_left = int(state.used.sum())
        self.last = state
        for b in self.buckets:
            b.waiting = len(b.params)
        self.current = state
        for i in range(len(self.params)):
            if state.remaining[i] == 0:
                self._ready(state, i)  # not in this rank's graph: contributes zeros

    def _param_edges(self, roots: list[lucid.Tensor]) -> Iterator[tuple[Any, int, int]]:
        """(node, edge index, parameter index) for every graph edge into a parameter."""
        stack = [t.grad_fn for t in roots if t.grad_fn is not None]
        seen = {id(n) for n in stack}
        while stack:
            node = stack.pop()
            for k, (nxt, _) in enumerate(node.next_functions):
                if nxt is None:
                    continue
                variable = getattr(nxt, "variable", None)
                if variable is not None:
                    i = self.index.get(id(variable))
                    if i is not None:
                        yield node, k, i
                elif id(nxt) not in seen:
                    seen.add(id(nxt))
                    stack.append(nxt)

    def _check_unused(self, state: Pass) -> None:
        if self.find_unused or state.used.all():
            return
        missing = [self.names[i] for i in range(len(self.params)) if not state.used[i]]
        raise RuntimeError(
            "DistributedDataParallel: these parameters take no part in producing the output, "
            f"so no gradient reaches them: {', '.join(missing)}. Pass "
            "find_unused_parameters=True to DistributedDataParallel, or set requires_grad=False "
            "on them"
        )

    # -- during backward --------------------------------------------------------------------
    def _node_hook(self, state: Pass, slots: list[tuple[int, int]]) -> Any:
        def hook(grad_inputs: Any, grad_outputs: Any) -> None:
            if state is not self.current:
                return  # the graph of an earlier forward
            for k, i in slots:
                g = grad_inputs[k]
                if g is not None:
                    self._add(state, i, g)
                state.remaining[i] -= 1
                if state.remaining[i] == 0:
                    self._ready(state, i)
            self._progress()

        return hook

    def _add(self, state: Pass, i: int, g: lucid.Tensor) -> None:
        p = self.params[i]
        if tuple(g.shape) != tuple(p.shape):
            g = g.sum_to_size(tuple(p.shape))  # a contribution still broadcast
        view = self._view(i)
        values = g.backend.to_numpy(g.array).reshape(-1)
        if state.written[i]:
            view += values
        else:
            np.copyto(view, values, casting="unsafe")
            state.written[i] = True

    def _view(self, i: int) -> np.ndarray:
        bucket, off = self.slot[i]
        return bucket.buffer[off : off + self.params[i].numel()]

    def _ready(self, state: Pass, i: int) -> None:
        """Parameter ``i``'s gradient of this pass is complete: add what ``.grad`` already holds
        (accumulated under ``no_sync``), and start every bucket that is now complete."""
        view = self._view(i)
        if not state.written[i]:
            view[...] = 0
            state.written[i] = True
        grad = self.params[i].grad
        if grad is not None:
            view += host_copy(grad).reshape(-1)
        bucket, _ = self.slot[i]
        bucket.waiting -= 1
        self._start_ready_buckets(state)

    def _start_ready_buckets(self, state: Pass) -> None:
        while state.next_bucket < len(self.buckets):
            bucket = self.buckets[state.next_bucket]
            if bucket.waiting > 0:
                return
            bucket.request = self.group.engine.allreduce(bucket.buffer, ReduceOp.SUM)
            state.next_bucket += 1
            state.started_in_backward += not state.finished

    def _progress(self) -> None:
        """Let MPI move the buckets in flight along (it progresses inside MPI calls)."""
        for b in self.buckets:
            if b.request is not None:
                b.request.Test()

    # -- end of backward --------------------------------------------------------------------
    def _leaf_hook(self, i: int) -> Any:
        def hook(grad: lucid.Tensor) -> lucid.Tensor | None:
            state = self.current
            if state is None:
                return None  # no_sync, or no graph was prepared
            if not state.finished:
                self._finish(state)
            state.hooks_left -= 1
            if state.hooks_left <= 0:
                self.current = None  # a later backward without a new forward does not average
            p = self.params[i]
            p.grad = None  # the averaged value already includes what .grad held
            return _as_param_tensor(self._view(i), p)

        return hook

    def _drain(self, state: Pass) -> None:
        """Complete what an abandoned pass started (every rank started the same), so that no
        all-reduce is still writing a buffer when the next pass fills it."""
        state.finished = True
        requests = [b.request for b in self.buckets if b.request is not None]
        if state.used_request is not None:
            requests.append(state.used_request)
        wait_all(requests, self.group.timeout, "DistributedDataParallel gradient all-reduce")
        for b in self.buckets:
            b.request = None

    def _finish(self, state: Pass) -> None:
        """Wait for every bucket (starting those whose parameters no node reached), average,
        and give the parameters no local node reached their averaged gradient."""
        state.finished = True
        for i in range(len(self.params)):
            if state.remaining[i] > 0:
                state.remaining[i] = 0
                self._ready(state, i)
        state.bytes_done_early = sum(
            b.buffer.nbytes for b in self.buckets if b.request is not None and b.request.Test()
        )
        start = time.perf_counter()
        self._drain(state)
        state.wait_s = time.perf_counter() - start
        n = self.group.size()
        for b in self.buckets:
            b.buffer /= b.buffer.dtype.type(n)
        for i in np.flatnonzero((state.used == 0) & (state.used_anywhere > 0)).tolist():
            p = self.params[i]
            p.grad = _as_param_tensor(self._view(i), p)


def _as_param_tensor(values: np.ndarray, p: lucid.Tensor) -> lucid.Tensor:
    t: lucid.Tensor = lucid.from_numpy(values.reshape(p.shape).copy())
    return t if t.device == p.device else t.to(p.device)


def _tensors(obj: Any) -> list[lucid.Tensor]:
    """The tensors in a forward's output (a tensor, or nested tuples, lists and dicts)."""
    if isinstance(obj, lucid.Tensor):
        return [obj] if obj.requires_grad else []
    if isinstance(obj, list | tuple):
        return [t for x in obj for t in _tensors(x)]
    if isinstance(obj, dict):
        return [t for x in obj.values() for t in _tensors(x)]
    return []


def _by_node(edges: list[tuple[Any, int, int]]) -> dict[Any, list[tuple[int, int]]]:
    nodes: dict[Any, list[tuple[int, int]]] = {}
    for node, k, i in edges:
        nodes.setdefault(node, []).append((k, i))
    return nodes
