"""RoFormer: registry metadata and parameter counts, the rotary embedding's relative-position
property, forward and backward on a tiny configuration, padding; in the parity environment,
counts, state-dict keys, outputs (eval and train mode) and gradients against Hugging Face
``transformers``' RoFormer models built from their configs."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lucid
import lucid.models as models
from lucid import nn
from lucid.models.roformer import (
    RoFormerForMaskedLM,
    RoFormerForSequenceClassification,
    RoFormerModel,
    apply_rotary,
    sinusoid_table,
)

BUILDERS = {"roformer_base": ("fill-mask", "RoFormerForMaskedLM"),
            "roformer_base_classifier": ("text-classification",
                                         "RoFormerForSequenceClassification")}  # fmt: skip
TINY: dict[str, Any] = {"vocab_size": 50, "hidden_size": 32, "num_hidden_layers": 2,
                        "num_attention_heads": 4, "intermediate_size": 64,
                        "max_position_embeddings": 16}  # fmt: skip
CLASSES = [RoFormerModel, RoFormerForMaskedLM, RoFormerForSequenceClassification]


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_registry_and_count(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    info = models.model_info(name)
    assert (info.task, info.reference, info.family) == (BUILDERS[name][0], "transformers",
                                                        "roformer")  # fmt: skip
    assert f"{info.num_params:,}" in (models.get_model_factory(name).__doc__ or "")
    for fn in [f for f in vars(nn.init) if f.endswith("_") and not f.startswith("_")]:
        monkeypatch.setattr(nn.init, fn, lambda tensor, *args, **kwargs: tensor)
    model = models.create_model(name)
    assert sum(p.numel() for p in model.parameters()) == info.num_params


def test_rotary_scores_depend_on_the_relative_position_only() -> None:
    rng = np.random.default_rng(0)
    table = sinusoid_table(40, 8)
    q, k = (lucid.tensor(rng.standard_normal((1, 8)), dtype=lucid.float32) for _ in range(2))

    def score(m: int, n: int) -> float:
        return float((apply_rotary(q, table[m : m + 1]) * apply_rotary(k, table[n : n + 1])).sum())

    assert score(3, 7) == pytest.approx(score(20, 24), rel=1e-4, abs=1e-5)
    assert score(3, 7) != pytest.approx(score(3, 12), rel=1e-3, abs=1e-6)
    # a rotation: norms are kept
    np.testing.assert_allclose(np.linalg.norm(apply_rotary(q, table[5:6]).numpy()),
                               np.linalg.norm(q.numpy()), rtol=1e-5, atol=1e-6)  # fmt: skip


@pytest.mark.parametrize("cls", CLASSES)
def test_forward_backward_and_padding(cls: type[nn.Module]) -> None:
    lucid.manual_seed(0)
    model = cls(**TINY)
    ids = lucid.randint(1, 50, (2, 8))
    types = lucid.tensor([[0] * 4 + [1] * 4] * 2)
    mask = lucid.tensor([[1] * 8, [1] * 6 + [0] * 2])
    out = model(ids, mask, types)
    expected = {RoFormerModel: (2, 8, 32), RoFormerForMaskedLM: (2, 8, 50),
                RoFormerForSequenceClassification: (2, 2)}[cls]  # fmt: skip
    assert out.shape == expected
    out.square().mean().backward()
    table = [m for m in model.modules() if hasattr(m, "embed_positions")][0].embed_positions
    assert table.weight.grad is None and not table.weight.requires_grad  # frozen
    assert all(p.grad is not None and bool(lucid.isfinite(p.grad).all())
               for p in model.parameters() if p.requires_grad)  # fmt: skip
    model.eval()
    with lucid.no_grad():  # a change under the padding changes nothing
        other = ids.clone()
        other[1, 6:] = (other[1, 6:] + 1) % 50
        a, b = model(ids, mask, types), model(other, mask, types)
    keep = (slice(None), slice(0, 6)) if cls is not RoFormerForSequenceClassification else ()
    np.testing.assert_allclose(a[keep].numpy(), b[keep].numpy(), rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="longer than max_position_embeddings"):
        model(lucid.zeros(1, 17, dtype=lucid.int64))


def _transformers() -> tuple[Any, Any]:
    torch = pytest.importorskip("torch")
    reason = "Hugging Face transformers is not installed (the parity env has it: hatch.toml)"
    return torch, pytest.importorskip("transformers", reason=reason)


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_count_matches_transformers(name: str) -> None:
    torch, transformers = _transformers()
    with torch.device("meta"):
        ref = getattr(transformers, BUILDERS[name][1])(transformers.RoFormerConfig())
    assert ref.num_parameters() == models.model_info(name).num_params


@pytest.mark.parity
@pytest.mark.parametrize("cls", CLASSES)
@pytest.mark.parametrize("extra", [{}, {"embedding_size": 16, "rotary_value": True}])
def test_outputs_and_gradients_match_transformers(cls: type[nn.Module],
                                                  extra: dict[str, Any]) -> None:  # fmt: skip
    torch, transformers = _transformers()
    torch.manual_seed(0)
    cfg = {**TINY, **extra, "hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0}
    ref = getattr(transformers, cls.__name__)(transformers.RoFormerConfig(**cfg))
    model = cls(**cfg)
    state = {k: lucid.tensor(v.detach().numpy()) for k, v in ref.state_dict().items()}
    assert sorted(state) == sorted(model.state_dict())
    model.load_state_dict(state)
    rng = np.random.default_rng(0)
    ids = rng.integers(0, 50, (2, 12))
    types = np.array([[0] * 6 + [1] * 6] * 2)
    mask = np.array([[1] * 12, [1] * 9 + [0] * 3])
    for train in (False, True):  # no dropout: the modes agree
        ref.train(train), model.train(train)
        out = ref(input_ids=torch.tensor(ids), attention_mask=torch.tensor(mask),
                  token_type_ids=torch.tensor(types))  # fmt: skip
        expected = out.last_hidden_state if cls is RoFormerModel else out.logits
        got = model(lucid.tensor(ids), lucid.tensor(mask), lucid.tensor(types))
        np.testing.assert_allclose(
            got.detach().numpy(), expected.detach().numpy(), rtol=1e-4, atol=1e-5
        )  # float32
    expected.square().mean().backward()
    got.square().mean().backward()
    grads = {k: p.grad for k, p in ref.named_parameters() if p.grad is not None}
    ours = dict(model.named_parameters())
    for key in ("embeddings.word_embeddings.weight", "encoder.layer.0.attention.self.query.weight",
                "encoder.layer.1.output.dense.weight"):  # fmt: skip
        full = key if cls is RoFormerModel else f"roformer.{key}"
        np.testing.assert_allclose(ours[full].grad.numpy(), grads[full].numpy(),  # type: ignore[union-attr]
                                   rtol=1e-4, atol=1e-6)  # fmt: skip
