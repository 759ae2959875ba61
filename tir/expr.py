"""Expression nodes of the IR: variables, constants, arithmetic, loads, calls.

Every node is a frozen, slotted dataclass compared by identity (``==`` on two
nodes is ``is``; use ``tir.structural_equal`` to compare by structure, and
``a.equal(b)`` or ``tir.EQ(a, b)`` to build an equality *expression*). Python
operators on expressions build nodes through :mod:`tir.op`, which folds
constants and unit elements (``x + 0 -> x``, ``4 * 8 -> 32``).
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass, fields
from enum import Enum
from functools import cache
from typing import TYPE_CHECKING, Union

from . import dtype as _dt

if TYPE_CHECKING:
    from .buffer import Buffer

_UNSET = object()


def node(cls: type) -> type:
    """The IR node decorator: a frozen, slotted dataclass compared by identity, whose
    ``__init__`` stores each field through its slot directly (the dataclass's own frozen
    ``__init__`` goes through ``object.__setattr__`` per field, about 1.6x slower, and the
    schedule and the passes build millions of nodes per tuning run). Assignment after
    construction still raises ``FrozenInstanceError``; a ``__post_init__`` is called as the
    dataclass's would, and a class with fields outside ``__init__`` keeps the dataclass's own."""
    cls = dataclass(frozen=True, slots=True, eq=False, repr=False)(cls)
    if any(not f.init or f.kw_only for f in fields(cls)):
        return cls
    params, lines, namespace = [], [], {"_UNSET": _UNSET}
    for f in fields(cls):
        name = f.name
        namespace[f"_set_{name}"] = getattr(cls, name).__set__
        if f.default is not MISSING:
            namespace[f"_default_{name}"] = f.default
            params.append(f"{name}=_default_{name}")
        elif f.default_factory is not MISSING:
            namespace[f"_factory_{name}"] = f.default_factory
            params.append(f"{name}=_UNSET")
            lines.append(f"    if {name} is _UNSET:\n        {name} = _factory_{name}()")
        else:
            params.append(name)
        lines.append(f"    _set_{name}(self, {name})")
    if hasattr(cls, "__post_init__"):
        lines.append("    self.__post_init__()")
    exec(f"def __init__(self, {', '.join(params)}):\n" + "\n".join(lines or ["    pass"]), namespace)
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    cls.__init__ = init
    return cls


class PrimExpr:
    """Base of every expression. Subclasses define ``dtype`` (field or property)."""

    __slots__ = ()
    dtype: str

    def same_as(self, other) -> bool:
        """TVM's reference equality: the very same node (``structural_equal`` compares contents)."""
        return self is other

    # Arithmetic builds nodes (with folding) through tir.op.
    def __add__(self, other):
        return _op().add(self, other)

    def __radd__(self, other):
        return _op().add(other, self)

    def __sub__(self, other):
        return _op().sub(self, other)

    def __rsub__(self, other):
        return _op().sub(other, self)

    def __mul__(self, other):
        return _op().mul(self, other)

    def __rmul__(self, other):
        return _op().mul(other, self)

    def __truediv__(self, other):
        return _op().div(self, other)

    def __rtruediv__(self, other):
        return _op().div(other, self)

    def __floordiv__(self, other):
        return _op().floordiv(self, other)

    def __rfloordiv__(self, other):
        return _op().floordiv(other, self)

    def __mod__(self, other):
        return _op().floormod(self, other)

    def __rmod__(self, other):
        return _op().floormod(other, self)

    def __neg__(self):
        return _op().neg(self)

    def __lt__(self, other):
        return _op().lt(self, other)

    def __le__(self, other):
        return _op().le(self, other)

    def __gt__(self, other):
        return _op().gt(self, other)

    def __ge__(self, other):
        return _op().ge(self, other)

    def __and__(self, other):
        return _op().logical_and(self, other)

    def __rand__(self, other):
        return _op().logical_and(other, self)

    def __or__(self, other):
        return _op().logical_or(self, other)

    def __ror__(self, other):
        return _op().logical_or(other, self)

    def __invert__(self):
        return _op().logical_not(self)

    def astype(self, dtype: str) -> PrimExpr:
        """TVM's ``expr.astype("int32")``: this value cast to ``dtype`` (itself when it has it)."""
        return _op().cast(dtype, self)

    def equal(self, other) -> PrimExpr:
        """Build ``self == other`` as an expression (Python ``==`` is identity)."""
        return _op().eq(self, other)

    def not_equal(self, other) -> PrimExpr:
        return _op().ne(self, other)

    def __bool__(self):
        raise TypeError(
            f"the truth value of a symbolic expression ({type(self).__name__}) is unknown; "
            "compare with tir.structural_equal or fold it to a constant first"
        )

    def script(self) -> str:
        from .script.printer import expr_to_str

        return expr_to_str(self)

    def __repr__(self) -> str:
        return self.script()


@cache
def _op():
    """tir.op, imported on first use (it imports this module); cached: expression operators call it."""
    from . import op

    return op


# ---------------------------------------------------------------- leaves


@node
class Var(PrimExpr):
    """A scalar variable (loop variable, block iterator, shape variable, parameter)."""

    name: str
    dtype: str = "int32"


@node
class IntImm(PrimExpr):
    """An integer or boolean constant."""

    value: int
    dtype: str = "int32"

    def __bool__(self):
        return bool(self.value)

    def __int__(self):
        return int(self.value)

    __index__ = __int__


@node
class FloatImm(PrimExpr):
    value: float
    dtype: str = "float32"

    def __float__(self):
        return float(self.value)


@node
class StringImm(PrimExpr):
    value: str

    @property
    def dtype(self) -> str:
        return "handle"


# ---------------------------------------------------------------- binary


class BinaryOp(PrimExpr):
    """Two operands of one dtype; the result has that dtype."""

    __slots__ = ()
    a: PrimExpr
    b: PrimExpr

    @property
    def dtype(self) -> str:
        return self.a.dtype


@node
class Add(BinaryOp):
    a: PrimExpr
    b: PrimExpr


@node
class Sub(BinaryOp):
    a: PrimExpr
    b: PrimExpr


@node
class Mul(BinaryOp):
    a: PrimExpr
    b: PrimExpr


@node
class Div(BinaryOp):
    """True division for floats; division rounding toward zero for integers."""

    a: PrimExpr
    b: PrimExpr


@node
class Mod(BinaryOp):
    """Remainder of Div (sign follows the dividend), as C's ``%``."""

    a: PrimExpr
    b: PrimExpr


@node
class FloorDiv(BinaryOp):
    a: PrimExpr
    b: PrimExpr


@node
class FloorMod(BinaryOp):
    a: PrimExpr
    b: PrimExpr


@node
class Min(BinaryOp):
    a: PrimExpr
    b: PrimExpr


@node
class Max(BinaryOp):
    a: PrimExpr
    b: PrimExpr


class CmpOp(BinaryOp):
    """A comparison; the result is bool with the operands' lane count."""

    __slots__ = ()

    @property
    def dtype(self) -> str:
        return _dt.with_lanes("bool", _dt.lanes_of(self.a.dtype))


@node
class EQ(CmpOp):
    a: PrimExpr
    b: PrimExpr


@node
class NE(CmpOp):
    a: PrimExpr
    b: PrimExpr


@node
class LT(CmpOp):
    a: PrimExpr
    b: PrimExpr


@node
class LE(CmpOp):
    a: PrimExpr
    b: PrimExpr


@node
class GT(CmpOp):
    a: PrimExpr
    b: PrimExpr


@node
class GE(CmpOp):
    a: PrimExpr
    b: PrimExpr


@node
class And(BinaryOp):
    a: PrimExpr
    b: PrimExpr


@node
class Or(BinaryOp):
    a: PrimExpr
    b: PrimExpr


@node
class Not(PrimExpr):
    a: PrimExpr

    @property
    def dtype(self) -> str:
        return self.a.dtype


# ---------------------------------------------------------------- others


@node
class Select(PrimExpr):
    """``true_value if condition else false_value``; both sides are evaluated."""

    condition: PrimExpr
    true_value: PrimExpr
    false_value: PrimExpr

    @property
    def dtype(self) -> str:
        return self.true_value.dtype


@node
class Cast(PrimExpr):
    dtype: str
    value: PrimExpr


@node
class BufferLoad(PrimExpr):
    """``buffer[indices]``; a Ramp index makes it a vector load."""

    buffer: Buffer
    indices: tuple[PrimExpr, ...]

    @property
    def dtype(self) -> str:
        lanes = 1
        for index in self.indices:
            lanes = max(lanes, _dt.lanes_of(index.dtype))
        return _dt.with_lanes(self.buffer.dtype, lanes)


@node
class BufferPointer(PrimExpr):
    """The address of ``buffer``'s element ``offset`` (counted flat, row-major), as an opaque handle.

    Scripts write ``A.data`` (offset 0, ``access`` "") or ``A.access_ptr("r", offset=k)``
    (``access`` "r", "w" or "rw", as TVM's access mask). Only calls take it as an argument:
    ``T.call_extern``, ``T.call_packed`` and the tensor-core intrinsics. ``extent`` (TVM's
    ``access_ptr(..., extent=n)``) is carried and printed; analyses take the whole buffer.
    """

    buffer: Buffer
    offset: PrimExpr
    access: str = ""
    extent: PrimExpr | None = None

    @property
    def dtype(self) -> str:
        return "handle"


@node
class Ramp(PrimExpr):
    """The vector ``[base, base + stride, ..., base + (lanes - 1) * stride]``."""

    base: PrimExpr
    stride: PrimExpr
    lanes: int

    @property
    def dtype(self) -> str:
        return _dt.with_lanes(self.base.dtype, self.lanes)


@node
class Broadcast(PrimExpr):
    """``value`` repeated in every lane."""

    value: PrimExpr
    lanes: int

    @property
    def dtype(self) -> str:
        return _dt.with_lanes(self.value.dtype, self.lanes)


@node
class Call(PrimExpr):
    """An intrinsic call, ``op`` one of tir.op.INTRINSICS ("exp", "if_then_else", ...)."""

    dtype: str
    op: str
    args: tuple[PrimExpr, ...]


@node
class Let(PrimExpr):
    """``body`` with ``var`` bound to ``value``."""

    var: Var
    value: PrimExpr
    body: PrimExpr

    @property
    def dtype(self) -> str:
        return self.body.dtype


# ---------------------------------------------------------------- ranges and iterators


@node
class Range:
    """The half-open interval ``[min, min + extent)``."""

    min: PrimExpr
    extent: PrimExpr

    @staticmethod
    def from_min_extent(min_value, extent) -> Range:
        return Range(const(min_value), const(extent))

    @property
    def end(self) -> PrimExpr:
        return self.min + self.extent

    def __repr__(self) -> str:
        return f"Range({self.min!r}, {self.extent!r})"


class IterKind(Enum):
    """How a block iterator is used: spatial ("S"), reduction ("R"), opaque ("O"), or scan
    (TVM's ordered iterator, ``T.axis.scan``: steps depend on earlier ones; schedules treat it
    like an opaque iterator)."""

    SPATIAL = "S"
    REDUCE = "R"
    OPAQUE = "O"
    SCAN = "scan"


@node
class IterVar:
    """A block iterator: its variable, its domain and its kind."""

    var: Var
    dom: Range
    kind: IterKind

    def __repr__(self) -> str:
        return f"IterVar({self.var.name}, {self.dom!r}, {self.kind.name})"


ExprLike = Union[PrimExpr, int, float, bool]  # noqa: UP007 - evaluated at runtime on 3.10


def const(value, dtype: str | None = None) -> PrimExpr:
    """Make a constant node from a Python number (expressions pass through, and an object with a
    ``__tir_expr__`` method, such as a te axis, gives its expression)."""
    if isinstance(value, PrimExpr):
        return value
    if hasattr(value, "__tir_expr__"):
        return value.__tir_expr__()
    if isinstance(value, bool):
        return IntImm(int(value), dtype or "bool")
    if isinstance(value, int):
        dtype = dtype or "int32"
        if _dt.is_float(dtype):
            return FloatImm(float(value), dtype)
        if dtype == "int32" and not -(2**31) <= value < 2**31:
            dtype = "int64"
        return IntImm(value, dtype)
    if isinstance(value, float):
        dtype = dtype or "float32"
        if not _dt.is_float(dtype):
            raise TypeError(f"cannot make a {dtype} constant from the float {value}")
        return FloatImm(value, dtype)
    if hasattr(value, "dtype") and hasattr(value, "item"):  # numpy scalar
        return const(value.item(), str(value.dtype))
    raise TypeError(f"cannot convert {value!r} ({type(value).__name__}) to an expression")
