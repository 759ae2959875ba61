"""Data types of the IR, spelled as strings the way TVM spells them.

A dtype is a scalar name ("float32", "int64", "bool", "handle") with an optional
lane count for vectors ("float32x4"). Everything that makes, checks or combines
dtypes goes through this module so that the parser, the nodes and the printers
agree on one spelling.
"""

from __future__ import annotations

from functools import cache

FLOAT_TYPES = ("float16", "bfloat16", "float32", "float64")
INT_TYPES = ("int8", "int16", "int32", "int64")
UINT_TYPES = ("uint8", "uint16", "uint32", "uint64")
SCALAR_TYPES = FLOAT_TYPES + INT_TYPES + UINT_TYPES + ("bool",)
ALL_TYPES = SCALAR_TYPES + ("handle",)


@cache
def split_lanes(dtype: str) -> tuple[str, int]:
    """Split "float32x4" into ("float32", 4); scalars have one lane."""
    if not isinstance(dtype, str):
        raise TypeError(f"dtype must be a string such as 'float32', got {dtype!r}")
    base, sep, lanes = dtype.partition("x")
    if sep and lanes.isdigit() and int(lanes) > 1 and base in SCALAR_TYPES:
        return base, int(lanes)
    if dtype in ALL_TYPES:
        return dtype, 1
    raise ValueError(
        f"unknown dtype {dtype!r}; expected one of {', '.join(SCALAR_TYPES)} "
        "(optionally with lanes, e.g. 'float32x4')"
    )


def check(dtype: str) -> str:
    """Return ``dtype`` unchanged if it is a dtype we know, else raise ValueError."""
    split_lanes(dtype)
    return dtype


def element_of(dtype: str) -> str:
    """The scalar type of a (vector) dtype: "float32x4" -> "float32"."""
    return split_lanes(dtype)[0]


def lanes_of(dtype: str) -> int:
    return split_lanes(dtype)[1]


def with_lanes(dtype: str, lanes: int) -> str:
    base = element_of(dtype)
    return base if lanes == 1 else f"{base}x{lanes}"


def is_float(dtype: str) -> bool:
    return element_of(dtype) in FLOAT_TYPES


def is_int(dtype: str) -> bool:
    return element_of(dtype) in INT_TYPES


def is_uint(dtype: str) -> bool:
    return element_of(dtype) in UINT_TYPES


def is_integer(dtype: str) -> bool:
    """Signed or unsigned integer (bool excluded)."""
    return is_int(dtype) or is_uint(dtype)


def is_bool(dtype: str) -> bool:
    return element_of(dtype) == "bool"


def bits_of(dtype: str) -> int:
    base = element_of(dtype)
    if base == "bool":
        return 8
    if base == "handle":
        return 64
    return int(base.lstrip("bfloatuin"))


def bytes_of(dtype: str) -> int:
    """Storage size of one value of ``dtype`` (all lanes)."""
    return bits_of(dtype) // 8 * lanes_of(dtype)
