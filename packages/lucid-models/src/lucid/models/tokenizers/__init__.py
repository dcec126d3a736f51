"""Tokenizers for the zoo's language models, in pure Python (no compiled dependency):

- :class:`BertTokenizer` (WordPiece, with BERT's basic tokenizer) and :class:`WordPieceTrainer`;
- :class:`GPT2Tokenizer` (byte-level BPE, with GPT-2's pre-tokenizer) and :class:`BpeTrainer`.

They give the ids ``transformers``' ``BertTokenizer`` and ``GPT2Tokenizer`` give on the same
vocabulary files, read and write those files (``vocab.txt``; ``vocab.json`` + ``merges.txt``;
``tokenizer.json``), and encode batches with padding, truncation, attention masks and token
types, as lucid tensors with ``return_tensors="lucid"`` (or ``"pt"``).

>>> from lucid.models.tokenizers import BertTokenizer
>>> tok = BertTokenizer.train(open("corpus.txt"), vocab_size=8000)
>>> batch = tok(["Hello, world!", "A second line."], padding=True, return_tensors="lucid")
>>> batch["input_ids"].shape, batch["attention_mask"].shape
"""

from __future__ import annotations

from lucid.models.tokenizers._base import BatchEncoding, PreTrainedTokenizer
from lucid.models.tokenizers.bpe import (
    BpeTrainer,
    GPT2Tokenizer,
    bytes_to_unicode,
    pre_tokenize,
)
from lucid.models.tokenizers.wordpiece import (
    BasicTokenizer,
    BertTokenizer,
    WordpieceTokenizer,
    WordPieceTrainer,
)

__all__ = [
    "BasicTokenizer",
    "BatchEncoding",
    "BertTokenizer",
    "BpeTrainer",
    "GPT2Tokenizer",
    "PreTrainedTokenizer",
    "WordPieceTrainer",
    "WordpieceTokenizer",
    "bytes_to_unicode",
    "pre_tokenize",
]
