"""lucid.autocast: which ops change precision, exact pass-through when disabled, gradients in
the parameters' dtype, the state's nesting, threads and cache, and the errors and warnings."""

from __future__ import annotations

import threading
import warnings
from typing import Any

import numpy as np
import pytest

import lucid
from lucid.amp import autocast_mode


def _pair(seed: int = 0) -> tuple[lucid.Tensor, lucid.Tensor]:
    lucid.manual_seed(seed)
    return lucid.randn(5, 4, requires_grad=True), lucid.randn(4, 3, requires_grad=True)


def _bf16_matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """What a bfloat16 GEMM gives: inputs rounded to bfloat16, float32 sums, rounded result."""
    bf16 = lucid.ones(1).bfloat16().numpy().dtype
    wide = a.astype(bf16).astype(np.float32) @ b.astype(bf16).astype(np.float32)
    return wide.astype(bf16).astype(np.float32)


def test_disabled_autocast_is_bit_identical() -> None:
    a, b = _pair()
    plain = (a @ b).tanh().sum()
    plain.backward()
    ref = [plain.item(), a.grad.numpy().copy(), b.grad.numpy().copy()]
    a.grad = b.grad = None
    with lucid.autocast("cpu", enabled=False):
        assert not lucid.is_autocast_enabled("cpu")
        out = (a @ b).tanh().sum()
    out.backward()
    assert out.dtype is lucid.float32 and out.item() == ref[0]
    assert np.array_equal(a.grad.numpy(), ref[1]) and np.array_equal(b.grad.numpy(), ref[2])


def test_matmul_runs_in_bfloat16_and_gradients_come_back_float32() -> None:
    a, b = _pair()
    with lucid.autocast("cpu"):
        assert lucid.is_autocast_enabled("cpu")
        assert lucid.get_autocast_dtype("cpu") is lucid.bfloat16
        y = a @ b
    assert y.dtype is lucid.bfloat16
    got = y.float().detach().numpy()
    np.testing.assert_allclose(got, _bf16_matmul(a.detach().numpy(), b.detach().numpy()),
                               rtol=0, atol=0)  # fmt: skip
    y.float().sum().backward()
    assert a.grad.dtype is lucid.float32 and b.grad.dtype is lucid.float32
    np.testing.assert_allclose(a.grad.numpy(), np.ones((5, 3)) @ b.detach().numpy().T,
                               rtol=2e-2, atol=2e-2)  # fmt: skip


def test_outside_the_region_nothing_changes() -> None:
    a, b = _pair()
    with lucid.autocast("cpu"):
        pass
    assert (a @ b).dtype is lucid.float32 and not lucid.is_autocast_enabled("cpu")


@pytest.mark.parametrize(
    ("name", "call", "expected"),
    [
        ("mm", lambda a, b, c: lucid.mm(a, b), "low"),
        ("bmm", lambda a, b, c: lucid.bmm(a.unsqueeze(0), b.unsqueeze(0)), "low"),
        ("addmm", lambda a, b, c: lucid.addmm(c, a, b), "low"),
        ("baddbmm", lambda a, b, c: lucid.baddbmm(c[None], a[None], b[None]), "low"),
        ("addbmm", lambda a, b, c: lucid.addbmm(c, a[None], b[None]), "low"),
        ("einsum", lambda a, b, c: lucid.einsum("ij,jk->ik", a, b), "low"),
        ("tensordot", lambda a, b, c: lucid.tensordot(a, b, 1), "low"),
        ("mv", lambda a, b, c: lucid.mv(a, b[:, 0]), "float32"),
        ("dot", lambda a, b, c: lucid.dot(a[0], b[:, 0]), "float32"),
        ("addmv", lambda a, b, c: lucid.addmv(c[:, 0], a, b[:, 0]), "float32"),
        ("outer", lambda a, b, c: lucid.outer(a[0], b[0]), "float32"),
        ("add", lambda a, b, c: a + a, "float32"),
        ("cdist", lambda a, b, c: lucid.cdist(a.bfloat16(), a.bfloat16()), "float32"),
    ],
)
@pytest.mark.parametrize("low", [lucid.bfloat16, lucid.float16])
def test_each_op_follows_torchs_cpu_policy(name: str, call: Any, expected: str, low: Any) -> None:
    a, b = _pair()
    c = lucid.randn(5, 3)
    with lucid.autocast("cpu", dtype=low):
        out = call(a, b, c)
    assert out.dtype is (low if expected == "low" else lucid.float32), name


def test_float64_is_never_cast() -> None:
    a = lucid.randn(3, 3, dtype=lucid.float64)
    with lucid.autocast("cpu"):
        assert (a @ a).dtype is lucid.float64


def test_nested_regions_restore_the_outer_state() -> None:
    a, b = _pair()
    with lucid.autocast("cpu"):
        with lucid.autocast("cpu", enabled=False):
            assert (a @ b).dtype is lucid.float32
        with lucid.autocast("cpu", dtype=lucid.float16):
            assert (a @ b).dtype is lucid.float16
        assert (a @ b).dtype is lucid.bfloat16 and lucid.get_autocast_dtype("cpu") is lucid.bfloat16


def test_the_region_is_its_autocast_object() -> None:
    with lucid.autocast("cpu", dtype=lucid.float16) as region:
        assert isinstance(region, lucid.autocast) and region.fast_dtype is lucid.float16


def test_decorator_form() -> None:
    a, b = _pair()

    @lucid.autocast("cpu")
    def forward(x: lucid.Tensor, y: lucid.Tensor) -> lucid.Tensor:
        return x @ y

    assert forward(a, b).dtype is lucid.bfloat16
    assert (a @ b).dtype is lucid.float32


def test_backward_inside_the_region_keeps_gradient_dtypes() -> None:
    a, b = _pair()
    with lucid.autocast("cpu"):
        loss = lucid.dot(a[0], b[:, 0]) + (a @ b).float().sum()
        loss.backward()
    assert a.grad.dtype is lucid.float32 and b.grad.dtype is lucid.float32


def test_the_region_is_per_thread() -> None:
    a, b = _pair()
    seen: list[Any] = []
    with lucid.autocast("cpu"):
        worker = threading.Thread(target=lambda: seen.append((a @ b).dtype))
        worker.start()
        worker.join()
    assert seen == [lucid.float32]


def test_a_parameter_is_cast_once_per_region() -> None:
    w = lucid.randn(3, 3, requires_grad=True)
    with lucid.autocast("cpu"):
        first = autocast_mode.lower_precision_inputs(w)[0]
        assert autocast_mode.lower_precision_inputs(w)[0] is first
    with lucid.autocast("cpu"):
        assert autocast_mode.lower_precision_inputs(w)[0] is not first
    with lucid.autocast("cpu", cache_enabled=False):
        one, two = autocast_mode.lower_precision_inputs(w, w)
        assert one is not two and one.dtype is lucid.bfloat16


def test_cuda_without_a_cuda_backend_warns_and_disables() -> None:
    a, b = _pair()
    with pytest.warns(UserWarning, match="'cuda'.*Disabling autocast"):
        region = lucid.autocast("cuda")
    with region:
        assert not lucid.is_autocast_enabled("cuda") and (a @ b).dtype is lucid.float32
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with lucid.autocast("cuda", enabled=False):  # nanoGPT's disabled form: silent
            pass


def test_a_dtype_autocast_does_not_take_warns_and_disables() -> None:
    with pytest.warns(UserWarning, match="lucid.float64 is not supported"):
        region = lucid.autocast("cpu", dtype=lucid.float64)
    with region:
        assert not lucid.is_autocast_enabled("cpu")


def test_unknown_device_types_and_non_strings_are_errors() -> None:
    with pytest.raises(RuntimeError, match="unknown device_type 'tpu9'"):
        lucid.autocast("tpu9")
    with pytest.raises(ValueError, match="`device_type` of type `str`"):
        lucid.autocast(lucid.device("cpu"))  # type: ignore[arg-type]


def test_a_backend_without_the_dtype_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    class NoHalf:
        def native_dtype(self, dtype: Any) -> Any:
            raise TypeError(f"{dtype} is not supported on this test device")

    monkeypatch.setattr(autocast_mode, "get_backend", lambda key: NoHalf())
    with pytest.raises(RuntimeError, match=r"the 'cpu' backend has no lucid.float16"):
        lucid.autocast("cpu", dtype=lucid.float16)


def test_amp_names_match_torch() -> None:
    assert lucid.amp.autocast is lucid.autocast
    assert lucid.amp.is_autocast_available("cpu") and not lucid.amp.is_autocast_available("cuda")
    assert lucid.get_autocast_dtype("cuda") is lucid.float16
    lucid.set_autocast_enabled("cpu", True)
    try:
        assert lucid.is_autocast_enabled("cpu")
    finally:
        lucid.set_autocast_enabled("cpu", False)
    assert not lucid.is_autocast_enabled("cpu") and lucid.is_autocast_cache_enabled()


# -- inference_mode --------------------------------------------------------------------------


def test_inference_mode_records_nothing_and_says_so() -> None:
    x = lucid.ones(2, requires_grad=True)
    with lucid.inference_mode():
        assert lucid.is_inference_mode_enabled() and not lucid.is_grad_enabled()
        y = x * 2
        with lucid.inference_mode(False):
            assert lucid.is_grad_enabled() and not lucid.is_inference_mode_enabled()
    assert not y.requires_grad
    assert not lucid.is_inference_mode_enabled() and lucid.is_grad_enabled()


def test_inference_mode_as_a_decorator_with_and_without_the_call() -> None:
    @lucid.inference_mode
    def bare() -> tuple[bool, bool]:
        return lucid.is_inference_mode_enabled(), lucid.is_grad_enabled()

    @lucid.inference_mode(mode=False)
    def off() -> tuple[bool, bool]:
        return lucid.is_inference_mode_enabled(), lucid.is_grad_enabled()

    assert bare() == (True, False)
    with lucid.no_grad():
        assert off() == (False, True)
    assert bare.__name__ == "bare"
