"""A/B of the pooling, one-channel weight-gradient and fused conv+pool numba kernels: a git
revision's ``_pool_jit``/``_im2col_jit``/``_convpool_jit`` (loaded from files under other names,
compiled under other names) against the working tree's, in one process, at one thread,
interleaved, CPU time; every output compared bit for bit (docs/performance.md, session 7).

    python tools/experiments/ab_convpool_kernels.py [REV=HEAD] [ROUNDS=60]

Run from the repository root with ``lucid-core[numba]``. Shapes: LeNet-5's first layer (b64,
1 x 32 x 32, 6 filters 5x5, 2x2 pool).
"""

from __future__ import annotations

import importlib.util
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import lucid
from lucid.backends._numpy import _numba
from lucid.backends._numpy.kernels import _convpool_jit, _im2col_jit, _pool_jit

KERNELS = "packages/lucid-core/src/lucid/backends/_numpy/kernels/"


def _old(rev: str, mod: str, where: Path) -> Any:
    src = subprocess.run(["git", "show", f"{rev}:{KERNELS}{mod}.py"], capture_output=True,
                         text=True, check=True).stdout  # fmt: skip
    path = where / f"old{mod}.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location(f"old{mod}", path)
    assert spec is not None and spec.loader is not None
    m = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = m  # numba's cache rebuilds the module's environment by name
    spec.loader.exec_module(m)
    for f in ("specialised", "run", "run_split"):  # its own names in the compiled table
        if f in m.__dict__:
            real = getattr(_numba, f)
            setattr(m, f, lambda name, *a, _r=real, **k: _r("old_" + name, *a, **k))
    return m


def main() -> None:
    rev = sys.argv[1] if len(sys.argv) > 1 else "HEAD"
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 60
    lucid.set_num_threads(1)
    where = Path(tempfile.mkdtemp())
    op, oi, oc = (_old(rev, m, where) for m in ("_pool_jit", "_im2col_jit", "_convpool_jit"))
    rng = np.random.default_rng(0)
    n, h, c, ks = 64, 32, 6, 5
    oh = h - ks + 1
    xflat = rng.standard_normal((n, h * h)).astype(np.float32)
    w = rng.standard_normal((c, ks * ks)).astype(np.float32)
    bias = rng.standard_normal(c).astype(np.float32)
    xpad = rng.standard_normal((n, oh, oh, c)).astype(np.float32)
    xpad[0, 0, 0, 0] = np.nan
    dy = rng.standard_normal((n, oh, oh, c)).astype(np.float32)
    g = rng.standard_normal((n, oh // 2, oh // 2, c)).astype(np.float32)
    pooled = (n, oh // 2, oh // 2, c)

    def pool(m: Any) -> tuple[Any, ...]:
        out, idx = np.empty(pooled, np.float32), np.empty(pooled, np.int64)
        m.forward(2, 2, xpad, 2, 2, 1, 1, out, idx)
        return out, idx

    def wgrad(m: Any) -> tuple[Any, ...]:
        dw = np.empty((c, ks * ks))
        m.weight_one_channel(ks, ks, xflat, h, dy, dw)
        return (dw,)

    def cpool(m: Any) -> tuple[Any, ...]:
        out, idx = np.empty(pooled, np.float32), np.empty(pooled, np.int64)
        m.conv_pool(ks, ks, 2, 2, xflat, h, w, bias, out, idx)
        return out, idx

    def cpool_w(m: Any) -> tuple[Any, ...]:
        idx = cpool(m)[1]
        dw, db, d = np.empty((c, ks * ks)), np.empty(c), np.zeros((n, oh, oh, c), np.float32)
        m.conv_pool_weight(ks, ks, 2, 2, True, xflat, h, g, idx, dw, db, d)
        return dw, db, d

    cases: list[tuple[str, Callable[[Any], tuple[Any, ...]], Any, Any]] = [
        ("max_forward 2x2", pool, op, _pool_jit),
        ("weight_one_channel 5x5", wgrad, oi, _im2col_jit),
        ("conv_pool 5x5/2x2", cpool, oc, _convpool_jit),
        ("conv_pool_weight exact", cpool_w, oc, _convpool_jit),
    ]
    for name, f, a, b in cases:
        for x, y in zip(f(a), f(b)):
            assert x.dtype == y.dtype and np.array_equal(x, y, equal_nan=True), name
        ta: list[float] = []
        tb: list[float] = []
        for i in range(rounds):
            for m, acc in ((a, ta), (b, tb)) if i % 2 else ((b, tb), (a, ta)):
                t = time.process_time()
                f(m)
                acc.append(time.process_time() - t)
        ma, mb = statistics.median(ta), statistics.median(tb)
        print(f"{name:24s} same bits; {rev} {ma * 1e3:7.3f} ms, tree {mb * 1e3:7.3f} ms, "
              f"tree/{rev} {mb / ma:.3f}")  # fmt: skip


if __name__ == "__main__":
    main()
