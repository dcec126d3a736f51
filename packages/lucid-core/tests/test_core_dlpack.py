"""DLPack: lucid tensors and NumPy arrays (and torch tensors, in the parity env) share memory
both ways, zero-copy: a write through one is seen by the other."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
from lucid.utils.dlpack import from_dlpack, to_dlpack

# NumPy 1.x imports a DLPack capsule read-only: there the memory is shared, but only the side
# that exported it can write (NumPy 2 imports writable arrays).
NUMPY2 = np.lib.NumpyVersion(np.__version__) >= "2.0.0"


def test_numpy_to_lucid_shares_memory() -> None:
    a = np.arange(6, dtype=np.float64).reshape(2, 3)
    t = lucid.from_dlpack(a)
    assert t.dtype is lucid.float64 and t.shape == (2, 3) and t.device.type == "cpu"
    a[1, 2] = -1.0
    assert t[1, 2].item() == -1.0
    if NUMPY2:
        t.mul_(2)  # lucid's in-place ops write into the same memory
        np.testing.assert_array_equal(a, np.array([[0, 2, 4], [6, 8, -2]], dtype=np.float64))


def test_lucid_to_numpy_shares_memory_and_capsules_work() -> None:
    t = lucid.zeros(4, dtype=lucid.int32)
    a = np.from_dlpack(t)
    if NUMPY2:
        a[2] = 7
    else:
        assert not a.flags.writeable
        t[2] = 7  # the exporter writes; the read-only import sees it
    assert t.tolist() == [0, 0, 7, 0] and a.tolist() == [0, 0, 7, 0]
    assert t.__dlpack_device__() == (1, 0)
    back = from_dlpack(to_dlpack(t))  # through a bare capsule
    if NUMPY2:
        back[0] = 3
    else:
        t[0] = 3
    assert t.tolist() == [3, 0, 7, 0] and back.tolist() == [3, 0, 7, 0]


def test_errors_say_what_is_wrong() -> None:
    with pytest.raises(RuntimeError, match="require gradient"):
        lucid.ones(2, requires_grad=True).__dlpack__()
    with pytest.raises(TypeError, match="no tensors of dtype uint16"):
        lucid.from_dlpack(np.zeros(2, dtype=np.uint16))


@pytest.mark.parity
def test_torch_and_lucid_share_memory_both_ways() -> None:
    torch = pytest.importorskip("torch")
    tt = torch.arange(5, dtype=torch.float32)
    lt = lucid.from_dlpack(tt)
    tt[0] = 42.0
    assert lt[0].item() == 42.0
    lt.add_(1.0)
    assert tt.tolist() == [43.0, 2.0, 3.0, 4.0, 5.0]
    ours = lucid.arange(3).to(lucid.int64)
    theirs = torch.from_dlpack(ours)
    theirs[1] = -5
    assert ours.tolist() == [0, -5, 2] and theirs.dtype == torch.int64
    via_capsule = torch.utils.dlpack.from_dlpack(to_dlpack(ours))
    via_capsule[2] = 9
    assert ours.tolist() == [0, -5, 9]
