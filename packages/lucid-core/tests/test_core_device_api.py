"""Device-agnostic answers: lucid.accelerator, lucid.cuda, lucid.backends.cuda/cudnn/mps,
Tensor.cuda/pin_memory, threads and matmul precision."""

from __future__ import annotations

import warnings
from collections.abc import Iterator

import pytest

import lucid
from lucid.backends import DeviceError, available_backends, blas_threads, get_backend


def _mlx_gpu_present() -> bool:
    if "mlx" not in available_backends():
        return False
    try:
        get_backend("mlx:gpu")
    except (DeviceError, ImportError):
        return False
    return True


def test_accelerator_answers_for_this_machine() -> None:
    present = _mlx_gpu_present()
    assert lucid.accelerator.is_available() is present
    assert lucid.accelerator.device_count() == (1 if present else 0)
    expected = lucid.device("mlx") if present else None
    assert lucid.accelerator.current_accelerator() == expected
    if not present:
        with pytest.raises(RuntimeError, match="none is available"):
            lucid.accelerator.synchronize()
        with pytest.raises(RuntimeError, match="none is available"):
            lucid.accelerator.current_device_index()


def test_cuda_is_absent_and_seeding_is_harmless() -> None:
    assert lucid.cuda.is_available() is False and lucid.cuda.device_count() == 0
    assert lucid.cuda.is_bf16_supported() is False and lucid.cuda.is_initialized() is False
    assert lucid.cuda.manual_seed(0) is None and lucid.cuda.manual_seed_all(0) is None
    assert lucid.cuda.empty_cache() is None


def test_cuda_memory_statistics_answer_as_on_a_cpu_build() -> None:
    """A program that reports its peak CUDA memory (the conv-bn fusion tutorial) reads 0 on
    PyTorch's CPU build; lucid answers the same."""
    for name in ("memory_allocated", "max_memory_allocated", "memory_reserved",
                 "max_memory_reserved"):  # fmt: skip
        assert getattr(lucid.cuda, name)() == 0 and getattr(lucid.cuda, name)(device=None) == 0
    assert lucid.cuda.memory_stats() == {}


@pytest.mark.parity
def test_cuda_memory_statistics_parity() -> None:
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("torch has a CUDA device here")
    for name in ("memory_allocated", "max_memory_allocated", "memory_reserved",
                 "max_memory_reserved", "memory_stats"):  # fmt: skip
        assert getattr(lucid.cuda, name)() == getattr(torch.cuda, name)()


@pytest.mark.parametrize(
    "call",
    [
        lambda: lucid.cuda.reset_peak_memory_stats(),
        lambda: lucid.cuda.synchronize(),
        lambda: lucid.cuda.current_device(),
        lambda: lucid.cuda.get_device_name(),
        lambda: lucid.cuda.get_device_capability(),
        lambda: lucid.cuda.set_device(0),
        lambda: lucid.zeros(2).cuda(),
    ],
)
def test_cuda_device_calls_raise_saying_what_to_use(call: object) -> None:
    with pytest.raises(AssertionError, match="no CUDA device.*'mlx'"):
        call()  # type: ignore[operator]


def test_tensor_answers_for_the_cpu() -> None:
    x = lucid.zeros(2)
    assert x.is_cuda is False and x.is_pinned() is False
    assert x.pin_memory() is x


def test_backend_switches_have_pytorch_defaults() -> None:
    cudnn = lucid.backends.cudnn
    assert (cudnn.enabled, cudnn.benchmark, cudnn.deterministic, cudnn.allow_tf32) == (
        True,
        False,
        False,
        True,
    )
    assert cudnn.is_available() is False and cudnn.version() is None
    assert lucid.backends.mps.is_available() is False and lucid.backends.mps.is_built() is False
    assert lucid.backends.cuda.is_built() is False


def _sdp_switches() -> tuple[bool, ...]:
    cuda = lucid.backends.cuda
    return (cuda.flash_sdp_enabled(), cuda.math_sdp_enabled(),
            cuda.mem_efficient_sdp_enabled(), cuda.cudnn_sdp_enabled())  # fmt: skip


def test_sdp_switches_and_the_deprecated_sdp_kernel() -> None:
    # vit-pytorch's SimpleViT with flash attention wraps its attention in sdp_kernel(**config).
    cuda = lucid.backends.cuda
    assert _sdp_switches() == (True, True, True, True)
    cuda.enable_mem_efficient_sdp(False)
    assert _sdp_switches() == (True, True, False, True)
    cuda.enable_mem_efficient_sdp(True)
    with pytest.warns(FutureWarning, match=r"sdp_kernel\(\)` is deprecated"):
        with cuda.sdp_kernel(enable_flash=False, enable_cudnn=False) as context:
            assert context == {} and _sdp_switches() == (False, True, True, False)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", FutureWarning)
                with cuda.sdp_kernel(enable_math=False):
                    assert _sdp_switches() == (True, False, True, True)
            assert _sdp_switches() == (False, True, True, False)
    assert _sdp_switches() == (True, True, True, True)


@pytest.mark.parity
def test_sdp_kernel_switches_match_torch() -> None:
    torch = pytest.importorskip("torch")
    theirs = torch.backends.cuda
    for kwargs in ({}, {"enable_math": False}, {"enable_flash": False, "enable_cudnn": False}):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            with lucid.backends.cuda.sdp_kernel(**kwargs), theirs.sdp_kernel(**kwargs):
                assert _sdp_switches() == (theirs.flash_sdp_enabled(), theirs.math_sdp_enabled(),
                    theirs.mem_efficient_sdp_enabled(), theirs.cudnn_sdp_enabled())  # fmt: skip


@pytest.fixture
def precision() -> Iterator[None]:
    before = lucid.get_float32_matmul_precision()
    yield
    lucid.set_float32_matmul_precision(before)


@pytest.mark.usefixtures("precision")
def test_matmul_precision_and_allow_tf32_are_one_setting() -> None:
    assert lucid.get_float32_matmul_precision() == "highest"
    assert lucid.backends.cuda.matmul.allow_tf32 is False
    lucid.set_float32_matmul_precision("high")
    assert lucid.backends.cuda.matmul.allow_tf32 is True
    lucid.backends.cuda.matmul.allow_tf32 = False
    assert lucid.get_float32_matmul_precision() == "highest"
    lucid.backends.cuda.matmul.allow_tf32 = True
    assert lucid.get_float32_matmul_precision() == "high"


@pytest.mark.usefixtures("precision")
def test_unknown_precision_warns_and_keeps_the_setting() -> None:
    lucid.set_float32_matmul_precision("medium")
    with pytest.warns(UserWarning, match="not one of 'highest', 'high', or 'medium'"):
        lucid.set_float32_matmul_precision("HIGH")
    assert lucid.get_float32_matmul_precision() == "medium"


@pytest.fixture
def threads() -> Iterator[None]:
    saved_requested = blas_threads._requested
    saved = [lib.num_threads for lib in blas_threads.libs()]
    yield
    for lib, n in zip(blas_threads.libs(), saved):
        lib.set_num_threads(n)
    blas_threads._requested = saved_requested


@pytest.mark.usefixtures("threads")
def test_set_num_threads_sets_the_blas_and_worker_budget() -> None:
    lucid.set_num_threads(1)
    assert lucid.get_num_threads() == 1 and blas_threads.budget() == 1
    assert all(lib.num_threads == 1 for lib in blas_threads.libs())
    lucid.set_num_threads(2)
    assert lucid.get_num_threads() == 2
    assert all(lib.num_threads == 2 for lib in blas_threads.libs())
    with blas_threads.single_blas_thread():
        lucid.set_num_threads(3)  # restored to 3 when the one-thread section ends
    assert all(lib.num_threads == 3 for lib in blas_threads.libs())


@pytest.mark.usefixtures("threads")
@pytest.mark.parametrize(
    ("n", "message"),
    [(0, "positive integer"), (-2, "positive integer"), (2.5, "expects an int, but got float")],
)
def test_set_num_threads_rejects_what_torch_rejects(n: object, message: str) -> None:
    with pytest.raises(RuntimeError, match=message):
        lucid.set_num_threads(n)  # type: ignore[arg-type]


def test_no_warning_from_the_device_queries() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lucid.accelerator.is_available()
        lucid.cuda.is_available()


def test_device_context_sets_the_factories_default_device() -> None:
    import numpy as np

    with lucid.device("cpu") as d:
        assert d == "cpu"
        assert lucid.zeros(2).device == "cpu"
    with lucid.device("meta"):
        made = [lucid.zeros(2), lucid.tensor([1.0]), lucid.randn(3), lucid.arange(3),
                lucid.full((2,), 1.0), lucid.empty(2), lucid.eye(2)]  # fmt: skip
        assert all(t.device == "meta" for t in made)
        assert lucid.from_numpy(np.ones(2)).device == "cpu"  # shares NumPy's memory
        assert lucid.get_default_device() == lucid.device("meta")
        with lucid.device("cpu"):  # blocks nest
            assert lucid.ones(1).device == "cpu"
        assert lucid.ones(1).device == "meta"
    assert lucid.ones(1).device == "cpu" and lucid.get_default_device() == "cpu"


def test_get_device_module_and_lucid_cpu() -> None:
    assert lucid.get_device_module("cpu") is lucid.cpu
    assert lucid.get_device_module(lucid.device("cuda")) is lucid.cuda
    expected = lucid.accelerator if lucid.accelerator.is_available() else lucid.cpu
    assert lucid.get_device_module() is expected
    with pytest.raises(RuntimeError, match="corresponding module registered as 'lucid.meta'"):
        lucid.get_device_module("meta")
    with pytest.raises(RuntimeError, match="expect torch.device, str, or None"):
        lucid.get_device_module(3)
    cpu = lucid.cpu
    assert cpu.is_available() and cpu.is_initialized() and cpu.device_count() == 1
    assert cpu.current_device() == "cpu"
    s = cpu.current_stream()
    assert isinstance(s, cpu.Stream)
    with cpu.stream(s), cpu.StreamContext(s):
        cpu.synchronize()
    assert cpu.Event().query() is True
    caps = cpu.get_capabilities()
    assert caps["num_logical_cores"] >= 1 and isinstance(caps["architecture"], str)
