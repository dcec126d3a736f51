"""Run by the tests on 2 ranks: every collective, printing one 'ok <name>' line per check that
holds (the test counts them) and raising on the first that does not."""

from __future__ import annotations

import numpy as np
from common import say  # tests/workers/common.py: this folder is on sys.path

import lucid
import lucid.distributed as dist


def same(name: str, got: lucid.Tensor, want: object) -> None:
    want = np.asarray(want, dtype=np.float64)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6, atol=1e-6)
    say(f"ok {name}")


def reductions(r: int, n: int) -> None:
    # rank 0 holds [1, 10], rank 1 holds [2, 20]
    for op, want in ((dist.ReduceOp.SUM, [3, 30]), (dist.ReduceOp.AVG, [1.5, 15]),
                     (dist.ReduceOp.MAX, [2, 20]), (dist.ReduceOp.MIN, [1, 10]),
                     (dist.ReduceOp.PRODUCT, [2, 200])):  # fmt: skip
        t = lucid.tensor([1.0, 10.0]) * (r + 1)
        dist.all_reduce(t, op=op)
        same(f"all_reduce {op.name}", t, want)
    t = lucid.full((2, 3), float(r + 1))
    work = dist.all_reduce(t, async_op=True)
    assert work is not None and work.wait() and work.is_completed()
    same("all_reduce async", t, np.full((2, 3), 3.0))
    t = lucid.arange(6.0).reshape(2, 3).t()  # not contiguous: written back through a copy
    dist.all_reduce(t)
    same("all_reduce strided", t, 2 * np.arange(6.0).reshape(2, 3).T)
    t = lucid.tensor([float(r + 1)])
    dist.reduce(t, dst=1)
    same("reduce", t, [3.0] if r == 1 else [1.0])


def movement(r: int, n: int) -> None:
    b = lucid.tensor([float(r)] * 3)
    dist.broadcast(b, src=1)
    same("broadcast", b, [1.0] * 3)
    outs = [lucid.zeros(2) for _ in range(n)]
    dist.all_gather(outs, lucid.tensor([r, r + 0.5]))
    same("all_gather", lucid.stack(outs), [[0, 0.5], [1, 1.5]])
    flat = lucid.zeros(2 * n)
    dist.all_gather_into_tensor(flat, lucid.tensor([r, r + 0.5]))
    same("all_gather_into_tensor", flat, [0, 0.5, 1, 1.5])
    out = lucid.zeros(2)
    dist.reduce_scatter(out, [lucid.ones(2) * (i + 1) * (r + 1) for i in range(n)])
    same("reduce_scatter", out, [3.0 * (r + 1)] * 2)
    out = lucid.zeros(1)
    dist.reduce_scatter_tensor(out, lucid.tensor([1.0, 2.0]), op=dist.ReduceOp.AVG)
    same("reduce_scatter_tensor", out, [1.0 + r])
    got = [lucid.zeros(1) for _ in range(n)] if r == 0 else None
    dist.gather(lucid.tensor([10.0 * r]), got, dst=0)
    if got is not None:
        same("gather", lucid.stack(got), [[0.0], [10.0]])
    s = lucid.zeros(1)
    dist.scatter(s, [lucid.tensor([7.0 + i]) for i in range(n)] if r == 0 else None, src=0)
    same("scatter", s, [7.0 + r])
    if r == 0:
        dist.send(lucid.tensor([3.0, 4.0]), dst=1)
    else:
        x = lucid.zeros(2)
        assert dist.recv(x) == 0
        same("send/recv", x, [3.0, 4.0])


def objects_and_groups(r: int, n: int) -> None:
    objs: list[object] = [None] * n
    dist.all_gather_object(objs, {"rank": r, "name": f"r{r}"})
    assert objs == [{"rank": 0, "name": "r0"}, {"rank": 1, "name": "r1"}], objs
    lst: list[object] = [r, "from"] if r == 0 else [None, None]
    dist.broadcast_object_list(lst, src=0)
    assert lst == [0, "from"], lst
    try:
        dist.all_gather_object(objs, {1, 2})
    except TypeError as e:
        assert "JSON" in str(e), e
    else:
        raise AssertionError("a set was sent")
    say("ok objects")
    alone = dist.new_group([1])
    if r == 1:
        assert dist.get_rank(alone) == 0 and dist.get_world_size(alone) == 1
    else:
        assert alone is dist.GroupMember.NON_GROUP_MEMBER
    say("ok new_group")


def mismatch(r: int) -> None:
    try:
        dist.all_reduce(lucid.zeros(2 + r))
    except RuntimeError as e:
        assert "rank 0: lucid.float32 tensor of shape (2,)" in str(e), e
        assert "rank 1: lucid.float32 tensor of shape (3,)" in str(e), e
        say("ok mismatched shapes")
    else:
        raise AssertionError("mismatched shapes were reduced")


def main() -> None:
    dist.init_process_group()
    assert dist.is_initialized() and dist.get_backend() == "mpi"
    r, n = dist.get_rank(), dist.get_world_size()
    reductions(r, n)
    movement(r, n)
    objects_and_groups(r, n)
    mismatch(r)
    dist.barrier()
    dist.destroy_process_group()
    assert not dist.is_initialized()


if __name__ == "__main__":
    main()
