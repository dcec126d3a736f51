"""Lucid's dtypes: one small class per element type, mapped to each backend's native type.

The seeds call this class "Numeric". Type promotion follows PyTorch: categories
bool < integer < floating < complex; within a category the wider type wins; zero-dim tensors
and Python scalars only raise the category, never the width.
"""

from __future__ import annotations

from typing import Any, Final


class dtype:  # noqa: N801 - PyTorch's name
    """An element type. Compare with ``is`` or ``==``; ``str(lucid.float32) == "lucid.float32"``."""

    __slots__ = ("name", "itemsize", "category", "_rank")

    def __init__(self, name: str, itemsize: int, category: int, rank: int) -> None:
        self.name = name
        self.itemsize = itemsize
        self.category = category  # 0 bool, 1 int, 2 float, 3 complex
        self._rank = rank

    @property
    def is_floating_point(self) -> bool:
        """Whether this is a floating point dtype."""
        return self.category == FLOAT

    @property
    def is_complex(self) -> bool:
        """Whether this is a complex dtype."""
        return self.category == COMPLEX

    @property
    def is_signed(self) -> bool:
        """Whether this dtype holds negative values (not ``uint8``, ``bool`` or
        ``float8_e8m0fnu``)."""
        return self.name not in ("uint8", "bool", "float8_e8m0fnu")

    def __repr__(self) -> str:
        return f"lucid.{self.name}"

    def __reduce__(self) -> str:
        return self.name


BOOL, INT, FLOAT, COMPLEX = 0, 1, 2, 3

bool_ = dtype("bool", 1, BOOL, 0)
uint8 = dtype("uint8", 1, INT, 1)
int8 = dtype("int8", 1, INT, 1)
int16 = dtype("int16", 2, INT, 2)
int32 = dtype("int32", 4, INT, 3)
int64 = dtype("int64", 8, INT, 4)
float16 = dtype("float16", 2, FLOAT, 1)
bfloat16 = dtype("bfloat16", 2, FLOAT, 1)
float32 = dtype("float32", 4, FLOAT, 2)
float64 = dtype("float64", 8, FLOAT, 3)
complex64 = dtype("complex64", 8, COMPLEX, 1)
complex128 = dtype("complex128", 16, COMPLEX, 2)
# float8 (torch's five): storage and conversion only, as torch's CPU; rank -1 marks them (no
# promotion with any other dtype). On NumPy they are ml_dtypes' types, mapped on first use.
float8_e4m3fn = dtype("float8_e4m3fn", 1, FLOAT, -1)
float8_e5m2 = dtype("float8_e5m2", 1, FLOAT, -1)
float8_e4m3fnuz = dtype("float8_e4m3fnuz", 1, FLOAT, -1)
float8_e5m2fnuz = dtype("float8_e5m2fnuz", 1, FLOAT, -1)
float8_e8m0fnu = dtype("float8_e8m0fnu", 1, FLOAT, -1)

ALL_DTYPES: Final = (
    bool_, uint8, int8, int16, int32, int64,
    float16, bfloat16, float32, float64, complex64, complex128,
)  # fmt: skip
FLOAT8_DTYPES: Final = (
    float8_e4m3fn, float8_e5m2, float8_e4m3fnuz, float8_e5m2fnuz, float8_e8m0fnu,
)  # fmt: skip
# The native (backend) dtypes of the float8 dtypes some backend has mapped so far: empty until
# a program uses float8, so ``Function.apply``'s float8 check costs one falsy test till then.
FLOAT8_NATIVE: Final[set[Any]] = set()
BY_NAME: Final[dict[str, dtype]] = {d.name: d for d in ALL_DTYPES + FLOAT8_DTYPES}
BY_NAME.update({"half": float16, "float": float32, "double": float64, "long": int64,
                "int": int32, "short": int16})  # fmt: skip

# torch's C++ names of the dtypes (ScalarType), as its error messages print them.
SCALAR_TYPE_NAMES: Final[dict[str, str]] = {
    "float64": "Double", "float32": "Float", "float16": "Half", "bfloat16": "BFloat16",
    "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
    "bool": "Bool", "complex64": "ComplexFloat", "complex128": "ComplexDouble",
    **{d.name: d.name.capitalize() for d in FLOAT8_DTYPES},  # Float8_e4m3fn ...
}  # fmt: skip

_default_float = float32


def get_default_dtype() -> dtype:
    """The current default floating point dtype (``lucid.float32`` unless set)."""
    return _default_float


def set_default_dtype(d: dtype) -> None:
    """Set the default floating point dtype that float tensors are created with."""
    global _default_float
    if not isinstance(d, dtype) or not d.is_floating_point:
        raise TypeError(f"only floating-point types are supported as the default type, got {d}")
    if d._rank < 0:  # float8: torch's error (no storage class)
        raise TypeError(f"couldn't find storage object {SCALAR_TYPE_NAMES[d.name]}Storage")
    _default_float = d


def to_dtype(d: Any) -> dtype:
    """Accept a lucid dtype, a name, a numpy dtype or a Python type."""
    if isinstance(d, dtype):
        return d
    if d is float:
        return _default_float
    if d is int:
        return int64
    if d is bool:
        return bool_
    if d is complex:
        return complex64
    name = getattr(d, "name", None) if not isinstance(d, str) else d
    if name is None:
        name = str(d)
    found = BY_NAME.get(str(name))
    if found is None:
        raise TypeError(f"unknown dtype {d!r}; expected one of {sorted(BY_NAME)}")
    return found


def _wider(a: dtype, b: dtype) -> dtype:
    if a is b:
        return a
    if a._rank < 0 or b._rank < 0:
        raise RuntimeError(
            "Promotion for Float8 Types is not supported, attempted to promote "
            f"{SCALAR_TYPE_NAMES[a.name]} and {SCALAR_TYPE_NAMES[b.name]}"
        )
    if a.category != b.category:
        return a if a.category > b.category else b
    if a.category == INT and {a.name, b.name} == {"uint8", "int8"}:
        return int16
    if a.category == FLOAT and {a.name, b.name} == {"float16", "bfloat16"}:
        return float32
    return a if a._rank >= b._rank else b


def promote_types(type1: dtype, type2: dtype) -> dtype:
    """``torch.promote_types``: the smallest dtype both convert to safely."""
    return _wider(type1, type2)


def scalar_dtype(value: object) -> dtype:
    """The dtype a Python scalar would have as a tensor."""
    if isinstance(value, bool):
        return bool_
    if isinstance(value, int):
        return int64
    if isinstance(value, complex):
        return complex64 if _default_float is not float64 else complex128
    return _default_float


def result_type(dims: list[dtype], zero_dims: list[dtype], scalars: list[object]) -> dtype:
    """PyTorch's result type: dimensioned tensors, then zero-dim tensors, then scalars."""
    res: dtype | None = None
    for d in dims:
        res = d if res is None else _wider(res, d)
    zres: dtype | None = None
    for d in zero_dims:
        zres = d if zres is None else _wider(zres, d)
    if res is None:
        res = zres
    elif zres is not None and zres.category > res.category:
        res = zres
    for s in scalars:
        sd = scalar_dtype(s)
        if res is None:
            res = sd
        elif sd.category > res.category:
            if sd.category == FLOAT:
                res = _default_float
            elif res is float64:  # a complex scalar keeps the float's width
                res = complex128
            else:
                res = sd
    assert res is not None
    return res
