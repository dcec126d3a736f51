"""``lucid.cuda.sparse``: ``torch.cuda.sparse``'s legacy types (``FloatTensor``...). Lucid has
no CUDA device: ``isinstance`` is False for every tensor and calling one raises TypeError, as
on PyTorch's CPU build."""

from __future__ import annotations

from lucid._legacy import CUDA_SPARSE_TYPES

# In TYPE_NAMES' order, bool and the complex ones left out (as torch.cuda.sparse)
(FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor, ByteTensor, CharTensor, ShortTensor,
 IntTensor, LongTensor) = CUDA_SPARSE_TYPES.values()  # fmt: skip
