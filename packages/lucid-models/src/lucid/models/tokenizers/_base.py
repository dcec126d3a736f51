"""The part of Hugging Face ``transformers``' tokenizer API that BERT's and GPT-2's tokenizers
share: special tokens, ``encode``/``decode``, batch encoding with padding, truncation, attention
masks and token types, and ``return_tensors``."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

import lucid

TensorType = str | None
_SPECIAL_NAMES = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token",
                  "mask_token")  # fmt: skip
_PADDING = {True: "longest", False: "do_not_pad", "longest": "longest",
            "max_length": "max_length", "do_not_pad": "do_not_pad"}  # fmt: skip
_TRUNCATION = {True: "longest_first", False: "do_not_truncate", "longest_first": "longest_first",
               "only_first": "only_first", "only_second": "only_second",
               "do_not_truncate": "do_not_truncate"}  # fmt: skip


class BatchEncoding(dict[str, Any]):
    """The tokenizer's output: a ``dict`` of ``input_ids``, ``attention_mask`` (and
    ``token_type_ids``), with attribute access (``enc.input_ids``), as ``transformers``' is.
    ``model(**enc)`` passes it to a model of the zoo."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def to(self, device: Any) -> BatchEncoding:
        """The tensors moved to ``device`` (lists and arrays stay as they are)."""
        return BatchEncoding(
            {k: v.to(device) if isinstance(v, lucid.Tensor) else v for k, v in self.items()}
        )


def _as_tensors(encoding: dict[str, Any], return_tensors: TensorType) -> BatchEncoding:
    if return_tensors is None:
        return BatchEncoding(encoding)
    if return_tensors not in ("lucid", "pt", "np"):
        raise ValueError(
            f"return_tensors must be 'lucid', 'pt' (lucid tensors too) or 'np', "
            f"got {return_tensors!r}"
        )
    out: dict[str, Any] = {}
    for key, value in encoding.items():
        rows = value if value and isinstance(value[0], list) else [value]
        if len({len(r) for r in rows}) > 1:
            raise ValueError(
                "Unable to create tensor, you should probably activate truncation and/or "
                "padding with 'padding=True' 'truncation=True' to have batched tensors with "
                f"the same length (the lengths of {key!r} are {sorted({len(r) for r in rows})})"
            )
        array = np.asarray(rows, dtype=np.int64)
        out[key] = array if return_tensors == "np" else lucid.tensor(array)
    return BatchEncoding(out)


class PreTrainedTokenizer:
    """A tokenizer with a vocabulary (token -> id) and special tokens; subclasses give
    ``_tokenize`` (text -> tokens), ``convert_tokens_to_string`` and the special-token layout
    (``build_inputs_with_special_tokens``, ``create_token_type_ids_from_sequences``).

    ``tokenizer(text)`` / ``tokenizer([text, ...])`` follow ``transformers``: ``text_pair``,
    ``add_special_tokens``, ``padding`` (``True``/``"longest"``, ``"max_length"``),
    ``truncation`` (``True``/``"longest_first"``, ``"only_first"``, ``"only_second"``),
    ``max_length``, ``pad_to_multiple_of``, ``return_tensors`` (``"lucid"`` or ``"pt"`` for lucid
    int64 tensors, ``"np"`` for arrays), ``return_attention_mask`` and
    ``return_token_type_ids``.
    """

    model_input_names: tuple[str, ...] = ("input_ids", "attention_mask")
    padding_side = "right"
    truncation_side = "right"

    def __init__(self, vocab: Mapping[str, int], model_max_length: int = 1024,
                 **special_tokens: str | None) -> None:  # fmt: skip
        self.vocab: dict[str, int] = dict(vocab)
        self.ids_to_tokens: dict[int, str] = {i: t for t, i in self.vocab.items()}
        self.model_max_length = model_max_length
        self._special: dict[str, str | None] = dict.fromkeys(_SPECIAL_NAMES)
        for name, token in special_tokens.items():
            if name not in _SPECIAL_NAMES:
                raise TypeError(f"{type(self).__name__}: unknown special token {name!r}; "
                                f"expected one of {', '.join(_SPECIAL_NAMES)}")  # fmt: skip
            self._special[name] = token
        self._split_pattern: re.Pattern[str] | None = None

    # ---- special tokens ---------------------------------------------------------------
    def __getattr__(self, name: str) -> Any:
        if name.endswith("_token_id") and name[: -len("_id")] in _SPECIAL_NAMES:
            token = self.__dict__["_special"][name[: -len("_id")]]
            return None if token is None else self.vocab.get(token)
        if name in _SPECIAL_NAMES:
            return self.__dict__["_special"][name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    @property
    def all_special_tokens(self) -> list[str]:
        """The special tokens, each once, in the order bos, eos, unk, sep, pad, cls, mask."""
        seen: list[str] = []
        for name in _SPECIAL_NAMES:
            token = self._special[name]
            if token is not None and token not in seen:
                seen.append(token)
        return seen

    @property
    def all_special_ids(self) -> list[int]:
        """The ids of :attr:`all_special_tokens` that are in the vocabulary."""
        return [self.vocab[t] for t in self.all_special_tokens if t in self.vocab]

    # ---- vocabulary -------------------------------------------------------------------
    @property
    def vocab_size(self) -> int:
        """The number of tokens in the vocabulary."""
        return len(self.vocab)

    def __len__(self) -> int:
        return len(self.vocab)

    def get_vocab(self) -> dict[str, int]:
        """A copy of the vocabulary, token -> id."""
        return dict(self.vocab)

    def convert_tokens_to_ids(self, tokens: str | Sequence[str]) -> Any:
        """The id of a token (the unknown token's id for one not in the vocabulary), or of each
        token of a list."""
        if isinstance(tokens, str):
            return self._token_to_id(tokens)
        return [self._token_to_id(t) for t in tokens]

    def _token_to_id(self, token: str) -> int:
        if token in self.vocab:
            return self.vocab[token]
        unk = self._special["unk_token"]
        if unk is None or unk not in self.vocab:
            raise KeyError(f"{type(self).__name__}: token {token!r} is not in the vocabulary "
                           "and there is no unknown token")  # fmt: skip
        return self.vocab[unk]

    def convert_ids_to_tokens(self, ids: int | Iterable[int],
                              skip_special_tokens: bool = False) -> Any:  # fmt: skip
        """The token of an id, or of each id of a list (``skip_special_tokens`` drops them)."""
        if isinstance(ids, int):
            return self._id_to_token(ids)
        special = set(self.all_special_ids) if skip_special_tokens else set()
        return [self._id_to_token(int(i)) for i in ids if int(i) not in special]

    def _id_to_token(self, index: int) -> str:
        try:
            return self.ids_to_tokens[index]
        except KeyError:
            raise IndexError(f"{type(self).__name__}: id {index} is not in the vocabulary "
                             f"(size {len(self.vocab)})") from None  # fmt: skip

    # ---- text -> tokens ---------------------------------------------------------------
    def _tokenize(self, text: str) -> list[str]:
        raise NotImplementedError

    def convert_tokens_to_string(self, tokens: Sequence[str]) -> str:
        """Tokens back to text."""
        raise NotImplementedError

    def tokenize(self, text: str) -> list[str]:
        """The tokens of ``text``; special tokens written in it stay whole."""
        if not isinstance(text, str):
            raise TypeError(f"{type(self).__name__}.tokenize: expected a str, "
                            f"got {type(text).__name__}")  # fmt: skip
        specials = self.all_special_tokens
        if not specials:
            return self._tokenize(text)
        if self._split_pattern is None:
            alternatives = sorted(specials, key=len, reverse=True)
            self._split_pattern = re.compile("(" + "|".join(map(re.escape, alternatives)) + ")")
        tokens: list[str] = []
        for i, piece in enumerate(self._split_pattern.split(text)):
            if i % 2:
                tokens.append(piece)
            elif piece:
                tokens.extend(self._tokenize(piece))
        return tokens

    # ---- special-token layout (overridden by BERT) ------------------------------------
    def build_inputs_with_special_tokens(self, ids: list[int],
                                         pair: list[int] | None = None) -> list[int]:  # fmt: skip
        """The ids with the model's special tokens added (none here)."""
        return ids + (pair or [])

    def create_token_type_ids_from_sequences(
        self, ids: list[int], pair: list[int] | None = None
    ) -> list[int]:
        """The segment of each position of :meth:`build_inputs_with_special_tokens`'s output."""
        return [0] * len(ids) + [1] * len(pair or [])

    def num_special_tokens_to_add(self, pair: bool = False) -> int:
        """How many special tokens encoding adds to one sequence (or a pair)."""
        return len(self.build_inputs_with_special_tokens([], [] if pair else None))

    # ---- encoding ---------------------------------------------------------------------
    def encode(
        self,
        text: str,
        text_pair: str | None = None,
        add_special_tokens: bool = True,
        truncation: bool | str = False,
        max_length: int | None = None,
    ) -> list[int]:
        """The ids of ``text`` (and ``text_pair``), with the special tokens."""
        enc = self(text, text_pair, add_special_tokens=add_special_tokens,
                   truncation=truncation, max_length=max_length)  # fmt: skip
        return list(enc["input_ids"])

    def __call__(
        self,
        text: str | Sequence[str],
        text_pair: str | Sequence[str] | None = None,
        *,
        add_special_tokens: bool = True,
        padding: bool | str = False,
        truncation: bool | str | None = None,
        max_length: int | None = None,
        pad_to_multiple_of: int | None = None,
        return_tensors: TensorType = None,
        return_attention_mask: bool | None = None,
        return_token_type_ids: bool | None = None,
    ) -> BatchEncoding:
        batched = not isinstance(text, str)
        if batched and not isinstance(text, (list, tuple)):
            raise TypeError(f"{type(self).__name__}: text must be a str or a list of str, "
                            f"got {type(text).__name__}")  # fmt: skip
        texts = [text] if isinstance(text, str) else list(text)
        pairs: list[str | None]
        if text_pair is None:
            pairs = [None] * len(texts)
        else:
            pairs = [text_pair] if isinstance(text_pair, str) else list(text_pair)
            if len(pairs) != len(texts):
                raise ValueError(f"{type(self).__name__}: {len(texts)} texts but "
                                 f"{len(pairs)} text pairs")  # fmt: skip
        if padding not in _PADDING:
            raise ValueError(f"padding must be True, False, 'longest', 'max_length' or "
                             f"'do_not_pad', got {padding!r}")  # fmt: skip
        if truncation is None:
            truncation = max_length is not None and padding != "max_length"
        if truncation not in _TRUNCATION:
            raise ValueError(f"truncation must be True, False, 'longest_first', 'only_first', "
                             f"'only_second' or 'do_not_truncate', got {truncation!r}")  # fmt: skip
        pad, trunc = _PADDING[padding], _TRUNCATION[truncation]
        if (trunc != "do_not_truncate" or pad == "max_length") and max_length is None:
            max_length = self.model_max_length
        want_types = ("token_type_ids" in self.model_input_names
                      if return_token_type_ids is None else return_token_type_ids)  # fmt: skip
        want_mask = True if return_attention_mask is None else return_attention_mask
        rows: list[dict[str, list[int]]] = []
        for a, b in zip(texts, pairs):
            ids = self.convert_tokens_to_ids(self.tokenize(a))
            pair_ids = self.convert_tokens_to_ids(self.tokenize(b)) if b is not None else None
            if trunc != "do_not_truncate":
                assert max_length is not None
                extra = self.num_special_tokens_to_add(pair_ids is not None)
                room = max_length - (extra if add_special_tokens else 0)
                ids, pair_ids = self._truncate(ids, pair_ids, room, trunc)
            if add_special_tokens:
                row = {
                    "input_ids": self.build_inputs_with_special_tokens(ids, pair_ids),
                    "token_type_ids": self.create_token_type_ids_from_sequences(ids, pair_ids),
                }
            else:
                row = {"input_ids": ids + (pair_ids or []),
                       "token_type_ids": [0] * len(ids) + [1] * len(pair_ids or [])}  # fmt: skip
            row["attention_mask"] = [1] * len(row["input_ids"])
            rows.append(row)
        if pad != "do_not_pad":
            target = max(len(r["input_ids"]) for r in rows) if pad == "longest" else max_length
            assert target is not None
            if pad_to_multiple_of and target % pad_to_multiple_of:
                target += pad_to_multiple_of - target % pad_to_multiple_of
            for row in rows:
                self._pad(row, target)
        keys = ["input_ids"] + (["token_type_ids"] if want_types else [])
        keys += ["attention_mask"] if want_mask else []
        out = {k: [r[k] for r in rows] if batched else rows[0][k] for k in keys}
        return _as_tensors(out, return_tensors)

    def _truncate(self, ids: list[int], pair: list[int] | None, room: int,
                  strategy: str) -> tuple[list[int], list[int] | None]:  # fmt: skip
        room = max(room, 0)
        excess = len(ids) + len(pair or []) - room
        if excess <= 0:
            return ids, pair
        if strategy == "only_second" and pair is None:
            raise ValueError("truncation='only_second' needs a text pair (text_pair=...)")
        if strategy == "longest_first" and pair is not None:
            # as tokenizers' longest-first: the shorter keeps up to half the room, the longer
            # (the second on a tie) the rest
            first_longer = len(ids) > len(pair)
            short = min(len(pair) if first_longer else len(ids), room // 2)
            long = min(len(ids) if first_longer else len(pair), room - short)
            n1, n2 = (long, short) if first_longer else (short, long)
            return self._cut(ids, n1), self._cut(pair, n2)
        if strategy == "only_second":
            assert pair is not None
            if excess > len(pair):
                raise ValueError(f"cannot truncate the second sequence ({len(pair)} tokens) "
                                 f"by {excess} tokens to fit max_length")  # fmt: skip
            return ids, self._cut(pair, len(pair) - excess)
        if excess > len(ids):
            raise ValueError(f"cannot truncate the first sequence ({len(ids)} tokens) by "
                             f"{excess} tokens to fit max_length")  # fmt: skip
        return self._cut(ids, len(ids) - excess), pair

    def _cut(self, ids: list[int], keep: int) -> list[int]:
        return ids[:keep] if self.truncation_side == "right" else ids[len(ids) - keep :]

    def _pad(self, row: dict[str, list[int]], target: int) -> None:
        missing = target - len(row["input_ids"])
        if missing <= 0:
            return
        pad_id = self.pad_token_id
        if pad_id is None:
            raise ValueError(f"{type(self).__name__}: padding needs a pad token; set one, e.g. "
                             "tokenizer.pad_token = tokenizer.eos_token")  # fmt: skip
        fill = {"input_ids": pad_id, "token_type_ids": 0, "attention_mask": 0}
        for key, value in fill.items():
            if self.padding_side == "right":
                row[key] = row[key] + [value] * missing
            else:
                row[key] = [value] * missing + row[key]

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _SPECIAL_NAMES:
            self._special[name] = value
            self._split_pattern = None
        else:
            super().__setattr__(name, value)

    # ---- decoding ---------------------------------------------------------------------
    def decode(self, ids: Any, skip_special_tokens: bool = False,
               clean_up_tokenization_spaces: bool | None = None) -> str:  # fmt: skip
        """The text of ``ids`` (a list, an array or a 1-d tensor)."""
        if isinstance(ids, lucid.Tensor):
            ids = ids.tolist()
        ids = np.asarray(ids).reshape(-1).tolist()
        text = self.convert_tokens_to_string(
            self.convert_ids_to_tokens(ids, skip_special_tokens=skip_special_tokens)
        )
        clean = (self.clean_up_tokenization_spaces if clean_up_tokenization_spaces is None
                 else clean_up_tokenization_spaces)  # fmt: skip
        return clean_up_tokenization(text) if clean else text

    #: whether :meth:`decode` applies :func:`clean_up_tokenization` (``transformers`` 5: no)
    clean_up_tokenization_spaces = False

    def batch_decode(self, sequences: Any, skip_special_tokens: bool = False,
                     clean_up_tokenization_spaces: bool | None = None) -> list[str]:  # fmt: skip
        """:meth:`decode` of each row."""
        if isinstance(sequences, lucid.Tensor):
            sequences = sequences.tolist()
        return [self.decode(s, skip_special_tokens, clean_up_tokenization_spaces)
                for s in sequences]  # fmt: skip


def clean_up_tokenization(text: str) -> str:
    """``transformers``' clean-up of decoded text: no space before ``. ? ! ,`` and English
    contractions."""
    for a, b in ((" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"),
                 (" n't", "n't"), (" 'm", "'m"), (" 's", "'s"), (" 've", "'ve"),
                 (" 're", "'re")):  # fmt: skip
        text = text.replace(a, b)
    return text
