"""Static types of the Tensor methods that ``lucid._tensor._install_methods`` attaches.

The methods are the ``lucid.ops`` functions with the tensor first; declaring them here (a base
class with no runtime content) lets mypy see ``x.sum()`` as a Tensor in every package.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lucid._tensor import Tensor

    _Op = Callable[..., Tensor]


class TensorMethods:
    __slots__ = ()

    if TYPE_CHECKING:
        neg: _Op
        exp: _Op
        log: _Op
        log2: _Op
        log10: _Op
        log1p: _Op
        expm1: _Op
        sqrt: _Op
        rsqrt: _Op
        abs: _Op
        sign: _Op
        sin: _Op
        cos: _Op
        tan: _Op
        asin: _Op
        acos: _Op
        atan: _Op
        arcsin: _Op
        arccos: _Op
        arctan: _Op
        atan2: _Op
        sinh: _Op
        cosh: _Op
        tanh: _Op
        sigmoid: _Op
        relu: _Op
        clamp: _Op
        clip: _Op
        floor: _Op
        ceil: _Op
        round: _Op
        trunc: _Op
        frac: _Op
        reciprocal: _Op
        square: _Op
        maximum: _Op
        minimum: _Op
        pow: _Op
        eq: _Op
        ne: _Op
        lt: _Op
        le: _Op
        gt: _Op
        ge: _Op
        logical_and: _Op
        logical_or: _Op
        logical_xor: _Op
        logical_not: _Op
        isnan: _Op
        isinf: _Op
        isfinite: _Op
        floor_divide: _Op
        remainder: _Op
        fmod: _Op
        erf: _Op
        erfinv: _Op
        lerp: _Op
        masked_fill: _Op
        nan_to_num: _Op
        addcmul: _Op
        addcdiv: _Op
        where: Callable[..., Any]
        asinh: _Op
        acosh: _Op
        atanh: _Op
        arcsinh: _Op
        arccosh: _Op
        arctanh: _Op
        sgn: _Op
        fix: _Op
        signbit: _Op
        absolute: _Op
        negative: _Op
        clamp_min: _Op
        clamp_max: _Op
        float_power: _Op
        fmax: _Op
        fmin: _Op
        divide: _Op
        multiply: _Op
        subtract: _Op
        true_divide: _Op
        bitwise_and: _Op
        bitwise_or: _Op
        bitwise_xor: _Op
        bitwise_not: _Op
        greater: _Op
        greater_equal: _Op
        less: _Op
        less_equal: _Op
        not_equal: _Op
        isclose: _Op
        allclose: Callable[..., Any]
        equal: Callable[..., Any]
        masked_select: _Op
        index_add: _Op
        take: _Op
        sum: _Op
        mean: _Op
        var: _Op
        std: _Op
        prod: _Op
        max: Callable[..., Any]
        min: Callable[..., Any]
        amax: _Op
        amin: _Op
        argmax: _Op
        argmin: _Op
        logsumexp: _Op
        norm: _Op
        all: _Op
        any: _Op
        cumsum: _Op
        cumprod: _Op
        softmax: _Op
        log_softmax: _Op
        sort: Callable[..., Any]
        argsort: _Op
        topk: Callable[..., Any]
        kthvalue: Callable[..., Any]
        median: Callable[..., Any]
        unique: Callable[..., Any]
        nonzero: Callable[..., Any]
        count_nonzero: _Op
        reshape: _Op
        view: _Op
        view_as: _Op
        reshape_as: _Op
        flatten: _Op
        unflatten: _Op
        squeeze: _Op
        unsqueeze: _Op
        permute: _Op
        transpose: _Op
        swapaxes: _Op
        swapdims: _Op
        t: _Op
        expand: _Op
        expand_as: _Op
        broadcast_to: _Op
        repeat: _Op
        tile: _Op
        split: Callable[..., Any]
        chunk: Callable[..., Any]
        unbind: Callable[..., Any]
        flip: _Op
        roll: _Op
        tril: _Op
        triu: _Op
        diagonal: _Op
        diag: _Op
        gather: _Op
        scatter: _Op
        scatter_add: _Op
        index_select: _Op
        take_along_dim: _Op
        narrow: _Op
        sum_to_size: _Op
        matmul: _Op
        mm: _Op
        bmm: _Op
        dot: _Op
        outer: _Op
        inner: _Op
        cross: _Op
        movedim: _Op
        moveaxis: _Op
        ravel: _Op
        tensor_split: Callable[..., Any]
        repeat_interleave: _Op
        fliplr: _Op
        flipud: _Op
        diag_embed: _Op
        trace: _Op
        mv: _Op
        ger: _Op
        exp2: _Op
        hypot: _Op
        copysign: _Op
        xlogy: _Op
