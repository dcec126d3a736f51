"""The MLX plugin's compiler for lucid.compile (``mx.compile``): registered for the backend,
bounds checks kept through the compiled call, a draw inside a traced function refused."""

from __future__ import annotations

import numpy as np
import pytest

import lucid

mx = pytest.importorskip("mlx.core")
pytestmark = pytest.mark.mlx

import lucid.backends.mlx  # noqa: E402  (registers the backend when run from a source tree)
from lucid.backends.mlx import _compile  # noqa: E402


def _mx_compile_builds() -> bool:
    """Whether mx.compile can build a fused kernel here (MLX's CPU backend compiles them with
    the system C++ compiler; without one every capture keeps the array replay)."""
    try:
        mx.eval(mx.compile(lambda a: mx.exp(a) * 2.0 + 1.0)(mx.ones(3)))
    except Exception:  # noqa: BLE001 - whatever MLX raises for it
        return False
    return True


if not _mx_compile_builds():
    pytest.skip("mx.compile cannot build kernels on this machine", allow_module_level=True)


def test_the_plugin_registers_mx_compile_for_its_backend() -> None:
    x = lucid.ones(3, device="mlx")
    report = lucid.compiler.explain(lambda t: (t * 2).sin(), x)
    assert report.replay_per_graph == ["mx.compile"]
    on_cpu = lucid.compiler.explain(lambda t: (t * 2).sin(), lucid.ones(3))
    assert on_cpu.replay_per_graph == ["array replay"]


def test_compiled_functions_queue_their_bounds_checks_at_each_call() -> None:
    backend = lucid.backends.mlx.create_backend("mlx")
    comp = _compile.MlxCompiler(backend)
    table = mx.arange(5, dtype=mx.float32) * 10

    def gather(xs: list) -> list:
        return [backend.xp.take(table, xs[0])]

    fn = comp.compile(gather)
    got = fn([mx.array([0, 4])])
    np.testing.assert_array_equal(np.array(got[0]), [0.0, 40.0])
    backend.checks.raise_failed()  # nothing out of range
    fn([mx.array([1, 9])])
    with pytest.raises(IndexError, match="index 9 is out of bounds"):
        backend.checks.raise_failed()


def test_a_random_draw_inside_a_compiled_function_is_refused_and_the_key_kept() -> None:
    backend = lucid.backends.mlx.create_backend("mlx")
    comp = _compile.MlxCompiler(backend)
    lucid.manual_seed(0)
    key = np.array(backend._key)

    def noisy(xs: list) -> list:
        return [xs[0] + backend.random_uniform((2,), lucid.float32, None)]

    with pytest.raises(RuntimeError, match="draws random numbers inside its forward"):
        comp.compile(noisy)([mx.zeros((2,))])
    np.testing.assert_array_equal(np.array(backend._key), key)
