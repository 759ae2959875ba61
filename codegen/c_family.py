"""The C-family printer: flat lowered IR to C, CUDA or Metal source text.

One printer walks statements and expressions; the dialects (``codegen/c``,
``codegen/cuda``, ``codegen/metal``) are small subclasses that override a table
of spellings (type names, address spaces, thread indices, barrier, vector types,
math names, literals) and a hook or two. Expressions print with C precedence,
so indices carry no redundant parentheses. An analyzer follows the loop ranges,
so a floor division of values known to be non-negative prints as ``/`` and a
vector access whose start is a multiple of its lanes prints as one aligned
vector load or store; a vector statement the dialect cannot express natively
prints as one scalar statement per lane.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from tir import dtype as _dt
from tir import op as _op
from tir.arith import Analyzer
from tir.buffer import Buffer
from tir.expr import (
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
    Max,
    Min,
    Mod,
    Mul,
    Not,
    Or,
    PrimExpr,
    Ramp,
    Range,
    Select,
    StringImm,
    Sub,
    Var,
    const,
)
from tir.functor import post_order_visit
from tir.matrix_ops import matrix_op_of, written_buffers
from tir.stmt import Allocate, BufferStore, Evaluate, For, ForKind, IfThenElse, LetStmt, SeqStmt, Stmt
from tir.transform.inject_software_pipeline import ASYNC_COMMIT, ASYNC_COPY, ASYNC_WAIT
from tir.transform.insert_runtime_checks import CHECK_DIVISOR, CHECK_INDEX
from tir.transform.lower_matrix_fragments import TILE_PTR

from .c.prefetch import PREFETCH_KEY
from .errors import BuildError
from .lanes import lane
from .program import Extent, SymbolicExtent

# C operator precedence, tighter binds lower
ATOM, UNARY, MUL, ADD, REL, EQUAL, LAND, LOR, COND = 0, 2, 3, 4, 6, 7, 11, 12, 13

_BINARY = {
    Add: ("+", ADD),
    Sub: ("-", ADD),
    Mul: ("*", MUL),
    LT: ("<", REL),
    LE: ("<=", REL),
    GT: (">", REL),
    GE: (">=", REL),
    EQ: ("==", EQUAL),
    NE: ("!=", EQUAL),
    And: ("&&", LAND),
    Or: ("||", LOR),
}

_C_KEYWORDS = frozenset(
    {
        "auto",
        "break",
        "case",
        "char",
        "const",
        "continue",
        "default",
        "do",
        "double",
        "else",
        "enum",
        "extern",
        "float",
        "for",
        "goto",
        "if",
        "inline",
        "int",
        "long",
        "register",
        "restrict",
        "return",
        "short",
        "signed",
        "sizeof",
        "static",
        "struct",
        "switch",
        "typedef",
        "union",
        "unsigned",
        "void",
        "volatile",
        "while",
        "bool",
        "true",
        "false",
        "half",
        "kernel",
        "device",
        "thread",
        "threadgroup",
        "constant",
        "main",
        "uint",
        "threadIdx",
        "blockIdx",
        "blockDim",
        "gridDim",
    }
)


@dataclass(frozen=True)
class Code:
    """Printed expression text and the precedence of its outermost operator."""

    text: str
    prec: int = ATOM

    def at(self, prec: int) -> str:
        """The text, parenthesized if it binds looser than ``prec`` allows."""
        return f"({self.text})" if self.prec > prec else self.text


class CFamilyPrinter:
    """Prints one function or kernel; subclasses set the spellings of their dialect."""

    types = {
        "float32": "float",
        "float64": "double",
        "float16": "half",
        "int8": "signed char",
        "int16": "short",
        "int32": "int",
        "int64": "long long",
        "uint8": "unsigned char",
        "uint16": "unsigned short",
        "uint32": "unsigned int",
        "uint64": "unsigned long long",
        "bool": "bool",
    }
    vector_types: dict[str, str] = {}
    inf, nan = "INFINITY", "NAN"
    unaligned_vectors = False
    vector_ops: frozenset[type] = frozenset({Add, Sub, Mul, Div})
    barrier = ""
    indent_unit = "  "

    def __init__(self, target):
        self.target = target
        self.analyzer = Analyzer()
        self.lines: list[str] = []
        self.depth = 1
        self.names: dict[object, str] = {}
        self.taken: set[str] = set()
        self.needs: set[str] = set()
        self.vector_buffers: set[Buffer] = set()
        self.declared: set[Buffer] = set()  # buffers whose allocation is printed
        self.tile_buffers: set[Buffer] = set()
        self.fragment_roles: dict[Buffer, str] = {}
        self.read_only: set[Buffer] = set()
        self.used: set[Var] = set()
        self.launch_extents: dict[str, Extent] = {}

    # ------------------------------------------------------------ names

    def name_of(self, obj: Var | Buffer) -> str:
        """A C identifier for ``obj``, unique within the function being printed."""
        if obj in self.names:
            return self.names[obj]
        base = re.sub(r"\W", "_", obj.name) or "v"
        if base[0].isdigit() or base in _C_KEYWORDS:
            base = f"{base}_"
        name, suffix = base, 1
        while name in self.taken:
            name, suffix = f"{base}_{suffix}", suffix + 1
        self.taken.add(name)
        self.names[obj] = name
        return name

    def type_of(self, dtype: str) -> str:
        element, lanes = _dt.split_lanes(dtype)
        if lanes > 1:
            return self.vector_types[dtype]
        return self.types[element]

    # ------------------------------------------------------------ statements

    def emit(self, text: str) -> None:
        self.lines.append(self.indent_unit * self.depth + text)

    def stmt(self, node: Stmt) -> None:
        getattr(self, f"stmt_{type(node).__name__}")(node)

    def stmt_SeqStmt(self, node: SeqStmt) -> None:
        for child in node.seq:
            self.stmt(child)

    def block(self, body: Stmt) -> None:
        self.depth += 1
        self.stmt(body)
        self.depth -= 1

    def stmt_For(self, loop: For) -> None:
        if loop.kind is ForKind.THREAD_BINDING:
            self.thread_loop(loop)
            return
        self.serial_loop(loop)

    def serial_loop(self, loop: For, pragma: str | None = None) -> None:
        var = self.name_of(loop.loop_var)
        self.analyzer.bind(loop.loop_var, Range(loop.min, loop.extent))
        start = self.expr(loop.min).text
        end = self.expr(_op.add(loop.min, loop.extent)).at(REL)
        if pragma is None and loop.annotations.get("pragma_unroll"):
            pragma = self.unroll_pragma
        if pragma:
            self.emit(pragma)
        self.emit(f"for ({self.type_of(loop.loop_var.dtype)} {var} = {start}; {var} < {end}; ++{var}) {{")
        self.depth += 1
        if PREFETCH_KEY in loop.annotations:
            self.prefetch(loop)
        self.stmt(loop.body)
        self.depth -= 1
        self.emit("}")

    unroll_pragma = "#pragma unroll"

    def prefetch(self, loop: For) -> None:
        """The software prefetches of a ``pragma_prefetch`` loop (codegen/c/prefetch.py): C only;
        a GPU build has refused the annotation before printing (``check_annotations``)."""
        raise NotImplementedError

    def thread_loop(self, loop: For) -> None:
        """GPU dialects: the launch is the loop; a loop over fewer threads than launched is guarded."""
        self.analyzer.bind(loop.loop_var, Range(loop.min, loop.extent))
        launched = self.launch_extents[loop.thread_tag]
        if isinstance(launched, SymbolicExtent) or _is_int(loop.extent, launched):  # a grid: one extent
            self.stmt(loop.body)
            return
        self.emit(f"if ({self.name_of(loop.loop_var)} < {self.expr(loop.extent).text}) {{")
        self.used.add(loop.loop_var)
        self.block(loop.body)
        self.emit("}")

    # ------------------------------------------------------------ kernels

    def kernel_source(self, kernel) -> str:
        """One GPU kernel (a codegen.kernels.DeviceKernel): signature, thread indices, body."""
        self.launch_extents = kernel.extents
        self.vector_buffers = vector_accessed_buffers(kernel.body)
        self.tile_buffers, self.fragment_roles = tile_buffers(kernel.body)
        self.read_only = {p for p in kernel.params if isinstance(p, Buffer)} - stored_buffers(kernel.body)
        for tag, var in kernel.thread_vars.items():
            self.name_of(var)
            extent = kernel.extents[tag]
            bound = extent.expr if isinstance(extent, SymbolicExtent) else const(extent)
            self.analyzer.bind(var, Range(const(0), bound))
        self.stmt(kernel.body)
        indices = [
            f"{self.indent_unit}const int {self.name_of(var)} = {self.thread_index(tag)};"
            for tag, var in sorted(kernel.thread_vars.items())
            if var in self.used
        ]
        return "\n".join([f"{self.kernel_signature(kernel)} {{", *indices, *self.lines, "}"])

    def kernel_signature(self, kernel) -> str:
        raise NotImplementedError

    def param_declaration(self, param: Buffer | Var) -> str:
        """``float* __restrict__ A`` for a buffer (``const`` if only read), ``float alpha`` for a scalar."""
        if isinstance(param, Buffer):
            return f"{self.const(param)}{self.type_of(param.dtype)}* __restrict__ {self.name_of(param)}"
        return f"{self.type_of(param.dtype)} {self.name_of(param)}"

    def thread_index(self, tag: str) -> str:
        """``blockIdx.x`` as an int expression in this dialect."""
        return tag

    def stmt_IfThenElse(self, node: IfThenElse) -> None:
        self.emit(f"if ({self.expr(node.condition).text}) {{")
        with self.analyzer.constraint_scope(node.condition):
            self.block(node.then_case)
        if node.else_case is not None:
            self.emit("} else {")
            with self.analyzer.constraint_scope(_op.logical_not(node.condition)):
                self.block(node.else_case)
        self.emit("}")

    def stmt_LetStmt(self, node: LetStmt) -> None:
        value = self.expr(node.value).text
        self.emit(f"const {self.type_of(node.var.dtype)} {self.name_of(node.var)} = {value};")
        self.analyzer.bind(node.var, node.value)
        self.stmt(node.body)

    def stmt_Allocate(self, node: Allocate) -> None:
        buffer = node.buffer
        size = buffer.static_shape()
        if size is None:
            raise BuildError(
                f"buffer {buffer.name} ({buffer.scope}) has a size that is not a constant: "
                f"{buffer.shape}; allocations inside a kernel need a constant size"
            )
        again = buffer in self.declared  # allocated again (an unrolled pipeline iteration): a new scope
        self.declared.add(buffer)
        if again:
            self.emit("{")
            self.depth += 1
        self.emit(self.declare_array(buffer, math.prod(size)))
        self.stmt(node.body)
        if again:
            self.depth -= 1
            self.emit("}")

    def declare_array(self, buffer: Buffer, size: int) -> str:
        element = self.type_of(buffer.dtype)
        return f"{element} {self.name_of(buffer)}[{size}];"

    def stmt_Evaluate(self, node: Evaluate) -> None:
        value = node.value
        if isinstance(value, Call) and value.op == "tvm_storage_sync":
            if self.barrier:
                self.emit(self.barrier)
            return
        if isinstance(value, Call) and value.op in (ASYNC_COMMIT, ASYNC_WAIT):
            self.async_group(value)
            return
        matrix_op = matrix_op_of(value)
        if matrix_op is not None:
            self.emit(self.matrix_op(matrix_op.kind, value))
            return
        self.emit(f"{self.expr(value).text};")

    def async_group(self, node: Call) -> None:
        """Commit or wait for a group of asynchronous copies; dialects without them copy
        synchronously (an async copy prints as its load), so there is nothing to wait for."""

    def matrix_op(self, kind: str, node: Call) -> str:
        """A matrix operation (tir/matrix_ops.py) as a statement; the GPU dialects override."""
        raise BuildError(f"{node.op} (a matrix operation) has no spelling on target {self.target.kind!r}")

    def fragment(self, arg: Call) -> str:
        """A lowered tile of a fragment: the fragment object, ``A_frag[3]``."""
        return self.expr(arg.args[0]).text

    def tile_pointer(self, arg: Call) -> tuple[str, str]:
        """A lowered tile of memory: its first element's address and its row stride."""
        first, stride = arg.args
        return f"&{self.expr(first).text}", self.expr(stride).text

    def stmt_BufferStore(self, store: BufferStore) -> None:
        lanes = _dt.lanes_of(store.value.dtype)
        (index,) = store.indices
        if lanes == 1:
            self.emit(
                f"{self.name_of(store.buffer)}[{self.expr(index).text}] = {self.expr(store.value).text};"
            )
            return
        if self.is_contiguous_aligned(store.buffer, index) and self.vector_native(store.value):
            target = self.vector_pointer(store.buffer, index.base, store.value.dtype)
            self.emit(f"*{target} = {self.expr(store.value).text};")
            return
        for i in range(lanes):
            self.stmt_BufferStore(BufferStore(store.buffer, lane(store.value, i), (lane(index, i),)))

    # ------------------------------------------------------------ vectors

    def is_contiguous_aligned(self, buffer: Buffer, index: PrimExpr) -> bool:
        if not isinstance(index, Ramp):
            return False
        has_type = self.type_or_none(_dt.with_lanes(buffer.dtype, index.lanes)) is not None
        return has_type and self.is_aligned_run(index)

    def is_aligned_run(self, index: PrimExpr) -> bool:
        """Whether ``index`` is a stride-1 Ramp whose first element is a multiple of its lanes
        (the run of elements is aligned to its own size), whatever the dialect's vector types."""
        if not isinstance(index, Ramp) or not _is_int(index.stride, 1):
            return False
        if self.unaligned_vectors:
            return True
        return self.analyzer.can_prove(_op.floormod(index.base, index.lanes).equal(0))

    def type_or_none(self, dtype: str) -> str | None:
        try:
            return self.type_of(dtype)
        except KeyError:
            return None

    def vector_native(self, expr: PrimExpr) -> bool:
        """Whether ``expr`` prints as one vector expression in this dialect."""
        if _dt.lanes_of(expr.dtype) == 1:
            return True
        if self.type_or_none(expr.dtype) is None:
            return False
        if isinstance(expr, BufferLoad):
            return all(_dt.lanes_of(i.dtype) == 1 or isinstance(i, Ramp) for i in expr.indices)
        if isinstance(expr, Broadcast):
            return True
        if type(expr) in self.vector_ops:
            return self.vector_native(expr.a) and self.vector_native(expr.b)
        return False

    def vector_pointer(self, buffer: Buffer, base: PrimExpr, dtype: str) -> str:
        base_text = self.expr(base)
        address = (
            self.name_of(buffer) if _is_int(base, 0) else f"{self.name_of(buffer)} + {base_text.at(ADD)}"
        )
        return f"({self.pointer_cast(buffer, dtype)})({address})"

    def pointer_cast(self, buffer: Buffer, dtype: str) -> str:
        return f"{self.const(buffer)}{self.type_of(dtype)}*"

    def const(self, buffer: Buffer) -> str:
        """``const `` for a kernel parameter the kernel only reads, so the compiler knows it."""
        return "const " if buffer in self.read_only else ""

    def vector_literal(self, dtype: str, parts: list[str]) -> str:
        return f"{self.type_of(dtype)}({', '.join(parts)})"

    def broadcast(self, dtype: str, value: str) -> str:
        return f"{self.type_of(dtype)}({value})"

    # ------------------------------------------------------------ expressions

    def expr(self, node: PrimExpr) -> Code:
        return getattr(self, f"expr_{type(node).__name__}")(node)

    def expr_Var(self, node: Var) -> Code:
        self.used.add(node)
        return Code(self.name_of(node))

    def expr_IntImm(self, node: IntImm) -> Code:
        if node.dtype == "bool":
            return Code("true" if node.value else "false")
        text = str(node.value)
        if node.dtype in ("int64", "uint64"):
            text = f"({self.types[node.dtype]}){text}"
        elif node.dtype.startswith("uint"):
            text += "u"
        return Code(text, UNARY if node.value < 0 or node.dtype.endswith("64") else ATOM)

    def expr_FloatImm(self, node: FloatImm) -> Code:
        value = node.value
        if math.isinf(value):
            return Code(self.inf if value > 0 else f"-{self.inf}", ATOM if value > 0 else UNARY)
        if math.isnan(value):
            return Code(self.nan)
        text = repr(float(value))
        if node.dtype == "float32":
            text += "f"
        elif node.dtype in ("float16", "bfloat16"):
            return Code(f"({self.types[node.dtype]}){text}f", UNARY)
        return Code(text, UNARY if value < 0 else ATOM)

    def expr_StringImm(self, node: StringImm) -> Code:
        return Code('"' + node.value.replace("\\", "\\\\").replace('"', '\\"') + '"')

    def binary(self, node, op: str, prec: int) -> Code:
        left, right = self.expr(node.a), self.expr(node.b)
        return Code(f"{left.at(prec)} {op} {right.at(prec - 1)}", prec)

    def expr_Add(self, node: Add) -> Code:
        return self.binary(node, "+", ADD)

    def expr_Sub(self, node: Sub) -> Code:
        return self.binary(node, "-", ADD)

    def expr_Mul(self, node: Mul) -> Code:
        return self.binary(node, "*", MUL)

    def expr_Div(self, node: Div) -> Code:
        return self.binary(node, "/", MUL)

    def expr_Mod(self, node: Mod) -> Code:
        if _dt.is_float(node.dtype):
            return self.math_call("fmod", node.dtype, [node.a, node.b])
        return self.binary(node, "%", MUL)

    def non_negative(self, *exprs: PrimExpr) -> bool:
        return all(self.analyzer.const_int_bound(e).min_value >= 0 for e in exprs)

    def expr_FloorDiv(self, node: FloorDiv) -> Code:
        if _dt.is_float(node.dtype):
            return self.math_call("floor", node.dtype, [Div(node.a, node.b)])
        if self.non_negative(node.a, node.b):
            return self.binary(node, "/", MUL)
        return self.helper_call("floordiv", node)

    def expr_FloorMod(self, node: FloorMod) -> Code:
        if _dt.is_float(node.dtype):
            a, b = node.a, node.b
            return self.expr(_op.sub(a, _op.mul(b, Call(node.dtype, "floor", (_op.div(a, b),)))))
        if self.non_negative(node.a, node.b):
            return self.binary(node, "%", MUL)
        return self.helper_call("floormod", node)

    def helper_call(self, kind: str, node) -> Code:
        ctype = self.type_of(node.dtype)
        name = f"tir_{kind}_{ctype.replace(' ', '_')}"
        self.needs.add(f"{kind}:{ctype}")
        return Code(f"{name}({self.expr(node.a).text}, {self.expr(node.b).text})")

    def expr_Min(self, node: Min) -> Code:
        return self.min_max("min", node)

    def expr_Max(self, node: Max) -> Code:
        return self.min_max("max", node)

    def min_max(self, which: str, node) -> Code:
        if _dt.is_float(node.dtype):
            return self.math_call(f"f{which}", node.dtype, [node.a, node.b])
        return self.call(which, [node.a, node.b])

    def expr_LT(self, node):
        return self.binary(node, "<", REL)

    def expr_LE(self, node):
        return self.binary(node, "<=", REL)

    def expr_GT(self, node):
        return self.binary(node, ">", REL)

    def expr_GE(self, node):
        return self.binary(node, ">=", REL)

    def expr_EQ(self, node):
        return self.binary(node, "==", EQUAL)

    def expr_NE(self, node):
        return self.binary(node, "!=", EQUAL)

    def expr_And(self, node):
        return self.binary(node, "&&", LAND)

    def expr_Or(self, node):
        return self.binary(node, "||", LOR)

    def expr_Not(self, node: Not) -> Code:
        return Code(f"!{self.expr(node.a).at(UNARY)}", UNARY)

    def expr_Select(self, node: Select) -> Code:
        return self.conditional(node.condition, node.true_value, node.false_value)

    def conditional(self, condition: PrimExpr, true_value: PrimExpr, false_value: PrimExpr) -> Code:
        c, t, f = self.expr(condition), self.expr(true_value), self.expr(false_value)
        return Code(f"{c.at(LOR)} ? {t.at(COND)} : {f.at(COND)}", COND)

    def expr_Cast(self, node: Cast) -> Code:
        if _dt.lanes_of(node.dtype) > 1:
            raise BuildError(f"vector cast to {node.dtype} reached the printer unscalarized")
        return Code(f"({self.type_of(node.dtype)}){self.expr(node.value).at(UNARY)}", UNARY)

    def expr_BufferLoad(self, load: BufferLoad) -> Code:
        (index,) = load.indices
        name = self.name_of(load.buffer)
        lanes = _dt.lanes_of(load.dtype)
        if lanes == 1:
            return Code(f"{name}[{self.expr(index).text}]")
        if self.is_contiguous_aligned(load.buffer, index):
            return Code(f"*{self.vector_pointer(load.buffer, index.base, load.dtype)}", UNARY)
        parts = [self.expr(lane(load, i)).text for i in range(lanes)]
        return Code(self.vector_literal(load.dtype, parts))

    def expr_Broadcast(self, node: Broadcast) -> Code:
        return Code(self.broadcast(node.dtype, self.expr(node.value).text))

    def expr_Ramp(self, node: Ramp) -> Code:
        parts = [self.expr(lane(node, i)).text for i in range(node.lanes)]
        return Code(self.vector_literal(node.dtype, parts))

    def expr_Call(self, node: Call) -> Code:
        if node.op.startswith("tir.warp_"):
            return self.warp_intrinsic(node)
        if node.op in (CHECK_INDEX, CHECK_DIVISOR):
            *args, state = node.args  # state: a load of tir_check_state, passed as the pointer
            self.needs.add("check")
            operands = ", ".join(self.expr(a).text for a in args)
            return Code(f"{node.op.replace('.', '_')}({operands}, {self.name_of(state.buffer)})")
        if node.op == "if_then_else":
            return self.conditional(*node.args)
        if node.op == "likely":  # a branch hint: the condition itself
            return self.expr(node.args[0])
        if node.op == "reinterpret":
            return self.reinterpret(node.args[0], node.dtype)
        if node.op == "call_extern":
            function, *args = node.args
            return self.call(function.value, args)
        if node.op in _op.OPAQUE_CALLS:
            return self.opaque_call(node)
        if node.op == ASYNC_COPY:
            return self.expr(node.args[0])
        if node.op == "sigmoid":
            (x,) = node.args
            one = const(1.0, node.dtype)
            exp = Call(node.dtype, "exp", (_op.sub(const(0.0, node.dtype), x),))
            return self.expr(_op.div(one, _op.add(one, exp)))
        if node.op == "rsqrt" and not self.has_rsqrt:
            return self.expr(_op.div(const(1.0, node.dtype), Call(node.dtype, "sqrt", node.args)))
        if node.op == "fabs" and not _dt.is_float(node.dtype):
            return self.call("abs", list(node.args))
        return self.math_call(node.op, node.dtype, list(node.args))

    has_rsqrt = False

    def reinterpret(self, value: PrimExpr, dtype: str) -> Code:
        """``T.reinterpret``: C reads the bits through a union (defined behaviour in C11)."""
        source, target = self.type_of(value.dtype), self.type_of(dtype)
        return Code(f"((union {{ {source} from; {target} to; }}){{{self.expr(value).text}}}).to")

    def opaque_call(self, node: Call) -> Code:
        """A call the IR only carries (tir.op.OPAQUE_CALLS); a dialect that can spell one overrides."""
        if node.op == "call_packed":
            why = "TVM's packed-function runtime does not exist here; use T.call_extern to call a C function"
        else:
            why = "tensor-core intrinsics are not printed for this target"
        raise BuildError(f"T.{node.op} cannot be built for target {self.target.kind!r}: {why}")

    def expr_BufferPointer(self, node: BufferPointer) -> Code:
        name = self.name_of(node.buffer)
        if isinstance(node.offset, IntImm) and node.offset.value == 0:
            return Code(name)
        return Code(f"({name} + {self.expr(node.offset).text})")

    def warp_intrinsic(self, node: Call) -> Code:
        """A warp shuffle or reduction (tir/transform/lower_thread_allreduce.py); GPU dialects override."""
        raise BuildError(
            f"{node.op} (a cross-thread reduction) has no spelling on target {self.target.kind!r}"
        )

    def math_call(self, op: str, dtype: str, args: list[PrimExpr]) -> Code:
        """A call of the math function ``op`` on ``args`` of ``dtype``, spelled by ``math_name``."""
        return self.call(self.math_name(op, dtype), args)

    def math_name(self, op: str, dtype: str) -> str:
        """C spelling: ``expf`` for float32, ``exp`` for float64; Metal overrides (``exp`` for all)."""
        element = _dt.element_of(dtype)
        return f"{op}f" if element == "float32" else op

    def call(self, name: str, args: list[PrimExpr]) -> Code:
        return Code(f"{name}({', '.join(self.expr(a).text for a in args)})")

    def expr_Let(self, node) -> Code:
        raise BuildError("Let expressions are not supported by the C-family printers; use a LetStmt")


_INTEGER_HELPERS = {
    "floordiv": "{q} {t} tir_floordiv_{n}({t} a, {t} b) {{\n"
    "  {t} q = a / b;\n  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;\n}}",
    "floormod": "{q} {t} tir_floormod_{n}({t} a, {t} b) {{\n"
    "  {t} r = a % b;\n  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;\n}}",
    "min": "{q} {t} tir_min_{n}({t} a, {t} b) {{ return a < b ? a : b; }}",
    "max": "{q} {t} tir_max_{n}({t} a, {t} b) {{ return a > b ? a : b; }}",
}


def integer_helpers(needs: set[str], qualifier: str) -> list[str]:
    """Definitions of the ``tir_floordiv_int``-style helpers recorded in ``needs`` ("floordiv:int")."""
    found = []
    for need in sorted(needs):
        kind, _, ctype = need.partition(":")
        if kind in _INTEGER_HELPERS:
            found.append(_INTEGER_HELPERS[kind].format(q=qualifier, t=ctype, n=ctype.replace(" ", "_")))
    return found


def stored_buffers(body: Stmt) -> set[Buffer]:
    """Buffers that ``body`` writes: BufferStore targets, and the check state of checked builds."""
    found: set[Buffer] = set()

    def visit(node) -> None:
        if isinstance(node, BufferStore):
            found.add(node.buffer)
        elif isinstance(node, Evaluate) and matrix_op_of(node.value) is not None:
            found.update(written_buffers(node.value))
        elif isinstance(node, Call) and node.op in (CHECK_INDEX, CHECK_DIVISOR):
            found.add(node.args[-1].buffer)  # the helper records failures in it

    post_order_visit(body, visit)
    return found


_CHECK_HELPERS = (
    "{q} {i} tir_check_index({i} index, {i} extent, int site, {s}{i}* state) {{\n"
    "  if (index >= 0 && index < extent) return index;\n"
    "  state[2 * site] = 1;\n  state[2 * site + 1] = index;\n  return 0;\n}}",
    "{q} {i} tir_check_divisor({i} divisor, int site, {s}{i}* state) {{\n"
    "  if (divisor != 0) return divisor;\n"
    "  state[2 * site] = 1;\n  state[2 * site + 1] = 0;\n  return 1;\n}}",
)


def check_helpers(needs: set[str], qualifier: str, int64: str, space: str = "") -> list[str]:
    """The run-time check helpers of checked builds (tir/transform/insert_runtime_checks.py), if used.

    A failed check records the site and the value in ``state`` and returns a safe
    value (index 0, divisor 1) so the kernel goes on without touching foreign memory.
    """
    if "check" not in needs:
        return []
    return [helper.format(q=qualifier, i=int64, s=space) for helper in _CHECK_HELPERS]


def tile_buffers(body: Stmt) -> tuple[set[Buffer], dict[Buffer, str]]:
    """Buffers a matrix operation reads or writes as memory tiles (they need the unit's alignment),
    and the operand ("a", "b", "c") of each fragment whose layout depends on it (mma.sync)."""
    found: set[Buffer] = set()
    roles: dict[Buffer, str] = {}

    def visit(node) -> None:
        if isinstance(node, Call) and node.op == TILE_PTR:
            found.add(node.args[0].buffer)
        op = matrix_op_of(node) if isinstance(node, Call) else None
        for arg, role in zip(node.args if op is not None else (), op.roles if op is not None else ()):
            if role is not None:
                roles[arg.args[0].buffer] = role

    post_order_visit(body, visit)
    return found - set(roles), roles


def vector_accessed_buffers(body: Stmt) -> set[Buffer]:
    """Buffers read or written with a vector index somewhere in ``body`` (they need vector alignment)."""
    found: set[Buffer] = set()

    def visit(node) -> None:
        if isinstance(node, (BufferLoad, BufferStore)) and any(isinstance(i, Ramp) for i in node.indices):
            found.add(node.buffer)

    post_order_visit(body, visit)
    return found


def _is_int(expr: PrimExpr, value: int) -> bool:
    return isinstance(expr, IntImm) and expr.value == value
