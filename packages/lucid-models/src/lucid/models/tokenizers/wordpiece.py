"""BERT's WordPiece tokenizer, as ``transformers``' ``BertTokenizer``: the basic tokenizer
(text cleaning, CJK characters split apart, lower-casing and accent stripping, punctuation split
off), then greedy longest-match-first WordPiece with ``##`` continuation pieces; and a trainer
with the semantics of ``tokenizers``' ``WordPieceTrainer`` (a BPE over characters whose
continuation pieces carry ``##``)."""

from __future__ import annotations

import json
import os
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from lucid.models.tokenizers._base import PreTrainedTokenizer
from lucid.models.tokenizers.bpe import BpeTrainer

BERT_SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")


def _is_whitespace(char: str) -> bool:
    if char in " \t\n\r":
        return True
    return unicodedata.category(char) == "Zs"


def _is_control(char: str) -> bool:
    if char in "\t\n\r":
        return False
    return unicodedata.category(char).startswith("C")


def _is_punctuation(char: str) -> bool:
    cp = ord(char)
    # every non-letter, non-digit ASCII character counts ("^", "$", "`" are not Unicode P*)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(char).startswith("P")


def _is_chinese_char(cp: int) -> bool:
    return (0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2A6DF
            or 0x2A700 <= cp <= 0x2B73F or 0x2B740 <= cp <= 0x2B81F or 0x2B820 <= cp <= 0x2CEAF
            or 0xF900 <= cp <= 0xFAFF or 0x2F800 <= cp <= 0x2FA1F)  # fmt: skip


class BasicTokenizer:
    """Whitespace and punctuation splitting with BERT's normalisation, as ``transformers``'
    ``BasicTokenizer``: drops NUL, U+FFFD and control characters, maps whitespace to spaces,
    puts spaces around CJK ideographs, NFC-normalises, lower-cases and strips accents (NFD
    without combining marks; ``strip_accents`` follows ``do_lower_case`` unless given), and
    splits every punctuation character into a token of its own. ``never_split`` tokens stay
    whole."""

    def __init__(self, do_lower_case: bool = True, never_split: Iterable[str] | None = None,
                 tokenize_chinese_chars: bool = True, strip_accents: bool | None = None,
                 do_split_on_punc: bool = True) -> None:  # fmt: skip
        self.do_lower_case = do_lower_case
        self.never_split = set(never_split or ())
        self.tokenize_chinese_chars = tokenize_chinese_chars
        self.strip_accents = strip_accents
        self.do_split_on_punc = do_split_on_punc

    def normalize(self, text: str) -> str:
        """The cleaned text (control characters dropped, whitespace as spaces, CJK spaced)."""
        out = []
        for char in text:
            cp = ord(char)
            if cp == 0 or cp == 0xFFFD or _is_control(char):
                continue
            if _is_whitespace(char):
                out.append(" ")
            elif self.tokenize_chinese_chars and _is_chinese_char(cp):
                out.extend((" ", char, " "))
            else:
                out.append(char)
        return unicodedata.normalize("NFC", "".join(out))

    def tokenize(self, text: str, never_split: Iterable[str] | None = None) -> list[str]:
        """The basic tokens of ``text``."""
        keep = self.never_split.union(never_split) if never_split else self.never_split
        tokens: list[str] = []
        for token in self.normalize(text).split():
            if token not in keep:
                if self.do_lower_case:
                    token = token.lower()
                    if self.strip_accents is not False:
                        token = _strip_accents(token)
                elif self.strip_accents:
                    token = _strip_accents(token)
            tokens.extend(self._split_on_punc(token, keep))
        return " ".join(tokens).split()

    def _split_on_punc(self, text: str, keep: set[str]) -> list[str]:
        if not self.do_split_on_punc or text in keep:
            return [text]
        pieces: list[list[str]] = []
        new_piece = True
        for char in text:
            if _is_punctuation(char):
                pieces.append([char])
                new_piece = True
            else:
                if new_piece:
                    pieces.append([])
                new_piece = False
                pieces[-1].append(char)
        return ["".join(p) for p in pieces]


def _strip_accents(text: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFD", text) if unicodedata.category(c) != "Mn")


class WordpieceTokenizer:
    """Greedy longest-match-first WordPiece: each word becomes the longest vocabulary prefix,
    then the longest ``##``-prefixed piece of the rest, and so on; a word with no such split (or
    longer than ``max_input_chars_per_word``) becomes the unknown token."""

    def __init__(self, vocab: Mapping[str, int], unk_token: str,
                 max_input_chars_per_word: int = 100, prefix: str = "##") -> None:  # fmt: skip
        self.vocab = vocab
        self.unk_token = unk_token
        self.max_input_chars_per_word = max_input_chars_per_word
        self.prefix = prefix

    def tokenize(self, text: str) -> list[str]:
        """The WordPiece tokens of the whitespace-separated words of ``text``."""
        out: list[str] = []
        for word in text.split():
            if len(word) > self.max_input_chars_per_word:
                out.append(self.unk_token)
                continue
            pieces: list[str] = []
            start = 0
            while start < len(word):
                end = len(word)
                piece = None
                while start < end:
                    sub = word[start:end] if start == 0 else self.prefix + word[start:end]
                    if sub in self.vocab:
                        piece = sub
                        break
                    end -= 1
                if piece is None:
                    pieces = [self.unk_token]
                    break
                pieces.append(piece)
                start = end
            out.extend(pieces)
        return out


def load_vocab(path: str | os.PathLike[str]) -> dict[str, int]:
    """A ``vocab.txt`` (one token a line; the line number is the id)."""
    vocab: dict[str, int] = {}
    with open(path, encoding="utf-8") as f:
        for index, line in enumerate(f):
            vocab[line.rstrip("\n")] = index
    return vocab


class BertTokenizer(PreTrainedTokenizer):
    """BERT's tokenizer (``transformers``' ``BertTokenizer``): :class:`BasicTokenizer`, then
    :class:`WordpieceTokenizer`; ``[CLS] A [SEP]`` and ``[CLS] A [SEP] B [SEP]`` with token
    types 0 then 1.

    Build it from a vocabulary (``BertTokenizer(vocab)``, a dict or a ``vocab.txt`` path), load
    one saved by either library (:meth:`from_pretrained`: ``vocab.txt`` or ``tokenizer.json``),
    or train one on text (:meth:`train`).

    >>> tok = BertTokenizer.train(["Hello, world!", "hello there"], vocab_size=60)
    >>> enc = tok(["Hello, world!", "hi"], padding=True, return_tensors="lucid")
    >>> logits = bert_model(**enc)
    """

    model_input_names = ("input_ids", "token_type_ids", "attention_mask")

    def __init__(self, vocab: Mapping[str, int] | str | os.PathLike[str],
                 do_lower_case: bool = True, do_basic_tokenize: bool = True,
                 never_split: Iterable[str] | None = None, unk_token: str = "[UNK]",
                 sep_token: str = "[SEP]", pad_token: str = "[PAD]", cls_token: str = "[CLS]",
                 mask_token: str = "[MASK]", tokenize_chinese_chars: bool = True,
                 strip_accents: bool | None = None, model_max_length: int = 512,
                 max_input_chars_per_word: int = 100) -> None:  # fmt: skip
        if not isinstance(vocab, Mapping):
            vocab = load_vocab(vocab)
        specials = {"unk_token": unk_token, "sep_token": sep_token, "pad_token": pad_token,
                    "cls_token": cls_token, "mask_token": mask_token}  # fmt: skip
        super().__init__(vocab, model_max_length, **specials)
        self.do_lower_case = do_lower_case
        self.do_basic_tokenize = do_basic_tokenize
        self.basic_tokenizer = BasicTokenizer(do_lower_case, never_split,
                                              tokenize_chinese_chars, strip_accents)  # fmt: skip
        self.wordpiece_tokenizer = WordpieceTokenizer(self.vocab, unk_token,
                                                      max_input_chars_per_word)  # fmt: skip

    def _tokenize(self, text: str) -> list[str]:
        if not self.do_basic_tokenize:
            return self.wordpiece_tokenizer.tokenize(text)
        out: list[str] = []
        for token in self.basic_tokenizer.tokenize(text):
            if token in self.basic_tokenizer.never_split:
                out.append(token)
            else:
                out.extend(self.wordpiece_tokenizer.tokenize(token))
        return out

    def convert_tokens_to_string(self, tokens: Sequence[str]) -> str:
        """Tokens joined as ``tokenizers``' WordPiece decoder joins them: a ``##`` piece glued
        to the one before, any other token after a space, and no space before a token that is
        one of ``. ? ! ,``."""
        out = []
        for i, token in enumerate(tokens):
            if i:
                token = token[2:] if token.startswith("##") else " " + token
            out.append(token[1:] if token in (" .", " ?", " !", " ,") else token)
        return "".join(out)

    def build_inputs_with_special_tokens(self, ids: list[int],
                                         pair: list[int] | None = None) -> list[int]:  # fmt: skip
        """``[CLS] ids [SEP]`` or ``[CLS] ids [SEP] pair [SEP]``."""
        if self.cls_token_id is None or self.sep_token_id is None:
            raise ValueError(f"BertTokenizer: the vocabulary has no {self.cls_token!r} or "
                             f"{self.sep_token!r} token; encode with add_special_tokens=False "
                             "or add them to the vocabulary")  # fmt: skip
        cls, sep = [self.cls_token_id], [self.sep_token_id]
        return cls + ids + sep + (pair + sep if pair is not None else [])

    def create_token_type_ids_from_sequences(
        self, ids: list[int], pair: list[int] | None = None
    ) -> list[int]:
        """0 over ``[CLS] ids [SEP]``, 1 over ``pair [SEP]``."""
        return [0] * (len(ids) + 2) + ([1] * (len(pair) + 1) if pair is not None else [])

    # ---- files ------------------------------------------------------------------------
    def save_vocabulary(self, directory: str | os.PathLike[str]) -> tuple[str]:
        """Write ``vocab.txt`` (ids in order, one token a line)."""
        path = Path(directory) / "vocab.txt"
        tokens = [self.ids_to_tokens[i] for i in range(len(self.vocab))]
        path.write_text("".join(t + "\n" for t in tokens), encoding="utf-8")
        return (str(path),)

    def save_pretrained(self, directory: str | os.PathLike[str]) -> tuple[str, ...]:
        """Write ``vocab.txt``, ``tokenizer.json`` (the ``tokenizers`` format, which
        ``tokenizers.Tokenizer.from_file`` loads) and ``tokenizer_config.json``."""
        Path(directory).mkdir(parents=True, exist_ok=True)
        files = self.save_vocabulary(directory)
        named = (self.pad_token, self.unk_token, self.cls_token, self.sep_token, self.mask_token)
        specials = sorted((t for t in named if t is not None and t in self.vocab),
                          key=self.vocab.__getitem__)  # fmt: skip
        cls, sep = self.cls_token, self.sep_token
        data = {
            "version": "1.0", "truncation": None, "padding": None,
            "added_tokens": [{"id": self.vocab[t], "content": t, "single_word": False,
                              "lstrip": False, "rstrip": False, "normalized": False,
                              "special": True} for t in specials],
            "normalizer": {"type": "BertNormalizer", "clean_text": True,
                           "handle_chinese_chars": self.basic_tokenizer.tokenize_chinese_chars,
                           "strip_accents": self.basic_tokenizer.strip_accents,
                           "lowercase": self.do_lower_case},
            "pre_tokenizer": {"type": "BertPreTokenizer"},
            "post_processor": {
                "type": "TemplateProcessing",
                "single": [{"SpecialToken": {"id": cls, "type_id": 0}},
                           {"Sequence": {"id": "A", "type_id": 0}},
                           {"SpecialToken": {"id": sep, "type_id": 0}}],
                "pair": [{"SpecialToken": {"id": cls, "type_id": 0}},
                         {"Sequence": {"id": "A", "type_id": 0}},
                         {"SpecialToken": {"id": sep, "type_id": 0}},
                         {"Sequence": {"id": "B", "type_id": 1}},
                         {"SpecialToken": {"id": sep, "type_id": 1}}],
                "special_tokens": {t: {"id": t, "ids": [self.vocab[t]], "tokens": [t]}
                                   for t in (cls, sep)},
            },
            "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
            "model": {"type": "WordPiece", "unk_token": self.unk_token,
                      "continuing_subword_prefix": "##",
                      "max_input_chars_per_word":
                          self.wordpiece_tokenizer.max_input_chars_per_word,
                      "vocab": self.vocab},
        }  # fmt: skip
        tok_json = Path(directory) / "tokenizer.json"
        tok_json.write_text(json.dumps(data, ensure_ascii=False, indent=2), encoding="utf-8")
        config = {"tokenizer_class": "BertTokenizer", "do_lower_case": self.do_lower_case,
                  "model_max_length": self.model_max_length,
                  "strip_accents": self.basic_tokenizer.strip_accents,
                  "tokenize_chinese_chars": self.basic_tokenizer.tokenize_chinese_chars,
                  "unk_token": self.unk_token, "sep_token": sep, "pad_token": self.pad_token,
                  "cls_token": cls, "mask_token": self.mask_token}  # fmt: skip
        cfg = Path(directory) / "tokenizer_config.json"
        cfg.write_text(json.dumps(config, indent=2), encoding="utf-8")
        return (*files, str(tok_json), str(cfg))

    @classmethod
    def from_pretrained(cls, directory: str | os.PathLike[str], **kwargs: Any) -> BertTokenizer:
        """Load ``vocab.txt`` (or, without it, ``tokenizer.json``'s WordPiece vocabulary) and
        ``tokenizer_config.json``'s options when present; ``kwargs`` override them."""
        root = Path(directory)
        options: dict[str, Any] = {}
        cfg = root / "tokenizer_config.json"
        if cfg.is_file():
            raw = json.loads(cfg.read_text(encoding="utf-8"))
            names = ("do_lower_case", "model_max_length", "strip_accents",
                     "tokenize_chinese_chars", "unk_token", "sep_token", "pad_token",
                     "cls_token", "mask_token")  # fmt: skip
            options = {k: raw[k] for k in names if k in raw and not isinstance(raw[k], dict)}
            if options.get("model_max_length", 0) > 10**9:  # transformers' "no limit"
                options.pop("model_max_length")
        vocab: Mapping[str, int] | Path
        if (root / "vocab.txt").is_file():
            vocab = root / "vocab.txt"
        elif (root / "tokenizer.json").is_file():
            data = json.loads((root / "tokenizer.json").read_text(encoding="utf-8"))
            model = data.get("model", {})
            if model.get("type") != "WordPiece":
                raise ValueError(f"{root / 'tokenizer.json'}: expected a WordPiece model, "
                                 f"got {model.get('type')!r}")  # fmt: skip
            vocab = model["vocab"]
            norm = data.get("normalizer") or {}
            if norm.get("type") == "BertNormalizer":
                options.setdefault("do_lower_case", norm.get("lowercase", True))
                options.setdefault("strip_accents", norm.get("strip_accents"))
        else:
            raise FileNotFoundError(f"{root}: expected vocab.txt or tokenizer.json")
        options.update(kwargs)
        return cls(vocab, **options)

    # ---- training ---------------------------------------------------------------------
    @classmethod
    def train(cls, texts: Iterable[str], vocab_size: int = 30000, min_frequency: int = 2,
              limit_alphabet: int | None = 1000, special_tokens: Sequence[str] =
              BERT_SPECIAL_TOKENS, do_lower_case: bool = True,
              strip_accents: bool | None = None, **kwargs: Any) -> BertTokenizer:  # fmt: skip
        """A tokenizer whose vocabulary is learnt from ``texts`` by :class:`WordPieceTrainer`
        (the defaults are ``tokenizers``' ``BertWordPieceTokenizer.train``'s), on the words the
        basic tokenizer makes."""
        basic = BasicTokenizer(do_lower_case, strip_accents=strip_accents)
        trainer = WordPieceTrainer(vocab_size, min_frequency, special_tokens, limit_alphabet)
        vocab = trainer.train(basic.tokenize(t) for t in texts)
        return cls(vocab, do_lower_case=do_lower_case, strip_accents=strip_accents, **kwargs)


class WordPieceTrainer:
    """Learns a WordPiece vocabulary, as ``tokenizers``' ``WordPieceTrainer``: a BPE trainer
    (:class:`BpeTrainer`) on the words, with ``##`` on every piece that does not start a word;
    the vocabulary is BPE's (special tokens, the alphabet, the ``##`` letters, the merges).

    ``tokenizers`` numbers the ``##`` letters in the order of a hash map (a run-to-run order);
    here they come in the order the words are first seen, so the ids (and merge ties) can
    differ from its output while the rule is the same."""

    def __init__(self, vocab_size: int = 30000, min_frequency: int = 0,
                 special_tokens: Sequence[str] = (), limit_alphabet: int | None = None,
                 initial_alphabet: Iterable[str] = (),
                 continuing_subword_prefix: str = "##") -> None:  # fmt: skip
        self.bpe = BpeTrainer(vocab_size, min_frequency, special_tokens, limit_alphabet,
                              initial_alphabet, continuing_subword_prefix)  # fmt: skip

    def train(self, words: Iterable[Sequence[str]]) -> dict[str, int]:
        """The vocabulary (token -> id) learnt from ``words``, one list of words per text."""
        vocab, _ = self.bpe.train(words)
        return vocab
