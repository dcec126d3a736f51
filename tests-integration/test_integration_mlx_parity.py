"""The same op on NumPy ("cpu") and on MLX ("mlx"): outputs and gradients agree (float32).

ONE list of cases (``CASES``) drives every check: each case runs once per backend with the
same inputs, then the outputs and, through a fixed random upstream gradient, every input's
gradient are compared (rtol 1e-4). The ``lucid.ops`` samples come from the op tables (one case
per sample of every ``OPS`` row); the cases written here cover the rest (``lucid.nn.functional``,
``lucid.linalg``, operators, index and list arguments). A case that cannot run fails, unless
``MLX_SKIP`` names it with the reason. ``test_every_op_has_a_case`` lists the public ops of
``lucid``, ``lucid.linalg`` and ``lucid.nn.functional`` that no case exercises.
"""

from __future__ import annotations

import importlib
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

pytestmark = pytest.mark.mlx
mx = pytest.importorskip("mlx.core")

import lucid  # noqa: E402
import lucid.backends.mlx  # noqa: E402, F401  (registers "mlx" without an installed wheel)
from lucid.ops._registry import Op, Sample  # noqa: E402

# -- input specs ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Arg:
    """One tensor input: ``kind`` f (normal), p (positive), u (in (-0.9, 0.9)), i (ints), b."""

    kind: str
    shape: tuple[int, ...]
    high: int = 0

    def make(self, rng: np.random.Generator) -> np.ndarray:
        if self.kind == "f":
            return rng.standard_normal(self.shape).astype(np.float32)
        if self.kind == "p":
            return rng.uniform(0.5, 2.0, self.shape).astype(np.float32)
        if self.kind == "u":
            return rng.uniform(-0.9, 0.9, self.shape).astype(np.float32)
        if self.kind == "i":
            return rng.integers(0, self.high, self.shape).astype(np.int64)
        if self.kind == "b":
            return rng.random(self.shape) < 0.5
        if self.kind == "spd":  # symmetric positive definite
            a = rng.standard_normal(self.shape)
            return (a @ np.swapaxes(a, -1, -2) + self.shape[-1] * np.eye(self.shape[-1])).astype(
                np.float32
            )
        raise ValueError(self.kind)


def _complex_parts(a: Any, b: Any) -> Any:
    """The complex ops on ``z = a + ib``, back in real numbers."""
    z = resolve("complex")(a, b)
    w = resolve("polar")(a.abs() + 0.5, b) * resolve("conj")(z)
    w = w * resolve("sgn")(resolve("conj_physical")(z) + 1)
    w = resolve("resolve_neg")(resolve("resolve_conj")(w))
    pairs = resolve("view_as_complex")(resolve("view_as_real")(w) * 0.5)
    pairs = resolve("view_as_complex_copy")(resolve("view_as_real_copy")(pairs))
    parts = [resolve("real")(pairs), resolve("imag")(pairs), resolve("angle")(z + 2)]
    return resolve("stack")(parts)


def F(*shape: int) -> Arg:  # noqa: N802
    return Arg("f", shape)


def P(*shape: int) -> Arg:  # noqa: N802
    return Arg("p", shape)


def U(*shape: int) -> Arg:  # noqa: N802
    return Arg("u", shape)


def I(high: int, *shape: int) -> Arg:  # noqa: N802, E743
    return Arg("i", shape, high)


def B(*shape: int) -> Arg:  # noqa: N802
    return Arg("b", shape)


def SPD(*shape: int) -> Arg:  # noqa: N802
    return Arg("spd", shape)


def resolve(path: str) -> Any:
    """``"sin"`` -> lucid.sin, ``"nn.functional.conv2d"`` -> lucid.nn.functional.conv2d."""
    module_path, _, name = ("lucid." + path).rpartition(".")
    return getattr(importlib.import_module(module_path), name)


@dataclass(frozen=True)
class Case:
    """``op`` is a path in lucid (or a callable of the tensors, then ``uses`` names the ops)."""

    id: str
    op: str | Callable[..., Any]
    args: tuple[Any, ...]
    kwargs: dict[str, Any] = field(default_factory=dict)
    grad: bool = True
    rtol: float = 1e-4
    atol: float = 1e-5
    uses: tuple[str, ...] = ()
    mlx_xfail: str = ""  # a known gap on MLX, with the reason (strict: fails once fixed)
    sample: Sample | None = None  # inputs drawn by an op table row's sample instead of args

    def run(self, tensors: list[Any]) -> Any:
        fn = resolve(self.op) if isinstance(self.op, str) else self.op
        return fn(*tensors, **self.kwargs)

    def covers(self) -> tuple[str, ...]:
        return ((self.op,) if isinstance(self.op, str) else ()) + self.uses


def C(op: Any, *args: Any, id: str | None = None, **options: Any) -> Case:  # noqa: A002, N802
    known = {"grad", "rtol", "atol", "uses", "mlx_xfail"}
    extra = {k: options.pop(k) for k in list(options) if k in known}
    name = id or (op if isinstance(op, str) else op.__name__)
    return Case(name, op, args, options, **extra)


def via(path: str) -> Callable[..., Any]:
    """A method-style or composite use of an op, resolved late (for lambdas in cases)."""
    return lambda *a, **k: resolve(path)(*a, **k)


# -- the cases --------------------------------------------------------------------------------


def _row_case(row: Op, s: Sample) -> Case:
    name = f"{row.name}_{s.tag}" if s.tag else row.name
    return Case(name, row.name, s.args, dict(s.kwargs), grad=not row.nograd, sample=s)


def _row_cases() -> list[Case]:
    """One case per sample of every ``lucid.ops`` table row (see lucid/ops/_registry.py)."""
    return [_row_case(row, s) for _, row in lucid.ops.rows() for s in row.samples]


def _scatter_with(reduce: str | None) -> Callable[..., Any]:
    return lambda x, i, v: x.scatter(1, i, v, reduce=reduce)


# The only cases that may skip, each with the reason.
_NO_COMPLEX = (
    "complex results (eigenvectors fixed up to phase, compared by this table's real weighted "
    "sum): test_core_fft.py and test_core_fft_on_mlx.py check linalg.eig"
)
MLX_SKIP: dict[str, str] = {"linalg.eig": _NO_COMPLEX, "linalg.eigvals": _NO_COMPLEX}


def _fn(name: str) -> Callable[..., Any]:
    return resolve(f"nn.functional.{name}")


def _on(x: Any, values: list[Any]) -> Any:
    """An integer tensor of ``values`` on ``x``'s device (offsets, lengths, fixed targets)."""
    return lucid.tensor(values, device=x.device)


def _torch_surface_cases() -> list[Case]:
    """The ``nn.functional`` names added to match torch's surface."""
    fn = "nn.functional."
    # in-place forms run on a non-leaf copy, so the gradient flows through the in-place op
    inplace = [
        C(lambda x, n=n, a=a: _fn(n)(x * 1, *a), F(*S), id=n, uses=(fn + n,))
        for n, a in [
            ("relu_", ()),
            ("elu_", (0.7,)),
            ("selu_", ()),
            ("celu_", (0.7,)),
            ("leaky_relu_", (0.1,)),
            ("hardtanh_", (-0.5, 0.5)),
            ("threshold_", (0.1, 20.0)),
            ("rrelu_", (0.1, 0.3, False)),
        ]
    ]
    pools = [
        *[C(fn + f"max_pool{nd}d_with_indices", F(2, 3, *[4] * nd), 2) for nd in (1, 2, 3)],
        *[
            C(fn + f"adaptive_max_pool{nd}d_with_indices", F(2, 3, *[5] * nd), 2)
            for nd in (1, 2, 3)
        ],
        C(fn + "adaptive_max_pool3d", F(1, 2, 4, 4, 4), output_size=2),
        C(fn + "lp_pool3d", P(1, 2, 4, 4, 4), 2.0, 2),
    ]
    # fractional pools draw their windows from `_random_samples`: the same fixed samples on
    # both backends (lucid.rand's MLX stream differs from NumPy's)
    fractional = [
        C(
            lambda x, u, nd=nd, ind=ind: _fn(f"fractional_max_pool{nd}d{ind}")(
                x, 2, output_size=3, _random_samples=u.detach().abs()
            ),
            F(2, 3, *[7] * nd),
            U(2, 3, nd),
            id=f"fractional_max_pool{nd}d{ind}",
            uses=(f"{fn}fractional_max_pool{nd}d{ind}",),
        )
        for nd in (2, 3)
        for ind in ("", "_with_indices")
    ]
    return [
        *inplace,
        *pools,
        *fractional,
        C(fn + "rrelu", F(*S), 0.1, 0.3, training=False),
        # gumbel_softmax samples lucid.rand, whose MLX stream differs from NumPy's: compare
        # what holds for every draw (each row sums to one; its gradient is zero)
        *[
            C(
                lambda x, h=h: _fn("gumbel_softmax")(x, tau=0.5, hard=h).sum(-1),
                F(*S),
                id=f"gumbel_softmax-rowsum-{'hard' if h else 'soft'}",
                uses=(fn + "gumbel_softmax",),
            )
            for h in (False, True)
        ],
        C(fn + "channel_shuffle", F(2, 6, 3, 3), 3),
        C(fn + "native_channel_shuffle", F(2, 6, 3, 3), 3),
        C(fn + "conv_tbc", F(6, 2, 3), F(3, 3, 4), F(4), pad=1),
        C(
            lambda x, t: _fn("ctc_loss")(x.log_softmax(2), t + 1, [6, 5], [3, 2]),
            F(6, 2, 5),
            I(4, 2, 3),
            id="ctc_loss",
            uses=(fn + "ctc_loss",),
        ),
        *[
            C(
                lambda i, w, m=m: _fn("embedding_bag")(i, w, _on(i, [0, 3, 5]), mode=m),
                I(10, 8),
                F(10, 4),
                id=f"embedding_bag-{m}",
                uses=(fn + "embedding_bag",),
            )
            for m in ("sum", "mean", "max")
        ],
        C(
            lambda i, w, p: _fn("embedding_bag")(i, w, mode="sum", per_sample_weights=p),
            I(10, 2, 4),
            F(10, 4),
            F(2, 4),
            id="embedding_bag-per_sample_weights",
            uses=(fn + "embedding_bag",),
        ),
        C(fn + "linear_cross_entropy", F(4, 6), F(5, 6), I(5, 4)),
        C(fn + "multi_margin_loss", F(4, 5), I(5, 4)),
        C(fn + "multi_margin_loss", F(4, 5), I(5, 4), p=2, margin=0.5, id="multi_margin_loss-p2"),
        C(
            lambda x: _fn("multilabel_margin_loss")(
                x, _on(x, [[3, 0, -1, 1], [0, 1, 2, 3], [1, -1, 0, 0]])
            ),
            F(3, 4),
            id="multilabel_margin_loss",
            uses=(fn + "multilabel_margin_loss",),
        ),
        C(fn + "pdist", F(5, 4)),
        C(fn + "pdist", F(5, 4), 1.0, id="pdist-p1"),
        C(fn + "rms_norm", F(2, 3, 4), (4,), F(4)),
        C(fn + "triplet_margin_with_distance_loss", F(3, 5), F(3, 5), F(3, 5)),
        C(
            lambda a, p, n: _fn("triplet_margin_with_distance_loss")(
                a, p, n, distance_function=lambda u, v: (u - v).abs().sum(-1), swap=True
            ),
            F(3, 5),
            F(3, 5),
            F(3, 5),
            id="triplet_margin_with_distance_loss-l1-swap",
            uses=(fn + "triplet_margin_with_distance_loss",),
        ),
    ]


S = (3, 4)
UNARY = [
    "nn.functional.relu6",
    "nn.functional.elu",
    "nn.functional.selu",
    "nn.functional.celu",
    "nn.functional.silu",
    "nn.functional.mish",
    "nn.functional.softsign",
    "nn.functional.tanhshrink",
    "nn.functional.hardswish",
    "nn.functional.hardsigmoid",
    "nn.functional.hardtanh",
    "nn.functional.logsigmoid",
    "nn.functional.softplus",
    "nn.functional.gelu",
]

CASES: list[Case] = [
    *_row_cases(),
    *[C(n, F(*S)) for n in UNARY],
    *[C(n, F(*S), F(1, 4), id=f"{n}-broadcast") for n in ("add", "mul", "sub")],
    C("div", F(*S), P(*S), rounding_mode="floor", grad=False, id="div-floor"),
    C(lambda x: x**3, F(*S), id="pow-scalar", uses=("pow",)),
    C(lambda x: 2.0**x, F(*S), id="rpow", uses=("pow",)),
    C(lambda x: 1.5 - x / 2 * 3 + 1, F(*S), id="scalar-arith"),
    C("clamp", F(*S), min=-0.5, id="clamp-min"),
    C("where", B(*S), F(*S), F(*S)),
    # reductions
    C("sum", F(2, 3, 4), dim=(0, 2), keepdim=True, id="sum-dims"),
    C(lambda x: x.max(), F(3, 5), id="max-all", uses=("max",)),
    C(lambda x: x.max(dim=1)[0], F(3, 5), id="max-dim"),
    C(lambda x: x.min(dim=0).values, F(3, 5), id="min-dim", uses=("min",)),
    C("norm", F(3, 5), p=1, dim=1, id="norm-p1"),
    C(lambda x: resolve("median")(x, dim=1)[0], F(3, 5), id="median-dim"),
    C(
        lambda x: resolve("bucketize")(x, lucid.tensor([-1.0, 0.0, 1.0], device=x.device)),
        F(*S),
        id="bucketize",
        grad=False,
        uses=("bucketize",),
    ),
    C(
        lambda x: resolve("searchsorted")(lucid.tensor([-1.0, 0.0, 1.0], device=x.device), x),
        F(*S),
        id="searchsorted",
        grad=False,
        uses=("searchsorted",),
    ),
    C(
        lambda x: resolve("tril_indices")(4, 3, device=x.device),
        F(1),
        id="tril_indices",
        grad=False,
        uses=("tril_indices",),
    ),
    C(
        lambda x: resolve("triu_indices")(3, 4, 1, device=x.device),
        F(1),
        id="triu_indices",
        grad=False,
        uses=("triu_indices",),
    ),
    C("nn.functional.softmax", F(2, 3, 5), dim=-1),
    C("nn.functional.log_softmax", F(2, 3, 5), dim=-1),
    # linear algebra
    C("matmul", F(2, 3, 4), F(4, 5), id="matmul-batched-broadcast"),
    C("matmul", F(4), F(4, 5), id="matmul-vec"),
    C(
        lambda a, b: resolve("einsum")("ij,jk->ik", a, b),
        F(2, 3),
        F(3, 4),
        id="einsum",
        uses=("einsum",),
    ),
    C(
        lambda a, b, w, c: resolve("nn.functional.bilinear")(a, b, w, c),
        F(3, 4),
        F(3, 5),
        F(6, 4, 5),
        F(6),
        id="bilinear",
        uses=("nn.functional.bilinear",),
    ),
    C("linalg.inv", SPD(3, 3), rtol=1e-3, atol=1e-4),
    C("linalg.pinv", F(3, 4), rtol=1e-3, atol=1e-4),
    C("linalg.slogdet", SPD(3, 3), rtol=1e-3, atol=1e-4),
    C(
        lambda a: resolve("linalg.eigh")(a)[0],
        SPD(3, 3),
        id="linalg.eigh-values",
        uses=("linalg.eigh",),
        rtol=1e-3,
        atol=1e-4,
    ),
    C(
        lambda a: _reconstruct_eigh(resolve("linalg.eigh")(a)),
        SPD(3, 3),
        id="linalg.eigh-rebuild",
        rtol=1e-3,
        atol=1e-4,
    ),
    C("linalg.eigvalsh", SPD(3, 3), rtol=1e-3, atol=1e-4),
    C(
        lambda a: _reconstruct_svd(resolve("linalg.svd")(a, full_matrices=False)),
        F(4, 3),
        id="linalg.svd-rebuild",
        uses=("linalg.svd",),
        rtol=1e-3,
        atol=1e-4,
    ),
    C("linalg.svdvals", F(4, 3), rtol=1e-3, atol=1e-4),
    C(
        lambda a: _qr_product(resolve("linalg.qr")(a)),
        F(4, 3),
        id="linalg.qr-rebuild",
        uses=("linalg.qr",),
        rtol=1e-3,
        atol=1e-4,
    ),
    C("linalg.matrix_norm", F(3, 4)),
    C("linalg.matrix_power", F(3, 3), 3, rtol=1e-3, atol=1e-4),
    C("linalg.matrix_rank", F(4, 3), grad=False),
    C(
        lambda a, b, c: resolve("linalg.multi_dot")([a, b, c]),
        F(2, 3),
        F(3, 4),
        F(4, 2),
        id="linalg.multi_dot",
        uses=("linalg.multi_dot",),
    ),
    C("linalg.cross", F(4, 3), F(4, 3)),
    C("linalg.det", SPD(3, 3), rtol=1e-3, atol=1e-4),
    C("linalg.solve", SPD(3, 3), F(3, 2), rtol=1e-3, atol=1e-4),
    C("linalg.cholesky", SPD(3, 3), rtol=1e-3, atol=1e-4),
    C("linalg.norm", F(3, 4)),
    C("linalg.vector_norm", F(3, 4), ord=3, dim=1),
    C("linalg.logdet", SPD(3, 3), rtol=1e-3, atol=1e-4),
    C("linalg.matrix_exp", F(3, 3), rtol=1e-3, atol=1e-4),
    C(
        lambda a: resolve("linalg.lu_factor")(a)[0],
        F(4, 4),
        id="linalg.lu_factor",
        rtol=1e-3,
        atol=1e-4,
        uses=("linalg.lu_factor",),
    ),
    C(
        lambda a, b: resolve("linalg.lu_solve")(*resolve("linalg.lu_factor")(a), b),
        SPD(3, 3),
        F(3, 2),
        id="linalg.lu_solve",
        rtol=1e-3,
        atol=1e-4,
        uses=("linalg.lu_solve",),
    ),
    C(
        lambda a, b: resolve("cholesky_solve")(b, resolve("linalg.cholesky")(a)),
        SPD(3, 3),
        F(3, 2),
        id="cholesky_solve",
        rtol=1e-3,
        atol=1e-4,
        uses=("cholesky_solve",),
    ),
    C(
        lambda a: resolve("linalg.lu")(a),
        F(4, 3),
        id="linalg.lu",
        rtol=1e-3,
        atol=1e-4,
        uses=("linalg.lu",),
    ),
    C(
        lambda a: resolve("linalg.lu_factor_ex")(a)[0],
        F(3, 3),
        id="linalg.lu_factor_ex",
        rtol=1e-3,
        atol=1e-4,
        uses=("linalg.lu_factor_ex",),
    ),
    C(
        lambda a: resolve("linalg.ldl_factor")(a)[0],
        SPD(3, 3),
        id="linalg.ldl_factor",
        grad=False,  # torch has no LDL gradient either
        rtol=1e-3,
        atol=1e-4,
        uses=("linalg.ldl_factor",),
    ),
    C(
        lambda a: resolve("linalg.ldl_factor_ex")(a)[0],
        SPD(3, 3),
        id="linalg.ldl_factor_ex",
        grad=False,
        rtol=1e-3,
        atol=1e-4,
        uses=("linalg.ldl_factor_ex",),
    ),
    C(
        lambda a, b: resolve("linalg.ldl_solve")(*resolve("linalg.ldl_factor")(a), b),
        SPD(3, 3),
        F(3, 2),
        id="linalg.ldl_solve",
        grad=False,
        rtol=1e-3,
        atol=1e-4,
        uses=("linalg.ldl_solve",),
    ),
    C(
        lambda a: resolve("linalg.inv_ex")(a)[0],
        SPD(3, 3),
        id="linalg.inv_ex",
        rtol=1e-3,
        atol=1e-4,
        uses=("linalg.inv_ex",),
    ),
    C(
        lambda a: resolve("linalg.cholesky_ex")(a)[0],
        SPD(3, 3),
        id="linalg.cholesky_ex",
        rtol=1e-3,
        atol=1e-4,
        uses=("linalg.cholesky_ex",),
    ),
    C(
        lambda a, b: resolve("linalg.solve_ex")(a, b)[0],
        SPD(3, 3),
        F(3, 2),
        id="linalg.solve_ex",
        rtol=1e-3,
        atol=1e-4,
        uses=("linalg.solve_ex",),
    ),
    C("linalg.cond", SPD(3, 3), rtol=1e-3, atol=1e-4),
    C("linalg.diagonal", F(3, 4), offset=1),
    C("linalg.matmul", F(3, 4), F(4, 2)),
    C("linalg.vecdot", F(3, 4), F(3, 4)),
    C("linalg.vander", F(2, 3)),
    C("linalg.tensorinv", SPD(4, 4), 1, rtol=1e-3, atol=1e-4),
    C(
        lambda a, b: resolve("linalg.tensorsolve")(a.reshape(2, 2, 4), b.reshape(2, 2)),
        SPD(4, 4),
        F(4),
        id="linalg.tensorsolve",
        rtol=1e-3,
        atol=1e-4,
        uses=("linalg.tensorsolve",),
    ),
    C("linalg.eig", F(3, 3)),
    # complex ops (complex64 on MLX), compared through real views of their results
    C(
        lambda a, b: _complex_parts(a, b),
        F(3, 4),
        F(3, 4),
        id="complex_ops",
        uses=(
            "complex",
            "polar",
            "view_as_real",
            "view_as_complex",
            "view_as_real_copy",
            "view_as_complex_copy",
            "real",
            "imag",
            "conj",
            "conj_physical",
            "resolve_conj",
            "resolve_neg",
            "angle",
            "sgn",
        ),
    ),
    C("linalg.eigvals", F(3, 3)),
    C("linalg.householder_product", F(5, 4), U(3)),
    C(lambda x: lucid.histogramdd(x, bins=[3, 2]).hist, F(6, 2), id="histogramdd", grad=False),
    C(lambda a, t, c: lucid.ormqr(a, t, c, transpose=True), F(4, 3), U(3), F(4, 2), id="ormqr"),
    C(lambda a: lucid.geqrf(a).a, F(5, 3), id="geqrf", grad=False),
    # lucid.masked: identities filled in by where, then the ordinary reductions
    C(lambda x, m: lucid.masked.softmax(x, 1, mask=m), F(3, 4), B(3, 4), id="masked_softmax"),
    C(lambda x, m: lucid.masked.var(x, 1, mask=m), F(3, 5), B(5), id="masked_var"),
    C(lambda x, m: lucid.masked.amax(x, 0, mask=m), F(3, 4), B(3, 4), id="masked_amax"),
    C("linalg.solve_triangular", SPD(3, 3), F(3, 2), upper=False, rtol=1e-3, atol=1e-4),
    C(
        lambda a, b: resolve("linalg.lstsq")(a, b).solution,
        F(5, 3),
        F(5, 2),
        id="linalg.lstsq",
        uses=("linalg.lstsq",),
        rtol=1e-3,
        atol=1e-4,
    ),
    # shape and movement
    C(lambda x: x.T, F(*S), id="T", uses=("t",)),
    C(
        lambda x: x.unsqueeze(1).squeeze(1),
        F(*S),
        id="unsqueeze-squeeze",
        uses=("unsqueeze", "squeeze"),
    ),
    C(
        lambda a, b: resolve("concat")([a, b], dim=0),
        F(*S),
        F(2, 4),
        id="concat",
        uses=("concat", "concatenate"),
    ),
    C(lambda a, b: resolve("hstack")([a, b]), F(*S), F(3, 2), id="hstack", uses=("hstack",)),
    C(lambda a, b: resolve("vstack")([a, b]), F(*S), F(2, 4), id="vstack", uses=("vstack",)),
    C(lambda a, b: resolve("dstack")([a, b]), F(*S), F(*S), id="dstack", uses=("dstack",)),
    C(
        lambda a, b: resolve("column_stack")([a, b]),
        F(3),
        F(3, 2),
        id="column_stack",
        uses=("column_stack",),
    ),
    C(lambda a, b: resolve("cat")([a, b], dim=1), F(*S), F(3, 2), id="cat", uses=("cat",)),
    C(lambda a, b: resolve("stack")([a, b], dim=0), F(*S), F(*S), id="stack", uses=("stack",)),
    C(lambda x: x.to(lucid.float64).to(lucid.float32), F(*S), id="cast", uses=("cast",)),
    # indexing
    C(lambda x: x[1:, ::2], F(*S), id="getitem-slice", uses=("getitem",)),
    C(lambda x: x[None, ..., 1], F(*S), id="getitem-none-ellipsis"),
    C(lambda x, i: x[i], F(*S), I(3, 5), id="getitem-fancy-repeats"),
    C(lambda x, m: x[m], F(*S), B(*S), id="getitem-mask"),
    C("masked_select", F(*S), B(*S)),
    C(lambda x, m: x[:, m[0]], F(*S), B(*S), id="getitem-slice-and-mask"),
    C(lambda x, m: x[m], F(2, 3, 4), B(2, 3), id="getitem-leading-mask"),
    C(lambda x, m: _masked_zero(x, m), F(*S), B(*S), id="setitem-mask-in-graph"),
    C(lambda x, i: resolve("take")(x, i), F(*S), I(12, 5), id="take", uses=("take",)),
    C(
        lambda x, i: resolve("take_along_dim")(x, i, 1),
        F(*S),
        I(4, 3, 2),
        id="take_along_dim",
        uses=("take_along_dim",),
    ),
    C(lambda x, i: resolve("gather")(x, 1, i), F(*S), I(4, 3, 2), id="gather", uses=("gather",)),
    C(
        lambda x, i: resolve("index_select")(x, 0, i),
        F(*S),
        I(3, 4),
        id="index_select",
        uses=("index_select",),
    ),
    C(
        lambda x, i, v: resolve("scatter")(x, 1, i, v),
        F(*S),
        I(4, 3, 1),
        F(3, 1),
        id="scatter",
        uses=("scatter",),
    ),
    C(
        lambda x, i, v: resolve("scatter_add")(x, 1, i, v),
        F(*S),
        I(4, 3, 5),
        F(3, 5),
        id="scatter_add",
        uses=("scatter_add",),
    ),
    *[  # an index smaller than self (and src) in the other dims
        C(_scatter_with(r), F(*S), I(4, *sh), F(*sh), id=f"scatter-{r}-{sh}", uses=("scatter",))
        for r, sh in ((None, (2, 2)), ("multiply", (3, 2)))
    ],
    *[
        C(
            lambda x, i, v, r=reduce, k=include: x.scatter_reduce(1, i, v, r, include_self=k),
            F(*S),
            I(4, 3, 5),
            F(3, 5),
            id=f"scatter_reduce-{reduce}-{include}",
            uses=("scatter_reduce",),
        )
        for reduce in ("sum", "prod", "mean", "amax", "amin")
        for include in (True, False)
    ],
    C(lambda x: x.view(lucid.int32), F(*S), grad=False, id="view-dtype", uses=("view",)),
    C(
        lambda x, v: resolve("index_reduce")(
            x, 0, lucid.tensor([0, 2, 0, 1], device=x.device), v, "amax"
        ),
        F(*S),
        F(4, 4),
        id="index_reduce",
        uses=("index_reduce",),
    ),
    C(
        lambda x, v: resolve("put")(x, lucid.tensor([0, 11, 4], device=x.device), v),
        F(*S),
        F(3),
        id="put",
        uses=("put",),
    ),
    C(
        lambda x, v: resolve("masked_scatter")(x, x > 0, v),
        F(*S),
        F(12),
        id="masked_scatter",
        uses=("masked_scatter",),
    ),
    C(
        lambda i: resolve("unravel_index")(i, (3, 4)),
        I(12, 5),
        grad=False,
        id="unravel_index",
        uses=("unravel_index",),
    ),
    C(
        lambda x: resolve("index_fill")(x, 1, lucid.tensor([3, 0], device=x.device), -0.5),
        F(*S),
        id="index_fill",
        uses=("index_fill",),
    ),
    C(
        lambda x, v: resolve("index_copy")(x, 0, lucid.tensor([2, 0], device=x.device), v),
        F(*S),
        F(2, 4),
        id="index_copy",
        uses=("index_copy",),
    ),
    C(
        lambda x, v: resolve("index_put")(
            x, (lucid.tensor([0, 2, 0], device=x.device),), v, accumulate=True
        ),
        F(*S),
        F(4),
        id="index_put",
        uses=("index_put",),
    ),
    C(
        lambda x, i, v: resolve("index_add")(x, 0, i, v),
        F(*S),
        I(3, 5),
        F(5, 4),
        id="index_add",
        uses=("index_add",),
    ),
    C(
        lambda x, m: resolve("masked_fill")(x, m, 0.5),
        F(*S),
        B(*S),
        id="masked_fill",
        uses=("masked_fill",),
    ),
    C(lambda x, v: _setitem(x, v), F(*S), F(4), id="setitem-in-graph", uses=("setitem",)),
    C(lambda x: x.detach().sum() + x.sum(), F(*S), id="detach"),
    C(
        lambda x, y: (x * 1).add_(y, alpha=2).mul_(y).sub_(x).div_(2.0),
        F(*S),
        F(*S),
        id="inplace-arith",
        uses=("add_", "mul_"),
    ),
    C(lambda x: (x * 1).clamp_(-0.5, 0.5).exp_(), F(*S), id="inplace-clamp-exp"),
    C(lambda x, y: (x * 1).copy_(y) + x, F(*S), F(1, 4), id="inplace-copy-broadcast"),
    C(lambda x: (x * 1).zero_().add_(x).fill_(2.0) * x, F(*S), id="inplace-zero-fill"),
    C(
        lambda x, a, b: (x * 1).addcmul_(a, b, value=0.5).addcdiv_(a, b.abs() + 1),
        F(*S),
        F(*S),
        F(*S),
        id="inplace-addcmul-addcdiv",
    ),
    # lucid.nn.functional
    C("nn.functional.linear", F(3, 4), F(5, 4), F(5)),
    C("nn.functional.leaky_relu", F(*S), negative_slope=0.1),
    C("nn.functional.dropout", F(*S), p=0.5, training=False),
    C("nn.functional.conv1d", F(2, 3, 9), F(4, 3, 3), F(4), stride=2, padding=1),
    C("nn.functional.conv2d", F(2, 3, 7, 7), F(4, 3, 3, 3), F(4), padding=1, rtol=1e-4, atol=1e-4),
    C(
        "nn.functional.conv2d",
        F(2, 4, 7, 7),
        F(4, 2, 3, 3),
        stride=2,
        dilation=1,
        groups=2,
        id="conv2d-strided-groups",
        atol=1e-4,
    ),
    C("nn.functional.conv_transpose2d", F(2, 3, 4, 4), F(3, 2, 3, 3), stride=2, atol=1e-4),
    C(
        "nn.functional.conv_transpose2d",
        F(2, 4, 4, 4),
        F(4, 3, 3, 3),
        F(6),
        stride=2,
        padding=1,
        output_padding=1,
        groups=2,
        id="conv_transpose2d-groups-outpad",
        atol=1e-4,
    ),
    C("nn.functional.conv_transpose1d", F(2, 3, 5), F(3, 2, 3), stride=3, dilation=2),
    C("nn.functional.conv3d", F(1, 2, 4, 4, 4), F(3, 2, 2, 2, 2), padding=(0, 1, 0), atol=1e-4),
    C("nn.functional.conv_transpose3d", F(1, 2, 3, 3, 3), F(2, 2, 2, 2, 2), stride=2, atol=1e-4),
    C("nn.functional.max_pool2d", F(2, 3, 6, 6), kernel_size=2),
    C(
        "nn.functional.max_pool2d",
        F(2, 3, 7, 7),
        kernel_size=3,
        stride=2,
        padding=1,
        id="max_pool2d-padded",
    ),
    C(
        "nn.functional.max_pool2d",
        F(2, 3, 7, 7),
        kernel_size=2,
        ceil_mode=True,
        id="max_pool2d-ceil",
    ),
    C(
        "nn.functional.max_pool2d",
        F(2, 3, 8, 8),
        kernel_size=2,
        dilation=2,
        id="max_pool2d-dilated",
    ),
    C(
        lambda x: resolve("nn.functional.max_pool2d")(x.relu(), 2),
        F(2, 3, 6, 6),
        id="max_pool2d-ties-after-relu",
    ),
    # Disjoint windows take MLX's tiled path (reshapes, no strided windows): rows and columns a
    # floor-mode pool leaves out get zero gradient.
    C("nn.functional.max_pool2d", F(2, 3, 7, 9), kernel_size=2, id="max_pool2d-tiles-cropped"),
    C(
        "nn.functional.max_pool2d",
        F(2, 3, 9, 7),
        kernel_size=(3, 2),
        id="max_pool2d-tiles-3x2",
    ),
    C("nn.functional.max_pool1d", F(2, 3, 10), kernel_size=3, id="max_pool1d-tiles"),
    C(
        lambda x: resolve("nn.functional.max_pool2d")(x, 2, return_indices=True),
        F(2, 3, 6, 6),
        id="max_pool2d-indices",
    ),
    C("nn.functional.max_pool3d", F(1, 2, 4, 4, 4), kernel_size=2),
    *(
        C(
            lambda x, nd=nd: via(f"nn.functional.max_unpool{nd}d")(
                *resolve(f"nn.functional.max_pool{nd}d")(x, 2, return_indices=True), 2
            ),
            F(2, 3, *(4,) * nd),
            uses=(f"nn.functional.max_unpool{nd}d",),
            id=f"max_unpool{nd}d",
        )
        for nd in (1, 2, 3)
    ),
    C("nn.functional.grid_sample", F(2, 3, 5, 5), U(2, 4, 4, 2), align_corners=False),
    C(
        "nn.functional.grid_sample",
        F(1, 2, 4, 4),
        U(1, 3, 3, 2),
        mode="nearest",
        padding_mode="border",
        align_corners=True,
        id="grid_sample-nearest-border",
    ),
    C("nn.functional.affine_grid", F(2, 2, 3), size=(2, 1, 4, 5), align_corners=False),
    C("nn.functional.avg_pool2d", F(2, 3, 6, 6), kernel_size=2),
    C(
        "nn.functional.avg_pool2d",
        F(2, 3, 7, 7),
        kernel_size=3,
        stride=2,
        padding=1,
        count_include_pad=False,
        id="avg_pool2d-exclude-pad",
    ),
    C(
        "nn.functional.avg_pool2d",
        F(2, 3, 7, 7),
        kernel_size=2,
        ceil_mode=True,
        id="avg_pool2d-ceil",
    ),
    C("nn.functional.avg_pool3d", F(1, 2, 4, 4, 4), kernel_size=2),
    C("nn.functional.max_pool1d", F(2, 3, 8), kernel_size=2),
    C("nn.functional.avg_pool1d", F(2, 3, 8), kernel_size=2),
    C("nn.functional.adaptive_avg_pool2d", F(2, 3, 6, 6), output_size=(1, 1)),
    C("nn.functional.adaptive_max_pool2d", F(2, 3, 6, 6), output_size=(2, 2)),
    C(
        "nn.functional.batch_norm",
        F(4, 3, 5),
        None,
        None,
        P(3),
        F(3),
        training=True,
        id="batch_norm-train",
    ),
    C("nn.functional.layer_norm", F(2, 3, 8), normalized_shape=(8,), id="layer_norm-plain"),
    C(
        lambda x, w, b: resolve("nn.functional.layer_norm")(x, (8,), w, b),
        F(2, 3, 8),
        P(8),
        F(8),
        id="layer_norm-affine",
        uses=("nn.functional.layer_norm",),
    ),
    C("nn.functional.group_norm", F(2, 4, 5), num_groups=2),
    C("nn.functional.instance_norm", F(2, 3, 6)),
    C("nn.functional.normalize", F(3, 5), dim=1),
    C("nn.functional.embedding", I(10, 2, 3), F(10, 4)),
    C("nn.functional.one_hot", I(5, 6), num_classes=5, grad=False),
    C("nn.functional.mse_loss", F(3, 5), F(3, 5)),
    C("nn.functional.l1_loss", F(3, 5), F(3, 5)),
    C("nn.functional.smooth_l1_loss", F(3, 5), F(3, 5)),
    C("nn.functional.huber_loss", F(3, 5), F(3, 5), delta=0.5),
    C("nn.functional.cross_entropy", F(4, 5), I(5, 4)),
    C(
        "nn.functional.cross_entropy",
        F(4, 5),
        I(5, 4),
        label_smoothing=0.1,
        id="cross_entropy-smoothing",
    ),
    C("nn.functional.nll_loss", F(4, 5), I(5, 4)),
    C("nn.functional.binary_cross_entropy_with_logits", F(3, 4), U(3, 4)),
    C(
        lambda x, t: resolve("nn.functional.binary_cross_entropy")(x.sigmoid(), t.abs()),
        F(3, 4),
        U(3, 4),
        id="binary_cross_entropy",
        uses=("nn.functional.binary_cross_entropy",),
    ),
    C("nn.functional.kl_div", F(3, 4), P(3, 4), reduction="batchmean"),
    C("nn.functional.gaussian_nll_loss", F(3, 4), F(3, 4), P(3, 4)),
    C("nn.functional.poisson_nll_loss", F(3, 4), P(3, 4)),
    C("nn.functional.triplet_margin_loss", F(3, 5), F(3, 5), F(3, 5)),
    C(
        lambda x, t: resolve("nn.functional.multilabel_soft_margin_loss")(x, (t > 0).float()),
        F(3, 4),
        F(3, 4),
        id="multilabel_soft_margin_loss",
        uses=("nn.functional.multilabel_soft_margin_loss",),
    ),
    C("nn.functional.cosine_similarity", F(3, 5), F(3, 5)),
    C("nn.functional.pairwise_distance", F(3, 5), F(3, 5)),
    C("nn.functional.pad", F(2, 3, 4), pad=(1, 2)),
    C("nn.functional.scaled_dot_product_attention", F(2, 3, 5, 4), F(2, 3, 6, 4), F(2, 3, 6, 4)),
    C(
        "nn.functional.scaled_dot_product_attention",
        F(2, 3, 5, 4),
        F(2, 3, 5, 4),
        F(2, 3, 5, 4),
        is_causal=True,
        id="sdpa-causal",
    ),
    C(
        "nn.functional.scaled_dot_product_attention",
        F(2, 3, 5, 4),
        F(2, 3, 6, 4),
        F(2, 3, 6, 4),
        F(5, 6),
        id="sdpa-float-mask-grad",
    ),
    C(
        lambda q, k, v, m: resolve("nn.functional.scaled_dot_product_attention")(
            q, k, v, attn_mask=m > -1.5
        ),
        F(2, 3, 5, 4),
        F(2, 3, 6, 4),
        F(2, 3, 6, 4),
        F(5, 6),
        id="sdpa-bool-mask",
    ),
    C(
        "nn.functional.scaled_dot_product_attention",
        F(2, 4, 5, 4),
        F(2, 2, 6, 4),
        F(2, 2, 6, 4),
        enable_gqa=True,
        id="sdpa-gqa",
    ),
    C(
        "nn.functional.scaled_dot_product_attention",
        F(2, 5, 4),
        F(2, 6, 4),
        F(2, 6, 4),
        is_causal=True,
        scale=0.3,
        id="sdpa-3d-causal-rectangular",
    ),
    # (L, N, E) = (5, 2, 8), 2 heads; seq-first as torch
    C(
        "nn.functional.multi_head_attention_forward",
        F(5, 2, 8),
        F(6, 2, 8),
        F(6, 2, 8),
        8,
        2,
        F(24, 8),
        F(24),
        None,
        None,
        False,
        0.0,
        F(8, 8),
        F(8),
        need_weights=True,
        atol=1e-4,
    ),
    C(
        "nn.functional.multi_head_attention_forward",
        F(5, 2, 8),
        F(5, 2, 8),
        F(5, 2, 8),
        8,
        2,
        F(24, 8),
        F(24),
        None,
        None,
        False,
        0.0,
        F(8, 8),
        F(8),
        need_weights=False,
        is_causal=False,
        attn_mask=None,
        id="mha-fused-path",
        atol=1e-4,
    ),
    C("nn.functional.interpolate", F(1, 2, 3, 3), scale_factor=2, mode="nearest"),
    C("nn.functional.pixel_shuffle", F(1, 8, 2, 2), upscale_factor=2),
    C("nn.functional.pixel_unshuffle", F(1, 2, 4, 4), downscale_factor=2),
    C("nn.functional.adaptive_avg_pool1d", F(2, 3, 7), output_size=3),
    C("nn.functional.adaptive_avg_pool3d", F(1, 2, 4, 4, 4), output_size=2),
    C("nn.functional.adaptive_max_pool1d", F(2, 3, 8), output_size=4),
    C("nn.functional.lp_pool1d", P(2, 3, 8), 2.0, 2),
    C("nn.functional.lp_pool2d", P(2, 3, 6, 6), 2.0, 2),
    C("nn.functional.fold", F(1, 8, 9), output_size=(4, 4), kernel_size=2),
    C("nn.functional.upsample", F(1, 2, 3, 3), scale_factor=2),
    C("nn.functional.upsample_nearest", F(1, 2, 3, 3), scale_factor=2),
    C("nn.functional.upsample_bilinear", F(1, 2, 3, 3), scale_factor=2),
    C("nn.functional.unfold", F(1, 2, 5, 5), kernel_size=3),
    C("nn.functional.glu", F(3, 4)),
    C("nn.functional.hardshrink", F(*S), 0.3),
    C("nn.functional.softshrink", F(*S), 0.3),
    C("nn.functional.threshold", F(*S), 0.1, 20.0),
    C("nn.functional.softmin", F(*S), dim=1),
    C("nn.functional.local_response_norm", F(2, 4, 3, 3), 2),
    C("nn.functional.dropout1d", F(2, 3, 4), p=0.5, training=False),
    C("nn.functional.dropout3d", F(2, 3, 2, 2, 2), p=0.5, training=False),
    *[
        C(f"nn.functional.{n}", F(2, 3, 4, 4), p=0.5, training=False)
        for n in ("dropout2d", "alpha_dropout", "feature_alpha_dropout")
    ],
    C(
        lambda a, b, t: resolve("nn.functional.cosine_embedding_loss")(a, b, t.sign()),
        F(3, 5),
        F(3, 5),
        F(3),
        id="cosine_embedding_loss",
        uses=("nn.functional.cosine_embedding_loss",),
    ),
    C(
        lambda a, t: resolve("nn.functional.hinge_embedding_loss")(a, t.sign()),
        F(3, 5),
        F(3, 5),
        id="hinge_embedding_loss",
        uses=("nn.functional.hinge_embedding_loss",),
    ),
    C(
        lambda a, b, t: resolve("nn.functional.margin_ranking_loss")(a, b, t.sign()),
        F(5),
        F(5),
        F(5),
        id="margin_ranking_loss",
        uses=("nn.functional.margin_ranking_loss",),
    ),
    C(
        lambda a, t: resolve("nn.functional.soft_margin_loss")(a, t.sign()),
        F(3, 5),
        F(3, 5),
        id="soft_margin_loss",
        uses=("nn.functional.soft_margin_loss",),
    ),
    C("nn.functional.prelu", F(3, 4), P(1)),
    *_torch_surface_cases(),
]


def _reconstruct_eigh(res: Any) -> Any:
    w, v = res
    return (v * w.unsqueeze(-2)) @ v.mT  # eigenvectors' signs are arbitrary: rebuild A


def _reconstruct_svd(res: Any) -> Any:
    u, s, vh = res
    return (u * s.unsqueeze(-2)) @ vh


def _qr_product(res: Any) -> Any:
    q, r = res
    return q @ r


def _masked_zero(x: Any, m: Any) -> Any:
    y = x * 1
    y[m] = 0.0
    return y


def _setitem(x: Any, v: Any) -> Any:
    y = x * 1
    y[1] = v
    return y


# -- running a case on one backend ------------------------------------------------------------


def _inputs(case: Case) -> list[Any]:
    if case.sample is not None:  # float64 samples run in float32, as every case here
        arrays = [a.astype(np.float32) if a.dtype.kind == "f" else a for a in case.sample.arrays()]
        return arrays + list(case.args)
    rng = np.random.default_rng(zlib.crc32(case.id.encode()))
    return [a.make(rng) if isinstance(a, Arg) else a for a in case.args]


def _outputs(result: Any) -> list[Any]:
    if isinstance(result, lucid.Tensor):
        return [result]
    if isinstance(result, (tuple, list)):
        return [r for r in result if isinstance(r, lucid.Tensor)]
    raise TypeError(f"case returned {type(result).__name__}, expected Tensor(s)")


def _run(case: Case, device: str, arrays: list[Any]) -> tuple[list[Any], list[Any]]:
    """Outputs and input gradients (as numpy) of ``case`` on ``device``."""
    tensors: list[Any] = []
    for arr in arrays:
        if not isinstance(arr, np.ndarray):  # None or a plain Python value
            tensors.append(arr)
            continue
        needs = case.grad and arr.dtype == np.float32
        tensors.append(lucid.tensor(arr, device=device, requires_grad=needs))
    outs = _outputs(case.run(tensors))
    rng = np.random.default_rng(7)
    loss = None
    for o in outs:
        if o.requires_grad:
            w = lucid.tensor(rng.standard_normal(o.shape).astype(np.float32), device=device)
            term = (o * w).sum()
            loss = term if loss is None else loss + term
    if loss is not None:
        loss.backward()
    grads = [
        t.grad.numpy() if isinstance(t, lucid.Tensor) and t.grad is not None else None
        for t in tensors
    ]
    return [o.detach().numpy() for o in outs], grads


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_same_result_on_numpy_and_mlx(case: Case) -> None:
    if case.id in MLX_SKIP:
        pytest.skip(MLX_SKIP[case.id])
    arrays = _inputs(case)
    want_out, want_grads = _run(case, "cpu", arrays)
    if case.mlx_xfail:
        with pytest.raises(Exception):  # noqa: B017 - any failure: the gap is still open
            _run(case, "mlx", arrays)
        pytest.xfail(case.mlx_xfail)
    got_out, got_grads = _run(case, "mlx", arrays)
    assert len(got_out) == len(want_out)
    for k, (got, want) in enumerate(zip(got_out, want_out)):
        assert got.dtype == want.dtype, f"output {k}: dtype {got.dtype} on mlx, {want.dtype} on cpu"
        np.testing.assert_allclose(got, want, case.rtol, case.atol, err_msg=f"output {k}")
    for k, (got, want) in enumerate(zip(got_grads, want_grads)):
        assert (got is None) == (want is None), f"grad of input {k}: {got} vs {want}"
        if want is not None:
            np.testing.assert_allclose(got, want, case.rtol, case.atol, err_msg=f"grad {k}")


# -- coverage ---------------------------------------------------------------------------------

# Public names that are not array ops with numeric results to compare.
NOT_OPS = {
    "to_device",
    "sum_to_size",
    "setitem",
    "getitem",
    "view",
    "swapaxes",
    "swapdims",
    "broadcast_to",
    "expand_as",
    "is_tensor",
    "numel",
    "equal",
    "allclose",  # return a Python bool
    "broadcast_shapes",  # returns a shape
    "can_cast",
    "is_complex",
    "is_conj",
    "is_neg",
    "is_floating_point",
    "is_nonzero",
    "is_same_size",
    "result_type",  # predicates and dtypes
}


def _public(module_path: str) -> set[str]:
    try:
        module = importlib.import_module(module_path)
    except ImportError:
        return set()
    names = getattr(module, "__all__", None) or [n for n in dir(module) if not n.startswith("_")]
    return {n for n in names if callable(getattr(module, n, None)) and n[0].islower()}


def test_case_ids_are_unique_and_skips_name_cases() -> None:
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids)), sorted({i for i in ids if ids.count(i) > 1})
    assert set(MLX_SKIP) <= set(ids), f"MLX_SKIP names no case: {set(MLX_SKIP) - set(ids)}"


def test_a_case_of_a_missing_op_fails_instead_of_skipping() -> None:
    case = C("no_such_op", F(2))
    with pytest.raises(AttributeError, match="no_such_op"):
        _run(case, "cpu", _inputs(case))


def test_every_op_has_a_case() -> None:
    covered = {
        p.rpartition(".")[2] if p.startswith("nn.") else p for c in CASES for p in c.covers()
    }
    covered |= {c.id.split("-")[0] for c in CASES}
    covered |= {row.name for _, row in lucid.ops.rows() if row.alias in covered}
    ops = _public("lucid.ops") - NOT_OPS
    functional = _public("lucid.nn.functional") - NOT_OPS
    linalg = {"linalg." + n for n in _public("lucid.linalg")}
    covered |= {c.id.split("-")[0] for c in CASES if c.id.startswith("linalg.")}
    missing = sorted((ops | functional | linalg) - covered)
    assert not missing, f"ops with no MLX parity case: {missing}; add a Case to CASES in {__file__}"
