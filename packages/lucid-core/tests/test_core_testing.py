"""lucid.testing: assert_close's checks, tolerances and messages (torch's, compared in the
parity env) and make_tensor's ranges, dtypes and flags."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lucid
from lucid.testing import assert_close, make_tensor


def _cases(lib: Any) -> list[tuple[Any, Any, dict[str, Any]]]:
    t = lib.tensor
    nan = float("nan")
    return [
        (t([1.0, 2.0, 3.0]), t([1.0, 2.5, 3.0]), {}),
        (t([1.0, 2.0, 3.0]), t([1, 2, 3]), {}),
        (t([1.0, 2.0, 3.0]), t([1.0, 2.0]), {}),
        (1.0, 1.1, {}),
        (1, 1.0, {}),
        (t([[1, 2], [3, 4]]), t([[1, 2], [3, 5]]), {}),
        ({"a": lib.ones(2)}, {"a": lib.zeros(2)}, {}),
        ([lib.ones(2)], [lib.ones(2), lib.ones(1)], {}),
        ([1, (t([1.0, 2.0]),)], [1, (t([1.0, 3.0]),)], {}),
        (t(1.0), t(1.5), {}),
        (t([1.0, nan]), t([1.0, nan]), {}),
        (t([1.0, nan]), t([1.0, nan]), {"equal_nan": True}),
        (t([True, False]), t([True, True]), {}),
        (t([1.0, 2.0]), t([1.0, 2.0 + 1e-6]), {}),
        (t([1.0, 2.0], dtype=lib.float64), t([1.0, 2.0 + 1e-6], dtype=lib.float64), {}),
        (t([1.0, 2.0]), t([1, 2]), {"check_dtype": False}),
        (t([1.0, 2.0]), t([1.0, 2.1]), {"rtol": 0.0, "atol": 0.2}),
        (t([1.0, 2.0]), t([1.0, 3.0]), {"msg": "custom"}),
        (np.ones(2), np.ones(2) * 1.1, {}),
    ]


def _outcome(lib: Any, a: Any, b: Any, kw: dict[str, Any]) -> str:
    compare = lib.testing.assert_close  # under test: its default tolerances, so none named
    try:
        compare(a, b, **kw)
    except (AssertionError, TypeError, ValueError) as e:
        return f"{type(e).__name__}: {e}".replace("torch.", "lucid.")
    return "ok"


def test_messages_and_outcomes() -> None:
    got = [_outcome(lucid, a, b, kw) for a, b, kw in _cases(lucid)]
    assert got[0] == (
        "AssertionError: Tensor-likes are not close!\n\nMismatched elements: 1 / 3 (33.3%)\n"
        "Greatest absolute difference: 0.5 at index (1,) (up to 1e-05 allowed)\n"
        "Greatest relative difference: 0.20000000298023224 at index (1,) (up to 1.3e-06 allowed)"
    )
    assert got[1] == (
        "AssertionError: The values for attribute 'dtype' do not match: "
        "lucid.float32 != lucid.int64."
    )
    assert got[6].endswith("The failure occurred for item ['a']")
    assert got[8].endswith("The failure occurred for item [1][0]")
    assert got[10].startswith("AssertionError") and got[11] == "ok"
    assert got[13] == "ok" and got[14].startswith("AssertionError")  # float32's vs float64's
    assert got[15] == "ok" and got[16] == "ok" and got[17] == "AssertionError: custom"
    with pytest.raises(ValueError, match="Both 'rtol' and 'atol' must be either specified"):
        compare = assert_close  # an rtol without an atol is the case under test
        compare(lucid.ones(1), lucid.ones(1), rtol=1e-3)


@pytest.mark.parity
def test_messages_match_torch() -> None:
    torch = pytest.importorskip("torch")
    ours = [_outcome(lucid, a, b, kw) for a, b, kw in _cases(lucid)]
    theirs = [_outcome(torch, a, b, kw) for a, b, kw in _cases(torch)]
    assert ours == theirs


def test_make_tensor_ranges_dtypes_and_flags() -> None:
    lucid.manual_seed(0)
    f = make_tensor(200, dtype=lucid.float32, device="cpu")
    assert f.dtype == lucid.float32 and tuple(f.shape) == (200,)
    assert -9 <= float(f.min()) and float(f.max()) < 9
    i = make_tensor((50, 4), dtype=lucid.int64, device="cpu", low=-2, high=3)
    assert tuple(i.shape) == (50, 4) and int(i.min()) >= -2 and int(i.max()) <= 2
    u = make_tensor(100, dtype=lucid.uint8, device="cpu")
    assert int(u.min()) >= 0 and int(u.max()) <= 9
    b = make_tensor(100, dtype=lucid.bool, device="cpu")
    assert b.dtype == lucid.bool
    z = make_tensor(3, 4, dtype=lucid.float64, device="cpu", low=0, high=1, exclude_zero=True,
                    noncontiguous=True, requires_grad=True)  # fmt: skip
    assert z.requires_grad and not z.is_contiguous() and float(z.min()) > 0
    with pytest.raises(ValueError, match="requires_grad must be False for integral dtype"):
        make_tensor(2, dtype=lucid.int32, device="cpu", requires_grad=True)
    with pytest.raises(ValueError, match="`low` must be less than or equal to `high`"):
        make_tensor(2, dtype=lucid.float32, device="cpu", low=2, high=1)
