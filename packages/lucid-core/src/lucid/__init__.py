"""Lucid: a deep-learning framework that reads like PyTorch, on NumPy and MLX.

This package is extendable: lucid-nn, lucid-optim, lucid-data, lucid-models and backend
plugins add ``lucid.nn``, ``lucid.optim``, ... from their own distributions. Nothing here
imports those optional subpackages.
"""

from __future__ import annotations

import math as _math
import pkgutil
from typing import TYPE_CHECKING, Any

# First: lucid.backends and lucid.utils extend their own paths from this one (plugins, siblings).
__path__ = pkgutil.extend_path(__path__, __name__)
from lucid.version import __version__ as __version__  # noqa: I001  (torch.version's; no imports)
from lucid import _binder, _siblings, autograd  # noqa: I001
from lucid._creation import (
    arange,
    as_tensor,
    empty,
    empty_like,
    empty_permuted,
    empty_strided,
    eye,
    from_numpy,
    full,
    full_like,
    linspace,
    logspace,
    ones,
    ones_like,
    rand,
    rand_like,
    randint,
    randint_like,
    randn,
    randn_like,
    tensor,
    zeros,
    zeros_like,
)
from lucid._device import device
from lucid._memory_format import (
    channels_last,
    channels_last_3d,
    contiguous_format,
    layout,
    memory_format,
    preserve_format,
    sparse_coo,
    strided,
)
from lucid.dtypes import (
    bfloat16,
    complex64,
    complex128,
    dtype,
    float8_e4m3fn,
    float8_e4m3fnuz,
    float8_e5m2,
    float8_e5m2fnuz,
    float8_e8m0fnu,
    float16,
    float32,
    float64,
    get_default_dtype,
    int8,
    int16,
    int32,
    int64,
    promote_types,
    set_default_dtype,
    uint8,
)
from lucid.dtypes import bool_ as bool  # noqa: A001
from lucid._tensor import Size, Tensor
from lucid.autograd.grad_mode import *  # noqa: F403  (no_grad, enable_grad, ...: its __all__)
from lucid.autograd.anomaly_mode import is_anomaly_check_nan_enabled, is_anomaly_enabled
from lucid.ops import *  # noqa: F403
from lucid.random import (
    Generator,
    bernoulli,
    get_rng_state,
    initial_seed,
    manual_seed,
    multinomial,
    normal,
    randperm,
    seed,
    set_rng_state,
)

from lucid import accelerator, backends, cpu, cuda, fft, linalg, masked, signal, sparse, special
from lucid import nested
from lucid import overrides
from lucid._stream import Event, Stream
from lucid import xpu
from lucid import viz
from lucid.sparse import sparse_coo_tensor, spmm
from lucid import _interop, distributions, func, profiler, testing
from lucid.func import vmap
from lucid.utils import _pytree as _utils_pytree  # noqa: F401  (lucid.utils._pytree, as torch's)
from lucid.fft._spectral import (
    bartlett_window,
    blackman_window,
    hamming_window,
    hann_window,
    istft,
    kaiser_window,
    stft,
)
from lucid.utils import checkpoint as _checkpoint  # noqa: F401  (lucid.utils.checkpoint reachable)
from lucid.utils.dlpack import from_dlpack
from lucid._legacy import (
    BFloat16Tensor, BoolTensor, ByteTensor, CharTensor, ComplexDoubleTensor, ComplexFloatTensor,
    DoubleTensor, FloatTensor, HalfTensor, IntTensor, LongTensor, ShortTensor,
)  # fmt: skip
from lucid.backends import get_num_threads, set_num_threads
from lucid.backends._precision import (
    get_float32_matmul_precision,
    set_float32_matmul_precision,
)
from lucid.autograd import forward_ad as _forward_ad  # noqa: F401
from lucid.autograd import functional as _functional  # noqa: F401
from lucid.autograd import profiler as _autograd_profiler  # noqa: F401
from lucid.linalg import logdet, matrix_power
from lucid import compiler, futures, fx, hub, jit, multiprocessing, version
from lucid._compat import (
    are_deterministic_algorithms_enabled,
    asarray,
    finfo,
    iinfo,
    is_deterministic_algorithms_warn_only_enabled,
    scalar_tensor,
    typename,
    use_deterministic_algorithms,
)
from lucid.compiler import compile  # noqa: A004  (torch.compile)
from lucid.linalg import _methods as _linalg_methods
from lucid._toplevel import FUNCTIONS as _INPLACE_FUNCTIONS
from lucid._toplevel import igamma, igammac
from lucid._toplevel import (  # noqa: A004  (torch.range)
    adjoint,
    autocast_decrement_nesting,
    autocast_increment_nesting,
    cond,
    detach,
    fork,
    from_file,
    frombuffer,
    frobenius_norm,
    get_autocast_cpu_dtype,
    get_autocast_gpu_dtype,
    get_deterministic_debug_mode,
    binomial,
    get_default_device,
    get_device_module,
    get_device,
    get_num_interop_threads,
    poisson,
    set_anomaly_enabled,
    set_default_device,
    set_default_tensor_type,
    thread_safe_generator,
    has_lapack,
    has_mkl,
    has_openmp,
    has_spectral,
    init_num_threads,
    is_autocast_cpu_enabled,
    is_distributed,
    is_inference,
    is_signed,
    is_storage,
    is_warn_always_enabled,
    newaxis,
    norm_except_dim,
    nuclear_norm,
    range,
    set_autocast_cpu_dtype,
    set_autocast_cpu_enabled,
    set_autocast_gpu_dtype,
    set_deterministic_debug_mode,
    set_flush_denormal,
    set_num_interop_threads,
    set_warn_always,
    wait,
)
from lucid._higher_order_ops.while_loop import while_loop
from lucid._foreach import *  # noqa: F403  (torch._foreach_add_, _foreach_lerp_, ...: its __all__)
from lucid._toplevel_nn import *  # noqa: F403  (torch.batch_norm, torch.kl_div, ...: its __all__)
from lucid._toplevel_nn import __all__ as _toplevel_nn_names
from lucid.amp import GradScaler
from lucid.random import default_generator
from lucid.special import i0, polygamma
from lucid.special import multigammaln as mvlgamma
from lucid.linalg import matrix_exp
from lucid.linalg._legacy import (
    cholesky,
    cholesky_inverse,
    det,
    inverse,
    lu,
    lu_unpack,
    pinverse,
    qr,
    slogdet,
    svd,
)
from lucid.linalg._legacy import lu_solve_legacy as lu_solve
from lucid.linalg._lu import cholesky_solve
from lucid.linalg._householder import geqrf, orgqr, ormqr, triangular_solve
from lucid.linalg._lowrank import lobpcg, pca_lowrank, svd_lowrank
from lucid.serialization import load, save
from lucid import amp
from lucid.amp.autocast_mode import (
    autocast,
    clear_autocast_cache,
    get_autocast_dtype,
    is_autocast_cache_enabled,
    is_autocast_enabled,
    set_autocast_cache_enabled,
    set_autocast_dtype,
    set_autocast_enabled,
)

_binder.bind()
for _name, _method in _linalg_methods.TENSOR_METHODS.items():  # linalg sits above the binder
    setattr(Tensor, _name, _method)
for _name, _method in (("stft", stft), ("istft", istft)):  # fft sits above the binder too
    setattr(Tensor, _name, _method)
globals().update(_INPLACE_FUNCTIONS)  # lucid.abs_(t), ...: torch's top-level in-place names
_siblings.install_finder()
_interop.install_einops_backend()  # einops's backend for lucid tensors, once einops is imported

if not TYPE_CHECKING:  # mypy sees only real attributes, so `lucid.typo` stays an error

    def __getattr__(name: str) -> Any:
        """``lucid.nn``, ``lucid.optim``, ``lucid.data``, ``lucid.models``, ... imported on first
        access (see ``lucid._siblings``); ``lucid._dynamo`` too, as torch loads ``_dynamo``."""
        if name == "_dynamo":
            import importlib  # noqa: PLC0415  (on first access only)

            return importlib.import_module("lucid._dynamo")
        return _siblings.sibling_attribute(__name__, name)


e, inf, nan, pi = _math.e, _math.inf, _math.nan, _math.pi  # torch.e, torch.inf, ...
half = float16
float = float32  # noqa: A001
double = float64
long = int64
int = int32  # noqa: A001
short = int16
cfloat = complex64
cdouble = complex128

# Explicit re-exports for type checkers (the ops come through `from lucid.ops import *`).
# Append names imported above here too.
__all__ = [
    "autograd", "arange", "as_tensor", "empty", "empty_like", "empty_permuted", "empty_strided",
    "eye", "from_numpy",
    "full", "full_like", "linspace", "logspace", "ones", "ones_like", "rand", "rand_like",
    "randint", "randint_like", "randn", "randn_like", "tensor", "zeros", "zeros_like", "device",
    "bfloat16", "complex64", "complex128", "dtype", "float16", "float32", "float64",
    "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu",
    "get_default_dtype", "int8", "int16", "int32", "int64", "promote_types", "set_default_dtype",
    "uint8", "bool", "Tensor", "Size",
    "Generator", "bernoulli", "get_rng_state", "initial_seed", "manual_seed", "multinomial",
    "normal", "randperm", "seed", "set_rng_state", "linalg", "masked", "nested", "signal",
    "special",
    "sparse", "sparse_coo_tensor", "spmm",
    "viz", "load", "save", "compiler", "futures", "fx", "hub", "version", "jit", "multiprocessing",
    "distributions", "fft", "func", "vmap", "is_anomaly_enabled", "is_anomaly_check_nan_enabled",
    "profiler", "from_dlpack",
    "memory_format", "channels_last", "channels_last_3d", "contiguous_format", "preserve_format",
    "half", "float", "double", "long", "int", "short", "cfloat", "cdouble", "e", "inf", "nan", "pi",
    "det", "logdet", "matrix_power", "slogdet", "inverse", "pinverse", "cholesky", "qr", "svd",
    "cholesky_solve", "cholesky_inverse", "lu", "lu_unpack", "lu_solve", "matrix_exp",
    "finfo", "iinfo", "asarray", "scalar_tensor", "typename",
    "compile", "use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
    "is_deterministic_algorithms_warn_only_enabled",
    "hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window",
    "stft", "istft",
    "accelerator", "backends", "cpu", "cuda", "xpu", "testing", "get_num_threads",
    "overrides", "Stream", "Event",
    "set_num_threads",
    "get_float32_matmul_precision", "set_float32_matmul_precision",
    "FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor", "CharTensor",
    "ShortTensor", "IntTensor", "LongTensor", "BoolTensor", "ComplexFloatTensor",
    "ComplexDoubleTensor",
    "igamma", "igammac", "i0", "polygamma", "mvlgamma", "geqrf", "orgqr", "ormqr",
    "lobpcg", "pca_lowrank", "svd_lowrank",
    "triangular_solve",
    "amp", "autocast", "clear_autocast_cache",
    "get_autocast_dtype", "is_autocast_cache_enabled", "is_autocast_enabled",
    "set_autocast_cache_enabled", "set_autocast_dtype", "set_autocast_enabled",
]  # fmt: skip
__all__ += autograd.grad_mode.__all__
__all__ += list(_INPLACE_FUNCTIONS)
__all__ += _toplevel_nn_names
__all__ += [
    "adjoint", "autocast_decrement_nesting", "autocast_increment_nesting", "cond", "detach",
    "fork", "from_file", "frombuffer", "frobenius_norm", "get_autocast_cpu_dtype",
    "get_autocast_gpu_dtype", "get_deterministic_debug_mode", "get_device",
    "get_num_interop_threads", "has_lapack", "has_mkl", "has_openmp", "has_spectral",
    "init_num_threads", "is_autocast_cpu_enabled", "is_distributed", "is_inference", "is_signed",
    "is_storage", "is_warn_always_enabled", "newaxis", "norm_except_dim", "nuclear_norm", "range",
    "set_autocast_cpu_dtype", "set_autocast_cpu_enabled", "set_autocast_gpu_dtype",
    "set_deterministic_debug_mode", "set_flush_denormal", "set_num_interop_threads",
    "set_warn_always", "wait", "GradScaler", "default_generator", "binomial",
    "get_default_device", "get_device_module", "poisson", "set_anomaly_enabled",
    "set_default_device", "set_default_tensor_type", "layout", "strided", "sparse_coo",
    "thread_safe_generator", "while_loop",
]  # fmt: skip

from lucid import ops as _ops_package  # noqa: E402
from lucid.ops._util import add_out as _add_out  # noqa: E402
from lucid.ops._util import with_out_of as _with_out_of  # noqa: E402

# torch's out= on the functions that take it (ops/_util.with_out); the op modules' own functions
# and the Tensor methods stay bare. tools/gauges/gauge_signature.py (gauge_out) lists the rest.
_ELEMENTWISE_OUT = """
    addcdiv addcmul angle arctan2 atan2 bitwise_and bitwise_left_shift bitwise_not bitwise_or
    bitwise_right_shift bitwise_xor clamp clamp_max clamp_min clip copysign deg2rad digamma eq
    erf erfc erfinv fmax fmin fmod gcd ge greater greater_equal gt heaviside hypot i0 igamma
    igammac lcm ldexp le lerp less less_equal lgamma logaddexp logaddexp2 logical_and
    logical_not logical_or logical_xor lt maximum minimum nan_to_num ne neg negative nextafter
    not_equal polygamma pow rad2deg remainder round sgn sign sinc square where xlogy
"""
_FACTORY_OUT = "empty eye full linspace logspace randint randperm range normal"
_WITH_OUT_NAMES = (
    _ELEMENTWISE_OUT
    + _FACTORY_OUT
    + """
    addbmm addmm addmv addr baddbmm bmm bucketize chain_matmul cholesky cholesky_inverse
    cholesky_solve column_stack conj_physical cross diag diag_embed diff dot dstack float_power
    frexp frobenius_norm full_like geqrf ger histc histogram hstack inner inverse isneginf
    isposinf lu_solve msort mv nuclear_norm outer qr renorm row_stack searchsorted signbit stack
    svd take_along_dim tensordot tril triu vdot vstack
"""
)
_add_out(
    globals(),
    _WITH_OUT_NAMES,
    cast=_ELEMENTWISE_OUT,
    factory=_FACTORY_OUT,
    cat="stack hstack vstack dstack column_stack row_stack",
    silent="addbmm",
)
for _namespace in (_ops_package, special, linalg, fft):  # their aliases stay lucid's ops
    for _name, _value in list(vars(_namespace).items()):
        if not _name.startswith("_") and _with_out_of(_value) is not None:
            setattr(_namespace, _name, _with_out_of(_value))
del _namespace, _name, _value
