"""A/B benchmarks of lucid's thread policies on ``train_step.py``'s models (lucid only).

Every comparison alternates its variants round by round (a 0.3 s pause before each round) and
prints, per variant, the median and fastest wall time per step and the median process CPU time
per step, with the load average. On a loaded machine compare the CPU column and the fastest
rounds; the wall medians only on a quiet one.

``products``: in one process, which threads run ``_gemm.matmul``'s products (2-D after
flattening, float32), from ``THREADED_FLOPS`` (2 MFLOP) on:

- ``now``: as ``_gemm.matmul`` decides;
- ``pool``: every such product as row blocks on lucid's pool;
- ``numba``: every such product as row blocks on numba's threads (``kernels._gemm_jit``);
- ``numba-big``: products from ``PARALLEL_FLOPS`` on to numba's threads unless the pool ran
  the last parallel work, the rest as now;
- ``one``: every product on one BLAS thread.

``rnn-blas``: in one process, the LSTM/GRU layer kernels as they are against the same kernels
inside ``single_blas_thread`` (their per-step products, (20, 200) x (200, 800) in the
word_language_model step, on one BLAS thread instead of OpenBLAS's threads).

``omp``: numba's OpenMP wait policy, one fresh process per run (the runtime reads it once):
passive (lucid's default) against spinning ``GOMP_SPINCOUNT`` times before sleeping.

``gpt-split``: in one process, the GPT step's kernels split over the threads (issue 30) or
not: ``off`` (none split), ``on`` (every split at its module's default), and each split alone
(``only-attention``, ``only-gelu``, ``only-layernorm``, ``only-adam``,
``only-linear-pair``, ``only-linear-defer``, ``only-matmul-out``; the last writes into the
attention's parts, so alone it is a control): the switches are ``SPLITS`` below (module,
attribute, the value that turns the split off).

    python tools/bench/ab_threads.py products gpt --rounds 9
    python tools/bench/ab_threads.py gpt-split gpt --rounds 9
    python tools/bench/ab_threads.py rnn-blas lstm
    python tools/bench/ab_threads.py omp lenet5 --rounds 6
    python tools/bench/ab_threads.py resnet resnet18 --batch 128 --rounds 7

``lstm-split``: in one process, the word_language_model step's switches (``LSTM_SPLITS``:
the LSTM layers' input products overlapping the recurrence, the decoder's bias add over the
threads, nll's one-hot gradient on reused pages with its sign folded) all off, all on and each
alone, with the main thread's CPU per step:
``python tools/bench/ab_threads.py lstm-split lstm --rounds 9``.

``resnet``: in one process, the ResNet-step switches (``RESNET_SWITCHES``, module attributes
of the NumPy backend's kernels) all off (``base``: the code before them), all on (``all``), and
each alone; per variant also the main thread's CPU time per step, and the part of it outside
the parallel hand-offs (``serial``: what a second core cannot shorten). LeNet-5 works too.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
SETTLE_S = 0.3
SPINS = tuple(
    os.environ.get("AB_SPINS", "2000,10000,30000,300000").split(",")
)  # 300000: GNU OpenMP's default without a policy


def _report(wall: dict[str, list[float]], cpu: dict[str, list[float]],
            main: dict[str, list[float]] | None = None) -> None:  # fmt: skip
    for v in wall:
        line = (f"  {v:16s} wall median {statistics.median(wall[v]):8.2f} fastest "
                f"{min(wall[v]):8.2f}  cpu median {statistics.median(cpu[v]):8.2f}")  # fmt: skip
        if main is not None:
            line += f"  main-thread cpu median {statistics.median(main[v]):8.2f}"
        print(line + " ms/step")
    print(f"  load average {os.getloadavg()}")


def _alternate(step: Callable[[], float], setters: dict[str, Callable[[], None]], rounds: int,
               per: int) -> None:  # fmt: skip
    """Alternate the variants round by round; the main thread's CPU (``thread_time``) is the
    serial part of a step, a bound on its wall time that other processes' load does not move."""
    losses = {}
    for v, set_variant in setters.items():
        set_variant()
        losses[v] = [step() for _ in range(2)]
    wall: dict[str, list[float]] = {v: [] for v in setters}
    cpu: dict[str, list[float]] = {v: [] for v in setters}
    main: dict[str, list[float]] = {v: [] for v in setters}
    for _ in range(rounds):
        for v, set_variant in setters.items():
            set_variant()
            time.sleep(SETTLE_S)
            w0, c0, t0 = time.perf_counter(), time.process_time(), time.thread_time()
            for _ in range(per):
                step()
            wall[v].append((time.perf_counter() - w0) / per * 1e3)
            cpu[v].append((time.process_time() - c0) / per * 1e3)
            main[v].append((time.thread_time() - t0) / per * 1e3)
    _report(wall, cpu, main)


def _stepper(model: str, batch: int) -> Callable[[], float]:
    sys.path.insert(0, str(HERE))
    import train_step  # noqa: PLC0415

    step: Callable[[], float] = train_step._steppers(model, batch, ["lucid"])["lucid"]
    return step


def products(model: str, rounds: int, per: int, batch: int) -> None:
    """In one process: which threads run the products (the module's docstring)."""
    from lucid.backends._numpy import _compiled, _gemm, _parallel  # noqa: PLC0415

    bt = _parallel.blas_threads
    gemm_jit = _compiled.load("_gemm_jit")  # None without numba (or LUCID_NUMBA=0)
    orig = _gemm.matmul

    def flat(route: Callable[[Any, Any, float], Any]) -> Callable[..., Any]:
        def matmul(a: Any, b: Any, out: Any = None, **kw: Any) -> Any:
            plain = not kw and out is None and a.ndim >= 2 and b.ndim == 2
            if not plain or a.dtype != np.float32 or b.dtype != np.float32:
                return orig(a, b, out, **kw)
            a2 = a.reshape(-1, a.shape[-1]) if a.ndim > 2 and a.flags.c_contiguous else a
            if a2.ndim != 2:
                return orig(a, b)
            m, n, flops = _gemm._product(a2, b)
            r = None
            if flops >= _gemm.THREADED_FLOPS and bt.budget() > 1 and not _parallel.in_worker():
                r = route(a2, b, flops)
            if r is None:
                return orig(a, b)
            return r.reshape(*a.shape[:-1], n)

        return matmul

    def pool(a: Any, b: Any, flops: float) -> Any:
        return _gemm._split_matmul(a, b, a.shape[0], b.shape[1], bt.budget())

    def numba(a: Any, b: Any, flops: float) -> Any:
        return None if gemm_jit is None else gemm_jit.matmul(a, b, flops)

    def numba_big(a: Any, b: Any, flops: float) -> Any:
        big = flops >= _parallel.PARALLEL_FLOPS and bt.last != _parallel.POOL
        return numba(a, b, flops) if big else None

    def one(a: Any, b: Any, flops: float) -> Any:
        with bt.single_blas_thread():
            return np.matmul(a, b)

    routes = {"now": orig, "pool": flat(pool), "one": flat(one)}
    if gemm_jit is not None:
        routes |= {"numba": flat(numba), "numba-big": flat(numba_big)}
    mods = [m for n, m in sys.modules.items() if n.startswith("lucid") and m is not _gemm]
    users = [m for m in mods if getattr(m, "matmul", None) is orig]

    def setter(f: Callable[..., Any]) -> Callable[[], None]:
        def set_variant() -> None:
            _gemm.matmul = f  # type: ignore[assignment]
            for m in users:
                m.matmul = f  # type: ignore[attr-defined]
            bt.last, bt.openblas_after_numba = None, False

        return set_variant

    step = _stepper(model, batch)
    print(f"products, {model}, threads {_parallel.workers()}")
    _alternate(step, {v: setter(f) for v, f in routes.items()}, rounds, per)


def rnn_blas(model: str, rounds: int, per: int, batch: int) -> None:
    """In one process: the recurrent layer kernels as they are, or on one BLAS thread."""
    from lucid.backends._numpy._parallel import blas_threads  # noqa: PLC0415
    from lucid.backends._numpy.kernels import gru, lstm  # noqa: PLC0415

    names = ((lstm, "CpuLstm"), (gru, "CpuGru"), (gru, "CpuRnn"))
    kernels = [k for k in (getattr(mod, name, None) for mod, name in names) if k is not None]
    saved = {(k, m): k.__dict__[m] for k in kernels for m in ("forward", "backward")}

    def serial(f: Any) -> Any:
        def run(*args: Any, **kwargs: Any) -> Any:
            with blas_threads.single_blas_thread():
                return f.__func__(*args, **kwargs)

        return staticmethod(run)

    def as_is() -> None:
        for (k, m), f in saved.items():
            setattr(k, m, f)

    def one_thread() -> None:
        for (k, m), f in saved.items():
            setattr(k, m, serial(f))

    step = _stepper(model, batch)
    print(f"rnn-blas, {model}")
    _alternate(step, {"as-is": as_is, "one-blas": one_thread}, rounds, per)


# The GPT step's splits (issue 30): name -> [(module, attribute, value that turns it off)]
SPLITS: dict[str, list[tuple[str, str, Any]]] = {
    "attention": [("lucid.nn.functional.attention", "SPLIT_FLOPS", float("inf"))],
    "gelu": [("lucid.backends._numpy.kernels._special_jit", "SPLIT_ELEMENTS", 1 << 62),
             ("lucid.backends._numpy.kernels.special", "SPLIT_BLOCKS_ELEMENTS", 1 << 62)],
    "layernorm": [("lucid.backends._numpy.kernels._layernorm_jit", "SPLIT_ELEMENTS", 1 << 62)],
    "adam": [("lucid.backends._numpy.kernels._adam_jit", "SPLIT_ELEMENTS", 1 << 62)],
    # not a split: the caller's part of a split writes its products in place (gpt2, issue 30)
    "matmul-out": [("lucid.backends._numpy._gemm", "DIRECT_OUT", False)],
    "linear-pair": [("lucid.backends._numpy._gemm", "PAIR_FLOPS", float("inf"))],
    # the weight gradient of the pair left running while the pass goes on (issue 30)
    "linear-defer": [("lucid.backends._numpy._gemm", "DEFER", False)],
}  # fmt: skip


def gpt_split(model: str, rounds: int, per: int, batch: int) -> None:
    """In one process: the splits of ``SPLITS`` all off, all on, each alone (where its module
    loads: the compiled ones need numba)."""
    _switch_splits("gpt-split", SPLITS, model, rounds, per, batch)


def _switch_splits(label: str, table: dict[str, list[tuple[str, str, Any]]], model: str,
                   rounds: int, per: int, batch: int) -> None:  # fmt: skip
    """The ``table``'s switches all off, all on and each alone, alternated in one process."""
    import importlib  # noqa: PLC0415

    step = _stepper(model, batch)  # first: the kernels' modules load
    switches: dict[str, list[tuple[Any, str, Any, Any]]] = {}
    for name, entries in table.items():
        for mod_name, attr, off in entries:
            try:
                mod = importlib.import_module(mod_name)
            except ImportError:  # a compiled kernel's module without numba
                continue
            if hasattr(mod, attr):
                switches.setdefault(name, []).append((mod, attr, getattr(mod, attr), off))

    def variant(on: set[str]) -> Callable[[], None]:
        def set_variant() -> None:
            for name, entries in switches.items():
                for mod, attr, default, off in entries:
                    setattr(mod, attr, default if name in on else off)

        return set_variant

    setters = {"off": variant(set()), "on": variant(set(switches))}
    setters.update({f"only-{name}": variant({name}) for name in switches})
    from lucid.backends._numpy import _parallel  # noqa: PLC0415

    print(f"{label}, {model}, threads {_parallel.workers()}, switches {sorted(switches)}")
    _alternate(step, setters, rounds, per)


# The word_language_model step's splits (issue 30, session 6): (module, attribute, the value
# that turns the split off).
LSTM_SPLITS: dict[str, list[tuple[str, str, Any]]] = {
    "pipeline": [("lucid.backends._numpy.kernels.lstm", "PIPELINE_INPUT_PRODUCTS", False)],
    "bias": [("lucid.nn.functional.linear", "SPLIT_BIAS_ADD", False)],
    "one-hot": [("lucid.backends._numpy.kernels.softmax", "REUSE_ONE_HOT_PAGES", False),
                ("lucid.backends._numpy.kernels.softmax", "FOLD_ONE_HOT_SIGN", False)],
}  # fmt: skip


def lstm_split(model: str, rounds: int, per: int, batch: int) -> None:
    """In one process: the splits of ``LSTM_SPLITS`` all off, all on, each alone; the main
    thread's CPU per step is the serial part the splits shorten."""
    _switch_splits("lstm-split", LSTM_SPLITS, model, rounds, per, batch)


def omp(model: str, rounds: int, per: int, batch: int) -> None:
    """numba's OpenMP wait policy: a fresh ``train_step.py --worker`` process per run."""
    variants = {"passive": {"OMP_WAIT_POLICY": "PASSIVE"}}
    for n in SPINS:
        variants[f"spin{n}"] = {"OMP_WAIT_POLICY": "ACTIVE", "GOMP_SPINCOUNT": n}
    wall: dict[str, list[float]] = {v: [] for v in variants}
    cpu: dict[str, list[float]] = {v: [] for v in variants}
    for _ in range(rounds):
        for v, env in variants.items():
            cmd = [sys.executable, str(HERE / "train_step.py"), "--worker", model, "time", "def",
                   "5", str(batch)]  # fmt: skip
            p = subprocess.run(cmd, env={**os.environ, **env}, capture_output=True, text=True)
            if p.returncode:
                raise SystemExit(p.stderr[-2000:])
            d = json.loads(p.stdout.strip().splitlines()[-1])
            wall[v].append(d["median"]["lucid"] * 1e3)
            cpu[v].append(d["cpu"]["lucid"] * 1e3)
    print(f"omp, {model} (each run: the median of 5 rounds)")
    _report(wall, cpu)


# (module, attribute) of each switch ``resnet`` compares: True is the new code.
RESNET_SWITCHES = (
    ("lucid.backends._numpy.kernels.winograd", "SPLIT_WEIGHT_TRANSFORMS"),
    ("lucid.backends._numpy.kernels.im2col", "SPLIT_SINGLE_CHUNK"),
    ("lucid.backends._numpy._ufuncs", "SPLIT_STEP_ELEMENTWISE"),
    ("lucid.backends._numpy._parallel", "CHUNKS_ON_CALLER"),
    ("lucid.backends._numpy.kernels.batchnorm", "BIG_ELEMENTWISE_BLOCKS"),
)


def resnet(model: str, rounds: int, per: int, batch: int) -> None:
    """In one process: the ResNet-step switches all off, all on, each alone (the docstring)."""
    import importlib  # noqa: PLC0415
    import threading  # noqa: PLC0415

    from lucid.backends._numpy import _gemm, _numba, _parallel  # noqa: PLC0415

    switches = [(importlib.import_module(m), a) for m, a in RESNET_SWITCHES]
    present = [(m, a) for m, a in switches if hasattr(m, a)]

    def setter(on: set[str]) -> Callable[[], None]:
        def set_variant() -> None:
            for m, a in present:
                setattr(m, a, a in on)

        return set_variant

    names = [a for _, a in present]
    variants = {"base": setter(set()), "all": setter(set(names))}
    if len(names) > 1:
        variants.update({f"only:{a}": setter({a}) for a in names})
    inside = [0.0]
    depth = [0]
    originals = [_parallel.run_chunks, _parallel.map_blocks, _numba.run_split, _gemm._split_matmul]

    def timed(f: Any) -> Any:
        def run(*args: Any, **kwargs: Any) -> Any:
            if depth[0] or threading.current_thread() is not threading.main_thread():
                return f(*args, **kwargs)
            depth[0] += 1
            c = time.thread_time()
            try:
                return f(*args, **kwargs)
            finally:
                inside[0] += time.thread_time() - c
                depth[0] -= 1

        return run

    step = _stepper(model, batch)
    wrapped = {id(f): timed(f) for f in originals}
    for name, mod in list(sys.modules.items()):  # after the step's modules have loaded
        if mod is not None and name.startswith("lucid"):
            for attr, value in list(vars(mod).items()):
                if id(value) in wrapped and value in originals:
                    setattr(mod, attr, wrapped[id(value)])
    losses = {}
    for v, set_variant in variants.items():  # fresh weights each: the same first losses
        set_variant()
        fresh = _stepper(model, batch)
        losses[v] = [fresh() for _ in range(3)]
    print(f"resnet switches, {model} b{batch}, threads {_parallel.workers()}")
    base = losses["base"]
    for v, ls in losses.items():
        print(f"  losses {v:12s} {ls} {'same as base' if ls == base else 'DIFFERENT'}")
    wall: dict[str, list[float]] = {v: [] for v in variants}
    cpu: dict[str, list[float]] = {v: [] for v in variants}
    main: dict[str, list[float]] = {v: [] for v in variants}
    serial: dict[str, list[float]] = {v: [] for v in variants}
    for v, set_variant in variants.items():
        set_variant()
        step()
    for _ in range(rounds):
        for v, set_variant in variants.items():
            set_variant()
            time.sleep(SETTLE_S)
            inside[0] = 0.0
            w0, c0, t0 = time.perf_counter(), time.process_time(), time.thread_time()
            for _ in range(per):
                step()
            t1 = time.thread_time() - t0
            wall[v].append((time.perf_counter() - w0) / per * 1e3)
            cpu[v].append((time.process_time() - c0) / per * 1e3)
            main[v].append(t1 / per * 1e3)
            serial[v].append((t1 - inside[0]) / per * 1e3)
    _report(wall, cpu)
    for v in variants:
        print(
            f"  {v:12s} main thread cpu median {statistics.median(main[v]):8.2f}, serial "
            f"median {statistics.median(serial[v]):8.2f} (min {min(serial[v]):.2f}) ms/step"
        )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument(
        "what", choices=["products", "rnn-blas", "omp", "gpt-split", "resnet", "lstm-split"]
    )
    ap.add_argument("model", choices=["gpt", "lstm", "lenet5", "resnet18", "charrnn"])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--per", type=int, default=0, help="steps a round (default: by model)")
    ap.add_argument("--batch", type=int, default=64)
    args = ap.parse_args()
    per = args.per or {"lenet5": 20, "gpt": 5, "lstm": 3, "charrnn": 20, "resnet18": 1}[args.model]
    modes = {"products": products, "rnn-blas": rnn_blas, "omp": omp, "gpt-split": gpt_split,
             "resnet": resnet, "lstm-split": lstm_split}  # fmt: skip
    modes[args.what](args.model, args.rounds, per, args.batch)


if __name__ == "__main__":
    main()
