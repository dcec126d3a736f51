"""The language and generative families of the zoo (GPT-2 ...): registry metadata, parameter
counts, forward and backward on small configurations; parity against Hugging Face
``transformers`` (counts of every variant, and logits with HF's state dict loaded) in the parity
environment."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

import lucid
import lucid.models as models
from lucid import nn
from lucid.models.bert import BertForMaskedLM, BertForSequenceClassification
from lucid.models.gpt2 import GPT2LMHeadModel

# name -> (task, HF config class name, HF model class name, HF config kwargs)
HF: dict[str, tuple[str, str, str, dict[str, Any]]] = {
    "gpt2": ("text-generation", "GPT2Config", "GPT2LMHeadModel", {}),
    "gpt2_medium": ("text-generation", "GPT2Config", "GPT2LMHeadModel",
                    {"n_embd": 1024, "n_layer": 24, "n_head": 16}),
    "gpt2_large": ("text-generation", "GPT2Config", "GPT2LMHeadModel",
                   {"n_embd": 1280, "n_layer": 36, "n_head": 20}),
    "gpt2_xl": ("text-generation", "GPT2Config", "GPT2LMHeadModel",
                {"n_embd": 1600, "n_layer": 48, "n_head": 25}),
}  # fmt: skip
_BERT_LARGE = {"hidden_size": 1024, "num_hidden_layers": 24, "num_attention_heads": 16,
               "intermediate_size": 4096}  # fmt: skip
HF.update({
    "bert_base": ("fill-mask", "BertConfig", "BertForMaskedLM", {}),
    "bert_large": ("fill-mask", "BertConfig", "BertForMaskedLM", _BERT_LARGE),
    "bert_base_classifier": ("text-classification", "BertConfig",
                             "BertForSequenceClassification", {}),
    "bert_large_classifier": ("text-classification", "BertConfig",
                              "BertForSequenceClassification", _BERT_LARGE),
})  # fmt: skip
NAMES = sorted(HF)
HUGE = 250_000_000  # over it: 1.4-6 GB of float32 weights to build, marked slow

BERT_TINY = {"vocab_size": 50, "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4,
             "intermediate_size": 64, "max_position_embeddings": 16}  # fmt: skip
GPT2_TINY = {"vocab_size": 50, "n_positions": 16, "n_embd": 32, "n_layer": 2, "n_head": 4}


def _skip_init(monkeypatch: pytest.MonkeyPatch) -> None:
    for fn in [f for f in vars(nn.init) if f.endswith("_") and not f.startswith("_")]:
        monkeypatch.setattr(nn.init, fn, lambda tensor, *args, **kwargs: tensor)


def test_metadata() -> None:
    for name in NAMES:
        info = models.model_info(name)
        assert info.task == HF[name][0] and info.reference == "transformers", name
        assert info.paper and re.search(r"(19|20)\d\d", info.paper), name
        assert f"{info.num_params:,}" in (models.get_model_factory(name).__doc__ or ""), name
    for task in {t for t, *_ in HF.values()}:
        assert models.list_models(task=task) == sorted(n for n in HF if HF[n][0] == task)


@pytest.mark.parametrize(
    "name",
    [pytest.param(n, marks=pytest.mark.slow) if (models.model_info(n).num_params or 0) > HUGE
     else n for n in NAMES],
)  # fmt: skip
def test_parameter_count(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _skip_init(monkeypatch)
    model = models.create_model(name)
    assert sum(p.numel() for p in model.parameters()) == models.model_info(name).num_params


def test_gpt2_forward_backward_and_tied_head() -> None:
    lucid.manual_seed(0)
    model = GPT2LMHeadModel(**GPT2_TINY)
    assert model.lm_head.weight is model.transformer.wte.weight
    ids = lucid.randint(0, 50, (2, 8))
    model.train()
    out = model(ids)
    assert out.shape == (2, 8, 50)
    out.square().mean().backward()
    assert all(p.grad is not None and bool(lucid.isfinite(p.grad).all())
               for p in model.parameters())  # fmt: skip
    model.eval()
    with lucid.no_grad():
        a = model(ids)
        b = model(ids[:, :5])
    # causal: the first 5 positions do not see the later tokens
    np.testing.assert_allclose(a[:, :5].numpy(), b.numpy(), rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="longer than n_positions"):
        model(lucid.zeros(1, 17, dtype=lucid.int64))


def _torch_and_transformers() -> tuple[Any, Any]:
    torch = pytest.importorskip("torch")
    reason = "Hugging Face transformers is not installed (the parity env has it: hatch.toml)"
    return torch, pytest.importorskip("transformers", reason=reason)


@pytest.mark.parametrize("cls", [BertForMaskedLM, BertForSequenceClassification])
def test_bert_forward_backward_and_padding_mask(cls: type[nn.Module]) -> None:
    lucid.manual_seed(0)
    model = cls(**BERT_TINY)
    ids = lucid.randint(0, 50, (2, 8))
    types = lucid.tensor([[0] * 4 + [1] * 4] * 2)
    mask = lucid.tensor([[1] * 8, [1] * 6 + [0] * 2])
    model.train()
    out = model(ids, mask, types)
    assert out.shape == ((2, 8, 50) if cls is BertForMaskedLM else (2, 2))
    out.square().mean().backward()
    assert all(p.grad is not None and bool(lucid.isfinite(p.grad).all())
               for p in model.parameters())  # fmt: skip
    model.eval()
    with lucid.no_grad():
        padded = model(ids, mask, types)[1]
        other = ids.clone()
        other[1, 6:] = (other[1, 6:] + 1) % 50  # a change under the padding changes nothing
        again = model(other, mask, types)[1]
    np.testing.assert_allclose(padded[:6].numpy() if cls is BertForMaskedLM else padded.numpy(),
                               again[:6].numpy() if cls is BertForMaskedLM else again.numpy(),
                               rtol=1e-5, atol=1e-6)  # fmt: skip
    if cls is BertForMaskedLM:
        head = model.cls.predictions  # type: ignore[union-attr]
        assert head.decoder.weight is model.bert.embeddings.word_embeddings.weight  # type: ignore[union-attr]
        assert head.decoder.bias is head.bias


@pytest.mark.parity
@pytest.mark.parametrize("name", NAMES)
def test_parameter_count_matches_transformers(name: str) -> None:
    torch, transformers = _torch_and_transformers()
    _, config_cls, model_cls, kwargs = HF[name]
    with torch.device("meta"):  # shapes only: nothing allocated
        ref = getattr(transformers, model_cls)(getattr(transformers, config_cls)(**kwargs))
    assert ref.num_parameters() == models.model_info(name).num_params


def _load_hf(model: nn.Module, ref: Any) -> None:
    state = {k: lucid.tensor(v.detach().numpy()) for k, v in ref.state_dict().items()}
    model.load_state_dict(state)


@pytest.mark.parity
def test_gpt2_logits_match_transformers() -> None:
    torch, transformers = _torch_and_transformers()
    torch.manual_seed(0)
    config = transformers.GPT2Config(
        vocab_size=50, n_positions=16, n_embd=32, n_layer=2, n_head=4, bos_token_id=0,
        eos_token_id=0)  # fmt: skip
    ref = transformers.GPT2LMHeadModel(config).eval()
    model = GPT2LMHeadModel(**GPT2_TINY).eval()
    _load_hf(model, ref)  # same keys, Conv1D weights in HF's (in, out) layout
    ids = np.random.default_rng(0).integers(0, 50, (2, 12))
    with torch.no_grad():
        expected = ref(torch.tensor(ids)).logits.numpy()
    with lucid.no_grad():
        got = model(lucid.tensor(ids)).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)  # float32


@pytest.mark.parity
@pytest.mark.parametrize("cls", ["BertForMaskedLM", "BertForSequenceClassification"])
def test_bert_logits_match_transformers(cls: str) -> None:
    torch, transformers = _torch_and_transformers()
    torch.manual_seed(0)
    config = transformers.BertConfig(**BERT_TINY)
    ref = getattr(transformers, cls)(config).eval()
    model = getattr(models, cls)(**BERT_TINY).eval()
    _load_hf(model, ref)  # the same keys
    rng = np.random.default_rng(0)
    ids = rng.integers(0, 50, (2, 12))
    types = np.array([[0] * 6 + [1] * 6] * 2)
    mask = np.array([[1] * 12, [1] * 9 + [0] * 3])
    with torch.no_grad():
        expected = ref(input_ids=torch.tensor(ids), attention_mask=torch.tensor(mask),
                       token_type_ids=torch.tensor(types)).logits.numpy()  # fmt: skip
    with lucid.no_grad():
        got = model(lucid.tensor(ids), lucid.tensor(mask), lucid.tensor(types)).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)  # float32
