"""The language and generative families of the zoo (GPT-2, BERT, the Transformer, VAE, DCGAN):
registry metadata, parameter counts, forward and backward on small configurations; in the parity
environment, counts against Hugging Face ``transformers`` / ``torch.nn.Transformer`` /
pytorch/examples' code, and outputs with the reference's state dict loaded."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

import lucid
import lucid.models as models
from lucid import nn
from lucid.models.bert import BertForMaskedLM, BertForSequenceClassification
from lucid.models.generative import VAE, DCGANDiscriminator, DCGANGenerator
from lucid.models.gpt2 import GPT2LMHeadModel
from lucid.models.transformer import TransformerSeq2Seq, sinusoidal_position_encoding
from lucid.models.unet import UNet

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
# Checked against torch.nn.Transformer (+ the shared 37,000 x d_model embedding): name ->
# (task, torch.nn.Transformer kwargs, the paper's Table 3 count in millions)
TORCH: dict[str, tuple[str, dict[str, Any], float]] = {
    "transformer_base": ("translation", {"d_model": 512, "nhead": 8, "dim_feedforward": 2048}, 65),
    "transformer_big": ("translation", {"d_model": 1024, "nhead": 16, "dim_feedforward": 4096},
                        213),
}  # fmt: skip
# pytorch/examples' vae and dcgan (their code is rebuilt in torch below, for the parity tests)
EXAMPLES = {"vae_mnist": "image-generation", "dcgan_generator": "image-generation",
            "dcgan_discriminator": "image-generation"}  # fmt: skip
# computed by the builder from the paper's configuration
PAPER = {"unet": "image-segmentation"}
NAMES = sorted([*HF, *TORCH, *EXAMPLES, *PAPER])
TASKS = {**{n: v[0] for n, v in HF.items()}, **{n: v[0] for n, v in TORCH.items()}, **EXAMPLES,
         **PAPER}  # fmt: skip
REFERENCE = {**dict.fromkeys(HF, "transformers"), **dict.fromkeys(TORCH, "torch"),
             **dict.fromkeys(EXAMPLES, "pytorch-examples"),
             **dict.fromkeys(PAPER, "paper")}  # fmt: skip
FAMILIES = {"gpt2", "bert", "transformer", "generative", "unet"}
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
        assert info.task == TASKS[name], name
        assert info.reference == REFERENCE[name], name
        assert info.paper and re.search(r"(19|20)\d\d", info.paper), name
        assert f"{info.num_params:,}" in (models.get_model_factory(name).__doc__ or ""), name
    for task in set(TASKS.values()):
        # this file's families (the diffusion models are test_models_diffusion.py's)
        mine = [n for n in models.list_models(task=task) if models.model_info(n).family in FAMILIES]
        assert mine == sorted(n for n in TASKS if TASKS[n] == task)


@pytest.mark.parametrize("name", sorted(TORCH))
def test_transformer_count_is_near_the_paper(name: str) -> None:
    # Table 3 gives 65M and 213M (rounded, from the authors' tensor2tensor models)
    count = models.model_info(name).num_params or 0
    assert abs(count / 1e6 - TORCH[name][2]) / TORCH[name][2] < 0.03


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


def test_transformer_forward_backward() -> None:
    lucid.manual_seed(0)
    model = TransformerSeq2Seq(vocab_size=50, d_model=32, nhead=4, num_encoder_layers=1,
                               num_decoder_layers=1, dim_feedforward=64)  # fmt: skip
    src, tgt = lucid.randint(0, 50, (2, 7)), lucid.randint(0, 50, (2, 5))
    model.train()
    out = model(src, tgt)
    assert out.shape == (2, 5, 50)
    out.square().mean().backward()
    assert all(p.grad is not None and bool(lucid.isfinite(p.grad).all())
               for p in model.parameters())  # fmt: skip
    model.eval()
    with lucid.no_grad():  # causal: the first 3 target positions do not see the later ones
        np.testing.assert_allclose(model(src, tgt)[:, :3].numpy(), model(src, tgt[:, :3]).numpy(),
                                   rtol=1e-5, atol=1e-5)  # fmt: skip


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(TORCH))
def test_transformer_count_matches_torch(name: str) -> None:
    torch = pytest.importorskip("torch")
    kwargs = TORCH[name][1]
    with torch.device("meta"):
        ref = torch.nn.Transformer(**kwargs, batch_first=True)
    expected = sum(p.numel() for p in ref.parameters()) + 37000 * kwargs["d_model"]
    assert models.model_info(name).num_params == expected


@pytest.mark.parity
def test_transformer_logits_match_torch() -> None:
    torch = pytest.importorskip("torch")
    d, vocab = 32, 50
    ref = torch.nn.ModuleDict({
        "embedding": torch.nn.Embedding(vocab, d),
        "transformer": torch.nn.Transformer(d, 4, 2, 2, 64, dropout=0.0, batch_first=True),
    }).eval()  # fmt: skip
    model = TransformerSeq2Seq(vocab_size=vocab, d_model=d, nhead=4, num_encoder_layers=2,
                               num_decoder_layers=2, dim_feedforward=64).eval()  # fmt: skip
    state = {k: lucid.tensor(v.detach().numpy()) for k, v in ref.state_dict().items()}
    state["generator.weight"] = state["embedding.weight"]
    model.load_state_dict(state)
    rng = np.random.default_rng(0)
    src, tgt = rng.integers(0, vocab, (2, 9)), rng.integers(0, vocab, (2, 6))
    pad = np.zeros((2, 9), dtype=bool)
    pad[1, 7:] = True

    def embed(ids: Any) -> Any:
        pe = torch.tensor(sinusoidal_position_encoding(ids.shape[1], d).numpy())
        return ref["embedding"](torch.tensor(ids)) * d**0.5 + pe

    with torch.no_grad():
        mask = torch.nn.Transformer.generate_square_subsequent_mask(6)
        y = ref["transformer"](
            embed(src), embed(tgt), tgt_mask=mask, tgt_is_causal=True,
            src_key_padding_mask=torch.tensor(pad), memory_key_padding_mask=torch.tensor(pad),
        )  # fmt: skip
        expected = (y @ ref["embedding"].weight.T).numpy()
    with lucid.no_grad():
        got = model(lucid.tensor(src), lucid.tensor(tgt), src_key_padding_mask=lucid.tensor(pad))
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-4, atol=1e-5)  # float32


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(HF))
def test_parameter_count_matches_transformers(name: str) -> None:
    torch, transformers = _torch_and_transformers()
    _, config_cls, model_cls, kwargs = HF[name]
    with torch.device("meta"):  # shapes only: nothing allocated
        ref = getattr(transformers, model_cls)(getattr(transformers, config_cls)(**kwargs))
    assert ref.num_parameters() == models.model_info(name).num_params


def _load_hf(model: nn.Module, ref: Any) -> None:
    """Load the torch module ``ref``'s state dict (same keys) into ``model``."""
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


def test_generative_forward_backward() -> None:
    lucid.manual_seed(0)
    vae = VAE()
    x = lucid.rand(4, 1, 28, 28)
    recon, mu, logvar = vae(x)
    assert recon.shape == (4, 784) and mu.shape == logvar.shape == (4, 20)
    kl = -0.5 * (1 + logvar - mu.square() - logvar.exp()).sum()
    (nn.functional.binary_cross_entropy(recon, x.reshape(-1, 784), reduction="sum") + kl).backward()
    assert all(p.grad is not None and bool(lucid.isfinite(p.grad).all()) for p in vae.parameters())
    with pytest.raises(ValueError, match="784 values per sample"):
        vae(lucid.rand(2, 100))
    gen, disc = DCGANGenerator(ngf=8), DCGANDiscriminator(ndf=8)
    fake = gen(lucid.randn(2, 100, 1, 1))
    assert fake.shape == (2, 3, 64, 64) and bool((fake.abs() <= 1).all())
    prob = disc(fake)
    assert prob.shape == (2,)
    nn.functional.binary_cross_entropy(prob, lucid.ones(2)).backward()
    for model in (gen, disc):
        assert all(p.grad is not None and bool(lucid.isfinite(p.grad).all())
                   for p in model.parameters())  # fmt: skip


def test_unet_sizes_as_in_the_paper_and_backward() -> None:
    lucid.manual_seed(0)
    with lucid.no_grad():  # Figure 1: a 572x572 tile gives a 388x388 map (narrow widths here)
        assert UNet(base=2)(lucid.randn(1, 1, 572, 572)).shape == (1, 2, 388, 388)
    model = UNet(base=4, num_classes=3)
    x = lucid.randn(2, 1, 188, 188, requires_grad=True)  # the smallest valid tile: 4x4 out
    out = model(x)
    assert out.shape == (2, 3, 4, 4)
    nn.functional.cross_entropy(out, lucid.randint(0, 3, (2, 4, 4))).backward()
    assert x.grad is not None and bool(lucid.isfinite(x.grad).all())
    assert all(p.grad is not None and bool(lucid.isfinite(p.grad).all())
               for p in model.parameters())  # fmt: skip


def _torch_examples(torch: Any) -> dict[str, Any]:
    """pytorch/examples' vae/main.py VAE and dcgan/main.py Generator, Discriminator (nz 100,
    ngf = ndf = 64, nc 3), as written there."""
    tnn = torch.nn

    class TorchVAE(tnn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc1 = tnn.Linear(784, 400)
            self.fc21, self.fc22 = tnn.Linear(400, 20), tnn.Linear(400, 20)
            self.fc3, self.fc4 = tnn.Linear(20, 400), tnn.Linear(400, 784)

        def forward(self, x: Any) -> Any:  # the eval path: decode(mu)
            h1 = torch.relu(self.fc1(x.view(-1, 784)))
            mu = self.fc21(h1)
            return torch.sigmoid(self.fc4(torch.relu(self.fc3(mu))))

    nz, ngf, ndf, nc = 100, 64, 64, 3
    ct, conv, bn, relu, tanh = tnn.ConvTranspose2d, tnn.Conv2d, tnn.BatchNorm2d, tnn.ReLU, tnn.Tanh

    def lrelu() -> Any:
        return tnn.LeakyReLU(0.2, inplace=True)

    gen = tnn.Sequential(
        ct(nz, ngf * 8, 4, 1, 0, bias=False), bn(ngf * 8), relu(True),
        ct(ngf * 8, ngf * 4, 4, 2, 1, bias=False), bn(ngf * 4), relu(True),
        ct(ngf * 4, ngf * 2, 4, 2, 1, bias=False), bn(ngf * 2), relu(True),
        ct(ngf * 2, ngf, 4, 2, 1, bias=False), bn(ngf), relu(True),
        ct(ngf, nc, 4, 2, 1, bias=False), tanh(),
    )  # fmt: skip
    disc = tnn.Sequential(
        conv(nc, ndf, 4, 2, 1, bias=False), lrelu(),
        conv(ndf, ndf * 2, 4, 2, 1, bias=False), bn(ndf * 2), lrelu(),
        conv(ndf * 2, ndf * 4, 4, 2, 1, bias=False), bn(ndf * 4), lrelu(),
        conv(ndf * 4, ndf * 8, 4, 2, 1, bias=False), bn(ndf * 8), lrelu(),
        conv(ndf * 8, 1, 4, 1, 0, bias=False), tnn.Sigmoid(),
    )  # fmt: skip
    return {"vae_mnist": TorchVAE(), "dcgan_generator": tnn.ModuleDict({"main": gen}),
            "dcgan_discriminator": tnn.ModuleDict({"main": disc})}  # fmt: skip


@pytest.mark.parity
@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_generative_matches_pytorch_examples(name: str) -> None:
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    ref = _torch_examples(torch)[name]
    assert sum(p.numel() for p in ref.parameters()) == models.model_info(name).num_params
    for m in ref.modules():  # BatchNorm statistics that are not the defaults
        if isinstance(m, torch.nn.BatchNorm2d):
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 1.5)
    ref.eval()
    model = models.create_model(name).eval()
    _load_hf(model, ref)  # the same keys
    shape = models.model_info(name).input_size or ()
    x = np.random.default_rng(0).standard_normal((2, *shape)).astype(np.float32)
    with torch.no_grad():
        out = ref(torch.tensor(x)) if name == "vae_mnist" else ref["main"](torch.tensor(x))
        expected = out.reshape(-1) if name == "dcgan_discriminator" else out
    with lucid.no_grad():
        got = model(lucid.tensor(x))
        got = got[0] if name == "vae_mnist" else got
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-4, atol=1e-5)  # float32
