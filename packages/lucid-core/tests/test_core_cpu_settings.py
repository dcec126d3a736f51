"""``lucid.backends.cpu``: the NumPy backend's switches, seeded from the environment and read by
the kernels at each call, so a change at run time changes which code runs."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import lucid
from lucid.backends import CpuSettings, cpu, get_backend
from lucid.backends._numpy import _compiled
from lucid.backends._numpy._settings import ENVIRONMENT
from lucid.backends._numpy.kernels import CpuConv, im2col, winograd
from lucid.kernels import conv_geometry


def _probe(code: str, **env: str) -> str:
    """``code``'s output in a fresh interpreter with only ``env`` (and PATH) set."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("LUCID_")}
    out = subprocess.run([sys.executable, "-c", code], env={**base, **env},
                         capture_output=True, text=True, check=False)  # fmt: skip
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_the_defaults_and_the_environment_that_seeds_them() -> None:
    code = "import lucid; print(lucid.backends.cpu)"
    assert _probe(code) == repr(CpuSettings())
    seeded = _probe(code, LUCID_NUMBA="0", LUCID_CONV="im2col", LUCID_WINOGRAD="F4",
                    LUCID_MALLOPT="0")  # fmt: skip
    assert seeded == repr(CpuSettings(False, False, "F4", False))
    assert set(ENVIRONMENT) == {"LUCID_NUMBA", "LUCID_CONV", "LUCID_WINOGRAD", "LUCID_MALLOPT"}


def test_settings_parse_the_environment_as_the_kernels_did() -> None:
    assert CpuSettings.from_environ({}).winograd_tiling == "auto"
    assert CpuSettings.from_environ({"LUCID_WINOGRAD": "F2"}).winograd_tiling == "F2"
    assert CpuSettings.from_environ({"LUCID_WINOGRAD": "x"}).winograd_tiling == "F2"
    assert CpuSettings.from_environ({"LUCID_NUMBA": "1"}).numba_enabled is True
    assert CpuSettings.from_environ({"LUCID_CONV": "auto"}).winograd_enabled is True


def test_bad_values_and_unknown_names_are_refused() -> None:
    s = CpuSettings()
    with pytest.raises(ValueError, match="winograd_tiling"):
        s.winograd_tiling = "F3"
    with pytest.raises(TypeError, match="numba_enabled"):
        s.numba_enabled = 0  # type: ignore[assignment]
    with pytest.raises(AttributeError):
        s.numba = False  # type: ignore[attr-defined]
    with pytest.raises(AttributeError), s.flags(numba=False):
        pass
    assert s.numba_enabled is True


def test_flags_restore_the_settings_after_the_block_even_on_error() -> None:
    before = repr(cpu)
    with pytest.raises(RuntimeError), cpu.flags(numba_enabled=False, winograd_tiling="F2"):
        assert not cpu.numba_enabled and cpu.winograd_tiling == "F2"
        raise RuntimeError
    assert repr(cpu) == before


def test_turning_numba_off_at_run_time_runs_the_numpy_code() -> None:
    pytest.importorskip("numba")
    if not cpu.numba_enabled:
        pytest.skip("the compiled kernels are off (LUCID_NUMBA=0)")
    rng = np.random.default_rng(0)
    xpad = rng.standard_normal((2, 6, 6, 5)).astype(np.float32)
    assert _compiled.load("_winograd_jit") is not None
    assert winograd._jit(winograd.F2, xpad.dtype) is not None
    compiled = winograd._input_transform(winograd.F2, xpad, (2, 2))
    with cpu.flags(numba_enabled=False):
        assert _compiled.load("_winograd_jit") is None and not _compiled.in_use()
        assert winograd._jit(winograd.F2, xpad.dtype) is None  # the NumPy transforms
        numpy_path = winograd._input_transform(winograd.F2, xpad, (2, 2))
    assert winograd._jit(winograd.F2, xpad.dtype) is not None  # back on
    np.testing.assert_array_equal(compiled, numpy_path)


def test_numba_off_in_the_environment_keeps_every_kernel_in_numpy() -> None:
    code = ("from lucid.backends._numpy import _compiled; import lucid; "
            "print(_compiled.load('_winograd_jit'))")  # fmt: skip
    assert _probe(code, LUCID_NUMBA="0") == "None"


def test_winograd_tiling_and_switch_change_the_path_at_run_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    backend = get_backend("cpu")
    x = np.random.default_rng(1).standard_normal((64, 64, 8, 8)).astype(np.float32)
    w = np.random.default_rng(2).standard_normal((64, 64, 3, 3)).astype(np.float32)
    g = conv_geometry((8, 8), (3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), 1)
    with cpu.flags(winograd_tiling="F4"):
        assert winograd.tiling(g) is winograd.F4
    with cpu.flags(winograd_tiling="F2"):
        assert winograd.tiling(g) is winograd.F2
    calls: list[str] = []
    monkeypatch.setattr(winograd, "conv_forward", lambda *a: calls.append("winograd"))
    monkeypatch.setattr(im2col, "conv_forward", lambda *a: calls.append("im2col"))
    CpuConv.forward(backend, x, w, None, g, None)
    cpu.winograd_enabled = False
    try:
        CpuConv.forward(backend, x, w, None, g, None)
    finally:
        cpu.winograd_enabled = True
    assert calls == ["winograd", "im2col"]


def test_the_thread_count_has_a_public_home_in_lucid_backends() -> None:
    assert lucid.backends.get_num_threads is lucid.get_num_threads
    assert lucid.backends.set_num_threads is lucid.set_num_threads
