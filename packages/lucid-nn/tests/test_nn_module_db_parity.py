"""torch's own ModuleInfo samples (``common_modules.module_db``) through lucid's modules.

For each listed module and each of torch's samples (training and eval): build both modules
from the same constructor arguments, copy torch's state into lucid's (the state_dict keys must
be the same), run the same inputs, compare outputs (values and dtypes), then backpropagate the
same output gradients and compare the input and parameter gradients.
"""

from __future__ import annotations

import sys
import types
from typing import Any

import numpy as np
import pytest

import lucid
import lucid.nn as nn

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity

if "expecttest" not in sys.modules:  # common_modules imports it; only its TestCase name
    try:
        import expecttest  # noqa: F401
    except ImportError:
        _stub = types.ModuleType("expecttest")
        _stub.TestCase = type("TestCase", (), {})  # type: ignore[attr-defined]
        sys.modules["expecttest"] = _stub

common_modules = pytest.importorskip("torch.testing._internal.common_modules")

# the modules this suite holds to every torch sample (grows as modules land)
MODULES = [
    "AdaptiveMaxPool3d",
    "BatchNorm1d",
    "BatchNorm2d",
    "BatchNorm3d",
    "CTCLoss",
    "CircularPad1d",
    "CircularPad2d",
    "CircularPad3d",
    "ConstantPad1d",
    "ConstantPad2d",
    "ConstantPad3d",
    "CrossEntropyLoss",
    "FractionalMaxPool2d",
    "FractionalMaxPool3d",
    "GroupNorm",
    "InstanceNorm1d",
    "InstanceNorm2d",
    "InstanceNorm3d",
    "KLDivLoss",
    "LPPool1d",
    "LPPool2d",
    "LPPool3d",
    "LazyConv1d",
    "LazyConv2d",
    "LazyConv3d",
    "LazyConvTranspose1d",
    "LazyConvTranspose2d",
    "LazyConvTranspose3d",
    "LinearCrossEntropyLoss",
    "MultiLabelMarginLoss",
    "MultiMarginLoss",
    "RMSNorm",
    "ReflectionPad1d",
    "ReflectionPad2d",
    "ReflectionPad3d",
    "ReplicationPad1d",
    "ReplicationPad2d",
    "ReplicationPad3d",
    "TransformerDecoderLayer",
    "TransformerEncoder",
    "TransformerEncoderLayer",
    "ZeroPad1d",
    "ZeroPad2d",
    "ZeroPad3d",
]
_DB = {m.module_cls.__name__: m for m in common_modules.module_db}
# modules with hundreds of near-identical samples: every n-th one keeps the suite's time small
_STRIDE = {
    "CrossEntropyLoss": 3,
    "LinearCrossEntropyLoss": 20,
    "TransformerDecoderLayer": 10,
    "TransformerEncoder": 6,
    "TransformerEncoderLayer": 6,
}
TOL = 1e-4


def _lucid(x: Any) -> Any:
    if isinstance(x, torch.Tensor):
        grad = x.requires_grad and x.dtype.is_floating_point
        return lucid.tensor(x.detach().numpy().copy(), requires_grad=grad)
    if isinstance(x, (list, tuple)):
        return type(x)(_lucid(v) for v in x)
    if isinstance(x, dict):
        return {k: _lucid(v) for k, v in x.items()}
    if isinstance(x, torch.dtype):
        return getattr(lucid, str(x).rsplit(".", 1)[-1])
    if isinstance(x, torch.nn.TransformerEncoderLayer):  # TransformerEncoder's argument
        return nn.TransformerEncoderLayer(
            x.self_attn.embed_dim, x.self_attn.num_heads, x.linear1.out_features, x.dropout.p,
            _lucid(x.activation), x.norm1.eps, x.self_attn.batch_first, x.norm_first,
            x.linear1.bias is not None,
        )  # fmt: skip
    if isinstance(x, torch.nn.Module):
        return getattr(nn, type(x).__name__)()
    if callable(x) and getattr(torch.nn.functional, getattr(x, "__name__", ""), None) is x:
        return getattr(lucid.nn.functional, x.__name__)  # an activation= argument
    return x


def _detached(x: Any) -> Any:
    if isinstance(x, (torch.Tensor, lucid.Tensor)):
        return x.detach()
    if isinstance(x, (list, tuple)):
        return type(x)(_detached(v) for v in x)
    return x


def _leaves(out: Any) -> list[Any]:
    if isinstance(out, (list, tuple)):
        return [v for o in out for v in _leaves(o)]
    return [out]


def _close(a: Any, b: Any, what: str, tol: float = TOL) -> None:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    assert a.shape == b.shape, f"{what}: shape {a.shape}, torch {b.shape}"
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol, err_msg=what, equal_nan=True)


def _samples(info: Any) -> list[tuple[bool, Any]]:
    out = []
    for training in (True, False):
        samples = info.module_inputs_func(
            info, device="cpu", dtype=torch.float32, requires_grad=True, training=training
        )
        out += [(training, s) for s in samples[:: _STRIDE.get(info.module_cls.__name__, 1)]]
    return out


def _check_sample(info: Any, training: bool, sample: Any) -> None:
    name = info.module_cls.__name__
    ca, ck = sample.constructor_input.args, sample.constructor_input.kwargs
    fa, fk = sample.forward_input.args, sample.forward_input.kwargs
    torch.manual_seed(0)
    tmod = info.module_cls(*ca, **ck).to(torch.float32).train(training)
    lmod = getattr(nn, name)(*_lucid(ca), **_lucid(ck)).to(lucid.float32).train(training)
    if isinstance(tmod, torch.nn.modules.lazy.LazyModuleMixin):
        assert tmod.has_uninitialized_params() == lmod.has_uninitialized_params()
        with torch.no_grad():  # materialise both on the sample's shapes
            tmod(*_detached(fa), **_detached(fk))
        with lucid.no_grad():
            lmod(*_detached(_lucid(fa)), **_detached(_lucid(fk)))
    state = tmod.state_dict()
    assert sorted(lmod.state_dict()) == sorted(state), "state_dict keys"
    lmod.load_state_dict({k: lucid.tensor(v.detach().numpy().copy()) for k, v in state.items()})
    tin = [x.detach().clone().requires_grad_(x.requires_grad) if isinstance(x, torch.Tensor)
           else x for x in fa]  # fmt: skip
    lin = _lucid(tin)
    tout, lout = _leaves(tmod(*tin, **fk)), _leaves(lmod(*lin, **_lucid(fk)))
    assert len(lout) == len(tout), "number of outputs"
    for i, (lo, to) in enumerate(zip(lout, tout)):
        if isinstance(to, torch.Tensor):
            assert str(lo.dtype).rsplit(".", 1)[-1] == str(to.dtype).rsplit(".", 1)[-1]
            _close(lo.detach().numpy(), to.detach().numpy(), f"{name} output {i}")
    diff = [(lo, to) for lo, to in zip(lout, tout)
            if isinstance(to, torch.Tensor) and to.requires_grad]  # fmt: skip
    if not diff:
        return
    rng = np.random.default_rng(0)
    grads = [rng.standard_normal(tuple(to.shape)).astype(np.float32) for _, to in diff]
    torch.autograd.backward([to for _, to in diff], [torch.tensor(g) for g in grads])
    lucid.autograd.backward([lo for lo, _ in diff], [lucid.tensor(g) for g in grads])
    for i, (lx, tx) in enumerate(zip(lin, tin)):
        if isinstance(tx, torch.Tensor) and tx.grad is not None:
            _close(lx.grad.numpy(), tx.grad.numpy(), f"{name} grad of input {i}", 10 * TOL)
    tparams = dict(tmod.named_parameters())
    for key, p in lmod.named_parameters():
        if tparams[key].grad is not None:
            _close(p.grad.numpy(), tparams[key].grad.numpy(), f"{name} grad of {key}", 10 * TOL)


@pytest.mark.parametrize("name", MODULES)
def test_module_db_samples(name: str) -> None:
    info = _DB[name]
    failures = []
    for training, sample in _samples(info):
        try:
            _check_sample(info, training, sample)
        except Exception as e:  # collect every failing sample, then report them together
            failures.append(f"[training={training} {sample.desc}] {type(e).__name__}: {e}")
    assert not failures, "\n".join(failures)
