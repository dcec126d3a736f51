"""lucid.models.tokenizers: BERT's WordPiece and GPT-2's byte-level BPE, pure Python.

The default-env tests pin the rules on hand-made cases (and the BPE trainer on ``tokenizers``'
own known-answer example); the parity tests (parity env: ``transformers`` 5, ``tokenizers``,
``regex``) train a vocabulary here, save it in the standard files and check that
``transformers``' ``BertTokenizer`` (and its legacy pure-Python ``BertTokenizerLegacy``),
``GPT2Tokenizer`` and ``tokenizers.Tokenizer.from_file(tokenizer.json)`` give the same ids,
decodings and batch encodings on varied text (Unicode, punctuation, whitespace, control
characters), and that the BPE trainer gives ``tokenizers``' vocabulary and merges exactly.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import lucid
import lucid.models as models
from lucid.models.tokenizers import (
    BasicTokenizer,
    BertTokenizer,
    BpeTrainer,
    GPT2Tokenizer,
    WordpieceTokenizer,
    bytes_to_unicode,
    pre_tokenize,
)

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]

# text that exercises the rules: accents, CJK, emoji, odd whitespace, control characters,
# contractions, ASCII punctuation that is not Unicode punctuation, special tokens in the text
WEIRD = [
    "Hello, World! How's it going? I'M fine—thanks… 'quoted' \"double\"",
    "naïve café résumé Ångström ÉCOLE İstanbul straße ǅ",
    "中文字符测试，日本語のテキスト、한국어 텍스트",
    "tabs\there\nnewlines\r\nand  double   spaces \u00a0nbsp\u3000ideographic\u2028ls\u2029ps",
    "ctrl\x00chars\x07here\x1cfs\x1dgs\x0bvt\x0cff\x85nel\ufffdrepl",
    "emoji 😀👍🏽 family 👨‍👩‍👧 flags 🇫🇷",
    "numbers 123 4.56 ٣٤٥ ² ½ Ⅻ 1st 2nd",
    "combining e\u0301 a\u0308 n\u0303 zalgo z\u0351\u0352\u0357",
    "   leading and trailing   ",
    "it's we've they're I'll he'd 'S 'tis ''",
    "$^`~|<>[]{}\\@#%&*+=_-",
    "[MASK] is [CLS] and [SEP] [PAD] [UNK] [mask]",
    "a<|endoftext|>b <|endoftext|> c",
    "x" * 120,
    "",
    " ",
    "\n\n\n",
    "word\u200bzero\u200cwidth",
]


def _corpus(limit: int = 1500) -> list[str]:
    """Real text that is always here: the source of lucid.models (code, docstrings)."""
    root = Path(models.__file__).parent
    lines = [line for p in sorted(root.glob("*.py"))
             for line in p.read_text(encoding="utf-8").splitlines() if line.strip()]  # fmt: skip
    return lines[:limit]


# ---- the rules, by hand -------------------------------------------------------------------


def test_basic_tokenizer_normalises_and_splits_as_bert() -> None:
    basic = BasicTokenizer()
    assert basic.tokenize("Héllo,  WORLD!\tça\x00va?") == ["hello", ",", "world", "!", "cava", "?"]
    assert basic.tokenize("中文ab") == ["中", "文", "ab"]
    assert basic.tokenize("a$b^c") == ["a", "$", "b", "^", "c"]  # ASCII symbols split too
    assert basic.tokenize("[MASK] x", never_split=["[MASK]"]) == ["[MASK]", "x"]
    cased = BasicTokenizer(do_lower_case=False)
    assert cased.tokenize("Héllo") == ["Héllo"]
    assert BasicTokenizer(do_lower_case=False, strip_accents=True).tokenize("Héllo") == ["Hello"]
    assert BasicTokenizer(strip_accents=False).tokenize("Héllo") == ["héllo"]


def test_wordpiece_is_greedy_longest_match_first() -> None:
    vocab = {t: i for i, t in enumerate(["[UNK]", "un", "##aff", "##able", "unaff", "a"])}
    wp = WordpieceTokenizer(vocab, "[UNK]", max_input_chars_per_word=9)
    assert wp.tokenize("unaffable a") == ["unaff", "##able", "a"]
    assert wp.tokenize("unx") == ["[UNK]"]  # no split of the whole word: one unknown token
    assert wp.tokenize("unaffableable") == ["[UNK]"]  # longer than 9 characters


def test_pre_tokenize_follows_gpt2s_pattern() -> None:
    assert pre_tokenize("Hello world's  end\n\nok") == [
        "Hello", " world", "'s", " ", " end", "\n", "\n", "ok"]  # fmt: skip
    assert pre_tokenize("x  \t y") == ["x", "  \t", " y"]
    assert pre_tokenize("a1b 22!!? 'S") == ["a", "1", "b", " 22", "!!?", " '", "S"]
    assert pre_tokenize("end   ") == ["end", "   "]
    rng = np.random.default_rng(0)
    alphabet = list("ab1 '\n\t.,é中") + ["\u00a0", "\u2028", "😀"]
    for _ in range(50):
        text = "".join(rng.choice(alphabet, size=int(rng.integers(0, 30))))
        assert "".join(pre_tokenize(text)) == text  # the pieces cover the text


def test_bytes_to_unicode_is_a_printable_bijection() -> None:
    table = bytes_to_unicode()
    assert sorted(table) == list(range(256)) and len(set(table.values())) == 256
    assert table[ord("A")] == "A" and table[ord(" ")] == "Ġ" and table[ord("\n")] == "Ċ"


def test_bpe_trainer_matches_tokenizers_known_answer() -> None:
    """``tokenizers``' own trainer test (bpe/trainer.rs, ``test_train``): min_frequency 2 gives
    the merges 're', 'are', 'is' and these ids."""
    counts = {"roses": 1, "are": 2, "red": 1, "voilets": 1, "blue": 1, "BERT": 1, "is": 2,
              "big": 1, "and": 1, "so": 1, "GPT-2": 1}  # fmt: skip
    texts = [[w] * n for w, n in counts.items()]
    vocab, merges = BpeTrainer(vocab_size=30000, min_frequency=2).train(texts)
    letters = "-2BEGPRTabdegilnorstuv"
    assert vocab == {**{c: i for i, c in enumerate(letters)}, "re": 22, "are": 23, "is": 24}
    assert merges == [("r", "e"), ("a", "re"), ("i", "s")]


def test_wordpiece_trainer_vocabulary_layout() -> None:
    tok = BertTokenizer.train(_corpus(400), vocab_size=500, min_frequency=2)
    vocab = tok.get_vocab()
    assert len(vocab) == 500 and list(vocab)[:5] == SPECIALS
    assert sorted(vocab.values()) == list(range(500))
    assert all(t == t.lower() for t in vocab if t not in SPECIALS)
    assert any(t.startswith("##") and len(t) > 3 for t in vocab)  # merged continuation pieces
    assert tok.tokenize("from lucid.models import")[:4] == ["from", "lucid", ".", "models"]


def test_save_and_load_in_the_standard_files(tmp_path: Path) -> None:
    lines = _corpus(400)
    bert = BertTokenizer.train(lines, vocab_size=400)
    gpt = GPT2Tokenizer.train(lines, vocab_size=400)
    bert.save_pretrained(tmp_path / "bert")
    gpt.save_pretrained(tmp_path / "gpt")
    assert (tmp_path / "bert" / "vocab.txt").read_text().splitlines()[:5] == SPECIALS
    assert (tmp_path / "gpt" / "merges.txt").read_text().startswith("#version: 0.2\n")
    for name, tok, cls in (("bert", bert, BertTokenizer), ("gpt", gpt, GPT2Tokenizer)):
        loaded = cls.from_pretrained(tmp_path / name)
        only_json = tmp_path / f"{name}-json"
        only_json.mkdir()
        (only_json / "tokenizer.json").write_bytes(
            (tmp_path / name / "tokenizer.json").read_bytes()
        )
        from_json = cls.from_pretrained(only_json)
        for text in WEIRD + lines[:50]:
            ids = tok.encode(text)
            assert loaded.encode(text) == ids and from_json.encode(text) == ids, (name, text)
    assert json.loads((tmp_path / "gpt" / "tokenizer.json").read_text())["model"]["type"] == "BPE"
    with pytest.raises(FileNotFoundError, match="vocab.txt or tokenizer.json"):
        BertTokenizer.from_pretrained(tmp_path)


def test_batch_encoding_padding_truncation_and_tensors() -> None:
    tok = BertTokenizer.train(_corpus(400), vocab_size=400)
    texts = ["def forward(self, x):", "return x", "a much longer line of text " * 3]
    enc = tok(texts, padding=True, truncation=True, max_length=12, return_tensors="lucid")
    assert set(enc) == {"input_ids", "token_type_ids", "attention_mask"}
    ids, mask = enc["input_ids"], enc.attention_mask
    assert isinstance(ids, lucid.Tensor) and ids.dtype == lucid.int64 and ids.shape[1] <= 12
    rows = [tok.encode(t, truncation=True, max_length=12) for t in texts]
    for row, got, m in zip(rows, ids.tolist(), mask.tolist()):
        assert got[: len(row)] == row and set(got[len(row) :]) <= {tok.pad_token_id}
        assert m == [1] * len(row) + [0] * (len(got) - len(row))
        assert row[0] == tok.cls_token_id and row[-1] == tok.sep_token_id
    fixed = tok(texts, padding="max_length", truncation=True, max_length=32, return_tensors="np")
    assert fixed["input_ids"].shape == (3, 32) and fixed["input_ids"].dtype == np.int64
    pair = tok("first part", "second part")
    n_first = len(tok.tokenize("first part")) + 2
    assert pair["token_type_ids"] == [0] * n_first + [1] * (len(pair["input_ids"]) - n_first)
    assert tok.decode(pair["input_ids"], skip_special_tokens=True) == "first part second part"
    with pytest.raises(ValueError, match="activate truncation and/or padding"):
        tok(texts, return_tensors="pt")
    with pytest.raises(ValueError, match="padding must be"):
        tok(texts, padding="longer")
    with pytest.raises(ValueError, match="return_tensors must be"):
        tok("x", return_tensors="tf")
    bare = BertTokenizer({"[UNK]": 0, "a": 1})
    assert bare("a a", add_special_tokens=False)["input_ids"] == [1, 1]
    with pytest.raises(ValueError, match="has no '\\[CLS\\]' or '\\[SEP\\]' token"):
        bare("a")


def test_gpt2_tokenizer_roundtrips_bytes_and_needs_a_pad_token() -> None:
    tok = GPT2Tokenizer.train(_corpus(400), vocab_size=400)
    for text in WEIRD:
        assert tok.decode(tok.encode(text)) == text.replace("\ufffd", "\ufffd")  # lossless
    assert tok.encode("<|endoftext|>") == [tok.eos_token_id] == [0]
    with pytest.raises(ValueError, match="padding needs a pad token"):
        tok(["a", "bb cc"], padding=True)
    tok.pad_token = tok.eos_token
    enc = tok(["a", "bb cc"], padding=True, return_tensors="lucid")
    assert set(enc) == {"input_ids", "attention_mask"} and enc["input_ids"].shape[0] == 2


def test_encodings_feed_the_zoos_bert_and_gpt2() -> None:
    lucid.manual_seed(0)
    bert_tok = BertTokenizer.train(_corpus(300), vocab_size=300)
    bert = models.BertForMaskedLM(vocab_size=len(bert_tok), hidden_size=16, num_hidden_layers=1,
                                  num_attention_heads=2, intermediate_size=32,
                                  max_position_embeddings=64).eval()  # fmt: skip
    enc = bert_tok(["def f(x):", "return x + 1 if x else 0"], padding=True, return_tensors="lucid")
    with lucid.no_grad():
        logits = bert(**enc)
        alone = bert(**bert_tok(["def f(x):"], return_tensors="lucid"))
    n = alone.shape[1]
    assert logits.shape == (2, enc["input_ids"].shape[1], len(bert_tok))
    np.testing.assert_allclose(logits[0, :n].numpy(), alone[0].numpy(), rtol=1e-5, atol=1e-5)
    gpt_tok = GPT2Tokenizer.train(_corpus(300), vocab_size=300)
    gpt_tok.pad_token = gpt_tok.eos_token
    gpt = models.GPT2LMHeadModel(vocab_size=len(gpt_tok), n_positions=64, n_embd=16, n_layer=1,
                                 n_head=2).eval()  # fmt: skip
    enc = gpt_tok(["def f(x):", "return x + 1 if x else 0"], padding=True, return_tensors="lucid")
    with lucid.no_grad():
        logits = gpt(**enc)
        alone = gpt(**gpt_tok(["def f(x):"], return_tensors="lucid"))
    n = alone.shape[1]
    np.testing.assert_allclose(logits[0, :n].numpy(), alone[0].numpy(), rtol=1e-5, atol=1e-5)


# ---- against transformers and tokenizers (parity env) ---------------------------------


def _hf() -> tuple[Any, Any]:
    transformers = pytest.importorskip("transformers")
    tokenizers = pytest.importorskip("tokenizers")
    return transformers, tokenizers


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    _hf()  # skip before training where the references are missing
    lines = _corpus()
    root = tmp_path_factory.mktemp("tok")
    bert = BertTokenizer.train(lines, vocab_size=3000)
    gpt = GPT2Tokenizer.train(lines, vocab_size=3000)
    bert.save_pretrained(root / "bert")
    gpt.save_pretrained(root / "gpt")
    return {"lines": lines, "root": root, "bert": bert, "gpt": gpt}


@pytest.mark.parity
def test_bert_ids_and_decoding_match_transformers(trained: dict[str, Any]) -> None:
    transformers, tokenizers = _hf()
    from transformers.models.bert.tokenization_bert_legacy import BertTokenizerLegacy

    ours, path = trained["bert"], trained["root"] / "bert"
    refs = {
        "BertTokenizer": transformers.BertTokenizer.from_pretrained(path),
        "BertTokenizerLegacy": BertTokenizerLegacy(vocab_file=str(path / "vocab.txt")),
    }
    raw = tokenizers.Tokenizer.from_file(str(path / "tokenizer.json"))
    fast = refs["BertTokenizer"]
    for text in WEIRD + trained["lines"][:800]:
        ids = ours(text)["input_ids"]
        for name, ref in refs.items():
            assert ids == ref(text)["input_ids"], (name, text)
        assert ids == raw.encode(text).ids, ("tokenizer.json", text)
        for kw in ({}, {"skip_special_tokens": True}, {"clean_up_tokenization_spaces": True}):
            assert ours.decode(ids, **kw) == fast.decode(ids, **kw), (kw, text)


@pytest.mark.parity
def test_gpt2_ids_decoding_and_pretokenizer_match(trained: dict[str, Any]) -> None:
    transformers, tokenizers = _hf()
    regex = pytest.importorskip("regex")
    pattern = regex.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+"""
                            r"""|\s+(?!\S)|\s+""")  # fmt: skip
    ours, path = trained["gpt"], trained["root"] / "gpt"
    ref = transformers.GPT2Tokenizer.from_pretrained(path)
    files = trained["root"] / "gpt-files"  # vocab.json and merges.txt only
    files.mkdir(exist_ok=True)
    for name in ("vocab.json", "merges.txt"):
        (files / name).write_bytes((path / name).read_bytes())
    from_files = transformers.GPT2Tokenizer.from_pretrained(files)
    raw = tokenizers.Tokenizer.from_file(str(path / "tokenizer.json"))
    for text in WEIRD + trained["lines"][:800]:
        assert pre_tokenize(text) == pattern.findall(text), text
        ids = ours(text)["input_ids"]
        assert ids == ref(text)["input_ids"] == from_files(text)["input_ids"], text
        assert ids == raw.encode(text).ids, ("tokenizer.json", text)
        assert ours.decode(ids) == ref.decode(ids), text


@pytest.mark.parity
def test_batch_encodings_match_transformers(trained: dict[str, Any]) -> None:
    transformers, _ = _hf()
    ours = trained["bert"]
    ref = transformers.BertTokenizer.from_pretrained(trained["root"] / "bert")
    first, second = WEIRD[:6], WEIRD[6:12]
    cases: list[dict[str, Any]] = [
        {"padding": True}, {"padding": True, "pad_to_multiple_of": 8},
        {"padding": "max_length", "max_length": 40, "truncation": True},
        {"truncation": True, "max_length": 17}, {"truncation": "only_first", "max_length": 30},
    ]  # fmt: skip
    for kwargs in cases:
        for pair in (None, second):
            assert dict(ours(first, pair, **kwargs)) == dict(ref(first, pair, **kwargs)), kwargs
    words = " ".join(f"w{i}" for i in range(12))
    for n1 in range(1, 13, 2):  # longest-first truncation of pairs: which side keeps the extra
        for n2 in range(1, 13, 3):
            a, b = words[: 3 * n1], words[: 3 * n2]
            for max_length in (6, 9, 12):
                got = ours(a, b, truncation=True, max_length=max_length)
                assert dict(got) == dict(ref(a, b, truncation=True, max_length=max_length))
    gpt = trained["gpt"]
    gref = transformers.GPT2Tokenizer.from_pretrained(trained["root"] / "gpt")
    gpt.pad_token = gpt.eos_token
    gref.pad_token = gref.eos_token
    for kwargs in (
        {"padding": True},
        {"padding": "max_length", "max_length": 5, "truncation": True},
    ):
        assert dict(gpt(first, **kwargs)) == dict(gref(first, **kwargs)), kwargs


@pytest.mark.parity
@pytest.mark.parametrize(("vocab_size", "min_frequency"), [(400, 2), (3000, 0)])
def test_bpe_trainer_matches_tokenizers(vocab_size: int, min_frequency: int) -> None:
    _, tokenizers = _hf()
    from tokenizers import models as tmodels
    from tokenizers import pre_tokenizers, trainers

    lines = _corpus()
    ref = tokenizers.Tokenizer(tmodels.BPE())
    ref.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=min_frequency,
                                  special_tokens=["<|endoftext|>"], show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())  # fmt: skip
    ref.train_from_iterator(lines, trainer)
    model = json.loads(ref.to_str())["model"]
    merges = [tuple(m) if isinstance(m, list) else tuple(m.split(" ")) for m in model["merges"]]
    ours = GPT2Tokenizer.train(lines, vocab_size=vocab_size, min_frequency=min_frequency)
    assert ours.vocab == model["vocab"]
    assert ours.merges == merges


@pytest.mark.parity
def test_wordpiece_trainer_agrees_with_tokenizers() -> None:
    """``tokenizers`` numbers the ``##`` letters in hash-map order, which changes from run to
    run (and with it the ties among merges): the special tokens and the alphabet agree exactly,
    the ``##`` letters as a set, and the learnt tokens mostly (two of its own runs differ)."""
    _, tokenizers = _hf()
    from tokenizers import models as tmodels
    from tokenizers import normalizers, pre_tokenizers, trainers

    lines = _corpus()
    ref = tokenizers.Tokenizer(tmodels.WordPiece(unk_token="[UNK]"))
    ref.normalizer = normalizers.BertNormalizer(lowercase=True)
    ref.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    ref.train_from_iterator(lines, trainers.WordPieceTrainer(
        vocab_size=1000, min_frequency=2, limit_alphabet=1000, special_tokens=SPECIALS,
        show_progress=False))  # fmt: skip
    theirs = sorted(ref.get_vocab().items(), key=lambda kv: kv[1])
    ours = list(BertTokenizer.train(lines, vocab_size=1000).get_vocab().items())
    assert len(ours) == len(theirs) == 1000
    alphabet = 5 + len(
        {c for t, _ in theirs[5:] for c in t if not t.startswith("##")} & {t for t, _ in theirs}
    )  # the specials and the single letters come first
    assert ours[:alphabet] == theirs[:alphabet]
    letters = {t for t, _ in ours if t.startswith("##") and len(t) == 3}
    assert letters == {t for t, _ in theirs if t.startswith("##") and len(t) == 3}
    assert len({t for t, _ in ours} & {t for t, _ in theirs}) >= 0.95 * 1000


@pytest.mark.parity
def test_gpt2_padding_mask_matches_transformers() -> None:
    transformers, _ = _hf()
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    config = transformers.GPT2Config(vocab_size=50, n_positions=16, n_embd=32, n_layer=2,
                                     n_head=4, bos_token_id=0, eos_token_id=0)  # fmt: skip
    ref = transformers.GPT2LMHeadModel(config).eval()
    model = models.GPT2LMHeadModel(vocab_size=50, n_positions=16, n_embd=32, n_layer=2,
                                   n_head=4).eval()  # fmt: skip
    model.load_state_dict({k: lucid.tensor(v.numpy()) for k, v in ref.state_dict().items()})
    ids = np.random.default_rng(0).integers(1, 50, (2, 10))
    mask = np.array([[1] * 10, [1] * 6 + [0] * 4])  # right padding
    with torch.no_grad():
        expected = ref(torch.tensor(ids), attention_mask=torch.tensor(mask)).logits.numpy()
    with lucid.no_grad():
        got = model(lucid.tensor(ids), attention_mask=lucid.tensor(mask)).numpy()
    keep = mask.astype(bool)  # padded positions' outputs are not used
    np.testing.assert_allclose(got[keep], expected[keep], rtol=1e-4, atol=1e-5)  # float32


@pytest.mark.parity
def test_gpt2_add_prefix_space_matches_transformers(tmp_path: Path) -> None:
    transformers, _ = _hf()
    ours = GPT2Tokenizer.train(_corpus(500), vocab_size=600, add_prefix_space=True)
    ours.save_pretrained(tmp_path)
    ref = transformers.GPT2Tokenizer.from_pretrained(tmp_path)
    for text in [*WEIRD, "hello", " hello", "\thi"]:
        assert ours(text)["input_ids"] == ref(text)["input_ids"], text
