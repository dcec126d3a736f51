"""nn.utils.parametrize, parametrizations, legacy weight/spectral norm, prune, fusion and
stateless: behaviour, float64 finite-difference gradients and errors (torch parity is in
test_nn_parametrize_parity.py)."""

from __future__ import annotations

import copy
import pickle
import warnings

import numpy as np
import pytest

import lucid
import lucid.nn as nn
import lucid.nn.utils.parametrize as P
from lucid.autograd import gradcheck
from lucid.nn.utils import parametrizations, prune
from lucid.nn.utils.stateless import _functional_call


class Symmetric(nn.Module):
    def forward(self, X: lucid.Tensor) -> lucid.Tensor:
        return X.triu() + X.triu(1).mT

    def right_inverse(self, A: lucid.Tensor) -> lucid.Tensor:
        return A.triu()


class Scale(nn.Module):
    def forward(self, X: lucid.Tensor) -> lucid.Tensor:
        return 2.0 * X

    def right_inverse(self, X: lucid.Tensor) -> lucid.Tensor:
        return X / 2.0


def _close(a: lucid.Tensor, b: lucid.Tensor, tol: float = 1e-6) -> None:
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


def test_register_swaps_class_and_moves_the_tensor() -> None:
    lucid.manual_seed(0)
    m = nn.Linear(3, 3)
    w = m.weight
    P.register_parametrization(m, "weight", Symmetric())
    assert type(m).__name__ == "ParametrizedLinear"
    assert P.type_before_parametrizations(m) is nn.Linear
    assert isinstance(m, nn.Linear) and P.is_parametrized(m) and P.is_parametrized(m, "weight")
    assert not P.is_parametrized(m, "bias")
    assert m.parametrizations.weight.original is w  # right_inverse wrote into it in place
    _close(m.weight, m.weight.mT)
    assert list(m.state_dict()) == ["bias", "parametrizations.weight.original"]
    assert [n for n, _ in m.named_parameters()] == ["bias", "parametrizations.weight.original"]


def test_chained_parametrizations_and_assignment_run_right_inverse() -> None:
    lucid.manual_seed(0)
    m = nn.Linear(3, 3)
    P.register_parametrization(m, "weight", Symmetric())
    P.register_parametrization(m, "weight", Scale())
    target = lucid.randn(3, 3)
    target = target + target.mT
    m.weight = target
    _close(m.weight, target)
    _close(m.parametrizations.weight.original, (target / 2).triu())


def test_remove_leave_parametrized_true_and_false() -> None:
    lucid.manual_seed(0)
    m = nn.Linear(3, 3)
    P.register_parametrization(m, "weight", Scale())
    original = m.parametrizations.weight.original
    value = m.weight.detach().clone()
    P.remove_parametrizations(m, "weight")
    assert type(m) is nn.Linear and not hasattr(m, "parametrizations")
    assert m.weight is original and isinstance(m.weight, nn.Parameter)
    _close(m.weight, value)
    P.register_parametrization(m, "weight", Scale())
    raw = m.parametrizations.weight.original.detach().clone()
    P.remove_parametrizations(m, "weight", leave_parametrized=False)
    _close(m.weight, raw)


def test_cached_computes_once() -> None:
    calls = []

    class Counting(nn.Module):
        def forward(self, X: lucid.Tensor) -> lucid.Tensor:
            calls.append(1)
            return X * 1.0

    m = P.register_parametrization(nn.Linear(2, 2), "weight", Counting())
    calls.clear()
    with P.cached():
        a, b = m.weight, m.weight
    assert a is b and len(calls) == 1
    m.weight  # noqa: B018  outside the block: computed again
    assert len(calls) == 2


@pytest.mark.parametrize(
    ("module", "shape"),
    [
        (nn.Linear(3, 2), (1, 3)),
        (nn.Conv1d(2, 2, 1), (1, 2, 3)),
        (nn.ConvTranspose2d(2, 2, 1), (1, 2, 2, 2)),
        (nn.Bilinear(2, 2, 1), None),
    ],
)
def test_layers_read_a_parametrized_weight_once_per_call(
    module: nn.Module, shape: tuple[int, ...] | None
) -> None:
    """Each read runs the parametrization (spectral norm's power iteration in training), so
    a forward must read it once, as torch's layers do."""
    calls = []

    class Counting(nn.Module):
        def forward(self, X: lucid.Tensor) -> lucid.Tensor:
            calls.append(1)
            return X * 1.0

    P.register_parametrization(module, "weight", Counting())
    calls.clear()
    if shape is None:
        module(lucid.ones(1, 2), lucid.ones(1, 2))
    else:
        module(lucid.ones(*shape))
    assert len(calls) == 1


def test_parametrized_module_deepcopies_but_does_not_pickle() -> None:
    m = parametrizations.weight_norm(nn.Linear(3, 2))
    twin = copy.deepcopy(m)
    _close(twin.weight, m.weight)
    assert twin.parametrizations.weight.original1 is not m.parametrizations.weight.original1
    with pytest.raises(RuntimeError, match="only supported through state_dict"):
        pickle.dumps(m)


def test_register_errors() -> None:
    m = nn.Linear(3, 2)
    with pytest.raises(ValueError, match="does not have a parameter, a buffer"):
        P.register_parametrization(m, "nope", Scale())

    class Shrink(nn.Module):
        def forward(self, X: lucid.Tensor) -> lucid.Tensor:
            return X[:1]

    with pytest.raises(ValueError, match="may not change the shape"):
        P.register_parametrization(m, "weight", Shrink())
    assert type(m) is nn.Linear and "weight" in m._parameters  # nothing half-done
    with pytest.raises(ValueError, match="does not have a parametrization on weight"):
        P.remove_parametrizations(m, "weight")
    parametrizations.weight_norm(m)
    with pytest.raises(ValueError, match="Cannot leave unparametrized"):
        P.remove_parametrizations(m, "weight", leave_parametrized=False)


def test_weight_norm_gradcheck_float64() -> None:
    lucid.manual_seed(0)
    m = parametrizations.weight_norm(nn.Linear(4, 3).double(), dim=0)
    x = lucid.randn(2, 4, dtype=lucid.float64)
    g = m.parametrizations.weight.original0.detach().clone().requires_grad_()
    v = m.parametrizations.weight.original1.detach().clone().requires_grad_()

    def fn(g: lucid.Tensor, v: lucid.Tensor) -> lucid.Tensor:
        names = {"parametrizations.weight.original0": g, "parametrizations.weight.original1": v}
        out: lucid.Tensor = _functional_call(m, names, (x,))
        return out

    assert gradcheck(fn, (g, v), eps=1e-6, atol=1e-6, rtol=1e-4)


@pytest.mark.parametrize("module", [nn.Linear(4, 3), nn.Conv2d(2, 3, 2)])
def test_spectral_norm_gradcheck_float64_in_eval(module: nn.Module) -> None:
    lucid.manual_seed(0)
    m = parametrizations.spectral_norm(module.double()).eval()
    w = m.parametrizations.weight.original.detach().clone().requires_grad_()

    def fn(w: lucid.Tensor) -> lucid.Tensor:
        out: lucid.Tensor = _functional_call(m, {"parametrizations.weight.original": w}, ())
        return out

    m.forward = lambda: m.weight  # the weight itself, through the parametrization
    assert gradcheck(fn, (w,), eps=1e-6, atol=1e-6, rtol=1e-4)


def test_spectral_norm_divides_by_the_largest_singular_value() -> None:
    lucid.manual_seed(0)
    m = parametrizations.spectral_norm(nn.Linear(6, 5).double(), n_power_iterations=30)
    sigma = np.linalg.svd(m.weight.detach().numpy(), compute_uv=False)[0]
    assert abs(sigma - 1.0) < 1e-6
    u = m.parametrizations.weight[0]._u.detach().clone()
    m.eval()
    m.weight  # noqa: B018  eval: no power iteration
    _close(m.parametrizations.weight[0]._u, u, 0.0)


@pytest.mark.parametrize("orthogonal_map", ["matrix_exp", "cayley", "householder"])
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5)])
def test_orthogonal_weight_is_orthogonal_and_trains(
    orthogonal_map: str, shape: tuple[int, int]
) -> None:
    lucid.manual_seed(0)
    m = parametrizations.orthogonal(nn.Linear(shape[1], shape[0]), orthogonal_map=orthogonal_map)
    w = m.weight.double()
    gram = w.mT @ w if shape[0] >= shape[1] else w @ w.mT
    _close(gram, lucid.eye(min(shape), dtype=lucid.float64), 1e-5)
    m.weight.sum().backward()
    assert m.parametrizations.weight.original.grad is not None


def test_orthogonal_errors() -> None:
    with pytest.raises(ValueError, match="Expected a matrix"):
        parametrizations.orthogonal(nn.Linear(3, 3), "bias")
    with pytest.raises(ValueError, match='orthogonal_map has to be one of "matrix_exp"'):
        parametrizations.orthogonal(nn.Linear(3, 3), orthogonal_map="qr")
    complex_layer = nn.Linear(2, 2)
    complex_layer.weight = nn.Parameter(lucid.zeros(2, 2, dtype=lucid.complex64))
    with pytest.raises(NotImplementedError, match="complex weight"):
        parametrizations.orthogonal(complex_layer)
    m = parametrizations.orthogonal(nn.Linear(3, 3), "weight", "cayley", use_trivialization=False)
    with pytest.raises(NotImplementedError, match="use_trivialization=False"):
        m.weight = lucid.eye(3)


def test_legacy_weight_norm_keys_forward_and_remove() -> None:
    lucid.manual_seed(0)
    m = nn.Linear(4, 3)
    w = m.weight.detach().clone()
    with pytest.warns(FutureWarning, match="parametrizations.weight_norm"):
        nn.utils.weight_norm(m)
    assert sorted(m.state_dict()) == ["bias", "weight_g", "weight_v"]
    _close(m.weight, w)
    with pytest.raises(RuntimeError, match="Cannot register two weight_norm hooks"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            nn.utils.weight_norm(m)
    nn.utils.remove_weight_norm(m)
    assert sorted(m.state_dict()) == ["bias", "weight"]
    with pytest.raises(ValueError, match="weight_norm of 'weight' not found"):
        nn.utils.remove_weight_norm(m)


def test_old_weight_norm_checkpoint_loads_into_the_parametrization() -> None:
    lucid.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        old = nn.utils.weight_norm(nn.Linear(4, 3))
    new = parametrizations.weight_norm(nn.Linear(4, 3))
    new.load_state_dict(old.state_dict())
    x = lucid.randn(2, 4)
    _close(new(x), old(x))


def test_legacy_spectral_norm_keys_and_errors() -> None:
    m = nn.utils.spectral_norm(nn.Linear(4, 3))
    assert sorted(m.state_dict()) == ["bias", "weight_orig", "weight_u", "weight_v"]
    with pytest.raises(RuntimeError, match="Cannot register two spectral_norm hooks"):
        nn.utils.spectral_norm(m)
    with pytest.raises(ValueError, match="n_power_iterations to be positive"):
        nn.utils.spectral_norm(nn.Linear(2, 2), n_power_iterations=0)
    nn.utils.remove_spectral_norm(m)
    assert sorted(m.state_dict()) == ["bias", "weight"]
    assert not m._load_state_dict_pre_hooks


def test_prune_keys_hook_and_remove() -> None:
    m = nn.Linear(4, 3)
    with lucid.no_grad():
        m.weight.copy_(lucid.arange(12.0).reshape(3, 4) - 5.5)
    prune.l1_unstructured(m, "weight", amount=0.25)
    assert sorted(m.state_dict()) == ["bias", "weight_mask", "weight_orig"]
    assert prune.is_pruned(m)
    mask = m.weight_mask.numpy()
    assert mask.sum() == 9 and (mask.reshape(-1)[4:7] == 0).all()  # |-1.5|, |-0.5|, |0.5|
    prune.ln_structured(m, "weight", amount=1, n=1, dim=0)  # combined in a container
    assert isinstance(next(iter(m._forward_pre_hooks.values())), prune.PruningContainer)
    assert m.weight_mask.numpy()[1].sum() == 0  # the row of smallest L1 norm went
    out = m(lucid.ones(1, 4))
    out.sum().backward()
    np.testing.assert_array_equal(m.weight_orig.grad.numpy(), m.weight_mask.numpy())
    prune.remove(m, "weight")
    assert sorted(m.state_dict()) == ["bias", "weight"] and not prune.is_pruned(m)


def test_prune_errors() -> None:
    with pytest.raises(ValueError, match="should either be a float in the range"):
        prune.l1_unstructured(nn.Linear(2, 2), "weight", amount=1.5)
    with pytest.raises(TypeError, match="Invalid type for amount"):
        prune.l1_unstructured(nn.Linear(2, 2), "weight", amount="half")  # type: ignore[arg-type]
    m = nn.Linear(2, 2)
    with pytest.raises(ValueError, match="should be smaller than the number of parameters"):
        prune.l1_unstructured(m, "weight", amount=5)
    assert sorted(m.state_dict()) == ["bias", "weight"]  # rolled back
    with pytest.raises(ValueError, match="Structured pruning can only be applied"):
        prune.ln_structured(m, "bias", amount=1, n=2, dim=0)
    with pytest.raises(ValueError, match="has to be pruned before pruning can be removed"):
        prune.remove(m, "weight")
    with pytest.raises(TypeError, match='Only "unstructured" PRUNING_TYPE'):
        prune.global_unstructured([(m, "weight")], prune.LnStructured, amount=1, n=2, dim=0)


def test_fusion_requires_eval() -> None:
    with pytest.raises(AssertionError, match="Fusion only for eval!"):
        nn.utils.fuse_conv_bn_eval(nn.Conv2d(1, 2, 1), nn.BatchNorm2d(2))


def test_functional_call_swaps_and_restores() -> None:
    lucid.manual_seed(0)
    m = nn.Linear(2, 1)
    w = m.weight
    with pytest.warns(FutureWarning, match="lucid.func.functional_call"):
        out = nn.utils.stateless.functional_call(
            m, {"weight": lucid.ones(1, 2), "bias": lucid.zeros(1)}, lucid.tensor([[1.0, 2.0]])
        )
    _close(out, lucid.tensor([[3.0]]))
    assert m.weight is w
    with pytest.raises(RuntimeError, match="Unexpected key\\(s\\): 'nope'"):
        _functional_call(m, {"nope": lucid.ones(1)}, (lucid.ones(1, 2),), strict=True)
    with pytest.raises(RuntimeError, match="Missing key\\(s\\): 'bias'"):
        _functional_call(m, {"weight": lucid.ones(1, 2)}, (lucid.ones(1, 2),), strict=True)


def test_functional_call_ties_weights() -> None:
    class Tied(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.a = nn.Linear(2, 2, bias=False)
            self.b = nn.Linear(2, 2, bias=False)
            self.b.weight = self.a.weight

        def forward(self, x: lucid.Tensor) -> lucid.Tensor:
            out: lucid.Tensor = self.b(self.a(x))
            return out

    m = Tied()
    x = lucid.ones(1, 2)
    two = 2 * lucid.eye(2)
    _close(_functional_call(m, {"a.weight": two}, (x,)), 4 * x)
    _close(_functional_call(m, {"a.weight": two}, (x,), tie_weights=False), 2 * x @ m.b.weight.mT)
    with pytest.raises(ValueError, match="which are tied"):
        _functional_call(m, {"a.weight": two, "b.weight": lucid.eye(2)}, (x,))


def test_transfer_parametrizations_and_params() -> None:
    lucid.manual_seed(0)
    src = parametrizations.weight_norm(nn.Linear(3, 2))
    dst = nn.Linear(3, 2)
    P.transfer_parametrizations_and_params(src, dst)
    assert type(dst).__name__ == "ParametrizedLinear"
    assert dst.parametrizations.weight.original0 is src.parametrizations.weight.original0
    _close(dst.weight, src.weight)


def _on(device: str) -> dict[str, np.ndarray]:
    """Weights of a small parametrized/pruned net built from fixed values on ``device``."""
    rng = np.random.default_rng(0)
    out = {}
    for name, make in (
        ("weight_norm", lambda m: parametrizations.weight_norm(m)),
        ("spectral", lambda m: parametrizations.spectral_norm(m)),
        ("householder", lambda m: parametrizations.orthogonal(m, orthogonal_map="householder")),
        ("cayley", lambda m: parametrizations.orthogonal(m, orthogonal_map="cayley")),
        ("pruned", lambda m: prune.ln_structured(m, "weight", amount=1, n=2, dim=0)),
    ):
        m = nn.Linear(3, 5)
        m.load_state_dict(
            {"weight": rng.standard_normal((5, 3)).astype(np.float32), "bias": np.zeros(5)}
        )
        m = make(m.to(device))
        if name == "spectral":  # same start for the power iteration on both devices
            m.parametrizations.weight[0]._u.copy_(lucid.ones(5).to(device) / 5**0.5)
            m.parametrizations.weight[0]._v.copy_(lucid.ones(3).to(device) / 3**0.5)
        x = lucid.tensor(rng.standard_normal((2, 3)).astype(np.float32)).to(device)
        out[name] = m(x).detach().numpy()
    return out


def test_mlx_matches_numpy() -> None:
    pytest.importorskip("mlx.core")
    mlx, cpu = _on("mlx"), _on("cpu")
    for name in ("weight_norm", "spectral", "pruned", "cayley"):
        np.testing.assert_allclose(mlx[name], cpu[name], rtol=1e-4, atol=1e-5, err_msg=name)
    # householder: base is completed with random columns (different generators per device)
    assert mlx["householder"].shape == cpu["householder"].shape


def test_skip_init_builds_on_the_device_and_checks_the_class() -> None:
    m = nn.utils.skip_init(nn.Linear, 3, 2)
    assert isinstance(m, nn.Linear) and m.weight.shape == (2, 3) and m.weight.device.type == "cpu"
    with pytest.raises(RuntimeError, match="Expected a Module"):
        nn.utils.skip_init(int, 3)  # type: ignore[type-var]
    with pytest.raises(RuntimeError, match="must support a 'device' arg"):
        nn.utils.skip_init(nn.ReLU)


def test_load_state_dict_pre_hooks_see_a_copy_with_their_prefix() -> None:
    seen = []

    def rename(module: nn.Module, state: dict, prefix: str, *rest: object) -> None:
        seen.append((type(module).__name__, prefix))
        state[prefix + "weight"] = state.pop(prefix + "w")

    net = nn.Sequential(nn.Linear(2, 2, bias=False))
    handle = net[0].register_load_state_dict_pre_hook(rename)
    twin = copy.deepcopy(net)
    given = {"0.w": lucid.ones(2, 2)}
    twin.load_state_dict(given)
    assert seen == [("Linear", "0.")] and list(given) == ["0.w"]  # the caller's dict is kept
    _close(twin[0].weight, lucid.ones(2, 2))
    handle.remove()
    with pytest.raises(RuntimeError, match='Unexpected key\\(s\\) in state_dict: "0.w"'):
        net.load_state_dict(given)
