"""C spellings for the C-family printer (``build(mod, "c")``, the CPU target).

A function prints as one C function ``tir_<name>`` taking its buffers' data
pointers. There are no kernels: thread-bound loops are ordinary loops, the
outermost blockIdx-bound or parallel loop becomes an OpenMP ``parallel for``
(nested ones stay serial), and threadgroup (shared) buffers become arrays local
to one iteration of it. Vectors are GCC vector extensions with 4-byte
alignment, so unaligned vector loads are fine; global scratch buffers are
``malloc``ed for the call.
"""

from __future__ import annotations

from tir import dtype as _dt
from tir.buffer import Buffer
from tir.function import PrimFunc
from tir.stmt import Allocate, For, ForKind

from ..c_family import MUL, CFamilyPrinter, Code, check_helpers, integer_helpers, vector_accessed_buffers

STACK_LIMIT_BYTES = 128 * 1024


class CPrinter(CFamilyPrinter):
    types = CFamilyPrinter.types | {"float16": "_Float16"}
    vector_types = {
        f"{dtype}x{lanes}": f"{ctype.replace(' ', '')}{lanes}"
        for dtype, ctype in CFamilyPrinter.types.items()
        if dtype not in ("bool", "float16")
        for lanes in (2, 4, 8, 16)
    }
    unaligned_vectors = True
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
        return name

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

    def stmt_Allocate(self, node: Allocate) -> None:
        buffer = node.buffer
        nbytes = buffer.static_nbytes()
        if nbytes is not None and buffer.scope != "global" and nbytes <= STACK_LIMIT_BYTES:
            super().stmt_Allocate(node)
            return
        count = self.expr(_product(buffer)).at(MUL)
        element, name = self.type_of(buffer.dtype), self.name_of(buffer)
        self.emit(f"{element}* {name} = ({element}*)malloc(sizeof({element}) * {count});")
        self.stmt(node.body)
        self.emit(f"free({name});")

    def declare_array(self, buffer: Buffer, size: int) -> str:
        return f"{self.type_of(buffer.dtype)} {self.name_of(buffer)}[{size}];"

    def vector_literal(self, dtype: str, parts: list[str]) -> str:
        return f"({self.type_of(dtype)}){{{', '.join(parts)}}}"

    def broadcast(self, dtype: str, value: str) -> str:
        return self.vector_literal(dtype, [value] * _dt.lanes_of(dtype))

    def min_max(self, which: str, node) -> Code:
        if _dt.is_float(node.dtype):
            return super().min_max(which, node)
        return self.helper_call(which, node)


def _product(buffer: Buffer):
    size = buffer.shape[0]
    for dim in buffer.shape[1:]:
        size = size * dim
    return size


def c_prelude(needs: set[str]) -> str:
    """Includes, the vector typedefs and the helpers the functions use."""
    parts = ["#include <math.h>", "#include <stdbool.h>", "#include <stdlib.h>"]
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
    helpers = [*integer_helpers(needs, "static inline"), *check_helpers(needs, "static inline", "long long")]
    return "\n".join([*parts, *helpers])
