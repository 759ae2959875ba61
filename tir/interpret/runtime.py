"""Helpers that the executor's generated Python code calls, and the errors it raises.

The executor (``tir.interpret``) turns a PrimFunc into Python source; that source
computes with Python ints and floats and calls the functions here for what plain
Python operators get wrong for a C-like language: truncating division, casts that
round to float32/float16/bfloat16 or wrap integers, math functions that return
inf/nan instead of raising, float16 and bfloat16 storage (memoryviews have no half
format, so both are stored as their uint16 bits; tir/bfloat16.py rounds to
bfloat16), vector loads and stores, and the errors for
out-of-bounds accesses and iterator bindings outside their domain.
"""

from __future__ import annotations

import math
import struct
import sys

from .. import dtype as _dt
from ..bfloat16 import BFLOAT16_VALUES, bfloat16_bits, round_to_bfloat16

INF = math.inf
NAN = math.nan

# memoryview format per element dtype; float16 and bfloat16 live as their uint16 bits ("H").
STORAGE_FORMATS = {
    "float16": "H",
    "bfloat16": "H",
    "float32": "f",
    "float64": "d",
    "int8": "b",
    "int16": "h",
    "int32": "i",
    "int64": "q",
    "uint8": "B",
    "uint16": "H",
    "uint32": "I",
    "uint64": "Q",
    "bool": "?",
}


class OutOfBoundsError(IndexError):
    """A load or store touched an element outside its buffer's shape."""


class BindingError(ValueError):
    """A block iterator was bound to a value outside its domain."""


class IRError(ValueError):
    """The IR cannot be executed as written (free variable, unallocated buffer, ...)."""


# ---------------------------------------------------------------- storage


def storage_format(dtype: str) -> str:
    base = _dt.element_of(dtype)
    if base not in STORAGE_FORMATS:
        raise IRError(f"the executor cannot store values of dtype {dtype!r}")
    return STORAGE_FORMATS[base]


def _fill_value(dtype: str):
    """What fresh storage holds: NaN for floats, an unlikely sentinel for integers."""
    if dtype == "float16":
        return 0x7E00
    if dtype == "bfloat16":
        return 0x7FC0
    if _dt.is_float(dtype):
        return NAN
    if dtype == "bool":
        return True
    bits = _dt.bits_of(dtype)
    return 2**bits - 1 if _dt.is_uint(dtype) else -(2 ** (bits - 1))


def allocate(dtype: str, size: int) -> memoryview:
    """Fresh flat storage of ``size`` elements, filled so that unwritten reads stand out."""
    fmt = storage_format(dtype)
    if size < 0:
        raise IRError(f"cannot allocate a buffer of {size} elements")
    return memoryview(bytearray(struct.pack("=" + fmt, _fill_value(dtype)) * size)).cast(fmt)


# ---------------------------------------------------------------- float rounding


def round_f32(x) -> float:
    """``x`` rounded to the nearest float32 (overflow gives +-inf, as a C cast does)."""
    try:
        return struct.unpack("=f", struct.pack("=f", x))[0]
    except OverflowError:
        return math.copysign(INF, x)


def round_f16(x) -> float:
    try:
        return struct.unpack("=e", struct.pack("=e", x))[0]
    except OverflowError:
        return math.copysign(INF, x)


def f16_bits(x) -> int:
    """The uint16 storage bits of ``x`` rounded to float16."""
    try:
        return struct.unpack("=H", struct.pack("=e", x))[0]
    except OverflowError:
        return 0xFC00 if x < 0 else 0x7C00


F16_VALUES = [struct.unpack("=e", struct.pack("=H", bits))[0] for bits in range(65536)]


# ---------------------------------------------------------------- integers


def wrap_int(value, bits: int, signed: bool) -> int:
    """Reduce ``value`` modulo 2**bits into the type's range, as C's conversions do."""
    if not isinstance(value, int):
        raise IRError(
            f"cannot store the float {value!r} into a {'' if signed else 'u'}int{bits} buffer; "
            "the IR needs an explicit T.Cast"
        )
    value &= (1 << bits) - 1
    if signed and value >> (bits - 1):
        value -= 1 << bits
    return value


def float_to_int(x: float, bits: int, signed: bool) -> int:
    """C's float-to-int conversion: truncate toward zero.

    Values that do not fit (and nan, inf) are undefined in C; we give what x86 does
    for signed types, the type's minimum, and wrap for unsigned ones.
    """
    if math.isnan(x) or math.isinf(x):
        return -(2 ** (bits - 1)) if signed else 0
    value = int(x)
    if signed:
        if not -(2 ** (bits - 1)) <= value < 2 ** (bits - 1):
            return -(2 ** (bits - 1))
        return value
    return wrap_int(value, bits, False)


def truncdiv(a: int, b: int) -> int:
    """Integer division rounding toward zero (C's ``/``)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def truncmod(a: int, b: int) -> int:
    """Remainder of truncdiv; its sign follows the dividend (C's ``%``)."""
    return a - b * truncdiv(a, b)


# ---------------------------------------------------------------- float arithmetic


def fdiv(a: float, b: float) -> float:
    """IEEE division: x/0 is +-inf, 0/0 is nan."""
    try:
        return a / b
    except ZeroDivisionError:
        if a == 0 or math.isnan(a):
            return NAN
        return math.copysign(INF, a) * math.copysign(1.0, b)


def ffloordiv(a: float, b: float) -> float:
    q = fdiv(a, b)
    return float(math.floor(q)) if math.isfinite(q) else q


def ffloormod(a: float, b: float) -> float:
    if b == 0 or not math.isfinite(a):
        return NAN
    return a - ffloordiv(a, b) * b


def fmod(a: float, b: float) -> float:
    """C's fmod: the remainder has the sign of the dividend; fmod(x, 0) is nan."""
    try:
        return math.fmod(a, b)
    except ValueError:
        return NAN


# ---------------------------------------------------------------- intrinsics


def exp(x: float) -> float:
    try:
        return math.exp(x)
    except OverflowError:
        return INF


def exp2(x: float) -> float:
    try:
        return 2.0**x
    except OverflowError:
        return INF


def log(x: float) -> float:
    if x > 0:
        return math.log(x)
    return -INF if x == 0 else NAN


def log2(x: float) -> float:
    if x > 0:
        return math.log2(x)
    return -INF if x == 0 else NAN


def log10(x: float) -> float:
    if x > 0:
        return math.log10(x)
    return -INF if x == 0 else NAN


def tan(x: float) -> float:
    return math.tan(x) if math.isfinite(x) else NAN


def trunc(x: float) -> float:
    return float(math.trunc(x)) if math.isfinite(x) else x


def sqrt(x: float) -> float:
    return math.sqrt(x) if x >= 0 else NAN


def rsqrt(x: float) -> float:
    if x > 0:
        return 1.0 / math.sqrt(x)
    if x == 0:
        return math.copysign(INF, x)
    return NAN


def sin(x: float) -> float:
    return math.sin(x) if math.isfinite(x) else NAN


def cos(x: float) -> float:
    return math.cos(x) if math.isfinite(x) else NAN


def sigmoid(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = exp(x)
    return e / (1.0 + e)


def floor(x: float) -> float:
    return float(math.floor(x)) if math.isfinite(x) else x


def ceil(x: float) -> float:
    return float(math.ceil(x)) if math.isfinite(x) else x


def round_half_away(x: float) -> float:
    """C's ``round``: halfway cases go away from zero (unlike Python's ``round``)."""
    if not math.isfinite(x):
        return x
    magnitude = abs(x)
    whole = math.floor(magnitude)
    if magnitude - whole >= 0.5:
        whole += 1
    return math.copysign(float(whole), x)


def power(x: float, y: float) -> float:
    try:
        return math.pow(x, y)
    except OverflowError:
        odd = y == int(y) and int(y) % 2 == 1
        return -INF if x < 0 and odd else INF
    except ValueError:
        if x == 0:  # 0 ** negative
            odd = y == int(y) and int(y) % 2 == 1
            return math.copysign(INF, x) if odd else INF
        return NAN


def reinterpret(value, from_dtype: str, to_dtype: str):
    """``T.reinterpret``: the bits of a scalar of ``from_dtype`` read as ``to_dtype`` (same width).
    Values here are numbers (float16 too: struct's "e"), not the stored bits of STORAGE_FORMATS."""
    codes = {**STORAGE_FORMATS, "float16": "e"}
    unsupported = ("bool", "bfloat16")
    if from_dtype in unsupported or to_dtype in unsupported or not {from_dtype, to_dtype} <= codes.keys():
        raise IRError(f"the executor reinterprets scalar numbers only, not {from_dtype} as {to_dtype}")
    if _dt.is_float(from_dtype):
        value = float(value)
    return struct.unpack(codes[to_dtype], struct.pack(codes[from_dtype], value))[0]


def fma(a: float, b: float, c: float) -> float:
    return a * b + c


# intrinsic name -> name of the helper in the generated code's namespace
INTRINSIC_HELPERS = {
    "exp": "_exp",
    "exp2": "_exp2",
    "log": "_log",
    "log2": "_log2",
    "sqrt": "_sqrt",
    "rsqrt": "_rsqrt",
    "sin": "_sin",
    "cos": "_cos",
    "tanh": "_tanh",
    "sigmoid": "_sigmoid",
    "fabs": "_fabs",
    "floor": "_floor",
    "ceil": "_ceil",
    "round": "_round",
    "log10": "_log10",
    "tan": "_tan",
    "trunc": "_trunc",
    "erf": "_erf",
    "atan2": "_atan2",
    "likely": "_likely",
    "pow": "_pow",
    "fma": "_fma",
}


# ---------------------------------------------------------------- access checks


class AccessSite:
    """One load or store in the IR, described so that an out-of-bounds access can say
    which block touched which element of which buffer."""

    def __init__(self, where: str, verb: str, buffer_name: str, shape: str, index_source: str, names: dict):
        self.where = where
        self.verb = verb
        self.buffer_name = buffer_name
        self.shape = shape
        self.index_source = index_source
        self.names = names  # generated identifier -> IR variable name, for the message

    def error(self, frame, dim: int, value, extent, lane: int | None = None) -> OutOfBoundsError:
        values = self._index_values(frame)
        if values is None:
            element = f"index {value} in dimension {dim}"
        else:
            if lane is not None:
                values = [v[lane] if isinstance(v, list) else v for v in values]
            element = f"{self.buffer_name}[{', '.join(str(v) for v in values)}]"
        if lane is not None:
            element += f" (lane {lane} of a vector access)"
        context = self._loop_values(frame)
        return OutOfBoundsError(
            f"{self.where} {self.verb} {element} outside its shape {self.shape} "
            f"(dimension {dim} has extent {extent}){context}"
        )

    def _index_values(self, frame):
        try:
            return eval(self.index_source, frame.f_globals, dict(frame.f_locals))
        except Exception:  # a vector access or a closure we cannot re-evaluate
            return None

    def _loop_values(self, frame) -> str:
        local_values = frame.f_locals
        pairs = [
            f"{ir_name}={local_values[ident]}"
            for ident, ir_name in self.names.items()
            if ident in local_values and isinstance(local_values[ident], int)
        ]
        return f" at {', '.join(pairs)}" if pairs else ""


def check_index(value, extent, site: AccessSite, dim: int):
    """``value`` if it indexes dimension ``dim`` of the site's buffer, else raise."""
    if 0 <= value < extent:
        return value
    raise site.error(sys._getframe(1), dim, value, extent)


class BindingSite:
    """A block iterator whose binding may leave its domain."""

    def __init__(self, block_name: str, iter_name: str, binding: str):
        self.block_name = block_name
        self.iter_name = iter_name
        self.binding = binding

    def error(self, value, low, high) -> BindingError:
        return BindingError(
            f"block '{self.block_name}': iterator {self.iter_name} is bound to {value} "
            f"({self.binding}), outside its domain [{low}, {high}); the loops around the block "
            "run past the block's domain: guard the block with T.where or fix the loop extents"
        )


# ---------------------------------------------------------------- vectors


def ramp(base: int, stride: int, lanes: int) -> list:
    return [base + stride * lane for lane in range(lanes)]


def _flat_lane_indices(indices, strides, extents, lanes, site: AccessSite, frame) -> list[int]:
    flat = [0] * lanes
    for dim, index in enumerate(indices):
        per_lane = index if isinstance(index, list) else [index] * lanes
        stride, extent = strides[dim], extents[dim]
        for lane, value in enumerate(per_lane):
            if not 0 <= value < extent:
                raise site.error(frame, dim, value, extent, lane)
            flat[lane] += value * stride
    return flat


def vector_load(storage, indices, strides, extents, lanes: int, site: AccessSite, convert=None) -> list:
    """Load one element per lane; ``indices`` holds per-dimension ints or per-lane lists."""
    flat = _flat_lane_indices(indices, strides, extents, lanes, site, sys._getframe(1))
    values = [storage[i] for i in flat]
    return [convert[v] for v in values] if convert is not None else values


def vector_store(storage, indices, strides, extents, lanes: int, site: AccessSite, value, convert=None):
    flat = _flat_lane_indices(indices, strides, extents, lanes, site, sys._getframe(1))
    values = value if isinstance(value, list) else [value] * lanes
    for i, v in zip(flat, values):
        storage[i] = convert(v) if convert is not None else v


def int_converter(dtype: str):
    bits, signed = _dt.bits_of(dtype), _dt.is_int(dtype)
    return lambda value: wrap_int(value, bits, signed)


# names the generated code sees, besides the per-kernel sites and constants
NAMESPACE = {
    "__builtins__": {
        "range": range,
        "min": min,
        "max": max,
        "int": int,
        "float": float,
        "bool": bool,
        "zip": zip,
    },
    "_INF": INF,
    "_NAN": NAN,
    "_alloc": allocate,
    "_f32": round_f32,
    "_f16": round_f16,
    "_f16_bits": f16_bits,
    "_F16": F16_VALUES,
    "_bf16": round_to_bfloat16,
    "_bf16_bits": bfloat16_bits,
    "_BF16": BFLOAT16_VALUES,
    "_wrap": wrap_int,
    "_ftoi": float_to_int,
    "_tdiv": truncdiv,
    "_tmod": truncmod,
    "_fdiv": fdiv,
    "_ffloordiv": ffloordiv,
    "_ffloormod": ffloormod,
    "_fmod": fmod,
    "_exp": exp,
    "_exp2": exp2,
    "_log": log,
    "_log2": log2,
    "_sqrt": sqrt,
    "_rsqrt": rsqrt,
    "_sin": sin,
    "_cos": cos,
    "_tanh": math.tanh,
    "_sigmoid": sigmoid,
    "_fabs": math.fabs,
    "_floor": floor,
    "_ceil": ceil,
    "_round": round_half_away,
    "_log10": log10,
    "_tan": tan,
    "_trunc": trunc,
    "_erf": math.erf,
    "_atan2": math.atan2,
    "_likely": bool,
    "_pow": power,
    "_fma": fma,
    "_reinterpret": reinterpret,
    "_ck": check_index,
    "_ramp": ramp,
    "_vload": vector_load,
    "_vstore": vector_store,
}
