"""Graph hooks, the Node API and anomaly mode against PyTorch's, from the same inputs."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lucid
from lucid.autograd.graph import saved_tensors_hooks

pytestmark = pytest.mark.parity
torch = pytest.importorskip("torch")


def _pair(values: list[float]) -> tuple[lucid.Tensor, Any]:
    return (lucid.tensor(values, dtype=lucid.float64, requires_grad=True),
            torch.tensor(values, dtype=torch.float64, requires_grad=True))  # fmt: skip


def test_anomaly_message_matches_torch() -> None:
    x, tx = _pair([0.0, 1.0])
    with (
        pytest.warns(UserWarning, match="Error detected in SqrtBackward0"),
        lucid.autograd.detect_anomaly(),
        pytest.raises(RuntimeError) as mine,
    ):
        (x.sqrt() * 0.0).sum().backward()
    with (
        pytest.warns(UserWarning),
        torch.autograd.detect_anomaly(),
        pytest.raises(RuntimeError) as theirs,
    ):
        (tx.sqrt() * 0.0).sum().backward()
    assert str(mine.value).splitlines()[0] == str(theirs.value).splitlines()[0]


def test_saved_tensor_hooks_see_the_same_tensors_and_give_the_same_grads() -> None:
    x, tx = _pair([0.3, -0.7, 1.1])
    mine: list[np.ndarray] = []
    theirs: list[np.ndarray] = []

    def run(lib: Any, t: Any, seen: list[np.ndarray], hooks: Any) -> Any:
        def pack(s: Any) -> Any:
            seen.append(np.sort(s.detach().numpy().ravel()))
            return s

        with hooks(pack, lambda s: s):
            y = (lib.exp(t) * t).sum()
        return y

    (g,) = lucid.autograd.grad(run(lucid, x, mine, saved_tensors_hooks), x)
    (tg,) = torch.autograd.grad(
        run(torch, tx, theirs, torch.autograd.graph.saved_tensors_hooks), tx
    )
    np.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=1e-12, atol=0)
    assert len(mine) == len(theirs)
    for a in mine:
        assert any(np.allclose(a, b, rtol=1e-12, atol=1e-12) for b in theirs)


def test_node_hooks_and_post_accumulate_hooks_match_torch() -> None:
    x, tx = _pair([1.0, 2.0, 3.0])
    log: dict[str, list[np.ndarray]] = {"lucid": [], "torch": []}

    for name, t in (("lucid", x), ("torch", tx)):
        y = t * 3.0
        y.grad_fn.register_prehook(lambda go: (go[0] * 2.0,))
        y.grad_fn.register_hook(lambda gi, go, n=name: log[n].append(gi[0].detach().numpy().copy()))
        t.register_post_accumulate_grad_hook(
            lambda p, n=name: log[n].append(p.grad.detach().numpy().copy())
        )
        (y * y).sum().backward()
        (t * 1.0).sum().backward()
        assert y.grad_fn.name() == "MulBackward0"
        assert y.grad_fn.next_functions[0][0].variable is t
    assert len(log["lucid"]) == len(log["torch"]) == 3
    for a, b in zip(log["lucid"], log["torch"]):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=0)


def test_saved_accessor_names_match_torch() -> None:
    x, tx = _pair([0.5, -1.0, 2.0])
    w, tw = _pair([1.0, 3.0, -2.0])
    for mine, theirs, names in (
        (x * w, tx * tw, ("_saved_self", "_saved_other")),
        (x / w, tx / tw, ("_saved_self", "_saved_other")),
        (x.exp(), tx.exp(), ("_saved_result",)),
        (x.cos(), tx.cos(), ("_saved_self",)),
        (x.pow(3), tx.pow(3), ("_saved_self", "_saved_exponent")),
    ):
        for name in names:
            got, want = getattr(mine.grad_fn, name), getattr(theirs.grad_fn, name)
            if isinstance(want, torch.Tensor):
                np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(),
                                           rtol=1e-12, atol=0)  # fmt: skip
            else:
                assert got == want


@pytest.mark.parametrize(
    "index",
    ["[0]", "[0][1]", "[0, 1]", "[:, 1]", "[1:3]", "[0, 1:3]", "[:]", "[...]", "[None]",
     "[None, 0]", "[..., 0]", "[0, ...]", "[:, :, None]", "[0:4]", "[::2]", "[-1]", "[1:]",
     "[0, :]", "[:, 0:5]", "[1:3, :]", "[:, :]", "[..., :]", "[:, None]", "[IDX]", "[0, IDX]",
     "[MASK]", "[1:3][0]"],
)  # fmt: skip
def test_an_index_names_its_node_as_torch(index: str) -> None:
    """``x[...]``'s ``grad_fn`` is torch's node: the last view its basic index makes
    (``SelectBackward0``, ``SliceBackward0``, ``UnsqueezeBackward0``; ``AliasBackward0`` where
    none is made), ``IndexBackward0`` for an advanced one."""
    rng = np.random.default_rng(0)
    values = rng.standard_normal((4, 5))
    x = lucid.tensor(values, requires_grad=True)
    t = torch.tensor(values, requires_grad=True)
    names = {"x": x, "IDX": lucid.tensor([0, 2]), "MASK": x > 0}
    mine = eval("x" + index, names)  # noqa: S307
    theirs = eval("x" + index, {"x": t, "IDX": torch.tensor([0, 2]), "MASK": t > 0})  # noqa: S307
    assert mine.grad_fn.name() == theirs.grad_fn.name()
    np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(), rtol=0, atol=0)
