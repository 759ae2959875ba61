"""Builders for expressions: dtype promotion, light constant folding, intrinsics.

These are what Python operators on expressions call, and what the parser and
the schedule use to make arithmetic. Folding here is local and cheap (constant
operands, ``x + 0``, ``x * 1``); the canonical simplifier in ``tir.arith`` does
the real work.
"""

from __future__ import annotations

import math
import sys

from . import dtype as _dt
from .expr import (
    EQ,
    GE,
    GT,
    LE,
    LT,
    NE,
    Add,
    And,
    Broadcast,
    Call,
    Cast,
    Div,
    FloatImm,
    FloorDiv,
    FloorMod,
    IntImm,
    Max,
    Min,
    Mod,
    Mul,
    Not,
    Or,
    PrimExpr,
    Select,
    StringImm,
    Sub,
    const,
)

# name -> number of arguments (None: any); result dtype follows the first float argument
INTRINSICS = {
    "exp": 1,
    "exp2": 1,
    "log": 1,
    "log2": 1,
    "sqrt": 1,
    "rsqrt": 1,
    "sin": 1,
    "cos": 1,
    "tanh": 1,
    "sigmoid": 1,
    "fabs": 1,
    "floor": 1,
    "ceil": 1,
    "round": 1,
    "log10": 1,
    "tan": 1,
    "trunc": 1,
    "erf": 1,
    "atan2": 2,
    "pow": 2,
    "fma": 3,
    "if_then_else": 3,
    "tvm_storage_sync": 1,
    "likely": 1,
}
# Calls the IR carries but does not compute: a C function (call_extern), TVM's packed-function
# runtime (call_packed) and the tensor-core intrinsics as TVM's printed programs spell them.
# The executor refuses them; each printer spells them or raises a BuildError.
OPAQUE_CALLS = (
    "call_extern",
    "call_packed",
    "tvm_fill_fragment",
    "tvm_load_matrix_sync",
    "tvm_store_matrix_sync",
    "tvm_mma_sync",
    "tvm_bmma_sync",
)

_INT_FOLD = {
    Add: lambda a, b: a + b,
    Sub: lambda a, b: a - b,
    Mul: lambda a, b: a * b,
    FloorDiv: lambda a, b: a // b,
    FloorMod: lambda a, b: a % b,
    Div: lambda a, b: int(a / b) if b else None,
    Mod: lambda a, b: int(math.fmod(a, b)) if b else None,
    Min: min,
    Max: max,
}
_FLOAT_FOLD = {
    Add: lambda a, b: a + b,
    Sub: lambda a, b: a - b,
    Mul: lambda a, b: a * b,
    Div: lambda a, b: a / b if b else None,
    Min: min,
    Max: max,
}
_CMP_FOLD = {
    EQ: lambda a, b: a == b,
    NE: lambda a, b: a != b,
    LT: lambda a, b: a < b,
    LE: lambda a, b: a <= b,
    GT: lambda a, b: a > b,
    GE: lambda a, b: a >= b,
}


def _is_const(x: PrimExpr, value=None) -> bool:
    if not isinstance(x, (IntImm, FloatImm)):
        return False
    return value is None or x.value == value


def _promote(a, b) -> tuple[PrimExpr, PrimExpr]:
    """Bring two operands to one dtype; Python numbers take the other side's dtype."""
    if not isinstance(a, PrimExpr) and not isinstance(b, PrimExpr):
        a = const(a)
    if not isinstance(a, PrimExpr):
        return _literal_like(a, b), b
    if not isinstance(b, PrimExpr):
        return a, _literal_like(b, a)
    if a.dtype == b.dtype:
        return a, b
    ta, tb = a.dtype, b.dtype
    la, lb = _dt.lanes_of(ta), _dt.lanes_of(tb)
    if la != lb:
        if la == 1:
            return broadcast(a, lb), b
        if lb == 1:
            return a, broadcast(b, la)
        raise TypeError(f"cannot combine vectors of {la} and {lb} lanes ({ta} and {tb})")
    if _dt.is_integer(ta) and _dt.is_integer(tb):
        wide = ta if _dt.bits_of(ta) >= _dt.bits_of(tb) else tb
        return cast(wide, a), cast(wide, b)
    raise TypeError(
        f"operands have different dtypes: {ta} and {tb}; convert one explicitly "
        f"with T.Cast({ta!r}, ...) or T.Cast({tb!r}, ...)"
    )


def _literal_like(value, other: PrimExpr) -> PrimExpr:
    dtype = other.dtype
    if isinstance(value, float) and _dt.is_integer(dtype):
        raise TypeError(
            f"cannot combine the float {value} with an {dtype} expression; "
            "use T.Cast to convert the expression to a float type first"
        )
    return const(value, _dt.element_of(dtype) if not _dt.is_bool(dtype) else "bool")


def _binary(cls, a, b) -> PrimExpr:
    a, b = _promote(a, b)
    if isinstance(a, IntImm) and isinstance(b, IntImm) and cls in _INT_FOLD:
        divides_by_zero = cls in (FloorDiv, FloorMod) and b.value == 0
        value = None if divides_by_zero else _INT_FOLD[cls](a.value, b.value)
        if value is not None:
            return IntImm(value, a.dtype)
    if isinstance(a, FloatImm) and isinstance(b, FloatImm) and cls in _FLOAT_FOLD:
        value = _FLOAT_FOLD[cls](a.value, b.value)
        if value is not None:
            return FloatImm(value, a.dtype)
    if isinstance(a, (IntImm, FloatImm)) and isinstance(b, (IntImm, FloatImm)) and cls in _CMP_FOLD:
        return IntImm(int(_CMP_FOLD[cls](a.value, b.value)), "bool")
    if (cls is FloorDiv or cls is FloorMod or cls is Div or cls is Mod) and _is_const(b, 0):
        raise ZeroDivisionError(f"division by zero in {a!r} {cls.__name__} 0")
    return cls(a, b)


def add(a, b) -> PrimExpr:
    a, b = _promote(a, b)
    if _is_const(b, 0):
        return a
    if _is_const(a, 0):
        return b
    return _binary(Add, a, b)


def sub(a, b) -> PrimExpr:
    a, b = _promote(a, b)
    if _is_const(b, 0):
        return a
    return _binary(Sub, a, b)


def mul(a, b) -> PrimExpr:
    a, b = _promote(a, b)
    if _is_const(b, 1):
        return a
    if _is_const(a, 1):
        return b
    if _dt.is_integer(a.dtype) and (_is_const(a, 0) or _is_const(b, 0)):
        return IntImm(0, a.dtype)
    return _binary(Mul, a, b)


def div(a, b) -> PrimExpr:
    a, b = _promote(a, b)
    if _is_const(b, 1):
        return a
    return _binary(Div, a, b)


def truncmod(a, b) -> PrimExpr:
    return _binary(Mod, a, b)


def floordiv(a, b) -> PrimExpr:
    a, b = _promote(a, b)
    if _dt.is_float(a.dtype):
        return call("floor", div(a, b))
    if _is_const(b, 1):
        return a
    return _binary(FloorDiv, a, b)


def floormod(a, b) -> PrimExpr:
    a, b = _promote(a, b)
    if _is_const(b, 1) and _dt.is_integer(a.dtype):
        return IntImm(0, a.dtype)
    return _binary(FloorMod, a, b)


def min_value(a, b) -> PrimExpr:
    return _binary(Min, a, b)


def max_value(a, b) -> PrimExpr:
    return _binary(Max, a, b)


def neg(a) -> PrimExpr:
    if isinstance(a, IntImm):
        return IntImm(-a.value, a.dtype)
    if isinstance(a, FloatImm):
        return FloatImm(-a.value, a.dtype)
    return sub(const(0, _dt.element_of(a.dtype)), a)


def eq(a, b) -> PrimExpr:
    return _binary(EQ, a, b)


def ne(a, b) -> PrimExpr:
    return _binary(NE, a, b)


def lt(a, b) -> PrimExpr:
    return _binary(LT, a, b)


def le(a, b) -> PrimExpr:
    return _binary(LE, a, b)


def gt(a, b) -> PrimExpr:
    return _binary(GT, a, b)


def ge(a, b) -> PrimExpr:
    return _binary(GE, a, b)


def _as_bool(x) -> PrimExpr:
    x = const(x)
    if not _dt.is_bool(x.dtype):
        raise TypeError(f"a logical operator needs bool operands, got {x.dtype} ({x!r})")
    return x


def logical_and(a, b) -> PrimExpr:
    a, b = _as_bool(a), _as_bool(b)
    if isinstance(a, IntImm):
        return b if a.value else a
    if isinstance(b, IntImm):
        return a if b.value else b
    return And(a, b)


def logical_or(a, b) -> PrimExpr:
    a, b = _as_bool(a), _as_bool(b)
    if isinstance(a, IntImm):
        return a if a.value else b
    if isinstance(b, IntImm):
        return b if b.value else a
    return Or(a, b)


def logical_not(a) -> PrimExpr:
    a = _as_bool(a)
    if isinstance(a, IntImm):
        return IntImm(int(not a.value), "bool")
    if isinstance(a, Not):
        return a.a
    return Not(a)


def cast(dtype: str, value) -> PrimExpr:
    _dt.check(dtype)
    value = const(value)
    if value.dtype == dtype:
        return value
    if isinstance(value, (IntImm, FloatImm)) and _dt.lanes_of(dtype) == 1:
        if _dt.is_float(dtype):
            return FloatImm(float(value.value), dtype)
        if _dt.is_bool(dtype):
            return IntImm(int(bool(value.value)), dtype)
        return IntImm(int(value.value), dtype)
    return Cast(dtype, value)


def select(condition, true_value, false_value) -> PrimExpr:
    true_value, false_value = _promote(true_value, false_value)
    condition = _as_bool(condition)
    if isinstance(condition, IntImm):
        return true_value if condition.value else false_value
    return Select(condition, true_value, false_value)


def broadcast(value, lanes: int) -> PrimExpr:
    value = const(value)
    return value if lanes == 1 else Broadcast(value, lanes)


def call(op_name: str, *args, dtype: str | None = None) -> PrimExpr:
    """Build an intrinsic call, checking the name and the number of arguments."""
    if op_name not in INTRINSICS:
        raise NameError(f"unknown intrinsic {op_name!r}; known: {', '.join(sorted(INTRINSICS))}")
    arity = INTRINSICS[op_name]
    if arity is not None and len(args) != arity:
        raise TypeError(f"{op_name} takes {arity} argument(s), got {len(args)}")
    args = tuple(const(a) for a in args)
    if op_name == "if_then_else":
        cond, a, b = args
        a, b = _promote(a, b)
        args = (_as_bool(cond), a, b)
        return Call(dtype or a.dtype, op_name, args)
    if op_name == "tvm_storage_sync":
        return Call("int32", op_name, args)
    if op_name == "likely":
        return Call("bool", op_name, (_as_bool(args[0]),))
    if op_name in ("pow", "fma", "atan2"):
        first = args[0]
        promoted = [first] + [_promote(first, a)[1] for a in args[1:]]
        args = tuple(promoted)
    result_dtype = dtype or args[0].dtype
    if not _dt.is_float(result_dtype):
        raise TypeError(f"{op_name} needs a float argument, got {args[0].dtype} ({args[0]!r})")
    return Call(result_dtype, op_name, args)


def opaque_call(op_name: str, args, dtype: str = "handle") -> Call:
    """A call of :data:`OPAQUE_CALLS`; ``call_extern`` and ``call_packed`` take the function's name first."""
    if op_name not in OPAQUE_CALLS:
        raise NameError(f"unknown opaque call {op_name!r}; known: {', '.join(OPAQUE_CALLS)}")
    args = tuple(StringImm(a) if isinstance(a, str) else const(a) for a in args)
    if op_name in ("call_extern", "call_packed") and not (args and isinstance(args[0], StringImm)):
        raise TypeError(f"{op_name} takes the name of the function to call first, as a string")
    return Call(_dt.check(dtype), op_name, args)


def reinterpret(dtype: str, value) -> PrimExpr:
    """The bits of ``value`` read as ``dtype`` (same width), TVM's ``T.reinterpret``."""
    value = const(value)
    dtype = _dt.check(dtype)
    if _dt.bits_of(dtype) * _dt.lanes_of(dtype) != _dt.bits_of(value.dtype) * _dt.lanes_of(value.dtype):
        raise TypeError(f"reinterpret needs dtypes of one width; {value.dtype} cannot be read as {dtype}")
    return value if dtype == value.dtype else Call(dtype, "reinterpret", (value,))


def limit_value(dtype: str, largest: bool) -> PrimExpr:
    """The largest (or lowest) finite value of a scalar dtype (``T.max_value``/``T.min_value``)."""
    if _dt.lanes_of(dtype) != 1:
        raise ValueError(f"T.max_value/T.min_value take a scalar dtype, got {dtype!r}")
    if _dt.is_float(dtype):
        value = {
            "float16": 65504.0,
            "bfloat16": 3.3895313892515355e38,
            "float32": 3.4028234663852886e38,
            "float64": sys.float_info.max,
        }[dtype]
        return FloatImm(value if largest else -value, dtype)
    bits = _dt.bits_of(dtype)
    if _dt.is_bool(dtype):
        return IntImm(int(largest), dtype)
    if _dt.is_uint(dtype):
        return IntImm(2**bits - 1 if largest else 0, dtype)
    return IntImm(2 ** (bits - 1) - 1 if largest else -(2 ** (bits - 1)), dtype)
