"""Metal Shading Language spellings for the C-family printer (``build(mod, "metal")``).

Buffers are ``device`` pointers (``device const`` when the kernel only reads
them) bound at ``[[buffer(i)]]`` in launch order; scalars are ``constant T&``; the
kernel receives ``blockIdx`` (``threadgroup_position_in_grid``) and ``threadIdx``
(``thread_position_in_threadgroup``) as ``uint3``; threadgroup memory is a
``threadgroup`` array declared at the start of a line; the barrier is
``threadgroup_barrier(mem_flags::mem_threadgroup)``. ``metal.simdgroup`` fragments
are arrays of ``simdgroup_float8x8`` / ``simdgroup_half8x8``, used by the
simdgroup_matrix functions (tir/matrix_ops.py). Vector loads cast to a
pointer in the buffer's address space, as Metal requires. bfloat16 is MSL 3.1's
``bfloat`` (macOS 14, Apple GPU family 9 hardware or emulated), printed as scalars
only. The Metal host simulator (``codegen/metal/sim``) compiles exactly this text.
"""

from __future__ import annotations

from tir.buffer import Buffer
from tir.expr import Call
from tir.transform.lower_thread_allreduce import SHUFFLE, SHUFFLE_DOWN, WARP_REDUCE

from ..c_family import CFamilyPrinter, Code, check_helpers, integer_helpers
from ..errors import BuildError

SPACES = {"global": "device", "shared": "threadgroup", "local": "thread"}

METAL_TYPES = {
    "float32": "float",
    "float16": "half",
    "bfloat16": "bfloat",
    "int8": "char",
    "int16": "short",
    "int32": "int",
    "int64": "long",
    "uint8": "uchar",
    "uint16": "ushort",
    "uint32": "uint",
    "uint64": "ulong",
    "bool": "bool",
}


class MetalPrinter(CFamilyPrinter):
    types = METAL_TYPES
    vector_types = {
        f"{dtype}x{lanes}": f"{ctype}{lanes}"
        for dtype, ctype in METAL_TYPES.items()
        if dtype not in ("int64", "uint64", "bfloat16")
        for lanes in (2, 3, 4)
    }
    barrier = "threadgroup_barrier(mem_flags::mem_threadgroup);"
    has_rsqrt = True

    def kernel_signature(self, kernel) -> str:
        pad = " " * len(f"kernel void {kernel.name}(")
        params = [f"{self.param_declaration(p)} [[buffer({i})]]" for i, p in enumerate(kernel.params)]
        params += [
            "uint3 blockIdx [[threadgroup_position_in_grid]]",
            "uint3 threadIdx [[thread_position_in_threadgroup]]",
        ]
        return f"kernel void {kernel.name}(" + f",\n{pad}".join(params) + ")"

    def param_declaration(self, param) -> str:
        if isinstance(param, Buffer):
            return f"device {self.const(param)}{self.type_of(param.dtype)}* {self.name_of(param)}"
        return f"constant {self.type_of(param.dtype)}& {self.name_of(param)}"

    def declare_array(self, buffer: Buffer, size: int) -> str:
        element = self.type_of(buffer.dtype)
        if buffer.scope == "metal.simdgroup":
            self.needs.add("simdgroup_matrix")
            return f"simdgroup_{element}8x8 {self.name_of(buffer)}[{size}];"
        if buffer.scope == "shared":
            return f"threadgroup {element} {self.name_of(buffer)}[{size}];"
        align = "alignas(16) " if buffer in self.vector_buffers else ""
        return f"{align}{element} {self.name_of(buffer)}[{size}];"

    def pointer_cast(self, buffer: Buffer, dtype: str) -> str:
        return f"{SPACES[buffer.scope]} {self.const(buffer)}{self.type_of(dtype)}*"

    def math_name(self, op: str, dtype: str) -> str:
        if op == "erf":
            raise BuildError("erf has no Metal spelling (the Metal standard library has no erf)")
        return op

    def reinterpret(self, value, dtype: str) -> Code:
        return Code(f"as_type<{self.type_of(dtype)}>({self.expr(value).text})")

    def warp_intrinsic(self, node: Call) -> Code:
        """``simd_shuffle_down(v, delta)``, ``simd_shuffle(v, lane)``, ``simd_sum(v)`` (max, min, product)."""
        if node.op == WARP_REDUCE:
            value, kind = node.args
            return Code(f"simd_{kind.value}({self.expr(value).text})")
        name = {SHUFFLE_DOWN: "simd_shuffle_down", SHUFFLE: "simd_shuffle"}.get(node.op)
        if name is None:
            return super().warp_intrinsic(node)
        _, value, lane = (self.expr(a).text for a in node.args)
        return Code(f"{name}({value}, (ushort)({lane}))")

    def matrix_op(self, kind: str, node: Call) -> str:
        """simdgroup_matrix: ``simdgroup_load(F[i], &A[x], stride)``, ``simdgroup_store``, a filled
        matrix, ``simdgroup_multiply_accumulate(D, A, B, C)``."""
        frag = self.fragment(node.args[0])
        if kind == "fill":
            dtype = node.args[0].args[0].buffer.dtype
            value = self.expr(node.args[1]).text
            return f"{frag} = make_filled_simdgroup_matrix<{self.type_of(dtype)}, 8, 8>({value});"
        if kind in ("load", "store"):
            pointer, stride = self.tile_pointer(node.args[1])
            return f"simdgroup_{kind}({frag}, {pointer}, {stride});"
        d, a, b, c = (self.fragment(arg) for arg in node.args)
        return f"simdgroup_multiply_accumulate({d}, {a}, {b}, {c});"

    def min_max(self, which: str, node) -> Code:
        return self.call(which, [node.a, node.b])


def metal_prelude(needs: set[str]) -> str:
    """``metal_stdlib`` and the helpers the kernels use."""
    helpers = [*integer_helpers(needs, "inline"), *check_helpers(needs, "inline", "long", "device ")]
    includes = ["#include <metal_stdlib>"]
    if "simdgroup_matrix" in needs:
        includes.append("#include <metal_simdgroup_matrix>")
    return "\n".join([*includes, "using namespace metal;", *helpers])
