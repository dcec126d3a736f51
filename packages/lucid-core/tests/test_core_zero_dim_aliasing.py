"""Views of a 0-dim result alias it as torch's do: for each view-making call that takes a 0-dim
tensor, a write through the view reaches the tensor exactly where it reaches torch's (the
class of bug the tutorial two_layer_net_module.py found: NumPy hands a 0-dim result over as
an immutable scalar, and lucid's views of it were copies)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lucid

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.parity


def _fw(t: Any) -> Any:
    return lucid if isinstance(t, lucid.Tensor) else torch


# (name, make the view)
CALLS: list[tuple[str, Callable[[Any], Any]]] = [
    ("data", lambda t: t.data),
    ("detach", lambda t: t.detach()),
    ("view_1", lambda t: t.view(1)),
    ("view_0d", lambda t: t.view(())),
    ("view_as", lambda t: t.view_as(t)),
    ("reshape_1_1", lambda t: t.reshape(1, 1)),
    ("reshape_0d", lambda t: t.reshape(())),
    ("unsqueeze_0", lambda t: t.unsqueeze(0)),
    ("unsqueeze_-1", lambda t: t.unsqueeze(-1)),
    ("squeeze", lambda t: t.squeeze()),
    ("flatten", lambda t: t.flatten()),
    ("getitem_none", lambda t: t[None]),
    ("getitem_ellipsis", lambda t: t[...]),
    ("getitem_none_none", lambda t: t[None, None]),
    ("permute_empty", lambda t: t.permute(())),
    ("t", lambda t: t.t()),
    ("expand_as_0d", lambda t: t.expand(())),
    ("atleast_1d", lambda t: _fw(t).atleast_1d(t)),
    ("atleast_2d", lambda t: _fw(t).atleast_2d(t)),
    ("movedim_none", lambda t: t.movedim((), ())),
    # not as_strided: lucid's is a copy on purpose (docs/differences.md)
]  # fmt: skip

SOURCES: dict[str, Callable[[Any], Any]] = {
    "sum": lambda fw: fw.ones(4, 3).sum(),
    "mean_of_graph": lambda fw: fw.ones(4, 3, requires_grad=True).mean(),
    "scalar_op": lambda fw: fw.tensor(2.0) * 3,
    "max": lambda fw: fw.arange(6.0).max(),
}


def _observe(fw: Any, source: str, call: Callable[[Any], Any]) -> tuple[str, float | None]:
    """What happens to the source's value after ``add_(5)`` through the view: ('ok', value),
    or ('error', None) when the call or the write raises."""
    t = SOURCES[source](fw)
    try:
        with fw.no_grad():
            v = call(t)
            v.add_(5)
    except (RuntimeError, IndexError, TypeError, ValueError):
        return "error", None
    return "ok", float(t.item())


@pytest.mark.parametrize("source", sorted(SOURCES))
@pytest.mark.parametrize(("name", "call"), CALLS, ids=[c[0] for c in CALLS])
def test_a_write_through_a_view_of_a_0_dim_result_reaches_it_as_torchs(
    source: str, name: str, call: Callable[[Any], Any]
) -> None:
    want = _observe(torch, source, call)
    got = _observe(lucid, source, call)
    if want[0] == "error":
        return  # torch refuses this call or write on a 0-dim tensor: nothing to alias
    assert got[0] == "ok", f"{name} of {source}: torch writes through, lucid raised"
    np.testing.assert_allclose(got[1], want[1], rtol=1e-6, atol=1e-6, err_msg=f"{name} of {source}")
