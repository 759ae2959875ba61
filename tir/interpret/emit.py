"""Translation of a PrimFunc into Python source for the executor.

``compile_func(func)`` walks the IR once and writes a Python function that runs
it with serial semantics over flat memoryviews (one per buffer): loops of every
kind become ``for ... in range``, blocks bind their iterators, test ``T.where``
and run their init at the first reduction step, and every buffer access becomes
row-major flat index arithmetic on Python ints. Identifiers in the generated code
are made by this module (``v3_vi``, ``b0_A``), never copied from the script, and
helpers come from :mod:`tir.interpret.runtime`. An index whose range cannot be
proved inside its dimension (by ``tir.arith.const_bound``) is wrapped in a check
that names the block, buffer and element when it fails.
"""

from __future__ import annotations

import re
from contextlib import contextmanager
from dataclasses import dataclass

from .. import dtype as _dt
from ..arith.const_bound import POS_INF, ConstIntBound, bound_of_dtype, const_int_bound
from ..buffer import Buffer
from ..expr import (
    EQ,
    GE,
    GT,
    LE,
    LT,
    NE,
    Add,
    And,
    Broadcast,
    BufferLoad,
    BufferPointer,
    Call,
    Cast,
    Div,
    FloatImm,
    FloorDiv,
    FloorMod,
    IntImm,
    IterKind,
    Let,
    Max,
    Min,
    Mod,
    Mul,
    Not,
    Or,
    PrimExpr,
    Ramp,
    Select,
    StringImm,
    Sub,
    Var,
)
from ..function import PrimFunc
from ..functor import post_order_visit
from ..matrix_ops import matrix_op_of, tile_shape
from ..op import OPAQUE_CALLS
from ..stmt import (
    Allocate,
    Block,
    BlockRealize,
    BufferStore,
    Evaluate,
    For,
    IfThenElse,
    LetStmt,
    SeqStmt,
    Stmt,
)
from . import runtime as _rt
from .matrix import Tile, matrix_op

# Python operator precedences, lowest first; an operand binding looser than its
# context gets parentheses.
P_TERNARY, P_OR, P_AND, P_NOT, P_CMP, P_ADD, P_MUL, P_UNARY, P_ATOM = 1, 2, 3, 4, 5, 10, 11, 12, 14

# CPython refuses more than 20 nested loop/try blocks and 100 indentation levels;
# deeper loop nests continue in a separate generated function.
_MAX_DEPTH = 14

_INFIX = {Add: ("+", P_ADD), Sub: ("-", P_ADD), Mul: ("*", P_MUL)}
_COMPARE = {EQ: "==", NE: "!=", LT: "<", LE: "<=", GT: ">", GE: ">="}
_INT_INFIX = {FloorDiv: "//", FloorMod: "%"}
_INT_CALLS = {Div: "_tdiv", Mod: "_tmod"}
_FLOAT_CALLS = {Div: "_fdiv", Mod: "_fmod", FloorDiv: "_ffloordiv", FloorMod: "_ffloormod"}
_MISSING = object()
LANE_TEMPS = ("_a", "_b", "_c")  # per-lane names inside generated list comprehensions


@dataclass
class Code:
    """A Python expression and the precedence of its outermost operator."""

    src: str
    prec: int

    def at(self, min_prec: int) -> str:
        return self.src if self.prec >= min_prec else f"({self.src})"


@dataclass
class BufferInfo:
    """How the generated code names a buffer: its storage, and per dimension the
    extent and row-major stride (int literals or identifiers)."""

    ident: str
    dtype: str
    extents: list[str]
    strides: list[str]


@dataclass
class CompiledSource:
    """The generated module text, the names it needs, and the kernel's parameters."""

    source: str
    namespace: dict
    signature: tuple[Buffer | Var, ...]


class _FunctionWriter:
    def __init__(self, name: str, params: list[str]):
        self.name = name
        self.params = params
        self.lines: list[str] = []
        self.depth = 1

    def line(self, text: str) -> None:
        self.lines.append("    " * self.depth + text)

    def source(self) -> str:
        body = self.lines or ["    pass"]
        return "\n".join([f"def {self.name}({', '.join(self.params)}):", *body])


def _sanitize(name: str) -> str:
    return re.sub(r"\W", "_", name, flags=re.ASCII)[:24]


# Storage of 16-bit floats: uint16 bits, read through a table of values, written through a rounding.
_BITS_TABLE = {"float16": "_F16", "bfloat16": "_BF16"}
_TO_BITS = {"float16": "_f16_bits", "bfloat16": "_bf16_bits"}
_ROUNDING = {"float16": _rt.round_f16, "bfloat16": _rt.round_to_bfloat16}
_ROUND_CALL = {"float32": "_f32", "float16": "_f16", "bfloat16": "_bf16"}


def _float_literal(value: float, dtype: str) -> Code:
    if dtype == "float32":
        value = _rt.round_f32(value)
    elif dtype in _ROUNDING:
        value = _ROUNDING[dtype](value)
    if value != value:
        return Code("_NAN", P_ATOM)
    if value in (_rt.INF, -_rt.INF):
        return Code("_INF" if value > 0 else "-_INF", P_ATOM if value > 0 else P_UNARY)
    text = repr(float(value))
    return Code(text, P_UNARY if text.startswith("-") else P_ATOM)


def _int_range(dtype: str) -> tuple[int, int]:
    if dtype == "bool":
        return 0, 1
    bits = _dt.bits_of(dtype)
    return (0, 2**bits - 1) if _dt.is_uint(dtype) else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)


def cast_code(code: Code, source: str, target: str) -> Code:
    """Convert a scalar value of dtype ``source`` to ``target`` with C semantics."""
    if source == target:
        return code
    if _dt.is_float(target):
        if _dt.is_bool(source) or (target == "float64" and not _dt.is_float(source)):
            return Code(f"float({code.src})", P_ATOM)
        if target == "float64" or (target == "float32" and source in ("float16", "bfloat16")):
            return code
        return Code(f"{_ROUND_CALL[target]}({code.src})", P_ATOM)
    if _dt.is_bool(target):
        return Code(f"bool({code.src})", P_ATOM)
    bits, signed = _dt.bits_of(target), _dt.is_int(target)
    if _dt.is_float(source):
        return Code(f"_ftoi({code.src}, {bits}, {signed})", P_ATOM)
    if _dt.is_bool(source):
        return Code(f"int({code.src})", P_ATOM)
    low, high = _int_range(target)
    src_low, src_high = _int_range(source)
    if low <= src_low and src_high <= high:
        return code
    return Code(f"_wrap({code.src}, {bits}, {signed})", P_ATOM)


def scalar_binary(cls: type, dtype: str, a: Code, b: Code) -> Code:
    """``a <op> b`` on scalars of element dtype ``dtype`` (the operands' dtype)."""
    if cls in _INFIX:
        op, prec = _INFIX[cls]
        return Code(f"{a.at(prec)} {op} {b.at(prec + 1)}", prec)
    if cls in _COMPARE:
        return Code(f"{a.at(P_CMP + 1)} {_COMPARE[cls]} {b.at(P_CMP + 1)}", P_CMP)
    if cls is And:
        return Code(f"{a.at(P_AND)} and {b.at(P_AND + 1)}", P_AND)
    if cls is Or:
        return Code(f"{a.at(P_OR)} or {b.at(P_OR + 1)}", P_OR)
    if cls is Min or cls is Max:
        return Code(f"{cls.__name__.lower()}({a.src}, {b.src})", P_ATOM)
    if _dt.is_float(dtype):
        return Code(f"{_FLOAT_CALLS[cls]}({a.src}, {b.src})", P_ATOM)
    if cls in _INT_INFIX:
        return Code(f"{a.at(P_MUL)} {_INT_INFIX[cls]} {b.at(P_MUL + 1)}", P_MUL)
    return Code(f"{_INT_CALLS[cls]}({a.src}, {b.src})", P_ATOM)


def _lanewise(parts: list[tuple[Code, int]], lanes: int, element) -> Code:
    """A list comprehension applying ``element(temps)`` lane by lane; scalars are broadcast."""
    temps = LANE_TEMPS[: len(parts)]
    sources = [c.src if n > 1 else f"[{c.src}] * {lanes}" for c, n in parts]
    inner = element([Code(t, P_ATOM) for t in temps])
    if len(parts) == 1:
        return Code(f"[{inner.src} for {temps[0]} in {sources[0]}]", P_ATOM)
    return Code(f"[{inner.src} for {', '.join(temps)} in zip({', '.join(sources)})]", P_ATOM)


def _same(a: PrimExpr | None, b: PrimExpr) -> bool:
    if a is None:
        return False
    return a is b or (isinstance(a, IntImm) and isinstance(b, IntImm) and a.value == b.value)


def _shape_text(dim: PrimExpr) -> str:
    return str(dim.value) if isinstance(dim, IntImm) else repr(dim)


def _shape_vars(func: PrimFunc) -> list[Var]:
    """Variables in the parameter buffers' shapes, in order of first appearance."""
    found: dict[Var, None] = {}
    for buffer in func.buffer_params:
        for dim in buffer.shape:
            post_order_visit(dim, lambda node: found.setdefault(node) if isinstance(node, Var) else None)
    return list(found)


class _Emitter:
    """Writes the Python functions for one PrimFunc."""

    def __init__(self, func: PrimFunc):
        self.func = func
        self.names: dict[Var, str] = {}
        self.bounds: dict[Var, ConstIntBound] = {}
        self.upper: dict[Var, PrimExpr] = {}  # var -> symbolic exclusive upper bound (min 0)
        self.buffers: dict[Buffer, BufferInfo] = {}
        self.undo: list[tuple[dict, object, object]] = []
        self.in_scope: list[str] = []
        self.consts: dict[str, object] = {}
        self.globals: set[Var] = set()  # scalar parameters and shape variables
        self.counter = 0
        self.where: list[str] = []
        self.parts: list[_FunctionWriter] = []
        self.w = _FunctionWriter("_kernel", [])

    # ------------------------------------------------------------ names and scopes

    def _fresh(self, prefix: str, name: str = "") -> str:
        self.counter += 1
        return f"{prefix}{self.counter}_{_sanitize(name)}" if name else f"{prefix}{self.counter}"

    def _set(self, table: dict, key, value) -> None:
        self.undo.append((table, key, table.get(key, _MISSING)))
        table[key] = value

    @contextmanager
    def _scope(self):
        undo_mark, scope_mark = len(self.undo), len(self.in_scope)
        yield
        while len(self.undo) > undo_mark:
            table, key, old = self.undo.pop()
            if old is _MISSING:
                del table[key]
            else:
                table[key] = old
        del self.in_scope[scope_mark:]

    def _bind(self, var: Var, bound: ConstIntBound | None = None, upper: PrimExpr | None = None) -> str:
        ident = self._fresh("v", var.name)
        self._set(self.names, var, ident)
        self._set(self.bounds, var, bound or bound_of_dtype(var.dtype))
        if upper is not None:
            self._set(self.upper, var, upper)
        elif var in self.upper:
            self._set(self.upper, var, None)
        self.in_scope.append(ident)
        return ident

    def _const(self, prefix: str, value) -> str:
        ident = self._fresh(prefix)
        self.consts[ident] = value
        return ident

    def _location(self) -> str:
        return self.where[-1] if self.where else f"function '{self.func.name}'"

    @contextmanager
    def _indented(self, header: str):
        self.w.line(header)
        self.w.depth += 1
        mark = len(self.w.lines)
        yield
        if len(self.w.lines) == mark:
            self.w.line("pass")
        self.w.depth -= 1

    # ------------------------------------------------------------ buffers

    def _define_buffer(self, buffer: Buffer, allocate: bool) -> BufferInfo:
        """Name a buffer's storage, extents and row-major strides (allocating it if asked)."""
        offset = buffer.elem_offset
        if not buffer.has_compact_strides() or not (offset is None or isinstance(offset, Var)):
            raise _rt.IRError(
                f"buffer {buffer.name} declares strides or an element offset of its own; the executor "
                f"runs compact row-major buffers (strides as the shape gives them, offset 0)"
            )
        if isinstance(offset, Var) and offset not in self.names:
            # A numpy array starts at its first element: a symbolic offset (T.Buffer(..., offset_factor=))
            # is 0 here, as TVM binds it from the array it is called with.
            self.w.line(f"{self._bind(offset, ConstIntBound(0, 0))} = 0")
        ident = self._fresh("b", buffer.name)
        extents = [self._extent_code(dim) for dim in buffer.shape]
        strides: list[str] = []
        stride = "1"
        for dim in reversed(range(len(extents))):
            strides.insert(0, stride)
            if dim > 0 or allocate:
                stride = self._product(extents[dim], stride)
        if allocate:
            self.w.line(f"{ident} = _alloc({buffer.dtype!r}, {stride})")
        self.in_scope.append(ident)
        info = BufferInfo(ident, buffer.dtype, extents, strides)
        self._set(self.buffers, buffer, info)
        return info

    def _product(self, a: str, b: str) -> str:
        if a.isdigit() and b.isdigit():
            return str(int(a) * int(b))
        if b == "1":
            return a
        name = self._fresh("s")
        self.w.line(f"{name} = {a} * {b}")
        self.in_scope.append(name)
        return name

    def _extent_code(self, dim: PrimExpr) -> str:
        if isinstance(dim, (IntImm, Var)):
            return self.expr(dim).src
        name = self._fresh("e")
        self.w.line(f"{name} = {self.expr(dim).src}")
        self.in_scope.append(name)
        return name

    def _buffer(self, buffer: Buffer) -> BufferInfo:
        info = self.buffers.get(buffer)
        if info is None:
            raise _rt.IRError(
                f"{self._location()} accesses buffer {buffer.name}, which is neither a parameter of "
                f"'{self.func.name}' nor allocated around the access (T.alloc_buffer in an enclosing "
                "block, or Allocate)"
            )
        return info

    def _in_range(self, index: PrimExpr, dim: PrimExpr) -> bool:
        bound = const_int_bound(index, self.bounds)
        if isinstance(dim, IntImm):
            return bound.within(0, dim.value - 1)
        return bound.min_value >= 0 and isinstance(index, Var) and _same(self.upper.get(index), dim)

    def _site(self, buffer: Buffer, indices, verb: str) -> str:
        index_source = "(" + "".join(f"{self.expr(i).src}, " for i in indices) + ")"
        loop_names = {ident: var.name for var, ident in self.names.items() if var not in self.globals}
        shape = (
            "("
            + ", ".join(_shape_text(d) for d in buffer.shape)
            + ("," if len(buffer.shape) == 1 else "")
            + ")"
        )
        site = _rt.AccessSite(self._location(), verb, buffer.name, shape, index_source, loop_names)
        return self._const("_s", site)

    def _check_rank(self, buffer: Buffer, indices) -> None:
        if len(indices) != len(buffer.shape):
            raise _rt.IRError(
                f"{self._location()} indexes buffer {buffer.name} of {len(buffer.shape)} dimensions "
                f"with {len(indices)} indices"
            )

    def _flat_index(self, buffer: Buffer, info: BufferInfo, indices, verb: str) -> str:
        self._check_rank(buffer, indices)
        unproved = [not self._in_range(i, d) for i, d in zip(indices, buffer.shape)]
        site = self._site(buffer, indices, verb) if any(unproved) else None
        terms: list[str] = []
        offset = 0
        for dim, (index, stride) in enumerate(zip(indices, info.strides)):
            if unproved[dim]:
                code = Code(f"_ck({self.expr(index).src}, {info.extents[dim]}, {site}, {dim})", P_ATOM)
            elif isinstance(index, IntImm) and stride.isdigit():
                offset += index.value * int(stride)
                continue
            else:
                code = self.expr(index)
            terms.append(code.at(P_ADD) if stride == "1" else f"{code.at(P_MUL)} * {stride}")
        if offset or not terms:
            terms.append(str(offset))
        return " + ".join(terms)

    def _vector_access_args(self, buffer: Buffer, info: BufferInfo, indices, verb: str, lanes: int) -> str:
        self._check_rank(buffer, indices)
        index_list = "[" + ", ".join(self.expr(i).src for i in indices) + "]"
        strides = "(" + "".join(f"{s}, " for s in info.strides) + ")"
        extents = "(" + "".join(f"{e}, " for e in info.extents) + ")"
        return (
            f"{info.ident}, {index_list}, {strides}, {extents}, {lanes}, {self._site(buffer, indices, verb)}"
        )

    # ------------------------------------------------------------ expressions

    def expr(self, e: PrimExpr) -> Code:
        method = getattr(self, "_expr_" + type(e).__name__, None)
        if method is None:
            if isinstance(e, (Add, Sub, Mul, Div, Mod, FloorDiv, FloorMod, Min, Max, And, Or, *_COMPARE)):
                return self._binary(e)
            raise _rt.IRError(f"the executor does not support {type(e).__name__} expressions ({e!r})")
        return method(e)

    def _expr_IntImm(self, e: IntImm) -> Code:
        if _dt.is_bool(e.dtype):
            return Code("True" if e.value else "False", P_ATOM)
        return Code(str(e.value), P_UNARY if e.value < 0 else P_ATOM)

    def _expr_FloatImm(self, e: FloatImm) -> Code:
        return _float_literal(e.value, _dt.element_of(e.dtype))

    def _expr_StringImm(self, e: StringImm) -> Code:
        return Code(repr(e.value), P_ATOM)

    def _expr_Var(self, e: Var) -> Code:
        ident = self.names.get(e)
        if ident is None:
            raise _rt.IRError(
                f"{self._location()} uses variable {e.name}, which is not defined there: it is not a "
                "parameter, a shape variable, or a loop, block iterator or let variable in scope"
            )
        return Code(ident, P_ATOM)

    def _binary(self, e) -> Code:
        lanes = _dt.lanes_of(e.dtype)
        elem = _dt.element_of(e.a.dtype)
        a, b = self.expr(e.a), self.expr(e.b)
        if lanes == 1:
            return scalar_binary(type(e), elem, a, b)
        parts = [(a, _dt.lanes_of(e.a.dtype)), (b, _dt.lanes_of(e.b.dtype))]
        return _lanewise(parts, lanes, lambda t: scalar_binary(type(e), elem, t[0], t[1]))

    def _expr_Not(self, e: Not) -> Code:
        a = self.expr(e.a)
        if _dt.lanes_of(e.dtype) > 1:
            return _lanewise(
                [(a, _dt.lanes_of(e.dtype))], _dt.lanes_of(e.dtype), lambda t: Code(f"not {t[0].src}", P_NOT)
            )
        return Code(f"not {a.at(P_NOT)}", P_NOT)

    def _select(self, condition: PrimExpr, true_value: PrimExpr, false_value: PrimExpr, lanes: int) -> Code:
        c, t, f = self.expr(condition), self.expr(true_value), self.expr(false_value)
        if lanes == 1 or _dt.lanes_of(condition.dtype) == 1:
            return Code(f"{t.at(P_OR)} if {c.at(P_OR)} else {f.at(P_TERNARY)}", P_TERNARY)
        parts = [(c, lanes), (t, _dt.lanes_of(true_value.dtype)), (f, _dt.lanes_of(false_value.dtype))]
        return _lanewise(parts, lanes, lambda x: Code(f"{x[1].src} if {x[0].src} else {x[2].src}", P_TERNARY))

    def _expr_Select(self, e: Select) -> Code:
        return self._select(e.condition, e.true_value, e.false_value, _dt.lanes_of(e.dtype))

    def _expr_Cast(self, e: Cast) -> Code:
        source, target = _dt.element_of(e.value.dtype), _dt.element_of(e.dtype)
        value = self.expr(e.value)
        lanes = _dt.lanes_of(e.dtype)
        if lanes == 1:
            return cast_code(value, source, target)
        return _lanewise(
            [(value, _dt.lanes_of(e.value.dtype))], lanes, lambda t: cast_code(t[0], source, target)
        )

    def _expr_BufferLoad(self, e: BufferLoad) -> Code:
        info = self._buffer(e.buffer)
        lanes = _dt.lanes_of(e.dtype)
        if lanes > 1:
            convert = _BITS_TABLE.get(info.dtype, "None")
            args = self._vector_access_args(e.buffer, info, e.indices, "reads", lanes)
            return Code(f"_vload({args}, {convert})", P_ATOM)
        load = f"{info.ident}[{self._flat_index(e.buffer, info, e.indices, 'reads')}]"
        table = _BITS_TABLE.get(info.dtype)
        return Code(f"{table}[{load}]" if table else load, P_ATOM)

    def _expr_Ramp(self, e: Ramp) -> Code:
        return Code(f"_ramp({self.expr(e.base).src}, {self.expr(e.stride).src}, {e.lanes})", P_ATOM)

    def _expr_Broadcast(self, e: Broadcast) -> Code:
        return Code(f"[{self.expr(e.value).src}] * {e.lanes}", P_MUL)

    def _expr_Call(self, e: Call) -> Code:
        lanes = _dt.lanes_of(e.dtype)
        if e.op == "if_then_else":
            return self._select(*e.args, lanes)
        if e.op == "tvm_storage_sync":
            return Code("0", P_ATOM)
        if e.op in OPAQUE_CALLS:
            raise _rt.IRError(
                f"the executor cannot run T.{e.op} ({self._location()}): it calls code outside the IR; "
                "build the function for a target that provides it"
            )
        if e.op == "reinterpret":
            (value,) = e.args
            return Code(f"_reinterpret({self.expr(value).src}, {value.dtype!r}, {e.dtype!r})", P_ATOM)
        helper = _rt.INTRINSIC_HELPERS.get(e.op)
        if helper is None:
            raise _rt.IRError(f"the executor does not know the intrinsic {e.op!r} ({self._location()})")
        args = [self.expr(a) for a in e.args]
        if lanes == 1:
            return Code(f"{helper}({', '.join(a.src for a in args)})", P_ATOM)
        parts = [(a, _dt.lanes_of(arg.dtype)) for a, arg in zip(args, e.args)]
        return _lanewise(parts, lanes, lambda t: Code(f"{helper}({', '.join(x.src for x in t)})", P_ATOM))

    def _expr_BufferPointer(self, e: BufferPointer) -> Code:
        raise _rt.IRError(
            f"the executor cannot take the address of buffer {e.buffer.name} ({self._location()}); "
            "A.data and A.access_ptr are arguments of calls into code outside the IR"
        )

    def _expr_Let(self, e: Let) -> Code:
        value = self.expr(e.value)
        with self._scope():
            ident = self._bind(e.var, self._value_bound(e.value))
            body = self.expr(e.body)
        return Code(f"(lambda {ident}: {body.src})({value.src})", P_ATOM)

    def _value_bound(self, value: PrimExpr) -> ConstIntBound | None:
        if _dt.is_float(value.dtype) or _dt.lanes_of(value.dtype) > 1:
            return None
        return const_int_bound(value, self.bounds)

    # ------------------------------------------------------------ statements

    def stmt(self, s: Stmt) -> None:
        method = getattr(self, "_stmt_" + type(s).__name__, None)
        if method is None:
            raise _rt.IRError(f"the executor does not support {type(s).__name__} statements")
        method(s)

    def _stmt_SeqStmt(self, s: SeqStmt) -> None:
        for child in s.seq:
            self.stmt(child)

    def _stmt_For(self, s: For) -> None:
        if self.w.depth >= _MAX_DEPTH:
            self._in_new_function(s)
            return
        start, extent = self.expr(s.min), self.expr(s.extent)
        is_zero_min = isinstance(s.min, IntImm) and s.min.value == 0
        span = extent.src if is_zero_min else f"{start.src}, {start.at(P_ADD)} + {extent.at(P_ADD + 1)}"
        with self._scope():
            ident = self._bind(
                s.loop_var, self._range_bound(s.min, s.extent), s.extent if is_zero_min else None
            )
            with self._indented(f"for {ident} in range({span}):"):
                self.stmt(s.body)

    def _in_new_function(self, s: For) -> None:
        params = list(dict.fromkeys(self.in_scope))
        outer = self.w
        part = _FunctionWriter(f"_part{len(self.parts) + 1}", params)
        self.parts.append(part)
        self.w = part
        self._stmt_For(s)
        self.w = outer
        outer.line(f"{part.name}({', '.join(params)})")

    def _range_bound(self, start: PrimExpr, extent: PrimExpr) -> ConstIntBound:
        low = const_int_bound(start, self.bounds)
        size = const_int_bound(extent, self.bounds)
        if POS_INF in (low.max_value, size.max_value) or low.min_value == -POS_INF:
            return ConstIntBound(low.min_value, POS_INF)
        return ConstIntBound(low.min_value, low.max_value + size.max_value - 1)

    def _stmt_BufferStore(self, s: BufferStore) -> None:
        info = self._buffer(s.buffer)
        value = self.expr(s.value)
        lanes = max([_dt.lanes_of(s.value.dtype)] + [_dt.lanes_of(i.dtype) for i in s.indices])
        if lanes > 1:
            args = self._vector_access_args(s.buffer, info, s.indices, "writes", lanes)
            self.w.line(f"_vstore({args}, {value.src}, {self._store_converter(info.dtype)})")
            return
        target = f"{info.ident}[{self._flat_index(s.buffer, info, s.indices, 'writes')}]"
        if info.dtype in _TO_BITS:
            self.w.line(f"{target} = {_TO_BITS[info.dtype]}({value.src})")
        elif _dt.is_integer(info.dtype):
            bits, signed = _dt.bits_of(info.dtype), _dt.is_int(info.dtype)
            self.w.line(f"_t = {value.src}")
            with self._indented("try:"):
                self.w.line(f"{target} = _t")
            with self._indented("except (ValueError, TypeError):"):
                self.w.line(f"{target} = _wrap(_t, {bits}, {signed})")
        else:
            self.w.line(f"{target} = {value.src}")

    def _store_converter(self, dtype: str) -> str:
        if dtype in _TO_BITS:
            return _TO_BITS[dtype]
        if _dt.is_integer(dtype):
            return self._const("_conv", _rt.int_converter(dtype))
        return "None"

    def _stmt_Evaluate(self, s: Evaluate) -> None:
        value = s.value
        if isinstance(value, (IntImm, FloatImm, StringImm)):
            return
        if isinstance(value, Call) and value.op == "tvm_storage_sync":
            return
        matrix_op = matrix_op_of(value)
        if matrix_op is not None:
            operands = [
                self._tile(arg) if n in matrix_op.tile_positions else self.expr(arg).src
                for n, arg in enumerate(value.args)
            ]
            self.w.line(f"_matrix({matrix_op.kind!r}, {', '.join(operands)})")
            return
        self.w.line(self.expr(value).src)

    def _tile(self, arg: Call) -> str:
        """A matrix operand: ``_Tile(storage, first, row stride, rows, cols, dtype)``, corners checked."""
        first, last = arg.args
        shape = tile_shape(arg)
        if shape is None:
            raise _rt.IRError(
                f"{self._location()}: the tile {first.buffer.name}{list(first.indices)} of a matrix "
                "operation must be a constant rows x cols region of the last two dimensions"
            )
        info = self._buffer(first.buffer)
        start = self._flat_index(first.buffer, info, first.indices, "reads")
        last_index = self._flat_index(last.buffer, info, last.indices, "reads")
        if "_ck(" in last_index:  # the far corner's bounds check runs as a statement of its own
            self.w.line(last_index)
        return f"_Tile({info.ident}, {start}, {info.strides[-2]}, {shape[0]}, {shape[1]}, {info.dtype!r})"

    def _stmt_IfThenElse(self, s: IfThenElse) -> None:
        with self._indented(f"if {self.expr(s.condition).src}:"):
            self.stmt(s.then_case)
        if s.else_case is not None:
            with self._indented("else:"):
                self.stmt(s.else_case)

    def _stmt_LetStmt(self, s: LetStmt) -> None:
        value = self.expr(s.value)
        with self._scope():
            ident = self._bind(s.var, self._value_bound(s.value))
            self.w.line(f"{ident} = {value.src}")
            self.stmt(s.body)

    def _stmt_Allocate(self, s: Allocate) -> None:
        with self._scope():
            self._define_buffer(s.buffer, allocate=True)
            self.stmt(s.body)

    def _stmt_Block(self, s: Block) -> None:
        self._stmt_BlockRealize(BlockRealize((), IntImm(1, "bool"), s))

    def _stmt_BlockRealize(self, s: BlockRealize) -> None:
        block = s.block
        if len(s.iter_values) != len(block.iter_vars):
            raise _rt.IRError(
                f"block '{block.name}' has {len(block.iter_vars)} iterators but its realize binds "
                f"{len(s.iter_values)} values"
            )
        predicate = s.predicate
        if isinstance(predicate, IntImm) and predicate.value:
            self._block_instance(s)
        else:
            with self._indented(f"if {self.expr(predicate).src}:"):
                self._block_instance(s)

    def _block_instance(self, s: BlockRealize) -> None:
        block = s.block
        values = [self.expr(v) for v in s.iter_values]
        value_bounds = [const_int_bound(v, self.bounds) for v in s.iter_values]
        with self._scope():
            self.where.append(f"block '{block.name}'")
            for iter_var, value, binding, value_bound in zip(
                block.iter_vars, values, s.iter_values, value_bounds
            ):
                self._bind_iter_var(block, iter_var, value, binding, value_bound)
            for buffer in block.alloc_buffers:
                self._define_buffer(buffer, allocate=True)
            if block.init is not None:
                self._init(block)
            self.stmt(block.body)
            self.where.pop()

    def _bind_iter_var(self, block: Block, iter_var, value: Code, binding: PrimExpr, value_bound) -> None:
        dom = iter_var.dom
        dom_bound = self._range_bound(dom.min, dom.extent)
        is_zero_min = isinstance(dom.min, IntImm) and dom.min.value == 0
        proved = dom_bound.max_value != POS_INF and value_bound.within(
            dom_bound.min_value, dom_bound.max_value
        )
        if not proved and is_zero_min and isinstance(binding, Var) and value_bound.min_value >= 0:
            proved = _same(self.upper.get(binding), dom.extent)
        ident = self._bind(iter_var.var, dom_bound, dom.extent if is_zero_min else None)
        self.w.line(f"{ident} = {value.src}")
        if not proved:
            low = self.expr(dom.min)
            high = Code(f"{low.at(P_ADD)} + {self.expr(dom.extent).at(P_ADD + 1)}", P_ADD)
            site = self._const("_bs", _rt.BindingSite(block.name, iter_var.var.name, repr(binding)))
            self.w.line(f"if not {low.at(P_CMP + 1)} <= {ident} < {high.at(P_CMP + 1)}:")
            self.w.line(f"    raise {site}.error({ident}, {low.src}, {high.src})")

    def _init(self, block: Block) -> None:
        conditions = [
            f"{self.names[iv.var]} == {self.expr(iv.dom.min).at(P_CMP + 1)}"
            for iv in block.iter_vars
            if iv.kind is IterKind.REDUCE
        ]
        if not conditions:
            self.stmt(block.init)
            return
        with self._indented(f"if {' and '.join(conditions)}:"):
            self.stmt(block.init)

    # ------------------------------------------------------------ function

    def compile(self) -> CompiledSource:
        shape_vars = _shape_vars(self.func)
        buffers = list(self.func.buffer_params)
        scalars = [p for p in self.func.params if isinstance(p, Var)]
        scalars += [v for v in shape_vars if v not in scalars]
        # Shape variables are extents, hence never negative.
        self.globals = set(scalars)
        var_idents = [self._bind(v, ConstIntBound(0, POS_INF) if v in shape_vars else None) for v in scalars]
        buffer_idents = [self._define_buffer(b, allocate=False).ident for b in buffers]
        self.w.params = buffer_idents + var_idents
        self.stmt(self.func.body)
        source = "\n\n\n".join(f.source() for f in [self.w, *self.parts]) + "\n"
        namespace = dict(_rt.NAMESPACE)
        namespace.update(_matrix=matrix_op, _Tile=Tile)
        namespace.update(self.consts)
        return CompiledSource(source, namespace, tuple(buffers + scalars))


def compile_func(func: PrimFunc) -> CompiledSource:
    """Generate the Python source that runs ``func``; see the module docstring."""
    return _Emitter(func).compile()
