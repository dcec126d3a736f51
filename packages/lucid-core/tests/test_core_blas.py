"""The NumPy backend's matmul: same results as numpy, BLAS threads as the user set them after."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import lucid
from lucid.backends import blas_threads
from lucid.backends._numpy import _gemm, _parallel

threadpoolctl = pytest.importorskip("threadpoolctl")


def _blas_threads() -> list[int]:
    """The thread counts of the BLAS libraries lucid drives (``blas_threads.libs()``: those
    loaded when it first looked, NumPy's among them). A BLAS loaded later by another package
    (scipy's own OpenBLAS, which numba's first compile can pull in: the parity env) is not
    lucid's to set, and counting it made these tests depend on the order they ran in."""
    mine = {lib.filepath for lib in blas_threads.libs()}
    return [
        i["num_threads"]
        for i in threadpoolctl.threadpool_info()
        if i["user_api"] == "blas" and (not mine or i["filepath"] in mine)
    ]


@pytest.mark.parametrize(
    "sa, sb",
    [((64, 400), (400, 120)), ((3, 5), (5,)), ((7,), (7, 2)), ((4, 32, 64), (64, 48)),
     ((2, 1, 8, 16), (3, 16, 4)), ((512, 512), (512, 512)), ((128, 1), (1, 185)),
     ((2, 1, 5, 1), (3, 1, 4))],
)  # fmt: skip
def test_matmul_matches_numpy_and_restores_threads(
    sa: tuple[int, ...], sb: tuple[int, ...]
) -> None:
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    _gemm.matmul(a, b)  # a first compiled kernel's build may load another BLAS (numba's scipy)
    before = _blas_threads()
    np.testing.assert_allclose(_gemm.matmul(a, b), np.matmul(a, b), rtol=1e-12, atol=1e-12)
    got = (lucid.tensor(a) @ lucid.tensor(b)).numpy()
    np.testing.assert_allclose(got, np.matmul(a, b), rtol=1e-12, atol=1e-12)
    assert _blas_threads() == before


def test_an_outer_product_is_numpys_matmul_bit_for_bit() -> None:
    """Inner dimension 1 (a batch-1 Linear's weight gradient) runs as a broadcast multiply:
    the same bits as np.matmul, also for a transposed operand and in float32."""
    rng = np.random.default_rng(1)
    g = rng.standard_normal((1, 128)).astype(np.float32)
    x = rng.standard_normal((1, 185)).astype(np.float32)
    assert np.array_equal(_gemm.matmul(g.T, x), np.matmul(g.T, x))
    assert _gemm.matmul(g.T, x).dtype == np.float32
    out = np.empty((128, 185), np.float32)
    _gemm.matmul(g.T, x, out=out)
    assert np.array_equal(out, np.matmul(g.T, x))


@pytest.mark.parametrize("last", [None, _parallel.POOL])
@pytest.mark.parametrize(
    "sa, sb, into",
    [((6, 4, 64, 64), (6, 4, 64, 32), None),  # the GPT step's attention part: 6 MFLOP
     ((2, 3, 16, 8), (2, 3, 8, 16), None),  # tiny
     ((96, 200), (200, 180), None),  # 2-D, mid-sized: numba's split where in use
     ((4, 32, 64), (64, 48), None),  # a stack times a matrix: the flattened GEMM, copied
     ((3, 5), (5,), None),  # a vector
     ((2, 8, 16), (2, 16, 4), (3, 2, 8, 4)),  # the result broadcast into ``out``
     ((128, 1), (1, 185), None)],  # the outer product's multiply
)  # fmt: skip
def test_matmul_into_out_gives_the_bits_of_compute_and_copy(
    sa: tuple[int, ...],
    sb: tuple[int, ...],
    into: tuple[int, ...] | None,
    last: object,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``matmul(out=)`` outside the pool writes NumPy's product in place (``DIRECT_OUT``): the
    same bits as the product computed and copied (the switch off), at one and two threads,
    after the pool or not, also into a slice of a bigger array (the attention's parts)."""
    rng = np.random.default_rng(2)
    a = rng.standard_normal(sa).astype(np.float32)
    b = rng.standard_normal(sb).astype(np.float32)
    shape = np.broadcast_shapes(np.matmul(a, b).shape, into or ())
    for budget in (1, 2):
        monkeypatch.setattr(blas_threads, "budget", lambda budget=budget: budget)
        got = {}
        for direct in (False, True):
            monkeypatch.setattr(_gemm, "DIRECT_OUT", direct)
            monkeypatch.setattr(blas_threads, "last", last)
            whole = np.full((2, *shape), np.nan, np.float32)
            dst = whole[1]
            assert _gemm.matmul(a, b, out=dst) is dst
            got[direct] = whole
        assert np.array_equal(got[True], got[False], equal_nan=True)
        assert np.array_equal(got[True][1], np.broadcast_to(np.matmul(a, b), shape))


def test_mid_sized_products_use_openblas_threads_unless_lucids_threads_ran_last(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A small model's products (nothing else of lucid's running) take OpenBLAS's threads;
    after the kernels' pool ran they stay on one (their spin would take its cores), until
    OpenBLAS's threads run parallel work again. No clock decides."""
    seen: list[list[int]] = []
    real = np.matmul

    def spy(a: np.ndarray, b: np.ndarray, **kw: object) -> np.ndarray:
        seen.append(_blas_threads())
        return real(a, b, **kw)

    monkeypatch.setattr(_gemm.np, "matmul", spy)
    monkeypatch.setattr(_gemm, "_compiled_matmul", lambda *a: None)  # numba's: tested elsewhere
    monkeypatch.setattr(blas_threads, "budget", lambda: 2)
    a, b = np.ones((64, 400), np.float32), np.ones((400, 120), np.float32)  # LeNet's fc1: 6 MFLOP
    monkeypatch.setattr(blas_threads, "last", None)  # no parallel work yet
    assert blas_threads.openblas_may_run()
    _gemm.matmul(a, b)
    assert seen and seen[-1] == _blas_threads()  # as set: not forced to one thread
    assert blas_threads.last == _parallel.OPENBLAS
    _gemm.matmul(a, b)
    assert seen[-1] == _blas_threads()  # still: OpenBLAS's threads ran last
    blas_threads.pool(2)  # the pool was just used
    assert not blas_threads.openblas_may_run() and blas_threads.last == _parallel.POOL
    _gemm.matmul(a, b)
    assert all(n == 1 for n in seen[-1])
    _gemm.matmul(a, b)
    assert all(n == 1 for n in seen[-1])  # however long ago: the order decides, not the clock
    assert blas_threads.pool(2).submit(blas_threads.openblas_may_run).result() is False
    small = np.ones((8, 8), np.float32)
    monkeypatch.setattr(blas_threads, "last", None)
    _gemm.matmul(np.ones((1, 4000), np.float32), np.ones((4000, 600), np.float32))  # a GEMV
    assert all(n == 1 for n in seen[-1])
    assert _gemm.matmul(small, small).shape == (8, 8)


@pytest.mark.parametrize(
    "sa, sb",
    [((512, 300), (300, 400)), ((2, 256, 128), (128, 512)), ((3, 700), (700, 9000)),
     ((2, 1, 600, 64), (3, 64, 400))],
)  # fmt: skip
def test_big_products_are_split_on_the_pool_with_one_blas_thread_each(
    monkeypatch: pytest.MonkeyPatch, sa: tuple[int, ...], sb: tuple[int, ...]
) -> None:
    """Big GEMMs never run on OpenBLAS's own threads (they spin after a call, taking the
    cores the kernels' pool needs): lucid splits them into row (or column) blocks instead."""
    import threading

    rng = np.random.default_rng(1)
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    seen: list[tuple[str, list[int]]] = []
    real = np.matmul

    def spy(x: np.ndarray, y: np.ndarray, **kw: object) -> np.ndarray:
        seen.append((threading.current_thread().name, _blas_threads()))
        return real(x, y, **kw)

    monkeypatch.setattr(blas_threads, "budget", lambda: 2)
    monkeypatch.setattr(_parallel, "PARALLEL_FLOPS", 1e6)
    before = _blas_threads()
    monkeypatch.setattr(_gemm.np, "matmul", spy)
    got = _gemm.matmul(a, b)
    monkeypatch.setattr(_gemm.np, "matmul", real)
    np.testing.assert_allclose(got, np.matmul(a, b), rtol=1e-12, atol=1e-12)
    assert len(seen) == 2, seen  # two blocks
    assert any(name.startswith("lucid-conv") for name, _ in seen)  # one of them on the pool
    assert all(all(n == 1 for n in threads) for _, threads in seen)
    assert _blas_threads() == before


def test_a_pool_of_another_size_replaces_the_old_one() -> None:
    old = blas_threads.pool(3)
    new = blas_threads.pool(2)
    assert new is not old and new is blas_threads.pool(2)
    assert old._shutdown  # its idle threads exit instead of piling up
    assert list(new.map(lambda v: v * 2, [1, 2, 3])) == [2, 4, 6]


def test_the_thread_budget_inside_single_blas_thread_is_the_users_setting() -> None:
    """Kernels that split work on the pool ask for the budget while the BLAS libraries are held
    at one thread (batch norm's blocks): they must see the setting, not that 1."""
    if not _blas_threads() or max(_blas_threads()) < 2:
        pytest.skip("needs a BLAS with 2+ threads")
    outside = blas_threads.budget()
    with blas_threads.single_blas_thread():
        assert all(n == 1 for n in _blas_threads())
        assert blas_threads.budget() == outside == _parallel.workers()
    assert blas_threads.budget() == outside


def test_single_blas_thread_nests_across_threads_and_restores_after_an_error() -> None:
    """One context object shared by every use: nested uses, uses from two Python threads at
    once and an exception inside all leave the BLAS setting as it was once the last one left."""
    if not _blas_threads() or max(_blas_threads()) < 2:
        pytest.skip("needs a BLAS with 2+ threads")
    before = _blas_threads()
    inside = threading.Event()
    release = threading.Event()
    seen: list[list[int]] = []

    def other() -> None:
        with blas_threads.single_blas_thread():
            inside.set()
            release.wait(10)
            seen.append(_blas_threads())

    t = threading.Thread(target=other)
    t.start()
    assert inside.wait(10)
    with pytest.raises(KeyError):
        with blas_threads.single_blas_thread():
            with blas_threads.single_blas_thread():  # nested
                assert all(n == 1 for n in _blas_threads())
            assert all(n == 1 for n in _blas_threads())
            raise KeyError("inside")
    assert all(n == 1 for n in _blas_threads())  # the other thread is still inside
    release.set()
    t.join(10)
    assert seen == [[1] * len(before)]
    assert _blas_threads() == before


def test_the_thread_knobs_read_and_set_what_threadpoolctl_sees() -> None:
    """``knobs`` (OpenBLAS's own C functions where it can) and threadpoolctl agree both ways."""
    knobs = blas_threads.knobs()
    if not knobs:
        pytest.skip("no BLAS threadpoolctl can drive")
    before = _blas_threads()
    assert [get() for get, _ in knobs] == before
    with threadpoolctl.threadpool_limits(limits=1, user_api="blas"):
        assert [get() for get, _ in knobs] == [1] * len(before)
    assert [get() for get, _ in knobs] == before
    try:
        for _, set_ in knobs:
            set_(1)
        assert _blas_threads() == [1] * len(before)
    finally:
        for (_, set_), n in zip(knobs, before):
            set_(n)
    assert _blas_threads() == before


@pytest.mark.parametrize("n, per, workers", [(128, 28, 2), (128, 7, 2), (10, 3, 3), (5, 100, 2),
                                             (3, 1, 2), (128, 128, 2), (7, 2, 1)])  # fmt: skip
def test_batch_chunks_give_every_worker_an_equal_share(
    monkeypatch: pytest.MonkeyPatch, n: int, per: int, workers: int
) -> None:
    monkeypatch.setattr(_parallel, "workers", lambda: workers)
    ranges = _parallel.batch_chunks(n, per)
    assert ranges[0][0] == 0 and ranges[-1][1] == n
    assert all(a[1] == b[0] for a, b in zip(ranges, ranges[1:]))  # contiguous, in order
    sizes = [e - s for s, e in ranges]
    assert min(sizes) >= 1 and max(sizes) - min(sizes) <= 1
    assert max(sizes) <= per or len(ranges) == n  # no bigger than asked (unless 1 sample each)
    wanted = -(-n // per)
    if wanted > 1:
        assert len(ranges) % workers == 0 or len(ranges) == n
    else:
        assert len(ranges) == 1  # one chunk stays one (a single big item runs inline)


def test_pool_matmul_never_uses_numba_or_openblas_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    """A convolution's weight transform runs just before its chunks go to the pool: a product
    split on numba's OpenMP threads would leave them spinning on the pool's cores."""
    rng = np.random.default_rng(2)
    monkeypatch.setattr(blas_threads, "budget", lambda: 2)
    monkeypatch.setattr(blas_threads, "last", _parallel.POOL)  # the pool just ran
    monkeypatch.setattr(_gemm, "_compiled_matmul", lambda *a: pytest.fail("split on numba"))
    seen: list[list[int]] = []
    real = np.matmul

    def spy(x: np.ndarray, y: np.ndarray, **kw: object) -> np.ndarray:
        seen.append(_blas_threads())
        return real(x, y, **kw)

    for sa, sb in [((36, 9), (9, 64 * 64)), ((36, 9), (9, 512 * 512)), ((4096, 36), (36, 9))]:
        a = rng.standard_normal(sa).astype(np.float32)
        b = rng.standard_normal(sb).astype(np.float32)
        seen.clear()
        monkeypatch.setattr(_gemm.np, "matmul", spy)
        got = _gemm.pool_matmul(a, b)
        monkeypatch.setattr(_gemm.np, "matmul", real)
        np.testing.assert_allclose(got, real(a, b), rtol=1e-5, atol=1e-5)
        assert seen and all(all(n == 1 for n in threads) for threads in seen)


def test_mid_sized_products_go_to_numba_only_when_the_pool_did_not_run_last(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A GPT step alternates big products split on the pool with mid-sized ones: after the
    pool, a mid-sized product runs on one BLAS thread, not on numba's threads (whose spin
    would hold the core the pool's next split needs); after numba's own work it may split."""
    asked: list[object] = []
    monkeypatch.setattr(_gemm, "_compiled_matmul", lambda *a: asked.append(a) or None)
    monkeypatch.setattr(blas_threads, "budget", lambda: 2)
    a = np.ones((768, 128), np.float32)
    b = np.ones((128, 128), np.float32)  # 25 MFLOP: mid-sized
    monkeypatch.setattr(blas_threads, "last", _parallel.POOL)
    np.testing.assert_allclose(_gemm.matmul(a, b), a @ b, rtol=1e-6, atol=1e-6)
    assert not asked
    monkeypatch.setattr(blas_threads, "last", _parallel.NUMBA)
    np.testing.assert_allclose(_gemm.matmul(a, b), a @ b, rtol=1e-6, atol=1e-6)
    assert len(asked) == 1


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    "sa, sb, sc, sd",
    [((4, 64, 256), (256, 128), (128, 256), (256, 256)),  # as GPT's MLP projection's gradients
     ((768, 128), (128, 128), (128, 768), (768, 128)),  # the attention projection's: 25 MFLOP
     ((3, 5), (5, 4), (4, 3), (3, 5)),  # small: each as ``matmul`` runs it
     ((2, 8, 16), (16, 4), (4, 16), (16, 8))],
)  # fmt: skip
def test_matmul_pair_gives_one_threads_bits(
    sa: tuple[int, ...],
    sb: tuple[int, ...],
    sc: tuple[int, ...],
    sd: tuple[int, ...],
    dtype: type,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two products at once (a Linear's input and weight gradients): the bits ``matmul`` gives
    at one thread (the transposed operand as a view, as the Linear passes it), near a float64
    oracle, at two threads and at one."""
    rng = np.random.default_rng(3)
    a, b, d = (rng.standard_normal(s).astype(dtype) for s in (sa, sb, sd))
    c = rng.standard_normal(sc[::-1]).astype(dtype).T
    with blas_threads.single_blas_thread():
        want = (_gemm._one_gemm(a, b), _gemm._one_gemm(c, d))
    for budget in (2, 1):
        monkeypatch.setattr(blas_threads, "budget", lambda budget=budget: budget)
        got = _gemm.matmul_pair(a, b, c, d)
        for g, w, (x, y) in zip(got, want, ((a, b), (c, d))):
            assert g.dtype == dtype and g.shape == w.shape
            oracle = np.matmul(x.astype(np.float64), y.astype(np.float64))
            np.testing.assert_allclose(g, oracle, rtol=1e-4, atol=1e-4)
            if budget == 2:
                assert np.array_equal(g, w)
    with pytest.raises(ValueError, match="matmul"):
        _gemm.matmul_pair(a, b, c, d[:-1])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_matmul_defer_gives_the_pairs_bits_once_waited(
    dtype: type, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The weight gradient left running (``matmul_defer``): once ``wait()`` has returned its
    array holds ``matmul_pair``'s bits; nothing stays in flight; None where the pair would not
    run at once (one thread, small products, ``DEFER`` off), and an error in the product is
    raised by ``wait()``."""
    rng = np.random.default_rng(4)
    a, b = (
        rng.standard_normal((768, 384)).astype(dtype),
        rng.standard_normal((384, 128)).astype(dtype),
    )
    c = rng.standard_normal((768, 384)).astype(dtype).T
    d = rng.standard_normal((768, 128)).astype(dtype)
    monkeypatch.setattr(blas_threads, "budget", lambda: 2)
    want = _gemm.matmul_pair(a, b, c, d)
    first, second, wait = _gemm.matmul_defer(a, b, c, d)
    assert blas_threads.in_flight
    wait()
    assert blas_threads.in_flight == [] and not blas_threads.pool_busy()
    assert np.array_equal(first, want[0]) and np.array_equal(second, want[1])
    assert second.dtype == dtype and second.shape == (384, 128)
    monkeypatch.setattr(_gemm, "DEFER", False)
    assert _gemm.matmul_defer(a, b, c, d) is None
    monkeypatch.setattr(_gemm, "DEFER", True)
    assert _gemm.matmul_defer(a[:2, :3], b[:3, :2], c[:2, :2], d[:2, :2]) is None  # small
    monkeypatch.setattr(blas_threads, "budget", lambda: 1)
    assert _gemm.matmul_defer(a, b, c, d) is None
    monkeypatch.setattr(blas_threads, "budget", lambda: 2)

    def broken(*args: object, **kwargs: object) -> None:
        raise FloatingPointError("the pool's product failed")

    r = _gemm.matmul_defer(a, b, c, d)
    assert r is not None
    r[2]()
    real = np.matmul
    monkeypatch.setattr(_gemm.np, "matmul", lambda x, y, out=None, **k: broken() if out is not None
                        and out.shape == (384, 128) else real(x, y, out=out, **k))  # fmt: skip
    r = _gemm.matmul_defer(a, b, c, d)
    assert r is not None
    with pytest.raises(FloatingPointError, match="pool's product failed"):
        r[2]()
    assert blas_threads.in_flight == []


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize(
    "xs, n",
    [((64, 128), 384), ((1, 64, 128), 128), ((3, 17, 40), 33), ((2, 2), 2), ((20, 512), 65),
     ((200, 64), 48), ((12, 16), 30)],
)  # fmt: skip
def test_fused_linear_gives_numpys_product_and_add(
    monkeypatch: pytest.MonkeyPatch,
    dtype: type,
    transposed: bool,
    bias: bool,
    xs: tuple[int, ...],
    n: int,
) -> None:
    """``_gemm.linear`` (one compiled call: the GEMM NumPy's matmul calls, then the bias) gives
    ``x @ w.T + b`` as NumPy computes it, to the bit, at one thread and at the default; a
    float32 product of few rows on OpenBLAS's small-matrix kernels (column blocks) gives another
    order of sums: then within float32 rounding of a float64 oracle, the same bits at every
    thread count and whether ``transposed`` was asked for or not."""
    if not _gemm._compiled.available("_gemm_jit"):
        pytest.skip("the compiled kernels (numba) are not installed")
    from lucid.backends._numpy.kernels import _gemm_jit

    rng = np.random.default_rng(3)
    x = rng.standard_normal(xs).astype(dtype)
    w = rng.standard_normal((n, xs[-1])).astype(dtype)
    b = rng.standard_normal(n).astype(dtype) if bias else None
    rows, k = x.size // xs[-1], xs[-1]
    small = dtype == np.float32 and _gemm_jit.small_blocks(rows, k) > 0
    # lucid's matmul runs a stack times a matrix as one GEMM over all its rows (NumPy: one a
    # matrix, whose small-matrix kernels may round otherwise)
    want = np.matmul(x.reshape(-1, k), w.T).reshape(*xs[:-1], n)
    want = want if b is None else want + b
    oracle = np.matmul(x.reshape(-1, k).astype(np.float64), w.T.astype(np.float64))
    oracle = (oracle if b is None else oracle + b).reshape(*xs[:-1], n)
    old = lucid.get_num_threads()
    got_by_threads = []
    try:
        for threads in (1, old):
            lucid.set_num_threads(threads)
            got = _gemm.linear(x, w, b, transposed)
            assert got is not None and got.dtype == want.dtype and got.shape == want.shape
            assert got.flags.c_contiguous
            if small:
                np.testing.assert_allclose(got, oracle, rtol=1e-5, atol=1e-5 * np.sqrt(k))
                assert np.array_equal(got, _gemm.linear(x, w, b, not transposed))
            else:
                assert np.array_equal(got, want)
            got_by_threads.append(got)
    finally:
        lucid.set_num_threads(old)
    assert np.array_equal(got_by_threads[0], got_by_threads[1])
    monkeypatch.setattr(_gemm, "SMALL_KERNELS", False)  # off: one GEMM, NumPy's bits
    got = _gemm.linear(x, w, b, transposed)
    assert got is not None and np.array_equal(got, want)


def test_fused_linear_declines_what_matmul_runs_otherwise(monkeypatch: pytest.MonkeyPatch) -> None:
    """None (the caller's matmul and add) for vectors, an outer product, mixed dtypes, a
    non-row-major operand, a bias that does not fit, and where ``matmul`` would split the
    product over the pool or numba's threads; ``FUSED_LINEAR = False`` turns it off."""
    f32 = np.float32
    x, w, b = np.ones((8, 16), f32), np.ones((4, 16), f32), np.ones(4, f32)
    assert _gemm.linear(np.ones((1, 16), f32), w, b) is None  # one row: NumPy's GEMV
    assert _gemm.linear(x, np.ones((1, 16), f32), None) is None  # one column
    assert _gemm.linear(np.ones((8, 1), f32), np.ones((4, 1), f32), None) is None  # outer
    assert _gemm.linear(x, w.astype(np.float64), None) is None
    assert _gemm.linear(x.astype(np.float16), w.astype(np.float16), None) is None
    assert _gemm.linear(np.ones((16, 8), f32).T, w, None) is None
    assert _gemm.linear(x, w, np.ones(5, f32)) is None
    assert _gemm.linear(x, w, np.ones((4, 2), f32)[:, 0]) is None  # a strided bias
    monkeypatch.setattr(blas_threads, "budget", lambda: 2)
    monkeypatch.setattr(blas_threads, "last", None)
    big = np.ones((512, 300), f32), np.ones((400, 300), f32)  # 123 MFLOP: the pool's blocks
    assert _gemm.linear(*big, None) is None
    monkeypatch.setattr(blas_threads, "last", _parallel.NUMBA)
    mid = np.ones((128, 200), f32), np.ones((120, 200), f32)  # 6 MFLOP after numba: its split
    assert _gemm.linear(*mid, None) is None
    monkeypatch.setattr(_gemm, "FUSED_LINEAR", False)
    monkeypatch.setattr(blas_threads, "last", None)
    assert _gemm.linear(x, w, b) is None


@pytest.mark.parametrize("m", [1, 2, 16, 20, 24, 32, 48, 64, 100])
@pytest.mark.parametrize("k", [32, 128, 200, 512])
def test_small_kernel_blocks_are_whole_vectors_within_the_kernels_limits(
    m: int, k: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``small_blocks``: a column block within OpenBLAS's small-kernel limits (a result of at
    most 1,200 elements, m * n * k at most 100^3), a multiple of 16 columns from 16 on (the
    widths of 64 rows then split into equal blocks), and as before where the limits allow
    fewer."""
    if not _gemm._compiled.available("_gemm_jit"):
        pytest.skip("the compiled kernels (numba) are not installed")
    from lucid.backends._numpy.kernels import _gemm_jit

    monkeypatch.setattr(_gemm_jit, "SMALL_KERNELS", True)
    nb = _gemm_jit.small_blocks(m, k)
    if not (m <= 24 or (k >= 128 and m <= 100)):
        assert nb == 0
        return
    limit = min(1200 // m, 100**3 // (m * k))
    assert 0 < nb <= limit and nb * m <= 1200 and nb * m * k <= 100**3
    assert nb == limit if limit < 16 else (nb % 16 == 0 and limit - nb < 16)
    if (m, k) == (64, 128):  # a generated token's Linears: 128, 384, 512 in equal blocks
        assert nb == 16
    monkeypatch.setattr(_gemm_jit, "SMALL_KERNELS", False)
    assert _gemm_jit.small_blocks(m, k) == 0
