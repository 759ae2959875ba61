"""C spellings for the C-family printer (``build(mod, "c")``, the CPU target).

A function prints as one C function ``tir_<name>`` taking its buffers' data
pointers. There are no kernels: thread-bound loops are ordinary loops, the
outermost blockIdx-bound or parallel loop becomes an OpenMP ``parallel for``
(nested ones stay serial), and threadgroup (shared) buffers become arrays local
to one iteration of it. Vectors are GCC vector extensions with 4-byte
alignment, so unaligned vector loads are fine. A vector ``max``, ``min`` or
``Select`` prints as a call of a small inline helper built on a comparison mask
(GCC's C has no vector ``?:``), which gcc -O3 turns into ``vmaxps`` or a masked
move, never into one libm call per lane. Scratch buffers of a constant size up
to ``STACK_LIMIT_BYTES`` are arrays on the stack, whatever their scope, so a
tile's intermediate costs no heap allocation per tile; larger or symbolic ones
are ``malloc``ed where they are declared (``aligned_alloc``ed on 64 bytes, a
cache line, when vectors access them, like the stack arrays).

bfloat16 has no C type in gcc 12, so it is a software type: ``tir_bfloat16``, a
struct holding the 16 bits (a struct, so that a value used without conversion is
a compile error, never a silent integer). Loads widen it to float
(``tir_bfloat16_to_float``), arithmetic is float, and every store and every cast
to bfloat16 rounds to nearest even (``tir_float_to_bfloat16``), as the executor
does on every store; a float64 value converts through float.
"""

from __future__ import annotations

from tir import dtype as _dt
from tir.bfloat16 import round_to_bfloat16
from tir.buffer import Buffer
from tir.expr import EQ, GE, GT, LE, LT, NE, BufferLoad, Cast, FloatImm, Max, Min, PrimExpr, Select, Var
from tir.function import PrimFunc
from tir.stmt import Allocate, BufferStore, For, ForKind

from ..c_family import ADD, MUL, CFamilyPrinter, Code, check_helpers, integer_helpers, vector_accessed_buffers
from ..errors import BuildError
from .prefetch import prefetched_loads

STACK_LIMIT_BYTES = 128 * 1024


class CPrinter(CFamilyPrinter):
    types = CFamilyPrinter.types | {"float16": "_Float16", "bfloat16": "tir_bfloat16"}
    vector_types = {
        f"{dtype}x{lanes}": f"{ctype.replace(' ', '')}{lanes}"
        for dtype, ctype in CFamilyPrinter.types.items()
        if dtype not in ("bool", "float16", "bfloat16")
        for lanes in (2, 4, 8, 16)
    }
    unaligned_vectors = True
    vector_ops = CFamilyPrinter.vector_ops | {Max, Min}
    unroll_pragma = "#pragma GCC unroll 64"

    def __init__(self, target):
        super().__init__(target)
        self.parallel_depth = 0

    def function_source(self, func: PrimFunc, symbol: str) -> str:
        self.vector_buffers = vector_accessed_buffers(func.body)
        params = ", ".join(self.param_declaration(p) for p in func.params)
        self.stmt(func.body)
        return "\n".join([f"void {symbol}({params}) {{", *self.lines, "}"])

    def type_of(self, dtype: str) -> str:
        name = super().type_of(dtype)
        if _dt.lanes_of(dtype) > 1:
            self.needs.add(f"vector:{dtype}")
        if dtype == "bfloat16":
            self.needs.add("bfloat16")
        return name

    # bfloat16 values live as float between a load (widened) and a store or cast (rounded).

    def expr_BufferLoad(self, load: BufferLoad) -> Code:
        code = super().expr_BufferLoad(load)
        if load.buffer.dtype == "bfloat16" and _dt.lanes_of(load.dtype) == 1:
            return Code(f"tir_bfloat16_to_float({code.text})")
        return code

    def stmt_BufferStore(self, store: BufferStore) -> None:
        if store.buffer.dtype != "bfloat16" or _dt.lanes_of(store.value.dtype) > 1:
            super().stmt_BufferStore(store)
            return
        (index,) = store.indices
        value = self.expr(store.value).text
        self.emit(f"{self.name_of(store.buffer)}[{self.expr(index).text}] = tir_float_to_bfloat16({value});")

    def expr_Cast(self, node: Cast) -> Code:
        if node.dtype != "bfloat16":
            return super().expr_Cast(node)
        self.type_of("bfloat16")
        return Code(f"tir_bfloat16_to_float(tir_float_to_bfloat16({self.expr(node.value).text}))")

    def expr_FloatImm(self, node: FloatImm) -> Code:
        if node.dtype == "bfloat16":
            return super().expr_FloatImm(FloatImm(round_to_bfloat16(node.value), "float32"))
        return super().expr_FloatImm(node)

    def expr_Var(self, node: Var) -> Code:
        if node.dtype == "bfloat16":
            raise BuildError(
                f"{node.name} is a bfloat16 variable; the C target holds bfloat16 only in buffers "
                "(use a float32 variable or a one-element buffer)"
            )
        return super().expr_Var(node)

    def math_name(self, op: str, dtype: str) -> str:
        return f"{op}f" if _dt.element_of(dtype) == "bfloat16" else super().math_name(op, dtype)

    def thread_loop(self, loop: For) -> None:
        self.serial_loop(loop)

    def serial_loop(self, loop: For, pragma: str | None = None) -> None:
        parallel = loop.kind is ForKind.PARALLEL or (loop.thread_tag or "").startswith("blockIdx")
        if not parallel or self.parallel_depth:
            super().serial_loop(loop, pragma)
            return
        self.parallel_depth += 1
        super().serial_loop(loop, "#pragma omp parallel for")
        self.parallel_depth -= 1

    def prefetch(self, loop: For) -> None:
        printed = []
        for buffer, index in prefetched_loads(loop):
            line = f"__builtin_prefetch({self.name_of(buffer)} + {self.expr(index).at(ADD)});"
            if line not in printed:
                printed.append(line)
                self.emit(line)

    def stmt_Allocate(self, node: Allocate) -> None:
        buffer = node.buffer
        nbytes = buffer.static_nbytes()
        if nbytes is not None and nbytes <= STACK_LIMIT_BYTES:
            super().stmt_Allocate(node)
            return
        count = self.expr(_product(buffer)).at(MUL)
        element, name = self.type_of(buffer.dtype), self.name_of(buffer)
        if buffer in self.vector_buffers:  # whole cache lines: no vector load straddles two
            size = f"(sizeof({element}) * {count} + 63) / 64 * 64"
            self.emit(f"{element}* {name} = ({element}*)aligned_alloc(64, {size});")
        else:
            self.emit(f"{element}* {name} = ({element}*)malloc(sizeof({element}) * {count});")
        self.stmt(node.body)
        self.emit(f"free({name});")

    def declare_array(self, buffer: Buffer, size: int) -> str:
        align = " __attribute__((aligned(64)))" if buffer in self.vector_buffers else ""
        return f"{self.type_of(buffer.dtype)} {self.name_of(buffer)}[{size}]{align};"

    def vector_literal(self, dtype: str, parts: list[str]) -> str:
        return f"({self.type_of(dtype)}){{{', '.join(parts)}}}"

    def broadcast(self, dtype: str, value: str) -> str:
        return self.vector_literal(dtype, [value] * _dt.lanes_of(dtype))

    def vector_native(self, expr: PrimExpr) -> bool:
        if isinstance(expr, Select) and _dt.lanes_of(expr.dtype) > 1:
            condition = expr.condition
            return (
                isinstance(condition, _COMPARISONS)
                and _dt.lanes_of(condition.dtype) == _dt.lanes_of(expr.dtype)
                and _dt.bits_of(condition.a.dtype) == _dt.bits_of(expr.dtype)
                and self.type_or_none(expr.dtype) is not None
                and all(
                    self.vector_native(e)
                    for e in (condition.a, condition.b, expr.true_value, expr.false_value)
                )
            )
        return super().vector_native(expr)

    def min_max(self, which: str, node) -> Code:
        if _dt.lanes_of(node.dtype) > 1:
            return self.vector_helper(which, node.dtype, [node.a, node.b])
        if _dt.is_float(node.dtype):
            return super().min_max(which, node)
        return self.helper_call(which, node)

    def expr_Select(self, node: Select) -> Code:
        if _dt.lanes_of(node.dtype) > 1:
            return self.vector_helper(
                "select", node.dtype, [node.condition, node.true_value, node.false_value]
            )
        return super().expr_Select(node)

    def vector_helper(self, kind: str, dtype: str, args: list[PrimExpr]) -> Code:
        """``tir_max_float16(a, b)``: one of the mask-based vector helpers ``c_prelude`` defines."""
        self.needs.update(
            {f"vector:{dtype}", f"vector:{_mask_dtype(dtype)}", f"vselect:{dtype}", f"v{kind}:{dtype}"}
        )
        return self.call(f"tir_{kind}_{self.type_of(dtype)}", args)


_COMPARISONS = (LT, LE, GT, GE, EQ, NE)


def _mask_dtype(dtype: str) -> str:
    """The signed integer vector a GCC vector comparison of ``dtype`` values yields."""
    return f"int{_dt.bits_of(dtype)}x{_dt.lanes_of(dtype)}"


def _vector_helpers(needs: set[str]) -> list[str]:
    """Select on a comparison mask; max and min as selects (a float NaN loses, as in fmaxf/fminf)."""
    found = []
    for need in sorted(needs, key=lambda need: (not need.startswith("vselect:"), need)):
        kind, _, dtype = need.partition(":")
        if kind not in ("vselect", "vmax", "vmin"):
            continue
        vector, mask = CPrinter.vector_types[dtype], CPrinter.vector_types[_mask_dtype(dtype)]
        if kind == "vselect":
            body = f"return ({vector})((({mask})a & m) | (({mask})b & ~m));"
            found.append(
                f"static inline {vector} tir_select_{vector}({mask} m, {vector} a, {vector} b) {{ {body} }}"
            )
            continue
        compare = ">" if kind == "vmax" else "<"
        nan = " | (b != b)" if _dt.is_float(dtype) else ""
        body = f"return tir_select_{vector}((a {compare} b){nan}, a, b);"
        found.append(f"static inline {vector} tir_{kind[1:]}_{vector}({vector} a, {vector} b) {{ {body} }}")
    return found


def _product(buffer: Buffer):
    size = buffer.shape[0]
    for dim in buffer.shape[1:]:
        size = size * dim
    return size


# The software bfloat16 (see the module docstring); NaN becomes the quiet NaN of its sign.
BFLOAT16_HELPERS = """typedef struct { unsigned short bits; } tir_bfloat16;
static inline float tir_bfloat16_to_float(tir_bfloat16 h) {
  union { unsigned int u; float f; } v = { (unsigned int)h.bits << 16 };
  return v.f;
}
static inline tir_bfloat16 tir_float_to_bfloat16(float f) {
  union { float f; unsigned int u; } v = { f };
  tir_bfloat16 h;
  h.bits = (v.u & 0x7fffffffu) > 0x7f800000u ? (unsigned short)(((v.u >> 16) & 0x8000u) | 0x7fc0u)
                                             : (unsigned short)((v.u + 0x7fffu + ((v.u >> 16) & 1u)) >> 16);
  return h;
}"""


def c_prelude(needs: set[str]) -> str:
    """Includes, the vector typedefs and the helpers the functions use."""
    parts = ["#include <math.h>", "#include <stdbool.h>", "#include <stdlib.h>"]
    if "bfloat16" in needs:
        parts.append(BFLOAT16_HELPERS)
    for need in sorted(needs):
        kind, _, dtype = need.partition(":")
        if kind == "vector":
            element, lanes = _dt.split_lanes(dtype)
            ctype = CFamilyPrinter.types[element]
            name = CPrinter.vector_types[dtype]
            size = _dt.bytes_of(dtype)
            parts.append(
                f"typedef {ctype} {name} __attribute__((vector_size({size}), aligned({size // lanes})));"
            )
    helpers = [
        *integer_helpers(needs, "static inline"),
        *check_helpers(needs, "static inline", "long long"),
        *_vector_helpers(needs),
    ]
    return "\n".join([*parts, *helpers])
