"""``lucid.cuda.tunable``: TunableOp's GEMM tuning switches. Lucid has no CUDA device, so each
raises the class PyTorch's CPU build raises (it lacks their ``torch._C`` bindings)."""

from __future__ import annotations

from lucid.cuda._errors import NoCUDAAttributeError, refusal

__all__ = [
    "enable",
    "is_enabled",
    "tuning_enable",
    "tuning_is_enabled",
    "record_untuned_enable",
    "record_untuned_is_enabled",
    "set_max_tuning_duration",
    "get_max_tuning_duration",
    "set_max_tuning_iterations",
    "get_max_tuning_iterations",
    "set_filename",
    "get_filename",
    "get_results",
    "get_validators",
    "read_file",
    "tune_gemm_in_file",
    "mgpu_tune_gemm_in_file",
    "set_rotating_buffer_size",
    "get_rotating_buffer_size",
    "set_numerical_check_tolerances",
]


def _no(what: str) -> BaseException:
    return refusal(f"tunable.{what}", NoCUDAAttributeError)


def enable(val: bool = True) -> None:
    """Raises: lucid has no TunableOp."""
    raise _no("enable")


def is_enabled() -> bool:
    """Raises: lucid has no TunableOp."""
    raise _no("is_enabled")


def tuning_enable(val: bool = True) -> None:
    """Raises: lucid has no TunableOp."""
    raise _no("tuning_enable")


def tuning_is_enabled() -> bool:
    """Raises: lucid has no TunableOp."""
    raise _no("tuning_is_enabled")


def record_untuned_enable(val: bool = True) -> None:
    """Raises: lucid has no TunableOp."""
    raise _no("record_untuned_enable")


def record_untuned_is_enabled() -> bool:
    """Raises: lucid has no TunableOp."""
    raise _no("record_untuned_is_enabled")


def set_max_tuning_duration(duration: int) -> None:
    """Raises: lucid has no TunableOp."""
    raise _no("set_max_tuning_duration")


def get_max_tuning_duration() -> int:
    """Raises: lucid has no TunableOp."""
    raise _no("get_max_tuning_duration")


def set_max_tuning_iterations(iterations: int) -> None:
    """Raises: lucid has no TunableOp."""
    raise _no("set_max_tuning_iterations")


def get_max_tuning_iterations() -> int:
    """Raises: lucid has no TunableOp."""
    raise _no("get_max_tuning_iterations")


def set_filename(filename: str, insert_device_ordinal: bool = False) -> None:
    """Raises: lucid has no TunableOp."""
    raise _no("set_filename")


def get_filename() -> str:
    """Raises: lucid has no TunableOp."""
    raise _no("get_filename")


def get_results() -> tuple[str, str, str, float]:
    """Raises: lucid has no TunableOp."""
    raise _no("get_results")


def get_validators() -> tuple[str, str]:
    """Raises: lucid has no TunableOp."""
    raise _no("get_validators")


def read_file(filename: str | None = None) -> bool:
    """Raises: lucid has no TunableOp."""
    raise _no("read_file")


def tune_gemm_in_file(filename: str) -> None:
    """Raises: lucid has no TunableOp."""
    raise _no("tune_gemm_in_file")


def mgpu_tune_gemm_in_file(filename_pattern: str, num_gpus: int) -> None:
    """Raises AssertionError (there are 0 GPUs to tune on), as PyTorch's CPU build does."""
    raise refusal(
        f"tunable.mgpu_tune_gemm_in_file (num_gpus must be between 1 and 0, got {num_gpus})"
    )


def set_rotating_buffer_size(buffer_size: int) -> None:
    """Raises: lucid has no TunableOp."""
    raise _no("set_rotating_buffer_size")


def get_rotating_buffer_size() -> int:
    """Raises: lucid has no TunableOp."""
    raise _no("get_rotating_buffer_size")


def set_numerical_check_tolerances(enable: bool, atol: float = 1e-5, rtol: float = 1e-5) -> None:
    """Raises: lucid has no TunableOp."""
    raise _no("set_numerical_check_tolerances")
