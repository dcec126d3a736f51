"""On MLX, out-of-range indices raise the NumPy path's error (index arrays at the next
sync point, with no sync of their own), and allocations larger than the device are refused.
(The losses' target checks, which need lucid.nn, are in tests-integration.)"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

mx = pytest.importorskip("mlx.core")

import lucid  # noqa: E402
from lucid.backends import get_backend  # noqa: E402


def _message(fn: Callable[[str], Any], device: str) -> str:
    # IndexError for indexing; torch's RuntimeError for gather/scatter's index tensors
    with pytest.raises((IndexError, RuntimeError)) as info:
        out = fn(device)
        if isinstance(out, lucid.Tensor):
            out.tolist()  # a sync point
    return str(info.value)


def _set(device: str) -> None:
    t = lucid.zeros(3, device=device)
    t[5] = 1.0


CASES: dict[str, Callable[[str], Any]] = {
    "t[5]": lambda d: lucid.zeros(3, device=d)[5],
    "t[-4]": lambda d: lucid.zeros(3, device=d)[-4],
    "t[1, 7]": lambda d: lucid.zeros(2, 3, device=d)[1, 7],
    "t[..., 7]": lambda d: lucid.zeros(2, 3, device=d)[..., 7],
    "t[5] = 1": _set,
    "t[index tensor]": lambda d: lucid.zeros(3, device=d)[lucid.tensor([0, 3], device=d)],
    "t[:, index tensor]": lambda d: lucid.zeros(2, 3, device=d)[:, lucid.tensor([-4], device=d)],
    "gather": lambda d: lucid.gather(lucid.zeros(3, device=d), 0, lucid.tensor([5], device=d)),
    "index_select": lambda d: lucid.zeros(3, 2, device=d).index_select(
        0, lucid.tensor([3], device=d)
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_out_of_range_indices_raise_the_numpy_paths_error(case: str) -> None:
    assert _message(CASES[case], "mlx") == _message(CASES[case], "cpu")


def test_in_range_indices_pass() -> None:
    t = lucid.arange(6.0, device="mlx").reshape(2, 3)
    assert t[-1, -3].item() == 3.0
    assert t[:, lucid.tensor([2, -3], device="mlx")].tolist() == [[2.0, 0.0], [5.0, 3.0]]
    picked = lucid.gather(t, 1, lucid.tensor([[2], [0]], device="mlx"))
    assert picked.tolist() == [[2.0], [3.0]]


def test_a_bounds_check_adds_no_host_transfer_and_clears_after_raising() -> None:
    backend = get_backend("mlx")
    before = backend.host_transfers
    out = lucid.gather(lucid.zeros(3, device="mlx"), 0, lucid.tensor([0, 9], device="mlx"))
    assert backend.host_transfers == before  # checked lazily: nothing read back yet
    with pytest.raises(RuntimeError, match="index 9 is out of bounds for dimension 0 with size 3"):
        out.sum().item()
    assert lucid.ones(2, device="mlx").sum().item() == 2.0  # the failed check is not kept


@pytest.mark.parametrize(
    "make",
    [
        lambda: lucid.zeros(10**6, 10**6, device="mlx"),
        lambda: lucid.randn(10**6, 10**6, device="mlx"),
        lambda: lucid.ones(10**7, 10**6, dtype=lucid.int8, device="mlx"),
        lambda: lucid.empty(10**6, 10**6, device="mlx"),
        lambda: lucid.zeros(1, 10**6, device="mlx").expand(10**6, 10**6),
    ],
    ids=["zeros", "randn", "ones int8", "empty", "expand"],
)
def test_allocations_larger_than_the_device_are_refused(make: Callable[[], Any]) -> None:
    with pytest.raises(MemoryError, match=r"Unable to allocate [\d,.]+ GiB .* device 'mlx'"):
        make()


def test_allocations_that_fit_are_made() -> None:
    assert lucid.zeros(1000, 1000, device="mlx").sum().item() == 0.0
