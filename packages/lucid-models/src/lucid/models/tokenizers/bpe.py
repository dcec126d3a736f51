"""GPT-2's byte-level BPE tokenizer, as ``transformers``' ``GPT2Tokenizer``: text split by GPT-2's
pre-tokenizer pattern, each piece's UTF-8 bytes mapped to printable characters
(:func:`bytes_to_unicode`), then merged by rank (``merges.txt``); and :class:`BpeTrainer`, with
the semantics of ``tokenizers``' ``BpeTrainer``.

The pre-tokenizer pattern, ``'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|
\\s+(?!\\S)|\\s+``, needs Unicode classes that Python's ``re`` lacks; :func:`pre_tokenize` scans
the text with the same alternation order (``unicodedata`` gives the letter and number classes),
so no compiled ``regex`` module is needed.
"""

from __future__ import annotations

import functools
import heapq
import json
import os
import sys
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from lucid.models.tokenizers._base import PreTrainedTokenizer

Pair = tuple[int, int]
_CONTRACTIONS = ("s", "t", "re", "ve", "m", "ll", "d")


@functools.lru_cache(maxsize=1)
def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's map of the 256 byte values to printable characters: the printable Latin-1
    bytes map to themselves, the others (controls, space, ...) to U+0100 onwards, in order."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1),
                 *range(ord("®"), ord("ÿ") + 1)]  # fmt: skip
    chars = printable[:]
    extra = 0
    for b in range(256):
        if b not in printable:
            printable.append(b)
            chars.append(256 + extra)
            extra += 1
    return {b: chr(c) for b, c in zip(printable, chars)}


def _is_space(char: str) -> bool:
    # Unicode White_Space, which the pattern's \s means: str.isspace() less U+001C..U+001F
    return char.isspace() and not "\x1c" <= char <= "\x1f"


def _kind(char: str) -> str:
    """``"s"`` (whitespace), ``"L"`` (letter), ``"N"`` (number) or ``"o"`` (anything else)."""
    if _is_space(char):
        return "s"
    major = unicodedata.category(char)[0]
    return major if major in "LN" else "o"


def pre_tokenize(text: str) -> list[str]:
    """GPT-2's pre-tokenizer: the matches of its pattern, in order (they cover ``text``)."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if char == "'":
            hit = next((c for c in _CONTRACTIONS if text.startswith(c, i + 1)), None)
            if hit is not None:
                out.append("'" + hit)
                i += 1 + len(hit)
                continue
        # " ?\p{L}+", " ?\p{N}+", " ?[^\s\p{L}\p{N}]+": an optional space, then a run of a kind
        start = i + 1 if char == " " and i + 1 < n else i
        kind = _kind(text[start])
        if kind != "s":
            end = start + 1
            while end < n and _kind(text[end]) == kind:
                end += 1
            out.append(text[i:end])
            i = end
            continue
        # "\s+(?!\S)" (all of a final run, else the run less its last character), then "\s+"
        end = i + 1
        while end < n and _is_space(text[end]):
            end += 1
        if end < n and end - i > 1:
            end -= 1
        out.append(text[i:end])
        i = end
    return out


def byte_level(piece: str) -> str:
    """A piece's UTF-8 bytes as GPT-2's printable characters."""
    table = bytes_to_unicode()
    return "".join(table[b] for b in piece.encode("utf-8"))


def load_merges(path: str | os.PathLike[str]) -> list[tuple[str, str]]:
    """A ``merges.txt``: an optional ``#version`` line, then one ``left right`` pair a line."""
    merges: list[tuple[str, str]] = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f):
            line = line.rstrip("\n")
            if (number == 0 and line.startswith("#version")) or not line:
                continue
            left, sep, right = line.partition(" ")
            if not sep or not right or " " in right:
                raise ValueError(f"{path}:{number + 1}: expected 'left right', got {line!r}")
            merges.append((left, right))
    return merges


class GPT2Tokenizer(PreTrainedTokenizer):
    """GPT-2's byte-level BPE tokenizer (``transformers``' ``GPT2Tokenizer``). Every text
    encodes (no unknown token); no special tokens are added; ``<|endoftext|>`` written in a
    text stays one token. There is no pad token unless one is set
    (``tokenizer.pad_token = tokenizer.eos_token``) or given.

    Build it from a vocabulary and merges (dicts and lists, or ``vocab.json`` and
    ``merges.txt`` paths), load one saved by either library (:meth:`from_pretrained`), or train
    one (:meth:`train`).
    """

    def __init__(self, vocab: Mapping[str, int] | str | os.PathLike[str],
                 merges: Sequence[tuple[str, str]] | str | os.PathLike[str],
                 errors: str = "replace", unk_token: str | None = "<|endoftext|>",
                 bos_token: str | None = "<|endoftext|>",
                 eos_token: str | None = "<|endoftext|>", pad_token: str | None = None,
                 add_prefix_space: bool = False, model_max_length: int = 1024) -> None:  # fmt: skip
        if not isinstance(vocab, Mapping):
            vocab = json.loads(Path(vocab).read_text(encoding="utf-8"))
            assert isinstance(vocab, dict)
        if isinstance(merges, (str, os.PathLike)):
            merges = load_merges(merges)
        super().__init__(vocab, model_max_length, unk_token=unk_token, bos_token=bos_token,
                         eos_token=eos_token, pad_token=pad_token)  # fmt: skip
        self.merges = [tuple(m) for m in merges]
        self.bpe_ranks: dict[tuple[str, str], int] = {
            (a, b): rank for rank, (a, b) in enumerate(self.merges)
        }
        self.errors = errors
        self.add_prefix_space = add_prefix_space
        self.byte_decoder = {c: b for b, c in bytes_to_unicode().items()}
        self._cache: dict[str, list[str]] = {}

    def bpe(self, piece: str) -> list[str]:
        """The BPE tokens of one byte-level piece: the lowest-ranked adjacent pair merged,
        everywhere in the piece, until no pair of the merges is left."""
        cached = self._cache.get(piece)
        if cached is not None:
            return cached
        word = list(piece)
        while len(word) > 1:
            ranked = [(self.bpe_ranks.get(p, sys.maxsize), p) for p in zip(word, word[1:])]
            rank, (first, second) = min(ranked)
            if rank == sys.maxsize:
                break
            merged: list[str] = []
            i = 0
            while i < len(word):
                if i < len(word) - 1 and word[i] == first and word[i + 1] == second:
                    merged.append(first + second)
                    i += 2
                else:
                    merged.append(word[i])
                    i += 1
            word = merged
        if len(self._cache) < 100_000:
            self._cache[piece] = word
        return word

    def _tokenize(self, text: str) -> list[str]:
        if self.add_prefix_space and not text.startswith(" "):  # as the byte-level pre-tokenizer
            text = " " + text
        tokens: list[str] = []
        for piece in pre_tokenize(text):
            tokens.extend(self.bpe(byte_level(piece)))
        return tokens

    def convert_tokens_to_string(self, tokens: Sequence[str]) -> str:
        """The bytes the tokens stand for, decoded as UTF-8 (``errors`` for broken ones)."""
        data = bytearray()
        for token in tokens:
            if token in self.vocab and all(c in self.byte_decoder for c in token):
                data += bytes(self.byte_decoder[c] for c in token)
            else:  # a special token outside the byte alphabet: its own text
                data += token.encode("utf-8")
        return data.decode("utf-8", errors=self.errors)

    # ---- files ------------------------------------------------------------------------
    def save_vocabulary(self, directory: str | os.PathLike[str]) -> tuple[str, str]:
        """Write ``vocab.json`` and ``merges.txt``."""
        root = Path(directory)
        vocab_path, merges_path = root / "vocab.json", root / "merges.txt"
        vocab_path.write_text(json.dumps(self.vocab, ensure_ascii=False), encoding="utf-8")
        lines = ["#version: 0.2"] + [f"{a} {b}" for a, b in self.merges]
        merges_path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return str(vocab_path), str(merges_path)

    def save_pretrained(self, directory: str | os.PathLike[str]) -> tuple[str, ...]:
        """Write ``vocab.json``, ``merges.txt``, ``tokenizer.json`` (the ``tokenizers`` format)
        and ``tokenizer_config.json``."""
        Path(directory).mkdir(parents=True, exist_ok=True)
        files = self.save_vocabulary(directory)
        specials = sorted({t for t in self.all_special_tokens if t in self.vocab},
                          key=self.vocab.__getitem__)  # fmt: skip
        byte_level_options = {"add_prefix_space": self.add_prefix_space, "trim_offsets": True,
                              "use_regex": True}  # fmt: skip
        data = {
            "version": "1.0", "truncation": None, "padding": None,
            "added_tokens": [{"id": self.vocab[t], "content": t, "single_word": False,
                              "lstrip": False, "rstrip": False, "normalized": True,
                              "special": True} for t in specials],
            "normalizer": None,
            "pre_tokenizer": {"type": "ByteLevel", **byte_level_options},
            "post_processor": {"type": "ByteLevel", **byte_level_options, "trim_offsets": False},
            "decoder": {"type": "ByteLevel", **byte_level_options},
            "model": {"type": "BPE", "dropout": None, "unk_token": None,
                      "continuing_subword_prefix": "", "end_of_word_suffix": "",
                      "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                      "vocab": self.vocab, "merges": [list(m) for m in self.merges]},
        }  # fmt: skip
        tok_json = Path(directory) / "tokenizer.json"
        tok_json.write_text(json.dumps(data, ensure_ascii=False, indent=2), encoding="utf-8")
        config = {"tokenizer_class": "GPT2Tokenizer", "model_max_length": self.model_max_length,
                  "add_prefix_space": self.add_prefix_space, "errors": self.errors,
                  "unk_token": self.unk_token, "bos_token": self.bos_token,
                  "eos_token": self.eos_token, "pad_token": self.pad_token}  # fmt: skip
        cfg = Path(directory) / "tokenizer_config.json"
        cfg.write_text(json.dumps(config, indent=2), encoding="utf-8")
        return (*files, str(tok_json), str(cfg))

    @classmethod
    def from_pretrained(cls, directory: str | os.PathLike[str], **kwargs: Any) -> GPT2Tokenizer:
        """Load ``vocab.json`` + ``merges.txt`` (or, without them, ``tokenizer.json``'s BPE
        model) and ``tokenizer_config.json``'s options when present; ``kwargs`` override."""
        root = Path(directory)
        options: dict[str, Any] = {}
        cfg = root / "tokenizer_config.json"
        if cfg.is_file():
            raw = json.loads(cfg.read_text(encoding="utf-8"))
            names = ("model_max_length", "add_prefix_space", "errors", "unk_token", "bos_token",
                     "eos_token", "pad_token")  # fmt: skip
            options = {k: raw[k] for k in names if k in raw and not isinstance(raw[k], dict)}
            if options.get("model_max_length", 0) > 10**9:  # transformers' "no limit"
                options.pop("model_max_length")
        vocab: Any
        merges: Any
        if (root / "vocab.json").is_file() and (root / "merges.txt").is_file():
            vocab, merges = root / "vocab.json", root / "merges.txt"
        elif (root / "tokenizer.json").is_file():
            data = json.loads((root / "tokenizer.json").read_text(encoding="utf-8"))
            model = data.get("model", {})
            if model.get("type") != "BPE":
                raise ValueError(f"{root / 'tokenizer.json'}: expected a BPE model, "
                                 f"got {model.get('type')!r}")  # fmt: skip
            vocab = model["vocab"]
            merges = [tuple(m.split(" ", 1)) if isinstance(m, str) else tuple(m)
                      for m in model["merges"]]  # fmt: skip
        else:
            raise FileNotFoundError(f"{root}: expected vocab.json and merges.txt, "
                                    "or tokenizer.json")  # fmt: skip
        options.update(kwargs)
        return cls(vocab, merges, **options)

    # ---- training ---------------------------------------------------------------------
    @classmethod
    def train(cls, texts: Iterable[str], vocab_size: int = 30000, min_frequency: int = 2,
              special_tokens: Sequence[str] = ("<|endoftext|>",),
              **kwargs: Any) -> GPT2Tokenizer:  # fmt: skip
        """A byte-level BPE learnt from ``texts`` by :class:`BpeTrainer` on GPT-2's pieces,
        with all 256 byte characters in the alphabet (``tokenizers``'
        ``ByteLevelBPETokenizer.train``'s defaults)."""
        trainer = BpeTrainer(vocab_size, min_frequency, special_tokens,
                             initial_alphabet=bytes_to_unicode().values())  # fmt: skip
        vocab, merges = trainer.train([byte_level(p) for p in pre_tokenize(t)] for t in texts)
        return cls(vocab, merges, **kwargs)


class BpeTrainer:
    """Learns a BPE vocabulary and merges, as ``tokenizers``' ``BpeTrainer``.

    The vocabulary starts with ``special_tokens``, then the alphabet (the characters of the
    words, plus ``initial_alphabet``; with ``limit_alphabet``, the rarest are dropped) in code
    point order; with ``continuing_subword_prefix`` the letters that do not start a word get
    it. Then the most frequent adjacent pair (counted over the words, each weighted by how
    often it occurs; ties go to the pair of smaller ids) is merged into a new token, until the
    vocabulary has ``vocab_size`` tokens or no pair occurs ``min_frequency`` times. The counts
    are kept up to date as ``tokenizers`` keeps them (each merge's changes to its neighbours).
    """

    def __init__(self, vocab_size: int = 30000, min_frequency: int = 0,
                 special_tokens: Sequence[str] = (), limit_alphabet: int | None = None,
                 initial_alphabet: Iterable[str] = (),
                 continuing_subword_prefix: str | None = None,
                 end_of_word_suffix: str | None = None) -> None:  # fmt: skip
        if vocab_size < 1:
            raise ValueError(f"vocab_size must be positive, got {vocab_size}")
        self.vocab_size = vocab_size
        self.min_frequency = min_frequency
        self.special_tokens = list(special_tokens)
        self.limit_alphabet = limit_alphabet
        self.initial_alphabet = list(initial_alphabet)
        self.prefix = continuing_subword_prefix
        self.suffix = end_of_word_suffix

    def train(self, texts: Iterable[Sequence[str]]) -> tuple[dict[str, int], list[tuple[str, str]]]:
        """The vocabulary and the merges (in rank order) learnt from ``texts``, each given as
        its list of words (pre-tokenized pieces)."""
        counts: dict[str, int] = {}
        for text_words in texts:
            for word in text_words:
                counts[word] = counts.get(word, 0) + 1
        w2id: dict[str, int] = {}
        id2w: list[str] = []

        def add(token: str) -> int:
            if token not in w2id:
                w2id[token] = len(id2w)
                id2w.append(token)
            return w2id[token]

        for token in self.special_tokens:
            add(token)
        for char in self._alphabet(counts):
            add(char)
        words: list[list[int]] = []
        weights: list[int] = []
        for word, count in counts.items():
            symbols = []
            for k, char in enumerate(word):
                if char not in w2id:
                    continue  # outside the (limited) alphabet
                token = char if k == 0 or not self.prefix else self.prefix + char
                if k == len(word) - 1 and self.suffix:
                    token += self.suffix
                symbols.append(add(token))
            words.append(symbols)
            weights.append(count)

        pair_counts: dict[Pair, int] = {}
        where: dict[Pair, set[int]] = {}
        for i, symbols in enumerate(words):
            for pair in zip(symbols, symbols[1:]):
                pair_counts[pair] = pair_counts.get(pair, 0) + weights[i]
                where.setdefault(pair, set()).add(i)
        heap: list[tuple[int, int, int, int, set[int]]] = []
        serial = 0

        def push(count: int, pair: Pair, positions: set[int]) -> None:
            nonlocal serial
            # the most frequent first, then the smaller pair (tokenizers' Merge ordering)
            heapq.heappush(heap, (-count, pair[0], pair[1], serial, positions))
            serial += 1

        for pair, positions in where.items():
            if pair_counts[pair] > 0:
                push(pair_counts[pair], pair, positions)
        merges: list[tuple[Pair, int]] = []
        while len(w2id) < self.vocab_size and heap:
            neg, a, b, _, positions = heapq.heappop(heap)
            if -neg != pair_counts[(a, b)]:  # a stale count: back in the queue, up to date
                push(pair_counts[(a, b)], (a, b), positions)
                continue
            if -neg < 1 or self.min_frequency > -neg:
                break
            right = id2w[b]
            if self.prefix and right.startswith(self.prefix):
                right = right[len(self.prefix) :]
            new_id = add(id2w[a] + right)
            merges.append(((a, b), new_id))
            fresh: dict[Pair, set[int]] = {}
            for i in positions:
                for pair, change in _merge_word(words[i], a, b, new_id):
                    pair_counts[pair] = pair_counts.get(pair, 0) + change * weights[i]
                    if change > 0:
                        fresh.setdefault(pair, set()).add(i)
            for pair, where_new in fresh.items():
                if pair_counts[pair] > 0:
                    push(pair_counts[pair], pair, where_new)
        # a pair merged twice keeps its last rank, as tokenizers' merge map does
        last = {pair: rank for rank, (pair, _) in enumerate(merges)}
        ordered = [pair for rank, (pair, _) in enumerate(merges) if last[pair] == rank]
        return w2id, [(id2w[a], id2w[b]) for a, b in ordered]

    def _alphabet(self, counts: Mapping[str, int]) -> list[str]:
        freq: dict[str, int] = {}
        for word, count in counts.items():
            for char in word:
                freq[char] = freq.get(char, 0) + count
        for char in self.initial_alphabet:
            freq[char] = sys.maxsize  # always kept
        kept = list(freq.items())
        if self.limit_alphabet is not None and len(kept) > self.limit_alphabet:
            kept.sort(key=lambda kv: (kv[1], ord(kv[0])))  # the rarest go first
            kept = kept[len(kept) - self.limit_alphabet :]
        return sorted((c for c, _ in kept), key=ord)


def _merge_word(symbols: list[int], a: int, b: int, new: int) -> list[tuple[Pair, int]]:
    """Merge every ``a b`` of ``symbols`` (left to right, in place) into ``new``; the pair
    count changes it makes around each merge."""
    changes: list[tuple[Pair, int]] = []
    i = 0
    while i < len(symbols):
        if symbols[i] == a and i + 1 < len(symbols) and symbols[i + 1] == b:
            if i > 0:
                changes += [((symbols[i - 1], a), -1), ((symbols[i - 1], new), 1)]
            symbols[i : i + 2] = [new]
            if i < len(symbols) - 1:
                changes += [((b, symbols[i + 1]), -1), ((new, symbols[i + 1]), 1)]
        i += 1
    return changes
