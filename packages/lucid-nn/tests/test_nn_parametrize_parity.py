"""nn.utils parametrizations, legacy weight/spectral norm, prune, fusion and stateless against
torch.nn.utils: same weights give the same state_dict keys and values, outputs and gradients,
and state_dicts move both ways."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lucid
import lucid.nn as nn
import lucid.nn.utils as lucid_utils
from lucid.nn.utils import parametrizations, parametrize, prune
from lucid.nn.utils.stateless import _functional_call

pytestmark = pytest.mark.parity
torch = pytest.importorskip("torch")
tprune = pytest.importorskip("torch.nn.utils.prune")  # torch.nn.utils does not import it

RTOL, ATOL = 1e-5, 1e-6


def to_lucid(state: Any) -> dict[str, lucid.Tensor]:
    return {k: lucid.tensor(v.detach().numpy()) for k, v in state.items()}


def to_torch(state: Any) -> dict[str, Any]:
    return {k: torch.tensor(v.detach().numpy()) for k, v in state.items()}


def assert_same_state(ours: nn.Module, theirs: Any) -> None:
    mine, want = ours.state_dict(), theirs.state_dict()
    assert list(mine) == list(want)
    for k in want:
        np.testing.assert_allclose(
            mine[k].numpy(), want[k].numpy(), err_msg=k, rtol=RTOL, atol=ATOL
        )


def run_both(ours: nn.Module, theirs: Any, shape: tuple[int, ...], seed: int = 0) -> None:
    """Same input through both; outputs and every parameter's gradient agree."""
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    out_l, out_t = ours(lucid.tensor(x)), theirs(torch.tensor(x))
    np.testing.assert_allclose(out_l.detach().numpy(), out_t.detach().numpy(), rtol=RTOL, atol=ATOL)
    (out_l * out_l).sum().backward()
    (out_t * out_t).sum().backward()
    grads_t = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        np.testing.assert_allclose(
            p.grad.numpy(), grads_t[name].grad.numpy(), err_msg=name, rtol=1e-4, atol=1e-5
        )


def pair(make: Callable[[Any], Any], apply: Callable[[Any], Any], apply_t: Any) -> Any:
    """A torch module and the lucid one with its state_dict, each with its utility applied."""
    torch.manual_seed(0)
    theirs = apply_t(make(torch.nn))
    ours = apply(make(nn))
    ours.load_state_dict(to_lucid(theirs.state_dict()))
    return ours, theirs


@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_parametrization(dim: int | None) -> None:
    ours, theirs = pair(
        lambda m: m.Conv2d(3, 4, 3),
        lambda m: parametrizations.weight_norm(m, dim=dim),
        lambda m: torch.nn.utils.parametrizations.weight_norm(m, dim=dim),
    )
    assert type(ours).__name__ == type(theirs).__name__ == "ParametrizedConv2d"
    assert_same_state(ours, theirs)
    run_both(ours, theirs, (2, 3, 6, 6))


def test_weight_norm_from_a_fresh_module_matches_torch() -> None:
    """Registration itself (right_inverse: g = ||w||, v = w) from the same weights."""
    torch.manual_seed(0)
    plain = torch.nn.Linear(5, 3)
    ours = nn.Linear(5, 3)
    ours.load_state_dict(to_lucid(plain.state_dict()))
    theirs = torch.nn.utils.parametrizations.weight_norm(plain)
    parametrizations.weight_norm(ours)
    assert_same_state(ours, theirs)
    theirs_back = torch.nn.utils.parametrizations.weight_norm(torch.nn.Linear(5, 3))
    theirs_back.load_state_dict(to_torch(ours.state_dict()))
    assert_same_state(ours, theirs_back)


@pytest.mark.parametrize(
    ("make", "shape"),
    [
        (lambda m: m.Linear(5, 4), (3, 5)),
        (lambda m: m.Conv2d(2, 3, 3), (2, 2, 5, 5)),
        (lambda m: m.ConvTranspose2d(2, 3, 3), (2, 2, 4, 4)),
    ],
)
def test_spectral_norm_parametrization_train_and_eval(make: Any, shape: Any) -> None:
    torch.manual_seed(0)
    theirs = torch.nn.utils.parametrizations.spectral_norm(make(torch.nn), n_power_iterations=2)
    ours = parametrizations.spectral_norm(make(nn), n_power_iterations=2)
    ours.load_state_dict(to_lucid(theirs.state_dict()))
    assert_same_state(ours, theirs)
    for seed in range(2):  # train mode: each forward runs power iterations on u and v
        run_both(ours, theirs, shape, seed)
        assert_same_state(ours, theirs)
    ours.eval()
    theirs.eval()
    run_both(ours, theirs, shape, 5)
    assert_same_state(ours, theirs)


@pytest.mark.parametrize("orthogonal_map", ["matrix_exp", "cayley", "householder"])
@pytest.mark.parametrize("features", [(4, 4), (5, 3), (3, 5)])
def test_orthogonal(orthogonal_map: str, features: tuple[int, int]) -> None:
    torch.manual_seed(0)
    kw = {"orthogonal_map": orthogonal_map}
    theirs = torch.nn.utils.parametrizations.orthogonal(torch.nn.Linear(*features), **kw)
    ours = parametrizations.orthogonal(nn.Linear(*features), **kw)
    ours.load_state_dict(to_lucid(theirs.state_dict()))  # base comes from torch's RNG
    assert_same_state(ours, theirs)
    run_both(ours, theirs, (2, features[0]))


def test_orthogonal_square_right_inverse_matches_torch() -> None:
    """Registration from the same square weight: base = Q of its QR, original = -I."""
    torch.manual_seed(0)
    plain = torch.nn.Linear(4, 4)
    ours = nn.Linear(4, 4)
    ours.load_state_dict(to_lucid(plain.state_dict()))
    theirs = torch.nn.utils.parametrizations.orthogonal(plain)
    parametrizations.orthogonal(ours)
    assert_same_state(ours, theirs)


@pytest.mark.parametrize("features", [(4, 4), (5, 3), (3, 5)])
def test_orthogonal_householder_without_trivialization(features: tuple[int, int]) -> None:
    torch.manual_seed(0)
    plain = torch.nn.Linear(*features)
    ours = nn.Linear(*features)
    ours.load_state_dict(to_lucid(plain.state_dict()))
    kw: dict[str, Any] = {"orthogonal_map": "householder", "use_trivialization": False}
    theirs = torch.nn.utils.parametrizations.orthogonal(plain, **kw)
    parametrizations.orthogonal(ours, **kw)
    assert_same_state(ours, theirs)
    run_both(ours, theirs, (2, features[0]))


def test_custom_parametrization_with_several_originals() -> None:
    class RankOne(torch.nn.Module):
        def forward(self, x: Any, y: Any) -> Any:
            return x.unsqueeze(-1) @ y.unsqueeze(-2)

        def right_inverse(self, z: Any) -> Any:
            return z[:, 0], z[0]

    class RankOneL(nn.Module):
        def forward(self, x: lucid.Tensor, y: lucid.Tensor) -> lucid.Tensor:
            return x.unsqueeze(-1) @ y.unsqueeze(-2)

        def right_inverse(self, z: lucid.Tensor) -> Any:
            return z[:, 0], z[0]

    torch.manual_seed(0)
    plain = torch.nn.Linear(3, 3)
    ours = nn.Linear(3, 3)
    ours.load_state_dict(to_lucid(plain.state_dict()))
    theirs = torch.nn.utils.parametrize.register_parametrization(plain, "weight", RankOne())
    parametrize.register_parametrization(ours, "weight", RankOneL())
    assert "parametrizations.weight.original0" in ours.state_dict()
    assert_same_state(ours, theirs)
    run_both(ours, theirs, (2, 3))
    torch.nn.utils.parametrize.remove_parametrizations(theirs, "weight")
    parametrize.remove_parametrizations(ours, "weight")
    assert_same_state(ours, theirs)


def test_legacy_weight_norm() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        ours, theirs = pair(
            lambda m: m.Linear(5, 3),
            lambda m: nn.utils.weight_norm(m, dim=1),
            lambda m: torch.nn.utils.weight_norm(m, dim=1),
        )
    assert_same_state(ours, theirs)
    run_both(ours, theirs, (4, 5))
    torch.nn.utils.remove_weight_norm(theirs)
    nn.utils.remove_weight_norm(ours)
    assert_same_state(ours, theirs)


def test_torch_legacy_weight_norm_checkpoint_loads_into_lucid_parametrization() -> None:
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        old = torch.nn.utils.weight_norm(torch.nn.Linear(4, 3))
    theirs = torch.nn.utils.parametrizations.weight_norm(torch.nn.Linear(4, 3))
    ours = parametrizations.weight_norm(nn.Linear(4, 3))
    theirs.load_state_dict(old.state_dict())
    ours.load_state_dict(to_lucid(old.state_dict()))
    assert_same_state(ours, theirs)


def test_legacy_spectral_norm_train_eval_and_remove() -> None:
    torch.manual_seed(0)
    theirs = torch.nn.utils.spectral_norm(torch.nn.Conv2d(2, 4, 3), n_power_iterations=3)
    ours = nn.utils.spectral_norm(nn.Conv2d(2, 4, 3), n_power_iterations=3)
    ours.load_state_dict(to_lucid(theirs.state_dict()))
    assert_same_state(ours, theirs)
    for seed in range(2):
        run_both(ours, theirs, (1, 2, 5, 5), seed)
        assert_same_state(ours, theirs)
    ours.eval()
    theirs.eval()
    run_both(ours, theirs, (1, 2, 5, 5), 3)
    torch.nn.utils.remove_spectral_norm(theirs)
    nn.utils.remove_spectral_norm(ours)
    assert_same_state(ours, theirs)


def test_prune_masks_match_torch() -> None:
    torch.manual_seed(0)
    theirs = torch.nn.Conv2d(3, 4, 3)
    ours = nn.Conv2d(3, 4, 3)
    ours.load_state_dict(to_lucid(theirs.state_dict()))
    for lib, m in ((tprune, theirs), (prune, ours)):
        lib.l1_unstructured(m, "weight", amount=0.3)
        lib.ln_structured(m, "weight", amount=1, n=2, dim=0)
        lib.l1_unstructured(m, "weight", amount=10)
        lib.l1_unstructured(m, "bias", amount=1)
    assert_same_state(ours, theirs)
    run_both(ours, theirs, (2, 3, 5, 5))
    for lib, m in ((tprune, theirs), (prune, ours)):
        lib.remove(m, "weight")
        lib.remove(m, "bias")
    assert_same_state(ours, theirs)


def test_global_unstructured_and_custom_from_mask_match_torch() -> None:
    torch.manual_seed(0)
    theirs = torch.nn.Sequential(torch.nn.Linear(4, 5), torch.nn.Linear(5, 2))
    ours = nn.Sequential(nn.Linear(4, 5), nn.Linear(5, 2))
    ours.load_state_dict(to_lucid(theirs.state_dict()))
    mask = np.random.default_rng(0).random((2,)) > 0.5
    for lib, m, tensor in (
        (tprune, theirs, torch.tensor),
        (prune, ours, lucid.tensor),
    ):
        params = [(m[0], "weight"), (m[1], "weight"), (m[0], "bias")]
        lib.global_unstructured(params, pruning_method=lib.L1Unstructured, amount=0.4)
        lib.custom_from_mask(m[1], "bias", mask=tensor(mask.astype(np.float32)))
    assert_same_state(ours, theirs)
    run_both(ours, theirs, (3, 4))


@pytest.mark.parametrize("transpose", [False, True])
def test_fuse_conv_bn_matches_torch(transpose: bool) -> None:
    def make(m: Any) -> Any:
        conv = m.ConvTranspose2d(3, 4, 3) if transpose else m.Conv2d(3, 4, 3)
        return m.Sequential(conv, m.BatchNorm2d(4))

    torch.manual_seed(0)
    theirs = make(torch.nn)
    with torch.no_grad():
        theirs[1].running_mean.uniform_(-1, 1)
        theirs[1].running_var.uniform_(0.5, 2)
        theirs[1].weight.uniform_(0.5, 2)
    ours = make(nn)
    ours.load_state_dict(to_lucid(theirs.state_dict()))
    ours.eval()
    theirs.eval()
    f_t = torch.nn.utils.fuse_conv_bn_eval(theirs[0], theirs[1], transpose=transpose)
    f_l = nn.utils.fuse_conv_bn_eval(ours[0], ours[1], transpose=transpose)
    assert_same_state(f_l, f_t)
    x = np.random.default_rng(0).standard_normal((2, 3, 5, 5)).astype(np.float32)
    np.testing.assert_allclose(
        f_l(lucid.tensor(x)).detach().numpy(),
        theirs(torch.tensor(x)).detach().numpy(),
        rtol=RTOL,
        atol=ATOL,
    )


def test_fuse_linear_bn_matches_torch() -> None:
    torch.manual_seed(0)
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4))
    with torch.no_grad():
        theirs[1].running_mean.uniform_(-1, 1)
    ours = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
    ours.load_state_dict(to_lucid(theirs.state_dict()))
    ours.eval()
    theirs.eval()
    f_t = torch.nn.utils.fuse_linear_bn_eval(theirs[0], theirs[1])
    f_l = nn.utils.fuse_linear_bn_eval(ours[0], ours[1])
    assert_same_state(f_l, f_t)


def test_functional_call_matches_torch_func() -> None:
    torch.manual_seed(0)
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4))
    ours = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
    ours.load_state_dict(to_lucid(theirs.state_dict()))
    rng = np.random.default_rng(1)
    new = {"0.weight": rng.standard_normal((4, 3)).astype(np.float32)}
    x = rng.standard_normal((5, 3)).astype(np.float32)
    w_t = torch.tensor(new["0.weight"], requires_grad=True)
    w_l = lucid.tensor(new["0.weight"], requires_grad=True)
    out_t = torch.func.functional_call(theirs, {"0.weight": w_t}, (torch.tensor(x),))
    out_l = _functional_call(ours, {"0.weight": w_l}, (lucid.tensor(x),))
    np.testing.assert_allclose(out_l.detach().numpy(), out_t.detach().numpy(), rtol=RTOL, atol=ATOL)
    out_t.square().sum().backward()
    out_l.square().sum().backward()
    np.testing.assert_allclose(w_l.grad.numpy(), w_t.grad.numpy(), rtol=1e-4, atol=1e-5)
    assert ours[0].weight.grad is None
    assert_same_state(ours, theirs)  # running stats updated in both, weights untouched


def test_public_names_match_torch_nn_utils() -> None:
    names = dir(torch.nn.utils)
    missing = {n for n in names if not n.startswith("_") and not hasattr(lucid_utils, n)}
    # not yet in lucid: the clip_grad.py additions and channels-last conversion (lucid has
    # no memory formats)
    assert missing <= {
        "clip_grad_norm",
        "clip_grads_with_norm_",
        "get_total_norm",
        "memory_format",
        "convert_conv2d_weight_memory_format",
        "convert_conv3d_weight_memory_format",
    }


def test_checkpoint_files_of_a_parametrized_model_move_both_ways(tmp_path: Any) -> None:
    """A parametrized, pruned model saved by torch (safetensors) loads into lucid, and lucid's
    file loads back into torch; the repr is torch's."""
    st = pytest.importorskip("safetensors.torch")

    def build(lib: Any, utils: Any, pr: Any) -> Any:
        net = lib.Sequential(lib.Conv2d(2, 4, 3), lib.ReLU(), lib.Flatten(), lib.Linear(36, 3))
        utils.parametrizations.spectral_norm(net[0])
        utils.parametrizations.weight_norm(net[3])
        pr.l1_unstructured(net[3], "bias", amount=1)
        return net

    torch.manual_seed(0)
    theirs = build(torch.nn, torch.nn.utils, tprune)
    st.save_file(theirs.state_dict(), str(tmp_path / "torch.safetensors"))
    ours = build(nn, lucid_utils, prune)
    ours.load_state_dict(lucid.load(tmp_path / "torch.safetensors"))
    assert repr(ours) == repr(theirs)
    assert_same_state(ours, theirs)
    run_both(ours, theirs, (2, 2, 5, 5))  # trains both: power iteration, gradients
    lucid.save(ours.state_dict(), tmp_path / "lucid.safetensors")
    back = build(torch.nn, torch.nn.utils, tprune)
    back.load_state_dict(st.load_file(str(tmp_path / "lucid.safetensors")))
    assert_same_state(ours, back)
